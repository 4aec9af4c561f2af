// Groups and collectives (include/ukai/rt/group.hpp) over inproc, several runtimes in this
// process: several non-blocking collectives in flight on two groups at once, Split, bitwise
// determinism of floating-point reductions, the relay algorithms' K, point-to-point Send/Recv
// (direct and relayed), a member that leaves or fails during an allreduce (everyone else
// gets kUnavailable naming it, then Shrink), bad arguments and mismatched calls, forced
// algorithm choices, and the group creation errors.
#include <cmath>
#include <random>
#include <thread>

#include "coll_test_util.h"
#include "rt/coll/coll_wire.h"
#include "rt/coll/group_state.h"
#include "rt/coll/hub.h"

namespace ukai::rt {
namespace {

using testing::CollWorld;

constexpr auto kWait = std::chrono::seconds(60);

std::vector<double> Doubles(int r, size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed * 1000 + static_cast<uint64_t>(r));
  std::uniform_real_distribution<double> d(-1e6, 1e6);
  std::vector<double> v(n);
  for (double& x : v) x = d(gen) * std::pow(10.0, static_cast<int>(gen() % 12) - 6);
  return v;
}

TEST(Coll, ManyNonBlockingInFlightOnTwoGroups) {
  CollWorld w(4, "inproc");
  ASSERT_TRUE(w.ok());
  std::vector<std::unique_ptr<Group>> second(4);
  w.Run([&](int r, Group*) {  // a second group over the same contexts, told apart by its tag
    GroupOptions o;
    o.tag = 1;
    auto g = Group::FromStartpoints(w.context(r), w.members(), o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    second[r] = std::move(*g);
  });
  w.Run([&](int r, Group* g) {
    Group& h = *second[r];
    constexpr int kRounds = 20;
    std::vector<std::vector<int64_t>> in(kRounds), out_a(kRounds), out_b(kRounds), bc(kRounds);
    std::vector<std::vector<int32_t>> a2a_in(kRounds), a2a_out(kRounds);
    std::vector<CollRequest> reqs;
    for (int k = 0; k < kRounds; ++k) {
      in[k].assign(100 + k, r + k);
      out_a[k].assign(in[k].size(), 0);
      out_b[k].assign(in[k].size(), 0);
      bc[k].assign(5000, r == k % 4 ? k : -1);
      a2a_in[k].resize(4 * 3);
      for (int i = 0; i < 12; ++i) a2a_in[k][i] = r * 100 + i + k;
      a2a_out[k].assign(12, 0);
      CollOptions ring;
      ring.algorithm = Algorithm::kRing;
      reqs.push_back(g->IAllreduce(in[k], out_a[k], ReduceOp::kSum));
      reqs.push_back(h.IAllreduce(in[k], out_b[k], ReduceOp::kMax, ring));
      reqs.push_back(g->IBroadcast(bc[k], k % 4));
      reqs.push_back(h.IAlltoall(a2a_in[k], a2a_out[k]));
    }
    for (auto& q : reqs) ASSERT_TRUE(q.WaitFor(kWait).ok()) << q.status().ToString();
    for (int k = 0; k < kRounds; ++k) {
      for (size_t i = 0; i < in[k].size(); ++i) {
        ASSERT_EQ(out_a[k][i], 0 + 1 + 2 + 3 + 4 * k);
        ASSERT_EQ(out_b[k][i], 3 + k);
      }
      for (int64_t v : bc[k]) ASSERT_EQ(v, k);
      for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 3; ++i) ASSERT_EQ(a2a_out[k][j * 3 + i], j * 100 + r * 3 + i + k);
      }
    }
  });
}

TEST(Coll, TestPollsUntilDone) {
  CollWorld w(3, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    std::vector<double> in(1000, r + 1.0), out(1000);
    CollRequest q = g->IAllreduce(in, out, ReduceOp::kSum);
    ASSERT_TRUE(q.valid());
    while (!q.Test()) {
    }
    ASSERT_TRUE(q.status().ok()) << q.status().ToString();
    EXPECT_EQ(out[999], 6.0);
  });
}

