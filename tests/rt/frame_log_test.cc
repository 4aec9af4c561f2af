// FrameLog (src/rt/core/frame_log.h): the classes of the frames sent to one peer, in the
// channel's order. With an object that lends its send lock (the shm channel) the log records
// under that lock, in the same critical section as the object's send: several threads
// sending frames and in-place RSRs of both classes must leave a log whose newest frames
// classify exactly as the object's own record of what it took, in its order.
#include "rt/core/frame_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace ukai::rt::internal {
namespace {

// What a fake object took, in its order: the class (frame byte kHeaderSize, or the route's
// handler for in-place RSRs) and the bytes the log counts.
struct Taken {
  FrameClass cls;
  uint64_t bytes;
};

class FakeObject final : public CommObject {
 public:
  explicit FakeObject(bool lend) {
    sends_in_place_ = true;
    if (lend) send_lock_ = &mu_;
  }
  Status Send(ByteBlock&& frame) override {
    EXPECT_EQ(send_lock(), nullptr);
    std::lock_guard<SpinMutex> lock(mu_);
    Take(frame);
    return Status::Ok();
  }
  Status PrepareSend(ByteBlock& frame, uint32_t* token) override {
    *token = 7;
    if (frame.data()[wire::kHeaderSize] == kRefuse) return Status::Unavailable("refused");
    return Status::Ok();
  }
  void SendLocked(ByteBlock&& frame, uint32_t token) override {
    EXPECT_EQ(token, 7u);
    ExpectHeld();
    Take(frame);
  }
  bool TrySendInPlace(const RsrRoute& route, std::span<const uint8_t> payload) override {
    EXPECT_EQ(send_lock(), nullptr);
    std::lock_guard<SpinMutex> lock(mu_);
    return TakeInPlace(route, payload);
  }
  bool TrySendInPlaceLocked(const RsrRoute& route, std::span<const uint8_t> payload) override {
    ExpectHeld();
    return TakeInPlace(route, payload);
  }
  void Close() override {}
  CommState state() const override { return CommState::kOk; }
  RuntimeId peer() const override { return 1; }

  static constexpr uint8_t kRefuse = 9;
  std::vector<Taken> taken;  // under mu_; read after the senders joined

