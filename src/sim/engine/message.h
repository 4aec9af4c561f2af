// Messages and flits of the simulator.
//
// A message of L flits is created at its source's PE, waits in the PE's unbounded source
// queue, is pushed flit by flit into the router's injection VCs and delivered flit by flit
// at its destination's PE. The header travels in the first flit (no extra header flit):
// a message of B bytes has L = ceil(B / flit_bytes) flits (64 bytes = 16 flits of 4 bytes).
//
// Messages live in a MessagePool (preallocated, indexed by int32, free list; grows only
// when more messages are alive than ever before). Flits are small values (8 bytes) that
// live inside the VC ring buffers and name their message by index: there is no
// per-flit allocation.
//
// Thread safety: none; owned by one Network.
#ifndef UKAI_SIM_ENGINE_MESSAGE_H_
#define UKAI_SIM_ENGINE_MESSAGE_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

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
  bool undeliverable = false;  // drained by a router: no live route (Fabric::SetPortAlive)
  // Cut-through through the PE (chained multicast; Network::Forward): the PE injects this
  // message's flits only as the message feeding it arrives.
  bool gated = false;
  int8_t inject_vc = -1;      // the injection VC the PE must use (-1: the emptiest)
  int32_t next = -1;          // source-queue / free-list link
  int32_t via_count = 0;      // via nodes of a detour (routing/detour.h), 0: none
  int32_t via[kMaxVia] = {};  // the via nodes, in order
  int64_t tag = -1;           // owner's tag (the NIC model's frame id), -1: none
  // Source routing (routing/source_routing.h): the route the sender wrote into the header;
  // -1: the routing function's own choice from its table.
  int32_t route = -1;
  // A multicast (dst == -1) is delivered at every node where its routing ejects it: the
  // number of copies still to deliver (1 for a message with a destination).
  int32_t copies = 1;
  int64_t head_arrival = -1;  // cycle its head reached the destination PE
  int64_t arrival_sum = 0;    // sum of the arrival cycles of its flits at the PE so far
};

class MessagePool {
 public:
  explicit MessagePool(size_t reserve = 1024) { items_.reserve(reserve); }

  int32_t Allocate() {
    int32_t id = free_;
    if (id >= 0) {
      free_ = items_[id].next;
      items_[id] = Message();
    } else {
      id = static_cast<int32_t>(items_.size());
      if (id >= Flit::kMaxMessages) {
        // 2^30 messages alive at once (about 40 GB of them): a run far past saturation.
        std::fprintf(stderr,
                     "ukai sim: more than 2^30 live messages (source queues of a "
                     "saturated network); lower traffic.rate or measure.max_cycles\n");
        std::abort();
      }
      items_.emplace_back();
    }
    ++live_;
    return id;
  }
  void Release(int32_t id) {
    items_[id].next = free_;
    free_ = id;
    --live_;
  }
  Message& operator[](int32_t id) { return items_[id]; }
  const Message& operator[](int32_t id) const { return items_[id]; }
  int64_t live() const { return live_; }
  size_t capacity() const { return items_.size(); }

 private:
  std::vector<Message> items_;
  int32_t free_ = -1;
  int64_t live_ = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_MESSAGE_H_
