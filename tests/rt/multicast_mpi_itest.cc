// Multicast over the mpi module under `mpirun -n 4`: rank 0 multicasts to ranks 1..3 with
// chain, tree and naive (all acked, data intact); then rank 2 leaves (Finalize: the only
// member failure MPI can report, as Open MPI aborts the job when a rank dies), and a
// multicast to [1, 2, 3] reports position 1 failed while ranks 1 and 3 still get the data
// (in the chain, rank 1 skips rank 2 and forwards to rank 3). MpiTest.VnodeOverMpiMigrates:
// a virtual node resolved, then migrated, over mpi (3 ranks).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"
#include "mpi_run.h"
#include "rt_test_util.h"
#include "ukai/rt/multicast.hpp"
#include "ukai/rt/vnode.hpp"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

#if UKAI_HAVE_MPI

constexpr MulticastKind kKinds[] = {MulticastKind::kChain, MulticastKind::kTree,
                                    MulticastKind::kNaive};

std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 1);
  return v;
}

// A runtime of this rank: mpi bootstrap and module.
Result<std::unique_ptr<Runtime>> MpiRuntime() {
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  return Runtime::Init(o);
}

// Rank 0 multicasts to `ranks` with every kind; returns the results.
std::vector<MulticastResult> MulticastAll(Runtime& r, Multicaster& mc, std::vector<int> ranks) {
  std::vector<Startpoint> group;
  for (int k : ranks) group.push_back(*r.WorldStartpoint(k, 1, 1));
  std::vector<MulticastResult> out;
  for (MulticastKind kind : kKinds) {
    MulticastOptions o;
    o.kind = kind;
    o.chunk_bytes = 16384;
    auto res = mc.Multicast(group, Pattern(100000), o);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (res.ok()) out.push_back(*res);
  }
  return out;
}

TEST(MpiWorker, Multicast) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  const std::vector<uint8_t> expected = Pattern(100000);
  std::atomic<int> good{0}, bad{0}, ready{0};
  auto rt = MpiRuntime();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ASSERT_EQ(r.size(), 4);
  std::unique_ptr<Multicaster> mc;
  ContextOptions co;
  co.id = 1;
  co.init = [&](Context& c) -> Status {
    auto m = Multicaster::Attach(c, [&](const MulticastDelivery& d) {
      ++(std::equal(d.data.begin(), d.data.end(), expected.begin(), expected.end()) ? good : bad);
    });
    if (!m.ok()) return m.status();
    mc = std::move(*m);  // endpoint 1
    auto ep = c.CreateEndpoint();
    if (!ep.ok()) return ep.status();
    return (*ep)
        ->RegisterHandler("ready", HandlerKind::kNonThreaded, [&](Rsr&) { ++ready; })
        .status();
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) {
    for (const MulticastResult& res : MulticastAll(r, *mc, {1, 2, 3})) {
      EXPECT_TRUE(res.all_acked());
    }
  } else {
    ASSERT_TRUE(testing::WaitFor([&] { return good.load() == 3; })) << good.load();
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 2) {
    EXPECT_TRUE(r.Finalize().ok());
    return;
  }
  // Everyone left notices rank 2's goodbye (SendRsr to it then fails) before rank 0 sends.
  ASSERT_TRUE(testing::WaitFor([&] {
    return r.SendRsr(Buffer(), *r.WorldStartpoint(2, 1, 2), HandlerId::Of("ready")).code() ==
           StatusCode::kUnavailable;
  }));
  if (r.rank() != 0) {
    ASSERT_TRUE(r.SendRsr(Buffer(), *r.WorldStartpoint(0, 1, 2), HandlerId::Of("ready")).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return good.load() == 6; })) << good.load();
  } else {
    ASSERT_TRUE(testing::WaitFor([&] { return ready.load() == 2; }));
    for (const MulticastResult& res : MulticastAll(r, *mc, {1, 2, 3})) {
      EXPECT_EQ(res.Failed(), std::vector<size_t>{1});
      EXPECT_EQ(res.members[0].state, MulticastMember::State::kAcked);
      EXPECT_EQ(res.members[2].state, MulticastMember::State::kAcked);
    }
  }
  EXPECT_EQ(bad.load(), 0);
  EXPECT_TRUE(r.Finalize().ok());
}

// Virtual node 7 over mpi: rank 0 sends to it (a miss resolves to rank 1, its host); it
// migrates to rank 2: messages still addressed to rank 1 are redirected and rank 0 rebinds.
TEST(MpiWorker, Vnode) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  auto rt = MpiRuntime();
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ASSERT_EQ(r.size(), 3);
  std::atomic<int> got{0};
  std::unique_ptr<VnodeTable> table;
  Endpoint* app = nullptr;
  ContextOptions co;
  co.id = 1;
  co.init = [&](Context& c) -> Status {
    auto t = VnodeTable::Attach(c, [&](VirtualNodeId) -> Result<VnodeLocation> {
      auto home = r.WorldStartpoint(1, 1, 1);
      if (!home.ok()) return home.status();
      return VnodeLocation(*home);
    });
    if (!t.ok()) return t.status();
    table = std::move(*t);  // endpoint 1
    auto ep = c.CreateEndpoint();
    if (!ep.ok()) return ep.status();
    app = *ep;
    return app->RegisterHandler("app", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).status();
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  if (r.rank() != 0) {
    ASSERT_TRUE(table->Host(7, app).ok());
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(table->Send(7, Buffer(), HandlerId::Of("app")).ok());
  }
  if (r.rank() == 1) {
    ASSERT_TRUE(testing::WaitFor([&] { return got.load() == 3; }));
    ASSERT_TRUE(table->Migrate(7, *r.WorldStartpoint(2, 1, 1)).ok());
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(table->Send(7, Buffer(), HandlerId::Of("app")).ok());
    const RuntimeId host2 = r.WorldStartpoint(2, 1, 1)->runtime();
    ASSERT_TRUE(testing::WaitFor([&] { return table->Lookup(7)->location.runtime() == host2; }));
    ASSERT_TRUE(table->Send(7, Buffer(), HandlerId::Of("app")).ok());
    EXPECT_EQ(table->stats().misses, 1u);
  }
  if (r.rank() == 2) {
    ASSERT_TRUE(testing::WaitFor([&] { return got.load() == 4; }));
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(got.load(), 3);
    EXPECT_GE(table->stats().redirected, 1u);
  }
  EXPECT_TRUE(r.Finalize().ok());
}

TEST(MpiTest, VnodeOverMpiMigrates) { testing::RunUnderMpirun(3, "MpiWorker.Vnode"); }

TEST(MpiTest, MulticastOverMpiWithAMemberThatLeaves) {
  testing::RunUnderMpirun(4, "MpiWorker.Multicast");
}

#else

TEST(MpiTest, MulticastNotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