TEST(Coll, SplitByColourAndKey) {
  CollWorld w(5, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    // colours: 0 1 0 1 undefined; keys reverse the order.
    auto sub = g->Split(r == 4 ? Group::kUndefinedColour : r % 2, -r);
    ASSERT_TRUE(sub.ok()) << sub.status().ToString();
    auto again = g->Split(0, r);  // a second split of the same group: another id
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ((*again)->size(), 5);
    EXPECT_EQ((*again)->rank(), r);
    if (r == 4) {
      EXPECT_EQ(*sub, nullptr);
      return;
    }
    Group& s = **sub;
    EXPECT_NE((*again)->id(), s.id());
    EXPECT_EQ(s.size(), 2);
    EXPECT_EQ(s.rank(), r < 2 ? 1 : 0);  // key -r: the higher old rank comes first
    int32_t mine = r, sum = 0;
    ASSERT_TRUE(s.Allreduce(ConstView(&mine, 1, DataType::kInt32),
                            MutView(&sum, 1, DataType::kInt32), ReduceOp::kSum)
                    .ok());
    EXPECT_EQ(sum, r % 2 == 0 ? 0 + 2 : 1 + 3);
    std::vector<int32_t> order(2);
    ASSERT_TRUE(s.Allgather(ConstView(&mine, 1, DataType::kInt32), order).ok());
    EXPECT_EQ(order, (r % 2 == 0 ? std::vector<int32_t>{2, 0} : std::vector<int32_t>{3, 1}));
  });
}

// Every member gets bitwise the same floating-point result, and a second run the same bits.
// direct and relay sum serially (x0 + x1 + ...), chain from the far end (x0 + (x1 + ...)).
TEST(Coll, FloatingPointReductionsAreBitwiseDeterministic) {
  constexpr int kN = 5;
  constexpr size_t kCount = 3001;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  std::vector<std::vector<double>> inputs;
  for (int r = 0; r < kN; ++r) inputs.push_back(Doubles(r, kCount, 42));
  std::vector<double> left(kCount), right(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    double l = inputs[0][i], rr = inputs[kN - 1][i];
    for (int r = 1; r < kN; ++r) l += inputs[r][i];
    for (int r = kN - 2; r >= 0; --r) rr = inputs[r][i] + rr;
    left[i] = l;
    right[i] = rr;
  }
  for (Algorithm alg : AlgorithmsFor(Collective::kAllreduce)) {
    std::vector<std::vector<double>> first(kN), second(kN);
    for (auto* runs : {&first, &second}) {
      w.Run([&](int r, Group* g) {
        CollOptions o;
        o.algorithm = alg;
        o.chunk_bytes = 4096;
        (*runs)[r].assign(kCount, 0);
        ASSERT_TRUE(g->Allreduce(inputs[r], (*runs)[r], ReduceOp::kSum, o).ok());
      });
    }
    for (int r = 0; r < kN; ++r) {
      ASSERT_EQ(std::memcmp(first[r].data(), first[0].data(), kCount * 8), 0)
          << AlgorithmName(alg) << ": rank " << r << " differs from rank 0";
      ASSERT_EQ(std::memcmp(second[r].data(), first[0].data(), kCount * 8), 0)
          << AlgorithmName(alg) << ": the second run differs";
    }
    if (alg == Algorithm::kDirect || alg == Algorithm::kRelay) {
      EXPECT_EQ(std::memcmp(first[0].data(), left.data(), kCount * 8), 0)
          << AlgorithmName(alg) << " is not the serial sum";
    }
    for (size_t i = 0; i < kCount; ++i) {  // the others: close to the serial sum
      double mag = 0;
      for (int r = 0; r < kN; ++r) mag += std::fabs(inputs[r][i]);
      ASSERT_LE(std::fabs(first[0][i] - left[i]), 4 * kN * 1.2e-16 * mag) << AlgorithmName(alg);
    }
  }
  std::vector<double> chain(kCount);
  w.Run([&](int r, Group* g) {  // reduce, chain, root 0: the right fold
    CollOptions o;
    o.algorithm = Algorithm::kChain;
    std::vector<double> out(r == 0 ? kCount : 0);
    ASSERT_TRUE(g->Reduce(inputs[r], out, ReduceOp::kSum, 0, o).ok());
    if (r == 0) chain = out;
  });
  EXPECT_EQ(std::memcmp(chain.data(), right.data(), kCount * 8), 0);
}

