// The channel of `ukai launch --sim` (rt/modules/sim/sim_wire.h, rt/launch/sim_host.h):
// the decoder's errors, the fuzz target fuzz/sim_wire_fuzz.cc replayed (a corpus of every
// message, its truncations, seeded mutations), and the launcher's side against processes
// that lie (another rank, a stolen runtime id, garbage, too many dispatches) or die.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "fuzz_mutate.h"
#include "rt/launch/sim_host.h"
#include "rt/modules/sim/sim_wire.h"
#include "sim_test_util.h"
#include "wire/rsr_frame.h"

extern "C" int sim_wire_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::rt::testing {
namespace {

namespace sw = simwire;
using Bytes = std::vector<uint8_t>;

void Append(Bytes* out, const Bytes& more) { out->insert(out->end(), more.begin(), more.end()); }

Bytes Body(const Bytes& message) { return Bytes(message.begin() + 5, message.end()); }

TEST(SimWire, EveryMessageRoundTrips) {
  auto hello = sw::DecodeHello(Body(sw::EncodeHello(3, 77)));
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->rank, 3u);
  EXPECT_EQ(hello->runtime, 77u);
  auto call =
      sw::DecodeCall(Body(sw::EncodeCall(5, sw::CallKind::kIdle, sw::CallIndex("Progress"), 1234)));
  ASSERT_TRUE(call.ok());
  EXPECT_STREQ(call->call, "Progress");
  EXPECT_EQ(call->cpu, 1234);
  EXPECT_STREQ(sw::CallName(sw::CallIndex("something new")), "a runtime call");
  Bytes post = sw::EncodePostHeader(2, 9, 42, 3);
  Append(&post, {1, 2, 3});
  const Bytes post_body = Body(post);  // the decoded frame points into it
  auto p = sw::DecodePost(post_body);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->peer, 42u);
  EXPECT_EQ(Bytes(p->frame.begin(), p->frame.end()), (Bytes{1, 2, 3}));
  auto w = sw::DecodeWelcome(Body(sw::EncodeWelcome(8, 1250.5, 4)));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->clock_mhz, 1250.5);
  EXPECT_TRUE(w->cpu_time);
  auto w0 = sw::DecodeWelcome(Body(sw::EncodeWelcome(8, 1000, 4, /*cpu_time=*/false)));
  ASSERT_TRUE(w0.ok());
  EXPECT_FALSE(w0->cpu_time);
  EXPECT_EQ(w0->process, 4u);
  Bytes bad = Body(sw::EncodeWelcome(8, 1000, 4));
  bad.back() = 2;  // cpu_time is 0 or 1
  EXPECT_EQ(sw::DecodeWelcome(bad).status().code(), StatusCode::kParseError);
  auto g = sw::DecodePeerGone(Body(sw::EncodePeerGone(6, true, "left")));
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->orderly);
  EXPECT_EQ(g->text, "left");
  auto t = sw::DecodeTaken(Body(sw::EncodeTaken(6, 2, 100)));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->bytes, 100u);
}

TEST(SimWire, BadMessagesGetErrorsNamingThem) {
  Bytes hello = Body(sw::EncodeHello(1, 2));
  hello.pop_back();
  auto h = sw::DecodeHello(hello);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("hello truncated"), std::string::npos);
  Bytes longer = Body(sw::EncodeHello(1, 2));
  longer.push_back(0);
  EXPECT_NE(sw::DecodeHello(longer).status().message().find("trailing"), std::string::npos);
  Bytes call = Body(sw::EncodeCall(1, sw::CallKind::kCall, 0, 0));
  call[4] = 99;  // kind
  EXPECT_NE(sw::DecodeCall(call).status().message().find("unknown kind"), std::string::npos);
  call[4] = sw::kRetiredCallKind;  // 6, once kParked: no sender uses it, the decoder refuses it
  EXPECT_NE(sw::DecodeCall(call).status().message().find("unknown kind 6 (retired"),
            std::string::npos);
  call[4] = static_cast<uint8_t>(sw::CallKind::kIdleSettled);  // the numbering after it holds
  EXPECT_TRUE(sw::DecodeCall(call).ok());
  call[4] = 1;
  call[5] = 200;  // call name
  EXPECT_NE(sw::DecodeCall(call).status().message().find("unknown runtime call"),
            std::string::npos);
  auto empty_post = sw::DecodePost(Body(sw::EncodePostHeader(1, 0, 2, 0)));
  EXPECT_NE(empty_post.status().message().find("frame of 0 bytes"), std::string::npos);

  sw::SimWireParser parser;
  Bytes huge = {0xff, 0xff, 0xff, 0x7f, 4};  // a length far over the limit
  parser.Append(huge.data(), huge.size());
  sw::Message m;
  auto r = parser.Next(&m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("message length"), std::string::npos);
  EXPECT_FALSE(parser.Next(&m).ok()) << "errors are final";
  sw::SimWireParser typed;
  Bytes unknown = {1, 0, 0, 0, 99};
  typed.Append(unknown.data(), unknown.size());
  EXPECT_NE(typed.Next(&m).status().message().find("unknown message type 99"), std::string::npos);
  sw::SimWireParser partial;
  Bytes whole = sw::EncodeHello(1, 2);
  partial.Append(whole.data(), whole.size() - 1);
  auto more = partial.Next(&m);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more) << "a truncated message waits for its bytes";
}

