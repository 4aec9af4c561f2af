// A larger random storm on the full mesh (N = 16, two planes, M = 2, variable-k and fixed-k,
// four groups, group relays, both relay modes, every operation type): every operation
// completes with the right data and the tables end empty.
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.h"
#include "sim/fullmesh/machine.h"

namespace ukai::sim::fullmesh {
namespace {

TEST(FullMeshStormItest, LargeMixedStormCompletes) {
  for (Policy policy : {Policy::kFixedK, Policy::kVariableK}) {
    for (RelayMode mode : {RelayMode::kPipelined, RelayMode::kStoreAndForward}) {
      FullMeshConfig cfg;
      cfg.nodes = 16;
      cfg.planes = 2;
      cfg.relays_per_node = 2;
      cfg.policy = policy;
      cfg.relay_mode = mode;
      cfg.group_relay = true;
      cfg.Normalize();
      for (int g = 0; g < 4; ++g)
        cfg.comms.push_back({"G", {4 * g, 4 * g + 1, 4 * g + 2, 4 * g + 3}});
      Rng rng(static_cast<uint64_t>(policy) * 2 + static_cast<uint64_t>(mode) + 1);
      std::vector<Operation> ops;
      double t = 0;
      for (int i = 0; i < 3000; ++i) {
        Operation op;
        t += rng.NextDouble() * 0.5;
        op.at_us = t;
        op.type = static_cast<OpType>(rng.Uniform(8));
        op.comm = static_cast<int>(rng.Uniform(5));
        const std::vector<int>& m = cfg.comms[op.comm].members;
        const size_t r = rng.Uniform(m.size());
        op.root = m[r];
        op.dest = m[(r + 1 + rng.Uniform(m.size() - 1)) % m.size()];
        op.bytes = 4 * (1 + static_cast<int64_t>(rng.Uniform(4000)));
        ops.push_back(op);
      }
      ASSERT_TRUE(ValidateFullMesh(cfg, ops).ok());
      Machine m(cfg, ops);
      m.Run();
      EXPECT_EQ(m.completed(), 3000);
      EXPECT_EQ(m.controller().link_table().busy_links(), 0);
      EXPECT_TRUE(m.controller().comm_table().rows().empty());
      for (const OpResult& r : m.results()) ASSERT_TRUE(r.data_ok) << r.op_index;
    }
  }
}

}  // namespace
}  // namespace ukai::sim::fullmesh
