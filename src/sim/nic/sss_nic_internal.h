// The SssMachine's private records (nic/sss_nic.h), shared by sss_nic.cc (packets, bus,
// buffers, events) and sss_ops.cc (operations and multicast plans). Not a public header.
#ifndef UKAI_SIM_NIC_SSS_NIC_INTERNAL_H_
#define UKAI_SIM_NIC_SSS_NIC_INTERNAL_H_

#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/nic/sss_nic.h"

namespace ukai::sim {

// One packet the model sent (a tree packet stands for all its copies).
struct SssMachine::Packet {
  int64_t op = -1;
  SssPacketKind kind = SssPacketKind::kWrite;
  int src = -1, dst = -1;  // dst -1: a multicast tree
  int64_t payload = 0, wire = 0;
  int32_t flits = 0;
  int32_t msg = -1;       // the engine message while it lives
  int32_t route = -1;     // Message::route
  int32_t dynamic = -1;   // a route registered with SourceRouting, removed at the end
  int copies = 1;         // deliveries still to come
  int pending = 0;        // deliveries and DMA jobs still to come; freed at 0
  int run = -1, tx = -1;  // a multicast plan's packet
  int ack_unit = -2;      // kAck: the unit it goes to (kPlanSource: the initiator)
  bool measured = false;
  bool urgent = false;  // forwarded by a unit or NIC: ahead of the PE's queue
  // Cut-through: the packet whose copy arriving at `feeder_node` feeds this one (-1: none).
  int64_t feeder = -1;
  int feeder_node = -1;
  // Copies being received at a node that feed forwarded packets (cut-through): per node,
  // flits received so far and the fed messages with their lengths.
  struct Feed {
    int32_t received = 0;
    std::vector<std::pair<int32_t, int32_t>> fed;
  };
  std::unordered_map<int, Feed> feeds;
};

struct SssMachine::Op {
  SssOp spec;
  int64_t started = 0;
  bool measured = false;
  int pending_memory = 0;  // packets (copies) still to reach host memory
  int pending_acks = 0;    // acks still to reach the initiator and be written
  bool completed = false;  // reported
  std::vector<int> runs;   // multicast plans being executed, released with the operation
};

// One multicast packet's plan being executed.
struct SssMachine::Run {
  int64_t op = -1;
  int64_t payload = 0;
  McastPlan plan;
  std::vector<int> acks_got;  // per unit
};

struct SssMachine::Nic {
  double sram = 0;  // buffer bytes available this cycle (may be owed: < 0)
  int64_t sram_cycle = 0;
  struct Dma {
    bool send = true;
    int64_t bytes = 0;
    int64_t packet = -1;  // the packet sent after it / received before it
    int run = -1;         // send: a multicast packet whose plan starts after it
  };
  // Receive jobs go first (the ring must drain: incoming data has the highest priority),
  // a job in progress is not preempted.
  std::deque<Dma> receive, send;
  bool busy = false;  // `current` is in progress
  Dma current;
  double moved = 0;  // bytes of the current job moved so far
  bool Idle() const { return !busy && receive.empty() && send.empty(); }
  void Queue(const Dma& job) { (job.send ? send : receive).push_back(job); }
  bool listed = false;
  int64_t ring_bytes = 0;  // in the receive ring
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_SSS_NIC_INTERNAL_H_
