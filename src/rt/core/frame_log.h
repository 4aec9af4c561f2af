// FrameLog: the classes of the frames this runtime sent to one peer, newest last, as runs (a
// frame is a user RSR or request, or an answer of the runtime's own layers: a reply, a
// refusal, an RMA ack, a virtual node or multicast notice). Every channel is FIFO, so the
// frames a peer never took are the newest ones: Finalize and ClosePeer classify them with
// Newest() and report a departed peer's lost answers apart from lost user RSRs
// (docs/runtime.md, "Flow control").
//
// Thread safety: every method but in_place_sends takes the log's lock; Send and
// TrySendInPlace hold it across the module's call so that the log's order is the channel's
// order. The lock is the object's own send lock when it lends one (CommObject::send_lock:
// the shm channel's), else the log's: a send then takes one lock, not two. A log serves one
// object (a peer's never changes once set). Memory: at most kMaxRuns runs; frames older
// than the log are counted as user frames (never hides a user loss).
#ifndef UKAI_RT_CORE_FRAME_LOG_H_
#define UKAI_RT_CORE_FRAME_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>

#include "rt/core/module.h"
#include "rt/core/spin_mutex.h"
#include "ukai/rt/runtime.hpp"

namespace ukai::rt::internal {

enum class FrameClass : uint8_t { kUser, kAnswer };

// Whether an RSR to `handler` is an answer of one of the runtime's layers (a fixed table:
// ukai.rma.reply, ukai.vn.moved, ukai.vn.fail, ukai.mc.ack, ukai.coll). Inline: once per RSR.
inline bool IsAnswerHandler(HandlerId handler) {
  // The answer handlers of src/rt/rma, src/rt/vnode and src/rt/multicast, and the
  // collectives' messages (src/rt/coll): a collective reports a member that left or failed
  // in its own status, so what did not reach that member is not a silent loss.
  constexpr uint32_t kAnswers[] = {
      HandlerId::Of("ukai.rma.reply").value, HandlerId::Of("ukai.vn.moved").value,
      HandlerId::Of("ukai.vn.fail").value, HandlerId::Of("ukai.mc.ack").value,
      HandlerId::Of("ukai.coll").value};
  for (uint32_t a : kAnswers) {
    if (handler.value == a) return true;
  }
  return false;
}

class FrameLog {
 public:
  static constexpr size_t kMaxRuns = 256;

  // Sends `frame` through `object` and, when it was accepted, records it as `cls`.
  Status Send(CommObject& object, FrameClass cls, ByteBlock&& frame);
  // CommObject::TrySendInPlace under the log's lock: when the object took the RSR, records
  // it as `cls` (as a frame of header and payload) and returns true; else false, nothing
  // sent or recorded (the caller then Sends the frame). Inline: once per small RSR.
  [[gnu::always_inline]] bool TrySendInPlace(CommObject& object, FrameClass cls,
                                             const CommObject::RsrRoute& route,
                                             std::span<const uint8_t> payload) {
    if (SpinMutex* lent = object.send_lock()) [[likely]] {
      std::lock_guard<SpinMutex> lock(*lent);
      if (!object.TrySendInPlaceLocked(route, payload)) return false;
      RecordInPlaceLocked(cls, wire::kHeaderSize + payload.size());
      return true;
    }
    std::lock_guard<SpinMutex> lock(mu_);
    if (!object.TrySendInPlace(route, payload)) return false;
    RecordInPlaceLocked(cls, wire::kHeaderSize + payload.size());
    return true;
  }
  // CommObject::SendLent under the log's lock (the object's lent one if it lends one; no
  // such object overrides SendLent today): when the object took the frame (a non-null
  // result), records it as `cls` (header and payload).
  Result<std::unique_ptr<CommObject::LentSend>> SendLent(CommObject& object, FrameClass cls,
                                                         ByteBlock&& header,
                                                         std::span<const uint8_t> payload);
  // RSRs TrySendInPlace sent (counted under the log's lock, which it holds anyway: no
  // atomic add per RSR; read without it; RuntimeStats::rsr_sent adds them up).
  uint64_t in_place_sends() const { return in_place_sends_.load(std::memory_order_relaxed); }

  struct Split {
    uint64_t user_frames = 0, user_bytes = 0;
    uint64_t answer_frames = 0, answer_bytes = 0;
  };
  // Classifies the newest `frames` frames (`bytes` in all, as the module counts them) sent
  // through `object`: the answers among them by the log, the rest (including frames older
  // than the log) as user.
  Split Newest(const CommObject& object, uint64_t frames, uint64_t bytes) const;

 private:
  struct Run {
    FrameClass cls;
    uint64_t frames;
    uint64_t bytes;
  };
  // Records one frame (the log's lock held). The newest run lives apart from the older
  // ones, so that a frame of its class costs two adds.
  void RecordLocked(FrameClass cls, uint64_t bytes) {
    if (last_.cls == cls || last_.frames == 0) [[likely]] {
      last_.cls = cls;
      ++last_.frames;
      last_.bytes += bytes;
      return;
    }
    NewRunLocked(cls, bytes);
  }
  void RecordInPlaceLocked(FrameClass cls, uint64_t bytes) {
    RecordLocked(cls, bytes);
    in_place_sends_.store(in_place_sends_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
  }
  void NewRunLocked(FrameClass cls, uint64_t bytes);
  SpinMutex& LockOf(const CommObject& object) const {
    SpinMutex* lent = object.send_lock();
    return lent != nullptr ? *lent : mu_;
  }

  // A spin lock (std::mutex cost two locked instructions and a call per RSR), for objects
  // that lend none.
  mutable SpinMutex mu_;
  Run last_{FrameClass::kUser, 0, 0};  // the newest run (frames 0: none yet)
  std::deque<Run> runs_;               // the older ones, oldest first; < kMaxRuns
  std::atomic<uint64_t> in_place_sends_{0};
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_CORE_FRAME_LOG_H_
