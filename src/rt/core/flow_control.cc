// Flow control and flushing: the per-peer send-queue limit (SendRsr blocks, TrySendRsr
// returns kWouldBlock) and Finalize's hand-over of everything SendRsr accepted. The modules
// measure what they hold for a peer (CommObject::QueuedBytes) and what the peer has not
// taken yet (CommObject::Outstanding); this file decides when to wait and what to report.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rt/core/runtime_impl.h"

namespace ukai::rt::internal {
namespace {

using Clock = std::chrono::steady_clock;

// Waits a little longer each fruitless round (no progress, the queue did not shrink): a
// few yields (the peer may take the queue within microseconds), then sleeps up to 1 ms.
void Backoff(int round) {
  if (round < 64) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 * (round - 63))));
  }
}

}  // namespace

Status RuntimeImpl::AwaitRoom(Peer& peer, RuntimeId rid, bool wait,
                              std::chrono::milliseconds timeout) {
  const uint64_t limit = options_.send_queue_bytes;
  if (limit == 0 || peer.object->QueuedBytes() < limit) return Status::Ok();
  if (!wait) {
    return Status::WouldBlock("SendRsr: the send queue to peer " + Hex(rid) + " holds " +
                              std::to_string(peer.object->QueuedBytes()) + " bytes (limit " +
                              std::to_string(limit) + ", send_queue_bytes)");
  }
  // A pass of ours runs on this thread (non-threaded handler, peer-event callback): the
  // queue drains only when that pass ends, so waiting here could never end.
  if (InOwnProgressPass()) return Status::Ok();
  WaitScope scope;  // a handler thread waiting here may make the pool grow (thread_pool.h)
  const auto start = std::chrono::steady_clock::now();
  // `idle` counts the rounds since the queue last shrank or a pass made progress: while the
  // peer keeps taking frames the sender keeps polling (sleeping then would leave a draining
  // socket or ring idle for up to a millisecond per round); only a queue that stands still
  // for 64 rounds makes it sleep, longer each round.
  size_t last_queued = peer.object->QueuedBytes();
  int idle = 0;
  for (int round = 0;; ++round) {
    const size_t queued = peer.object->QueuedBytes();
    if (queued < limit) break;
    if (queued < last_queued) idle = 0;
    last_queued = queued;
    if (timeout.count() > 0 && (round & 63) == 0 &&
        std::chrono::steady_clock::now() - start >= timeout) {
      return Status::Timeout("SendRsr: no room within " + std::to_string(timeout.count()) +
                             " ms in the send queue to peer " + Hex(rid) + " (it holds " +
                             std::to_string(peer.object->QueuedBytes()) + " bytes, limit " +
                             std::to_string(limit) + ", send_queue_bytes; SendOptions::timeout)");
    }
    if (peer.failed.load(std::memory_order_acquire) || peer.object->state() != CommState::kOk) {
      return Status::Unavailable("peer runtime " + Hex(rid) +
                                 " failed while SendRsr waited for room in its send queue");
    }
    if (stop_.load(std::memory_order_relaxed)) {
      return Status::FailedPrecondition("SendRsr: the runtime is finalizing");
    }
    if (vt_ != nullptr) vt_->ThreadIdle("SendRsr (waiting for room)");
    if (TryEnterProgress()) {  // drive progress ourselves: no progress thread, or it sleeps
      const int n = ProgressPass(/*all=*/true);
      LeaveProgress();
      if (n == 0) {
        Backoff(idle++);
      } else {
        idle = 0;
      }
    } else {
      Backoff(idle++);
    }
  }
  return Status::Ok();
}

bool RuntimeImpl::TrySendLent(Peer& p, const Startpoint& target, HandlerId handler,
                              std::span<const uint8_t> payload, Status* out) {
  // A pass of ours on this thread (non-threaded handler, peer-event callback) cannot wait for
  // the peer to take the payload: the frame is copied instead (SendBytes).
  if (recorder_ || InOwnProgressPass()) return false;
  ByteBlock header(wire::kHeaderSize);
  header.Resize(wire::kHeaderSize);
  EncodeRsrHeader(&header, target, handler, /*flags=*/0, payload.size());
  const FrameClass cls = IsAnswerHandler(handler) ? FrameClass::kAnswer : FrameClass::kUser;
  Result<std::unique_ptr<CommObject::LentSend>> sent =
      p.log.SendLent(*p.object, cls, std::move(header), payload);
  if (!sent.ok()) {
    ++send_errors_;
    *out = sent.status();
    return true;
  }
  if (*sent == nullptr) return false;
  rsr_sent_.fetch_add(1, std::memory_order_relaxed);
  *out = AwaitLent(p, target.runtime(), **sent);
  if (!out->ok()) ++send_errors_;
  return true;
}

