// The direct path of RMA over shm (src/rt/rma/rma_direct.h, docs/rma.md): three runtimes of
// this process joined by shm, one Rma each; runtime 1 is the target and allocates its
// segments with Rma::Allocate, 0 and 2 initiate. Each test checks that the accesses really
// were direct (the initiator's direct_accesses counter) or really fell back (the target's
// arrival-path counters), so none of them passes with the software path alone.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "rma_test_util.h"
#include "rt/rma/rma_direct.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt::testing {
namespace {

class RmaDirect : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) {
      auto ctx = StartWithContext(ModuleOptions("shm", nullptr), "c" + std::to_string(i), &rts_);
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      auto rma = Rma::Create(**ctx);
      ASSERT_TRUE(rma.ok()) << rma.status().ToString();
      rma_.push_back(std::move(*rma));
    }
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  }
  void TearDown() override {
    soft_.reset();
    rma_.clear();
    for (int i : {1, 0, 2}) EXPECT_TRUE(rts_[i]->Finalize().ok()) << "runtime " << i;
  }
  // A key that went through its byte form, as a peer would get it.
  static RemoteKey Exchange(const RemoteKey& k) {
    Result<RemoteKey> p = RemoteKey::Parse(k.Serialize());
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : RemoteKey{};
  }
  RmaSegment Allocate(uint64_t bytes) {
    Result<RmaSegment> s = rma_[1]->Allocate(bytes);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? RmaSegment{Exchange(s->key), s->memory} : RmaSegment{};
  }
  // A second context of runtime 2 whose Rma never uses the direct path.
  Rma& Software() {
    if (!soft_) {
      auto ctx = rts_[2]->CreateContext({.name = "soft"});
      EXPECT_TRUE(ctx.ok());
      auto rma = Rma::Create(**ctx, {.direct = false});
      EXPECT_TRUE(rma.ok());
      soft_ = std::move(*rma);
    }
    return *soft_;
  }
  uint64_t Direct(int i) const { return rma_[i]->stats().direct_accesses; }
  uint64_t Fallbacks(int i) const { return rma_[i]->stats().direct_fallbacks; }

  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<std::unique_ptr<Rma>> rma_;
  std::unique_ptr<Rma> soft_;
  size_t page_ = 4096;
};

TEST_F(RmaDirect, PutGetAtBoundarySizesAndOffsetsAreDirect) {
  const size_t p = page_, large = (1u << 20) + 3;
  RmaSegment seg = Allocate(large + 2 * p);
  ASSERT_EQ(seg.memory.size(), large + 2 * p);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(seg.memory.data()) % p, 0u);
  const std::vector<size_t> sizes = {0, 1, p - 1, p, p + 1, 4096, 3 * 4096, 16 * 4096, large};
  uint32_t seed = 1;
  uint64_t ops = 0;
  for (size_t size : sizes) {
    for (size_t off : {size_t{0}, size_t{1}, p - 1, p}) {
      SCOPED_TRACE("size " + std::to_string(size) + " offset " + std::to_string(off));
      const std::vector<uint8_t> data = Pattern(size, seed++);
      ASSERT_TRUE(rma_[0]->PutSync(seg.key, off, data).ok());
      ASSERT_TRUE(size == 0 || std::memcmp(seg.memory.data() + off, data.data(), size) == 0);
      std::vector<uint8_t> back(size, 0xEE);
      ASSERT_TRUE(rma_[2]->GetSync(seg.key, off, back).ok());
      ASSERT_EQ(back, data);
      ++ops;
    }
  }
  // Every access was done by the initiators in the mapped segment: no packet, no handler.
  EXPECT_EQ(Direct(0), ops);
  EXPECT_EQ(Direct(2), ops);
  EXPECT_EQ(rma_[0]->stats().packets_sent, 0u);
  EXPECT_EQ(rma_[1]->stats().fast_path, 0u);
  // The end of the segment, exactly; one byte past it is refused at send.
  std::vector<uint8_t> one = {9};
  EXPECT_TRUE(rma_[0]->PutSync(seg.key, seg.key.length - 1, one).ok());
  EXPECT_EQ(seg.memory[seg.key.length - 1], 9);
  EXPECT_EQ(rma_[0]->Put(seg.key, seg.key.length, one).status().code(), StatusCode::kOutOfRange);
  // Non-blocking forms complete at once; Wait/Test/flags/Flush agree.
  std::atomic<uint64_t> flag{0};
  Result<RmaOp> op = rma_[0]->Put(seg.key, 5, one, &flag);
  ASSERT_TRUE(op.ok());
  EXPECT_TRUE(rma_[0]->Test(*op));
  EXPECT_TRUE(rma_[0]->Wait(*op).ok());
  EXPECT_EQ(flag.load(), 1u);
  EXPECT_TRUE(rma_[0]->Flush().ok());
}

