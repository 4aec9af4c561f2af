// The collectives' parts without a runtime: every schedule of every algorithm is consistent
// across the members (each message sent is received once, with the same length, and the
// reverse), relay sets and their K ranges, algorithm selection and forced choices, the message
// codec (round trip, every truncation, bad fields; fuzz target replay) and the kernels'
// operand order.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "fuzz_mutate.h"
#include "rt/coll/algorithms.h"
#include "rt/coll/coll_wire.h"
#include "rt/coll/reduce_kernels.h"
#include "rt/coll/schedule.h"
#include "rt/coll/select.h"

extern "C" int coll_message_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::rt::coll {
namespace {

constexpr Collective kScheduled[] = {
    Collective::kBarrier,   Collective::kBroadcast,     Collective::kScatter,
    Collective::kGather,    Collective::kAllgather,     Collective::kReduce,
    Collective::kAllreduce, Collective::kReduceScatter, Collective::kAlltoall};

// Builds every member's schedule of one collective and matches their messages.
void CheckConsistent(CollArgs a) {
  std::map<std::tuple<int, int, uint32_t>, uint64_t> sent, received;  // (from, to, tag) -> bytes
  for (int r = 0; r < a.n; ++r) {
    a.rank = r;
    Result<Schedule> s = BuildSchedule(a);
    ASSERT_TRUE(s.ok()) << CollectiveName(a.coll) << "/" << AlgorithmName(a.algorithm) << " n "
                        << a.n << " rank " << r << ": " << s.status().ToString();
    for (const Step& st : s->steps) {
      if (st.kind == StepKind::kSend) {
        ASSERT_TRUE(sent.emplace(std::make_tuple(r, st.peer, st.tag), st.src.length).second);
      } else if (st.kind == StepKind::kRecv) {
        ASSERT_TRUE(received.emplace(std::make_tuple(st.peer, r, st.tag), st.dst.length).second);
      }
    }
  }
  EXPECT_EQ(sent, received) << CollectiveName(a.coll) << "/" << AlgorithmName(a.algorithm) << " n "
                            << a.n << " root " << a.root << " count " << a.count;
}

TEST(CollSchedule, EveryAlgorithmMatchesItsMessagesAcrossMembers) {
  for (Collective c : kScheduled) {
    for (Algorithm alg : ImplementedAlgorithms(c)) {
      for (int n = 1; n <= 9; ++n) {
        for (int root : {0, n - 1, n / 2}) {
          for (uint64_t count : {0, 1, 7, 1000}) {
            for (uint64_t element : {1, 8}) {
              CollArgs a;
              a.coll = c;
              a.algorithm = alg;
              a.n = n;
              a.root = root;
              a.count = count;
              a.element = element;
              a.chunk_bytes = 256;
              a.commutative = KeepsRankOrder(c, alg) ? (count % 2 == 0) : true;
              CheckConsistent(a);
              if (alg == Algorithm::kRelay) {
                for (int k = 1; k <= n; ++k) {
                  a.relays = k;
                  CheckConsistent(a);
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(CollSchedule, RelaySetsFollowThePatentsRule) {
  // K = n: every member, the root included (embodiment 3); K < n: the lowest ranks but the
  // root (embodiment 6, Fig. 41A); allreduce: the lowest K.
  EXPECT_EQ(*RelaySet(Collective::kBroadcast, 5, 2, 0), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(*RelaySet(Collective::kBroadcast, 5, 2, 3), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(*RelaySet(Collective::kReduce, 4, 0, 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(*RelaySet(Collective::kAllreduce, 4, 0, 2), (std::vector<int>{0, 1}));
  auto bad = RelaySet(Collective::kAllreduce, 4, 0, 5);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "relays K = 5 is out of range for allreduce over 4 members (1..4)");
}

// The first hop of the relay reductions is a balanced all-to-all: at each of its steps the
// members send to different relays (member r starts with relay r + 1), not all to relay 0
// first (docs/collectives.md, "Relay collectives on the simulated machine").
TEST(CollSchedule, RelayReductionsStaggerTheirFirstHops) {
  for (Collective c : {Collective::kReduce, Collective::kAllreduce}) {
    for (int n : {2, 5, 8}) {
      std::vector<std::vector<int>> order(n);  // per member: the relays of its first sends
      for (int r = 0; r < n; ++r) {
        CollArgs a;
        a.coll = c;
        a.algorithm = Algorithm::kRelay;
        a.n = n;
        a.rank = r;
        a.count = 1000;
        a.element = 8;
        a.chunk_bytes = 1 << 20;  // one chunk per part
        Result<Schedule> s = BuildSchedule(a);
        ASSERT_TRUE(s.ok()) << s.status().ToString();
        for (const Step& st : s->steps) {
          if (st.kind == StepKind::kSend && st.background) order[r].push_back(st.peer);
        }
        ASSERT_EQ(order[r].size(), static_cast<size_t>(n - 1)) << CollectiveName(c) << " " << r;
        EXPECT_EQ(order[r][0], (r + 1) % n) << CollectiveName(c) << " n " << n << " rank " << r;
      }
      for (int t = 0; t + 1 < n; ++t) {
        std::set<int> targets;
        for (int r = 0; r < n; ++r) targets.insert(order[r][t]);
        EXPECT_EQ(targets.size(), static_cast<size_t>(n)) << CollectiveName(c) << " step " << t;
      }
    }
  }
}

TEST(CollSchedule, UnknownAlgorithmAndOrderErrors) {
  CollArgs a;
  a.coll = Collective::kAlltoall;
  a.algorithm = Algorithm::kRing;
  a.n = 3;
  Result<Schedule> s = BuildSchedule(a);
  EXPECT_EQ(s.status().message(),
            "algorithm ring is not implemented for alltoall (its algorithms: direct, pairwise)");
  a.coll = Collective::kAllreduce;
  a.commutative = false;
  s = BuildSchedule(a);
  EXPECT_NE(s.status().message().find("needs a commutative operation"), std::string::npos);
}

TEST(CollSelect, ForcedChoicesThenTableThenRules) {
  auto o = ParseOverrides("allreduce=ring, broadcast=relay");
  EXPECT_FALSE(o.ok());  // a space is part of the name: "unknown collective ' broadcast'"
  o = ParseOverrides("allreduce=ring,broadcast=relay");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(SelectAlgorithm(*o, Collective::kAllreduce, "shm", 4, 8, true), Algorithm::kRing);
  // A forced algorithm that needs commutativity is not used for a non-commutative operation.
  EXPECT_TRUE(KeepsRankOrder(Collective::kAllreduce,
                             SelectAlgorithm(*o, Collective::kAllreduce, "shm", 4, 8, false)));
  for (Collective c : kScheduled) {
    for (uint64_t bytes : {0ull, 8ull, 100000ull, 1ull << 30}) {
      for (bool commutative : {true, false}) {
        const Algorithm a = SelectAlgorithm({}, c, "shm", 5, bytes, commutative);
        EXPECT_TRUE(Implemented(c, a)) << CollectiveName(c);
        EXPECT_TRUE(commutative || KeepsRankOrder(c, a)) << CollectiveName(c);
      }
    }
  }
  EXPECT_EQ(ParseOverrides("allreduce").status().message(),
            "algorithm choice 'allreduce': expected COLLECTIVE=ALGORITHM");
  EXPECT_EQ(ParseOverrides("alltoall=ring").status().message(),
            "algorithm choice 'alltoall=ring': ring is not implemented for alltoall");
}

// The benchmark's table is well formed (per collective, module and group sizes: sizes rising
// to a last row for any size; algorithms implemented) and SelectAlgorithm consults it.
TEST(CollSelect, TunedTableIsWellFormedAndConsulted) {
  const std::span<const TableRow> table = TunedTable();
  ASSERT_FALSE(table.empty()) << "tuned_table.cc has no rows: run ukai_coll_bench --tune";
  std::map<std::tuple<Collective, std::string_view, int, int>, uint64_t> last;
  for (const TableRow& row : table) {
    SCOPED_TRACE(std::string(CollectiveName(row.coll)) + " " + std::string(row.module) + " n " +
                 std::to_string(row.min_n) + " up to " + std::to_string(row.max_bytes));
    EXPECT_LE(row.min_n, row.max_n);
    EXPECT_TRUE(row.coll == Collective::kSendRecv
                    ? row.algorithm == Algorithm::kDirect || row.algorithm == Algorithm::kRelay
                    : Implemented(row.coll, row.algorithm));
    const auto key = std::make_tuple(row.coll, row.module, row.min_n, row.max_n);
    auto it = last.find(key);
    if (it != last.end()) {
      EXPECT_NE(it->second, kAny) << "a row after the one for any size";
      EXPECT_GT(row.max_bytes, it->second) << "sizes must rise";
    }
    last[key] = row.max_bytes;
    // A size this row covers (its own bound) selects the first row that matches it.
    const TableRow* first = nullptr;
    for (const TableRow& r : table) {
      if (r.coll == row.coll && r.module == row.module && row.min_n >= r.min_n &&
          row.min_n <= r.max_n && row.max_bytes <= r.max_bytes) {
        first = &r;
        break;
      }
    }
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(SelectAlgorithm({}, row.coll, row.module, row.min_n, row.max_bytes, true),
              first->algorithm);
    // A row's chunk size reaches the call, and only the pipelined algorithms have one.
    EXPECT_EQ(SelectChoice({}, row.coll, row.module, row.min_n, row.max_bytes, true).chunk_bytes,
              first->chunk_bytes);
    if (row.chunk_bytes != 0) {
      EXPECT_TRUE(row.algorithm == Algorithm::kRelay || row.algorithm == Algorithm::kChain);
    }
  }
  for (const auto& [key, bytes] : last) {
    EXPECT_EQ(bytes, kAny) << CollectiveName(std::get<0>(key)) << " " << std::get<1>(key)
                           << ": the last row must cover any size";
  }
}

Header SampleHeader(MsgKind kind) {
  Header h;
  h.kind = kind;
  h.coll = static_cast<uint8_t>(Collective::kAllreduce);
  h.algorithm = static_cast<uint8_t>(Algorithm::kRing);
  h.dtype = static_cast<uint8_t>(DataType::kDouble);
  h.redop = static_cast<uint8_t>(ReduceOp::kSum);
  h.group = 0x1122334455667788ull;
  h.seq = 7;
  h.src = 3;
  h.tag = 9;
  h.root = 1;
  h.count = 1000;
  h.total = 16;
  h.offset = 8;
  return h;
}

std::vector<uint8_t> Bytes(const Header& h, std::span<const uint8_t> body) {
  Buffer b = MakeMessage(h, body);
  const auto p = b.payload();
  return {p.begin(), p.end()};
}

TEST(CollWire, RoundTripTruncationsAndBadFields) {
  const std::vector<uint8_t> body(8, 5);
  const std::vector<uint8_t> m = Bytes(SampleHeader(MsgKind::kData), body);
  ASSERT_EQ(m.size(), kCollHeaderBytes + 8);
  Result<Header> h = DecodeMessage(m);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->group, 0x1122334455667788ull);
  EXPECT_EQ(h->total, 16u);
  EXPECT_EQ(h->offset, 8u);
  for (size_t n = 0; n < kCollHeaderBytes; ++n) {
    EXPECT_FALSE(DecodeMessage(std::span(m).first(n)).ok()) << n;
  }
  auto bad = [&](size_t at, uint8_t v, const std::string& what) {
    std::vector<uint8_t> x = m;
    x[at] = v;
    const Result<Header> r = DecodeMessage(x);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().ToString();
  };
  bad(0, 0x00, "bad magic");
  bad(1, 0, "unknown kind 0");
  bad(1, 99, "unknown kind 99");
  bad(2, 11, "collective 11");
  bad(3, 9, "algorithm 9");
  bad(4, 8, "dtype 8");
  bad(5, 9, "redop 9");
  bad(6, 1, "flags must be 0");
  bad(40, 4, "exceeds its total");  // total 4 < offset 8
  std::vector<uint8_t> cts = Bytes(SampleHeader(MsgKind::kCts), body);
  EXPECT_NE(DecodeMessage(cts).status().message().find("cts with a body"), std::string::npos);
  const std::vector<uint8_t> abort =
      Bytes(SampleHeader(MsgKind::kAbort), EncodeAbort(Status::InvalidArgument("why")));
  h = DecodeMessage(abort);
  ASSERT_TRUE(h.ok());
  const Status st = DecodeAbort(std::span(abort).subspan(kCollHeaderBytes));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "why");
  const std::vector<uint8_t> ranks = EncodeRanks({1, 3});
  EXPECT_EQ(*DecodeRanks(ranks, 4), (std::vector<int>{1, 3}));
  EXPECT_FALSE(DecodeRanks(ranks, 3).ok());  // rank 3 in a group of 3
  std::vector<uint8_t> shrink = Bytes(SampleHeader(MsgKind::kShrinkState), ranks);
  EXPECT_TRUE(DecodeMessage(shrink).ok());
  shrink.pop_back();
  EXPECT_FALSE(DecodeMessage(shrink).ok());
}

TEST(CollWire, FuzzTargetReplay) {
  std::vector<std::vector<uint8_t>> corpus;
  const std::vector<uint8_t> body(20, 3);
  for (MsgKind k : {MsgKind::kData, MsgKind::kRts, MsgKind::kP2p, MsgKind::kBye}) {
    Header h = SampleHeader(k);
    h.total = 100;
    h.offset = 0;
    corpus.push_back(
        Bytes(h, k == MsgKind::kData || k == MsgKind::kP2p ? body : std::vector<uint8_t>{}));
  }
  corpus.push_back(Bytes(SampleHeader(MsgKind::kAbort), EncodeAbort(Status::Unavailable("x"))));
  corpus.push_back(Bytes(SampleHeader(MsgKind::kShrinkCommit), EncodeRanks({0, 2, 5})));
  std::mt19937_64 gen(24);
  for (const auto& c : corpus) {
    for (size_t n = 0; n <= c.size(); ++n) coll_message_fuzz_TestOneInput(c.data(), n);
    for (int i = 0; i < 500; ++i) {
      std::vector<uint8_t> m = c;
      ukai::testing::MutateBytes(gen, &m);
      coll_message_fuzz_TestOneInput(m.data(), m.size());
    }
  }
}

TEST(CollKernels, OperandOrderAndErrors) {
  auto min = Combiner::Make(ReduceOp::kMin, DataType::kDouble);
  ASSERT_TRUE(min.ok());
  double lhs[3] = {-0.0, NAN, 1.0}, rhs[3] = {0.0, 2.0, NAN};
  min->Apply(lhs, rhs, lhs, sizeof lhs);
  EXPECT_TRUE(std::signbit(lhs[0]));  // the lower rank's -0 wins the tie
  EXPECT_TRUE(std::isnan(lhs[1]));    // and its NaN
  EXPECT_EQ(lhs[2], 1.0);             // a NaN on the right loses
  int32_t a[2] = {INT32_MAX, 5}, b[2] = {1, 7};
  auto sum = Combiner::Make(ReduceOp::kSum, DataType::kInt32);
  sum->Apply(a, b, b, sizeof a);
  EXPECT_EQ(b[0], INT32_MIN);  // wraps, no undefined behaviour
  EXPECT_EQ(b[1], 12);
  EXPECT_EQ(Combiner::Make(ReduceOp::kBand, DataType::kFloat).status().message(),
            "reduction band is not defined on float (bitwise operations take integer types)");
  EXPECT_NE(Combiner::Make(ReduceOp::kSum, DataType::kByte)
                .status()
                .message()
                .find("built-in reductions take int32"),
            std::string::npos);
  EXPECT_FALSE(Combiner::Make(Reduction::User(nullptr, true), DataType::kByte).ok());
}

}  // namespace
}  // namespace ukai::rt::coll
