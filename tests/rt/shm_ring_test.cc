// Tests of the shm module's SPSC ring and segment: ordering, wraparound, full/empty, record
// size limits, two processes (fork) with and without the futex doorbell, peer death and
// clean-up of names.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "rt/modules/shm/shm_ring.h"
#include "rt/modules/shm/shm_segment.h"

namespace ukai::rt::shm {
namespace {

// A ring over zeroed anonymous memory, for single-process tests.
struct LocalRing {
  explicit LocalRing(size_t capacity)
      : control(new RingControl{}),
        data(static_cast<std::byte*>(std::aligned_alloc(kCacheLine, capacity))) {
    std::memset(data, 0, capacity);
    producer = RingProducer(control.get(), data, capacity);
    consumer = RingConsumer(control.get(), data, capacity);
  }
  ~LocalRing() { std::free(data); }
  std::unique_ptr<RingControl> control;
  std::byte* data;
  RingProducer producer;
  RingConsumer consumer;
};

// Deterministic message content: record `seq` of `size` bytes.
void Fill(std::byte* p, size_t size, uint64_t seq) {
  for (size_t i = 0; i < size; ++i) p[i] = static_cast<std::byte>((seq * 131 + i * 7) & 0xff);
}
bool Check(std::span<const std::byte> p, uint64_t seq) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<std::byte>((seq * 131 + i * 7) & 0xff)) return false;
  }
  return true;
}
size_t SizeOf(uint64_t seq, size_t max) { return 1 + (seq * 2654435761u) % max; }

bool Write(RingProducer& p, uint64_t seq, size_t size) {
  std::span<std::byte> area = p.TryReserve(size);
  if (area.empty()) return false;
  Fill(area.data(), size, seq);
  p.Commit(size, static_cast<uint32_t>(seq & 0xffff));
  return true;
}

TEST(ShmRingTest, EmptyRingHasNothing) {
  LocalRing r(4096);
  RecordView v;
  EXPECT_FALSE(r.consumer.Peek(&v));
}

TEST(ShmRingTest, OrderAndContentSurviveManyWraparounds) {
  LocalRing r(8192);
  uint64_t written = 0, read = 0;
  const uint64_t total = 20000;  // ~100x the ring at these sizes
  while (read < total) {
    while (written < total && Write(r.producer, written, SizeOf(written, 700))) ++written;
    RecordView v;
    int burst = 0;
    while (burst++ < 3 && r.consumer.Peek(&v)) {
      ASSERT_EQ(v.payload.size(), SizeOf(read, 700)) << "record " << read;
      ASSERT_EQ(v.flags, read & 0xffff);
      ASSERT_TRUE(Check(v.payload, read)) << "record " << read;
      r.consumer.Release();
      ++read;
    }
  }
  EXPECT_EQ(written, total);
  RecordView v;
  EXPECT_FALSE(r.consumer.Peek(&v));
}

// TryWriteLine (one-line records: small RSRs) mixed with TryReserve + Commit records of
// every size, over many laps of a small ring: order, sizes (0 to kFirstLinePayload), flags
// and content intact, and a full ring refuses a line record until the consumer releases.
TEST(ShmRingTest, LineRecordsMixWithOthersOverManyWraparounds) {
  LocalRing r(4096);
  uint64_t written = 0, read = 0;
  const uint64_t total = 20000;
  // Every third record a general one (up to 300 bytes), the rest line records.
  auto size_of = [](uint64_t seq) {
    return seq % 3 == 0 ? SizeOf(seq, 300) : seq % (kFirstLinePayload + 1);
  };
  auto write = [&](uint64_t seq) {
    const size_t n = size_of(seq);
    if (seq % 3 == 0) return Write(r.producer, seq, n);
    return r.producer.TryWriteLine(n, static_cast<uint32_t>(seq & 0xffff),
                                   [&](std::byte* p) { Fill(p, n, seq); });
  };
  bool refused_when_full = false;
  while (read < total) {
    while (written < total && write(written)) ++written;
    if (written < total && written % 3 != 0) refused_when_full = true;  // a line refused
    RecordView v;
    int burst = 0;
    while (burst++ < 5 && r.consumer.Peek(&v)) {
      ASSERT_EQ(v.payload.size(), size_of(read)) << "record " << read;
      ASSERT_EQ(v.flags, read & 0xffff);
      ASSERT_TRUE(Check(v.payload, read)) << "record " << read;
      r.consumer.Release();
      ++read;
    }
  }
  EXPECT_EQ(written, total);
  EXPECT_TRUE(refused_when_full);
  RecordView v;
  EXPECT_FALSE(r.consumer.Peek(&v));
}