TEST_F(RmaDirect, AtomicsUnderContentionGiveExactTotals) {
  RmaSegment seg = Allocate(page_);
  uint8_t* mem = seg.memory.data();
  constexpr int kThreadsPerInitiator = 2, kIncrements = 3000;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int who : {0, 2}) {
    for (int t = 0; t < kThreadsPerInitiator; ++t) {
      threads.emplace_back([&, who] {
        for (int i = 0; i < kIncrements; ++i) {
          if (!rma_[who]->FetchOp(seg.key, 0, AtomicOpcode::kAdd, 1).ok()) ++errors;
          if (!rma_[who]->FetchOp(seg.key, 8, AtomicOpcode::kAdd, 1, 4).ok()) ++errors;
          uint64_t seen = 0;  // CAS-loop increment of word 16
          for (;;) {
            Result<uint64_t> old = rma_[who]->CompareSwap(seg.key, 16, seen, seen + 1);
            if (!old.ok()) {
              ++errors;
              break;
            }
            if (*old == seen) break;
            seen = *old;
          }
        }
      });
    }
  }
  // The target's own local atomics on the same word at the same time.
  std::atomic_ref<uint64_t> local(*reinterpret_cast<uint64_t*>(mem));
  for (int i = 0; i < kIncrements; ++i) local.fetch_add(1);
  for (auto& t : threads) t.join();
  const uint64_t n = 2 * kThreadsPerInitiator * kIncrements;
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(local.load(), n + kIncrements);
  EXPECT_EQ(std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(mem + 8)).load(), n);
  EXPECT_EQ(std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(mem + 16)).load(), n);
  EXPECT_GE(Direct(0) + Direct(2), 3 * n);
  EXPECT_EQ(rma_[1]->stats().atomic_ops, 0u);  // none ran at the target
}

TEST_F(RmaDirect, RevocationWhileMappedFallsBackAndTellsTheProtectionHandler) {
  RmaSegment seg = Allocate(4 * page_);
  std::vector<uint8_t> data = Pattern(3 * page_, 3);
  ASSERT_TRUE(rma_[0]->PutSync(seg.key, 0, data).ok());  // mapped now
  ASSERT_EQ(Direct(0), 1u);
  std::memset(seg.memory.data(), 0, seg.memory.size());
  std::atomic<int> told{0};
  ProcessId offender;
  rma_[1]->SetProtectionHandler([&](const ProcessId& who, uint32_t) {
    offender = who;
    ++told;
    return false;  // do not block
  });
  rma_[1]->ChangeAccessId();
  Status s = rma_[0]->PutSync(seg.key, 0, data);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("access ID mismatch"), std::string::npos) << s.ToString();
  for (uint8_t b : seg.memory) ASSERT_EQ(b, 0) << "a revoked key wrote";
  std::vector<uint8_t> back(8);
  EXPECT_EQ(rma_[0]->GetSync(seg.key, 0, back).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(rma_[0]->FetchOp(seg.key, 0, AtomicOpcode::kAdd, 1).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Direct(0), 1u);
  EXPECT_EQ(Fallbacks(0), 3u);
  // The put was three packets (one per page) on the software path: each refused.
  EXPECT_EQ(rma_[1]->stats().access_rejected, 5u);
  EXPECT_EQ(told.load(), 5);
  EXPECT_EQ(offender, rma_[0]->process_id());
  // A fresh key is served directly again.
  RemoteKey fresh = Exchange(*rma_[1]->KeyOf(seg.key.segment));
  ASSERT_TRUE(rma_[0]->PutSync(fresh, 0, data).ok());
  EXPECT_EQ(Direct(0), 2u);
  EXPECT_EQ(std::memcmp(seg.memory.data(), data.data(), data.size()), 0);
}

