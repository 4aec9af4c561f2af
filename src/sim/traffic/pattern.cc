#include "sim/traffic/pattern.h"

#include <string>
#include <vector>

#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

// Over the end nodes 0..nodes-1 (Topology::NumTerminals(): every node but the graph
// topology's switches, which are idle).
class UniformPattern final : public TrafficPattern {
 public:
  explicit UniformPattern(int nodes) : nodes_(nodes) {}
  int Destination(int src, Rng& rng) const override {
    const int d = static_cast<int>(rng.Uniform(nodes_ - 1));
    return d >= src ? d + 1 : d;
  }
  bool Idle(int src) const override { return src >= nodes_; }

 private:
  int nodes_;
};

// BookSim2's uniform: any end node, the source included (its message goes through its own
// router).
class UniformSelfPattern final : public TrafficPattern {
 public:
  explicit UniformSelfPattern(int nodes) : nodes_(nodes) {}
  int Destination(int, Rng& rng) const override { return static_cast<int>(rng.Uniform(nodes_)); }
  bool Idle(int src) const override { return src >= nodes_; }

 private:
  int nodes_;
};

// A fixed destination per source (-1: idle).
class PermutationPattern final : public TrafficPattern {
 public:
  explicit PermutationPattern(std::vector<int> dst) : dst_(std::move(dst)) {}
  int Destination(int src, Rng&) const override { return dst_[src]; }
  bool Idle(int src) const override { return dst_[src] < 0; }

 private:
  std::vector<int> dst_;
};

class HotspotPattern final : public TrafficPattern {
 public:
  HotspotPattern(int nodes, std::vector<int> hot, double fraction)
      : nodes_(nodes), hot_(std::move(hot)), fraction_(fraction) {}
  int Destination(int src, Rng& rng) const override {
    if (rng.NextDouble() < fraction_) {
      // A hot node other than the source, if there is one.
      const int n = static_cast<int>(hot_.size());
      int i = static_cast<int>(rng.Uniform(n));
      if (hot_[i] == src && n > 1) i = (i + 1 + static_cast<int>(rng.Uniform(n - 1))) % n;
      if (hot_[i] != src) return hot_[i];
    }
    const int d = static_cast<int>(rng.Uniform(nodes_ - 1));
    return d >= src ? d + 1 : d;
  }
  bool Idle(int src) const override { return src >= nodes_; }

 private:
  int nodes_;
  std::vector<int> hot_;
  double fraction_;
};

Status Err(std::string_view pattern, const std::string& why) {
  return Status::InvalidArgument("traffic.pattern: '" + std::string(pattern) + "' " + why)
      .WithKey("traffic.pattern");
}

const KaryNCube* AsCube(const Topology& t) { return dynamic_cast<const KaryNCube*>(&t); }

int Log2IfPow2(int n) {
  if (n <= 0 || (n & (n - 1)) != 0) return -1;
  int b = 0;
  while ((1 << b) < n) ++b;
  return b;
}

std::unique_ptr<TrafficPattern> FromTable(std::vector<int> dst) {
  for (size_t i = 0; i < dst.size(); ++i) {
    if (dst[i] == static_cast<int>(i)) dst[i] = -1;  // self: idle
  }
  return std::make_unique<PermutationPattern>(std::move(dst));
}

Result<std::unique_ptr<TrafficPattern>> MakeUniform(const Topology& t, const TrafficConfig&) {
  return std::unique_ptr<TrafficPattern>(std::make_unique<UniformPattern>(t.NumTerminals()));
}

Result<std::unique_ptr<TrafficPattern>> MakeUniformSelf(const Topology& t, const TrafficConfig&) {
  return std::unique_ptr<TrafficPattern>(std::make_unique<UniformSelfPattern>(t.NumTerminals()));
}

Result<std::unique_ptr<TrafficPattern>> MakeTranspose(const Topology& t, const TrafficConfig&) {
  const KaryNCube* cube = AsCube(t);
  if (cube == nullptr) return Err("transpose", "needs a k-ary n-cube");
  if (cube->n() < 2) return Err("transpose", "needs network.n >= 2");
  for (int d = 1; d < cube->n(); ++d) {
    if (cube->k(d) != cube->k(0))
      return Err("transpose", "needs the same network.k in every dimension");
  }
  std::vector<int> dst(t.NumNodes());
  for (int s = 0; s < t.NumNodes(); ++s) {
    std::vector<int> c = cube->Coords(s);
    std::vector<int> r(c.rbegin(), c.rend());
    dst[s] = cube->NodeAt(r);
  }
  return FromTable(std::move(dst));
}

Result<std::unique_ptr<TrafficPattern>> MakeBits(const Topology& t, std::string_view name,
                                                 int (*map)(int, int)) {
  const int bits = Log2IfPow2(t.NumTerminals());
  if (bits < 0) {
    return Err(name, "needs a power-of-two node count (the " + t.Describe() + " has " +
                         std::to_string(t.NumTerminals()) + " end nodes)");
  }
  std::vector<int> dst(t.NumNodes(), -1);  // switches (graph topology) idle
  for (int s = 0; s < t.NumTerminals(); ++s) dst[s] = map(s, bits);
  return FromTable(std::move(dst));
}

