// router.flow_control = in-band (docs/sss.md, "Flow control"): the SSS-CORE paper's
// alternative to announcing room in advance. Its switch announces room for a whole packet
// before the packet is sent, because flow control during a packet "uses the transceiver's
// send and receive paths at once and halves the network's throughput" (seed 003, §3.1).
// The model: every data flit that crosses a channel in cycle t makes its receiver answer
// with a flow-control symbol on the reverse channel (the other direction of the same link)
// in cycle t + 1, which then carries no data. So a network port may send in cycle t only
//   - if the reverse channel sent no flit in t - 1 (this port carries that flit's symbol),
//   - and not after sending in t - 1 itself while the reverse channel had a flit refused
//     in t - 1 (it yields one cycle, or a stream one way would shut out the other way).
// One way, nothing changes; both ways loaded, the link alternates: both directions send,
// both carry symbols, and each carries data in half of the cycles. The admission of a
// packet (virtual cut-through's room, credits) is unchanged: only the channel time the
// paper names is modelled. Forks check and mark every branch (the first may be the
// ejection, which is no channel). Only this router's slots of
// the current cycle are written (fabric.h), so Evaluate()'s contract holds; the arrays span
// the whole network (Network::CheckPartitionable() refuses partitions).
#include "sim/router/fabric.h"

namespace ukai::sim {

void Fabric::InitInBand(const Topology& topology) {
  in_band_ = true;
  const size_t npi = static_cast<size_t>(nodes_) << pshift_;
  fc_reverse_.assign(npi, -1);
  fc_sent_.assign(2 * npi, INT64_MIN);
  fc_refused_.assign(2 * npi, INT64_MIN);
  for (int r = 0; r < nodes_; ++r) {
    for (int p = 0; p < ports_ - 1; ++p) {
      const PortRef far = topology.Neighbor(r, p);
      // The far end's input port far.port is also its output port back to r (topology.h).
      if (far.valid()) fc_reverse_[static_cast<size_t>(Pi(r, p))] = Pi(far.node, far.port);
    }
  }
}

bool Fabric::InBandBlocked(int32_t pi, int64_t now) const {
  const int32_t rev = fc_reverse_[static_cast<size_t>(pi)];
  if (rev < 0) return false;
  const int64_t prev = now - 1;
  const size_t slot = static_cast<size_t>(prev & 1);
  const size_t own = 2 * static_cast<size_t>(pi) + slot;
  const size_t back = 2 * static_cast<size_t>(rev) + slot;
  return fc_sent_[back] == prev || (fc_sent_[own] == prev && fc_refused_[back] == prev);
}

bool Fabric::InBandRefuses(int32_t rpi, int op, int32_t ivc, int64_t now) {
  const size_t slot = static_cast<size_t>(now & 1);
  const int n = forking_ ? fork_n_[static_cast<size_t>(ivc)] : 0;
  const ForkBranch* branches =
      n > 1 ? fork_.data() + static_cast<size_t>(ivc) * kMaxBranches : nullptr;
  const int32_t pe = pe_port();
  // The ports this flit leaves by: op, and a fork's other branches (not the ejection).
  auto port_of = [&](int i) {
    return i == 0 ? op : static_cast<int>((branches[i].ovc >> vshift_) & ((1 << pshift_) - 1));
  };
  bool refused = false;
  for (int i = 0; i < (n > 1 ? n : 1) && !refused; ++i) {
    const int p = port_of(i);
    refused = p != pe && InBandBlocked(rpi + p, now);
  }
  if (!refused) return false;
  for (int i = 0; i < (n > 1 ? n : 1); ++i) {
    const int p = port_of(i);
    if (p != pe) fc_refused_[2 * static_cast<size_t>(rpi + p) + slot] = now;
  }
  return true;
}

void Fabric::InBandSends(int32_t rpi, int op, int32_t ivc, int64_t now) {
  const size_t slot = static_cast<size_t>(now & 1);
  const int n = forking_ ? fork_n_[static_cast<size_t>(ivc)] : 0;
  const ForkBranch* branches =
      n > 1 ? fork_.data() + static_cast<size_t>(ivc) * kMaxBranches : nullptr;
  if (op != pe_port()) fc_sent_[2 * static_cast<size_t>(rpi + op) + slot] = now;
  for (int i = 1; i < n; ++i) {
    const int p = static_cast<int>((branches[i].ovc >> vshift_) & ((1 << pshift_) - 1));
    if (p != pe_port()) fc_sent_[2 * static_cast<size_t>(rpi + p) + slot] = now;
  }
}

}  // namespace ukai::sim