TEST_F(RmaDirect, BlockedOffenderIsRefusedOthersStayDirect) {
  RmaSegment seg = Allocate(page_);
  rma_[1]->SetProtectionHandler([](const ProcessId&, uint32_t) { return true; });
  RemoteKey stale = seg.key;
  stale.access_id ^= 1;  // never handed out
  std::vector<uint8_t> data = {1, 2, 3};
  EXPECT_EQ(rma_[0]->PutSync(stale, 0, data).code(), StatusCode::kFailedPrecondition);
  // Blocked: the valid key is refused too (on the software path), nothing written.
  Status s = rma_[0]->PutSync(seg.key, 0, data);
  EXPECT_NE(s.message().find("blocked"), std::string::npos) << s.ToString();
  EXPECT_EQ(seg.memory[0], 0);
  EXPECT_EQ(rma_[1]->stats().blocked_rejected, 1u);
  EXPECT_EQ(Direct(0), 0u);
  EXPECT_EQ(Fallbacks(0), 2u);
  // Another initiator is still served directly.
  ASSERT_TRUE(rma_[2]->PutSync(seg.key, 0, data).ok());
  EXPECT_EQ(Direct(2), 1u);
  rma_[1]->Unblock(rma_[0]->process_id());
  ASSERT_TRUE(rma_[0]->PutSync(seg.key, 0, data).ok());
  EXPECT_EQ(Direct(0), 1u);
}

TEST_F(RmaDirect, DescheduledTargetIsServedBySoftwareAndCompletes) {
  RmaSegment seg = Allocate(page_);
  std::vector<uint8_t> data = {4, 5, 6};
  rma_[1]->SetScheduled(false);
  ASSERT_TRUE(rma_[0]->PutSync(seg.key, 100, data).ok());
  EXPECT_EQ(seg.memory[102], 6);
  Result<uint64_t> old = rma_[0]->FetchOp(seg.key, 8, AtomicOpcode::kAdd, 5);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, 0u);
  EXPECT_EQ(rma_[1]->stats().process_mismatch, 2u);
  EXPECT_EQ(Direct(0), 0u);
  EXPECT_EQ(Fallbacks(0), 2u);
  rma_[1]->SetScheduled(true);
  ASSERT_TRUE(rma_[0]->PutSync(seg.key, 0, data).ok());
  EXPECT_EQ(Direct(0), 1u);
  EXPECT_EQ(rma_[1]->stats().process_mismatch, 2u);
}

TEST_F(RmaDirect, DeregisteredSegmentGivesAClearError) {
  RmaSegment seg = Allocate(page_);
  std::vector<uint8_t> data = {7, 8};
  ASSERT_TRUE(rma_[0]->PutSync(seg.key, 0, data).ok());
  ASSERT_TRUE(rma_[1]->Deregister(seg.key.segment).ok());
  Status s = rma_[0]->PutSync(seg.key, 0, data);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("no registered segment"), std::string::npos) << s.ToString();
  std::vector<uint8_t> back(2);
  EXPECT_EQ(rma_[0]->GetSync(seg.key, 0, back).code(), StatusCode::kNotFound);
  EXPECT_EQ(rma_[2]->FetchOp(seg.key, 0, AtomicOpcode::kAdd, 1).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Direct(0), 1u);
  EXPECT_EQ(Fallbacks(0), 2u);
  EXPECT_EQ(Fallbacks(2), 0u);  // its first use: the name is gone, nothing to map
  EXPECT_EQ(rma_[1]->Deregister(seg.key.segment).code(), StatusCode::kNotFound);
}

