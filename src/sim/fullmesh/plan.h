// Transfer plans: what one operation sends over which links, in which order, with which
// dependencies, and where every byte comes from and goes to. A plan is built once the
// controller has chosen the relays; the same plan gives the links to reserve, the time the
// operation takes (PlanTimer) and the data it moves (ExecutePlanData).
//
// Parts: data split over P paths are cut into P near-equal parts (reductions on 4-byte
// element boundaries); the machine-wide rule of [0108] assigns part i to the i-th lowest
// node number among the part holders (relays, and the receiver itself for p2p with the
// direct link), so a receiver knows where each part belongs.
//
// Segments are stored in creation order, which is also the order in which each link sends
// them and in which data are applied: every hop-1 segment comes before the hop-2 segments it
// feeds. Thread safety: plain values and pure functions.
#ifndef UKAI_SIM_FULLMESH_PLAN_H_
#define UKAI_SIM_FULLMESH_PLAN_H_

#include <cstdint>
#include <vector>

#include "sim/fullmesh/fullmesh_types.h"

namespace ukai::sim::fullmesh {

// A place in an operation's buffers.
enum class BufKind : uint8_t { kIn, kOut, kStage };
struct Ref {
  BufKind kind = BufKind::kIn;
  int32_t node = 0;
  int64_t offset = 0;
};
// Offset `off` of node `node`'s input, output and staging buffer.
inline Ref InRef(int node, int64_t off) { return Ref{BufKind::kIn, node, off}; }
inline Ref OutRef(int node, int64_t off) { return Ref{BufKind::kOut, node, off}; }
inline Ref StageRef(int node, int64_t off) { return Ref{BufKind::kStage, node, off}; }

enum class Hop : uint8_t {
  kDirect = 0,  // sender -> receiver over their direct link
  kFirst = 1,   // sender -> relay (the relay may also keep it as a receiver)
  kSecond = 2,  // relay -> receiver (data the relay received, combined or its own)
  kLocal = 3,   // a copy inside one node (no link, no time)
};

struct Segment {
  int32_t from = 0, to = 0;
  int64_t bytes = 0;
  Hop hop = Hop::kDirect;
  bool accumulate = false;   // dst += src as 32-bit integers instead of a copy
  int32_t parent_begin = 0;  // hop 2: the hop-1 segments feeding it, [begin, begin+count);
  int32_t parent_count = 0;  //   count 0: the relay's own data
  int32_t after_begin = 0;   // Plan::after[begin, begin+count): segments that must be
  int32_t after_count = 0;   //   delivered before this one starts (tree forwarding)
  Ref src, dst;
};

struct Plan {
  std::vector<Segment> segments;
  std::vector<int> relays;     // distinct relay nodes, ascending (K = relays.size())
  bool direct = false;         // some data go sender -> receiver over a direct link
  double predicted_us = -1;    // its duration when the controller already timed it, else -1
  std::vector<int32_t> after;  // segment indices named by Segment::after_begin/after_count
};

// [begin, end) of part i of `total` bytes cut into `parts` (aligned to `align` bytes).
void PartRange(int64_t total, int parts, int i, int64_t align, int64_t* begin, int64_t* end);

// The plain full-mesh plan (direct links only) of `op` over `members` (its communicator).
Plan DirectPlan(const Operation& op, const std::vector<int>& members);
// p2p split over `relays` and, when `direct`, the direct link (K+L parts).
Plan P2pRelayPlan(const Operation& op, const std::vector<int>& relays, bool direct);
// Multicast: relay i gets part i from the root and copies it to every other receiver. The
// root may be one of the relays (embodiment 3, K = N): its own part goes out through its
// relay unit.
Plan MulticastRelayPlan(const Operation& op, const std::vector<int>& members,
                        const std::vector<int>& relays);
// Reduce / allreduce: every member sends part i of its vector to relay i (all-to-all), the
// relay sums its column and sends the result to the root (reduce) or every member.
Plan ReduceRelayPlan(const Operation& op, const std::vector<int>& members,
                     const std::vector<int>& relays);
// Scatter / gather of a group with one relay per destination from outside the group
// (Fig. 29): each block goes half direct, half through relay_of[i] (-1: direct only) for the
// i-th non-root member.
Plan GroupRelayPlan(const Operation& op, const std::vector<int>& members,
                    const std::vector<int>& relay_of);

// Latency and bandwidth of the links, and how relays forward.
struct TimingParams {
  double bytes_per_us = 3125;  // B
  double t0_us = 2;            // direct path
  double t1_us = 2.1;          // whole 1-hop path (hop 1 and hop 2 take T1/2 each)
  RelayMode mode = RelayMode::kPipelined;
  int64_t chunk_bytes = 256;
};

// Computes how long a plan takes when its links are its own (the controller never shares a
// link): each link sends its segments in plan order at B; a direct delivery lands T0 after
// its last byte left; a relay may start forwarding (pipelined) one chunk after the first
// chunk of every input reached it, or (store-and-forward) once all its inputs arrived whole.
// A segment with `after` entries starts no earlier than the delivery of each one (a local
// copy is "delivered" when its last `after` entry is).
// Owns scratch space sized for `nodes` (N^2 doubles), reused between calls.
class PlanTimer {
 public:
  explicit PlanTimer(int nodes);
  // Microseconds from start until the last byte is delivered.
  double Duration(const Plan& plan, const TimingParams& p);

 private:
  int nodes_;
  std::vector<double> link_free_;
  std::vector<int32_t> touched_;
  std::vector<double> start_, end_, arrive_;
};

// The buffers of one operation: inputs filled from `seed`, outputs zero.
struct OpData {
  std::vector<std::vector<uint8_t>> in, out, stage;  // indexed by node (empty when unused)
};
OpData MakeOpData(const Operation& op, const std::vector<int>& members, int nodes, uint64_t seed);
// Applies every segment's copy or sum in plan order.
void ExecutePlanData(const Plan& plan, OpData* data);
// True when every member's output equals the operation's result computed directly from the
// inputs (copy, concatenation or element-wise sum).
bool CheckOpData(const Operation& op, const std::vector<int>& members, const OpData& data);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_PLAN_H_
