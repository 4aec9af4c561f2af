// Virtual node IDs over every module of conformance_modules.h: runtime 0 sends to virtual
// node 7, hosted first by runtime 1 and then by runtime 2 (each runtime has one context
// with a VnodeTable and an application endpoint with handler "app").
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "conformance_modules.h"
#include "rt_test_util.h"
#include "ukai/rt/vnode.hpp"

namespace ukai::rt::testing {
namespace {

constexpr VirtualNodeId kSuiteNode = 7;

class VnodeSuite : public ::testing::TestWithParam<ConformanceModule> {
 protected:
  void SetUp() override {
    fabric_ = NewInprocFabric();
    for (int i = 0; i < 3; ++i) {
      auto ctx =
          StartWithContext(ModuleOptions(GetParam().name, fabric_), "v" + std::to_string(i), &rts_);
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      auto table = VnodeTable::Attach(
          **ctx,
          [this](VirtualNodeId id) -> Result<VnodeLocation> {
            ++resolves_;
            if (id != kSuiteNode || resolve_to_ < 0)
              return Status::NotFound("unknown to the resolver");
            return VnodeLocation(tables_[resolve_to_]->startpoint());
          },
          [this](VirtualNodeId, const Status& why) {
            std::lock_guard<std::mutex> lock(mu_);
            errors_.push_back(why.ToString());
          });
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      tables_.push_back(std::move(*table));
      auto ep = (*ctx)->CreateEndpoint();
      ASSERT_TRUE(ep.ok());
      ASSERT_TRUE((*ep)
                      ->RegisterHandler("app", HandlerKind::kNonThreaded,
                                        [this, i](Rsr& m) {
                                          if (m.reader().GetU32().ok()) ++got_[i];
                                        })
                      .ok());
      eps_.push_back(*ep);
    }
  }
  void TearDown() override {
    for (size_t i = 0; i < rts_.size(); ++i) {
      Status st = rts_[i]->Finalize();
      // Probes that SendRsr accepted before the dead host's failure was seen are lost, and
      // Finalize says so (flow control: never OK after a loss).
      if (i == 0 && probed_dead_host_ && st.code() == StatusCode::kUnavailable) continue;
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
  }
  bool probed_dead_host_ = false;
  Status Send(uint32_t v) {
    Buffer b;
    b.PutU32(v);
    return tables_[0]->Send(kSuiteNode, b, HandlerId::Of("app"));
  }
  std::vector<std::string> Errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

  std::shared_ptr<InprocFabric> fabric_;
  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<std::unique_ptr<VnodeTable>> tables_;
  std::vector<Endpoint*> eps_;
  std::atomic<int> resolves_{0}, resolve_to_{1};
  std::atomic<int> got_[3] = {};
  std::mutex mu_;
  std::vector<std::string> errors_;
};

// A miss calls the resolver once; its answer is cached (hits afterwards) with the module
// under test as the route; a resolver failure is kNotFound naming the node.
TEST_P(VnodeSuite, MissCallsTheResolverAndIsCached) {
  ASSERT_TRUE(tables_[1]->Host(kSuiteNode, eps_[1]).ok());
  for (uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(Send(i).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[1].load() == 5; }));
  EXPECT_EQ(resolves_.load(), 1);
  EXPECT_EQ(tables_[0]->stats().misses, 1u);
  EXPECT_EQ(tables_[0]->stats().hits, 4u);
  auto route = tables_[0]->Lookup(kSuiteNode);
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(route->location, tables_[1]->startpoint());
  EXPECT_EQ(route->module, GetParam().name);
  Status st = tables_[0]->Send(99, Buffer(), HandlerId::Of("app"));
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("virtual node 99"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("unknown to the resolver"), std::string::npos) << st.ToString();
  EXPECT_EQ(tables_[0]->stats().resolver_failures, 1u);
}

// Migrate: messages still addressed to the old host are redirected to the new one, and the
// sender is told to rebind, so later messages go to the new host directly.
TEST_P(VnodeSuite, MigrationRedirectsAndRebindsTheSender) {
  ASSERT_TRUE(tables_[1]->Host(kSuiteNode, eps_[1]).ok());
  ASSERT_TRUE(Send(0).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[1].load() == 1; }));
  ASSERT_TRUE(tables_[2]->Host(kSuiteNode, eps_[2]).ok());
  ASSERT_TRUE(tables_[1]->Migrate(kSuiteNode, tables_[2]->startpoint()).ok());
  for (uint32_t i = 1; i <= 3; ++i) ASSERT_TRUE(Send(i).ok());  // in flight to the old host
  ASSERT_TRUE(WaitFor([&] { return got_[2].load() == 3; }));
  EXPECT_EQ(got_[1].load(), 1);
  // Redirected until the "moved" notice rebinds the sender (all 3 unless it came between).
  EXPECT_GE(tables_[1]->stats().redirected, 1u);
  ASSERT_TRUE(WaitFor(
      [&] { return tables_[0]->Lookup(kSuiteNode)->location == tables_[2]->startpoint(); }));
  EXPECT_GE(tables_[0]->stats().rebinds, 1u);
  const uint64_t redirected = tables_[1]->stats().redirected;
  ASSERT_TRUE(Send(4).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[2].load() == 4; }));
  EXPECT_EQ(tables_[1]->stats().redirected, redirected);  // went directly
  EXPECT_EQ(resolves_.load(), 1);
  EXPECT_TRUE(Errors().empty());
}

