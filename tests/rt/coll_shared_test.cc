// Shared work between members on one host: large steps of broadcast, scatter and gather
// copied by both sides at once (GroupOptions::shared_copy_bytes, src/rt/coll/coll_op.h),
// and barriers and small allreduces in shared-memory slots (GroupOptions::shared_slots,
// src/rt/coll/slots.h), over inproc (several runtimes in this process: memcpy stands for
// process_vm_writev / process_vm_readv, the slot area is mapped once per member; the
// multi-process tests in coll_itest.cc run the system calls and a killed member).
#include <bit>
#include <thread>

#include "coll_test_util.h"
#include "rt/coll/cross_memory.h"
#include "rt/coll/group_state.h"

namespace ukai::rt {
namespace {

using testing::CollWorld;

int32_t Pattern(uint64_t i) { return static_cast<int32_t>(i * 2654435761u); }

struct Counts {
  uint64_t reads = 0, writes = 0;
};

Counts CountsOf(CollWorld& w, int r) {
  const internal::CollCounters& c = w.group(r).state()->counters();
  return {c.shared_reads.load(), c.shared_writes.load()};
}

// Odd sizes (halves that are not whole elements apart from the 64-byte cut), three roots:
// every result complete, every receiver read its half once per step and every sender wrote
// one; below the threshold, and with the feature off, nothing is shared.
TEST(Coll, LargeRootedCopiesAreSharedAndComplete) {
  constexpr int kN = 3;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  if (!coll::Verify(w.group(0).state()->OwnProof())) {
    GTEST_SKIP() << "cross-memory reads are not permitted here (no single copy)";
  }
  CollOptions direct;
  direct.algorithm = Algorithm::kDirect;
  w.Run([&](int r, Group* g) {
    const size_t count = (size_t{3} << 18) / 4 + 7;  // 768 KiB + 28 bytes of int32
    std::vector<int32_t> buf(count, -1);
    if (r == 1) {
      for (size_t i = 0; i < count; ++i) buf[i] = Pattern(i);
    }
    ASSERT_TRUE(g->Broadcast(buf, 1, direct).ok());
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(buf[i], Pattern(i)) << "element " << i;

    const size_t block = 65543;  // int64: 512 KiB + 56 bytes per rank
    std::vector<int64_t> all(r == 0 ? kN * block : 0), mine(block, -1);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i) * 3 + 1;
    ASSERT_TRUE(g->Scatter(all, mine, 0, direct).ok());
    for (size_t i = 0; i < block; ++i) {
      ASSERT_EQ(mine[i], static_cast<int64_t>(r * block + i) * 3 + 1) << "element " << i;
    }
    std::vector<int64_t> got(r == 2 ? kN * block : 0, -1);
    ASSERT_TRUE(g->Gather(mine, got, 2, direct).ok());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], static_cast<int64_t>(i) * 3 + 1) << "element " << i;
    }
  });
  // broadcast from 1: 0 and 2 read, 1 wrote twice; scatter from 0: 1 and 2 read, 0 wrote
  // twice; gather to 2: 2 read twice, 0 and 1 wrote once.
  const Counts want[kN] = {{1, 3}, {1, 3}, {4, 0}};
  for (int r = 0; r < kN; ++r) {
    EXPECT_EQ(CountsOf(w, r).reads, want[r].reads) << "rank " << r;
    EXPECT_EQ(CountsOf(w, r).writes, want[r].writes) << "rank " << r;
  }
  w.Run([&](int r, Group* g) {  // one element short of 256 KiB: read by the receiver alone
    std::vector<int32_t> buf((size_t{256} << 10) / 4 - 1, r == 0 ? 5 : 0);
    ASSERT_TRUE(g->Broadcast(buf, 0, direct).ok());
    for (int32_t v : buf) ASSERT_EQ(v, 5);
  });
  for (int r = 0; r < kN; ++r) EXPECT_EQ(CountsOf(w, r).writes, want[r].writes);

  GroupOptions off;
  off.shared_copy_bytes = 0;
  CollWorld plain(kN, "inproc", off);
  ASSERT_TRUE(plain.ok());
  plain.Run([&](int r, Group* g) {
    std::vector<int64_t> buf(size_t{1} << 17, r == 2 ? 11 : 0);  // 1 MiB
    ASSERT_TRUE(g->Broadcast(buf, 2, direct).ok());
    for (int64_t v : buf) ASSERT_EQ(v, 11);
  });
  for (int r = 0; r < kN; ++r) {
    EXPECT_EQ(CountsOf(plain, r).reads, 0u);
    EXPECT_EQ(CountsOf(plain, r).writes, 0u);
  }
}

