#include "rt/modules/shm/shm_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "rt/modules/shm/shm_socket.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::shm {
namespace {

constexpr int kCloseFlushMs = 2000;  // Close() waits this long for the peer to drain

}  // namespace

ShmChannel::ShmChannel(RuntimeId self, RuntimeId peer, std::unique_ptr<ShmSegment> segment,
                       int socket, int peer_efd, size_t chunk_bytes, size_t cma_bytes,
                       ModuleHost* host)
    : self_(self),
      peer_(peer),
      segment_(std::move(segment)),
      socket_(socket),
      peer_efd_(peer_efd),
      max_record_(MaxRecordPayload(segment_->ring_capacity())),
      chunk_bytes_(chunk_bytes),
      cma_bytes_(cma_bytes),
      host_(host),
      producer_(segment_->MakeProducer()),
      consumer_(segment_->MakeConsumer()) {
  sends_in_place_ = true;
  send_lock_ = &send_mu_;
  SetInPlaceLimit();
}

void ShmChannel::SetInPlaceLimit() {
  size_t limit = std::min(max_record_ + 1, stage_bytes_);
  if (cma_bytes_ != 0) limit = std::min(limit, cma_bytes_);
  in_place_limit_ = limit;
}

ShmChannel::~ShmChannel() {
  {
    std::lock_guard<SpinMutex> lock(send_mu_);
    cma_held_.clear();  // pool blocks go back to the pool before our reference goes
    queue_.clear();
  }
  if (pool_ != nullptr) pool_->Unref();
  segment_->MarkClosed();
  if (socket_ >= 0) close(socket_);
  const int efd = peer_efd_.load();
  if (efd >= 0) close(efd);
}

void ShmChannel::ConfigurePool(ShmPool* local, size_t min_bytes, bool peer_mapped,
                               std::shared_ptr<ShmCounters> counters) {
  if (local != nullptr) local->Ref();
  if (pool_ != nullptr) pool_->Unref();
  pool_ = local;
  pool_min_ = min_bytes;
  peer_mapped_pool_.store(peer_mapped && local != nullptr, std::memory_order_release);
  if (counters) counters_ = std::move(counters);
}

void ShmChannel::SetPeerPool(std::unique_ptr<PeerPool> pool) {
  peer_pool_owner_ = std::move(pool);
  peer_pool_.store(peer_pool_owner_.get(), std::memory_order_release);
}

Status ShmChannel::ReadAcceptReply(int timeout_ms) {
  std::lock_guard<std::mutex> lock(handshake_mu_);
  if (handshake_done()) return Status::Ok();  // another thread read it
  std::vector<uint8_t> bytes;
  std::vector<int> fds;
  UKAI_RETURN_IF_ERROR(ReceiveMessage(socket_, timeout_ms, &bytes, &fds));
  Result<Reply> r = DecodeReply(bytes);
  if (r.ok() && r->status == 0 && reply_check_) {
    if (Status c = reply_check_(*r); !c.ok()) r = c;
  }
  Status pool_status;
  if (r.ok() && r->status == 0 && fds.size() >= 2) {
    Result<std::unique_ptr<PeerPool>> pp = PeerPool::Map(fds[1]);
    if (pp.ok()) {
      SetPeerPool(std::move(*pp));
    } else {
      pool_status = pp.status();
    }
  }
  for (size_t i = 1; i < fds.size(); ++i) close(fds[i]);
  if (!r.ok() || r->status != 0 || r->from != peer_ || fds.empty() || !pool_status.ok()) {
    if (!fds.empty()) close(fds[0]);
    return Status::Unavailable("shm: peer " + IdString(peer_) + " refused the connection" +
                               (r.ok() ? "" : " (" + r.status().message() + ")") +
                               (pool_status.ok() ? "" : " (" + pool_status.message() + ")"));
  }
  if (pool_ != nullptr && (r->flags & kReplyMappedYourPool) != 0) {
    peer_mapped_pool_.store(true, std::memory_order_release);
  }
  peer_efd_.store(fds[0], std::memory_order_release);
  // The peer has attached (and removed the name); nothing left for us to unlink.
  [[maybe_unused]] Status s = segment_->Unlink();
  return Status::Ok();
}