TEST_F(RmaDirect, DestroyedTargetIsNotAccessedDirectly) {
  RmaSegment seg = Allocate(page_);
  auto ctx = rts_[0]->CreateContext({.name = "quick"});
  ASSERT_TRUE(ctx.ok());
  auto quick = Rma::Create(**ctx, {.op_timeout_ms = 300});
  ASSERT_TRUE(quick.ok());
  std::vector<uint8_t> data = {1, 2};
  ASSERT_TRUE((*quick)->PutSync(seg.key, 0, data).ok());
  EXPECT_EQ((*quick)->stats().direct_accesses, 1u);
  rma_[1].reset();  // the target's Rma is gone: its control page says so
  Status s = (*quick)->PutSync(seg.key, 0, data);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();  // as on the software path
  EXPECT_EQ((*quick)->stats().direct_accesses, 1u);
  EXPECT_EQ((*quick)->stats().direct_fallbacks, 1u);
  // An empty segment is fine too (nothing to copy).
  Result<RmaSegment> empty = rma_[2]->Allocate(0);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE((*quick)->PutSync(empty->key, 0, {}).ok());
  EXPECT_EQ((*quick)->stats().direct_accesses, 2u);
}

TEST_F(RmaDirect, KeysThatDoNotMapTakeTheSoftwarePath) {
  RmaSegment seg = Allocate(page_);
  std::vector<uint8_t> data = {1, 2, 3, 4};
  RemoteKey other_host = seg.key;
  other_host.host ^= 1;
  RemoteKey bad_nonce = seg.key;
  bad_nonce.nonce ^= 1;  // the object's header does not repeat it
  RemoteKey no_object = seg.key;
  no_object.nonce ^= 2;
  no_object.memory_name = "/ukai-shm-1-0000000000000000";
  uint64_t fast = 0;
  for (const RemoteKey* k : {&other_host, &bad_nonce, &no_object}) {
    ASSERT_TRUE(rma_[0]->PutSync(Exchange(*k), 0, data).ok());
    EXPECT_EQ(rma_[1]->stats().fast_path, ++fast);  // served by the target's software path
  }
  EXPECT_EQ(std::memcmp(seg.memory.data(), data.data(), data.size()), 0);
  EXPECT_EQ(Direct(0), 0u);
  EXPECT_EQ(Fallbacks(0), 0u);  // not protection events: those keys are just not mappable
  // Register()'d (ordinary) memory is not mappable either.
  Pages mem(page_);
  RemoteKey plain = Exchange(*rma_[1]->Register(mem.span()));
  EXPECT_EQ(plain.nonce, 0u);
  ASSERT_TRUE(rma_[0]->PutSync(plain, 0, data).ok());
  EXPECT_EQ(Direct(0), 0u);
  EXPECT_EQ(rma_[1]->stats().fast_path, fast + 1);
}

