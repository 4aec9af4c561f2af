// GroupState: posting operations, routing their messages, failures and departures.
#include "rt/coll/group_state.h"

#include <unistd.h>

#include <algorithm>

#include "rt/core/runtime_impl.h"

namespace ukai::rt::internal {

using coll::Header;
using coll::MsgKind;

namespace {

constexpr size_t kScheduleCache = 16;

}  // namespace

GroupState::GroupState(std::shared_ptr<Hub> hub, uint64_t id, int rank,
                       std::vector<Startpoint> members, GroupOptions options,
                       coll::Overrides overrides)
    : hub_(std::move(hub)),
      id_(id),
      rank_(rank),
      options_(std::move(options)),
      overrides_(std::move(overrides)) {
  for (Startpoint& sp : members) {
    Member m;
    m.sp = std::move(sp);
    members_.push_back(std::move(m));
  }
}

std::string GroupState::MemberName(int r) const {
  const Startpoint& sp = members_[r].sp;
  return "group member " + std::to_string(r) + " (runtime " + Hex(sp.runtime()) + ", context " +
         std::to_string(sp.context()) + ")";
}

coll::MemberProof GroupState::OwnProof() const {
  coll::MemberProof p;
  p.host = coll::HostKey();
  p.pid = static_cast<uint64_t>(::getpid());
  p.addr = reinterpret_cast<uint64_t>(&nonce_);
  p.nonce = nonce_;
  return p;
}

void GroupState::set_proofs(std::vector<coll::MemberProof> proofs) {
  auto p = std::make_shared<const std::vector<coll::MemberProof>>(std::move(proofs));
  std::lock_guard<std::mutex> lock(mu_);
  proofs_ = std::move(p);
}

uint32_t GroupState::next_seq() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_;
}

std::shared_ptr<const coll::Schedule> GroupState::CachedSchedule(const coll::CollArgs& a) {
  for (size_t i = 0; i < cache_.size(); ++i) {
    if (cache_[i].first == a) {
      if (i != 0) std::swap(cache_[i], cache_[0]);  // recently used first
      return cache_[0].second;
    }
  }
  return nullptr;
}

std::shared_ptr<CollOp> GroupState::MakeOp(const PostArgs& p, uint32_t seq,
                                           std::shared_ptr<const coll::Schedule> schedule) {
  CollOp::Init init;
  init.group = weak_from_this();
  init.runtime = &runtime();
  init.group_id = id_;
  init.rank = rank_;
  init.group_size = size();
  init.seq = seq;
  init.sig = p.sig;
  init.schedule = schedule ? std::move(schedule) : std::make_shared<const coll::Schedule>();
  init.send = p.send;
  init.recv = p.recv;
  init.in_place = p.in_place;
  init.send_bytes = p.send_bytes;
  init.combiner = p.combiner;
  init.user = p.user;
  init.rendezvous_bytes = options_.rendezvous_bytes;
  init.exchange_eager_bytes = options_.exchange_eager_bytes;
  init.segment_bytes = options_.segment_bytes == 0 ? uint64_t{4} << 20 : options_.segment_bytes;
  init.single_copy = options_.single_copy;
  init.proofs = proofs_;
  init.shared_copy_bytes = options_.single_copy ? options_.shared_copy_bytes : 0;
  init.counters = counters_;
  init.slot = p.slot && slots_ != nullptr;
  init.yield_when_idle = oversubscribed_;
  for (auto& spare : spare_) {  // mu_ held
    if (spare.use_count() == 1 && spare->done()) {
      spare->Reset(std::move(init));
      return spare;
    }
  }
  return std::make_shared<CollOp>(std::move(init));
}

Status GroupState::MemberProblem(uint32_t seq) const {
  if (troubled_ == 0) return Status::Ok();
  for (int r = 0; r < size(); ++r) {
    const Member& m = members_[r];
    if (r == rank_) continue;
    if (m.left && seq >= m.left_from) return m.why;
    if (m.failed && !(m.left && seq < m.left_from)) return m.why;
  }
  return Status::Ok();
}