void ShmChannel::WakePeer() {
  int efd = peer_efd_.load(std::memory_order_acquire);
  if (efd < 0) {
    // The peer waits on our ring, so its reply is already in the socket (see header).
    if (!ReadAcceptReply(1000).ok()) return;
    efd = peer_efd_.load(std::memory_order_acquire);
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(efd, &one, sizeof one);
}

size_t ShmChannel::WriteSome(const ByteBlock& frame, size_t offset) {
  const size_t size = frame.size();
  if (offset == 0 && frame.source() == pool_ && pool_ != nullptr && size >= pool_min_ &&
      peer_mapped_pool_.load(std::memory_order_acquire)) {
    std::span<std::byte> area = producer_.TryReserve(24);
    if (area.empty()) return 0;
    auto* p = reinterpret_cast<uint8_t*>(area.data());
    wire::PutLe64(p, static_cast<uint64_t>(frame.data() - pool_->base()));
    wire::PutLe64(p + 8, size);
    wire::PutLe64(p + 16, ++cma_next_id_);
    producer_.Commit(24, kPoolFrame);
    counters_->pool_frames_sent.fetch_add(1, std::memory_order_relaxed);
    return size;  // the caller hands the block to cma_held_
  }
  if (offset == 0 && cma_bytes_ != 0 && size >= cma_bytes_ && segment_->PeerCanReadUs()) {
    std::span<std::byte> area = producer_.TryReserve(24);
    if (area.empty()) return 0;
    auto* p = reinterpret_cast<uint8_t*>(area.data());
    wire::PutLe64(p, reinterpret_cast<uintptr_t>(frame.data()));
    wire::PutLe64(p + 8, size);
    wire::PutLe64(p + 16, ++cma_next_id_);
    producer_.Commit(24, kCmaFrame);
    return size;  // the caller hands the block to cma_held_
  }
  const size_t max_record = max_record_;
  if (offset == 0 && size <= max_record && frame.data()[5] == uint8_t(wire::FrameKind::kRsr) &&
      wire::GetLe16(frame.data() + 6) == wire::kHeaderSize) {
    return WriteCompact(frame) ? size : 0;
  }
  if (offset == 0 && size <= max_record) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(frame.data()), size);
    return producer_.TryWrite(bytes, {}, kWholeFrame) ? size : 0;
  }
  while (offset < size) {
    const size_t n = std::min(chunk_bytes_, size - offset);
    std::span<std::byte> area = producer_.TryReserve(n);
    if (area.empty()) break;
    std::memcpy(area.data(), frame.data() + offset, n);
    const uint32_t flag =
        offset == 0 ? kFirstChunk : (offset + n == size ? kLastChunk : kMiddleChunk);
    producer_.Commit(n, flag);
    offset += n;
  }
  return offset;
}