TEST(Coll, RelayAlgorithmsTakeAnyK) {
  constexpr int kN = 5;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    for (int k = 1; k <= kN; ++k) {
      CollOptions o;
      o.algorithm = Algorithm::kRelay;
      o.relays = k;
      o.chunk_bytes = 512;
      std::vector<int32_t> buf(10007, r == 2 ? 5 : 0);
      ASSERT_TRUE(g->Broadcast(buf, 2, o).ok()) << "K " << k;
      for (int32_t v : buf) ASSERT_EQ(v, 5);
      std::vector<int64_t> in(3001, r + 1), out(3001, 0);
      ASSERT_TRUE(g->Allreduce(in, out, ReduceOp::kSum, o).ok()) << "K " << k;
      for (int64_t v : out) ASSERT_EQ(v, 15);
      std::vector<int64_t> red(r == 3 ? 3001 : 0);
      ASSERT_TRUE(g->Reduce(in, red, ReduceOp::kProd, 3, o).ok()) << "K " << k;
      if (r == 3) {
        for (int64_t v : red) ASSERT_EQ(v, 120);
      }
    }
    CollOptions bad;
    bad.algorithm = Algorithm::kRelay;
    bad.relays = kN + 1;
    std::vector<int32_t> buf(10);
    const Status st = g->Broadcast(buf, 0, bad);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("relays K = 6 is out of range for broadcast over 5 members"),
              std::string::npos)
        << st.ToString();
  });
}

// Large parts: the relays' chunks (64 KiB by default) go by rendezvous, in background steps.
TEST(Coll, RelayWithRendezvousChunks) {
  constexpr int kN = 5;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    CollOptions o;
    o.algorithm = Algorithm::kRelay;
    std::vector<int64_t> buf(300000, r == 0 ? 9 : 0);
    const Status bst = g->Broadcast(buf, 0, o);
    ASSERT_TRUE(bst.ok()) << bst.ToString();
    for (int64_t v : buf) ASSERT_EQ(v, 9);
    std::vector<double> in(300000, r + 1.0), out(300000);
    ASSERT_TRUE(g->Allreduce(in, out, ReduceOp::kSum, o).ok());
    for (double v : out) ASSERT_EQ(v, 15.0);
    std::vector<double> red(r == 4 ? 300000 : 0);
    ASSERT_TRUE(g->Reduce(in, red, ReduceOp::kSum, 4, o).ok());
    if (r == 4) {
      for (double v : red) ASSERT_EQ(v, 15.0);
    }
  });
}