Status RuntimeImpl::AwaitLent(Peer& p, RuntimeId rid, CommObject::LentSend& sent) {
  WaitScope scope;  // a handler thread waiting here may make the pool grow (thread_pool.h)
  // The peer takes a large payload within tens of microseconds to milliseconds: poll
  // (driving progress, which also takes what the peer lends us) for kPollRounds fruitless
  // rounds before backing off (Backoff: yields, then sleeps of up to 1 ms).
  constexpr int kPollRounds = 4096;
  int idle = 0;
  while (!sent.Done()) {
    int n = 0;
    if (TryEnterProgress()) {  // no progress thread, or it sleeps
      n = ProgressPass(/*all=*/true);
      LeaveProgress();
    }
    idle = n > 0 ? 0 : idle + 1;
    if (idle > kPollRounds) Backoff(idle - kPollRounds);
  }
  // A goodbye the peer sent before it took (or discarded) the payload came before the
  // completion: one more pass of ours sees it (else the progress thread's next one).
  if (TryEnterProgress()) {
    ProgressPass(/*all=*/true);
    LeaveProgress();
  }
  if (p.failed.load(std::memory_order_acquire) || p.object->state() != CommState::kOk) {
    return Status::Unavailable("SendRsrBytes: peer runtime " + Hex(rid) +
                               " left or failed while it was taking the payload (it may not "
                               "have been delivered)");
  }
  return Status::Ok();
}

Status RuntimeImpl::TrySend(Buffer& buffer, const Startpoint& target, HandlerId handler) {
  if (target.valid()) {
    Result<Peer*> peer = PeerFor(target);
    if (peer.ok()) {
      Status room = AwaitRoom(**peer, target.runtime(), /*wait=*/false);
      if (!room.ok()) return room;  // not a send error: the caller retries
    }                               // else Send reports the error (and counts it)
  }
  return Send(buffer.TakeBlock(), target, handler, /*wait_for_room=*/false);
}

Status RuntimeImpl::FlushPeers() {
  std::vector<FlushEntry> objects;
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    for (auto& [id, peer] : peers_) {
      // A peer closed by ClosePeer had its loss reported there.
      if (peer.object && !peer.closed.load()) objects.push_back({id, &peer, peer.object});
    }
  }
  return FlushObjects(objects, std::chrono::milliseconds(options_.flush_timeout_ms), "Finalize",
                      "flush_timeout_ms");
}