TEST_F(RmaDirect, SequencesStayAtomicAcrossBothPathsBesideDirectSingleOps) {
  RmaSegment seg = Allocate(page_);
  Rma& soft = Software();
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, errors{0};
  const AtomicOp both[2] = {{AtomicOpcode::kAdd, 8, 0, 1, 0}, {AtomicOpcode::kAdd, 8, 8, 1, 0}};
  const AtomicOp read[2] = {{AtomicOpcode::kAdd, 8, 0, 0, 0}, {AtomicOpcode::kAdd, 8, 8, 0, 0}};
  auto run = [&](Rma& who, std::span<const AtomicOp> ops, uint64_t* out) {
    Result<RmaOp> op = who.Atomic(seg.key, ops, {out, 2});
    if (!op.ok() || !who.Wait(*op).ok()) ++errors;
  };
  constexpr int kWrites = 3000;
  std::vector<std::thread> threads;
  for (Rma* writer : {rma_[0].get(), &soft}) {
    threads.emplace_back([&, writer] {
      uint64_t out[2];
      for (int i = 0; i < kWrites; ++i) run(*writer, both, out);
    });
  }
  for (Rma* reader : {rma_[2].get(), &soft}) {
    threads.emplace_back([&, reader] {
      uint64_t out[2];
      while (!stop.load()) {
        run(*reader, read, out);
        if (out[0] != out[1]) ++torn;
      }
    });
  }
  // Direct single ops on another word meanwhile: atomic on their own, exact total.
  for (int i = 0; i < kWrites; ++i) {
    if (!rma_[0]->FetchOp(seg.key, 16, AtomicOpcode::kAdd, 1).ok()) ++errors;
  }
  threads[0].join();
  threads[1].join();
  stop.store(true);
  threads[2].join();
  threads[3].join();
  const auto* w = reinterpret_cast<const uint64_t*>(seg.memory.data());
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(w[0], 2u * kWrites);
  EXPECT_EQ(w[1], 2u * kWrites);
  EXPECT_EQ(w[2], uint64_t{kWrites});
  EXPECT_GE(Direct(0), 2u * kWrites);  // rma_[0]'s sequences and single ops were direct
  EXPECT_EQ(soft.stats().direct_accesses, 0u);
  EXPECT_GE(rma_[1]->stats().atomic_ops, 2u * kWrites);  // the software writer's, at the target
}

TEST_F(RmaDirect, KeyOfAnAllocatedSegmentSerialisesAndBadFieldsAreNamed) {
  RmaSegment seg = Allocate(100);
  const RemoteKey& k = seg.key;
  EXPECT_NE(k.nonce, 0u);
  EXPECT_NE(k.host, 0u);
  EXPECT_EQ(k.length, 100u);
  std::vector<uint8_t> bytes = k.Serialize();
  EXPECT_EQ(bytes[0], 2);
  Result<RemoteKey> back = RemoteKey::Parse(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->nonce, k.nonce);
  EXPECT_EQ(back->host, k.host);
  EXPECT_EQ(back->control_name, k.control_name);
  EXPECT_EQ(back->memory_name, k.memory_name);
  EXPECT_EQ(back->Serialize(), bytes);
  auto error = [](std::vector<uint8_t> b) {
    Result<RemoteKey> r = RemoteKey::Parse(b);
    return r.ok() ? std::string("parsed") : r.status().message();
  };
  std::vector<uint8_t> zero_nonce = bytes;
  std::memset(zero_nonce.data() + 49, 0, 8);
  EXPECT_NE(error(zero_nonce).find("nonce"), std::string::npos);
  std::vector<uint8_t> bad_name = bytes;
  bad_name[57 + 2 + 1] = 'x';  // "/xkai-shm-..."
  EXPECT_NE(error(bad_name).find("control_name"), std::string::npos);
  std::vector<uint8_t> long_memory = bytes;
  const size_t memory_at = 57 + 2 + k.control_name.size();
  long_memory[memory_at] = 0xff;
  EXPECT_NE(error(long_memory).find("memory_name"), std::string::npos);
  std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 50);
  EXPECT_NE(error(cut).find("host/nonce"), std::string::npos);
}

}  // namespace
}  // namespace ukai::rt::testing

