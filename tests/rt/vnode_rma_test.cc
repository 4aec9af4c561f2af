// One virtual node table for RSRs and RMA, over every module of conformance_modules.h: four
// runtimes, each with one context holding a VnodeTable, an Rma that resolves virtual nodes
// through it (Rma::UseVnodeTable) and an application endpoint with handler "app". Runtimes 1
// and 2 host virtual node 7 (an endpoint and a segment), 0 and 3 send to it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "conformance_modules.h"
#include "rma_test_util.h"
#include "rt_test_util.h"
#include "ukai/rt/vnode.hpp"

namespace ukai::rt::testing {
namespace {

constexpr VirtualNodeId kNode = 7;
constexpr int kRuntimes = 4;

class VnodeRmaSuite : public ::testing::TestWithParam<ConformanceModule> {
 protected:
  void SetUp() override {
    fabric_ = NewInprocFabric();
    for (int i = 0; i < kRuntimes; ++i) {
      auto ctx = StartWithContext(ModuleOptions(GetParam().name, fabric_), "vr" + std::to_string(i),
                                  &rts_);
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      auto table = VnodeTable::Attach(
          **ctx,
          [this](VirtualNodeId id) -> Result<VnodeLocation> {
            ++resolves_;
            std::lock_guard<std::mutex> lock(mu_);
            if (id != kNode || !home_.table.valid()) return Status::NotFound("unknown to the OS");
            return home_;
          },
          [this](VirtualNodeId, const Status& why) {
            std::lock_guard<std::mutex> lock(mu_);
            errors_.push_back(why.ToString());
          });
      ASSERT_TRUE(table.ok()) << table.status().ToString();
      tables_.push_back(std::move(*table));
      auto rma = Rma::Create(**ctx);
      ASSERT_TRUE(rma.ok()) << rma.status().ToString();
      rma_.push_back(std::move(*rma));
      rma_[i]->UseVnodeTable(tables_[i].get());
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
    key_a_ = *rma_[1]->Register(a_.span());
    key_b_ = *rma_[2]->Register(b_.span());
  }
  void TearDown() override {
    rma_.clear();
    // The hosts first: they flush their answers (moved/fail notices) while the senders live.
    for (int i : {1, 2, 0, 3}) {
      Status st = rts_[i]->Finalize();
      EXPECT_TRUE(st.ok()) << "runtime " << i << ": " << st.ToString();
    }
  }
  void SetHome(const VnodeLocation& home) {
    std::lock_guard<std::mutex> lock(mu_);
    home_ = home;
  }
  Status Send(int from, uint32_t v) {
    Buffer b;
    b.PutU32(v);
    return tables_[from]->Send(kNode, b, HandlerId::Of("app"));
  }
  std::vector<std::string> Errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

  std::shared_ptr<InprocFabric> fabric_;
  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<std::unique_ptr<VnodeTable>> tables_;
  std::vector<std::unique_ptr<Rma>> rma_;
  std::vector<Endpoint*> eps_;
  Pages a_{4096}, b_{4096};
  RemoteKey key_a_, key_b_;
  std::atomic<int> resolves_{0};
  std::atomic<int> got_[kRuntimes] = {};
  std::mutex mu_;
  VnodeLocation home_;
  std::vector<std::string> errors_;
};

// One Migrate at the old host redirects both an RSR (forwarded by the old host's table) and
// an RMA put (refused at the retired segment; the initiator's table asks the old host where
// the node went and the put is reissued there). The resolver still names the old host: only
// the Migrate tells where the node went.
TEST_P(VnodeRmaSuite, OneMigrateRedirectsAnRsrAndAnRmaPut) {
  ASSERT_TRUE(tables_[1]->Host(kNode, eps_[1], key_a_).ok());
  SetHome({tables_[1]->startpoint(), key_a_});
  const std::vector<uint8_t> one = {1}, two = {2};
  ASSERT_TRUE(rma_[0]->PutV(kNode, 0, one).ok());
  ASSERT_TRUE(Send(3, 100).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[1].load() == 1; }));
  EXPECT_EQ(a_.data[0], 1);
  EXPECT_EQ(resolves_.load(), 2);  // one miss per sender

  // The node moves to runtime 2: its memory is copied, it is hosted there, one Migrate.
  std::memcpy(b_.data, a_.data, a_.size);
  ASSERT_TRUE(tables_[2]->Host(kNode, eps_[2], key_b_).ok());
  ASSERT_TRUE(tables_[1]->Migrate(kNode, {tables_[2]->startpoint(), key_b_}).ok());
  EXPECT_FALSE(rma_[1]->KeyOf(key_a_.segment).ok());  // the old segment was deregistered