uint64_t SlotOps(CollWorld& w, int r) { return w.group(r).state()->counters().slot_ops.load(); }

// Barriers and allreduces up to 512 bytes go to the slots (and give the reference results,
// combined in rank order: a non-commutative user operation shows it); 520 bytes and forced
// algorithms do not. 100 rounds, so that both slots of every member are reused often.
TEST(CollSlots, BarrierAndSmallAllreducesUseTheSlots) {
  for (int n : {2, 3, 5}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    CollWorld w(n, "inproc");
    ASSERT_TRUE(w.ok());
    for (int r = 0; r < n; ++r) ASSERT_TRUE(w.group(r).shared_slots());
    constexpr int kRounds = 100;
    w.Run([&](int r, Group* g) {
      for (int k = 0; k < kRounds; ++k) {
        ASSERT_TRUE(g->Barrier().ok());
        const size_t count = 1 + static_cast<size_t>(k) % 64;  // up to 64 doubles: 512 B
        std::vector<double> in(count, r + k), out(count, -1);
        ASSERT_TRUE(g->Allreduce(in, out, ReduceOp::kSum).ok());
        const double want = n * k + n * (n - 1) / 2.0;
        for (double v : out) ASSERT_EQ(v, want) << "round " << k;
        std::vector<uint64_t> f(3), h(3);
        for (uint64_t i = 0; i < 3; ++i) f[i] = testing::AffineValue(r, i, k);
        ASSERT_TRUE(g->Allreduce(f, h, testing::AffineCompose()).ok());
        for (uint64_t i = 0; i < 3; ++i) {
          uint64_t ref = testing::AffineValue(0, i, k);
          for (int j = 1; j < n; ++j) ref = testing::Compose(ref, testing::AffineValue(j, i, k));
          ASSERT_EQ(h[i], ref) << "round " << k;
        }
      }
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(SlotOps(w, r), 3u * kRounds);
    w.Run([&](int r, Group* g) {
      std::vector<double> in(65, r), out(65);  // 520 bytes: messages
      ASSERT_TRUE(g->Allreduce(in, out, ReduceOp::kMax).ok());
      EXPECT_EQ(out[64], n - 1);
      CollOptions direct;  // a forced algorithm: messages
      direct.algorithm = Algorithm::kDirect;
      ASSERT_TRUE(g->Barrier(direct).ok());
      std::vector<double> small(2, r), max(2);
      ASSERT_TRUE(g->Allreduce(small, max, ReduceOp::kMax, direct).ok());
      EXPECT_EQ(max[1], n - 1);
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(SlotOps(w, r), 3u * kRounds);
  }
}

// Several slot operations in flight at once, between operations that travel as messages,
// completed in any order (Test and Wait).
TEST(CollSlots, NonBlockingInFlightBesideMessages) {
  constexpr int kN = 4;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    constexpr int kOps = 12;
    std::vector<std::vector<int64_t>> in(kOps), out(kOps);
    std::vector<CollRequest> q;
    for (int k = 0; k < kOps; ++k) {
      const size_t count = k % 3 == 2 ? 5000 : 8;  // every third one by messages
      in[k].assign(count, r * k);
      out[k].assign(count, -1);
      q.push_back(g->IAllreduce(in[k], out[k], ReduceOp::kSum));
      if (k % 4 == 0) q.push_back(g->IBarrier());
    }
    for (size_t i = q.size(); i-- > 0;) {
      if (i % 2 == 0) {
        while (!q[i].Test()) std::this_thread::yield();
      }
      ASSERT_TRUE(q[i].WaitFor(std::chrono::seconds(60)).ok()) << q[i].status().ToString();
    }
    for (int k = 0; k < kOps; ++k) {
      for (int64_t v : out[k]) ASSERT_EQ(v, k * (0 + 1 + 2 + 3)) << "op " << k;
    }
  });
  EXPECT_EQ(SlotOps(w, 0), 8u + 3u);  // 8 small allreduces, 3 barriers
}

// Slots only when every member asks for them: one member with shared_slots = false turns
// them off for the whole group (the calls still work, by messages).
TEST(CollSlots, OffUnlessEveryMemberAsks) {
  constexpr int kN = 3;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  std::vector<std::unique_ptr<Group>> mixed(kN);
  w.Run([&](int r, Group*) {
    GroupOptions o;
    o.tag = 5;
    o.shared_slots = r != 1;
    auto g = Group::FromStartpoints(w.context(r), w.members(), o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    mixed[r] = std::move(*g);
    EXPECT_FALSE(mixed[r]->shared_slots());
    int32_t one = 1, sum = 0;
    ASSERT_TRUE(mixed[r]
                    ->Allreduce(ConstView(&one, 1, DataType::kInt32),
                                MutView(&sum, 1, DataType::kInt32), ReduceOp::kSum)
                    .ok());
    EXPECT_EQ(sum, kN);
    EXPECT_EQ(mixed[r]->state()->counters().slot_ops.load(), 0u);
  });
}

// Members that call a slot collective differently fail with a clear error naming both calls
// (in slots, or one of them with messages), and the group goes on working afterwards.
TEST(CollSlots, MismatchedCallsFailClearlyAndTheGroupGoesOn) {
  constexpr int kN = 2;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    std::vector<int32_t> in(r == 0 ? 4 : 5, 1), out(in.size());
    Status st = g->Allreduce(in, out, ReduceOp::kSum);  // both in slots
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("mismatched collective"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find(r == 0 ? "called allreduce of 5 int32" : "called allreduce of 4"),
              std::string::npos)
        << st.ToString();
    std::vector<int32_t> big(r == 0 ? 4 : 1000, 1), got(big.size());
    st = g->Allreduce(big, got, ReduceOp::kSum);  // rank 0 in slots, rank 1 by messages
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("in shared slots"), std::string::npos) << st.ToString();
    for (int k = 0; k < 20; ++k) {  // slots written after failed operations are reused safely
      ASSERT_TRUE(g->Barrier().ok());
      int64_t mine = r + k, sum = 0;
      ASSERT_TRUE(g->Allreduce(ConstView(&mine, 1, DataType::kInt64),
                               MutView(&sum, 1, DataType::kInt64), ReduceOp::kSum)
                      .ok());
      ASSERT_EQ(sum, 1 + 2 * k);
    }
  });
}

