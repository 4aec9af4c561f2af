#include "sim/routing/dor_planner.h"

#include "sim/topology/group.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

class CubePlanner final : public DorPlanner {
 public:
  explicit CubePlanner(const KaryNCube& t) : t_(t) {}
  DorHop Next(int node, int dst) const override { return NextDorHop(t_, node, dst); }
  int classes() const override { return t_.torus() ? 2 : 1; }

 private:
  const KaryNCube& t_;
};

class GroupPlanner final : public DorPlanner {
 public:
  explicit GroupPlanner(const GroupTopology& t) : t_(t) {}
  DorHop Next(int node, int dst) const override {
    DorHop hop;
    const int i = t_.Member(node), j = t_.Member(dst);
    if (i != j) {
      hop.port = GroupTopology::IntraPort(i, j);
      hop.dim = 0;
      hop.dateline_class = 1;
      return hop;
    }
    const int g = t_.Group(node), h = t_.Group(dst);
    if (g == h) return hop;
    const bool plus = t_.RingOffset(g, h) > 0;
    hop.port = plus ? t_.PlusRingPort() : t_.MinusRingPort();
    hop.dim = 1;
    hop.dateline_class = DatelineClass(plus, g, h);
    return hop;
  }
  int classes() const override { return t_.groups() >= 2 ? 2 : 1; }

 private:
  const GroupTopology& t_;
};

}  // namespace

std::unique_ptr<DorPlanner> DorPlanner::For(const Topology& topology) {
  if (const auto* cube = dynamic_cast<const KaryNCube*>(&topology)) {
    return std::make_unique<CubePlanner>(*cube);
  }
  if (const auto* group = dynamic_cast<const GroupTopology*>(&topology)) {
    return std::make_unique<GroupPlanner>(*group);
  }
  return nullptr;
}

std::vector<int> DorPlanner::Path(const Topology& topology, int src, int dst) const {
  std::vector<int> path = {src};
  for (int node = src; node != dst;) {
    const DorHop hop = Next(node, dst);
    node = topology.Neighbor(node, hop.port).node;
    path.push_back(node);
  }
  return path;
}

bool DorPlanner::PathBlocked(const Topology& topology, int node, int dst) const {
  while (node != dst) {
    const DorHop hop = Next(node, dst);
    if (!topology.ChannelAlive(node, hop.port)) return true;
    node = topology.Neighbor(node, hop.port).node;
    if (!topology.NodeAlive(node)) return true;
  }
  return false;
}

}  // namespace ukai::sim