std::vector<Bytes> Corpus() {
  Bytes all = {7};  // chunks of 8 bytes
  Append(&all, sw::EncodeHello(0, 5));
  Append(&all, sw::EncodeCall(1, sw::CallKind::kCall, 0, 10));
  Append(&all, sw::EncodeNow(1, 20));
  Bytes post = sw::EncodePostHeader(1, 30, 6, wire::kHeaderSize);
  Append(&post, Bytes(wire::kHeaderSize, 0x42));
  Append(&all, post);
  Append(&all, sw::EncodeDispatched(1, 1));
  Append(&all, sw::Encode(sw::Type::kLeave, {}));
  Bytes back = {0};
  Append(&back, sw::EncodeWelcome(9, 1000, 0));
  Append(&back, sw::EncodeNowIs(1, 44));
  Bytes arrive = sw::EncodeArriveHeader(10);
  Append(&arrive, Bytes(10, 1));
  Append(&back, arrive);
  Append(&back, sw::EncodePeerGone(6, false, "node 1 failed"));
  Append(&back, sw::EncodeText(sw::Type::kStopped, "stopped"));
  Append(&back, sw::EncodeText(sw::Type::kRefused, "no"));
  Append(&back, sw::EncodeTaken(6, 1, 56));
  Bytes lie = {2};
  Bytes lying_post = sw::EncodePostHeader(1, 30, 6, 0);
  wire::PutLe32(lying_post.data(), 0xffffff);  // a length that promises more than comes
  Append(&lie, lying_post);
  return {all, back, lie};
}

TEST(SimWire, FuzzTargetReplay) {
  const std::vector<Bytes> corpus = Corpus();
  for (const Bytes& seed : corpus) {
    for (size_t n = 0; n <= seed.size(); ++n) sim_wire_fuzz_TestOneInput(seed.data(), n);
  }
  std::mt19937_64 rng(20261127);
  for (int i = 0; i < 5000; ++i) {
    Bytes in = corpus[rng() % corpus.size()];
    ukai::testing::MutateBytes(rng, &in);
    sim_wire_fuzz_TestOneInput(in.data(), in.size());
  }
}

// ---- the launcher's side, with this test as the process ----

struct HostFixture {
  std::shared_ptr<SimFabric> fabric = SimTestFabric("", 2);
  std::unique_ptr<SimHost> host;
  HostFixture() {
    auto h = SimHost::Create(fabric, 2);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (h.ok()) host = std::move(*h);
  }
  void Send(int rank, const Bytes& b) {
    ASSERT_EQ(write(host->child_fd(rank), b.data(), b.size()), ssize_t(b.size()));
  }
  // The next message the launcher sends rank `rank` (5 s at most).
  sw::Message Receive(int rank) {
    sw::Message m;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      auto got = parsers[rank].Next(&m);
      if (!got.ok()) break;
      if (*got) return m;
      uint8_t buf[4096];
      const ssize_t r = recv(host->child_fd(rank), buf, sizeof buf, MSG_DONTWAIT);
      if (r > 0) parsers[rank].Append(buf, size_t(r));
      if (r <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "no message for rank " << rank;
    return m;
  }
  // The stops reported within 5 s.
  std::vector<SimHost::Stop> Stops() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      auto s = host->TakeStopped();
      if (!s.empty()) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return {};
  }
  sw::SimWireParser parsers[2];
};