// Relay allreduce with each part in one piece (chunk_bytes at least the part, as the
// selection table's rows for 4 members over shm set it): 3-5 members, odd counts, three
// types; doubles are bitwise the serial sum (the relays combine in rank order).
TEST(Coll, RelayAllreduceInWholeParts) {
  for (int n : {3, 4, 5}) {
    CollWorld w(n, "inproc");
    ASSERT_TRUE(w.ok());
    w.Run([&](int r, Group* g) {
      CollOptions o;
      o.algorithm = Algorithm::kRelay;
      o.chunk_bytes = size_t{1} << 20;
      for (size_t count : {size_t{1}, size_t{7}, size_t{4097}, size_t{300001}}) {
        SCOPED_TRACE("n " + std::to_string(n) + " count " + std::to_string(count));
        std::vector<int32_t> i32(count), o32(count);
        std::vector<int64_t> i64(count), o64(count);
        for (size_t i = 0; i < count; ++i) {
          i32[i] = static_cast<int32_t>(r * 7 + i % 13);
          i64[i] = static_cast<int64_t>((r * 1000003 + i) % 977);
        }
        const std::vector<double> id = Doubles(r, count, 5);
        std::vector<double> od(count);
        ASSERT_TRUE(g->Allreduce(i32, o32, ReduceOp::kSum, o).ok());
        ASSERT_TRUE(g->Allreduce(i64, o64, ReduceOp::kMax, o).ok());
        ASSERT_TRUE(g->Allreduce(id, od, ReduceOp::kSum, o).ok());
        std::vector<std::vector<double>> all(n);
        for (int m = 0; m < n; ++m) all[m] = Doubles(m, count, 5);
        for (size_t i = 0; i < count; ++i) {
          int32_t sum = 0;
          int64_t most = 0;
          double serial = all[0][i];
          for (int m = 0; m < n; ++m) {
            sum += static_cast<int32_t>(m * 7 + i % 13);
            most = std::max<int64_t>(most, static_cast<int64_t>((m * 1000003 + i) % 977));
            if (m > 0) serial += all[m][i];
          }
          ASSERT_EQ(o32[i], sum) << i;
          ASSERT_EQ(o64[i], most) << i;
          ASSERT_EQ(od[i], serial) << i;  // bitwise
        }
      }
    });
  }
}

// Combining steps announced before their turn are read at once (ReadEarly) and combined in
// turn: with rank 0 late, every relay's parts from ranks 2-4 come first; the results stay
// bitwise the serial sum, and the early reads happened.
TEST(Coll, AnnouncedPartsAreReadEarlyAndCombinedInOrder) {
  constexpr int kN = 5;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  constexpr size_t kCount = 200001;
  std::vector<std::vector<double>> all(kN);
  for (int m = 0; m < kN; ++m) all[m] = Doubles(m, kCount, 9);
  w.Run([&](int r, Group* g) {
    CollOptions o;
    o.algorithm = Algorithm::kRelay;
    o.chunk_bytes = size_t{1} << 20;
    if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<double> out(kCount);
    ASSERT_TRUE(g->Allreduce(all[r], out, ReduceOp::kSum, o).ok());
    for (size_t i = 0; i < kCount; ++i) {
      double serial = all[0][i];
      for (int m = 1; m < kN; ++m) serial += all[m][i];
      ASSERT_EQ(out[i], serial) << i;
    }
  });
  uint64_t early = 0;
  for (int r = 0; r < kN; ++r) early += w.group(r).state()->counters().early_reads.load();
  EXPECT_GE(early, 4u);  // relays 1-4 each got parts from ranks 2-4 before rank 0's
}

// Over shm, 4 members' automatic 1 MiB allreduce takes the table's relay row with its chunk
// size: each part goes in one piece, so a member announces 3 parts and 3 results (with the
// default 64 KiB chunks: 4 chunks each, 24).
TEST(Coll, AutoAllreduceOverShmTakesTheRowsChunkSize) {
  CollWorld w(4, "shm");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    ASSERT_EQ(g->module(), "shm");
    EXPECT_EQ(g->Select(Collective::kAllreduce, size_t{1} << 20), Algorithm::kRelay);
    std::vector<double> in(size_t{1} << 17, r + 1.0), out(in.size());
    const uint64_t before = g->state()->counters().announced.load();
    ASSERT_TRUE(g->Allreduce(in, out, ReduceOp::kSum).ok());
    EXPECT_EQ(g->state()->counters().announced.load() - before, 6u);
    for (double v : out) ASSERT_EQ(v, 10.0);
  });
}

// An alltoall's blocks below GroupOptions::exchange_eager_bytes go at once (no
// announcement), from it on by rendezvous; a broadcast of the same size is announced; with
// exchange_eager_bytes 0 the alltoall is too. Back-to-back alltoalls of both kinds (pairwise,
// direct) give every block where it belongs.
uint64_t Announced(CollWorld& w, int r) { return w.group(r).state()->counters().announced.load(); }