Status RuntimeImpl::FlushObjects(const std::vector<FlushEntry>& objects,
                                 std::chrono::milliseconds timeout, const std::string& what,
                                 const std::string& timeout_name) {
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  for (int round = 0;; ++round) {
    CommObject::Unconfirmed total;  // user frames, and answers to peers still alive
    FrameLog::Split gone;           // answers to departed peers: not a user loss
    uint64_t may_still_go = 0;      // frames of working objects (a failed one's loss is final)
    std::string detail;
    for (const FlushEntry& e : objects) {
      const CommObject::Unconfirmed u = e.object->Outstanding();
      if (u.frames == 0) continue;
      const bool alive = e.object->state() == CommState::kOk && !e.peer->failed.load();
      // FIFO channels: the frames not taken are the newest ones sent.
      const FrameLog::Split s = e.peer->log.Newest(*e.object, u.frames, u.bytes);
      if (alive) {
        may_still_go += u.frames;
        total.frames += u.frames;
        total.bytes += u.bytes;
      } else {
        gone.answer_frames += s.answer_frames;
        gone.answer_bytes += s.answer_bytes;
        total.frames += s.user_frames;
        total.bytes += s.user_bytes;
        if (s.user_frames == 0) continue;
      }
      const uint64_t n = alive ? u.frames : s.user_frames;
      detail += (detail.empty() ? "" : "; ") + std::string("peer ") + Hex(e.id) + ": " +
                std::to_string(n) + " frames" +
                (alive ? " not taken" : " lost when it failed or left") +
                (alive && s.answer_frames > 0
                     ? " (" + std::to_string(s.answer_frames) + " of them runtime answers)"
                     : "");
    }
    if (total.frames > 0 && may_still_go > 0 && Clock::now() < deadline) {
      if (TryEnterProgress()) {
        ProgressPass(/*all=*/true);
        LeaveProgress();
      }
      if (vt_ != nullptr && !InOwnProgressPass()) vt_->ThreadIdle("a flush (Finalize, ClosePeer)");
      Backoff(64 + round);  // Outstanding() may make system calls: do not spin on it
      continue;
    }
    const std::string answers =
        gone.answer_frames == 0
            ? ""
            : std::to_string(gone.answer_frames) + " runtime answers (" +
                  std::to_string(gone.answer_bytes) +
                  " bytes: replies, refusals, RMA acks, virtual node and multicast notices) "
                  "to departed peers dropped, not counted as lost RSRs";
    if (gone.answer_frames > 0) {
      answers_lost_.fetch_add(gone.answer_frames, std::memory_order_relaxed);
      Trace(what + ": " + answers);
    }
    if (total.frames == 0) return Status::Ok();
    // The time actually waited: less than the limit when the peers failed or left first.
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    return Status::Unavailable(
        what + ": " + std::to_string(total.frames) + " frames (" + std::to_string(total.bytes) +
        " bytes) that SendRsr accepted were not delivered (" + detail + "; waited " +
        std::to_string(waited) + " ms of " + std::to_string(timeout.count()) + " ms, " +
        timeout_name + ")" + (answers.empty() ? "" : "; also " + answers));
  }
}

Status RuntimeImpl::PeerRefuses(const Peer& peer, RuntimeId rid) {
  if (peer.closed.load(std::memory_order_acquire)) {
    return Status::FailedPrecondition("peer runtime " + Hex(rid) +
                                      " was closed by ClosePeer (no reconnection)");
  }
  if (peer.failed.load(std::memory_order_acquire)) {
    return Status::Unavailable("peer runtime " + Hex(rid) + " has failed");
  }
  return Status::Ok();
}

Status RuntimeImpl::ClosePeer(const Startpoint& peer_of, std::chrono::milliseconds timeout) {
  if (!peer_of.valid()) return Status::InvalidArgument("ClosePeer: null startpoint");
  if (timeout.count() < 0) return Status::InvalidArgument("ClosePeer: negative timeout");
  if (finalized_) return Status::FailedPrecondition("ClosePeer: the runtime is finalized");
  // Flushing needs progress passes, which cannot run inside one of ours.
  if (InOwnProgressPass()) {
    return Status::FailedPrecondition(
        "ClosePeer called from a non-threaded handler or peer-event callback");
  }
  const RuntimeId rid = peer_of.runtime();
  std::vector<FlushEntry> objects;
  Peer* peer = nullptr;
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    auto it = peers_.find(rid);
    if (it == peers_.end() || !it->second.object) {
      return Status::NotFound("ClosePeer: no connection to runtime " + Hex(rid));
    }
    peer = &it->second;
    if (peer->closed.exchange(true)) {
      return Status::FailedPrecondition("ClosePeer: runtime " + Hex(rid) + " was closed already");
    }
    objects.push_back({rid, peer, peer->object});
  }
  const Status flushed =
      FlushObjects(objects, timeout, "ClosePeer " + Hex(rid), "the ClosePeer timeout");
  // CommObject::Close runs with no progress pass (as in Finalize): hold the progress flag.
  progress_wanted_.fetch_add(1);
  while (!TryEnterProgress()) std::this_thread::yield();
  objects.front().object->Close();
  LeaveProgress();
  progress_wanted_.fetch_sub(1);
  // Their answers can no longer come back over the closed connection.
  requests_.FailPeer(rid, Status::Unavailable("peer runtime " + Hex(rid) + " closed by ClosePeer"));
  Trace("peer " + Hex(rid) + " closed by ClosePeer: " + flushed.ToString());
  return flushed;
}

}  // namespace ukai::rt::internal
