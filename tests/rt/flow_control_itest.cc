// Flow control with a stalled receiver (issue 8): a peer process is stopped (SIGSTOP) for
// 10 s while this process sends 64 KiB RSRs to it as fast as it can over tcp or shm. The
// sender's memory (RSS) must stay under a stated bound — the send queue is capped at
// send_queue_bytes per peer and SendRsr blocks — and after SIGCONT every RSR SendRsr
// accepted must arrive, in order, before Finalize returns OK.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

constexpr uint64_t kQueueLimit = uint64_t{8} << 20;  // send_queue_bytes of the sender
constexpr size_t kPayload = 64 << 10;
// The stated bound on the sender's RSS growth during the stall: the queue limit, one frame
// over it, the shm ring we write into (4 MiB, shared memory touched by us) and the kernel's
// and allocator's slack. Without flow control the sender grew by gigabytes.
// Under AddressSanitizer freed blocks stay resident in its quarantine (256 MiB by
// default) before they are reused: that much more.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSanitizerSlack = uint64_t{256} << 20;
#else
constexpr uint64_t kSanitizerSlack = 0;
#endif
constexpr uint64_t kRssBound = kQueueLimit + (32 << 20) + kSanitizerSlack;

// This process's resident set size in bytes (VmRSS of /proc/self/status).
uint64_t RssBytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      uint64_t kib = 0;
      in >> kib;
      return kib << 10;
    }
    std::getline(in, key);
  }
  return 0;
}

class StalledReceiver : public ::testing::TestWithParam<const char*> {};

TEST_P(StalledReceiver, MemoryStaysBoundedAndEverythingArrives) {
  const std::string module = GetParam();
  PeerProcess peer({"--ukai-modules=" + module, "--ukai-bootstrap=single",
                    "--ukai-param=tcp.listen=127.0.0.1:0"});
  ASSERT_TRUE(peer.startpoint().valid()) << peer.error();
  RuntimeOptions o = ModuleOptions(module, nullptr);
  o.send_queue_bytes = kQueueLimit;
  o.flush_timeout_ms = 30000;
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_EQ(*(*rt)->SelectModule(peer.startpoint()), module);

  const uint64_t base_rss = RssBytes();
  std::atomic<uint64_t> accepted{0};
  std::atomic<bool> stop{false}, failed{false};
  std::thread sender([&] {
    std::vector<uint8_t> bytes(kPayload, 0x5a);
    while (!stop.load()) {
      Buffer b;
      b.PutU64(accepted.load());
      b.PutBytes(bytes);
      if (!(*rt)->SendRsr(std::move(b), peer.startpoint(), HandlerId::Of("sink")).ok()) {
        failed = true;
        return;
      }
      accepted.fetch_add(1);
    }
  });
  // Let the stream run, then stop the receiver for 10 s.
  ASSERT_TRUE(WaitFor([&] { return accepted.load() > 1000; }));
  peer.Signal(SIGSTOP);
  const auto stall_start = std::chrono::steady_clock::now();
  const uint64_t before_stall = accepted.load();
  uint64_t max_rss = base_rss;
  while (std::chrono::steady_clock::now() - stall_start < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    max_rss = std::max(max_rss, RssBytes());
  }
  const uint64_t during_stall = accepted.load() - before_stall;
  peer.Signal(SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the stream resumes
  stop = true;
  sender.join();
  ASSERT_FALSE(failed.load()) << "SendRsr failed";
  std::printf(
      "[ %s ] accepted %llu RSRs of %zu B (%llu during the 10 s stall), RSS %llu MiB, "
      "max growth %.1f MiB (bound %llu MiB)\n",
      module.c_str(), static_cast<unsigned long long>(accepted.load()), kPayload,
      static_cast<unsigned long long>(during_stall),
      static_cast<unsigned long long>(base_rss >> 20), (max_rss - base_rss) / 1048576.0,
      static_cast<unsigned long long>(kRssBound >> 20));
  EXPECT_LT(max_rss - base_rss, kRssBound);
  // During the stall only what fits the queue, the ring or the socket buffers was accepted.
  EXPECT_LT(during_stall * kPayload, kQueueLimit + (64 << 20));

  ASSERT_TRUE((*rt)->SendRsr(Buffer(), peer.startpoint(), HandlerId::Of("report")).ok());
  const std::string report = peer.ReadLine();
  EXPECT_EQ(report, "sink " + std::to_string(accepted.load()) + " bad 0");
  ASSERT_TRUE((*rt)->SendRsr(Buffer(), peer.startpoint(), HandlerId::Of("quit")).ok());
  const Status fin = (*rt)->Finalize();
  EXPECT_TRUE(fin.ok()) << fin.ToString();
  EXPECT_EQ(peer.Wait(), 0);
}

INSTANTIATE_TEST_SUITE_P(Modules, StalledReceiver, ::testing::Values("tcp", "shm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace ukai::rt::testing