namespace {

// A compact record's header: the route's words, then the address when it has one (`head`
// bytes: kCompactHeader, or 8 more).
void PutCompactHeader(const CommObject::RsrRoute& r, size_t head, uint8_t* out) {
  wire::PutLe32(out, r.context);
  wire::PutLe32(out + 4, r.endpoint);
  wire::PutLe32(out + 8, r.handler);
  wire::PutLe32(out + 12, r.flags);
  if (head != kCompactHeader) wire::PutLe64(out + kCompactHeader, r.address);
}

// Copies `n` <= 32 bytes without a call to memcpy (an 8-byte RSR's payload: two moves),
// with overlapping moves that stay inside the n bytes.
inline void CopySmall(uint8_t* out, const uint8_t* in, size_t n) {
  if (n >= 16) {
    std::memcpy(out, in, 16);
    std::memcpy(out + n - 16, in + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(out, in, 8);
    std::memcpy(out + n - 8, in + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(out, in, 4);
    std::memcpy(out + n - 4, in + n - 4, 4);
  } else if (n != 0) {
    out[0] = in[0];
    out[n / 2] = in[n / 2];
    out[n - 1] = in[n - 1];
  }
}

constexpr size_t kLinePayload = kFirstLinePayload - kCompactHeader;  // 32

}  // namespace

// Inline into TrySendInPlaceLocked: an RSR without an address whose payload fits the
// record's first cache line is the common small RSR.
inline bool ShmChannel::WriteCompactRecord(const RsrRoute& r, std::span<const uint8_t> payload) {
  const size_t n = payload.size();
  if ((r.flags & wire::kFlagHasAddress) == 0 && n <= kLinePayload) [[likely]] {
    return producer_.TryWriteLine(kCompactHeader + n, kCompactRsr, [&](std::byte* area) {
      auto* out = reinterpret_cast<uint8_t*>(area);
      PutCompactHeader(r, kCompactHeader, out);
      CopySmall(out + kCompactHeader, payload.data(), n);
    });
  }
  return WriteCompactRecordSlow(r, payload);
}

bool ShmChannel::WriteCompactRecordSlow(const RsrRoute& r, std::span<const uint8_t> payload) {
  const size_t head = (r.flags & wire::kFlagHasAddress) != 0 ? kCompactHeader + 8 : kCompactHeader;
  const size_t n = payload.size();
  if (head + n <= kFirstLinePayload) {  // one cache line (an addressed 8-byte RSR)
    return producer_.TryWriteLine(head + n, kCompactRsr, [&](std::byte* area) {
      auto* out = reinterpret_cast<uint8_t*>(area);
      PutCompactHeader(r, head, out);
      if (n != 0) std::memcpy(out + head, payload.data(), n);
    });
  }
  std::span<std::byte> area = producer_.TryReserve(head + n);
  if (area.empty()) return false;
  auto* out = reinterpret_cast<uint8_t*>(area.data());
  // Bytes past the record's first cache line first (the record is longer than a line
  // here), the first line last (see Commit).
  const size_t first = kFirstLinePayload > head ? kFirstLinePayload - head : 0;
  std::memcpy(out + head + first, payload.data() + first, n - first);
  PutCompactHeader(r, head, out);
  if (first != 0) std::memcpy(out + head, payload.data(), first);
  producer_.Commit(head + n, kCompactRsr);
  return true;
}

bool ShmChannel::WriteCompact(const ByteBlock& frame) {
  // The runtime encoded the header (wire/rsr_frame.h layout): its routing words are
  // context, endpoint, handler at 32..43, flags at 8, the address at 48.
  const uint8_t* h = frame.data();
  RsrRoute r;
  r.context = wire::GetLe32(h + 32);
  r.endpoint = wire::GetLe32(h + 36);
  r.handler = wire::GetLe32(h + 40);
  r.flags = wire::GetLe32(h + 8);
  if ((r.flags & wire::kFlagHasAddress) != 0) r.address = wire::GetLe64(h + 48);
  return WriteCompactRecord(r, {h + wire::kHeaderSize, frame.size() - wire::kHeaderSize});
}

bool ShmChannel::TrySendInPlace(const RsrRoute& route, std::span<const uint8_t> payload) {
  std::lock_guard<SpinMutex> lock(send_mu_);
  return TrySendInPlaceLocked(route, payload);
}

bool ShmChannel::TrySendInPlaceLocked(const RsrRoute& route, std::span<const uint8_t> payload) {
  // Only what WriteSome would send as a compact record had it come as a heap frame: one
  // that fits a record and is smaller than the sizes that are staged in the pool or go by
  // cross-memory attach (in_place_limit_).
  if (wire::kHeaderSize + payload.size() >= in_place_limit_ || state() != CommState::kOk) {
    return false;
  }
  if (!cma_held_.empty()) ReapCmaLocked();
  if (!queue_.empty() && FlushLocked()) return false;  // frames still queued go first
  if (!WriteCompactRecord(route, payload)) return false;
  RingDoorbell();
  InRing();
  return true;
}

// Inline into Poll: it runs once per small RSR; the rejection is out of line.
inline bool ShmChannel::DeliverCompact(ModuleHost* host, const RecordView& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.payload.data());
  const size_t size = v.payload.size();
  if (size >= kCompactHeader) [[likely]] {
    wire::FrameHeader h;
    h.flags = wire::GetLe32(p + 12);
    const size_t at = (h.flags & wire::kFlagHasAddress) != 0 ? kCompactHeader + 8 : kCompactHeader;
    if ((h.flags & ~wire::kKnownFlags) == 0 && size >= at && size - at <= wire::kMaxPayloadBytes)
        [[likely]] {
      h.kind = wire::FrameKind::kRsr;
      h.payload_len = static_cast<uint32_t>(size - at);
      h.source = peer_;
      h.target = self_;
      h.context = wire::GetLe32(p);
      h.endpoint = wire::GetLe32(p + 4);
      h.handler = wire::GetLe32(p + 8);
      if (at != kCompactHeader) h.address = wire::GetLe64(p + kCompactHeader);
      host->Deliver(h, {p + at, h.payload_len}, nullptr);
      return true;
    }
  }
  RejectCompact(host, size);
  return false;
}

void ShmChannel::RejectCompact(ModuleHost* host, size_t size) {
  host->RejectFrame(Status::ParseError("shm: compact RSR record of " + std::to_string(size) +
                                       " bytes with bad header or flags"));
}

Status ShmChannel::Send(ByteBlock&& frame) {
  uint32_t token = 0;
  UKAI_RETURN_IF_ERROR(PrepareSend(frame, &token));
  std::lock_guard<SpinMutex> lock(send_mu_);
  SendLocked(std::move(frame), token);
  return Status::Ok();
}

Status ShmChannel::PrepareSend(ByteBlock& frame, uint32_t* token) {
  if (state() != CommState::kOk) {
    return Status::Unavailable("shm: connection to peer " + IdString(peer_) +
                               (state() == CommState::kClosed ? " is closed" : " failed"));
  }
  if (frame.size() < wire::kHeaderSize) {
    return Status::InvalidArgument("shm: frame of " + std::to_string(frame.size()) +
                                   " bytes is shorter than a header");
  }
  *token = frame.size() >= stage_bytes_ && MaybeStage(frame) ? 1 : 0;  // 1: staged
  return Status::Ok();
}

void ShmChannel::SendLocked(ByteBlock&& frame, uint32_t token) {
  const bool staged = token != 0;
  if (!cma_held_.empty()) ReapCmaLocked();
  // Frames queued behind a full ring go first, from this thread too: a sender streaming
  // large frames keeps the ring busy instead of waiting for the next progress pass.
  if (!queue_.empty()) FlushLocked();
  size_t done = 0;
  if (queue_.empty()) {
    const uint64_t cma_before = cma_next_id_;
    done = WriteSome(frame, 0);
    if (done != 0) RingDoorbell();
    if (cma_next_id_ != cma_before) {
      const bool counted = Counted(frame, staged);
      Hold(cma_next_id_, std::move(frame), counted);
      return;
    }
    if (done == frame.size()) {
      InRing();
      return;
    }
    queue_offset_ = done;
  }
  held_bytes_.fetch_add(frame.size(), std::memory_order_relaxed);
  queue_.push_back({std::move(frame), staged});
  queued_.store(true, std::memory_order_release);
  host_->Wake();  // the progress engine may be blocked in poll(): it must flush the queue
}

bool ShmChannel::MaybeStage(ByteBlock& frame) {
  const size_t size = frame.size();
  if (size < pool_min_ || pool_ == nullptr || frame.source() == pool_ ||
      !peer_mapped_pool_.load(std::memory_order_acquire)) {
    return false;
  }
  ByteBlock staged = ByteBlock::FromSource(pool_, size);
  if (staged.capacity() < size) return false;  // the pool is exhausted: CMA or the ring
  std::memcpy(staged.Extend(size), frame.data(), size);
  frame = std::move(staged);
  counters_->pool_frames_staged.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool ShmChannel::Flush() {
  std::unique_lock<SpinMutex> lock(send_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return true;  // a sender is at it; look again next time
  return FlushLocked();
}

bool ShmChannel::FlushLocked() {
  bool wrote = false;
  while (!queue_.empty()) {
    const size_t before = queue_offset_;
    const uint64_t cma_before = cma_next_id_;
    Queued& q = queue_.front();
    queue_offset_ = WriteSome(q.frame, queue_offset_);
    wrote |= queue_offset_ != before;
    if (queue_offset_ < q.frame.size()) break;
    held_bytes_.fetch_sub(q.frame.size(), std::memory_order_relaxed);
    if (cma_next_id_ != cma_before) {
      const bool counted = Counted(q.frame, q.staged);
      Hold(cma_next_id_, std::move(q.frame), counted);
    } else {
      InRing();
    }
    queue_.pop_front();
    queue_offset_ = 0;
  }
  if (wrote) RingDoorbell();
  queued_.store(!queue_.empty(), std::memory_order_release);
  return !queue_.empty();
}

void ShmChannel::ReapCmaLocked() {
  const uint64_t done = segment_->CmaDoneOfOurProducer().load(std::memory_order_acquire);
  while (!cma_held_.empty() && cma_held_.front().id <= done) {
    const Held& h = cma_held_.front();
    if (h.counted) held_bytes_.fetch_sub(h.frame.size(), std::memory_order_relaxed);
    cma_held_.pop_front();
  }
  cma_pending_.store(!cma_held_.empty(), std::memory_order_release);
}

void ShmChannel::Hold(uint64_t id, ByteBlock&& frame, bool counted) {
  if (counted) held_bytes_.fetch_add(frame.size(), std::memory_order_relaxed);
  cma_held_.push_back({id, std::move(frame), counted});
  cma_pending_.store(true, std::memory_order_release);
}

void EndQueue::PopUpTo(uint64_t tail) {
  const size_t mask = buf_.size() - 1;
  size_t lo = 0, hi = count_;  // the first end past `tail` lies in [lo, hi]
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (buf_[(head_ + mid) & mask] <= tail) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  head_ = (head_ + lo) & mask;
  count_ -= lo;
}

void EndQueue::Grow() {
  std::vector<uint64_t> bigger(2 * buf_.size());
  for (size_t i = 0; i < count_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
  buf_.swap(bigger);
  head_ = 0;
}

CommObject::Unconfirmed ShmChannel::CountLocked() {
  if (lost_counted_) return lost_;
  const uint64_t tail = producer_.ConsumedUpTo();
  ends_.PopUpTo(tail);
  Unconfirmed u{queue_.size() + cma_held_.size() + ends_.size(), producer_.position() - tail};
  for (const Queued& q : queue_) u.bytes += q.frame.size();
  for (const Held& h : cma_held_) u.bytes += h.frame.size();
  return u;
}

CommObject::Unconfirmed ShmChannel::Outstanding() {
  std::lock_guard<SpinMutex> lock(send_mu_);
  if (state() == CommState::kOk) {
    if (!queue_.empty()) FlushLocked();
    if (!cma_held_.empty()) ReapCmaLocked();
  }
  return CountLocked();
}

// With send_mu_ held, when the channel stops for good: remembers what the peer did not
// take and lets go of it (pool blocks back to the pool).
void ShmChannel::DropPending() {
  if (!lost_counted_) {
    lost_ = CountLocked();
    lost_counted_ = true;
  }
  cma_held_.clear();
  cma_pending_.store(false, std::memory_order_release);
  queue_.clear();
  queued_.store(false, std::memory_order_release);
  held_bytes_.store(0, std::memory_order_relaxed);
}

bool ShmChannel::ReapCma() {
  if (!cma_pending_.load(std::memory_order_acquire)) return false;
  std::unique_lock<SpinMutex> lock(send_mu_, std::try_to_lock);
  if (lock.owns_lock()) ReapCmaLocked();
  return cma_pending_.load(std::memory_order_relaxed);
}

ByteBlock ShmChannel::TakeBlock(size_t size) {
  for (size_t i = 0; i < spare_.size(); ++i) {
    if (spare_[i].capacity() >= size) {
      ByteBlock b = std::move(spare_[i]);
      spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(i));
      b.Clear();
      return b;
    }
  }
  return ByteBlock(size);
}

Status ShmChannel::PullCma(const RecordView& v, ByteBlock* complete) {
  if (v.payload.size() != 24) return Status::ParseError("shm: CMA record of bad size");
  const auto* p = reinterpret_cast<const uint8_t*>(v.payload.data());
  const uint64_t addr = wire::GetLe64(p), size = wire::GetLe64(p + 8), id = wire::GetLe64(p + 16);
  // Whatever happens, the sender may free the frame afterwards.
  struct Done {
    ShmChannel* ch;
    uint64_t id;
    ~Done() { ch->Complete(id); }
  } done{this, id};
  if (size < wire::kHeaderSize || size > wire::kHeaderSize + wire::kMaxPayloadBytes) {
    return Status::ParseError("shm: CMA frame of " + std::to_string(size) + " bytes");
  }
  ByteBlock b = TakeBlock(size);
  b.Resize(size);
  size_t got = 0;
  const pid_t pid = segment_->peer_pid();
  while (got < size) {
    iovec local{b.data() + got, size - got};
    iovec remote{reinterpret_cast<void*>(addr + got), size - got};
    const ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) {
      return Status::Unavailable("shm: process_vm_readv from pid " + std::to_string(pid) +
                                 " failed: " + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  *complete = std::move(b);
  return Status::Ok();
}

void ShmChannel::Complete(uint64_t id) {
  if (id > done_id_) done_id_ = id;  // ids grow; a smaller one (corrupt record) is ignored
  if (!done_pending_) PublishDone();
}

void ShmChannel::PublishDone() {
  segment_->CmaDoneOfOurConsumer().store(done_id_, std::memory_order_release);
  done_pending_ = false;
}

void ShmChannel::ReleaseDelivered() {
  if (consumed_) {
    consumer_.Publish();
    consumed_ = false;
  }
  if (done_pending_) PublishDone();
}

size_t ShmChannel::HeldForTest() {
  std::lock_guard<SpinMutex> lock(send_mu_);
  ReapCmaLocked();
  return cma_held_.size();
}

bool ShmChannel::DeliverPool(ModuleHost* host, const RecordView& v) {
  if (v.payload.size() != 24) {
    host->RejectFrame(Status::ParseError("shm: pool record of " + std::to_string(v.payload.size()) +
                                         " bytes, not 24"));
    return false;
  }
  const auto* p = reinterpret_cast<const uint8_t*>(v.payload.data());
  const uint64_t offset = wire::GetLe64(p), size = wire::GetLe64(p + 8), id = wire::GetLe64(p + 16);
  // Whatever happens, the sender may free the block once this poll's frames are done.
  if (id > done_id_) done_id_ = id;
  done_pending_ = true;
  const PeerPool* pool = peer_pool_.load(std::memory_order_acquire);
  if (pool == nullptr && !handshake_done()) {
    // Connector: the listener's reply (with its pool) is in the socket before its records.
    [[maybe_unused]] Status s = ReadAcceptReply(1000);
    pool = peer_pool_.load(std::memory_order_acquire);
  }
  std::string why;
  if (pool == nullptr) {
    why = "the peer's pool is not mapped";
  } else if (size < wire::kHeaderSize || size > wire::kHeaderSize + wire::kMaxPayloadBytes) {
    why = "frame length " + std::to_string(size) + " out of range";
  } else if (offset > pool->size() || size > pool->size() - offset) {
    why = "offset " + std::to_string(offset) + " + length " + std::to_string(size) +
          " outside the peer's pool of " + std::to_string(pool->size()) + " bytes";
  }
  if (!why.empty()) {
    host->RejectFrame(Status::ParseError("shm: pool record: " + why));
    return false;
  }
  counters_->pool_frames_received.fetch_add(1, std::memory_order_relaxed);
  // In place: the runtime copies only for threaded handlers (owned = nullptr).
  return host->DeliverFrame({pool->base() + offset, size}, nullptr).ok();
}

bool ShmChannel::DeliverRecord(ModuleHost* host, const RecordView& v) {
  if (v.flags == kCompactRsr) return DeliverCompact(host, v);
  if (v.flags == kPoolFrame) return DeliverPool(host, v);
  if (v.flags == kWholeFrame) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(v.payload.data());
    return host->DeliverFrame({bytes, v.payload.size()}, nullptr).ok();
  }
  ByteBlock whole;
  Status s = v.flags == kCmaFrame ? PullCma(v, &whole) : ReassembleChunk(v, host, &whole);
  if (!s.ok()) {
    host->RejectFrame(s);
    return false;
  }
  if (whole.empty()) return false;  // more chunks to come
  // The bytes must outlive this call (until the next Poll) unless the runtime takes them.
  held_.push_back(std::move(whole));
  ByteBlock& frame = held_.back();
  return host->DeliverFrame(frame.span(), &frame).ok();  // counts a malformed frame itself
}

Status ShmChannel::ReassembleChunk(const RecordView& v, ModuleHost* host, ByteBlock* complete) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(v.payload.data());
  const std::span<const uint8_t> data(bytes, v.payload.size());
  switch (v.flags) {
    case kFirstChunk: {
      // Our sender never starts a frame before it finished the last: a peer that does
      // loses the unfinished one, and says so (it was once dropped silently).
      if (reassembly_expected_ != 0) {
        host->RejectFrame(Status::ParseError(
            "shm: a chunked frame began while one of " + std::to_string(reassembly_expected_) +
            " bytes had " + std::to_string(reassembly_.size()) + " of them: that one is lost"));
      }
      // A refused first chunk leaves no reassembly open: the chunks after it are out of
      // sequence (they once went on into a fresh block, which the last one delivered).
      reassembly_expected_ = 0;
      Result<wire::FrameHeader> h = wire::DecodeHeader(data);
      if (!h.ok()) return h.status();
      if (h->frame_size() <= data.size()) {
        return Status::ParseError("shm: chunked frame of " + std::to_string(data.size()) +
                                  " bytes already complete in its first chunk");
      }
      reassembly_expected_ = h->frame_size();
      reassembly_ = TakeBlock(reassembly_expected_);
      std::memcpy(reassembly_.Extend(data.size()), data.data(), data.size());
      return Status::Ok();
    }
    case kMiddleChunk:
    case kLastChunk: {
      if (reassembly_expected_ == 0 || reassembly_.size() + data.size() > reassembly_expected_ ||
          (v.flags == kLastChunk) != (reassembly_.size() + data.size() == reassembly_expected_)) {
        reassembly_expected_ = 0;
        return Status::ParseError("shm: chunk out of sequence");
      }
      if (!data.empty()) std::memcpy(reassembly_.Extend(data.size()), data.data(), data.size());
      if (v.flags == kMiddleChunk) return Status::Ok();
      reassembly_expected_ = 0;
      *complete = std::move(reassembly_);
      return Status::Ok();
    }
    default:
      return Status::ParseError("shm: unknown record flags " + std::to_string(v.flags));
  }
}

int ShmChannel::Poll(ModuleHost* host, int budget, int* records, bool coalesce) {
  ReleaseDelivered();
  // Frames the runtime did not take (non-threaded handlers read them in place) are kept
  // for reuse: a fresh multi-megabyte block costs a page fault per 4 KiB.
  if (!held_.empty()) {
    for (ByteBlock& b : held_) {
      if (b.capacity() != 0 && spare_.size() < 4) spare_.push_back(std::move(b));
    }
    held_.clear();
  }
  if (!probed_ && segment_->peer_pid() > 0) {
    probed_ = true;
    segment_->ProbePeerMemory();
  }
  // Coalescing: right after a poll that delivered frames and then found the ring empty,
  // the next few polls leave the ring alone. A consumer that keeps reading the line the
  // producer writes next takes it away from the producer once per record (each record then
  // costs the producer a cache-line transfer, paid in full at its next locked instruction);
  // left alone for a moment, the producer writes several records into lines it owns and
  // the next poll takes them as one batch. An answer to what we just delivered cannot come
  // back within those few passes (a round trip between cores takes longer), so a ping-pong
  // loses nothing.
  if (coalesce && skip_polls_ > 0) {
    --skip_polls_;
    return 0;
  }
  // Adaptive batch: peeking at the next record touches a cache line the producer owns (a
  // transfer between cores) and would delay the dispatch of the frame just delivered. Stop
  // after one frame unless the previous poll filled its batch (a stream is flowing).
  budget = std::min(budget, batch_);
  int delivered = 0, consumed = 0;
  RecordView v;
  while (delivered < budget && consumer_.Peek(&v)) {
    // A bad frame is counted (by DeliverFrame, or here for our own chunk framing) and
    // skipped: record boundaries are intact, so the channel goes on. Small RSRs (compact
    // records, the common case) skip DeliverRecord's dispatch on the record's kind.
    if (v.flags == kCompactRsr) {
      delivered += DeliverCompact(host, v) ? 1 : 0;
    } else if (DeliverRecord(host, v) && (v.flags == kWholeFrame || v.flags == kLastChunk ||
                                          v.flags == kCmaFrame || v.flags == kPoolFrame)) {
      ++delivered;
    }
    consumer_.Consume();
    ++consumed;
  }
  if (consumed != 0) {
    consumed_ = true;
    if (records != nullptr) *records += consumed;
  }
  batch_ = delivered == budget ? std::min(2 * batch_, kMaxBatch) : 1;
  if (coalesce && delivered > 0 && delivered < budget) skip_polls_ = kSkipPolls;  // drained
  return delivered;
}

bool ShmChannel::MarkFailed() {
  CommState expected = CommState::kOk;
  if (!state_.compare_exchange_strong(expected, CommState::kFailed)) return false;
  // The peer is gone: blocks it was to read go back (pool blocks to the pool).
  std::lock_guard<SpinMutex> lock(send_mu_);
  DropPending();
  return true;
}

void ShmChannel::Close() {
  // The progress engine has stopped (Finalize): release what it consumed, so the peer's
  // count of what we took (its Outstanding()) is exact.
  ReleaseDelivered();
  // Frames Send() accepted but still queued behind a full ring, and CMA frames the peer has
  // not copied yet, are handed over first (the peer's progress engine drains the ring), for
  // at most kCloseFlushMs, unless the peer is gone.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCloseFlushMs);
  while (state() == CommState::kOk) {
    bool pending;
    {
      std::lock_guard<SpinMutex> lock(send_mu_);
      if (!queue_.empty()) FlushLocked();
      if (!cma_held_.empty()) ReapCmaLocked();
      pending = !queue_.empty() || !cma_held_.empty();
    }
    if (!pending || segment_->PeerClosed() || std::chrono::steady_clock::now() > deadline) break;
    pollfd p{socket_, POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  CommState expected = CommState::kOk;
  if (state_.compare_exchange_strong(expected, CommState::kClosed)) {
    segment_->MarkClosed();
    shutdown(socket_, SHUT_RDWR);  // the peer sees the hang-up after the closed flag
  }
  // Done with the peer: what it did not take by now goes back (pool blocks to the pool).
  std::lock_guard<SpinMutex> lock(send_mu_);
  DropPending();
}

}  // namespace ukai::rt::shm