TEST(ShmRingTest, FullRingRefusesThenAcceptsAfterRelease) {
  LocalRing r(4096);
  int n = 0;
  while (Write(r.producer, n, 100)) ++n;
  // 128-byte footprint, one spare line: 4096 / 128 - 1 records fit.
  EXPECT_EQ(n, 4096 / 128 - 1);
  RecordView v;
  ASSERT_TRUE(r.consumer.Peek(&v));
  EXPECT_TRUE(Check(v.payload, 0));
  EXPECT_FALSE(Write(r.producer, n, 100));  // not yet released
  r.consumer.Release();
  EXPECT_TRUE(Write(r.producer, n, 100));
  for (int i = 1; i <= n; ++i) {
    ASSERT_TRUE(r.consumer.Peek(&v));
    EXPECT_TRUE(Check(v.payload, i));
    r.consumer.Release();
  }
  EXPECT_FALSE(r.consumer.Peek(&v));
}

TEST(ShmRingTest, PeekWithoutReleaseReturnsSameRecord) {
  LocalRing r(4096);
  ASSERT_TRUE(Write(r.producer, 1, 10));
  ASSERT_TRUE(Write(r.producer, 2, 10));
  RecordView a, b;
  ASSERT_TRUE(r.consumer.Peek(&a));
  ASSERT_TRUE(r.consumer.Peek(&b));
  EXPECT_EQ(a.payload.data(), b.payload.data());
  EXPECT_EQ(a.flags, 1u);
}

TEST(ShmRingTest, LargestRecordFitsAndLargerIsRefused) {
  LocalRing r(65536);
  const size_t max = MaxRecordPayload(65536);
  EXPECT_TRUE(r.producer.TryReserve(max + 1).empty());
  // Shift the write position so the large record must wrap with a skip record.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Write(r.producer, i, 3000));
    RecordView v;
    ASSERT_TRUE(r.consumer.Peek(&v));
    r.consumer.Release();
  }
  for (int round = 0; round < 6; ++round) {
    ASSERT_TRUE(Write(r.producer, 100 + round, max)) << "round " << round;
    RecordView v;
    ASSERT_TRUE(r.consumer.Peek(&v));
    ASSERT_EQ(v.payload.size(), max);
    EXPECT_TRUE(Check(v.payload, 100 + round));
    r.consumer.Release();
  }
}

TEST(ShmRingTest, CommitShorterThanReserved) {
  LocalRing r(4096);
  std::span<std::byte> area = r.producer.TryReserve(1000);
  ASSERT_FALSE(area.empty());
  Fill(area.data(), 10, 9);
  r.producer.Commit(10, 0);
  ASSERT_TRUE(Write(r.producer, 10, 20));
  RecordView v;
  ASSERT_TRUE(r.consumer.Peek(&v));
  EXPECT_EQ(v.payload.size(), 10u);
  EXPECT_TRUE(Check(v.payload, 9));
  r.consumer.Release();
  ASSERT_TRUE(r.consumer.Peek(&v));
  EXPECT_TRUE(Check(v.payload, 10));
}

TEST(ShmRingTest, StaleBytesOfOlderLapAreNotMistakenForRecords) {
  // Payloads full of values that look like future tags must not fool the consumer.
  LocalRing r(4096);
  for (uint64_t lap = 0; lap < 50; ++lap) {
    std::span<std::byte> area = r.producer.TryReserve(1500);
    ASSERT_FALSE(area.empty());
    for (size_t i = 0; i + 8 <= area.size(); i += 8) {
      const uint64_t fake = lap * 2048 + i + 1;
      std::memcpy(area.data() + i, &fake, 8);
    }
    r.producer.Commit(1500, 0);
    RecordView v;
    ASSERT_TRUE(r.consumer.Peek(&v));
    r.consumer.Release();
    ASSERT_FALSE(r.consumer.Peek(&v)) << "phantom record after lap " << lap;
  }
}

