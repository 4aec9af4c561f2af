// Schedules: what one member does in one collective, as rounds of steps (libNBC's idea).
//
// A step sends a region of a buffer to a peer, receives a peer's message into a region
// (copying it, or combining it with what the region holds), or copies/combines locally.
// Buffers: the caller's send and receive buffers and the operation's scratch (kTmp).
// A round starts when the previous one completed. At its start the steps run in list order:
// local steps execute, sends leave, receives become ready to take their messages. Steps
// marked `ordered` form the round's ordered sequence instead: each runs only after the one
// before it in the list completed (a receive: once its message arrived), which fixes the
// order of reductions whatever the arrival order. The round completes when every receive
// and ordered step completed and every send was handed over (a large send: once the
// receiver took it). A message is identified by (op, sender, tag): each recv step names a
// distinct (peer, tag). Background steps (sends and receives only) start with the
// operation and are waited for only at its end, not by a round: the relay algorithms' parts
// flow through them while the rounds pipeline the relays' own work.
//
// Builders (algorithms.cc and the files beside it) make a Schedule from CollArgs; the same
// arguments give the same schedule (operations cache them). Thread safety: immutable once
// built.
#ifndef UKAI_RT_COLL_SCHEDULE_H_
#define UKAI_RT_COLL_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ukai/rt/group.hpp"

namespace ukai::rt::coll {

enum class BufId : uint8_t { kSend, kRecv, kTmp };

struct Region {
  BufId buf = BufId::kRecv;
  uint64_t offset = 0;
  uint64_t length = 0;
};
inline Region SendBuf(uint64_t off, uint64_t len) { return {BufId::kSend, off, len}; }
inline Region RecvBuf(uint64_t off, uint64_t len) { return {BufId::kRecv, off, len}; }
inline Region TmpBuf(uint64_t off, uint64_t len) { return {BufId::kTmp, off, len}; }

enum class StepKind : uint8_t { kSend, kRecv, kCopy, kCombine };
// How a received or local source meets the destination region.
enum class Order : uint8_t {
  kCopy,      // dst = src
  kDstFirst,  // dst = dst (op) src: dst holds the lower ranks' contributions
  kSrcFirst,  // dst = src (op) dst
};

struct Step {
  StepKind kind = StepKind::kCopy;
  Order order = Order::kCopy;
  bool ordered = false;
  bool background = false;  // send / recv: active from the start, awaited only at the end
  int32_t peer = -1;        // send / recv: group rank
  uint32_t tag = 0;
  Region src;  // send, copy, combine
  Region dst;  // recv, copy, combine
  uint32_t round = 0;
};

struct Schedule {
  std::vector<Step> steps;
  std::vector<uint32_t> round_begin;  // round r: steps [round_begin[r], round_begin[r + 1])
  uint64_t tmp_bytes = 0;
  // (peer << 32 | tag) -> step index, sorted, for recv and send steps apart.
  std::vector<std::pair<uint64_t, uint32_t>> recv_index, send_index;
  int rounds() const { return static_cast<int>(round_begin.size()) - 1; }
  // The recv (send) step for a message from (to) `peer` with `tag`, or -1.
  int FindRecv(int peer, uint32_t tag) const;
  int FindSend(int peer, uint32_t tag) const;
};

class ScheduleBuilder {
 public:
  // Starts a new round (an empty round is dropped).
  void Round();
  void Send(int peer, uint32_t tag, Region src);
  void Recv(int peer, uint32_t tag, Region dst, Order order = Order::kCopy, bool ordered = false);
  void Copy(Region src, Region dst, bool ordered = false);
  void Combine(Region src, Region dst, Order order, bool ordered = false);
  // Background steps (see above), whatever the current round.
  void BackgroundSend(int peer, uint32_t tag, Region src);
  void BackgroundRecv(int peer, uint32_t tag, Region dst);
  // Scratch of at least `bytes`.
  void NeedTmp(uint64_t bytes) {
    if (bytes > tmp_) tmp_ = bytes;
  }
  // Validates (regions inside the buffers of the given sizes, one recv per (peer, tag),
  // peers in range and never `rank`) and indexes the schedule.
  Result<Schedule> Finish(int n, int rank, uint64_t send_bytes, uint64_t recv_bytes);

 private:
  void Add(Step s);
  std::vector<Step> steps_, background_;
  std::vector<uint32_t> begins_{0};
  uint64_t tmp_ = 0;
};

// What a builder needs. Counts are elements; `element` bytes each.
struct CollArgs {
  Collective coll = Collective::kBarrier;
  Algorithm algorithm = Algorithm::kAuto;  // never kAuto by the time a builder sees it
  int n = 1;
  int rank = 0;
  int root = 0;
  uint64_t count = 0;  // per rank (gather, scatter, allgather), per block (reduce_scatter,
                       // alltoall), the vector (bcast, reduce, allreduce)
  uint64_t element = 1;
  bool commutative = true;
  int relays = 0;            // K (0 = the most)
  uint64_t chunk_bytes = 0;  // chain pipeline unit (0 = default)
  bool operator==(const CollArgs&) const = default;
};

// Bytes each of the caller's buffers must hold for `a` (0 = not used by this member).
uint64_t SendBytesNeeded(const CollArgs& a);
uint64_t RecvBytesNeeded(const CollArgs& a);

// The schedule of `a` (a.algorithm concrete). kInvalidArgument: the algorithm is not
// implemented for the collective (naming those that are), needs a commutative operation,
// or its relay count is out of range.
Result<Schedule> BuildSchedule(const CollArgs& a);
// The algorithms BuildSchedule knows for `c`.
std::vector<Algorithm> ImplementedAlgorithms(Collective c);
// Whether BuildSchedule knows `alg` for `c`.
bool Implemented(Collective c, Algorithm alg);
// Whether `alg` keeps contributions in rank order (usable with non-commutative operations).
bool KeepsRankOrder(Collective c, Algorithm alg);

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_SCHEDULE_H_
