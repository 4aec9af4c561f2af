// Messages and flits of the simulator.
//
// A message of L flits is created at its source's PE, waits in the PE's unbounded source
// queue, is pushed flit by flit into the router's injection VCs and delivered flit by flit
// at its destination's PE. The header travels in the first flit (no extra header flit):
// a message of B bytes has L = ceil(B / flit_bytes) flits (64 bytes = 16 flits of 4 bytes).
//
// Messages live in a MessagePool (indexed by int32, free lists; backed by memory only as
// far as the most messages ever alive at once). Flits are small values (8 bytes) that
// live inside the VC ring buffers and name their message by index: there is no
// per-flit allocation.
//
// Thread safety: see MessagePool; a Message is touched only by the thread evaluating the
// router that holds its head (or its source PE).
#ifndef UKAI_SIM_ENGINE_MESSAGE_H_
#define UKAI_SIM_ENGINE_MESSAGE_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/lazy_array.h"

namespace ukai::sim {

// A flit. `arrival` holds the low 32 bits of the first cycle the flit is visible in the
// buffer holding it: ArrivedBy() compares it with the clock exactly as long as every
// buffered flit's arrival lies within 2^31 cycles of it, which Fabric::RebaseArrivals()
// guarantees. `word`: message index (bits 0-29), head flag (bit 30), tail flag (bit 31).
struct Flit {
  static constexpr int32_t kMaxMessages = int32_t{1} << 30;  // live messages at a time

  uint32_t arrival = 0;
  uint32_t word = 0;

  static Flit Make(int64_t arrival_cycle, int32_t msg, bool head, bool tail) {
    Flit f;
    f.arrival = static_cast<uint32_t>(arrival_cycle);
    f.word = static_cast<uint32_t>(msg) | (head ? 1u << 30 : 0u) | (tail ? 1u << 31 : 0u);
    return f;
  }
  int32_t msg() const { return static_cast<int32_t>(word & (kMaxMessages - 1)); }
  bool head() const { return ((word >> 30) & 1u) != 0; }
  bool tail() const { return (word >> 31) != 0; }
  void set_arrival(int64_t cycle) { arrival = static_cast<uint32_t>(cycle); }
  // Whether the flit is visible at cycle t.
  bool ArrivedBy(int64_t t) const {
    return static_cast<int32_t>(arrival - static_cast<uint32_t>(t)) <= 0;
  }
};
static_assert(sizeof(Flit) == 8);

struct Message {
  static constexpr int kMaxVia = 4;  // via nodes a detour may list (routing/detour.h)

  int32_t src = 0;
  int32_t dst = 0;
  int32_t length = 0;          // flits
  int32_t hops = 0;            // router-to-router channels traversed by the head so far
  int64_t created = 0;         // cycle the message was created (entered the source queue)
  int64_t injected = -1;       // cycle its head entered the router's injection buffer
  uint32_t routing_state = 0;  // owned by the routing function (RouteRequest)
  // The message's number among those its source created (from 0): (src, seq) names it
  // across partitions and MPI ranks (the reconfiguration's discards order by it).
  uint32_t seq = 0;
  int32_t next = -1;           // source-queue / free-list link
  bool undeliverable = false;  // drained by a router: no live route (Fabric::SetPortAlive)
  // This copy went stale: the head crossed to another MPI rank, which holds the live copy
  // (this one stays for the body flits still here; sim/engine/rank_exchange.h).
  bool forwarded = false;
  // Cut-through through the PE (chained multicast; Network::Forward): the PE injects this
  // message's flits only as the message feeding it arrives.
  bool gated = false;
  int8_t inject_vc = -1;      // the injection VC the PE must use (-1: the emptiest)
  int16_t via_count = 0;      // via nodes of a detour (routing/detour.h), 0: none
  int32_t via[kMaxVia] = {};  // the via nodes, in order
  // Source routing (routing/source_routing.h): the route the sender wrote into the header;
  // -1: the routing function's own choice from its table.
  int32_t route = -1;
  int64_t tag = -1;  // owner's tag (the NIC model's frame id), -1: none
  // A multicast (dst == -1) is delivered at every node where its routing ejects it: the
  // number of copies still to deliver (1 for a message with a destination).
  int32_t copies = 1;
  // Sum over its flits of (the cycle it entered the router's injection buffer - created),
  // saturating at INT32_MAX (written by the source PE only, as arrival_sum by the
  // destination only: they may be in different partitions while the worm spans both).
  // BookSim2's flit latency comes from both. Under MPI ranks the copy a head takes to
  // another rank misses later injections (BookSim2's measurement does not run there).
  int32_t injection_wait_sum = 0;
  int64_t head_arrival = -1;  // cycle its head reached the destination PE
  int64_t arrival_sum = 0;    // sum of the arrival cycles of its flits at the PE so far

  // The global order of messages: by source, then by creation at that source.
  uint64_t uid() const { return uint64_t(uint32_t(src)) << 32 | seq; }
};
static_assert(sizeof(Message) == 104);

// Messages of one Network, in a pool shared by its partitions' threads (engine/partition.h).
// Indices are stable: the storage is reserved once (LazyArray, pages backed when first
// used) and never moves, so one thread may read a message while another allocates.
// Each lane (partition evaluated by one thread) has its own free list and claims fresh
// indices in chunks; Allocate(lane) and Release(id, lane) of distinct lanes may run at
// the same time. With one lane, indices come out exactly as from a growing vector with a
// LIFO free list.
class MessagePool {
 public:
  // `capacity`: most messages alive at once (at most Flit::kMaxMessages).
  explicit MessagePool(int lanes = 1, int64_t capacity = Flit::kMaxMessages);

  int32_t Allocate(int lane = 0) {
    Lane& l = lanes_[lane];
    int32_t id = l.free;
    if (id >= 0) {
      l.free = items_[id].next;
    } else {
      if (l.bump == l.bump_end) ClaimChunk(&l);
      id = l.bump++;
    }
    items_[id] = Message();
    ++l.live;
    return id;
  }
  void Release(int32_t id, int lane = 0) {
    Lane& l = lanes_[lane];
    items_[id].next = l.free;
    l.free = id;
    --l.live;
  }
  Message& operator[](int32_t id) { return items_[id]; }
  const Message& operator[](int32_t id) const { return items_[id]; }
  int64_t live() const;
  // Indices handed out so far (the high-water mark of the storage).
  size_t capacity() const { return static_cast<size_t>(claimed_); }

 private:
  static constexpr int32_t kChunk = 4096;
  struct alignas(64) Lane {
    int32_t free = -1;               // free list (Message::next links)
    int32_t bump = 0, bump_end = 0;  // unused indices of the lane's current chunk
    int64_t live = 0;
  };
  void ClaimChunk(Lane* lane);

  LazyArray<Message> items_;
  std::vector<Lane> lanes_;
  int64_t capacity_;
  int64_t claimed_ = 0;  // guarded by mu_
  std::mutex mu_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_MESSAGE_H_
