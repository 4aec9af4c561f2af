// Debug views of the Fabric: invariant checks and the blocked-channel listing of the
// deadlock watchdog. Not on the hot path.
#include <string>
#include <vector>

#include "sim/router/fabric.h"

namespace ukai::sim {

std::string Fabric::CheckInvariants() const {
  std::string err;
  auto fail = [&err](const std::string& what) {
    if (err.empty()) err = what;
  };
  for (int r = 0; r < nodes_; ++r) {
    int32_t total = 0;
    uint32_t pmask = 0;
    for (int p = 0; p < ports_; ++p) {
      const int32_t pi = Pi(r, p);
      uint32_t ne = 0;
      for (int v = 0; v < vstride_; ++v) {
        const int32_t ivc = Ivc(r, p, v);
        total += count_[ivc];
        if (count_[ivc] > depth_) fail("buffer overflow at " + std::to_string(ivc));
        if (count_[ivc] > 0) ne |= 1u << v;
        if (state_[ivc] == kActive && owner_[out_[ivc]] != ivc) {
          fail("input VC " + std::to_string(ivc) + " active but does not own its output VC");
        }
        if (owner_[ivc] >= 0) {
          const int32_t o = owner_[ivc];
          if (state_[o] != kActive || out_[o] != ivc) {
            fail("output VC " + std::to_string(ivc) + " owned by a VC that does not use it");
          }
        }
        // Credit conservation: credits + downstream occupancy == depth on every channel VC.
        if (p != pe_port() && down_ivc_[pi] >= 0 && ((valid_vcs_[pi] >> v) & 1u)) {
          const int32_t down = down_ivc_[pi] + v;
          if (credits_[ivc] + count_[down] != depth_) {
            fail("credit leak: node " + std::to_string(r) + " port " + std::to_string(p) + " vc " +
                 std::to_string(v) + ": credits " + std::to_string(credits_[ivc]) +
                 " + downstream flits " + std::to_string(count_[down]) +
                 " != " + std::to_string(depth_));
          }
        }
      }
      if (ne != nonempty_[pi]) fail("non-empty mask mismatch at node " + std::to_string(r));
      if (ne != 0) pmask |= 1u << p;
    }
    if (pmask != port_mask_[r]) fail("port mask mismatch at node " + std::to_string(r));
    if (total != buffered_[r]) fail("buffered count mismatch at node " + std::to_string(r));
  }
  return err;
}

std::vector<std::string> Fabric::DescribeBlocked(const Topology& topology, size_t limit) const {
  std::vector<std::string> lines;
  for (int r = 0; r < nodes_; ++r) {
    for (int p = 0; p < ports_; ++p) {
      for (int v = 0; v < vstride_; ++v) {
        const int32_t ivc = Ivc(r, p, v);
        if (count_[ivc] == 0) continue;
        if (lines.size() >= limit) {
          lines.push_back("...");
          return lines;
        }
        const Flit& f = buf_[static_cast<size_t>(ivc) * depth_ + head_[ivc]];
        const Message& m = (*messages_)[f.msg];
        std::string line = "node " + std::to_string(r) + " in-port " + topology.PortName(p) +
                           " vc " + std::to_string(v) + ": " + std::to_string(count_[ivc]) +
                           " flit(s), front flit " + std::to_string(f.seq) + " of message " +
                           std::to_string(m.src) + "->" + std::to_string(m.dst);
        if (state_[ivc] == kActive) {
          const int op = out_port_[ivc];
          line += ", holds out-port " + topology.PortName(op) + " vc " +
                  std::to_string(out_[ivc] % vstride_) + " (credits " +
                  std::to_string(credits_[out_[ivc]]) + ")";
        } else {
          line += ", waiting for an output VC";
        }
        lines.push_back(std::move(line));
      }
    }
  }
  return lines;
}

}  // namespace ukai::sim