// A node that left its host without a forward address: the message fails at the old host
// and the sender's error callback gets a clear error; the entry is dropped, so the next
// send resolves again (the resolver now knows the new host).
TEST_P(VnodeSuite, MessageToAnUnhostedNodeFailsClearlyThenResolvesAgain) {
  ASSERT_TRUE(tables_[0]->Bind(kSuiteNode, tables_[1]->startpoint()).ok());
  ASSERT_TRUE(Send(0).ok());
  ASSERT_TRUE(WaitFor([&] { return !Errors().empty(); }));
  EXPECT_NE(Errors()[0].find("virtual node 7 is not hosted at runtime"), std::string::npos)
      << Errors()[0];
  EXPECT_NE(Errors()[0].find("no forward address"), std::string::npos) << Errors()[0];
  EXPECT_EQ(tables_[1]->stats().failed, 1u);
  EXPECT_EQ(tables_[1]->Unhost(kSuiteNode).code(), StatusCode::kFailedPrecondition);
  resolve_to_ = 2;
  ASSERT_TRUE(tables_[2]->Host(kSuiteNode, eps_[2]).ok());
  ASSERT_TRUE(Send(1).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[2].load() == 1; }));
  EXPECT_EQ(resolves_.load(), 1);  // the miss after the failure
}

// The host runtime is gone: the send fails at once (kUnavailable), the entry is dropped,
// the resolver names the new host, and the message goes there.
TEST_P(VnodeSuite, DeadHostIsResolvedAgain) {
  ASSERT_TRUE(tables_[1]->Host(kSuiteNode, eps_[1]).ok());
  ASSERT_TRUE(Send(0).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[1].load() == 1; }));
  ASSERT_TRUE(tables_[2]->Host(kSuiteNode, eps_[2]).ok());
  const Startpoint old_app = eps_[1]->MakeStartpoint();  // the endpoint dies with runtime 1
  ASSERT_TRUE(rts_[1]->Finalize().ok());
  resolve_to_ = 2;
  probed_dead_host_ = true;
  ASSERT_TRUE(WaitFor([&] {
    Buffer probe;
    return rts_[0]->SendRsr(probe, old_app, HandlerId::Of("app")).code() ==
           StatusCode::kUnavailable;
  }));
  ASSERT_TRUE(Send(1).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[2].load() == 1; }));
  EXPECT_EQ(resolves_.load(), 2);
}

INSTANTIATE_TEST_SUITE_P(Modules, VnodeSuite, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ukai::rt::testing
