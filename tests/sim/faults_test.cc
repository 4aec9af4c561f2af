// Faults (topology/faults.h, experiment/fault_config.h): config forms and their errors,
// resolution on a k-ary n-cube, connectivity, random draws with the run seed, timed
// events, and what the network does with messages to or from faulty nodes.
#include "sim/topology/faults.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/config/toml_reader.h"
#include "sim/engine/network.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/fault_config.h"
#include "sim/experiment/front_door.h"
#include "sim/topology/kary_ncube.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

std::vector<SimConfig> Load(const std::string& toml, std::string* error = nullptr) {
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(toml, "f.toml", {});
  if (!r.ok()) {
    if (error != nullptr) *error = r.status().message();
    return {};
  }
  return *r;
}

std::string LoadError(const std::string& toml) {
  std::string error;
  EXPECT_TRUE(Load(toml, &error).empty()) << "accepted: " << toml;
  return error;
}

NodeRef Coords(std::vector<int64_t> c) {
  NodeRef r;
  r.form = NodeRef::Form::kCoords;
  r.coords = std::move(c);
  r.text = "coords";
  return r;
}

// The faults of `toml` as read (form only: no topology, no routing).
std::vector<SimConfig> LoadFaults(const std::string& toml, std::vector<std::string> sets = {}) {
  const config::Schema schema = SimConfigSchema();
  Result<config::ConfigValues> values = config::ReadTomlString(toml, "f.toml", schema);
  EXPECT_TRUE(values.ok()) << values.status().ToString();
  if (!values.ok()) return {};
  for (const std::string& s : sets) EXPECT_TRUE(config::ApplySetArgument(s, schema, &*values).ok());
  SimConfig c;
  std::vector<std::string> errors;
  ReadFaultConfig(*values, &c.faults, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  return {c};
}

TEST(FaultConfigTest, ReadsEveryForm) {
  std::vector<SimConfig> p = LoadFaults(
      "[faults]\nnodes = [[3, 4], \"7,1\"]\nchannels = [[[0, 0], [0, 1]]]\n"
      "random_nodes = 2\nrandom_channels = 1\n"
      "events = [{cycle = 20000, fail_node = [5, 5]}, {cycle = 60000, repair_node = [5, 5]},\n"
      "          {cycle = 7, fail_channel = [[1, 1], [1, 2]]}]\n");
  ASSERT_EQ(p.size(), 1u);
  const FaultConfig& f = p[0].faults;
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.nodes[0].coords, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(f.nodes[1].name, "7,1");
  ASSERT_EQ(f.channels.size(), 1u);
  EXPECT_EQ(f.channels[0].b.coords, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(f.random_nodes, 2);
  EXPECT_EQ(f.random_channels, 1);
  ASSERT_EQ(f.events.size(), 3u);
  EXPECT_EQ(f.events[1].cycle, 60000);
  EXPECT_EQ(f.events[1].kind, FaultEventSpec::Kind::kRepairNode);
  EXPECT_EQ(f.events[2].kind, FaultEventSpec::Kind::kFailChannel);
  // Array-of-tables syntax and --set work too.
  p = LoadFaults("[[faults.events]]\ncycle = 5\nrepair_channel = [[0, 0], [1, 0]]\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].faults.events[0].kind, FaultEventSpec::Kind::kRepairChannel);
  p = LoadFaults("", {"faults.nodes=[[1, 2]]"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].faults.nodes[0].coords, (std::vector<int64_t>{1, 2}));
}

TEST(FaultConfigTest, ErrorsNameKeyAndPlace) {
  EXPECT_THAT(LoadError("[faults]\nnodes = [3, 4]\n"),
              HasSubstr("faults.nodes: expected a node: coordinates"));
  EXPECT_THAT(LoadError("[faults]\nnodes = [3, 4]\n"), HasSubstr("at f.toml:2:10"));
  EXPECT_THAT(LoadError("[faults]\nnodes = [[12, 0]]\n"),
              HasSubstr("coordinate 12 of dimension 0 is outside 0..9"));
  EXPECT_THAT(LoadError("[faults]\nnodes = [[1, 2, 3]]\n"), HasSubstr("needs 2 coordinate(s)"));
  EXPECT_THAT(LoadError("[faults]\nnodes = [\"a,b\"]\n"), HasSubstr("expected coordinates"));
  EXPECT_THAT(LoadError("[faults]\nchannels = [[[0, 0], [2, 2]]]\n"),
              HasSubstr("faults.channels: nodes [0, 0] and [2, 2] at f.toml:2:13 are not "
                        "neighbours"));
  EXPECT_THAT(LoadError("[faults]\nevents = [{cycle = 5, explode = [1, 1]}]\n"),
              HasSubstr("faults.events: unknown field 'explode'"));
  EXPECT_THAT(LoadError("[faults]\nevents = [{cycle = 5}]\n"),
              HasSubstr("exactly one of fail_node"));
  EXPECT_THAT(LoadError("[faults]\nevents = [{fail_node = [1, 1]}]\n"),
              HasSubstr("an event needs its cycle"));
  EXPECT_THAT(LoadError("[faults]\nrandom_nodes = -1\n"), HasSubstr("faults.random_nodes"));
}

TEST(FaultConfigTest, NonFaultTolerantRoutingsRefuseFaults) {
  for (const char* algo : {"dor", "duato"}) {
    EXPECT_THAT(LoadError(std::string("routing.algorithm = \"") + algo +
                          "\"\n[faults]\nnodes = [[1, 1]]\n"),
                HasSubstr("is not fault tolerant"))
        << algo;
  }
}

TEST(FaultPlanTest, NodeFaultKillsItsChannelsChannelFaultBothDirections) {
  auto t = testing::MakeCube(TopologyKind::kTorus, {4, 4});
  FaultConfig f;
  f.nodes.push_back(Coords({1, 1}));
  ChannelRef ch;
  ch.a = Coords({3, 3});
  ch.b = Coords({0, 3});  // the wrap-around channel of dimension 0
  f.channels.push_back(ch);
  Result<FaultPlan> plan = PlanFaults(*t, f, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  plan->initial.ApplyTo(t.get());
  const int n11 = t->NodeAt({1, 1});
  EXPECT_FALSE(t->NodeAlive(n11));
  for (int p = 0; p < 4; ++p) {
    EXPECT_FALSE(t->ChannelAlive(n11, p));
    const PortRef far = t->Neighbor(n11, p);
    EXPECT_FALSE(t->ChannelAlive(far.node, far.port));  // the neighbour's side too
  }
  EXPECT_FALSE(t->ChannelAlive(t->NodeAt({3, 3}), 0));  // +x of (3,3)
  EXPECT_FALSE(t->ChannelAlive(t->NodeAt({0, 3}), 1));  // -x of (0,3)
  EXPECT_TRUE(t->ChannelAlive(t->NodeAt({3, 3}), 1));
  EXPECT_EQ(plan->initial.FaultyNodes(), std::vector<int>{n11});
  EXPECT_EQ(plan->initial.FaultyChannels().size(), 1u);
}

TEST(FaultPlanTest, DisconnectingFaultsAreAnError) {
  auto t = testing::MakeCube(TopologyKind::kMesh, {4, 4});
  FaultConfig f;
  f.nodes = {Coords({1, 0}), Coords({0, 1})};  // cut the corner (0,0) off
  Result<FaultPlan> plan = PlanFaults(*t, f, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("faults.nodes disconnect the healthy network: node (2,0) cannot be "
                        "reached from node (0,0)"));
  // The same cut made by a timed event.
  f.nodes = {Coords({1, 0})};
  FaultEventSpec e;
  e.cycle = 100;
  e.node = Coords({0, 1});
  f.events.push_back(e);
  plan = PlanFaults(*t, f, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("faults.events: the event at cycle 100"));
}

TEST(FaultPlanTest, RandomFaultsFollowTheSeedAndKeepTheNetworkConnected) {
  auto t = testing::MakeCube(TopologyKind::kMesh, {5, 5});
  FaultConfig f;
  f.random_nodes = 5;
  f.random_channels = 6;
  std::vector<std::vector<int>> placements;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Result<FaultPlan> a = PlanFaults(*t, f, seed);
    Result<FaultPlan> b = PlanFaults(*t, f, seed);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->initial.FaultyNodes(), b->initial.FaultyNodes());
    EXPECT_EQ(a->initial.FaultyChannels(), b->initial.FaultyChannels());
    EXPECT_EQ(a->initial.FaultyNodes().size(), 5u);
    EXPECT_EQ(a->initial.FaultyChannels().size(), 6u);
    EXPECT_TRUE(CheckConnected(a->initial, "x").ok());
    placements.push_back(a->initial.FaultyNodes());
  }
  std::sort(placements.begin(), placements.end());
  EXPECT_GT(std::unique(placements.begin(), placements.end()) - placements.begin(), 20);
  // Listed faults stay and random ones come on top of them.
  f.nodes = {Coords({2, 2})};
  Result<FaultPlan> c = PlanFaults(*t, f, 3);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->initial.FaultyNodes().size(), 6u);
  EXPECT_TRUE(c->initial.NodeFaulty(t->NodeAt({2, 2})));
}

TEST(FaultPlanTest, ImpossibleRandomFaultsAreAClearError) {
  auto t = testing::MakeCube(TopologyKind::kMesh, {2, 2});
  FaultConfig f;
  f.random_channels = 2;  // a 4-ring minus 2 links: connected only if they are... never both
  f.random_nodes = 0;
  f.random_channels = 3;
  Result<FaultPlan> plan = PlanFaults(*t, f, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("faults.random_channels: no placement"));
  f.random_channels = 0;
  f.random_nodes = 4;
  EXPECT_THAT(PlanFaults(*t, f, 1).status().message(), HasSubstr("fewer than 1 healthy node"));
}

// A test routing over the live topology: every port that lowers the BFS distance to the
// destination, on every VC; tables recomputed when the topology changes.
class LiveShortestRouting final : public RoutingFunction {
 public:
  // Reads the liveness of `t` (the network's own topology once Bind() has run).
  void Bind(const Topology* t) {
    t_ = t;
    TopologyChanged();
  }
  void Route(const RouteRequest& r, RouteResult* out) const override {
    const int n = t_->NumNodes();
    for (int p = 0; p < t_->NumNetworkPorts(); ++p) {
      const PortRef far = t_->LiveNeighbor(r.node, p);
      if (far.valid() && dist_[far.node * n + r.dst] < dist_[r.node * n + r.dst]) {
        out->Add(p, 0xF);
      }
    }
  }
  void TopologyChanged() override {
    const int n = t_->NumNodes();
    dist_.assign(static_cast<size_t>(n) * n, 1 << 20);
    for (int d = 0; d < n; ++d) {
      std::deque<int> q{d};
      dist_[d * n + d] = 0;
      while (!q.empty()) {
        const int v = q.front();
        q.pop_front();
        for (int p = 0; p < t_->NumNetworkPorts(); ++p) {
          const PortRef far = t_->LiveNeighbor(v, p);
          if (far.valid() && dist_[far.node * n + d] > dist_[v * n + d] + 1) {
            dist_[far.node * n + d] = dist_[v * n + d] + 1;
            q.push_back(far.node);
          }
        }
      }
    }
  }

 private:
  const Topology* t_ = nullptr;
  std::vector<int> dist_;
};

std::unique_ptr<Network> FaultyNet(SimConfig c, bool traffic = true) {
  c.routing.algorithm = "dor";  // replaced by the test routing (supports() is not asked)
  EXPECT_FALSE(Network::Create(c, nullptr, true).ok());  // dor refuses faults
  auto routing = std::make_unique<LiveShortestRouting>();
  LiveShortestRouting* raw = routing.get();
  Result<std::unique_ptr<Network>> made = Network::Create(c, std::move(routing), traffic);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return nullptr;
  raw->Bind(&(*made)->topology());
  return std::move(*made);
}

TEST(FaultNetworkTest, NoTrafficToOrFromFaultyNodes) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4});
  c.traffic.rate = 0.05;
  c.faults.nodes = {Coords({1, 1}), Coords({2, 3})};
  std::unique_ptr<Network> net = FaultyNet(c);
  ASSERT_NE(net, nullptr);
  const int a = net->topology().ParseNode(Coords({1, 1})).value();
  const int b = net->topology().ParseNode(Coords({2, 3})).value();
  int64_t delivered = 0;
  for (int i = 0; i < 20000; ++i) {
    net->Step();
    for (const Delivery& d : net->deliveries()) {
      EXPECT_NE(d.src, a);
      EXPECT_NE(d.src, b);
      EXPECT_NE(d.dst, a);
      EXPECT_NE(d.dst, b);
      ++delivered;
    }
  }
  EXPECT_GT(delivered, 500);
  EXPECT_GT(net->messages_not_generated(), 0);
  EXPECT_EQ(net->messages_undeliverable(), 0);
}

