// Multicast (chain, tree, naive) over every module of conformance_modules.h: five runtimes
// in this process (0 sends, 1..4 are members), each with one context and a Multicaster;
// multi-process modules also get a forked peer process that is killed. Route shapes and
// argument checks are tested once.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "conformance_modules.h"
#include "rt/multicast/mc_route.h"
#include "rt_test_util.h"
#include "ukai/rt/multicast.hpp"

extern "C" int multicast_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::rt::testing {
namespace {

constexpr MulticastKind kKinds[] = {MulticastKind::kChain, MulticastKind::kTree,
                                    MulticastKind::kNaive};

class MulticastSuite : public ::testing::TestWithParam<ConformanceModule> {
 protected:
  static constexpr int kRuntimes = 5;
  void SetUp() override {
    fabric_ = NewInprocFabric();
    for (int i = 0; i < kRuntimes; ++i) {
      auto rt = Runtime::Init(ModuleOptions(GetParam().name, fabric_));
      ASSERT_TRUE(rt.ok()) << rt.status().ToString();
      rts_.push_back(std::move(*rt));
      auto ctx = rts_[i]->CreateContext({.name = "m" + std::to_string(i)});
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      auto mc = Multicaster::Attach(**ctx, [this, i](const MulticastDelivery& d) {
        std::lock_guard<std::mutex> lock(mu_);
        got_[i].push_back(std::vector<uint8_t>(d.data.begin(), d.data.end()));
        EXPECT_EQ(d.origin, rts_[0]->id());
      });
      ASSERT_TRUE(mc.ok()) << mc.status().ToString();
      mcs_.push_back(std::move(*mc));
    }
  }
  void TearDown() override {
    for (auto& rt : rts_) EXPECT_TRUE(rt->Finalize().ok());
  }
  std::vector<Startpoint> Group(std::initializer_list<int> members) const {
    std::vector<Startpoint> g;
    for (int m : members) g.push_back(mcs_[m]->startpoint());
    return g;
  }
  size_t Got(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return got_[i].size();
  }
  std::vector<uint8_t> Last(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return got_[i].empty() ? std::vector<uint8_t>() : got_[i].back();
  }
  static std::vector<uint8_t> Pattern(size_t n, int seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
    return v;
  }

  std::shared_ptr<InprocFabric> fabric_;
  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<std::unique_ptr<Multicaster>> mcs_;
  std::mutex mu_;
  std::map<int, std::vector<std::vector<uint8_t>>> got_;
};

// Every member gets every message exactly once and intact; the chunks are forwarded one by
// one; and the acks are combined: the sender receives one ack message per multicast for a
// chain, one per child of the root for a tree (fanout 2: 2), one per member for naive.
TEST_P(MulticastSuite, DeliversToEveryMemberAndCombinesAcks) {
  const std::vector<Startpoint> group = Group({1, 2, 3, 4});
  size_t expected = 0;
  for (MulticastKind kind : kKinds) {
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{100000}}) {
      SCOPED_TRACE(std::string(MulticastKindName(kind)) + " " + std::to_string(bytes));
      const std::vector<uint8_t> data = Pattern(bytes, int(kind));
      const uint64_t acks_before = mcs_[0]->stats().acks_received;
      const uint64_t fwd_before = mcs_[1]->stats().chunks_forwarded;
      MulticastOptions o;
      o.kind = kind;
      o.chunk_bytes = 16384;  // 100000 bytes = 7 chunks
      auto r = mcs_[0]->Multicast(group, data, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ++expected;
      ASSERT_EQ(r->members.size(), 4u);
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(r->members[i].state, MulticastMember::State::kAcked)
            << i << ": " << r->members[i].status.ToString();
      }
      EXPECT_TRUE(r->all_acked());
      for (int m = 1; m <= 4; ++m) {
        ASSERT_TRUE(WaitFor([&] { return Got(m) == expected; })) << m;
        EXPECT_EQ(Last(m), data) << "member " << m;
      }
      const uint64_t acks = mcs_[0]->stats().acks_received - acks_before;
      EXPECT_EQ(acks, kind == MulticastKind::kChain ? 1u : kind == MulticastKind::kTree ? 2u : 4u);
      // Member 1 (position 0) forwards each chunk to its next hop: chain (position 1) and
      // tree (its children, positions 2 and 3); naive members forward nothing.
      // Member 1 counts a chunk after its send returns, which (under sim) can be after the
      // chain's ack reached the sender: wait for the count.
      const uint64_t chunks = bytes == 0 ? 1 : (bytes + 16383) / 16384;
      const uint64_t want = kind == MulticastKind::kChain  ? chunks
                            : kind == MulticastKind::kTree ? 2 * chunks
                                                           : 0u;
      WaitFor([&] { return mcs_[1]->stats().chunks_forwarded - fwd_before >= want; });
      EXPECT_EQ(mcs_[1]->stats().chunks_forwarded - fwd_before, want);
    }
  }
  for (int m = 0; m < kRuntimes; ++m) EXPECT_EQ(mcs_[m]->stats().rejected, 0u);
}

