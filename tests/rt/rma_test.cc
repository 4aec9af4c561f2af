// RMA conformance over every module of conformance_modules.h: three runtimes of this process,
// each with one context and an Rma; runtime 1 is the target, 0 and 2 initiate.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "conformance_modules.h"
#include "rma_test_util.h"
#include "rt/rma/rma_core.h"
#include "rt/rma/rma_wire.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

class RmaConformance : public ::testing::TestWithParam<ConformanceModule> {
 protected:
  void SetUp() override {
    fabric_ = NewInprocFabric();
    for (int i = 0; i < 3; ++i) {
      auto ctx =
          StartWithContext(ModuleOptions(GetParam().name, fabric_), "c" + std::to_string(i), &rts_);
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      auto rma = Rma::Create(**ctx);
      ASSERT_TRUE(rma.ok()) << rma.status().ToString();
      rma_.push_back(std::move(*rma));
    }
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  }
  void TearDown() override {
    rma_.clear();
    // The target first: its Finalize flushes the answers it still holds for the initiators
    // (e.g. the error answer to a crafted request) while they are alive to take them;
    // finalized after them, it would rightly report those answers lost.
    for (int i : {1, 0, 2}) {
      Status st = rts_[i]->Finalize();
      EXPECT_TRUE(st.ok()) << "runtime " << i << ": " << st.ToString();
    }
  }
  // A key that went through its byte form, as a peer would get it.
  RemoteKey Exchange(const RemoteKey& k) {
    Result<RemoteKey> p = RemoteKey::Parse(k.Serialize());
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : RemoteKey{};
  }
  // Sends a hand-made request from runtime `from` to the target of `key`.
  void SendCrafted(int from, const RemoteKey& key, internal::RmaRequest r) {
    const size_t n = internal::RequestSize(r);
    Buffer b(n);
    b.block().Resize(Buffer::kHeadroom + n);
    internal::EncodeRequest(r, b.block().data() + Buffer::kHeadroom);
    ASSERT_TRUE(rts_[from]->SendRsr(std::move(b), key.route, internal::kRmaRequestHandler).ok());
  }
  internal::RmaRequest HonestPut(int from, const RemoteKey& key, std::span<const uint8_t> data) {
    internal::RmaRequest r;
    r.op = internal::RmaWireOp::kPut;
    r.flags = internal::kReqHasReturn;
    route_ = rts_[from]
                 ->FindContext(rma_[from]->process_id().context)
                 ->FindEndpoint(kRmaEndpointId)
                 ->MakeStartpoint()
                 .Serialize();
    r.return_route = route_;
    r.segment = key.segment;
    r.op_id = 999999;
    r.dest = key.process;
    r.dest_access_id = key.access_id;
    r.init = rma_[from]->process_id();
    r.init_access_id = rma_[from]->access_id();
    r.length = static_cast<uint32_t>(data.size());
    r.data = data;
    return r;
  }

  std::shared_ptr<InprocFabric> fabric_;
  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<std::unique_ptr<Rma>> rma_;
  std::vector<uint8_t> route_;
  size_t page_ = 4096;
};

TEST_P(RmaConformance, PutGetAtBoundarySizesAndOffsets) {
  const size_t p = page_;
  const size_t large = (1u << 20) + 3;  // 64 MiB: rma_large_itest.cc
  Pages mem(large + 2 * p);
  RemoteKey key = Exchange(*rma_[1]->Register(mem.span()));
  const std::vector<size_t> sizes = {0, 1, p - 1, p, p + 1, 4096, 3 * 4096, 16 * 4096, large};
  const std::vector<size_t> offsets = {0, 1, p - 1, p};
  uint32_t seed = 1;
  for (size_t size : sizes) {
    for (size_t off : offsets) {
      if (size == large && off != p - 1) continue;
      SCOPED_TRACE("size " + std::to_string(size) + " offset " + std::to_string(off));
      const std::vector<uint8_t> data = Pattern(size, seed++);
      ASSERT_TRUE(rma_[0]->PutSync(key, off, data).ok());
      ASSERT_TRUE(size == 0 || std::memcmp(mem.data + off, data.data(), size) == 0);
      std::vector<uint8_t> back(size, 0xEE);
      ASSERT_TRUE(rma_[2]->GetSync(key, off, back).ok());
      ASSERT_EQ(back, data);
    }
  }
  EXPECT_GT(rma_[1]->stats().fast_path, 0u);
  EXPECT_EQ(rma_[1]->stats().boundary_rejected, 0u);
  // Out of the key's range: refused at send.
  std::vector<uint8_t> one(1);
  EXPECT_EQ(rma_[0]->Put(key, mem.size, one).status().code(), StatusCode::kOutOfRange);
}