void AlltoallRounds(CollWorld& w, size_t block, Algorithm alg, int rounds) {
  const int n = w.size();
  w.Run([&](int r, Group* g) {
    CollOptions o;
    o.algorithm = alg;
    for (int k = 0; k < rounds; ++k) {
      std::vector<int64_t> in(static_cast<size_t>(n) * block), out(in.size(), -1);
      for (size_t i = 0; i < in.size(); ++i) in[i] = (k * 1000 + r) * 1000003LL + i;
      ASSERT_TRUE(g->Alltoall(in, out, o).ok());
      for (int from = 0; from < n; ++from) {
        for (size_t i = 0; i < block; ++i) {  // block `r` of member `from`'s input
          const size_t at = static_cast<size_t>(from) * block + i;
          ASSERT_EQ(out[at], (k * 1000 + from) * 1000003LL + static_cast<size_t>(r) * block + i);
        }
      }
    }
  });
}

TEST(Coll, AlltoallBlocksBelowTheExchangeLimitGoAtOnce) {
  constexpr int kN = 3;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  const size_t block = 8192;  // int64: 64 KiB per pair, above rendezvous_bytes (32 KiB)
  for (Algorithm alg : {Algorithm::kPairwise, Algorithm::kDirect}) {
    AlltoallRounds(w, block, alg, 5);
  }
  for (int r = 0; r < kN; ++r) EXPECT_EQ(Announced(w, r), 0u) << "rank " << r;
  AlltoallRounds(w, (size_t{128} << 10) / 8, Algorithm::kPairwise, 2);  // at the limit
  for (int r = 0; r < kN; ++r) EXPECT_EQ(Announced(w, r), 2u * (kN - 1)) << "rank " << r;
  w.Run([&](int r, Group* g) {
    std::vector<int64_t> buf(block, r == 0 ? 4 : 0);
    ASSERT_TRUE(g->Broadcast(buf, 0, CollOptions{.algorithm = Algorithm::kDirect}).ok());
    for (int64_t v : buf) ASSERT_EQ(v, 4);
  });
  EXPECT_EQ(Announced(w, 0), 2u * (kN - 1) + (kN - 1));

  GroupOptions off;
  off.exchange_eager_bytes = 0;
  CollWorld announced(kN, "inproc", off);
  ASSERT_TRUE(announced.ok());
  AlltoallRounds(announced, block, Algorithm::kPairwise, 3);
  for (int r = 0; r < kN; ++r) EXPECT_EQ(Announced(announced, r), 3u * (kN - 1)) << "rank " << r;
}

TEST(Coll, SendRecvDirectAndRelayed) {
  constexpr int kN = 5;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    // Ring of messages: r sends to r + 1 with every K, then a zero-length one, tagged.
    const int next = (r + 1) % kN, prev = (r + kN - 1) % kN;
    for (int k = 0; k <= kN - 2; ++k) {
      CollOptions o;
      o.algorithm = k == 0 ? Algorithm::kDirect : Algorithm::kRelay;
      o.relays = k;
      std::vector<uint64_t> out(100003);
      for (size_t i = 0; i < out.size(); ++i) out[i] = r * 1000000 + i + k;
      std::vector<uint64_t> in(out.size(), 0);
      CollRequest recv = g->IRecv(in, prev, 7);
      ASSERT_TRUE(g->Send(out, next, 7, o).ok());
      ASSERT_TRUE(recv.WaitFor(kWait).ok()) << recv.status().ToString();
      for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(in[i], prev * 1000000 + i + k);
    }
    // Matching by tag and order: two tags sent in one order, received in the other.
    std::vector<int32_t> a{1, 2, 3}, b{4, 5}, ra(3), rb(2);
    ASSERT_TRUE(g->Send(a, next, 1).ok());
    ASSERT_TRUE(g->Send(b, next, 2).ok());
    ASSERT_TRUE(g->Recv(rb, prev, 2).ok());
    ASSERT_TRUE(g->Recv(ra, prev, 1).ok());
    EXPECT_EQ(ra, a);
    EXPECT_EQ(rb, b);
    std::vector<double> none;
    ASSERT_TRUE(g->Send(none, next, 3).ok());
    ASSERT_TRUE(g->Recv(MutView(nullptr, 0, DataType::kDouble), prev, 3).ok());
    // A large message whose Recv comes after it was announced (the receiver then reads it
    // from the sender's memory or asks for it).
    std::vector<double> big(50000, r + 0.5), big_in(50000);
    CollRequest big_send = g->ISend(big, next, 5);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(g->Recv(big_in, prev, 5).ok());
    ASSERT_TRUE(big_send.WaitFor(kWait).ok());
    EXPECT_EQ(big_in[49999], prev + 0.5);
    std::vector<double> wrong(40000);
    CollRequest big_again = g->ISend(big, next, 6);
    const Status large_st = g->Recv(wrong, prev, 6);
    EXPECT_NE(large_st.message().find("the message has 400000 bytes, the buffer 320000"),
              std::string::npos)
        << large_st.ToString();
    EXPECT_TRUE(big_again.WaitFor(kWait).ok());
    // A receive buffer of the wrong size is an error naming both sizes.
    std::vector<int32_t> small(2);
    ASSERT_TRUE(g->Send(a, next, 4).ok());
    const Status st = g->Recv(small, prev, 4);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("the message has 12 bytes, the buffer 8"), std::string::npos)
        << st.ToString();
  });
}