TEST(SimHost, ProcessThatLiesAboutItsRankIsRefused) {
  HostFixture f;
  f.Send(1, sw::EncodeHello(0, 1234));
  sw::Message m = f.Receive(1);
  ASSERT_EQ(m.type, sw::Type::kRefused);
  EXPECT_NE(std::string(m.body.begin(), m.body.end()).find("rank 1 says it is rank 0"),
            std::string::npos);
  auto stops = f.Stops();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].rank, 1);
  EXPECT_TRUE(stops[0].failure);
  EXPECT_FALSE(f.fabric->Has(1234));
}

TEST(SimHost, StolenRuntimeIdAndGarbageAreRefused) {
  HostFixture f;
  f.Send(0, sw::EncodeHello(0, 1234));
  EXPECT_EQ(f.Receive(0).type, sw::Type::kWelcome);
  f.Send(1, sw::EncodeHello(1, 1234));
  sw::Message m = f.Receive(1);
  ASSERT_EQ(m.type, sw::Type::kRefused);
  EXPECT_NE(std::string(m.body.begin(), m.body.end()).find("claimed by another"),
            std::string::npos);
  auto stops = f.Stops();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].rank, 1);
  // Rank 0 now sends a message with an oversized length: cut off, its peers told.
  f.Send(0, {0xff, 0xff, 0xff, 0x7f, 4});
  stops = f.Stops();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_EQ(stops[0].rank, 0);
  EXPECT_NE(stops[0].why.find("rank 0: sim channel: message length"), std::string::npos)
      << stops[0].why;
  EXPECT_FALSE(f.fabric->Has(1234));
}

TEST(SimHost, DispatchingMoreThanWasDeliveredCutsTheProcessOff) {
  HostFixture f;
  f.Send(0, sw::EncodeHello(0, 1111));
  EXPECT_EQ(f.Receive(0).type, sw::Type::kWelcome);
  f.Send(0, sw::EncodeDispatched(1, 3));
  auto stops = f.Stops();
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_NE(stops[0].why.find("dispatched 3 frames, but 0 were delivered"), std::string::npos)
      << stops[0].why;
}

TEST(SimHost, ProcessThatDiesFailsOnTheMachineAndItsPeerIsTold) {
  HostFixture f;
  f.Send(0, sw::EncodeHello(0, 1111));
  EXPECT_EQ(f.Receive(0).type, sw::Type::kWelcome);
  f.Send(1, sw::EncodeHello(1, 2222));
  EXPECT_EQ(f.Receive(1).type, sw::Type::kWelcome);
  // Rank 1 sends rank 0 a frame, which arrives unchanged.
  Bytes frame(wire::kHeaderSize, 0x33);
  Bytes post = sw::EncodePostHeader(0, 0, 1111, frame.size());
  Append(&post, frame);
  f.Send(1, post);
  f.Send(1, sw::EncodeCall(1, sw::CallKind::kIdle, 0, 0));
  f.Send(0, sw::EncodeCall(1, sw::CallKind::kIdle, 0, 0));
  sw::Message m = f.Receive(0);
  ASSERT_EQ(m.type, sw::Type::kArrive);
  EXPECT_EQ(m.body, frame);
  f.Send(0, sw::EncodeDispatched(1, 1));
  m = f.Receive(1);
  ASSERT_EQ(m.type, sw::Type::kTaken) << "the sender learns its frame was taken";
  auto taken = sw::DecodeTaken(m.body);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->frames, 1u);
  EXPECT_EQ(taken->bytes, frame.size());
  // Rank 1 dies (its channel closes without a leave).
  shutdown(f.host->child_fd(1), SHUT_RDWR);
  m = f.Receive(0);
  ASSERT_EQ(m.type, sw::Type::kPeerGone);
  auto gone = sw::DecodePeerGone(m.body);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->peer, 2222u);
  EXPECT_FALSE(gone->orderly);
  EXPECT_NE(gone->text.find("process 1 ended without leaving"), std::string::npos) << gone->text;
  EXPECT_TRUE(f.host->TakeStopped().empty()) << "a dead process is not stopped again";
  bool failed = false;
  for (const SimProcessTimes& p : f.fabric->Processes())
    failed = failed || (p.process == 1 && p.failed);
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace ukai::rt::testing