CollRequest GroupState::Post(const PostArgs& p) {
  std::shared_ptr<const coll::Schedule> schedule;
  Status error = p.error;
  if (p.slot && slots_ != nullptr) {
    schedule = no_schedule_;
  } else if (error.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      schedule = CachedSchedule(p.args);
    }
    if (schedule == nullptr) {  // built outside the lock: the progress engine may need it
      Result<coll::Schedule> built = coll::BuildSchedule(p.args);
      if (built.ok()) {
        schedule = std::make_shared<const coll::Schedule>(std::move(*built));
        std::lock_guard<std::mutex> lock(mu_);
        cache_.insert(cache_.begin(), {p.args, schedule});
        if (cache_.size() > kScheduleCache) cache_.pop_back();
      } else {
        error = built.status();
      }
    }
  }
  Outbox out;
  std::shared_ptr<CollOp> op;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t seq = next_seq_++;
    op = MakeOp(p, seq, error.ok() ? schedule : nullptr);
    if (closed_) {
      op->Fail(closed_why_, false, &out);
    } else if (!error.ok()) {
      op->Fail(error, /*tell=*/true, &out);
    } else if (Status member = MemberProblem(seq); !member.ok()) {
      op->Fail(member, false, &out);
    } else if (auto a = aborted_.find(seq); a != aborted_.end()) {
      op->Fail(a->second, false, &out);
      aborted_.erase(a);
    } else {
      ops_.emplace_back(seq, op);
      op->Start(&out);
      if (op->slot()) {
        slot_queue_.push_back(op);
        PollSlotsLocked(&out);  // publishes this member's contribution when it may
      }
      if (!unexpected_.empty()) {
        std::vector<Stashed> early;
        for (auto it = unexpected_.begin(); it != unexpected_.end();) {
          if (it->h.seq == seq) {
            early.push_back(std::move(*it));
            it = unexpected_.erase(it);
          } else {
            ++it;
          }
        }
        for (const Stashed& m : early) op->OnMessage(m.h, m.body, &out);
      }
      if (op->finished()) EraseOp(seq);
    }
    if (!unexpected_.empty()) {
      std::erase_if(unexpected_, [seq](const Stashed& m) { return m.h.seq == seq; });
    }
  }
  Flush(&out);
  return CollRequest(op);
}

int GroupState::FindOp(uint32_t seq) const {
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].first == seq) return static_cast<int>(i);
  }
  return -1;
}

void GroupState::EraseOp(uint32_t seq) {
  const int i = FindOp(seq);
  if (i < 0) return;
  std::shared_ptr<CollOp>& op = ops_[i].second;
  if (op->awaiting_puts()) orphans_.push_back(op);  // until the sender answers
  if (spare_.size() < 4 && std::find(spare_.begin(), spare_.end(), op) == spare_.end()) {
    spare_.push_back(std::move(op));
  }
  ops_.erase(ops_.begin() + i);
}

void GroupState::Flush(Outbox* out) {
  if (out->messages.empty() && out->reads.empty()) return;
  const HandlerId handler = HandlerId::Of(coll::kCollHandler);
  Outbox later;  // what failing a member's operations sends (after this loop)
  for (size_t i = 0; i < out->messages.size(); ++i) {
    OutMsg& m = out->messages[i];
    Status st = runtime().SendRsr(std::move(m.buffer), members_[m.dst].sp, handler);
    if (st.code() == StatusCode::kUnavailable) {
      // The runtime already knows the member failed (its peer event may not have reached
      // this group yet): the same verdict, so FailedMembers and Shrink agree with the error.
      std::lock_guard<std::mutex> lock(mu_);
      MarkFailed(m.dst, /*orderly=*/false, st, &later);
    } else if (!st.ok() && m.op != nullptr) {
      Outbox more;
      {
        std::lock_guard<std::mutex> lock(mu_);
        m.op->Fail(
            Status(st.code(), "collective #" + std::to_string(m.op->seq()) + ": sending to " +
                                  MemberName(m.dst) + " failed: " + st.message()),
            false, &more);
        EraseOp(m.op->seq());
      }
    }
    if (m.op != nullptr) {
      m.op->Dispatched();
      m.op->TryComplete();
    }
  }
  for (SharedRead& r : out->reads) {  // after the messages: the kPut left first
    const Status read = coll::ReadMember(r.from, r.remote, {r.dst, r.length});
    {
      std::lock_guard<std::mutex> lock(mu_);
      r.op->SharedReadDone(r.step, read, &later);
      if (r.op->finished()) EraseOp(r.op->seq());
    }
    r.op->Dispatched();
    r.op->TryComplete();
  }
  if (!later.messages.empty() || !later.reads.empty()) Flush(&later);
}