TEST(Coll, BadArgumentsAreClearErrorsForEveryMember) {
  CollWorld w(3, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    std::vector<int32_t> in(4, 1), out(4), small(3);
    // Only rank 1 passes a receive buffer too small: it gets the error, the others the abort.
    Status st = g->Allreduce(in, r == 1 ? std::span<int32_t>(small) : std::span<int32_t>(out),
                             ReduceOp::kSum);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    if (r == 1) {
      EXPECT_NE(st.message().find("Group::Allreduce: recv has 3 elements, needs at least 4"),
                std::string::npos)
          << st.ToString();
    } else {
      EXPECT_NE(st.message().find("rank 1 ended collective #"), std::string::npos) << st.ToString();
    }
    // Counts that differ across ranks: detected, named, no hang.
    std::vector<int32_t> mine(r == 2 ? 5 : 4, 1), res(5);
    st = g->Allreduce(mine, res, ReduceOp::kSum);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("mismatched collective"), std::string::npos) << st.ToString();
    // Every member called it wrong alike: each gets its own error.
    std::vector<float> f(4, 1.0f), fo(4);
    st = g->Allreduce(f, fo, ReduceOp::kBxor);
    EXPECT_NE(st.message().find("reduction bxor is not defined on float"), std::string::npos)
        << st.ToString();
    st = g->Allreduce(in, out, static_cast<ReduceOp>(99));
    EXPECT_NE(st.message().find("unknown reduction operation 99"), std::string::npos)
        << st.ToString();
    st = g->Broadcast(in, 3);
    EXPECT_NE(st.message().find("root 3 is not a rank of this group of 3"), std::string::npos)
        << st.ToString();
    std::vector<int32_t> a2a(4), a2a_out(4);
    st = g->Alltoall(a2a, a2a_out);
    EXPECT_NE(st.message().find("send has 4 elements, not a multiple of the group size 3"),
              std::string::npos)
        << st.ToString();
    std::vector<double> d(12);
    st = g->Allgather(in, d);
    EXPECT_NE(st.message().find("send holds int32, recv double"), std::string::npos)
        << st.ToString();
    CollOptions o;
    o.algorithm = Algorithm::kChain;
    st = g->Allreduce(in, out, ReduceOp::kSum, o);
    EXPECT_NE(st.message().find("algorithm chain is not implemented for allreduce"),
              std::string::npos)
        << st.ToString();
    // The group still works after all that.
    ASSERT_TRUE(g->Allreduce(in, out, ReduceOp::kSum).ok());
    EXPECT_EQ(out, std::vector<int32_t>(4, 3));
  });
}

