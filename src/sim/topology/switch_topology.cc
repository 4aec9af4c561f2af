#include "sim/topology/switch_topology.h"

#include <deque>

namespace ukai::sim {

SwitchTopology::SwitchTopology(int terminals, int routers, int ports)
    : terminals_(terminals),
      routers_(routers),
      ports_(ports),
      table_(static_cast<size_t>(terminals + routers) * ports) {}

void SwitchTopology::ConnectRouters(int a, int pa, int b, int pb) {
  const int na = RouterNode(a), nb = RouterNode(b);
  table_[static_cast<size_t>(na) * ports_ + pa] = {nb, pb};
  table_[static_cast<size_t>(nb) * ports_ + pb] = {na, pa};
}

void SwitchTopology::AttachTerminal(int t, int r, int p) {
  const int nr = RouterNode(r);
  table_[static_cast<size_t>(t) * ports_] = {nr, p};
  table_[static_cast<size_t>(nr) * ports_ + p] = {t, 0};
}

std::string SwitchTopology::NodeName(int node) const {
  if (IsTerminal(node)) return std::to_string(node);
  return std::string("r") + std::to_string(RouterOf(node));
}

int SwitchTopology::RouterDistance(int a, int b) const {
  if (a == b) return 0;
  std::vector<int> dist(routers_, -1);
  std::deque<int> queue{a};
  dist[a] = 0;
  while (!queue.empty()) {
    const int r = queue.front();
    queue.pop_front();
    for (int p = 0; p < ports_; ++p) {
      const PortRef far = Neighbor(RouterNode(r), p);
      if (!far.valid() || IsTerminal(far.node)) continue;
      const int next = RouterOf(far.node);
      if (dist[next] >= 0) continue;
      dist[next] = dist[r] + 1;
      if (next == b) return dist[next];
      queue.push_back(next);
    }
  }
  return -1;
}

int SwitchTopology::Distance(int a, int b) const {
  if (a == b) return 0;
  return (IsTerminal(a) ? 1 : 0) + (IsTerminal(b) ? 1 : 0) +
         RouterDistance(DestinationRouter(a), DestinationRouter(b));
}

Status SwitchTopology::CheckSize(int64_t terminals, int64_t routers, const char* key) {
  constexpr int64_t kMaxNodes = int64_t{1} << 20;
  if (terminals + routers > kMaxNodes) {
    return Status::InvalidArgument(std::string(key) + ": the network would have " +
                                   std::to_string(terminals) + " terminals and " +
                                   std::to_string(routers) + " routers, more than 2^20 nodes")
        .WithKey(key);
  }
  return Status::Ok();
}

}  // namespace ukai::sim
