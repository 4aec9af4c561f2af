#include "rt/core/frame_log.h"

#include <algorithm>

namespace ukai::rt::internal {

bool IsAnswerHandler(HandlerId handler) {
  // The answer handlers of src/rt/rma, src/rt/vnode and src/rt/multicast, and the
  // collectives' messages (src/rt/coll): a collective reports a member that left or failed
  // in its own status, so what did not reach that member is not a silent loss.
  static constexpr HandlerId kAnswers[] = {
      HandlerId::Of("ukai.rma.reply"), HandlerId::Of("ukai.vn.moved"),
      HandlerId::Of("ukai.vn.fail"), HandlerId::Of("ukai.mc.ack"), HandlerId::Of("ukai.coll")};
  return std::find(std::begin(kAnswers), std::end(kAnswers), handler) != std::end(kAnswers);
}

Status FrameLog::Send(CommObject& object, FrameClass cls, ByteBlock&& frame) {
  const uint64_t bytes = frame.size();
  std::lock_guard<SpinMutex> lock(mu_);
  Status st = object.Send(std::move(frame));
  if (st.ok()) RecordLocked(cls, bytes);
  return st;
}

bool FrameLog::TrySendInPlace(CommObject& object, FrameClass cls, const CommObject::RsrRoute& route,
                              std::span<const uint8_t> payload) {
  std::lock_guard<SpinMutex> lock(mu_);
  if (!object.TrySendInPlace(route, payload)) return false;
  RecordLocked(cls, wire::kHeaderSize + payload.size());
  ++in_place_sends_;
  return true;
}

uint64_t FrameLog::in_place_sends() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return in_place_sends_;
}

void FrameLog::RecordLocked(FrameClass cls, uint64_t bytes) {
  if (!runs_.empty() && runs_.back().cls == cls) {
    ++runs_.back().frames;
    runs_.back().bytes += bytes;
  } else {
    runs_.push_back({cls, 1, bytes});
    if (runs_.size() > kMaxRuns) runs_.pop_front();
  }
}

FrameLog::Split FrameLog::Newest(uint64_t frames, uint64_t bytes) const {
  Split s;
  std::lock_guard<SpinMutex> lock(mu_);
  uint64_t left = frames;
  for (auto it = runs_.rbegin(); it != runs_.rend() && left > 0; ++it) {
    const uint64_t n = std::min(left, it->frames);
    if (it->cls == FrameClass::kAnswer) {
      s.answer_frames += n;
      // A part of a run: its frames' share of the run's bytes.
      s.answer_bytes += n == it->frames ? it->bytes : it->bytes / it->frames * n;
    }
    left -= n;
  }
  s.user_frames = frames - s.answer_frames;
  s.answer_bytes = std::min(s.answer_bytes, bytes);
  s.user_bytes = bytes - s.answer_bytes;
  return s;
}

}  // namespace ukai::rt::internal