TEST(FaultNetworkTest, TimedFailureAndRepair) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4});
  c.traffic.rate = 0.1;
  FaultEventSpec fail, repair;
  fail.cycle = 3000;
  fail.node = Coords({1, 1});
  repair = fail;
  repair.cycle = 6000;
  repair.kind = FaultEventSpec::Kind::kRepairNode;
  c.faults.events = {fail, repair};
  std::unique_ptr<Network> net = FaultyNet(c);
  ASSERT_NE(net, nullptr);
  const int a = net->topology().ParseNode(Coords({1, 1})).value();
  int64_t during = 0, after = 0;
  for (int i = 0; i < 9000; ++i) {
    net->Step();
    for (const Delivery& d : net->deliveries()) {
      const bool involves = d.src == a || d.dst == a;
      if (d.created >= 3000 && d.created < 6000) during += involves;
      if (d.created >= 6000) after += involves;
    }
    if (net->now() == 4000) {
      EXPECT_FALSE(net->topology().NodeAlive(a));
    }
  }
  EXPECT_EQ(net->fault_events_applied(), 2);
  EXPECT_EQ(during, 0);  // nothing created to or from it while it was faulty
  EXPECT_GT(after, 0);   // traffic resumes after the repair
  EXPECT_TRUE(net->topology().NodeAlive(a));
  // Every created message was delivered, is undeliverable (counted) or still in flight.
  EXPECT_TRUE(net->CheckInvariants().ok());
}

TEST(FaultNetworkTest, MessagesToANodeThatFailsAreCountedNotLost) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4});
  FaultEventSpec fail;
  fail.cycle = 2;
  fail.node = Coords({3, 3});
  c.faults.events = {fail};
  std::unique_ptr<Network> net = FaultyNet(c, /*traffic=*/false);
  ASSERT_NE(net, nullptr);
  const int dead = net->topology().ParseNode(Coords({3, 3})).value();
  for (int i = 0; i < 5; ++i) net->CreateMessage(0, dead, 16);  // queued or in flight
  net->CreateMessage(0, 5, 4);
  int64_t delivered = 0;
  for (int i = 0; i < 2000; ++i) {
    net->Step();
    delivered += static_cast<int64_t>(net->deliveries().size());
  }
  EXPECT_EQ(delivered, 1);
  EXPECT_EQ(net->messages_undeliverable(), 5);
  EXPECT_EQ(net->flits_in_network(), 0);
}

}  // namespace
}  // namespace ukai::sim