TEST_P(MulticastSuite, WithoutAcksDeliversAndReturnsUnconfirmed) {
  for (MulticastKind kind : kKinds) {
    MulticastOptions o;
    o.kind = kind;
    o.ack = false;
    const std::vector<uint8_t> data = Pattern(5000, 3);
    auto r = mcs_[0]->Multicast(Group({1, 2, 3, 4}), data, o);
    ASSERT_TRUE(r.ok());
    for (const MulticastMember& m : r->members) {
      EXPECT_EQ(m.state, MulticastMember::State::kUnconfirmed);
    }
  }
  for (int m = 1; m <= 4; ++m) ASSERT_TRUE(WaitFor([&] { return Got(m) == 3; })) << m;
  EXPECT_EQ(mcs_[0]->stats().acks_received, 0u);
}

// A member whose runtime is gone (finalized: it left) is reported failed by the sender; the
// others still get the data: its predecessor (chain) or parent (tree) skips it, forwarding
// to the members after it or to its children.
TEST_P(MulticastSuite, DeadMemberIsReportedAndTheOthersStillGetTheData) {
  ASSERT_TRUE(rts_[2]->Finalize().ok());
  size_t expected = 0;
  for (MulticastKind kind : kKinds) {
    SCOPED_TRACE(MulticastKindName(kind));
    // Tree, fanout 2: position 0 has children 2 and 3; chain: position 1 is in the middle.
    const std::vector<Startpoint> group =
        kind == MulticastKind::kTree ? Group({2, 1, 3, 4}) : Group({1, 2, 3, 4});
    const size_t dead = kind == MulticastKind::kTree ? 0 : 1;
    MulticastOptions o;
    o.kind = kind;
    o.chunk_bytes = 4096;
    const std::vector<uint8_t> data = Pattern(30000, 9);
    auto r = mcs_[0]->Multicast(group, data, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->Failed(), std::vector<size_t>{dead});
    EXPECT_FALSE(r->members[dead].status.ok());
    EXPECT_EQ(r->members[dead].status.message().find("no ack within"), std::string::npos)
        << "learnt from the failed send, not from the timeout: "
        << r->members[dead].status.ToString();
    ++expected;
    for (int m : {1, 3, 4}) {
      ASSERT_TRUE(WaitFor([&] { return Got(m) == expected; })) << m;
      EXPECT_EQ(Last(m), data);
    }
  }
}

// A member process killed with SIGKILL (tcp, shm) is a failed member too.
TEST_P(MulticastSuite, KilledMemberProcessIsReported) {
  if (!GetParam().multi_process) GTEST_SKIP() << "single-process module";
  PeerProcess peer({std::string("--ukai-modules=") + GetParam().name, "--ukai-bootstrap=single",
                    "--ukai-param=tcp.listen=127.0.0.1:0"});
  ASSERT_TRUE(peer.startpoint().valid()) << peer.error();
  peer.Kill();
  std::vector<Startpoint> group = Group({1, 3});
  group.insert(group.begin() + 1, peer.startpoint());
  size_t expected = 0;
  for (MulticastKind kind : kKinds) {
    MulticastOptions o;
    o.kind = kind;
    o.timeout = std::chrono::seconds(10);
    const std::vector<uint8_t> data = Pattern(1000, 1);
    auto r = mcs_[0]->Multicast(group, data, o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->Failed(), std::vector<size_t>{1}) << MulticastKindName(kind);
    ++expected;
    for (int m : {1, 3}) ASSERT_TRUE(WaitFor([&] { return Got(m) == expected; })) << m;
  }
}

