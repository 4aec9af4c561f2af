// Shrink's agreement on the failed members (GroupState::AgreeFailed).
//
// The coordinator is the lowest rank no survivor knows failed. It asks every member it
// believes alive for its failed set (kShrinkAsk), waits for each answer (kShrinkState) or
// that member's failure, and commits the union (kShrinkCommit); everyone adopts the
// committed set. A member that decided answers later asks with its decision (flagged), and a
// coordinator that hears of a decision adopts it, so when a coordinator dies half-way
// through its commits, the next one (the next lowest rank, once the survivors see the death)
// commits the same set. Messages from one runtime arrive in order and a peer's failure is
// reported after everything it sent, so a commit that was sent is seen before its sender's
// death. Every survivor must call Shrink the same number of times (instances are numbered).
#include <algorithm>
#include <chrono>
#include <thread>

#include "rt/coll/group_state.h"

namespace ukai::rt::internal {

using coll::Header;
using coll::MsgKind;

Result<std::vector<int>> GroupState::AgreeFailed(uint32_t* instance) {
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  std::unique_lock<std::mutex> lock(mu_);
  const uint32_t inst = shrinks_++;
  *instance = inst;
  int asked_as = -1;  // the failed-set size when we last asked, as coordinator
  for (;;) {
    if (closed_) return closed_why_;
    ShrinkInstance& si = shrink_[inst];
    if (si.decided) return si.failed;
    const std::vector<int> known = KnownFailed();
    auto alive = [&](int r) { return !std::binary_search(known.begin(), known.end(), r); };
    int coordinator = 0;
    while (coordinator < size() && !alive(coordinator)) ++coordinator;
    Outbox out;
    if (coordinator == rank_) {
      if (asked_as != static_cast<int>(known.size())) {
        asked_as = static_cast<int>(known.size());
        for (int r = 0; r < size(); ++r) {
          if (r != rank_ && alive(r)) EmitGroup(MsgKind::kShrinkAsk, r, inst, 0, {}, &out);
        }
      }
      bool all = true;
      const std::vector<int>* decided = nullptr;
      std::vector<int> failed = known;
      for (int r = 0; r < size(); ++r) {
        if (r == rank_ || !alive(r)) continue;
        auto it = si.states.find(r);
        if (it == si.states.end()) {
          all = false;
          continue;
        }
        if (it->second.first) decided = &it->second.second;
        failed.insert(failed.end(), it->second.second.begin(), it->second.second.end());
      }
      if (all) {
        if (decided != nullptr) failed = *decided;
        std::sort(failed.begin(), failed.end());
        failed.erase(std::unique(failed.begin(), failed.end()), failed.end());
        si.decided = true;
        si.failed = failed;
        const std::vector<uint8_t> body = coll::EncodeRanks(failed);
        for (int r = 0; r < size(); ++r) {
          if (r != rank_ && !std::binary_search(failed.begin(), failed.end(), r)) {
            EmitGroup(MsgKind::kShrinkCommit, r, inst, 0, body, &out);
          }
        }
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Timeout("Group::Shrink: no agreement on the failed members within " +
                             std::to_string(options_.timeout.count()) + " ms");
    }
    lock.unlock();
    Flush(&out);
    if (runtime().Progress() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    lock.lock();
  }
}

void GroupState::OnShrink(const Header& h, std::span<const uint8_t> body, Outbox* out) {
  ShrinkInstance& si = shrink_[h.seq];
  const int from = static_cast<int>(h.src);
  switch (h.kind) {
    case MsgKind::kShrinkAsk: {
      const std::vector<int> mine = si.decided ? si.failed : KnownFailed();
      EmitGroup(MsgKind::kShrinkState, from, h.seq, si.decided ? 1 : 0, coll::EncodeRanks(mine),
                out);
      break;
    }
    case MsgKind::kShrinkState:
    case MsgKind::kShrinkCommit: {
      Result<std::vector<int>> ranks = coll::DecodeRanks(body, size());
      if (!ranks.ok()) {
        hub_->Reject(ranks.status());
        return;
      }
      if (h.kind == MsgKind::kShrinkState) {
        si.states[from] = {h.tag == 1, std::move(*ranks)};
      } else if (!si.decided) {
        std::sort(ranks->begin(), ranks->end());
        si.decided = true;
        si.failed = std::move(*ranks);
      }
      break;
    }
    default:
      break;
  }
  cv_.notify_all();
}

}  // namespace ukai::rt::internal