void GroupState::ReleasePutsOf(int r) {
  for (auto& [seq, op] : ops_) op->ReleasePuts(r);
  for (auto& op : orphans_) op->ReleasePuts(r);
  std::erase_if(orphans_, [](const std::shared_ptr<CollOp>& op) { return !op->awaiting_puts(); });
}

void GroupState::OnEndedOpMessage(const Header& h, Outbox* out) {
  if (h.kind == MsgKind::kPut) {  // the operation ended here: write nothing, say so
    Header reply = h;
    reply.kind = MsgKind::kWrote;
    reply.src = static_cast<uint32_t>(rank_);
    reply.offset = 0;
    out->messages.push_back(OutMsg{static_cast<int>(h.src), coll::MakeMessage(reply, {}), nullptr});
    return;
  }
  if (h.kind != MsgKind::kWrote) return;
  for (auto& op : orphans_) {
    if (op->seq() == h.seq) op->OnMessage(h, {}, out);
  }
  std::erase_if(orphans_, [](const std::shared_ptr<CollOp>& op) { return !op->awaiting_puts(); });
}

void GroupState::OnMessage(RuntimeId from, const Header& h, std::span<const uint8_t> body) {
  // The rank a message claims must be the runtime it came from (relayed point-to-point parts
  // carry the relay in `count`).
  const uint64_t sender = h.kind == MsgKind::kP2p ? h.count : h.src;
  if (h.src >= static_cast<uint32_t>(size()) || sender >= static_cast<uint64_t>(size()) ||
      members_[sender].sp.runtime() != from) {
    hub_->Reject(Status::InvalidArgument("collectives: a message of group " + std::to_string(id_) +
                                         " claims rank " + std::to_string(sender) +
                                         " but comes from runtime " + Hex(from)));
    return;
  }
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    switch (h.kind) {
      case MsgKind::kBye: {
        Member& m = members_[h.src];
        if (!m.left) {
          ++troubled_;
          m.left = true;
          m.left_from = h.seq;
          m.why = Status::Unavailable(MemberName(static_cast<int>(h.src)) +
                                      " left the group (its Group was destroyed) after " +
                                      std::to_string(h.seq) + " collectives");
          FailOps(m.why, h.seq, &out);
          ReleasePutsOf(static_cast<int>(h.src));
        }
        break;
      }
      case MsgKind::kP2p:
        OnP2p(h, body, &out);
        break;
      case MsgKind::kRelay:
        OnRelay(h, body, &out);
        break;
      case MsgKind::kShrinkAsk:
      case MsgKind::kShrinkState:
      case MsgKind::kShrinkCommit:
        OnShrink(h, body, &out);
        break;
      case MsgKind::kRts:
      case MsgKind::kCts:
      case MsgKind::kFin:
        if (h.coll == static_cast<uint8_t>(Collective::kSendRecv)) {
          OnP2pControl(h, &out);
          break;
        }
        [[fallthrough]];
      default: {
        const int at = FindOp(h.seq);
        if (at >= 0) {
          std::shared_ptr<CollOp> op = ops_[at].second;
          op->OnMessage(h, body, &out);
          if (op->finished()) EraseOp(h.seq);
        } else if (h.seq < next_seq_) {
          OnEndedOpMessage(h, &out);
        } else if (!closed_) {
          if (h.kind == MsgKind::kAbort) {
            const Status why = coll::DecodeAbort(body);
            aborted_[h.seq] =
                Status(why.code(), "rank " + std::to_string(h.src) + " ended collective #" +
                                       std::to_string(h.seq) + ": " + why.message());
          } else {
            unexpected_.push_back(Stashed{h, {body.begin(), body.end()}});
          }
        }  // else: an operation that ended here already
      }
    }
  }
  Flush(&out);
}