TEST_P(RmaConformance, PacketsAreAtMost4KiBAndNeverCrossAPage) {
  Pages mem(8 * page_);
  RemoteKey key = *rma_[1]->Register(mem.span());
  const uint64_t before = rma_[0]->stats().packets_sent;
  // page-1 .. page-1 + 3 pages: pieces 1, page, page, page-1 -> 4 packets (page <= 4 KiB).
  std::vector<uint8_t> data = Pattern(3 * page_, 5);
  ASSERT_TRUE(rma_[0]->PutSync(key, page_ - 1, data).ok());
  const uint64_t expect = page_ <= 4096 ? 4 : (3 * page_ + 4095) / 4096 + 1;
  EXPECT_EQ(rma_[0]->stats().packets_sent - before, expect);
  // A crafted packet across a page boundary is refused at the target; nothing written.
  std::vector<uint8_t> two = {7, 7};
  internal::RmaRequest r = HonestPut(0, key, two);
  r.offset = page_ - 1;
  std::memset(mem.data, 0, mem.size);
  SendCrafted(0, key, r);
  ASSERT_TRUE(WaitFor([&] { return rma_[1]->stats().boundary_rejected == 1; }));
  EXPECT_EQ(mem.data[page_ - 1], 0);
  EXPECT_EQ(mem.data[page_], 0);
}

TEST_P(RmaConformance, ForgedInitiatorIdentityIsRefused) {
  Pages mem(page_);
  RemoteKey key = *rma_[1]->Register(mem.span());
  std::vector<uint8_t> data = {1, 2, 3};
  internal::RmaRequest r = HonestPut(0, key, data);
  r.init = rma_[2]->process_id();  // runtime 0 pretends to be runtime 2
  r.init_access_id = rma_[2]->access_id();
  SendCrafted(0, key, r);
  ASSERT_TRUE(WaitFor([&] { return rma_[1]->stats().forged_rejected == 1; }));
  EXPECT_EQ(mem.data[0], 0);
  // The same request with its true identity is served.
  SendCrafted(0, key, HonestPut(0, key, data));
  ASSERT_TRUE(WaitFor([&] { return mem.data[2] == 3; }));
}

TEST_P(RmaConformance, TranslationFaultWithoutHandlerIsAClearError) {
  RemoteKey key = *rma_[1]->RegisterLazy(2 * page_);
  std::vector<uint8_t> data = {9};
  Status s = rma_[0]->PutSync(key, 5, data);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("translation fault"), std::string::npos) << s.ToString();
  EXPECT_EQ(rma_[1]->stats().fault_errors, 1u);
}