// A member that leaves between two slot allreduces: the others' next one completes with
// kUnavailable naming it (no hang on its slot), so do later ones, and Shrink goes on in
// slots. (A member killed by SIGKILL between them: coll_itest.cc.)
TEST(CollSlots, MemberLeavingBetweenSlotAllreduces) {
  constexpr int kN = 3;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  w.Run([&](int r, Group* g) {
    double in = r, out = 0;
    const ConstView i(&in, 1, DataType::kDouble);
    const MutView o(&out, 1, DataType::kDouble);
    ASSERT_TRUE(g->Allreduce(i, o, ReduceOp::kSum).ok());
    EXPECT_EQ(out, 3.0);
    if (r == 1) {
      w.group_ptr(1).reset();
      return;
    }
    Status st = g->Allreduce(i, o, ReduceOp::kSum);
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    EXPECT_NE(st.message().find("group member 1"), std::string::npos) << st.ToString();
    EXPECT_EQ(g->Barrier().code(), StatusCode::kUnavailable);
    auto s = g->Shrink();
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE((*s)->shared_slots());
    ASSERT_TRUE((*s)->Allreduce(i, o, ReduceOp::kSum).ok());
    EXPECT_EQ(out, 2.0);
  });
}

// A member's failure seen while an operation of ours waits in the slots with every
// contribution already there (the member wrote its part, then died): the operation
// completes with the sum, and only the next one fails. Member 0's allreduce is posted
// first and not polled (slot operations complete when their caller waits); 1 and 2 write
// theirs; then member 0's group hears that 2 failed.
TEST(CollSlots, AFailureSeenAfterEveryContributionArrivedFailsOnlyLaterOperations) {
  constexpr int kN = 3;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w.group(0).shared_slots());
  std::vector<double> in = {1.0, 2.0, 4.0}, out(kN, 0.0);
  std::vector<CollRequest> q;
  for (int r = 0; r < kN; ++r) {
    q.push_back(w.group(r).IAllreduce(ConstView(&in[r], 1, DataType::kDouble),
                                      MutView(&out[r], 1, DataType::kDouble), ReduceOp::kSum));
  }
  PeerEvent died;
  died.peer = w.runtime(2).id();
  died.module = "inproc";
  died.reason = Status::Unavailable("killed (test)");
  w.group(0).state()->OnPeerEvent(died);
  const Status st = q[0].Wait();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out[0], 7.0);
  EXPECT_EQ(w.group(0).state()->counters().slot_ops.load(), 1u);
  double more = 0;
  const Status next = w.group(0).Allreduce(ConstView(&in[0], 1, DataType::kDouble),
                                           MutView(&more, 1, DataType::kDouble), ReduceOp::kSum);
  EXPECT_EQ(next.code(), StatusCode::kUnavailable) << next.ToString();
  EXPECT_NE(next.message().find("group member 2"), std::string::npos) << next.ToString();
  for (int r = 1; r < kN; ++r) EXPECT_TRUE(q[r].Wait().ok()) << "rank " << r;
}