// Messages a member's hub cannot trust are dropped and counted; one that contradicts a posted
// collective fails it with an error saying so (and the others get the abort), never a crash.
TEST(Coll, MalformedAndLyingMessagesAreDroppedOrReported) {
  CollWorld w(2, "inproc");
  ASSERT_TRUE(w.ok());
  auto hub = internal::Hub::For(w.context(0));
  ASSERT_TRUE(hub.ok());
  const uint64_t rejected = (*hub)->rejected();
  const HandlerId handler = HandlerId::Of("ukai.coll");
  const Startpoint to0 = w.group(0).member(0);
  Buffer junk;
  junk.PutString("not a collective message");
  ASSERT_TRUE(w.runtime(1).SendRsr(std::move(junk), to0, handler).ok());
  coll::Header h;
  h.kind = coll::MsgKind::kData;
  h.coll = static_cast<uint8_t>(Collective::kAllreduce);
  h.algorithm = static_cast<uint8_t>(Algorithm::kDirect);
  h.dtype = static_cast<uint8_t>(DataType::kInt32);
  h.redop = static_cast<uint8_t>(ReduceOp::kSum);
  h.group = w.group(0).id();
  // The first collective after creation (which took #0, and #1-#2 to set up shared slots).
  const uint32_t first = w.group(0).state()->next_seq();
  h.seq = first;
  h.src = 0;  // a lie: runtime 1 is rank 1
  h.count = 4;
  h.total = 16;
  const std::vector<uint8_t> data(16, 1);
  ASSERT_TRUE(w.runtime(1).SendRsr(coll::MakeMessage(h, data), to0, handler).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return (*hub)->rejected() == rejected + 2; }));
  // Rank 0 posts the allreduce; "rank 1" sends 999 bytes for it: the allreduce fails.
  std::vector<int32_t> in(4, 1), out(4);
  CollOptions direct;
  direct.algorithm = Algorithm::kDirect;
  CollRequest q = w.group(0).IAllreduce(in, out, ReduceOp::kSum, direct);
  h.src = 1;
  h.total = 999;
  h.offset = 0;
  ASSERT_TRUE(w.runtime(1).SendRsr(coll::MakeMessage(h, data), to0, handler).ok());
  const Status st = q.WaitFor(kWait);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("999 bytes where this member expects 16"), std::string::npos)
      << st.ToString();
  // Rank 1's own allreduce #first either completed before the abort came (it had everything it
  // needed: rank 0's real contribution) or ends with it; then the group goes on.
  const Status st1 = w.group(1).Allreduce(in, out, ReduceOp::kSum, direct);
  EXPECT_TRUE(st1.ok() || st1.message().find("rank 0 ended collective #" + std::to_string(first)) !=
                              std::string::npos)
      << st1.ToString();
  std::vector<std::vector<int32_t>> outs(2, std::vector<int32_t>(4));
  w.Run([&](int r, Group* g) { EXPECT_TRUE(g->Allreduce(in, outs[r], ReduceOp::kSum).ok()); });
  EXPECT_EQ(outs[0], std::vector<int32_t>(4, 2));
  EXPECT_EQ(outs[1], std::vector<int32_t>(4, 2));
}

TEST(Coll, ForcedAlgorithmsBeatTheTable) {
  GroupOptions o;
  o.algorithms = "allreduce=ring,broadcast=relay";
  CollWorld w(3, "inproc", o);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w.group(0).Select(Collective::kAllreduce, 8), Algorithm::kRing);
  EXPECT_EQ(w.group(0).Select(Collective::kBroadcast, 1 << 20), Algorithm::kRelay);
  EXPECT_EQ(w.group(0).module(), "inproc");
  auto fabric = NewInprocFabric();
  auto rt = Runtime::Init(testing::ModuleOptions("inproc", fabric));
  ASSERT_TRUE(rt.ok());
  auto ctx = (*rt)->CreateContext({.name = "x"});
  ASSERT_TRUE(ctx.ok());
  GroupOptions bad;
  bad.algorithms = "allreduce=chain";
  auto g = Group::World(**ctx, bad);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("chain is not implemented for allreduce"), std::string::npos)
      << g.status().ToString();
  bad.algorithms = "allreduse=ring";
  g = Group::World(**ctx, bad);
  EXPECT_NE(g.status().message().find("unknown collective 'allreduse'"), std::string::npos)
      << g.status().ToString();
}