TEST_P(RmaConformance, TranslationFaultHandlerSuppliesMemoryAndTheAccessCompletes) {
  Pages backing(2 * page_);
  std::atomic<int> faults{0};
  rma_[1]->SetFaultHandler([&](uint32_t, uint64_t length) -> Result<std::span<uint8_t>> {
    ++faults;
    EXPECT_EQ(length, 2 * page_);
    return backing.span();
  });
  RemoteKey key = *rma_[1]->RegisterLazy(2 * page_);
  std::vector<uint8_t> data = Pattern(page_ + 10, 3);
  ASSERT_TRUE(rma_[0]->PutSync(key, 7, data).ok());
  EXPECT_EQ(std::memcmp(backing.data + 7, data.data(), data.size()), 0);
  std::vector<uint8_t> back(data.size());
  ASSERT_TRUE(rma_[2]->GetSync(key, 7, back).ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(faults.load(), 1);  // once: the segment is backed from then on
  EXPECT_EQ(rma_[1]->stats().translation_faults, 1u);
}

TEST_P(RmaConformance, ProcessIdMismatchIsResolvedInSoftwareAndCompletes) {
  Pages mem(page_);
  RemoteKey key = *rma_[1]->Register(mem.span());
  rma_[1]->SetScheduled(false);
  const uint64_t fast = rma_[1]->stats().fast_path;
  std::vector<uint8_t> data = {4, 5, 6};
  ASSERT_TRUE(rma_[0]->PutSync(key, 100, data).ok());
  EXPECT_EQ(mem.data[102], 6);
  EXPECT_EQ(rma_[1]->stats().process_mismatch, 1u);
  EXPECT_EQ(rma_[1]->stats().fast_path, fast);
  rma_[1]->SetScheduled(true);
  ASSERT_TRUE(rma_[0]->PutSync(key, 0, data).ok());
  EXPECT_EQ(rma_[1]->stats().fast_path, fast + 1);
}

TEST_P(RmaConformance, AccessIdMismatchIsRejectedReportedAndMayBlock) {
  Pages mem(4 * page_);
  RemoteKey old_key = Exchange(*rma_[1]->Register(mem.span()));
  std::atomic<int> told{0};
  ProcessId offender;
  uint32_t offender_access = 0;
  rma_[1]->SetProtectionHandler([&](const ProcessId& who, uint32_t access) {
    offender = who;
    offender_access = access;
    ++told;
    return true;  // block it
  });
  rma_[1]->ChangeAccessId();  // revokes old_key
  std::vector<uint8_t> data = Pattern(3 * page_, 8);
  Status s = rma_[0]->PutSync(old_key, 0, data);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("access ID mismatch"), std::string::npos) << s.ToString();
  for (size_t i = 0; i < mem.size; ++i) ASSERT_EQ(mem.data[i], 0) << "partial write at " << i;
  EXPECT_GE(told.load(), 1);
  EXPECT_EQ(offender, rma_[0]->process_id());
  EXPECT_EQ(offender_access, rma_[0]->access_id());
  // Blocked: even a valid key is refused now; others are still served.
  RemoteKey fresh = *rma_[1]->KeyOf(old_key.segment);
  Status blocked = rma_[0]->PutSync(fresh, 0, data);
  EXPECT_NE(blocked.message().find("blocked"), std::string::npos) << blocked.ToString();
  EXPECT_GE(rma_[1]->stats().blocked_rejected, 1u);
  ASSERT_TRUE(rma_[2]->PutSync(fresh, 0, data).ok());
  rma_[1]->Unblock(rma_[0]->process_id());
  EXPECT_TRUE(rma_[0]->PutSync(fresh, 0, data).ok());
}

TEST_P(RmaConformance, CompletionFlagsFencesAndFlush) {
  Pages mem(64 * 1024);
  RemoteKey key = *rma_[1]->Register(mem.span());
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<std::atomic<uint64_t>> flags(16);
  for (int i = 0; i < 16; ++i) chunks.push_back(Pattern(4000, 100 + i));
  for (int i = 0; i < 16; ++i) {
    flags[i].store(0);
    ASSERT_TRUE(rma_[0]->Put(key, 4000 * i, chunks[i], &flags[i]).ok());
  }
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(rma_[0]->WaitFlag(flags[i]).ok());
    EXPECT_EQ(flags[i].load(), 1u);
    EXPECT_EQ(std::memcmp(mem.data + 4000 * i, chunks[i].data(), 4000), 0);
  }
  // Fence: every earlier put to the target is acked before the get is issued.
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(rma_[0]->Put(key, 4000 * i, chunks[15 - i]).ok());
  ASSERT_TRUE(rma_[0]->Fence(key.process).ok());
  EXPECT_EQ(std::memcmp(mem.data, chunks[15].data(), 4000), 0);
  // A failed put sets its flag to 2; Flush reports the error.
  std::atomic<uint64_t> bad{0};
  rma_[1]->ChangeAccessId();
  ASSERT_TRUE(rma_[0]->Put(key, 0, chunks[0], &bad).ok());
  ASSERT_TRUE(rma_[0]->WaitFlag(bad).ok());
  EXPECT_EQ(bad.load(), 2u);
  EXPECT_FALSE(rma_[0]->Flush().ok());
  EXPECT_TRUE(rma_[0]->Flush().ok());  // reported once
}