  ASSERT_TRUE(Send(3, 101).ok());                  // still addressed to runtime 1
  ASSERT_TRUE(rma_[0]->PutV(kNode, 8, two).ok());  // still addressed to key_a_
  ASSERT_TRUE(WaitFor([&] { return got_[2].load() == 1; }));
  EXPECT_EQ(got_[1].load(), 1);
  EXPECT_EQ(tables_[1]->stats().redirected, 1u);    // the RSR, forwarded by the old host
  EXPECT_EQ(rma_[0]->stats().vnode_redirects, 1u);  // the put, reissued at the new segment
  EXPECT_EQ(tables_[0]->stats().refreshes, 1u);
  EXPECT_EQ(b_.data[8], 2);
  EXPECT_EQ(b_.data[0], 1);
  EXPECT_EQ(a_.data[8], 0);
  // Both senders are rebound: their next operations go to runtime 2 directly.
  ASSERT_TRUE(
      WaitFor([&] { return tables_[3]->Lookup(kNode)->location == tables_[2]->startpoint(); }));
  ASSERT_TRUE(Send(3, 102).ok());
  ASSERT_TRUE(rma_[0]->PutV(kNode, 16, two).ok());
  ASSERT_TRUE(WaitFor([&] { return got_[2].load() == 2; }));
  EXPECT_EQ(b_.data[16], 2);
  EXPECT_EQ(tables_[1]->stats().redirected, 1u);
  EXPECT_EQ(rma_[0]->stats().vnode_redirects, 1u);
  EXPECT_EQ(resolves_.load(), 2);  // no resolver call after the migration
  EXPECT_TRUE(Errors().empty());
}

// A miss calls the (one) resolver and is cached; a node unhosted with no forward address is
// found gone, the old host says so, the resolver names the new home and the op is redirected;
// then the error cases.
TEST_P(VnodeRmaSuite, ResolverMissRedirectAndErrors) {
  ASSERT_TRUE(tables_[1]->Host(kNode, eps_[1], key_a_).ok());
  SetHome({tables_[1]->startpoint(), key_a_});
  const std::vector<uint8_t> one = {1, 2, 3}, two = {4, 5, 6};
  ASSERT_TRUE(rma_[0]->PutV(kNode, 0, one).ok());
  ASSERT_TRUE(rma_[0]->PutV(kNode, 8, one).ok());
  EXPECT_EQ(resolves_.load(), 1);  // the miss was cached
  EXPECT_EQ(tables_[0]->stats().misses, 1u);
  EXPECT_EQ(a_.data[10], 3);
  // Unhost (no forward address) retires the segment; the OS now names runtime 2.
  std::memcpy(b_.data, a_.data, a_.size);
  ASSERT_TRUE(tables_[1]->Unhost(kNode).ok());
  EXPECT_EQ(rma_[1]->Deregister(key_a_.segment).code(), StatusCode::kNotFound);
  ASSERT_TRUE(tables_[2]->Host(kNode, eps_[2], key_b_).ok());
  SetHome({tables_[2]->startpoint(), key_b_});
  ASSERT_TRUE(rma_[0]->PutV(kNode, 16, two).ok());
  EXPECT_EQ(b_.data[18], 6);
  EXPECT_EQ(b_.data[10], 3);
  EXPECT_EQ(a_.data[18], 0);
  EXPECT_EQ(resolves_.load(), 2);
  EXPECT_EQ(rma_[0]->stats().vnode_redirects, 1u);
  Result<uint64_t> old = rma_[0]->FetchOpV(kNode, 24, AtomicOpcode::kAdd, 5);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  std::vector<uint8_t> back(3);
  ASSERT_TRUE(rma_[0]->GetV(kNode, 16, back).ok());
  EXPECT_EQ(back, two);
  EXPECT_TRUE(Errors().empty());  // a where query's answer is not a user message's loss

  // An explicit Bind of another id; an unknown node; no table; a node with no segment.
  ASSERT_TRUE(tables_[0]->Bind(9, {tables_[2]->startpoint(), key_b_}).ok());
  ASSERT_TRUE(rma_[0]->GetV(9, 16, back).ok());
  EXPECT_EQ(back, two);
  Status unknown = rma_[0]->PutV(8, 0, one);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("virtual node 8"), std::string::npos) << unknown.ToString();
  rma_[3]->UseVnodeTable(nullptr);
  Status no_table = rma_[3]->PutV(kNode, 0, one);
  EXPECT_EQ(no_table.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_table.message().find("no VnodeTable"), std::string::npos) << no_table.ToString();
  ASSERT_TRUE(tables_[0]->Bind(11, tables_[1]->startpoint()).ok());
  Status no_segment = rma_[0]->PutV(11, 0, one);
  EXPECT_EQ(no_segment.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_segment.message().find("has no RMA segment"), std::string::npos)
      << no_segment.ToString();
  // The OS names the gone location again: a clear error, nothing written.
  SetHome({tables_[1]->startpoint(), key_a_});
  ASSERT_TRUE(tables_[0]->Bind(kNode, {tables_[1]->startpoint(), key_a_}).ok());
  Status stale = rma_[0]->PutV(kNode, 0, two);
  EXPECT_EQ(stale.code(), StatusCode::kNotFound);
  EXPECT_NE(stale.message().find("same location again"), std::string::npos) << stale.ToString();
  EXPECT_EQ(a_.data[0], 1);
}

// Host's checks, and malformed "where" / "moved" messages are dropped and counted.
TEST_P(VnodeRmaSuite, BadHostingAndMalformedMessagesAreRejected) {
  EXPECT_EQ(tables_[1]->Host(kNode, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tables_[1]->Host(kNode, eps_[1], key_b_).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tables_[1]->Host(kNode, eps_[2]).code(), StatusCode::kInvalidArgument);
  Buffer where;
  where.PutU64(kNode);  // no reply startpoint
  ASSERT_TRUE(
      rts_[0]
          ->SendRsr(std::move(where), tables_[1]->startpoint(), HandlerId::Of("ukai.vn.where"))
          .ok());
  Buffer moved;
  moved.PutU64(kNode);
  moved.PutStartpoint(tables_[2]->startpoint());
  moved.PutBytes(std::vector<uint8_t>{1, 2, 3});  // not a RemoteKey
  ASSERT_TRUE(
      rts_[0]
          ->SendRsr(std::move(moved), tables_[1]->startpoint(), HandlerId::Of("ukai.vn.moved"))
          .ok());
  ASSERT_TRUE(WaitFor([&] { return tables_[1]->stats().rejected == 2; }));
  EXPECT_EQ(tables_[1]->stats().rebinds, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modules, VnodeRmaSuite, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ukai::rt::testing
