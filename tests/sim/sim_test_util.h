// Helpers shared by the simulator tests: small configs and a driver that sends single
// messages through an otherwise idle network.
#ifndef UKAI_TESTS_SIM_SIM_TEST_UTIL_H_
#define UKAI_TESTS_SIM_SIM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/engine/network.h"
#include "sim/experiment/sim_config.h"
#include "sim/routing/dimension_order.h"
#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim::testing {

// Node `n` as written by number in a config (faults.*, reconfig.root_priority).
inline NodeRef NodeNumber(int n) {
  NodeRef r;
  r.form = NodeRef::Form::kNumber;
  r.number = n;
  r.text = std::to_string(n);
  return r;
}

inline SimConfig SmallConfig(TopologyKind kind, std::vector<int> k, const char* routing = "dor") {
  SimConfig c;
  c.network.topology = kind;
  c.network.n = static_cast<int>(k.size());
  c.network.k = std::move(k);
  c.routing.algorithm = routing;
  return c;
}

// A k-ary n-cube with radices k (dimension 0 first).
inline std::unique_ptr<KaryNCube> MakeCube(TopologyKind kind, std::vector<int> k) {
  NetworkConfig c;
  c.topology = kind;
  c.n = static_cast<int>(k.size());
  c.k = std::move(k);
  Result<std::unique_ptr<KaryNCube>> made = KaryNCube::Create(c);
  return std::move(made).value();
}

// Sends one message src->dst of `flits` flits through the idle network and returns its
// delivery record (fails the test if it is not delivered within `limit` cycles).
inline Delivery SendOne(Network& net, int src, int dst, int flits, int64_t limit = 100000) {
  net.CreateMessage(src, dst, flits);
  const int64_t start = net.now();
  while (net.now() - start < limit) {
    net.Step();
    if (!net.deliveries().empty()) return net.deliveries()[0];
  }
  ADD_FAILURE() << "message " << src << "->" << dst << " not delivered";
  return Delivery{};
}

// A test-only routing: dimension order on the split dateline classes of 4 VCs, reading a
// "routing table" at every hop (RouteResult::UseTableLookup()).
class TableLookupDor final : public RoutingFunction {
 public:
  explicit TableLookupDor(const KaryNCube& t) : t_(t) {}
  void Route(const RouteRequest& r, RouteResult* out) const override {
    const DorHop hop = NextDorHop(t_, r.node, r.dst);
    out->Add(hop.port, ClassMask(0, 4, hop.dateline_class));
    out->UseTableLookup();
  }

 private:
  const KaryNCube& t_;
};

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_SIM_TEST_UTIL_H_
