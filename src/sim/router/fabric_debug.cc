// Debug views of the Fabric: invariant checks and the blocked-channel listing of the
// deadlock watchdog. Not on the hot path.
#include <functional>
#include <string>
#include <vector>

#include "sim/router/fabric.h"

namespace ukai::sim {

std::string Fabric::CheckInvariants() const {
  std::string err;
  auto fail = [&err](const std::string& what) {
    if (err.empty()) err = what;
  };
  for (const NodeRun& run : local_) {
    for (int r = run.begin; r < run.end; ++r) CheckRouter(r, fail);
  }
  return err;
}

void Fabric::CheckRouter(int32_t r, const std::function<void(const std::string&)>& fail) const {
  {
    for (int p = 0; p < ports_; ++p) {
      const int32_t pi = Pi(r, p);
      const uint32_t active_bits = PortBits(&Masks::active, r, p);
      const uint32_t credit_bits = PortBits(&Masks::credit, r, p);
      uint32_t ne = 0;
      for (int v = 0; v < vstride_; ++v) {
        const int32_t ivc = Ivc(r, p, v);
        const InVc& q = in_[ivc];
        if (q.count > depth_) fail("buffer overflow at " + std::to_string(ivc));
        if (q.count > 0) ne |= 1u << v;
        const bool active = (active_bits >> v) & 1u;
        if (active && out_[q.out].owner != ivc) {
          fail("input VC " + std::to_string(ivc) + " active but does not own its output VC");
        }
        if (active && q.state == kIdle) fail("input VC " + std::to_string(ivc) + " active, idle");
        const bool has_credit = active && out_[q.out].credits > 0;
        if (has_credit != (((credit_bits >> v) & 1u) != 0)) {
          fail("credit mask mismatch at input VC " + std::to_string(ivc));
        }
        if ((out_[ivc].owner >= 0) != ((masks_[ivc >> mshift_].owned & Bit(ivc)) != 0)) {
          fail("owned mask mismatch at output VC " + std::to_string(ivc));
        }
        if (out_[ivc].owner >= 0) {
          const int32_t o = out_[ivc].owner;
          const bool o_active = (masks_[o >> mshift_].active & Bit(o)) != 0;
          // A fork holds every VC of each branch port, also before it is active.
          if ((!o_active || in_[o].out != ivc) && !ForkHolds(o, ivc)) {
            fail("output VC " + std::to_string(ivc) + " owned by a VC that does not use it");
          }
        }
        // Credit conservation: credits (counted or on their way back) + downstream
        // occupancy == depth on every channel VC (whose far end this process holds).
        if (p != pe_port() && down_ivc_[pi] >= 0 && ((valid_vcs_[pi] >> v) & 1u) &&
            LaneOf(owner_[down_ivc_[pi] >> rshift_]) >= 0) {
          const int32_t down = down_ivc_[pi] + v;
          const int32_t pending = ArrivalsPending(down);  // counted only once they arrive
          const int32_t end = (in_[down].head + in_[down].count + pending) & slot_mask_;
          if (out_[ivc].tail != end) {
            fail("write slot mismatch: node " + std::to_string(r) + " port " + std::to_string(p) +
                 " vc " + std::to_string(v));
          }
          const int32_t returning = credit_delay_ >= 0 ? CreditsOnTheirWay(ivc) : 0;
          if (out_[ivc].credits + returning + in_[down].count + pending != depth_) {
            fail("credit leak: node " + std::to_string(r) + " port " + std::to_string(p) + " vc " +
                 std::to_string(v) + ": credits " + std::to_string(out_[ivc].credits) + " + " +
                 std::to_string(returning) + " on their way" + " + downstream flits " +
                 std::to_string(in_[down].count) + " + " + std::to_string(pending) +
                 " arriving != " + std::to_string(depth_));
          }
        }
      }
      if (ne != PortBits(&Masks::nonempty, r, p)) {
        fail("non-empty mask mismatch at node " + std::to_string(r));
      }
      if ((PortBits(&Masks::visible, r, p) & ~ne) != 0) {
        fail("visible mask not within non-empty at node " + std::to_string(r));
      }
    }
    // Bits of unused VC slots (port or VC beyond the configured ones) stay clear.
    for (int w = 0; w < words_; ++w) {
      const Masks& m = masks_[(r << (rshift_ - mshift_)) + w];
      uint64_t used = 0;
      for (int p = 0; p < ports_; ++p) {
        for (int v = 0; v < vstride_; ++v) {
          const int32_t ivc = Ivc(r, p, v);
          if ((ivc >> mshift_) == (r << (rshift_ - mshift_)) + w) used |= Bit(ivc);
        }
      }
      if (((m.nonempty | m.visible | m.active | m.credit) & ~used) != 0) {
        fail("mask bit of an unused VC slot set at node " + std::to_string(r));
      }
    }
  }
}

std::string Fabric::CheckNoMidwayStop(int64_t now) const {
  for (const NodeRun& run : local_) {
    for (int r = run.begin; r < run.end; ++r) {
      for (int p = 0; p < ports_; ++p) {
        const uint32_t active = PortBits(&Masks::active, r, p);
        for (int v = 0; v < vstride_; ++v) {
          if (((active >> v) & 1u) == 0) continue;
          const int32_t ivc = Ivc(r, p, v);
          const InVc& q = in_[ivc];
          const int op = (q.out >> vshift_) & ((1 << pshift_) - 1);
          if (op == pe_port() || q.count == 0) continue;
          const Flit& f = buf_[(static_cast<size_t>(ivc) << dshift_) + q.head];
          if (f.head() || f.ArrivedBy(now)) continue;
          const Message& m = (*messages_)[f.msg()];
          return "cycle " + std::to_string(now) + ": message " + std::to_string(m.src) + "->" +
                 std::to_string(m.dst) + " stopped midway at node " + std::to_string(r) +
                 " in-port " + std::to_string(p) + " vc " + std::to_string(v) +
                 ": its next flit has not arrived";
        }
      }
    }
  }
  return "";
}

std::vector<std::string> Fabric::DescribeBlocked(const Topology& topology, size_t limit,
                                                 std::vector<int32_t>* nodes) const {
  std::vector<std::string> lines;
  for (const NodeRun& run : local_) {
    for (int r = run.begin; r < run.end; ++r) {
      for (int p = 0; p < ports_; ++p) {
        for (int v = 0; v < vstride_; ++v) {
          const int32_t ivc = Ivc(r, p, v);
          if (in_[ivc].count == 0) continue;
          if (lines.size() >= limit) {
            lines.push_back("...");
            return lines;
          }
          const Flit& f = buf_[(static_cast<size_t>(ivc) << dshift_) + in_[ivc].head];
          const Message& m = (*messages_)[f.msg()];
          std::string line = "node " + std::to_string(r) + " in-port " + topology.PortName(p) +
                             " vc " + std::to_string(v) + ": " + std::to_string(in_[ivc].count) +
                             " flit(s), front flit (" +
                             (f.head()   ? "head"
                              : f.tail() ? "tail"
                                         : "body") +
                             ") of message " + std::to_string(m.src) + "->" + std::to_string(m.dst);
          if ((PortBits(&Masks::active, r, p) >> v) & 1u) {
            const InVc& q = in_[ivc];
            line += ", holds out-port " +
                    topology.PortName(q.out >> vshift_ & ((1 << pshift_) - 1)) + " vc " +
                    std::to_string(q.out & ((1 << vshift_) - 1)) + " (credits " +
                    std::to_string(out_[q.out].credits) + ")";
          } else {
            line += ", waiting for an output VC";
          }
          lines.push_back(std::move(line));
          if (nodes != nullptr) nodes->push_back(r);
        }
      }
    }
  }
  return lines;
}

}  // namespace ukai::sim
