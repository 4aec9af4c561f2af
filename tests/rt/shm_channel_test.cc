// ShmChannel record encodings: an RSR frame sent through a channel arrives as a compact
// record (kCompactRsr) with every header field intact, with and without an address, and
// malformed compact records are rejected and counted instead of delivered.
#include "rt/modules/shm/shm_channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "wire/rsr_frame.h"

namespace ukai::rt::shm {
namespace {

// Records what a channel delivers.
class FakeHost final : public ModuleHost {
 public:
  RuntimeId runtime_id() const override { return 2; }
  std::string Param(std::string_view) const override { return ""; }
  bool tracing() const override { return false; }
  void Trace(std::string_view) const override {}
  void Deliver(const wire::FrameHeader& h, std::span<const uint8_t> payload, ByteBlock*) override {
    headers.push_back(h);
    payloads.emplace_back(payload.begin(), payload.end());
    where.push_back(payload.data());
  }
  Status DeliverFrame(std::span<const uint8_t> frame, ByteBlock* owned) override {
    Result<wire::FrameView> v = wire::DecodeFrame(frame);
    if (!v.ok()) {
      RejectFrame(v.status());
      return v.status();
    }
    Deliver(v->header, v->payload, owned);
    return Status::Ok();
  }
  void RejectFrame(const Status&) override { ++rejected; }
  void AdoptIncoming(RuntimeId, std::shared_ptr<CommObject>) override {}
  void PeerFailed(RuntimeId, std::string_view, bool, const Status&) override {}
  void Wake() override {}