// Barriers in the slots, all members driven from this thread: the last member to post one
// completes it at once, the others in their Wait; a barrier waiting in the slots fails with
// kUnavailable naming the member that failed (its runtime's peer event) or left (its Group
// destroyed) before posting it.
TEST(CollSlots, BarrierWaitingInTheSlotsFailsForAFailedOrDepartedMember) {
  constexpr int kN = 3;
  {
    CollWorld w(kN, "inproc");
    ASSERT_TRUE(w.ok());
    for (int round = 0; round < 3; ++round) {
      std::vector<CollRequest> q;
      for (int r = 0; r < kN; ++r) q.push_back(w.group(r).IBarrier());
      EXPECT_TRUE(q[kN - 1].Test()) << "round " << round;  // the last one found every slot
      for (int r = 0; r < kN; ++r) EXPECT_TRUE(q[r].Wait().ok()) << "rank " << r;
    }
    for (int r = 0; r < kN; ++r) EXPECT_EQ(SlotOps(w, r), 3u);
    CollRequest q0 = w.group(0).IBarrier(), q1 = w.group(1).IBarrier();
    PeerEvent died;
    died.peer = w.runtime(2).id();
    died.module = "inproc";
    died.reason = Status::Unavailable("killed (test)");
    w.group(0).state()->OnPeerEvent(died);
    w.group(1).state()->OnPeerEvent(died);
    for (const CollRequest& q : {q0, q1}) {
      const Status st = q.Wait();
      EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
      EXPECT_NE(st.message().find("group member 2"), std::string::npos) << st.ToString();
    }
  }
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  CollRequest q0 = w.group(0).IBarrier();
  EXPECT_FALSE(q0.Test());
  w.group_ptr(1).reset();
  const Status st = q0.WaitFor(std::chrono::seconds(60));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("group member 1"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("left the group"), std::string::npos) << st.ToString();
}

