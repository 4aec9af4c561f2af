// shm confinement (docs/runtime.md, "Authentication and confinement"): a segment made by
// another job (another job tag) or open to other users (group/other permission bits) is
// refused at attach; a runtime that cannot prove the target's job secret or join token is
// refused at set-up, no RSR of it runs, and the refusal is counted.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rt/core/job_secret.h"
#include "rt/core/runtime_impl.h"
#include "rt/modules/shm/shm_segment.h"
#include "rt/modules/shm/shm_socket.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

SecretKey Key(uint8_t fill) {
  SecretKey k;
  k.fill(fill);
  return k;
}

TEST(ShmConfinement, ASegmentOfAnotherJobIsRefused) {
  auto seg = shm::ShmSegment::Create(4096);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  const std::string name = (*seg)->name();
  const Mac ours = shm::SegmentTag(Key(1), 10, 20, name);
  const Mac theirs = shm::SegmentTag(Key(2), 10, 20, name);
  (*seg)->SetTag(theirs);
  auto refused = shm::ShmSegment::Attach(name, &ours);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("not made by this job"), std::string::npos)
      << refused.status().ToString();
  (*seg)->SetTag(ours);
  auto attached = shm::ShmSegment::Attach(name, &ours);
  EXPECT_TRUE(attached.ok()) << attached.status().ToString();
  EXPECT_TRUE((*seg)->Unlink().ok());
}

TEST(ShmConfinement, ASegmentOthersMayOpenIsRefused) {
  auto seg = shm::ShmSegment::Create(4096);
  ASSERT_TRUE(seg.ok());
  const std::string name = (*seg)->name();
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fchmod(fd, 0644), 0);
  ::close(fd);
  auto refused = shm::ShmSegment::Attach(name);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("mode 0644"), std::string::npos)
      << refused.status().ToString();
  EXPECT_TRUE((*seg)->Unlink().ok());
}

// A runtime of another job that holds a startpoint of B whose join token is not B's (a
// forged or stale one) cannot set up a channel to B; B counts the refusal and runs nothing.
TEST(ShmConfinement, ARuntimeThatCannotProveTheKeyIsRefused) {
  RuntimeOptions o = ModuleOptions("shm", nullptr);
  o.job_secret = Key(3);
  auto b = Runtime::Init(o);
  o.job_secret = Key(4);
  auto a = Runtime::Init(o);
  ASSERT_TRUE(a.ok() && b.ok());
  std::atomic<int> got{0};
  auto ctx = (*b)->CreateContext({.name = "b"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("x", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  auto forged = std::make_shared<DescriptorTable>(ep->MakeStartpoint().descriptors());
  for (Descriptor& d : forged->entries) {
    if (d.module == kAuthDescriptor) d.bytes = EncodeAuthDescriptor(Key(5));
  }
  const Startpoint to_b(forged, ep->MakeStartpoint().context(), ep->MakeStartpoint().endpoint());
  // The set-up completes (or fails) asynchronously: sends either fail or are reported lost.
  for (int i = 0; i < 3; ++i) {
    (void)(*a)->SendRsr(Buffer(), to_b, HandlerId::Of("x"));
  }
  ASSERT_TRUE(WaitFor([&] { return (*b)->impl()->ModuleCounters("shm")["refused"] >= 1; }));
  EXPECT_GE((*b)->stats().frames_rejected, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(got.load(), 0);
  // With B's real startpoint (its token) a runtime of another job gets in.
  o.job_secret = Key(6);
  auto c = Runtime::Init(o);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("x")).ok());
  ASSERT_TRUE(WaitFor([&] { return got.load() == 1; }));
}

}  // namespace
}  // namespace ukai::rt::testing