  std::vector<wire::FrameHeader> headers;
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<const uint8_t*> where;  // the delivered spans' addresses
  int rejected = 0;
};

struct Channels {
  std::unique_ptr<ShmChannel> sender;    // runtime 1 (creator)
  std::unique_ptr<ShmChannel> receiver;  // runtime 2 (attacher)
  std::unique_ptr<ShmSegment> raw;       // a second attachment to write raw records
};

// `cma_bytes`: frames of this size or more go by cross-memory attach (0 = never).
Channels Make(FakeHost* host, size_t cma_bytes = 0, size_t ring_bytes = 1 << 16) {
  Channels c;
  auto seg = ShmSegment::Create(ring_bytes);
  EXPECT_TRUE(seg.ok());
  auto att = ShmSegment::Attach((*seg)->name());
  EXPECT_TRUE(att.ok());
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  // No doorbell: neither side ever announces sleep in this test.
  c.sender = std::make_unique<ShmChannel>(1, 2, std::move(*seg), sv[0], dup(sv[1]), 1 << 12,
                                          cma_bytes, host);
  c.receiver = std::make_unique<ShmChannel>(2, 1, std::move(*att), sv[1], dup(sv[0]), 1 << 12,
                                            cma_bytes, host);
  return c;
}

ByteBlock Frame(const wire::FrameHeader& h, const std::vector<uint8_t>& payload) {
  ByteBlock b(wire::kHeaderSize + payload.size());
  b.Resize(wire::kHeaderSize + payload.size());
  wire::EncodeHeader(h, {b.data(), wire::kHeaderSize});
  if (!payload.empty()) std::memcpy(b.data() + wire::kHeaderSize, payload.data(), payload.size());
  return b;
}

// The header of the tests' routed RSRs (runtime 1 to 2, context 7, endpoint 8).
wire::FrameHeader Routed() {
  wire::FrameHeader h;
  h.source = 1;
  h.target = 2;
  h.context = 7;
  h.endpoint = 8;
  h.handler = 0xdeadbeef;
  return h;
}

// A delivered header carries Routed()'s fields.
void ExpectRouted(const wire::FrameHeader& g) {
  EXPECT_EQ(g.kind, wire::FrameKind::kRsr);
  EXPECT_EQ(g.source, 1u);
  EXPECT_EQ(g.target, 2u);
  EXPECT_EQ(g.context, 7u);
  EXPECT_EQ(g.endpoint, 8u);
  EXPECT_EQ(g.handler, 0xdeadbeefu);
}

TEST(ShmChannelTest, RsrFramesTravelCompactWithEveryField) {
  FakeHost host;
  Channels c = Make(&host);
  wire::FrameHeader h = Routed();
  h.payload_len = 3;
  ASSERT_TRUE(c.sender->Send(Frame(h, {1, 2, 3})).ok());
  h.flags = wire::kFlagHasAddress;
  h.address = 0x0123456789abcdefULL;
  h.payload_len = 0;
  ASSERT_TRUE(c.sender->Send(Frame(h, {})).ok());
  int got = 0;  // a poll may stop after one frame (adaptive batch)
  for (int i = 0; i < 10 && got < 2; ++i) got += c.receiver->Poll(&host, 10);
  EXPECT_EQ(got, 2);
  ASSERT_EQ(host.headers.size(), 2u);
  EXPECT_EQ(host.rejected, 0);
  for (int i = 0; i < 2; ++i) ExpectRouted(host.headers[i]);
  EXPECT_EQ(host.payloads[0], (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_FALSE(host.headers[0].has_address());
  EXPECT_TRUE(host.headers[1].has_address());
  EXPECT_EQ(host.headers[1].address, 0x0123456789abcdefULL);
  EXPECT_EQ(host.headers[1].payload_len, 0u);
  EXPECT_TRUE(host.payloads[1].empty());
}

// A peer that starts a chunked frame before it finished the last loses the unfinished one,
// and the loss is reported (it was once dropped silently); the new frame arrives whole.
TEST(ShmChannelTest, AFrameBegunBeforeTheLastEndedReportsTheLastAsLost) {
  FakeHost host;
  Channels c = Make(&host);
  RingProducer raw = c.sender->segment_for_test()->MakeProducer();
  wire::FrameHeader h = Routed();
  h.payload_len = 3000;
  std::vector<uint8_t> payload(3000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  const ByteBlock f = Frame(h, payload);
  auto put = [&](size_t from, size_t to, uint8_t flags) {
    ASSERT_TRUE(
        raw.TryWrite({reinterpret_cast<const std::byte*>(f.data() + from), to - from}, {}, flags));
  };
  put(0, 1000, kFirstChunk);  // never finished
  put(0, 1000, kFirstChunk);
  put(1000, 2000, kMiddleChunk);
  put(2000, f.size(), kLastChunk);
  int got = 0;
  for (int i = 0; i < 10 && got < 1; ++i) got += c.receiver->Poll(&host, 10);
  EXPECT_EQ(host.rejected, 1);
  ASSERT_EQ(host.payloads.size(), 1u);
  ExpectRouted(host.headers[0]);
  EXPECT_EQ(host.payloads[0], payload);
}

TEST(ShmChannelTest, MalformedCompactRecordsAreRejectedAndCounted) {
  FakeHost host;
  Channels c = Make(&host);
  RingProducer raw = c.sender->segment_for_test()->MakeProducer();
  uint8_t rec[32] = {};
  auto put = [&](size_t n, uint32_t flags_word) {
    wire::PutLe32(rec + 12, flags_word);
    ASSERT_TRUE(raw.TryWrite({reinterpret_cast<const std::byte*>(rec), n}, {}, kCompactRsr));
  };
  put(15, 0);                      // shorter than the compact header
  put(16, 0x80);                   // unknown frame flag
  put(20, wire::kFlagHasAddress);  // address flag without the address
  put(16, 0);                      // a good one, empty payload
  EXPECT_EQ(c.receiver->Poll(&host, 10), 1);
  EXPECT_EQ(host.rejected, 3);
  ASSERT_EQ(host.headers.size(), 1u);
  EXPECT_EQ(host.headers[0].payload_len, 0u);
}

// A poll delivers one frame unless the previous one filled its batch: the frame just
// delivered is dispatched before the next record's cache line is touched (ping-pong), and
// the batch doubles while a stream keeps it full.
TEST(ShmChannelTest, PollBatchStartsAtOneAndGrowsWhileStreaming) {
  FakeHost host;
  Channels c = Make(&host);
  wire::FrameHeader h;
  h.source = 1;
  h.target = 2;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(c.sender->Send(Frame(h, {})).ok());
  EXPECT_EQ(c.receiver->Poll(&host, 64), 1);
  EXPECT_EQ(c.receiver->Poll(&host, 64), 2);
  EXPECT_EQ(c.receiver->Poll(&host, 64), 3);  // batch 4, three left: back to 1
  ASSERT_TRUE(c.sender->Send(Frame(h, {})).ok());
  ASSERT_TRUE(c.sender->Send(Frame(h, {})).ok());
  EXPECT_EQ(c.receiver->Poll(&host, 64), 1);
  EXPECT_EQ(c.receiver->Poll(&host, 1), 1);  // the caller's budget still caps it
  EXPECT_EQ(host.headers.size(), 8u);
}

ByteBlock Numbered(const wire::FrameHeader& h, uint32_t n) {
  std::vector<uint8_t> p(4);
  wire::PutLe32(p.data(), n);
  return Frame(h, p);
}

std::vector<uint32_t> Numbers(const FakeHost& host) {
  std::vector<uint32_t> out;
  for (const auto& p : host.payloads) out.push_back(p.size() == 4 ? wire::GetLe32(p.data()) : ~0u);
  return out;
}

// Coalescing: after a poll that drained the ring, kSkipPolls polls leave it alone; what
// arrived meanwhile comes in one batch, in send order, and the channel never lets its
// engine sleep on a pending record (PrepareIdle), nor keeps the sender's ring space or
// blocks past a ReleaseDelivered (the engine's last step before it blocks).
TEST(ShmChannelTest, CoalescingPollsKeepOrderAndNeverSleepOnARecord) {
  FakeHost host;
  Channels c = Make(&host);
  wire::FrameHeader h;
  h.source = 1;
  h.target = 2;
  ASSERT_TRUE(c.sender->Send(Numbered(h, 0)).ok());
  ASSERT_TRUE(c.sender->Send(Numbered(h, 1)).ok());
  ASSERT_EQ(c.receiver->Poll(&host, 64, nullptr, true), 1);
  ASSERT_EQ(c.receiver->Poll(&host, 64, nullptr, true), 1);  // drained: the skipping starts
  for (uint32_t i = 2; i < 7; ++i) ASSERT_TRUE(c.sender->Send(Numbered(h, i)).ok());
  EXPECT_FALSE(c.receiver->PrepareIdle()) << "would sleep with five records pending";
  c.receiver->EndIdle();
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(c.sender->Outstanding().frames, 5u) << "the delivered frames were not released";
  for (int i = 0; i < ShmChannel::kSkipPolls; ++i)
    EXPECT_EQ(c.receiver->Poll(&host, 64, nullptr, true), 0);
  EXPECT_EQ(c.receiver->Poll(&host, 64, nullptr, true), 1);  // batch back to 1 after the drain
  EXPECT_EQ(c.receiver->Poll(&host, 64, nullptr, true), 2);
  EXPECT_EQ(c.receiver->Poll(&host, 64, nullptr, true), 2);
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(c.sender->Outstanding().frames, 0u);
  EXPECT_EQ(Numbers(host), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(c.receiver->PrepareIdle());  // nothing pending: it may sleep now
  c.receiver->EndIdle();
  // A poll without coalescing (a draining loop) reads the ring even while skipping.
  ASSERT_TRUE(c.sender->Send(Numbered(h, 7)).ok());
  EXPECT_EQ(c.receiver->Poll(&host, 64), 1);
  EXPECT_EQ(Numbers(host).back(), 7u);
}

// The sender's flow accounting (Outstanding: frames and bytes the receiver has not taken)
// stays exact past the initial capacity of its queue of frame ends (1024), while the
// receiver takes the frames a few at a time.
TEST(ShmChannelTest, FlowAccountingIsExactPastTheEndQueueGrowth) {
  FakeHost host;
  Channels c = Make(&host, 0, size_t{1} << 20);
  wire::FrameHeader h;
  h.source = 1;
  h.target = 2;
  constexpr uint32_t kFrames = 3000;  // one 64-byte record each: 3000 of 16384 lines
  for (uint32_t i = 0; i < kFrames; ++i) ASSERT_TRUE(c.sender->Send(Numbered(h, i)).ok());
  CommObject::Unconfirmed u = c.sender->Outstanding();
  EXPECT_EQ(u.frames, kFrames);
  EXPECT_EQ(u.bytes, uint64_t{kFrames} * 64);
  EXPECT_EQ(c.sender->QueuedBytes(), 0u);  // in the ring, not queued
  uint32_t taken = 0;
  while (taken < 1000) taken += static_cast<uint32_t>(c.receiver->Poll(&host, 1000 - taken));
  c.receiver->ReleaseDelivered();
  u = c.sender->Outstanding();
  EXPECT_EQ(u.frames, kFrames - 1000);
  EXPECT_EQ(u.bytes, uint64_t{kFrames - 1000} * 64);
  for (int i = 0; i < 100000 && taken < kFrames; ++i) {
    taken += static_cast<uint32_t>(c.receiver->Poll(&host, 64));
  }
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(taken, kFrames);
  EXPECT_EQ(c.sender->Outstanding().frames, 0u);
  EXPECT_EQ(c.sender->Outstanding().bytes, 0u);
  std::vector<uint32_t> want(kFrames);
  for (uint32_t i = 0; i < kFrames; ++i) want[i] = i;
  EXPECT_EQ(Numbers(host), want);
}

// TrySendInPlace (Runtime::SendRsrBytes, small SendRsr): the same compact record as Send's
// from the route and payload alone, every field intact, in one order with Send's frames,
// counted by the flow accounting as Send's are.
TEST(ShmChannelTest, InPlaceSendsAreCompactRecordsInOrderWithFrames) {
  FakeHost host;
  Channels c = Make(&host);
  const wire::FrameHeader h = Routed();
  CommObject::RsrRoute r{7, 8, 0xdeadbeef, 0, 0};
  CommObject::RsrRoute addressed{7, 8, 0xdeadbeef, wire::kFlagHasAddress, 0x0123456789abcdefULL};
  EXPECT_TRUE(c.sender->sends_in_place());
  std::vector<uint8_t> p(4);
  for (uint32_t i = 0; i < 9; ++i) {
    wire::PutLe32(p.data(), i);
    if (i % 3 == 0) {
      ASSERT_TRUE(c.sender->Send(Numbered(h, i)).ok());
    } else {
      ASSERT_TRUE(c.sender->TrySendInPlace(i % 3 == 1 ? r : addressed, p));
    }
  }
  const std::vector<uint8_t> payload(100, 0x5a);  // past the record's first cache line
  ASSERT_TRUE(c.sender->TrySendInPlace(r, payload));
  ASSERT_TRUE(c.sender->TrySendInPlace(r, {}));
  CommObject::Unconfirmed u = c.sender->Outstanding();
  EXPECT_EQ(u.frames, 11u);
  int got = 0;
  for (int i = 0; i < 100 && got < 11; ++i) got += c.receiver->Poll(&host, 64);
  ASSERT_EQ(got, 11);
  EXPECT_EQ(host.rejected, 0);
  for (int i = 0; i < 11; ++i) {
    const wire::FrameHeader& g = host.headers[i];
    ExpectRouted(g);
    EXPECT_EQ(g.has_address(), i < 9 && i % 3 == 2) << i;
    if (g.has_address()) {
      EXPECT_EQ(g.address, 0x0123456789abcdefULL);
    }
  }
  const std::vector<uint32_t> numbers = Numbers(host);
  for (uint32_t i = 0; i < 9; ++i) EXPECT_EQ(numbers[i], i);
  EXPECT_EQ(host.payloads[9], payload);
  EXPECT_TRUE(host.payloads[10].empty());
  c.receiver->ReleaseDelivered();
  u = c.sender->Outstanding();
  EXPECT_EQ(u.frames, 0u);
  EXPECT_EQ(u.bytes, 0u);
}

// Poll's compact-record path beside the chunked one: in-place records, a compact record
// from Send, a frame in ten chunks and another in-place record arrive in send order; the
// polls count every record they consumed (each chunk too), and after ReleaseDelivered the
// sender has nothing unconfirmed.
TEST(ShmChannelTest, PollCountsEveryRecordOfAMixedRunAndReleasesThemAll) {
  FakeHost host;
  Channels c = Make(&host);  // 64 KiB rings, 4 KiB chunks
  const wire::FrameHeader h = Routed();
  const CommObject::RsrRoute r{7, 8, 0xdeadbeef, 0, 0};
  std::vector<uint8_t> p(4);
  auto in_place = [&](uint32_t n) {
    wire::PutLe32(p.data(), n);
    return c.sender->TrySendInPlace(r, p);
  };
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(in_place(i));
  ASSERT_TRUE(c.sender->Send(Numbered(h, 3)).ok());
  std::vector<uint8_t> big(40000, 0x11);  // past one record (32 KiB rings' half): 10 chunks
  wire::PutLe32(big.data(), 4);
  wire::FrameHeader hb = h;
  hb.payload_len = static_cast<uint32_t>(big.size());  // the first chunk's header says so
  ASSERT_TRUE(c.sender->Send(Frame(hb, big)).ok());
  ASSERT_TRUE(in_place(5));
  EXPECT_EQ(c.sender->Outstanding().frames, 6u);
  int got = 0, records = 0;
  for (int i = 0; i < 100 && got < 6; ++i) got += c.receiver->Poll(&host, 64, &records);
  EXPECT_EQ(got, 6);
  EXPECT_EQ(records, 3 + 1 + 10 + 1);
  EXPECT_EQ(host.rejected, 0);
  ASSERT_EQ(host.payloads.size(), 6u);
  for (const wire::FrameHeader& g : host.headers) ExpectRouted(g);
  EXPECT_EQ(host.payloads[4], big);
  const std::vector<uint32_t> numbers = Numbers(host);
  EXPECT_EQ(numbers, (std::vector<uint32_t>{0, 1, 2, 3, ~0u, 5}));
  EXPECT_GT(c.sender->Outstanding().frames, 0u);  // the records wait for the next poll
  c.receiver->ReleaseDelivered();
  const CommObject::Unconfirmed u = c.sender->Outstanding();
  EXPECT_EQ(u.frames, 0u);
  EXPECT_EQ(u.bytes, 0u);
}

// TrySendInPlace declines (false, nothing sent) what must not go as a compact record now:
// a full ring, a payload past one record or past the cross-memory-attach size, a failed
// channel. Frames queued behind a full ring go first once there is room; everything
// arrives in send order.
TEST(ShmChannelTest, InPlaceSendsDeclineWhatMustGoAnotherWay) {
  FakeHost host;
  Channels c = Make(&host, /*cma_bytes=*/2048, /*ring_bytes=*/4096);
  wire::FrameHeader h;
  h.source = 1;
  h.target = 2;
  CommObject::RsrRoute r{0, 0, 0, 0, 0};
  std::vector<uint8_t> p(4);
  EXPECT_FALSE(c.sender->TrySendInPlace(r, std::vector<uint8_t>(3000, 1)));  // CMA size
  EXPECT_FALSE(c.sender->TrySendInPlace(r, std::vector<uint8_t>(5000, 1)));  // past a record
  uint32_t sent = 0;
  for (; sent < 200 && c.sender->QueuedBytes() == 0; ++sent) {  // fills the ring
    wire::PutLe32(p.data(), sent);
    if (!c.sender->TrySendInPlace(r, p)) {
      ASSERT_TRUE(c.sender->Send(Numbered(h, sent)).ok());
    }
  }
  ASSERT_GT(c.sender->QueuedBytes(), 0u) << "the ring never filled";
  wire::PutLe32(p.data(), sent);
  EXPECT_FALSE(c.sender->TrySendInPlace(r, p)) << "the ring is full";
  ASSERT_TRUE(c.sender->Send(Numbered(h, sent++)).ok());
  // The receiver frees ring space; two frames are still queued (nobody flushed): the next
  // in-place send pushes them first.
  for (int i = 0; i < 4; ++i) ASSERT_GT(c.receiver->Poll(&host, 64), 0);  // 1 + 2 + 4 + 8
  c.receiver->ReleaseDelivered();
  ASSERT_GT(c.sender->QueuedBytes(), 0u);
  wire::PutLe32(p.data(), sent);
  EXPECT_TRUE(c.sender->TrySendInPlace(r, p));
  ++sent;
  EXPECT_EQ(c.sender->QueuedBytes(), 0u);
  std::vector<uint32_t> want;
  for (uint32_t i = 0; i < sent; ++i) want.push_back(i);
  for (int i = 0; i < 1000 && host.headers.size() < sent; ++i) {
    c.receiver->Poll(&host, 64);
    c.receiver->ReleaseDelivered();
    c.sender->Flush();
  }
  EXPECT_EQ(Numbers(host), want);
  wire::PutLe32(p.data(), sent);
  EXPECT_TRUE(c.sender->TrySendInPlace(r, p)) << "the queue is empty again";
  EXPECT_TRUE(c.sender->MarkFailed());
  EXPECT_FALSE(c.sender->TrySendInPlace(r, p));
}

// Pool frames (shm_pool.h): a frame whose storage lies in the sender's pool crosses as a
// 24-byte record and is delivered in place from the receiver's mapping of that pool; the
// block stays held until the receiver's next poll says it is done.
struct PoolSetup {
  ShmPool* pool = nullptr;
  ~PoolSetup() {
    if (pool != nullptr) pool->Unref();
  }
};

void UsePools(Channels& c, PoolSetup* s) {
  Result<ShmPool*> pool = ShmPool::Create(size_t{1} << 20);
  ASSERT_TRUE(pool.ok());
  s->pool = *pool;
  c.sender->ConfigurePool(s->pool, 1024, /*peer_mapped=*/true, nullptr);
  Result<std::unique_ptr<PeerPool>> mapped = PeerPool::Map(s->pool->fd());
  ASSERT_TRUE(mapped.ok());
  c.receiver->SetPeerPool(std::move(*mapped));
}

ByteBlock PoolFrame(ShmPool* pool, wire::FrameHeader h, size_t n, uint8_t fill) {
  ByteBlock b = ByteBlock::FromSource(pool, wire::kHeaderSize + n);
  b.Resize(wire::kHeaderSize + n);
  h.payload_len = static_cast<uint32_t>(n);
  wire::EncodeHeader(h, {b.data(), wire::kHeaderSize});
  std::memset(b.data() + wire::kHeaderSize, fill, n);
  return b;
}

// A channel pair whose sender has a pool the receiver mapped, and a header from 1 to 2.
struct PoolChannels {
  FakeHost host;
  Channels c;
  PoolSetup ps;
  wire::FrameHeader h;
  explicit PoolChannels(size_t cma_bytes = 0) : c(Make(&host, cma_bytes)) {
    UsePools(c, &ps);
    h.source = 1;
    h.target = 2;
  }
};

TEST(ShmChannelTest, PoolFramesAreDeliveredInPlaceAndReleasedAfterTheNextPoll) {
  PoolChannels pc;
  FakeHost& host = pc.host;
  Channels& c = pc.c;
  PoolSetup& ps = pc.ps;
  wire::FrameHeader& h = pc.h;
  h.handler = 5;
  ASSERT_TRUE(c.sender->Send(PoolFrame(ps.pool, h, 5000, 0xab)).ok());
  ASSERT_TRUE(c.sender->Send(PoolFrame(ps.pool, h, 500, 0xcd)).ok());  // < 1024: ring copy
  EXPECT_EQ(c.sender->HeldForTest(), 1u);
  EXPECT_EQ(c.sender->QueuedBytes(), 0u);         // a NewBuffer pool frame: the pool bounds it
  EXPECT_EQ(ps.pool->stats().blocks_in_use, 1u);  // the small one was copied and freed
  ASSERT_EQ(c.receiver->Poll(&host, 10), 1);      // a first poll delivers one frame
  EXPECT_EQ(host.payloads[0], std::vector<uint8_t>(5000, 0xab));
  EXPECT_EQ(host.headers[0].handler, 5u);
  // In place: the span points into the receiver's mapping of the pool, not the ring.
  EXPECT_NE(host.where[0], ps.pool->base() + wire::kHeaderSize);  // another mapping
  EXPECT_EQ(c.receiver->counters().pool_frames_received.load(), 1u);
  EXPECT_EQ(c.sender->counters().pool_frames_sent.load(), 1u);
  // Still in use until the receiver polls again (the runtime's "until the next Progress").
  EXPECT_EQ(c.sender->HeldForTest(), 1u);
  ASSERT_EQ(c.receiver->Poll(&host, 10), 1);
  EXPECT_EQ(host.payloads[1], std::vector<uint8_t>(500, 0xcd));
  EXPECT_EQ(host.rejected, 0);
  EXPECT_EQ(c.sender->HeldForTest(), 0u);
  EXPECT_EQ(ps.pool->stats().blocks_in_use, 0u);
  // ReleaseDelivered (the engine is about to block) does the same as a poll.
  ASSERT_TRUE(c.sender->Send(PoolFrame(ps.pool, h, 5000, 0xef)).ok());
  ASSERT_EQ(c.receiver->Poll(&host, 10), 1);
  EXPECT_EQ(c.sender->HeldForTest(), 1u);
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(c.sender->HeldForTest(), 0u);
}

// Pool and CMA frames share ids and the completion counter: a CMA frame copied in the same
// poll as a pool frame delivered in place must not complete the pool frame's id early.
TEST(ShmChannelTest, CmaFrameAfterAPoolFrameInOnePollDoesNotReleaseItEarly) {
  PoolChannels pc(/*cma_bytes=*/2048);
  Channels& c = pc.c;
  ASSERT_TRUE(c.sender->Send(Frame(pc.h, {1})).ok());
  ASSERT_EQ(c.receiver->Poll(&pc.host, 10), 1);  // probes CMA; batch grows to 2
  ASSERT_TRUE(c.sender->segment_for_test()->PeerCanReadUs()) << "process_vm_readv refused";
  ASSERT_TRUE(c.sender->Send(PoolFrame(pc.ps.pool, pc.h, 5000, 0x11)).ok());
  wire::FrameHeader big = pc.h;
  big.payload_len = 5000;
  ASSERT_TRUE(c.sender->Send(Frame(big, std::vector<uint8_t>(5000, 0x22))).ok());  // CMA
  EXPECT_EQ(c.sender->HeldForTest(), 2u);
  ASSERT_EQ(c.receiver->Poll(&pc.host, 10), 2);  // both in one poll
  EXPECT_EQ(pc.host.payloads[1], std::vector<uint8_t>(5000, 0x11));
  EXPECT_EQ(pc.host.payloads[2], std::vector<uint8_t>(5000, 0x22));
  // The pool frame is still read in place: neither id may be complete yet.
  EXPECT_EQ(c.sender->HeldForTest(), 2u);
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 1u);
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(c.sender->HeldForTest(), 0u);
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 0u);
}

TEST(ShmChannelTest, CorruptPoolRecordsAreRejectedAndCounted) {
  PoolChannels pc;
  FakeHost& host = pc.host;
  Channels& c = pc.c;
  PoolSetup& ps = pc.ps;
  RingProducer raw = c.sender->segment_for_test()->MakeProducer();
  auto put = [&](uint64_t offset, uint64_t length, uint64_t id, size_t record = 24) {
    uint8_t rec[32] = {};
    wire::PutLe64(rec, offset);
    wire::PutLe64(rec + 8, length);
    wire::PutLe64(rec + 16, id);
    ASSERT_TRUE(raw.TryWrite({reinterpret_cast<const std::byte*>(rec), record}, {}, kPoolFrame));
  };
  const uint64_t size = ps.pool->size();
  put(size, 64, 1);                // offset at the end
  put(size - 32, 64, 2);           // runs past the end
  put(~uint64_t{0} - 10, 100, 3);  // offset + length overflows
  put(0, 20, 4);                   // shorter than a frame header
  put(0, 64, 5, 16);               // record of the wrong size
  // A good one: a frame written straight into the pool at offset 0.
  ByteBlock f = PoolFrame(ps.pool, pc.h, 8, 7);
  ASSERT_EQ(f.data(), ps.pool->base());
  put(0, f.size(), 6);
  int got = 0;
  for (int i = 0; i < 10; ++i) got += c.receiver->Poll(&host, 10);
  EXPECT_EQ(got, 1);
  EXPECT_EQ(host.rejected, 5);
  ASSERT_EQ(host.payloads.size(), 1u);
  EXPECT_EQ(host.payloads[0], std::vector<uint8_t>(8, 7));
  // The receiver told the sender it is done with every id up to the last one.
  EXPECT_EQ(c.sender->segment_for_test()->CmaDoneOfOurProducer().load(), 6u);
}

TEST(ShmChannelTest, PoolRecordWithoutAMappedPeerPoolIsRejected) {
  FakeHost host;
  Channels c = Make(&host);
  RingProducer raw = c.sender->segment_for_test()->MakeProducer();
  uint8_t rec[24] = {};
  wire::PutLe64(rec + 8, 64);
  ASSERT_TRUE(raw.TryWrite({reinterpret_cast<const std::byte*>(rec), 24}, {}, kPoolFrame));
  EXPECT_EQ(c.receiver->Poll(&host, 10), 0);
  EXPECT_EQ(host.rejected, 1);
}

TEST(ShmChannelTest, FailedPeerReleasesHeldPoolBlocks) {
  PoolChannels pc;
  Channels& c = pc.c;
  PoolSetup& ps = pc.ps;
  const wire::FrameHeader& h = pc.h;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.sender->Send(PoolFrame(ps.pool, h, 4000, 1)).ok());
  EXPECT_EQ(ps.pool->stats().blocks_in_use, 3u);  // the receiver never polled
  EXPECT_TRUE(c.sender->MarkFailed());
  EXPECT_EQ(ps.pool->stats().blocks_in_use, 0u);
  EXPECT_EQ(c.sender->Send(PoolFrame(ps.pool, h, 4000, 1)).code(), StatusCode::kUnavailable);
  EXPECT_EQ(ps.pool->stats().blocks_in_use, 0u);
}

// Heap frames by cross-memory attach (the receiver copies them out of the sender's
// memory): a receiver that stalls keeps them held and counted (QueuedBytes, Outstanding),
// then gets every byte intact; one that fails releases them at once; a record naming
// memory the receiver cannot read is rejected and counted, and the channel goes on.
TEST(ShmChannelTest, CmaHeapFramesUnderAStalledThenFailedReceiver) {
  FakeHost host;
  Channels c = Make(&host, /*cma_bytes=*/2048);
  wire::FrameHeader h;
  h.source = 1;
  h.target = 2;
  ASSERT_TRUE(c.sender->Send(Frame(h, {1})).ok());
  ASSERT_EQ(c.receiver->Poll(&host, 10), 1);  // probes CMA
  c.receiver->ReleaseDelivered();
  ASSERT_TRUE(c.sender->segment_for_test()->PeerCanReadUs()) << "process_vm_readv refused";
  constexpr size_t kPayload = 100000;
  wire::FrameHeader big = h;
  big.payload_len = kPayload;
  for (uint8_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(c.sender->Send(Frame(big, std::vector<uint8_t>(kPayload, 0x40 + i))).ok());
  }
  // Stalled: nothing copied yet, all four held and counted.
  EXPECT_EQ(c.sender->HeldForTest(), 4u);
  EXPECT_EQ(c.sender->QueuedBytes(), 4 * (wire::kHeaderSize + kPayload));
  EXPECT_EQ(c.sender->Outstanding().frames, 4u);
  int got = 0;
  for (int i = 0; i < 100 && got < 4; ++i) got += c.receiver->Poll(&host, 10);
  ASSERT_EQ(got, 4);
  for (uint8_t i = 0; i < 4; ++i) {
    EXPECT_EQ(host.payloads[1 + i], std::vector<uint8_t>(kPayload, 0x40 + i)) << int{i};
  }
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(c.sender->HeldForTest(), 0u);
  EXPECT_EQ(c.sender->QueuedBytes(), 0u);
  EXPECT_EQ(c.sender->Outstanding().frames, 0u);
  // A receiver that dies with frames held: they go at once.
  Channels d = Make(&host, /*cma_bytes=*/2048);
  ASSERT_TRUE(d.sender->Send(Frame(h, {1})).ok());
  ASSERT_EQ(d.receiver->Poll(&host, 10), 1);
  ASSERT_TRUE(d.sender->segment_for_test()->PeerCanReadUs());
  for (uint8_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(d.sender->Send(Frame(big, std::vector<uint8_t>(kPayload, i))).ok());
  }
  EXPECT_EQ(d.sender->HeldForTest(), 3u);
  EXPECT_TRUE(d.sender->MarkFailed());  // the receiver died
  EXPECT_EQ(d.sender->HeldForTest(), 0u);
  EXPECT_EQ(d.sender->QueuedBytes(), 0u);
  EXPECT_EQ(d.sender->Send(Frame(big, std::vector<uint8_t>(kPayload, 9))).code(),
            StatusCode::kUnavailable);
}

// Heap frames staged in the pool (SetStageBytes): copied into pool blocks by Send and
// delivered in place, counted in QueuedBytes while held. A receiver that stalls holds the
// blocks; once the pool (1 MiB: eight blocks of 128 KiB) is exhausted the next frames go
// the heap way (here the ring, queued and counted); all arrive intact and in order when the
// receiver polls again, and every block comes back. A receiver that dies releases them at once.
TEST(ShmChannelTest, StagedHeapFramesUnderAStalledThenFailedReceiver) {
  PoolChannels pc;
  Channels& c = pc.c;
  c.sender->SetStageBytes(4096);
  wire::FrameHeader big = pc.h;
  constexpr size_t kPayload = 100000;  // + header: a 128 KiB block
  big.payload_len = kPayload;
  ASSERT_TRUE(c.sender->Send(Frame(pc.h, std::vector<uint8_t>(100, 1))).ok());  // < 4096
  EXPECT_EQ(c.sender->counters().pool_frames_staged.load(), 0u);
  for (uint8_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(c.sender->Send(Frame(big, std::vector<uint8_t>(kPayload, 0x60 + i))).ok());
  }
  EXPECT_EQ(c.sender->counters().pool_frames_staged.load(), 8u);
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 8u);
  EXPECT_EQ(pc.ps.pool->stats().failures, 2u);
  EXPECT_EQ(c.sender->HeldForTest(), 8u);
  // Staged frames count as the heap frames they stand for (send_queue_bytes bounds them).
  EXPECT_EQ(c.sender->QueuedBytes(), 10 * (wire::kHeaderSize + kPayload));
  EXPECT_EQ(c.sender->Outstanding().frames, 11u);
  size_t got = 0;
  for (int i = 0; i < 1000 && got < 11; ++i) {
    c.sender->Flush();
    got += static_cast<size_t>(c.receiver->Poll(&pc.host, 10));
  }
  ASSERT_EQ(got, 11u);
  EXPECT_EQ(pc.host.rejected, 0);
  EXPECT_EQ(pc.host.payloads[0], std::vector<uint8_t>(100, 1));
  for (uint8_t i = 0; i < 10; ++i) {
    EXPECT_EQ(pc.host.payloads[1 + i], std::vector<uint8_t>(kPayload, 0x60 + i)) << int{i};
  }
  c.receiver->ReleaseDelivered();
  EXPECT_EQ(c.sender->HeldForTest(), 0u);
  EXPECT_EQ(c.sender->QueuedBytes(), 0u);
  EXPECT_EQ(c.sender->Outstanding().frames, 0u);
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 0u);
  EXPECT_EQ(c.receiver->counters().pool_frames_received.load(), 8u);
  // A receiver that dies with staged frames held: the blocks come back at once.
  for (uint8_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.sender->Send(Frame(big, std::vector<uint8_t>(kPayload, i))).ok());
  }
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 3u);
  EXPECT_TRUE(c.sender->MarkFailed());
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 0u);
  EXPECT_EQ(c.sender->QueuedBytes(), 0u);
  EXPECT_EQ(c.sender->Send(Frame(big, std::vector<uint8_t>(kPayload, 9))).code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(pc.ps.pool->stats().blocks_in_use, 0u);
}