// Runs `child` in a forked process; returns its exit status (0 = success).
template <typename F>
int RunChild(F child, pid_t* pid_out = nullptr) {
  const pid_t pid = fork();
  if (pid == 0) _exit(child());
  if (pid_out != nullptr) {
    *pid_out = pid;
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Two processes stream `total` records one way and echo a checksum back. `light`: the
// producer (this process) uses light barriers (shm_ring.h); the sleepy consumer then waits
// up to 2 s per sleep, and a sleep that lasts that long (a lost wake-up) fails the child.
void StreamBetweenProcesses(bool sleepy_consumer, bool light = false) {
  auto seg = ShmSegment::Create(65536);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  const std::string name = (*seg)->name();
  const uint64_t total = 20000;  // ~250 laps of the 64 KiB ring
  pid_t pid = 0;
  RunChild(
      [&]() -> int {
        auto mine = ShmSegment::Attach(name);
        if (!mine.ok()) return 10;
        RingConsumer in = (*mine)->MakeConsumer();
        RingProducer out = (*mine)->MakeProducer();
        for (uint64_t seq = 0; seq < total; ++seq) {
          RecordView v;
          while (!in.Peek(&v)) {
            if (sleepy_consumer && in.PrepareWait()) {
              const auto t0 = std::chrono::steady_clock::now();
              in.WaitFutex(light ? 2'000'000'000 : 50'000'000);
              in.EndWait();
              if (light &&
                  std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(1900) &&
                  !in.Peek(&v)) {
                return 12;  // slept through a record: a lost wake-up
              }
            }
          }
          if (v.payload.size() != SizeOf(seq, 1500) || !Check(v.payload, seq)) return 11;
          in.Release();
        }
        const std::byte done[8] = {};
        while (!out.TryWrite(done, {}, 7)) {
        }
        if (out.NeedsWake()) out.FutexWake();
        return 0;
      },
      &pid);
  RingProducer out = (*seg)->MakeProducer();
  if (light) out.UseLightBarrier();
  RingConsumer in = (*seg)->MakeConsumer();
  uint64_t wakes = 0;
  for (uint64_t seq = 0; seq < total; ++seq) {
    while (!Write(out, seq, SizeOf(seq, 1500))) {
    }
    if (out.NeedsWake()) {
      out.FutexWake();
      ++wakes;
    }
    if (sleepy_consumer && seq % 1000 == 0) {
      // Let the consumer drain the ring and announce that it sleeps (bounded: a busy machine
      // may not run it within a fixed pause), then wake it.
      bool asleep = false;
      for (int i = 0; i < 400000 && !(asleep = out.NeedsWake()); ++i) usleep(5);
      if (asleep) {
        out.FutexWake();
        ++wakes;
      }
    }
  }
  RecordView v;
  while (!in.Peek(&v)) {
  }
  EXPECT_EQ(v.flags, 7u);
  EXPECT_EQ(Wait(pid), 0);
  if (sleepy_consumer) {
    EXPECT_GT(wakes, 0u);
  }
  EXPECT_EQ((*seg)->peer_pid(), pid);
}

TEST(ShmSegmentTest, TwoProcessesStreamInOrder) { StreamBetweenProcesses(false); }

TEST(ShmSegmentTest, TwoProcessesWithFutexDoorbell) { StreamBetweenProcesses(true); }

// Light barriers: the producer's tag stores are plain release stores and its check of the
// sleep flag a plain load; the consumer's membarrier before it sleeps must still make every
// wake-up arrive (a lost one would stall the child for 2 s: it fails instead).
TEST(ShmSegmentTest, TwoProcessesWithLightBarriersLoseNoWakeUp) {
  if (!EnableLightBarriers()) GTEST_SKIP() << "no membarrier GLOBAL_EXPEDITED here";
  StreamBetweenProcesses(true, /*light=*/true);
}

bool NameExists(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

TEST(ShmSegmentTest, UnlinkRemovesNameAndDestructorCleansUp) {
  std::string name;
  {
    auto seg = ShmSegment::Create(4096);
    ASSERT_TRUE(seg.ok());
    name = (*seg)->name();
    EXPECT_TRUE(NameExists(name));
    auto other = ShmSegment::Attach(name);
    ASSERT_TRUE(other.ok());
    EXPECT_TRUE((*seg)->Unlink().ok());
    EXPECT_FALSE(NameExists(name));
    EXPECT_FALSE(ShmSegment::Attach(name).ok());
    // Both mappings still work after the name is gone.
    RingProducer p = (*seg)->MakeProducer();
    RingConsumer c = (*other)->MakeConsumer();
    ASSERT_TRUE(Write(p, 5, 50));
    RecordView v;
    ASSERT_TRUE(c.Peek(&v));
    EXPECT_TRUE(Check(v.payload, 5));
  }
  {
    auto seg = ShmSegment::Create(4096);
    ASSERT_TRUE(seg.ok());
    name = (*seg)->name();
  }
  EXPECT_FALSE(NameExists(name)) << "destructor must unlink a name never handed off";
}

TEST(ShmSegmentTest, AttachRejectsBadNamesAndHeaders) {
  EXPECT_EQ(ShmSegment::Attach("/etc/passwd").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ShmSegment::Attach("nope").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ShmSegment::Attach("/ukai-shm-1-doesnotexist").status().code(),
            StatusCode::kUnavailable);
  // A ukai-shm name with garbage content.
  const std::string bad = "/ukai-shm-" + std::to_string(getpid()) + "-badheader";
  int fd = shm_open(bad.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  close(fd);
  EXPECT_EQ(ShmSegment::Attach(bad).status().code(), StatusCode::kParseError);
  shm_unlink(bad.c_str());
  EXPECT_EQ(ShmSegment::Create(5000).status().code(), StatusCode::kInvalidArgument);
}

TEST(ShmSegmentTest, PeerDeathIsDetectedAndOrderlyCloseIsSeen) {
  auto seg = ShmSegment::Create(4096);
  ASSERT_TRUE(seg.ok());
  const std::string name = (*seg)->name();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = 0;
  RunChild(
      [&]() -> int {
        auto mine = ShmSegment::Attach(name);
        if (!mine.ok()) return 10;
        char c = 1;
        if (write(ready[1], &c, 1) != 1) return 11;
        pause();  // killed by the parent
        return 0;
      },
      &pid);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  ASSERT_EQ((*seg)->peer_pid(), pid);
  PeerWatch watch(pid);
  EXPECT_TRUE(watch.Alive());
  EXPECT_FALSE((*seg)->PeerClosed());
  kill(pid, SIGKILL);
  // The zombie is not reaped yet: it must already count as dead.
  for (int i = 0; i < 1000 && watch.Alive(); ++i) usleep(1000);
  EXPECT_FALSE(watch.Alive());
  EXPECT_EQ(Wait(pid), 128 + SIGKILL);

  auto other = ShmSegment::Attach(name);
  ASSERT_TRUE(other.ok());
  (*other)->MarkClosed();
  EXPECT_TRUE((*seg)->PeerClosed());
}

TEST(ShmSegmentTest, SweepRemovesNamesOfDeadCreators) {
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const int status = RunChild([&]() -> int {
    auto seg = ShmSegment::Create(4096);
    if (!seg.ok()) return 10;
    const std::string& n = (*seg)->name();
    if (write(pipefd[1], n.data(), n.size()) != static_cast<ssize_t>(n.size())) return 11;
    kill(getpid(), SIGKILL);  // crash before anyone attached: the name stays behind
    return 12;
  });
  EXPECT_EQ(status, 128 + SIGKILL);
  char buf[256] = {};
  close(pipefd[1]);
  ASSERT_GT(read(pipefd[0], buf, sizeof buf - 1), 0);
  close(pipefd[0]);
  const std::string name = buf;
  EXPECT_TRUE(NameExists(name));
  EXPECT_GE(SweepStaleSegments(), 1);
  EXPECT_FALSE(NameExists(name));
  // Our own live segments are left alone.
  auto mine = ShmSegment::Create(4096);
  ASSERT_TRUE(mine.ok());
  SweepStaleSegments();
  EXPECT_TRUE(NameExists((*mine)->name()));
}

}  // namespace
}  // namespace ukai::rt::shm