TEST(Coll, CreationErrors) {
  auto fabric = NewInprocFabric();
  auto a = Runtime::Init(testing::ModuleOptions("inproc", fabric));
  auto b = Runtime::Init(testing::ModuleOptions("inproc", fabric));
  ASSERT_TRUE(a.ok() && b.ok());
  auto ca = (*a)->CreateContext({.name = "a"});
  auto cb = (*b)->CreateContext({.name = "b"});
  ASSERT_TRUE(ca.ok() && cb.ok());
  const Startpoint sa((*a)->shared_descriptors(), (*ca)->id(), 1);
  const Startpoint sb((*b)->shared_descriptors(), (*cb)->id(), 1);
  std::vector<Startpoint> only_b{sb};
  auto g = Group::FromStartpoints(**ca, only_b);
  EXPECT_NE(g.status().message().find("is not among the 1 members"), std::string::npos)
      << g.status().ToString();
  std::vector<Startpoint> twice{sa, sb, sa};
  g = Group::FromStartpoints(**ca, twice);
  EXPECT_NE(g.status().message().find("members 0 and 2 are the same context"), std::string::npos);
  // b never creates the group: a's creation times out, naming it.
  GroupOptions quick;
  quick.timeout = std::chrono::milliseconds(300);
  std::vector<Startpoint> both{sa, sb};
  g = Group::FromStartpoints(**ca, both, quick);
  EXPECT_EQ(g.status().code(), StatusCode::kTimeout) << g.status().ToString();
  EXPECT_NE(g.status().message().find("members 1 did not create the group"), std::string::npos);
  // A world of one (bootstrap "single") works.
  auto world = Group::World(**ca);
  ASSERT_TRUE(world.ok()) << world.status().ToString();
  EXPECT_EQ((*world)->size(), 1);
  std::vector<int32_t> v{4}, o(1);
  EXPECT_TRUE((*world)->Allreduce(v, o, ReduceOp::kSum).ok());
  EXPECT_EQ(o[0], 4);
  // The same members and tag twice in one context: an error naming the tag.
  auto again = Group::World(**ca);
  EXPECT_NE(again.status().message().find("GroupOptions::tag"), std::string::npos);
}

// A member leaves (destroys its Group, then its runtime finalizes) while the others run an
// allreduce it never joins: their allreduce completes with kUnavailable naming it (no hang),
// so do later collectives; Shrink gives the survivors' group. (A member killed by SIGKILL:
// coll_itest.cc, shm and tcp.)
TEST(Coll, MemberLeavingDuringAllreduceThenShrink) {
  constexpr int kN = 4;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    std::vector<double> in(1 << 16, 1.0), out(1 << 16);
    if (r == 2) {  // never calls the allreduce; its runtime goes away
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      w.group_ptr(2).reset();
      (void)w.runtime(2).Finalize();
      return;
    }
    CollOptions o;
    o.algorithm = Algorithm::kRing;
    Status st = g->Allreduce(in, out, ReduceOp::kSum, o);
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    EXPECT_NE(st.message().find("group member 2"), std::string::npos) << st.ToString();
    st = g->Barrier();
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    EXPECT_EQ(g->FailedMembers(), std::vector<int>{2});
    auto s = g->Shrink();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ((*s)->size(), 3);
    EXPECT_EQ((*s)->rank(), r < 2 ? r : r - 1);
    ASSERT_TRUE((*s)->Allreduce(in, out, ReduceOp::kSum, o).ok());
    EXPECT_EQ(out[0], 3.0);
  });
}

}  // namespace
}  // namespace ukai::rt