namespace ukai::rt::testing {
namespace {

std::string Hex(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) s += {d[x >> 4], d[x & 15]};
  return s;
}
std::vector<uint8_t> Unhex(const std::string& s) {
  std::vector<uint8_t> b;
  for (size_t i = 0; i + 1 < s.size(); i += 2) b.push_back(std::stoi(s.substr(i, 2), nullptr, 16));
  return b;
}
std::string ReadLine(int fd) {
  std::string line;
  char ch;
  while (::read(fd, &ch, 1) == 1 && ch != '\n') line.push_back(ch);
  return line;
}

// The target in a child process: allocates a page, prints its key, then obeys one-letter
// commands: 'r' revokes (ChangeAccessId), 'q' checks what the parent did and exits 0 / 1.
[[noreturn]] void RunChildTarget(int to_parent, int from_parent) {
  auto rt = Runtime::Init(ModuleOptions("shm", nullptr));
  if (!rt.ok()) ::_exit(2);
  auto ctx = (*rt)->CreateContext({.name = "target"});
  auto rma = ctx.ok() ? Rma::Create(**ctx) : Result<std::unique_ptr<Rma>>(ctx.status());
  auto seg = rma.ok() ? (*rma)->Allocate(4096) : Result<RmaSegment>(rma.status());
  if (!seg.ok()) ::_exit(3);
  const std::string line = Hex(seg->key.Serialize()) + "\n";
  if (::write(to_parent, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    ::_exit(4);
  }
  int code = 5;
  for (char cmd; ::read(from_parent, &cmd, 1) == 1;) {
    if (cmd == 'r') {
      (*rma)->ChangeAccessId();
      if (::write(to_parent, "ok\n", 3) != 3) break;
    } else if (cmd == 'q') {
      const uint8_t* m = seg->memory.data();
      const uint64_t count =
          std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(seg->memory.data() + 8)).load();
      code = (m[0] == 1 && m[3] == 4 && count == 1000) ? 0 : 1;
      break;
    }
  }
  rma->reset();
  (void)(*rt)->Finalize();
  ::_exit(code);
}

TEST(RmaDirectProcesses, SequenceLockOfADeadHolderIsTakenOver) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // its pid is gone now
  std::atomic<int32_t> word{static_cast<int32_t>(child)};
  {
    internal::SequenceLock lock(&word);  // would spin forever without the take-over
    EXPECT_EQ(word.load(), static_cast<int32_t>(::getpid()));
  }
  EXPECT_EQ(word.load(), 0);
}

TEST(RmaDirectProcesses, AnotherProcessMapsTheSegmentAndIsRevoked) {
  int up[2], down[2];
  ASSERT_EQ(::pipe(up), 0);
  ASSERT_EQ(::pipe(down), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(up[0]);
    ::close(down[1]);
    RunChildTarget(up[1], down[0]);
  }
  ::close(up[1]);
  ::close(down[0]);
  Result<RemoteKey> key = RemoteKey::Parse(Unhex(ReadLine(up[0])));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  auto rt = Runtime::Init(ModuleOptions("shm", nullptr));
  ASSERT_TRUE(rt.ok());
  auto ctx = (*rt)->CreateContext({.name = "initiator"});
  ASSERT_TRUE(ctx.ok());
  auto rma = Rma::Create(**ctx);
  ASSERT_TRUE(rma.ok());
  Rma& a = **rma;
  const std::vector<uint8_t> data = {1, 2, 3, 4};
  ASSERT_TRUE(a.PutSync(*key, 0, data).ok());
  std::vector<uint8_t> back(4);
  ASSERT_TRUE(a.GetSync(*key, 0, back).ok());
  EXPECT_EQ(back, data);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(a.FetchOp(*key, 8, AtomicOpcode::kAdd, 1).ok());
  EXPECT_EQ(a.stats().direct_accesses, 1002u);
  // Revoked in the other process: refused on the software path, nothing written.
  ASSERT_EQ(::write(down[1], "r", 1), 1);
  EXPECT_EQ(ReadLine(up[0]), "ok");
  const std::vector<uint8_t> other = {9, 9, 9, 9};
  Status s = a.PutSync(*key, 0, other);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_EQ(a.stats().direct_fallbacks, 1u);
  ASSERT_EQ(::write(down[1], "q", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  ::close(up[0]);
  ::close(down[1]);
  rma->reset();
  EXPECT_TRUE((*rt)->Finalize().ok());
}

}  // namespace
}  // namespace ukai::rt::testing
