// FrameLog: the classes of the frames this runtime sent to one peer, newest last, as runs (a
// frame is a user RSR or request, or an answer of the runtime's own layers: a reply, a
// refusal, an RMA ack, a virtual node or multicast notice). Every channel is FIFO, so the
// frames a peer never took are the newest ones: Finalize and ClosePeer classify them with
// Newest() and report a departed peer's lost answers apart from lost user RSRs
// (docs/runtime.md, "Flow control").
//
// Thread safety: every method takes the log's mutex; Send and TrySendInPlace hold it across
// the module's call so that the log's order is the channel's order. Memory: at most kMaxRuns runs;
// frames older than the log are counted as user frames (never hides a user loss).
#ifndef UKAI_RT_CORE_FRAME_LOG_H_
#define UKAI_RT_CORE_FRAME_LOG_H_

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
// ukai.rma.reply, ukai.vn.moved, ukai.vn.fail, ukai.mc.ack).
bool IsAnswerHandler(HandlerId handler);

class FrameLog {
 public:
  static constexpr size_t kMaxRuns = 256;

  // Sends `frame` through `object` and, when it was accepted, records it as `cls`.
  Status Send(CommObject& object, FrameClass cls, ByteBlock&& frame);
  // CommObject::TrySendInPlace under the log's lock: when the object took the RSR, records
  // it as `cls` (as a frame of header and payload) and returns true; else false, nothing
  // sent or recorded (the caller then Sends the frame).
  bool TrySendInPlace(CommObject& object, FrameClass cls, const CommObject::RsrRoute& route,
                      std::span<const uint8_t> payload);
  // RSRs TrySendInPlace sent (counted under the lock it holds anyway: no atomic add per
  // RSR; RuntimeStats::rsr_sent adds them up).
  uint64_t in_place_sends() const;

  struct Split {
    uint64_t user_frames = 0, user_bytes = 0;
    uint64_t answer_frames = 0, answer_bytes = 0;
  };
  // Classifies the newest `frames` frames (`bytes` in all, as the module counts them): the
  // answers among them by the log, the rest (including frames older than the log) as user.
  Split Newest(uint64_t frames, uint64_t bytes) const;

 private:
  void RecordLocked(FrameClass cls, uint64_t bytes);  // mu_ held

  struct Run {
    FrameClass cls;
    uint64_t frames;
    uint64_t bytes;
  };
  // A spin lock: held around one CommObject::Send on every RSR (std::mutex cost two locked
  // instructions and a call per RSR).
  mutable SpinMutex mu_;
  std::deque<Run> runs_;  // oldest first
  uint64_t in_place_sends_ = 0;
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_CORE_FRAME_LOG_H_
