#include "rt/modules/shm/shm_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "rt/modules/shm/shm_socket.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::shm {

ShmChannel::ShmChannel(RuntimeId self, RuntimeId peer, std::unique_ptr<ShmSegment> segment,
                       int socket, int peer_efd, size_t chunk_bytes)
    : self_(self),
      peer_(peer),
      segment_(std::move(segment)),
      socket_(socket),
      peer_efd_(peer_efd),
      chunk_bytes_(chunk_bytes),
      producer_(segment_->MakeProducer()),
      consumer_(segment_->MakeConsumer()) {}

ShmChannel::~ShmChannel() {
  segment_->MarkClosed();
  if (socket_ >= 0) close(socket_);
  const int efd = peer_efd_.load();
  if (efd >= 0) close(efd);
}

Status ShmChannel::ReadAcceptReply(int timeout_ms) {
  std::vector<uint8_t> bytes;
  int fd = -1;
  UKAI_RETURN_IF_ERROR(ReceiveMessage(socket_, timeout_ms, &bytes, &fd));
  Result<Reply> r = DecodeReply(bytes);
  if (!r.ok() || r->status != 0 || r->from != peer_ || fd < 0) {
    if (fd >= 0) close(fd);
    return Status::Unavailable("shm: peer " + std::to_string(peer_) + " refused the connection" +
                               (r.ok() ? "" : " (" + r.status().message() + ")"));
  }
  peer_efd_.store(fd, std::memory_order_release);
  // The peer has attached (and removed the name); nothing left for us to unlink.
  [[maybe_unused]] Status s = segment_->Unlink();
  return Status::Ok();
}

void ShmChannel::RingDoorbell() {
  if (!producer_.NeedsWake()) return;
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
  const size_t max_record = MaxRecordPayload(segment_->ring_capacity());
  if (offset == 0 && size <= max_record) {
    std::span<std::byte> area = producer_.TryReserve(size);
    if (area.empty()) return 0;
    std::memcpy(area.data(), frame.data(), size);
    producer_.Commit(size, kWholeFrame);
    return size;
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

Status ShmChannel::Send(ByteBlock&& frame) {
  if (state() != CommState::kOk) {
    return Status::Unavailable("shm: connection to peer " + std::to_string(peer_) +
                               (state() == CommState::kClosed ? " is closed" : " failed"));
  }
  if (frame.size() < wire::kHeaderSize) {
    return Status::InvalidArgument("shm: frame of " + std::to_string(frame.size()) +
                                   " bytes is shorter than a header");
  }
  std::lock_guard<std::mutex> lock(send_mu_);
  size_t done = 0;
  if (queue_.empty()) {
    done = WriteSome(frame, 0);
    if (done != 0) RingDoorbell();
    if (done == frame.size()) return Status::Ok();
    queue_offset_ = done;
  }
  queue_.push_back(std::move(frame));
  queued_.store(true, std::memory_order_release);
  return Status::Ok();
}

bool ShmChannel::Flush() {
  std::unique_lock<std::mutex> lock(send_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return true;  // a sender is at it; look again next time
  bool wrote = false;
  while (!queue_.empty()) {
    const size_t before = queue_offset_;
    queue_offset_ = WriteSome(queue_.front(), queue_offset_);
    wrote |= queue_offset_ != before;
    if (queue_offset_ < queue_.front().size()) break;
    queue_.pop_front();
    queue_offset_ = 0;
  }
  if (wrote) RingDoorbell();
  queued_.store(!queue_.empty(), std::memory_order_release);
  return !queue_.empty();
}

bool ShmChannel::DeliverRecord(ModuleHost* host, const RecordView& v) {
  if (v.flags == kWholeFrame) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(v.payload.data());
    return host->DeliverFrame({bytes, v.payload.size()}, nullptr).ok();
  }
  ByteBlock whole;
  Status s = ReassembleChunk(v, &whole);
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

Status ShmChannel::ReassembleChunk(const RecordView& v, ByteBlock* complete) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(v.payload.data());
  const std::span<const uint8_t> data(bytes, v.payload.size());
  switch (v.flags) {
    case kFirstChunk: {
      Result<wire::FrameHeader> h = wire::DecodeHeader(data);
      if (!h.ok()) return h.status();
      reassembly_expected_ = h->frame_size();
      if (reassembly_expected_ <= data.size()) {
        return Status::ParseError("shm: chunked frame of " + std::to_string(data.size()) +
                                  " bytes already complete in its first chunk");
      }
      reassembly_ = ByteBlock(reassembly_expected_);
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
      std::memcpy(reassembly_.Extend(data.size()), data.data(), data.size());
      if (v.flags == kMiddleChunk) return Status::Ok();
      reassembly_expected_ = 0;
      *complete = std::move(reassembly_);
      return Status::Ok();
    }
    default:
      return Status::ParseError("shm: unknown record flags " + std::to_string(v.flags));
  }
}

int ShmChannel::Poll(ModuleHost* host, int budget) {
  if (consumed_) {
    consumer_.Publish();
    consumed_ = false;
  }
  held_.clear();
  int delivered = 0;
  RecordView v;
  while (delivered < budget && consumer_.Peek(&v)) {
    // A bad frame is counted (by DeliverFrame, or here for our own chunk framing) and
    // skipped: record boundaries are intact, so the channel goes on.
    if (DeliverRecord(host, v) && (v.flags == kWholeFrame || v.flags == kLastChunk)) {
      ++delivered;
    }
    consumer_.Consume();
    consumed_ = true;
  }
  return delivered;
}

bool ShmChannel::MarkFailed() {
  CommState expected = CommState::kOk;
  return state_.compare_exchange_strong(expected, CommState::kFailed);
}

void ShmChannel::Close() {
  CommState expected = CommState::kOk;
  if (state_.compare_exchange_strong(expected, CommState::kClosed)) {
    segment_->MarkClosed();
    shutdown(socket_, SHUT_RDWR);  // the peer sees the hang-up after the closed flag
  }
}

}  // namespace ukai::rt::shm