// A barrier against a slot allreduce of the same collective number, whichever is posted
// first (the barrier then finds the allreduce's slot, or waits for it): both fail with the
// mismatch, and the group goes on.
TEST(CollSlots, BarrierAgainstASlotAllreduceFailsEitherWayRound) {
  constexpr int kN = 2;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  for (const bool barrier_first : {false, true}) {
    SCOPED_TRACE(barrier_first ? "barrier first" : "allreduce first");
    int64_t in = 5, out = 0;
    CollRequest qa, qb;
    auto allreduce = [&] {
      return w.group(1).IAllreduce(ConstView(&in, 1, DataType::kInt64),
                                   MutView(&out, 1, DataType::kInt64), ReduceOp::kSum);
    };
    if (barrier_first) {
      qb = w.group(0).IBarrier();
      qa = allreduce();
    } else {
      qa = allreduce();
      qb = w.group(0).IBarrier();
    }
    Status st = qb.WaitFor(std::chrono::seconds(60));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("mismatched collective"), std::string::npos) << st.ToString();
    st = qa.WaitFor(std::chrono::seconds(60));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("mismatched collective"), std::string::npos) << st.ToString();
  }
  for (int k = 0; k < 10; ++k) {
    CollRequest a = w.group(0).IBarrier(), b = w.group(1).IBarrier();
    ASSERT_TRUE(a.Wait().ok());
    ASSERT_TRUE(b.Wait().ok());
  }
}

// Oversubscription is judged by the union of the members' CPUs on the host: two processes
// bound to a CPU each are not, four on two CPUs are, a job restricted to one CPU is; a host
// beyond 64 CPUs counts at least each member's own number.
TEST(CollSlots, OversubscriptionCountsTheUnionOfTheMembersCpus) {
  using coll::CpuSet;
  const std::vector<CpuSet> bound = {{0b01, 1}, {0b10, 1}};
  EXPECT_EQ(coll::UnionCpus(bound), 2u);
  const std::vector<CpuSet> shared(4, CpuSet{0b11, 2});
  EXPECT_EQ(coll::UnionCpus(shared), 2u);
  const std::vector<CpuSet> one = {{0b100, 1}, {0b100, 1}};
  EXPECT_EQ(coll::UnionCpus(one), 1u);
  const std::vector<CpuSet> big = {{~uint64_t{0}, 96}, {0, 32}};
  EXPECT_EQ(coll::UnionCpus(big), 96u);
  const CpuSet own = coll::OwnCpus();
  ASSERT_GE(own.count, 1u);
  EXPECT_LE(static_cast<uint64_t>(std::popcount(own.low_mask)), own.count);
  // Runtimes of this process share its CPUs.
  for (int n : {2, 3}) {
    CollWorld w(n, "inproc");
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w.group(0).state()->oversubscribed(), static_cast<uint64_t>(n) > own.count);
  }
}

const internal::CollCounters& CountersOf(CollWorld& w, int r) {
  return w.group(r).state()->counters();
}