TEST_P(RmaConformance, AtomicsUnderContentionGiveExactTotals) {
  Pages mem(page_);
  RemoteKey key = Exchange(*rma_[1]->Register(mem.span()));
  constexpr int kThreadsPerInitiator = 2, kIncrements = 300;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0}, finished{0};
  for (int who : {0, 2}) {
    for (int t = 0; t < kThreadsPerInitiator; ++t) {
      threads.emplace_back([&, who] {
        for (int i = 0; i < kIncrements; ++i) {
          if (!rma_[who]->FetchOp(key, 0, AtomicOpcode::kAdd, 1).ok()) ++errors;
          if (!rma_[who]->FetchOp(key, 8, AtomicOpcode::kAdd, 1, 4).ok()) ++errors;
          // CAS loop on word 16.
          uint64_t seen = 0;
          for (;;) {
            Result<uint64_t> old = rma_[who]->CompareSwap(key, 16, seen, seen + 1);
            if (!old.ok()) {
              ++errors;
              break;
            }
            if (*old == seen) break;
            seen = *old;
          }
        }
        ++finished;
      });
    }
  }
  // Local atomics on the same word at the same time.
  std::atomic_ref<uint64_t> local(*reinterpret_cast<uint64_t*>(mem.data));
  for (int i = 0; i < kIncrements; ++i) local.fetch_add(1);
  // Waiting in WaitFor says so to the sim module's machine (a bare join holds it).
  WaitFor([&] { return finished.load() == int(threads.size()); }, std::chrono::seconds(60));
  for (auto& t : threads) t.join();
  const uint64_t n = 2 * kThreadsPerInitiator * kIncrements;
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(local.load(), n + kIncrements);
  EXPECT_EQ(std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(mem.data + 8)).load(), n);
  EXPECT_EQ(std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(mem.data + 16)).load(), n);
}