TEST(ShmChannelTest, CmaRecordOfUnreadableMemoryIsRejectedAndTheChannelGoesOn) {
  FakeHost host;
  Channels c = Make(&host, /*cma_bytes=*/2048);
  // A compact RSR record (context, endpoint, handler, flags 0) with the payload byte 5.
  static constexpr uint8_t kOneRsr[17] = {1, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 5};
  RingProducer raw = c.sender->segment_for_test()->MakeProducer();
  uint8_t rec[24] = {};
  wire::PutLe64(rec, 8);  // address 8: never mapped
  wire::PutLe64(rec + 8, 4096);
  wire::PutLe64(rec + 16, 7);
  ASSERT_TRUE(raw.TryWrite({reinterpret_cast<const std::byte*>(rec), 24}, {}, kCmaFrame));
  EXPECT_EQ(c.receiver->Poll(&host, 10), 0);
  EXPECT_EQ(host.rejected, 1);
  // The sender may free what it named (ids complete whatever happened).
  EXPECT_EQ(c.receiver->segment_for_test()->CmaDoneOfOurConsumer().load(), 7u);
  // The channel goes on: a record written after it is delivered.
  ASSERT_TRUE(
      raw.TryWrite({reinterpret_cast<const std::byte*>(kOneRsr), sizeof kOneRsr}, {}, kCompactRsr));
  EXPECT_EQ(c.receiver->Poll(&host, 10), 1);
  ASSERT_EQ(host.payloads.size(), 1u);
  EXPECT_EQ(host.payloads[0], std::vector<uint8_t>{5});
}

}  // namespace
}  // namespace ukai::rt::shm