// With SlotWait::kSleep, members that wait in the slots sleep on the slot area and the
// member that completes the operation wakes them: the last to arrive, 20 ms late (twenty
// times the longest sleep), so a wake and not the timeout must end a waiter's last sleep.
// Barriers: member 2 comes last; allreduces: member 0. Results as when polling; with kPoll
// nobody sleeps.
TEST(CollSlots, SleepingWaitersAreWokenByTheMemberThatCompletes) {
  constexpr int kN = 3;
  // Each waiter needs one of its waits to end while it sleeps (not between two sleeps, on a
  // loaded machine): several rounds make missing them all unlikely.
  constexpr int kRounds = 6;
  for (const SlotWait mode : {SlotWait::kSleep, SlotWait::kPoll}) {
    SCOPED_TRACE(mode == SlotWait::kSleep ? "sleep" : "poll");
    GroupOptions o;
    o.slot_wait = mode;
    CollWorld w(kN, "inproc", o);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w.group(0).shared_slots());
    w.Run([&](int r, Group* g) {
      for (int k = 0; k < kRounds; ++k) {
        if (r == 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ASSERT_TRUE(g->Barrier().ok());
        if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        double in = r + k, out = -1;
        ASSERT_TRUE(g->Allreduce(ConstView(&in, 1, DataType::kDouble),
                                 MutView(&out, 1, DataType::kDouble), ReduceOp::kSum)
                        .ok());
        EXPECT_EQ(out, 3.0 * k + 3);
      }
    });
    for (int r = 0; r < kN; ++r) {
      const internal::CollCounters& c = CountersOf(w, r);
      EXPECT_EQ(c.slot_ops.load(), 2u * kRounds) << "rank " << r;
      if (mode == SlotWait::kPoll) {
        EXPECT_EQ(c.slot_sleeps.load(), 0u) << "rank " << r;
        continue;
      }
      // Every member waited for a late one in some operation (1 in all, 0 in barriers, 2 in
      // allreduces).
      EXPECT_GE(c.slot_sleeps.load(), 1u) << "rank " << r;
      EXPECT_GE(c.slot_woken.load(), 1u) << "rank " << r;
    }
    if (mode == SlotWait::kSleep) {
      EXPECT_GE(CountersOf(w, 2).slot_wakes.load(), 1u);  // the barriers' last
      EXPECT_GE(CountersOf(w, 0).slot_wakes.load(), 1u);  // the allreduces' last
    }
  }
}

// Returns once member r's waiter went to sleep in the slots (after its 50 us of polling; on
// a loaded host its thread may not run for a while), or after 10 s.
void WaitUntilAsleep(CollWorld& w, int r) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (CountersOf(w, r).slot_sleeps.load() == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A member asleep in the slots still learns that another failed (a progress pass between
// two sleeps) or left: its barrier completes with kUnavailable naming the member.
TEST(CollSlots, SleepingWaiterSeesAFailedOrDepartedMember) {
  constexpr int kN = 3;
  GroupOptions o;
  o.slot_wait = SlotWait::kSleep;
  {
    CollWorld w(kN, "inproc", o);
    ASSERT_TRUE(w.ok());
    CollRequest q0 = w.group(0).IBarrier(), q1 = w.group(1).IBarrier();
    Status st0;
    std::thread waiter([&] { st0 = q0.WaitFor(std::chrono::seconds(60)); });
    WaitUntilAsleep(w, 0);
    PeerEvent died;
    died.peer = w.runtime(2).id();
    died.module = "inproc";
    died.reason = Status::Unavailable("killed (test)");
    w.group(0).state()->OnPeerEvent(died);
    waiter.join();
    EXPECT_EQ(st0.code(), StatusCode::kUnavailable) << st0.ToString();
    EXPECT_NE(st0.message().find("group member 2"), std::string::npos) << st0.ToString();
    EXPECT_GE(CountersOf(w, 0).slot_sleeps.load(), 1u);
    w.group(1).state()->OnPeerEvent(died);
    EXPECT_EQ(q1.Wait().code(), StatusCode::kUnavailable);
  }
  CollWorld w(kN, "inproc", o);
  ASSERT_TRUE(w.ok());
  CollRequest q0 = w.group(0).IBarrier();
  Status st0;
  std::thread waiter([&] { st0 = q0.WaitFor(std::chrono::seconds(60)); });
  WaitUntilAsleep(w, 0);
  w.group_ptr(1).reset();
  waiter.join();
  EXPECT_EQ(st0.code(), StatusCode::kUnavailable) << st0.ToString();
  EXPECT_NE(st0.message().find("left the group"), std::string::npos) << st0.ToString();
  EXPECT_GE(CountersOf(w, 0).slot_sleeps.load(), 1u);
}

}  // namespace
}  // namespace ukai::rt