// A member that takes the data but dies before forwarding (here: an endpoint that swallows
// the chunks, as a crashed member looks to the others) breaks the chain, or its subtree:
// after the timeout the sender re-sends directly to every member it has not heard of; they
// get the data (once: member 1, whose ack was lost with the chain, is not given it twice)
// and ack; the swallower is reported failed.
TEST_P(MulticastSuite, MemberDyingBeforeForwardingIsRepairedBySender) {
  auto ep = rts_[2]->FindContext(1)->CreateEndpoint();
  ASSERT_TRUE(ep.ok());
  std::atomic<int> swallowed{0};
  ASSERT_TRUE(
      (*ep)
          ->RegisterHandler("ukai.mc.data", HandlerKind::kNonThreaded, [&](Rsr&) { ++swallowed; })
          .ok());
  const Startpoint sink = (*ep)->MakeStartpoint();
  size_t expected = 0;
  for (MulticastKind kind : {MulticastKind::kChain, MulticastKind::kTree}) {
    SCOPED_TRACE(MulticastKindName(kind));
    std::vector<Startpoint> group = Group({1, 3, 4});
    // Chain: the sink is position 1 (after member 1); tree: position 0 (parent of 3 and 4).
    group.insert(group.begin() + (kind == MulticastKind::kChain ? 1 : 0), sink);
    const size_t dead = kind == MulticastKind::kChain ? 1 : 0;
    MulticastOptions o;
    o.kind = kind;
    o.chunk_bytes = 1000;
    o.timeout = std::chrono::milliseconds(200);
    const std::vector<uint8_t> data = Pattern(5000, 4);
    auto r = mcs_[0]->Multicast(group, data, o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->Failed(), std::vector<size_t>{dead});
    EXPECT_NE(r->members[dead].status.message().find("after a direct re-send"), std::string::npos)
        << r->members[dead].status.ToString();
    ++expected;
    for (int m : {1, 3, 4}) {
      ASSERT_TRUE(WaitFor([&] { return Got(m) == expected; })) << m;
      EXPECT_EQ(Last(m), data);
    }
  }
  EXPECT_GT(swallowed.load(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int m : {1, 3, 4}) EXPECT_EQ(Got(m), 2u) << "delivered twice: " << m;
}

// A live member without a Multicaster never acks: after the timeout it is reported failed
// with "no ack within"; the others ack (naive: nobody's acks pass through it).
TEST_P(MulticastSuite, SilentMemberTimesOut) {
  auto ep = rts_[2]->FindContext(1)->CreateEndpoint();
  ASSERT_TRUE(ep.ok());
  std::vector<Startpoint> group = Group({1, 3, 4});
  group.insert(group.begin() + 1, (*ep)->MakeStartpoint());
  MulticastOptions o;
  o.kind = MulticastKind::kNaive;
  o.timeout = std::chrono::milliseconds(300);
  const std::vector<uint8_t> data = Pattern(10, 1);
  auto r = mcs_[0]->Multicast(group, data, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Failed(), std::vector<size_t>{1});
  EXPECT_NE(r->members[1].status.message().find("no ack within 300 ms"), std::string::npos)
      << r->members[1].status.ToString();
  for (size_t i : {0, 2, 3}) EXPECT_EQ(r->members[i].state, MulticastMember::State::kAcked);
}

INSTANTIATE_TEST_SUITE_P(Modules, MulticastSuite, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MulticastRoute, ShapesAndReplacements) {
  using internal::Route;
  using internal::SplitRoute;
  Route all;
  for (uint32_t i = 0; i < 7; ++i) all.push_back({i, Startpoint()});
  auto positions = [](const Route& r) {
    std::vector<uint32_t> v;
    for (const auto& e : r) v.push_back(e.index);
    return v;
  };
  auto chain = SplitRoute(MulticastKind::kChain, 2, all);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].entry.index, 0u);
  EXPECT_EQ(positions(chain[0].route), (std::vector<uint32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(SplitRoute(MulticastKind::kNaive, 2, all).size(), 7u);
  // Binary tree: root's children 0, 1; 0's subtree {2, 3, 6}... heap: 0 -> 2, 3; 1 -> 4, 5;
  // 2 -> 6.
  auto tree = SplitRoute(MulticastKind::kTree, 2, all);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(positions(tree[0].route), (std::vector<uint32_t>{2, 3, 6}));
  EXPECT_EQ(positions(tree[1].route), (std::vector<uint32_t>{4, 5}));
  // Node 0 failed: its route splits into its children 2 (with 6) and 3.
  auto adopted = SplitRoute(MulticastKind::kTree, 2, tree[0].route);
  ASSERT_EQ(adopted.size(), 2u);
  EXPECT_EQ(adopted[0].entry.index, 2u);
  EXPECT_EQ(positions(adopted[0].route), (std::vector<uint32_t>{6}));
  EXPECT_EQ(adopted[1].entry.index, 3u);
  // Fanout 3: position 0 has children 3, 4, 5.
  auto t3 = SplitRoute(MulticastKind::kTree, 3, all);
  ASSERT_EQ(t3.size(), 3u);
  EXPECT_EQ(positions(t3[0].route), (std::vector<uint32_t>{3, 4, 5}));
}

TEST(MulticastApi, BadArgumentsAndMalformedMessages) {
  auto fabric = NewInprocFabric();
  auto rt = Runtime::Init(ModuleOptions("inproc", fabric));
  ASSERT_TRUE(rt.ok());
  auto c1 = (*rt)->CreateContext({.name = "a"});
  auto c2 = (*rt)->CreateContext({.name = "b"});
  ASSERT_TRUE(c1.ok() && c2.ok());
  auto a = Multicaster::Attach(**c1, nullptr);
  auto b = Multicaster::Attach(**c2, nullptr);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<uint8_t> data(10, 1);
  const Startpoint sb = (*b)->startpoint();
  auto code = [&](std::vector<Startpoint> g, MulticastOptions o) {
    return (*a)->Multicast(g, data, o).status().code();
  };
  EXPECT_EQ(code({sb, sb}, {}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({Startpoint()}, {}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({(*a)->startpoint()}, {}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({sb}, {.chunk_bytes = 0}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({sb}, {.fanout = 0}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({sb}, {.timeout = std::chrono::milliseconds(0)}), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseMulticastKind("star").ok());
  EXPECT_EQ(*ParseMulticastKind("tree"), MulticastKind::kTree);
  auto empty = (*a)->Multicast({}, data, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->members.empty());
  // Garbage, a chunk of an unknown message, a bad ack: dropped and counted.
  Buffer junk;
  junk.PutString("junk");
  ASSERT_TRUE((*rt)->SendRsr(junk, sb, internal::kMcDataHandler).ok());
  ASSERT_TRUE((*rt)->SendRsr(junk, sb, internal::kMcAckHandler).ok());
  Buffer orphan;
  internal::DataHeader h;
  h.flags = internal::kMcLast;
  h.key = {1, 1, 1};
  h.total = 4;
  internal::PutDataHeader(orphan, h);
  orphan.PutBytes(std::vector<uint8_t>(4, 0));
  ASSERT_TRUE((*rt)->SendRsr(std::move(orphan), sb, internal::kMcDataHandler).ok());
  ASSERT_TRUE(WaitFor([&] { return (*b)->stats().rejected == 3; }));
  // Still works afterwards.
  auto ok = (*a)->Multicast(std::vector<Startpoint>{sb}, data, {});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->all_acked());
  EXPECT_EQ((*b)->stats().delivered, 1u);
  EXPECT_TRUE((*rt)->Finalize().ok());
}

// The fuzz entry point (fuzz/multicast_fuzz.cc) on every truncation and 3000 seeded random
// mutations of a valid first+last chunk of an acked chain (under ASan in the sanitizer build).
TEST(MulticastFuzzReplay, TruncationsAndMutationsOfAValidMessage) {
  auto table = std::make_shared<DescriptorTable>();
  table->runtime = 42;
  table->entries.push_back({"tcp", {1, 2, 3}});
  internal::DataHeader h;
  h.flags = internal::kMcFirst | internal::kMcLast;
  h.key = {42, 1, 7};
  h.total = 3;
  h.ack = true;
  h.fanout = 2;
  h.chunk = 3;
  h.reply_to = Startpoint(table, 1, 1);
  h.route = {{1, Startpoint(table, 2, 1)}, {2, Startpoint(table, 3, 1)}};
  h.acks = {{0, Status::Ok()}, {5, Status::Unavailable("gone")}};
  Buffer b;
  internal::PutDataHeader(b, h);
  b.PutBytes(std::vector<uint8_t>{9, 8, 7});
  const std::vector<uint8_t> valid(b.payload().begin(), b.payload().end());
  Reader r(valid);
  auto back = internal::GetData(r);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->route.size(), 2u);
  auto acks = internal::GetAcks(r);
  ASSERT_TRUE(acks.ok());
  EXPECT_EQ((*acks)[1].status.code(), StatusCode::kUnavailable);
  for (size_t n = 0; n <= valid.size(); ++n) multicast_fuzz_TestOneInput(valid.data(), n);
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> m = valid;
    for (int k = 0; k < 1 + i % 4; ++k) m[rng() % m.size()] = static_cast<uint8_t>(rng());
    m.resize(rng() % (m.size() + 1));
    multicast_fuzz_TestOneInput(m.data(), m.size());
  }
}

}  // namespace
}  // namespace ukai::rt::testing