Result<std::unique_ptr<TrafficPattern>> MakeBitcomp(const Topology& t, const TrafficConfig&) {
  return MakeBits(t, "bitcomp", [](int s, int b) { return ~s & ((1 << b) - 1); });
}
Result<std::unique_ptr<TrafficPattern>> MakeBitrev(const Topology& t, const TrafficConfig&) {
  return MakeBits(t, "bitrev", [](int s, int b) {
    int r = 0;
    for (int i = 0; i < b; ++i) r |= ((s >> i) & 1) << (b - 1 - i);
    return r;
  });
}
Result<std::unique_ptr<TrafficPattern>> MakeShuffle(const Topology& t, const TrafficConfig&) {
  return MakeBits(t, "shuffle",
                  [](int s, int b) { return ((s << 1) | (s >> (b - 1))) & ((1 << b) - 1); });
}

Result<std::unique_ptr<TrafficPattern>> MakeShift(const Topology& t, std::string_view name,
                                                  bool tornado) {
  const KaryNCube* cube = AsCube(t);
  if (cube == nullptr) return Err(name, "needs a k-ary n-cube");
  std::vector<int> dst(t.NumNodes());
  for (int s = 0; s < t.NumNodes(); ++s) {
    std::vector<int> c = cube->Coords(s);
    for (int d = 0; d < cube->n(); ++d) {
      const int k = cube->k(d);
      const int shift = tornado ? (k + 1) / 2 - 1 : 1;
      c[d] = (c[d] + shift) % k;
    }
    dst[s] = cube->NodeAt(c);
  }
  return FromTable(std::move(dst));
}

Result<std::unique_ptr<TrafficPattern>> MakeTornado(const Topology& t, const TrafficConfig&) {
  return MakeShift(t, "tornado", true);
}
Result<std::unique_ptr<TrafficPattern>> MakeNeighbor(const Topology& t, const TrafficConfig&) {
  return MakeShift(t, "neighbor", false);
}

Result<std::unique_ptr<TrafficPattern>> MakeHotspot(const Topology& t, const TrafficConfig& c) {
  if (c.hotspot_nodes.empty()) {
    return Status::InvalidArgument("traffic.hotspot_nodes: needs at least one node")
        .WithKey("traffic.hotspot_nodes");
  }
  for (int h : c.hotspot_nodes) {
    if (h < 0 || h >= t.NumTerminals()) {
      return Status::InvalidArgument("traffic.hotspot_nodes: node " + std::to_string(h) +
                                     " outside the end nodes 0.." +
                                     std::to_string(t.NumTerminals() - 1))
          .WithKey("traffic.hotspot_nodes");
    }
  }
  if (!(c.hotspot_fraction >= 0.0 && c.hotspot_fraction <= 1.0)) {
    return Status::InvalidArgument("traffic.hotspot_fraction: must be in [0, 1]")
        .WithKey("traffic.hotspot_fraction");
  }
  return std::unique_ptr<TrafficPattern>(
      std::make_unique<HotspotPattern>(t.NumTerminals(), c.hotspot_nodes, c.hotspot_fraction));
}

constexpr PatternEntry kPatterns[] = {
    {"uniform", "uniformly random destination other than the source", &MakeUniform},
    {"uniform_self",
     "uniformly random destination, the source included (BookSim2's uniform; the BookSim "
     "reader maps uniform to it)",
     &MakeUniformSelf},
    {"transpose",
     "reverse the coordinate order ((x,y) -> (y,x)); needs equal k; diagonal nodes idle",
     &MakeTranspose},
    {"bitcomp", "complement of the node number's bits; power-of-two node count", &MakeBitcomp},
    {"bitrev", "node number with its bits reversed; power-of-two node count", &MakeBitrev},
    {"shuffle", "node number rotated left by one bit; power-of-two node count", &MakeShuffle},
    {"tornado", "every coordinate c -> (c + ceil(k/2) - 1) mod k", &MakeTornado},
    {"neighbor", "every coordinate c -> (c + 1) mod k", &MakeNeighbor},
    {"hotspot",
     "traffic.hotspot_fraction of messages to a node of traffic.hotspot_nodes, the rest "
     "uniform",
     &MakeHotspot},
};

}  // namespace

std::span<const PatternEntry> TrafficPatterns() { return kPatterns; }

Result<std::unique_ptr<TrafficPattern>> MakePattern(const Topology& topology,
                                                    const TrafficConfig& config) {
  std::string known;
  for (const PatternEntry& e : kPatterns) {
    if (e.name == config.pattern) {
      Result<std::unique_ptr<TrafficPattern>> p = e.create(topology, config);
      if (!p.ok()) return p;
      bool any = false;
      for (int s = 0; s < topology.NumTerminals() && !any; ++s) any = !(*p)->Idle(s);
      if (!any) return Err(e.name, "gives no node a destination on " + topology.Describe());
      return p;
    }
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status::NotFound("traffic.pattern: unknown pattern '" + config.pattern +
                          "' (known: " + known + ")")
      .WithKey("traffic.pattern");
}

}  // namespace ukai::sim
