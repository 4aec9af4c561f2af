#include "rt/core/frame_log.h"

#include <algorithm>

namespace ukai::rt::internal {

Status FrameLog::Send(CommObject& object, FrameClass cls, ByteBlock&& frame) {
  const uint64_t bytes = frame.size();
  if (SpinMutex* lent = object.send_lock()) {
    uint32_t token = 0;
    if (Status st = object.PrepareSend(frame, &token); !st.ok()) return st;
    std::lock_guard<SpinMutex> lock(*lent);
    object.SendLocked(std::move(frame), token);
    RecordLocked(cls, bytes);
    return Status::Ok();
  }
  std::lock_guard<SpinMutex> lock(mu_);
  Status st = object.Send(std::move(frame));
  if (st.ok()) RecordLocked(cls, bytes);
  return st;
}

Result<std::unique_ptr<CommObject::LentSend>> FrameLog::SendLent(CommObject& object, FrameClass cls,
                                                                 ByteBlock&& header,
                                                                 std::span<const uint8_t> payload) {
  std::lock_guard<SpinMutex> lock(LockOf(object));
  Result<std::unique_ptr<CommObject::LentSend>> sent = object.SendLent(std::move(header), payload);
  if (sent.ok() && *sent) RecordLocked(cls, wire::kHeaderSize + payload.size());
  return sent;
}

void FrameLog::NewRunLocked(FrameClass cls, uint64_t bytes) {
  runs_.push_back(last_);
  if (runs_.size() >= kMaxRuns) runs_.pop_front();  // with last_: at most kMaxRuns runs
  last_ = {cls, 1, bytes};
}

FrameLog::Split FrameLog::Newest(const CommObject& object, uint64_t frames, uint64_t bytes) const {
  Split s;
  uint64_t left = frames;
  auto take = [&](const Run& r) {
    const uint64_t n = std::min(left, r.frames);
    if (r.cls == FrameClass::kAnswer && n != 0) {
      s.answer_frames += n;
      // A part of a run: its frames' share of the run's bytes.
      s.answer_bytes += n == r.frames ? r.bytes : r.bytes / r.frames * n;
    }
    left -= n;
  };
  std::lock_guard<SpinMutex> lock(LockOf(object));
  take(last_);
  for (auto it = runs_.rbegin(); it != runs_.rend() && left > 0; ++it) take(*it);
  s.user_frames = frames - s.answer_frames;
  s.answer_bytes = std::min(s.answer_bytes, bytes);
  s.user_bytes = bytes - s.answer_bytes;
  return s;
}

}  // namespace ukai::rt::internal