void GroupState::FailOps(const Status& why, uint32_t from_seq, Outbox* out) {
  for (auto it = ops_.begin(); it != ops_.end();) {
    if (it->first >= from_seq) {
      it->second->Fail(why, false, out);
      if (it->second->awaiting_puts()) orphans_.push_back(it->second);
      it = ops_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& op : p2p_ops_) op->Fail(why, false, out);
  p2p_ops_.clear();
  recvs_.clear();
  sends_.clear();
  announced_.clear();
  cv_.notify_all();
}

void GroupState::MarkFailed(int r, bool orderly, const Status& reason, Outbox* out) {
  Member& m = members_[r];
  if (r == rank_ || m.failed) return;
  ++troubled_;
  m.failed = true;
  if (m.left) return;  // it completed what it had to before its goodbye
  m.why =
      Status::Unavailable(MemberName(r) + (orderly ? " left: " : " failed: ") + reason.ToString());
  // Slot operations whose every contribution is already in the shared slots (the member
  // wrote its part before it died) complete rather than fail.
  if (!slot_queue_.empty()) PollSlotsLocked(out);
  FailOps(m.why, 0, out);
  ReleasePutsOf(r);
}

void GroupState::OnPeerEvent(const PeerEvent& e) {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int r = 0; r < size(); ++r) {
      if (members_[r].sp.runtime() == e.peer) MarkFailed(r, e.orderly, e.reason, &out);
    }
  }
  Flush(&out);
}

void GroupState::CloseWith(const Status& why) {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    closed_why_ = why;
    const uint32_t first_pending = ops_.empty() ? next_seq_ : ops_.front().first;
    FailOps(why, 0, &out);
    // The hub drops this group's later messages: no answer to a shared copy comes now, and
    // the operations must not stay undone (coll_op.h; the sender may still write its half).
    for (int r = 0; r < size(); ++r) ReleasePutsOf(r);
    unexpected_.clear();
    for (int r = 0; r < size(); ++r) {
      if (r != rank_ && !members_[r].failed) {
        EmitGroup(MsgKind::kBye, r, first_pending, 0, {}, &out);
      }
    }
  }
  hub_->Unregister(id_);
  Flush(&out);
}

void GroupState::Close() { CloseWith(Status::Cancelled("the Group was destroyed")); }

void GroupState::ContextClosed() {
  CloseWith(Status::FailedPrecondition("the group's context was destroyed"));
}

std::vector<int> GroupState::KnownFailed() const {
  std::vector<int> out;
  for (int r = 0; r < size(); ++r) {
    if (members_[r].failed || members_[r].left) out.push_back(r);
  }
  return out;
}

std::vector<int> GroupState::FailedMembers() {
  std::lock_guard<std::mutex> lock(mu_);
  return KnownFailed();
}

void GroupState::EmitGroup(MsgKind kind, int dst, uint32_t seq, uint32_t tag,
                           std::span<const uint8_t> body, Outbox* out) {
  Header h;
  h.kind = kind;
  h.group = id_;
  h.seq = seq;
  h.src = static_cast<uint32_t>(rank_);
  h.tag = tag;
  out->messages.push_back(OutMsg{dst, coll::MakeMessage(h, body), nullptr});
}

}  // namespace ukai::rt::internal
