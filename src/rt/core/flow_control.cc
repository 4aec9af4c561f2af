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

// Waits a little longer each round while another thread holds the progress flag: a few
// yields (the peer may take the queue within microseconds), then sleeps up to 1 ms.
void Backoff(int round) {
  if (round < 64) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 10 * (round - 63))));
  }
}

}  // namespace

Status RuntimeImpl::AwaitRoom(Peer& peer, RuntimeId rid, bool wait) {
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
  for (int round = 0; peer.object->QueuedBytes() >= limit; ++round) {
    if (peer.failed.load(std::memory_order_acquire) || peer.object->state() != CommState::kOk) {
      return Status::Unavailable("peer runtime " + Hex(rid) +
                                 " failed while SendRsr waited for room in its send queue");
    }
    if (stop_.load(std::memory_order_relaxed)) {
      return Status::FailedPrecondition("SendRsr: the runtime is finalizing");
    }
    if (TryEnterProgress()) {  // drive progress ourselves: no progress thread, or it sleeps
      const int n = ProgressPass(/*all=*/true);
      LeaveProgress();
      if (n == 0) Backoff(round);
    } else {
      Backoff(round);
    }
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
  struct Entry {
    RuntimeId id;
    const Peer* peer;  // entries live as long as the runtime
    std::shared_ptr<CommObject> object;
  };
  std::vector<Entry> objects;
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    for (auto& [id, peer] : peers_) {
      if (peer.object) objects.push_back({id, &peer, peer.object});
    }
  }
  const auto timeout = std::chrono::milliseconds(options_.flush_timeout_ms);
  const auto deadline = Clock::now() + timeout;
  for (int round = 0;; ++round) {
    CommObject::Unconfirmed total;
    uint64_t may_still_go = 0;  // frames of working objects (a failed one's loss is final)
    std::string detail;
    for (const Entry& e : objects) {
      const CommObject::Unconfirmed u = e.object->Outstanding();
      if (u.frames == 0) continue;
      total.frames += u.frames;
      total.bytes += u.bytes;
      const bool alive = e.object->state() == CommState::kOk && !e.peer->failed.load();
      if (alive) may_still_go += u.frames;
      detail += (detail.empty() ? "" : "; ") + std::string("peer ") + Hex(e.id) + ": " +
                std::to_string(u.frames) + " frames" +
                (alive ? " not taken" : " lost when it failed or left");
    }
    if (total.frames == 0) return Status::Ok();
    if (may_still_go == 0 || Clock::now() >= deadline) {
      return Status::Unavailable(
          "Finalize: " + std::to_string(total.frames) + " frames (" + std::to_string(total.bytes) +
          " bytes) that SendRsr accepted were not delivered (" + detail + "; waited " +
          std::to_string(options_.flush_timeout_ms) + " ms, flush_timeout_ms)");
    }
    if (TryEnterProgress()) {
      ProgressPass(/*all=*/true);
      LeaveProgress();
    }
    Backoff(64 + round);  // Outstanding() may make system calls: do not spin on it
  }
}

}  // namespace ukai::rt::internal