 private:
  // The caller (the log) must hold the lent lock: taking it must fail.
  void ExpectHeld() {
    const bool free = mu_.try_lock();
    if (free) mu_.unlock();
    EXPECT_FALSE(free) << "called without the lent lock";
  }
  void Take(const ByteBlock& frame) {
    taken.push_back({FrameClass(frame.data()[wire::kHeaderSize]), frame.size()});
  }
  bool TakeInPlace(const RsrRoute& route, std::span<const uint8_t> payload) {
    if (route.handler == kRefuse) return false;  // "ring full": the caller sends a frame
    taken.push_back({FrameClass(route.handler), wire::kHeaderSize + payload.size()});
    return true;
  }
  SpinMutex mu_;
};

// The log's answer from the object's own record: runs of the taken frames, the newest
// kMaxRuns of them, the newest `frames` frames classified (older ones as user).
FrameLog::Split Expected(const std::vector<Taken>& taken, uint64_t frames) {
  struct Run {
    FrameClass cls;
    uint64_t frames = 0, bytes = 0;
  };
  std::vector<Run> runs;
  uint64_t all_bytes = 0;
  for (const Taken& t : taken) {
    if (runs.empty() || runs.back().cls != t.cls) runs.push_back({t.cls});
    ++runs.back().frames;
    runs.back().bytes += t.bytes;
  }
  const size_t first = runs.size() > FrameLog::kMaxRuns ? runs.size() - FrameLog::kMaxRuns : 0;
  for (size_t i = taken.size() - frames; i < taken.size(); ++i) all_bytes += taken[i].bytes;
  FrameLog::Split s;
  uint64_t left = frames;
  for (size_t i = runs.size(); i > first && left > 0; --i) {
    const Run& r = runs[i - 1];
    const uint64_t n = std::min(left, r.frames);
    if (r.cls == FrameClass::kAnswer) {
      s.answer_frames += n;
      s.answer_bytes += n == r.frames ? r.bytes : r.bytes / r.frames * n;
    }
    left -= n;
  }
  s.user_frames = frames - s.answer_frames;
  s.answer_bytes = std::min(s.answer_bytes, all_bytes);
  s.user_bytes = all_bytes - s.answer_bytes;
  return s;
}

void ExpectSplitsMatch(const FrameLog& log, const FakeObject& object) {
  const std::vector<Taken>& taken = object.taken;
  for (uint64_t n = 0; n <= taken.size(); n += 1 + n / 16) {
    uint64_t bytes = 0;
    for (size_t i = taken.size() - n; i < taken.size(); ++i) bytes += taken[i].bytes;
    const FrameLog::Split got = log.Newest(object, n, bytes);
    const FrameLog::Split want = Expected(taken, n);
    ASSERT_EQ(got.answer_frames, want.answer_frames) << "newest " << n;
    ASSERT_EQ(got.answer_bytes, want.answer_bytes) << "newest " << n;
    ASSERT_EQ(got.user_frames, want.user_frames) << "newest " << n;
    ASSERT_EQ(got.user_bytes, want.user_bytes) << "newest " << n;
  }
}

ByteBlock Frame(FrameClass cls, size_t payload) {
  ByteBlock b(wire::kHeaderSize + payload + 1);
  b.Resize(wire::kHeaderSize + payload + 1);
  b.data()[wire::kHeaderSize] = static_cast<uint8_t>(cls);
  return b;
}

// Threads send frames and in-place RSRs of both classes (thread t's class changes every
// few sends, so runs are short and interleave); payload sizes differ by thread so that the
// bytes tell the frames apart.
void SendFromThreads(FrameLog& log, FakeObject& object) {
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> payload(static_cast<size_t>(8 + t));
      for (int i = 0; i < kEach; ++i) {
        const FrameClass cls =
            ((i / (3 + t)) + t) % 2 == 0 ? FrameClass::kUser : FrameClass::kAnswer;
        if (i % 3 == 0) {
          EXPECT_TRUE(log.Send(object, cls, Frame(cls, payload.size() * 3)).ok());
        } else {
          CommObject::RsrRoute route;
          route.handler = static_cast<uint32_t>(cls);
          EXPECT_TRUE(log.TrySendInPlace(object, cls, route, payload));
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(object.taken.size(), size_t{kThreads} * kEach);
}

void SendFromThreadsAndCompare(bool lend) {
  FrameLog log;
  FakeObject object(lend);
  SendFromThreads(log, object);
  ExpectSplitsMatch(log, object);
  EXPECT_EQ(log.in_place_sends(), 4u * 2000 - 4u * 667);  // all but every third send
}

TEST(FrameLogTest, UnderALentLockTheLogKeepsTheObjectsOrderWithSeveralThreads) {
  SendFromThreadsAndCompare(/*lend=*/true);
}

TEST(FrameLogTest, WithoutALentLockTheLogKeepsTheObjectsOrderWithSeveralThreads) {
  SendFromThreadsAndCompare(/*lend=*/false);
}

// Refused sends are not recorded: a frame PrepareSend refuses, an in-place RSR the object
// cannot take (the caller then sends a frame).
TEST(FrameLogTest, RefusedSendsAreNotRecorded) {
  FrameLog log;
  FakeObject object(/*lend=*/true);
  ASSERT_TRUE(log.Send(object, FrameClass::kAnswer, Frame(FrameClass::kAnswer, 4)).ok());
  ByteBlock refused = Frame(FrameClass::kUser, 4);
  refused.data()[wire::kHeaderSize] = FakeObject::kRefuse;
  EXPECT_EQ(log.Send(object, FrameClass::kUser, std::move(refused)).code(),
            StatusCode::kUnavailable);
  CommObject::RsrRoute full;
  full.handler = FakeObject::kRefuse;
  const std::vector<uint8_t> payload(8);
  EXPECT_FALSE(log.TrySendInPlace(object, FrameClass::kUser, full, payload));
  ASSERT_EQ(object.taken.size(), 1u);
  EXPECT_EQ(log.in_place_sends(), 0u);
  const FrameLog::Split s = log.Newest(object, 1, object.taken[0].bytes);
  EXPECT_EQ(s.answer_frames, 1u);
  EXPECT_EQ(s.user_frames, 0u);
}

// More class changes than the log keeps runs: the newest kMaxRuns runs are classified, the
// frames before them count as user frames.
TEST(FrameLogTest, FramesOlderThanTheNewestRunsCountAsUser) {
  FrameLog log;
  FakeObject object(/*lend=*/true);
  const std::vector<uint8_t> payload(8);
  for (int i = 0; i < 600; ++i) {
    const FrameClass cls = i % 2 == 0 ? FrameClass::kAnswer : FrameClass::kUser;
    CommObject::RsrRoute route;
    route.handler = static_cast<uint32_t>(cls);
    ASSERT_TRUE(log.TrySendInPlace(object, cls, route, payload));
  }
  const uint64_t each = wire::kHeaderSize + payload.size();
  const FrameLog::Split s = log.Newest(object, 600, 600 * each);
  EXPECT_EQ(s.answer_frames, FrameLog::kMaxRuns / 2);
  EXPECT_EQ(s.user_frames, 600 - FrameLog::kMaxRuns / 2);
  EXPECT_EQ(s.answer_bytes, FrameLog::kMaxRuns / 2 * each);
  ExpectSplitsMatch(log, object);
}

}  // namespace
}  // namespace ukai::rt::internal