TEST_P(RmaConformance, EveryFetchOpAndWidth) {
  Pages mem(page_);
  RemoteKey key = *rma_[1]->Register(mem.span());
  auto* w = reinterpret_cast<uint64_t*>(mem.data);
  struct Case {
    AtomicOpcode code;
    uint64_t start, operand, want;
  };
  const Case cases[] = {{AtomicOpcode::kAdd, 5, 3, 8},
                        {AtomicOpcode::kAnd, 0xF0F, 0xFF, 0xF},
                        {AtomicOpcode::kOr, 0xF00, 0xF, 0xF0F},
                        {AtomicOpcode::kXor, 0xFF, 0xF, 0xF0},
                        {AtomicOpcode::kSwap, 1, 42, 42},
                        {AtomicOpcode::kMin, 10, 4, 4},
                        {AtomicOpcode::kMin, 3, 4, 3},
                        {AtomicOpcode::kMax, 10, 4, 10},
                        {AtomicOpcode::kMax, 3, 1ull << 40, 1ull << 40}};
  for (const Case& c : cases) {
    w[0] = c.start;
    Result<uint64_t> old = rma_[0]->FetchOp(key, 0, c.code, c.operand);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ(*old, c.start);
    EXPECT_EQ(w[0], c.want) << int(c.code);
  }
  auto* h = reinterpret_cast<uint32_t*>(mem.data + 64);
  h[0] = 0xFFFFFFFF;
  h[1] = 77;
  EXPECT_EQ(*rma_[0]->FetchOp(key, 64, AtomicOpcode::kAdd, 1, 4), 0xFFFFFFFFu);
  EXPECT_EQ(h[0], 0u);  // 32-bit wrap, the next word untouched
  EXPECT_EQ(h[1], 77u);
  EXPECT_EQ(*rma_[0]->CompareSwap(key, 68, 77, 78, 4), 77u);
  EXPECT_EQ(*rma_[0]->CompareSwap(key, 68, 77, 99, 4), 78u);  // failed CAS: unchanged
  EXPECT_EQ(h[1], 78u);
  // Misaligned or outside: an error, nothing done.
  EXPECT_EQ(rma_[0]->FetchOp(key, 3, AtomicOpcode::kAdd, 1).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(rma_[0]->FetchOp(key, page_, AtomicOpcode::kAdd, 1).status().code(),
            StatusCode::kOutOfRange);
}

TEST_P(RmaConformance, AtomicSequenceRunsAsOne) {
  Pages mem(page_);
  RemoteKey key = *rma_[1]->Register(mem.span());
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, errors{0}, finished{0};
  // Writers bump both words in one request; a reader fetches both in one request.
  std::vector<std::thread> writers;
  for (int who : {0, 2}) {
    writers.emplace_back([&, who] {
      const AtomicOp both[2] = {{AtomicOpcode::kAdd, 8, 0, 1, 0}, {AtomicOpcode::kAdd, 8, 8, 1, 0}};
      uint64_t old[2];
      for (int i = 0; i < 300; ++i) {
        Result<RmaOp> op = rma_[who]->Atomic(key, both, old);
        if (!op.ok() || !rma_[who]->Wait(*op).ok()) ++errors;
      }
      ++finished;
    });
  }
  std::thread reader([&] {
    const AtomicOp read[2] = {{AtomicOpcode::kAdd, 8, 0, 0, 0}, {AtomicOpcode::kAdd, 8, 8, 0, 0}};
    uint64_t v[2];
    while (!stop.load()) {
      Result<RmaOp> op = rma_[0]->Atomic(key, read, v);
      if (!op.ok() || !rma_[0]->Wait(*op).ok()) ++errors;
      if (v[0] != v[1]) ++torn;
    }
    ++finished;
  });
  WaitFor([&] { return finished.load() == 2; }, std::chrono::seconds(60));  // as above
  for (auto& t : writers) t.join();
  stop.store(true);
  WaitFor([&] { return finished.load() == 3; }, std::chrono::seconds(60));
  reader.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(reinterpret_cast<uint64_t*>(mem.data)[0], 600u);
  EXPECT_EQ(reinterpret_cast<uint64_t*>(mem.data)[1], 600u);
}

INSTANTIATE_TEST_SUITE_P(Modules, RmaConformance, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(RmaKey, SerialisesAndRejectsBadBytes) {
  auto fabric = NewInprocFabric();
  auto rt = Runtime::Init(ModuleOptions("inproc", fabric));
  ASSERT_TRUE(rt.ok());
  auto ctx = (*rt)->CreateContext({});
  auto rma = Rma::Create(**ctx);
  ASSERT_TRUE(rma.ok());
  EXPECT_FALSE(Rma::Create(**ctx).ok());  // one per context
  std::vector<uint8_t> mem(100);
  RemoteKey k = *(*rma)->Register(mem);
  std::vector<uint8_t> bytes = k.Serialize();
  Result<RemoteKey> p = RemoteKey::Parse(bytes);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->process, k.process);
  EXPECT_EQ(p->access_id, k.access_id);
  EXPECT_EQ(p->segment, k.segment);
  EXPECT_EQ(p->base, k.base);
  EXPECT_EQ(p->length, 100u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(RemoteKey::Parse({bytes.data(), n}).ok()) << n;
  }
  bytes.push_back(0);
  EXPECT_NE(RemoteKey::Parse(bytes).status().message().find("trailing"), std::string::npos);
  // An empty segment: a 0-byte put and get succeed (to this very context), 1 byte does not.
  RemoteKey empty = *(*rma)->Register({});
  EXPECT_TRUE((*rma)->PutSync(empty, 0, {}).ok());
  EXPECT_TRUE((*rma)->GetSync(empty, 0, {}).ok());
  std::vector<uint8_t> one(1);
  EXPECT_EQ((*rma)->PutSync(empty, 0, one).code(), StatusCode::kOutOfRange);
  rma->reset();
  EXPECT_TRUE((*rt)->Finalize().ok());
}

}  // namespace
}  // namespace ukai::rt::testing
