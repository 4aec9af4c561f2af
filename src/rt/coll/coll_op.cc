// The schedule interpreter (see coll_op.h and schedule.h for the rules it follows).
#include "rt/coll/coll_op.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include <sched.h>

#include "rt/coll/group_state.h"
#include "ukai/rt/runtime.hpp"

namespace ukai::rt::internal {

using coll::Header;
using coll::MsgKind;
using coll::Order;
using coll::Region;
using coll::Step;
using coll::StepKind;

namespace {

// Bodies from this size on are packed into the runtime's registered memory (NewBuffer).
constexpr size_t kPoolBodyBytes = size_t{16} << 10;
// How long a slot operation's Wait polls (yielding the CPU after every idle pass where
// members outnumber CPUs) before it sleeps in the slots, when its group sleeps there
// (SlotWait::kSleep). Sleeping at once lost to polling at n = 4 on 2 cores (a wake-up costs
// more than the turns it saves: docs/collectives.md, "Waiting").
constexpr std::chrono::microseconds kIdleBeforeSleep{50};

// The call a message's header says its sender made.
OpSignature SignatureOf(const Header& h) {
  OpSignature s;
  s.coll = static_cast<Collective>(h.coll);
  s.algorithm = static_cast<Algorithm>(h.algorithm);
  s.type = static_cast<DataType>(h.dtype);
  s.op = static_cast<ReduceOp>(h.redop);
  s.root = static_cast<int>(h.root);
  s.count = h.count;
  return s;
}

}  // namespace

std::string OpSignature::Describe() const {
  std::string s = std::string(CollectiveName(coll));
  if (coll != Collective::kBarrier) {
    s += " of " + std::to_string(count) + " " + std::string(DataTypeName(type));
  }
  const bool rooted = coll == Collective::kBroadcast || coll == Collective::kScatter ||
                      coll == Collective::kGather || coll == Collective::kReduce;
  if (rooted) s += " from root " + std::to_string(root);
  s += " (";
  if (static_cast<int>(op) != 0) s += std::string(ReduceOpName(op)) + ", ";
  return s + std::string(AlgorithmName(algorithm)) + ")";
}

CollOp::CollOp(Init init) { Reset(std::move(init)); }

void CollOp::Reset(Init init) {
  init_ = std::move(init);
  const coll::Schedule& sc = *init_.schedule;
  const size_t steps = sc.steps.size();
  if (steps > std::size(st_small_)) {
    if (steps > st_capacity_) {
      st_heap_.reset(new StepState[steps]);
      st_capacity_ = steps;
    } else {
      std::fill(st_heap_.get(), st_heap_.get() + steps, StepState{});
    }
    st_ = st_heap_.get();
  } else {
    std::fill(st_small_, st_small_ + steps, StepState{});
    st_ = st_small_;
  }
  if (sc.tmp_bytes > sizeof tmp_small_) {
    if (sc.tmp_bytes > tmp_capacity_) {  // a reused operation keeps its (warm) scratch
      tmp_heap_.reset(new uint8_t[sc.tmp_bytes]);
      tmp_capacity_ = sc.tmp_bytes;
    }
    tmp_ = tmp_heap_.get();
  } else {
    tmp_ = tmp_small_;
  }
  if (init_.in_place && init_.send_bytes != 0) {
    send_copy_.reset(new uint8_t[init_.send_bytes]);
    std::memcpy(send_copy_.get(), init_.send, init_.send_bytes);
    init_.send = send_copy_.get();
  }
  combiner_ = init_.combiner;
  ResetProgress();
}

void CollOp::ResetSlotBarrier(uint32_t seq, const OpSignature& sig, bool yield_when_idle,
                              const std::shared_ptr<const coll::Schedule>& empty) {
  init_.seq = seq;
  init_.sig = sig;
  if (init_.schedule != empty) init_.schedule = empty;
  init_.send = nullptr;
  init_.recv = nullptr;
  init_.in_place = false;
  init_.send_bytes = 0;
  init_.combiner = coll::Combiner();
  if (init_.user != nullptr) init_.user.reset();
  init_.slot = true;
  init_.yield_when_idle = yield_when_idle;
  st_ = st_small_;  // no steps
  tmp_ = tmp_small_;
  combiner_ = init_.combiner;
  ResetProgress();
}

void CollOp::ResetProgress() {
  if (!stash_.empty()) stash_.clear();
  round_ = 0;
  round_started_ = false;
  pending_round_ = pending_bg_ = 0;
  ordered_next_ = 0;
  puts_out_ = 0;
  slot_written_ = false;
  slot_next_ = 0;
  finished_ = false;
  finished_flag_.store(false, std::memory_order_relaxed);
  status_ = Status::Ok();
  in_flight_.store(0, std::memory_order_relaxed);
  done_.store(false, std::memory_order_release);
}

std::shared_ptr<CollOp> CollOp::Failed(Runtime* runtime, Status status) {
  Init init;
  init.runtime = runtime;
  init.schedule = std::make_shared<coll::Schedule>();
  auto op = std::make_shared<CollOp>(std::move(init));
  op->finished_ = true;
  op->status_ = std::move(status);
  op->done_.store(true);
  return op;
}

uint8_t* CollOp::Ptr(const Region& r) {
  switch (r.buf) {
    case coll::BufId::kRecv:
      return static_cast<uint8_t*>(init_.recv) + r.offset;
    case coll::BufId::kTmp:
      return tmp_ + r.offset;
    case coll::BufId::kSend:
      break;
  }
  return nullptr;  // the schedule never writes the send buffer (checked when built)
}

const uint8_t* CollOp::CPtr(const Region& r) const {
  if (r.buf == coll::BufId::kSend) return static_cast<const uint8_t*>(init_.send) + r.offset;
  return const_cast<CollOp*>(this)->Ptr(r);
}

bool CollOp::Large(const Step& s) const {
  const uint64_t len = s.kind == StepKind::kSend ? s.src.length : s.dst.length;
  if (init_.rendezvous_bytes == 0 || len < init_.rendezvous_bytes) return false;
  return init_.sig.coll != Collective::kAlltoall || len >= init_.exchange_eager_bytes;
}

void CollOp::Start(Outbox* out) {
  if (!init_.slot) Advance(out);  // slot operations: GroupState::PollSlots
}

void CollOp::Advance(Outbox* out) {
  const coll::Schedule& sc = *init_.schedule;
  while (!finished_) {
    if (round_ < sc.rounds()) {
      if (!round_started_) StartRound(out);
      if (finished_) return;
      RunOrdered(out);
      if (finished_ || pending_round_ > 0) return;
      ++round_;
      round_started_ = false;
      continue;
    }
    if (pending_bg_ == 0) Finish(Status::Ok(), out);
    return;
  }
}

void CollOp::StartRound(Outbox* out) {
  const coll::Schedule& sc = *init_.schedule;
  const uint32_t begin = sc.round_begin[round_], end = sc.round_begin[round_ + 1];
  round_started_ = true;
  ordered_next_ = begin;
  for (uint32_t i = begin; i < end; ++i) {  // count first: steps may complete below
    const Step& s = sc.steps[i];
    const bool tracked =
        s.kind == StepKind::kRecv || s.ordered || (s.kind == StepKind::kSend && Large(s));
    if (!tracked) continue;
    ++(s.background ? pending_bg_ : pending_round_);
  }
  for (uint32_t i = begin; i < end && !finished_; ++i) {
    const Step& s = sc.steps[i];
    switch (s.kind) {
      case StepKind::kCopy:
      case StepKind::kCombine:
        if (!s.ordered) Execute(s);
        break;
      case StepKind::kSend:
        if (Large(s)) {
          st_[i].announced = true;
          const uint64_t addr =
              init_.single_copy ? reinterpret_cast<uint64_t>(CPtr(s.src)) : uint64_t{0};
          Emit(MsgKind::kRts, s.peer, s.tag, s.src.length, addr, {}, out);
          if (init_.counters) init_.counters->announced.fetch_add(1, std::memory_order_relaxed);
        } else {
          SendData(static_cast<int>(i), out);
        }
        break;
      case StepKind::kRecv:
        if (!s.ordered) MakeReady(static_cast<int>(i), out);
        break;
    }
  }
}

void CollOp::RunOrdered(Outbox* out) {
  const coll::Schedule& sc = *init_.schedule;
  const uint32_t end = sc.round_begin[round_ + 1];
  while (ordered_next_ < end && !finished_) {
    const uint32_t i = ordered_next_;
    const Step& s = sc.steps[i];
    if (s.ordered) {
      if (s.kind == StepKind::kRecv) {
        if (!st_[i].ready) MakeReady(static_cast<int>(i), out);
        if (!st_[i].complete) return;
      } else if (!st_[i].complete) {
        Execute(s);
        Complete(static_cast<int>(i));
      }
    }
    ++ordered_next_;
  }
}

void CollOp::MakeReady(int i, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  StepState& st = st_[i];
  st.ready = true;
  if (Large(s) && !st.early) {
    if (st.rts && !st.cts_sent && !StartSharedCopy(i, out) && !ReadAnnounced(i, out)) {
      st.cts_sent = true;
      Emit(MsgKind::kCts, s.peer, s.tag, s.dst.length, 0, {}, out);
    }
    return;
  }
  if (stash_.empty()) return;
  std::vector<Piece> early;
  for (auto it = stash_.begin(); it != stash_.end();) {
    if (it->first == i) {
      early.push_back(std::move(it->second));
      it = stash_.erase(it);
    } else {
      ++it;
    }
  }
  for (Piece& p : early) {
    Receive(i, p.offset, p.bytes, out);
    if (st.early) spare_.push_back(std::move(p.bytes));  // ReadEarly's next buffer
  }
}

bool CollOp::ReadAnnounced(int i, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  StepState& st = st_[i];
  if (st.remote == 0 || init_.proofs == nullptr || init_.proofs->at(s.peer).pid == 0) {
    return false;
  }
  const coll::MemberProof& from = init_.proofs->at(s.peer);
  // Combine from a scratch: 1 MiB pieces (fewer system calls than 256 KiB ones measured
  // faster for the 1 MiB allreduce, docs/performance-history.md "Collectives: shared copies").
  constexpr uint64_t kPiece = uint64_t{1} << 20;
  Status read;
  if (s.order == Order::kCopy) {
    read = coll::ReadMember(from, st.remote, {Ptr(s.dst), s.dst.length});
  } else {
    align_scratch_.resize(std::min(kPiece, s.dst.length));
    for (uint64_t off = 0; off < s.dst.length && read.ok(); off += kPiece) {
      const uint64_t len = std::min(kPiece, s.dst.length - off);
      read = coll::ReadMember(from, st.remote + off, {align_scratch_.data(), len});
      if (read.ok()) Apply(i, off, {align_scratch_.data(), len});
    }
  }
  if (read.code() == StatusCode::kUnavailable) {
    // The member's process is gone. The runtime declares failures (its peer event names the
    // member, marks it failed for FailedMembers and Shrink, and fails every pending
    // operation of the group): the step waits for that verdict and asks nothing more of
    // the dead process.
    st.cts_sent = true;
    return true;
  }
  if (!read.ok()) return false;  // e.g. not permitted after all: ask for the data
  st.got = s.dst.length;
  st.any = true;
  st.cts_sent = true;  // nothing more may come for this step
  Emit(MsgKind::kFin, s.peer, s.tag, s.dst.length, 0, {}, out);
  Complete(i);
  return true;
}

void CollOp::ReadEarly(int i, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  StepState& st = st_[i];
  if (s.order == Order::kCopy || st.cts_sent || st.remote == 0 || init_.proofs == nullptr ||
      init_.proofs->at(s.peer).pid == 0) {
    return;
  }
  // Buffers of earlier early reads are kept (this operation object is reused): a fresh
  // allocation of this size would fault its pages in again on every call.
  std::vector<uint8_t> bytes;
  if (!spare_.empty()) {
    bytes = std::move(spare_.back());
    spare_.pop_back();
  }
  bytes.resize(s.dst.length);
  const Status read = coll::ReadMember(init_.proofs->at(s.peer), st.remote, bytes);
  if (read.code() == StatusCode::kUnavailable) {  // gone: the peer event fails the step
    st.cts_sent = true;
    return;
  }
  if (!read.ok()) return;  // then as when it was not read early (ReadAnnounced, kCts)
  stash_.emplace_back(i, Piece{0, std::move(bytes)});
  st.early = true;
  st.cts_sent = true;
  if (init_.counters != nullptr) {
    init_.counters->early_reads.fetch_add(1, std::memory_order_relaxed);
  }
  Emit(MsgKind::kFin, s.peer, s.tag, s.dst.length, 0, {}, out);
}

bool CollOp::StartSharedCopy(int i, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  StepState& st = st_[i];
  const Collective c = init_.sig.coll;
  const bool rooted =
      c == Collective::kBroadcast || c == Collective::kScatter || c == Collective::kGather;
  if (!rooted || init_.shared_copy_bytes == 0 || s.dst.length < init_.shared_copy_bytes ||
      s.order != Order::kCopy || st.remote == 0 || init_.proofs == nullptr ||
      init_.proofs->at(s.peer).pid == 0) {
    return false;
  }
  const uint64_t half = SharedHalf(s.dst.length);
  uint8_t* dst = Ptr(s.dst);
  st.cts_sent = true;  // nothing but the sender's half (written, or as data) may come now
  st.shared = true;
  st.put_out = true;
  ++puts_out_;
  Queued();  // the answer to come: the operation is not done before it (see coll_op.h)
  Emit(MsgKind::kPut, s.peer, s.tag, s.dst.length, reinterpret_cast<uint64_t>(dst), {}, out);
  Queued();  // the read below, released by GroupState::Flush
  out->reads.push_back(SharedRead{shared_from_this(), i, init_.proofs->at(s.peer), st.remote + half,
                                  dst + half, s.dst.length - half});
  return true;
}

void CollOp::SharedReadDone(int i, const Status& read, Outbox* out) {
  if (finished_) return;
  const Step& s = init_.schedule->steps[i];
  StepState& st = st_[i];
  if (read.code() == StatusCode::kUnavailable) return;  // the sender died: its peer event fails us
  if (!read.ok()) {
    Fail(read.WithContext("collective #" + std::to_string(init_.seq) + " (" + init_.sig.Describe() +
                          "): reading rank " + std::to_string(s.peer)),
         true, out);
    return;
  }
  if (init_.counters) init_.counters->shared_reads.fetch_add(1, std::memory_order_relaxed);
  st.own_read = true;
  st.got += s.dst.length - SharedHalf(s.dst.length);
  st.any = true;
  Emit(MsgKind::kFin, s.peer, s.tag, s.dst.length, 0, {}, out);
  SettleShared(i, out);
  Advance(out);
}

void CollOp::OnPut(int i, const Header& h, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  const uint64_t half = SharedHalf(s.src.length);
  Status wrote = Status::FailedPrecondition("not proven");
  if (init_.proofs != nullptr && init_.proofs->at(s.peer).pid != 0) {
    wrote = coll::WriteMember(init_.proofs->at(s.peer), h.offset, {CPtr(s.src), half});
  }
  if (wrote.code() == StatusCode::kUnavailable) return;  // the receiver died
  if (wrote.ok()) {
    if (init_.counters) init_.counters->shared_writes.fetch_add(1, std::memory_order_relaxed);
  } else {
    SendRange(i, 0, half, out);  // cannot write there: the half goes as data (before kWrote)
  }
  Emit(MsgKind::kWrote, s.peer, s.tag, s.src.length, wrote.ok() ? half : 0, {}, out);
}

void CollOp::OnWrote(int i, const Header& h, Outbox* out) {
  StepState& st = st_[i];
  st.got += h.offset;
  if (h.offset != 0) st.any = true;
  PutAnswered(i);
  SettleShared(i, out);
}

void CollOp::SettleShared(int i, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  const StepState& st = st_[i];
  if (st.put_out || !st.own_read) return;
  if (st.got == s.dst.length) {
    Complete(i);
    return;
  }
  // Data messages come before the kWrote that follows them: the half will not come.
  Fail(Status::Cancelled("collective #" + std::to_string(init_.seq) + " (" + init_.sig.Describe() +
                         "): rank " + std::to_string(s.peer) +
                         " ended it before delivering its half of a shared copy"),
       false, out);
}

void CollOp::PutAnswered(int i) {
  StepState& st = st_[i];
  if (!st.put_out) return;
  st.put_out = false;
  --puts_out_;
  Dispatched();
  TryComplete();
}

void CollOp::ReleasePuts(int peer) {
  const coll::Schedule& sc = *init_.schedule;
  for (size_t i = 0; i < sc.steps.size() && puts_out_ > 0; ++i) {
    if (sc.steps[i].peer == peer) PutAnswered(static_cast<int>(i));
  }
}

void CollOp::Receive(int i, uint64_t offset, std::span<const uint8_t> bytes, Outbox*) {
  StepState& st = st_[i];
  if (!st.ready) {
    stash_.emplace_back(i, Piece{offset, std::vector<uint8_t>(bytes.begin(), bytes.end())});
    return;
  }
  Apply(i, offset, bytes);
  st.got += bytes.size();
  st.any = true;
  if (st.got == init_.schedule->steps[i].dst.length) Complete(i);
}

void CollOp::Apply(int i, uint64_t offset, std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  const Step& s = init_.schedule->steps[i];
  uint8_t* dst = Ptr(s.dst) + offset;
  if (s.order == Order::kCopy) {
    std::memcpy(dst, bytes.data(), bytes.size());
    return;
  }
  const uint8_t* src = bytes.data();
  if (reinterpret_cast<uintptr_t>(src) % combiner_.element() != 0) {  // transport alignment
    align_scratch_.assign(bytes.begin(), bytes.end());
    src = align_scratch_.data();
  }
  if (s.order == Order::kDstFirst) {
    combiner_.Apply(dst, src, dst, bytes.size());
  } else {
    combiner_.Apply(src, dst, dst, bytes.size());
  }
}

void CollOp::Execute(const Step& s) {
  const uint64_t len = s.dst.length;
  if (len == 0) return;
  const uint8_t* src = CPtr(s.src);
  uint8_t* dst = Ptr(s.dst);
  if (s.kind == StepKind::kCopy) {
    if (src != dst) std::memmove(dst, src, len);
  } else if (s.order == Order::kDstFirst) {
    combiner_.Apply(dst, src, dst, len);
  } else {
    combiner_.Apply(src, dst, dst, len);
  }
}

void CollOp::Complete(int i) {
  const Step& s = init_.schedule->steps[i];
  st_[i].complete = true;
  --(s.background ? pending_bg_ : pending_round_);
}

void CollOp::SendData(int i, Outbox* out) {
  SendRange(i, 0, init_.schedule->steps[i].src.length, out);
}

void CollOp::SendRange(int i, uint64_t begin, uint64_t end, Outbox* out) {
  const Step& s = init_.schedule->steps[i];
  const uint8_t* data = CPtr(s.src);
  const uint64_t len = s.src.length;
  const uint64_t element = DataTypeSize(init_.sig.type);
  const uint64_t seg = std::max(element, init_.segment_bytes - init_.segment_bytes % element);
  if (len == 0) Emit(MsgKind::kData, s.peer, s.tag, 0, 0, {}, out);
  for (uint64_t off = begin; off < end; off += seg) {
    Emit(MsgKind::kData, s.peer, s.tag, len, off, {data + off, std::min(seg, end - off)}, out);
  }
}

void CollOp::Emit(MsgKind kind, int dst, uint32_t tag, uint64_t total, uint64_t offset,
                  std::span<const uint8_t> body, Outbox* out) {
  Header h;
  h.kind = kind;
  h.coll = static_cast<uint8_t>(init_.sig.coll);
  h.algorithm = static_cast<uint8_t>(init_.sig.algorithm);
  h.dtype = static_cast<uint8_t>(init_.sig.type);
  h.redop = static_cast<uint8_t>(init_.sig.op);
  h.group = init_.group_id;
  h.seq = init_.seq;
  h.src = static_cast<uint32_t>(init_.rank);
  h.tag = tag;
  h.root = static_cast<uint32_t>(init_.sig.root);
  h.count = init_.sig.count;
  h.total = total;
  h.offset = offset;
  const size_t size = coll::kCollHeaderBytes + body.size();
  Buffer b = body.size() >= kPoolBodyBytes ? init_.runtime->NewBuffer(size) : Buffer(size);
  ByteBlock& blk = b.block();
  const size_t at = blk.size();
  blk.Resize(at + size);
  coll::EncodeHeader(h, blk.data() + at);
  if (!body.empty())
    std::memcpy(blk.data() + at + coll::kCollHeaderBytes, body.data(), body.size());
  Queued();
  out->messages.push_back(OutMsg{dst, std::move(b), shared_from_this()});
}

Status CollOp::CheckSignature(const Header& h) const {
  const OpSignature& mine = init_.sig;
  if (h.coll == static_cast<uint8_t>(mine.coll) &&
      h.algorithm == static_cast<uint8_t>(mine.algorithm) &&
      h.dtype == static_cast<uint8_t>(mine.type) && h.redop == static_cast<uint8_t>(mine.op) &&
      h.root == static_cast<uint32_t>(mine.root) && h.count == mine.count) {
    return Status::Ok();
  }
  const OpSignature theirs = SignatureOf(h);
  return Status::InvalidArgument("mismatched collective #" + std::to_string(init_.seq) +
                                 " of group " + std::to_string(init_.group_id) + ": rank " +
                                 std::to_string(h.src) + " called " + theirs.Describe() +
                                 ", rank " + std::to_string(init_.rank) + " (here) called " +
                                 mine.Describe());
}

void CollOp::OnMessage(const Header& h, std::span<const uint8_t> body, Outbox* out) {
  if (finished_) {
    // A shared copy asked of us or answered to us after this operation ended.
    const coll::Schedule& sc = *init_.schedule;
    const int peer = static_cast<int>(h.src);
    if (h.kind == MsgKind::kPut) {  // our buffer may be the caller's again: write nothing
      Emit(MsgKind::kWrote, peer, h.tag, h.total, 0, {}, out);
    } else if (h.kind == MsgKind::kWrote) {
      if (const int i = sc.FindRecv(peer, h.tag); i >= 0) PutAnswered(i);
    }
    return;
  }
  if (h.kind == MsgKind::kAbort) {
    const Status why = coll::DecodeAbort(body);
    Fail(Status(why.code(), "rank " + std::to_string(h.src) + " ended collective #" +
                                std::to_string(init_.seq) + ": " + why.message()),
         false, out);
    return;
  }
  if (init_.slot) {  // a member runs this operation with messages: it was called differently
    const OpSignature theirs = SignatureOf(h);
    Fail(SlotMismatch(static_cast<int>(h.src), theirs.Describe() + " with messages"), true, out);
    return;
  }
  Status sig = CheckSignature(h);
  if (!sig.ok()) {
    Fail(sig, true, out);
    return;
  }
  const coll::Schedule& sc = *init_.schedule;
  const int peer = static_cast<int>(h.src);
  const bool to_send =
      h.kind == MsgKind::kCts || h.kind == MsgKind::kFin || h.kind == MsgKind::kPut;
  const int i = to_send ? sc.FindSend(peer, h.tag) : sc.FindRecv(peer, h.tag);
  auto protocol = [&](const std::string& what) {
    Fail(Status::InvalidArgument("collective #" + std::to_string(init_.seq) + " (" +
                                 init_.sig.Describe() + "): " + what + " from rank " +
                                 std::to_string(peer) + " (tag " + std::to_string(h.tag) +
                                 "; do all members use the same algorithm and arguments?)"),
         true, out);
  };
  if (i < 0) return protocol("unexpected " + coll::MsgKindName(h.kind));
  const Step& s = sc.steps[i];
  StepState& st = st_[i];
  if (st.complete) return protocol("a second " + coll::MsgKindName(h.kind));
  if (!to_send && h.total != s.dst.length) {
    return protocol(std::to_string(h.total) + " bytes where this member expects " +
                    std::to_string(s.dst.length));
  }
  switch (h.kind) {
    case MsgKind::kData:
      if (Large(s) && !st.cts_sent) return protocol("data before this member asked for them");
      Receive(i, h.offset, body, out);
      break;
    case MsgKind::kRts:
      if (!Large(s) || st.rts) return protocol("an unexpected announcement");
      st.rts = true;
      st.remote = h.offset;
      if (st.ready) {
        MakeReady(i, out);
      } else {
        ReadEarly(i, out);
      }
      break;
    case MsgKind::kCts:
      if (!Large(s) || !st.announced) return protocol("a request for data not announced");
      SendData(i, out);
      Complete(i);
      break;
    case MsgKind::kFin:
      if (!Large(s) || !st.announced) return protocol("a read of data not announced");
      Complete(i);
      break;
    case MsgKind::kPut:
      if (!Large(s) || !st.announced || st.put || h.total != s.src.length) {
        return protocol("an unexpected request to write");
      }
      st.put = true;
      OnPut(i, h, out);
      break;
    case MsgKind::kWrote:
      if (!st.put_out || h.offset > SharedHalf(s.dst.length)) {
        return protocol("an unexpected write");
      }
      OnWrote(i, h, out);
      break;
    default:
      return protocol("a " + coll::MsgKindName(h.kind) + " message");
  }
  Advance(out);
}

void CollOp::Fail(const Status& why, bool tell, Outbox* out) {
  if (finished_) return;
  if (tell) {
    const std::vector<uint8_t> body = coll::EncodeAbort(why);
    for (int j = 0; j < init_.group_size; ++j) {
      if (j != init_.rank) Emit(MsgKind::kAbort, j, 0, 0, 0, body, out);
    }
  }
  Finish(why, out);
}

void CollOp::Finish(const Status& s, Outbox* out) {
  finished_ = true;
  status_ = s;
  finished_flag_.store(true);
  TryComplete();  // done now unless messages of ours still wait in an outbox (Flush ends it)
  (void)out;
}

void CollOp::TryComplete() {
  if (!finished_flag_.load() || in_flight_.load() != 0) return;
  done_.store(true, std::memory_order_release);
}

Status CollOp::Wait(std::chrono::milliseconds timeout) const {
  if (done()) return status_;  // e.g. a slot barrier that the last member to arrive posted
  std::chrono::steady_clock::time_point deadline{};
  if (timeout.count() >= 0) deadline = std::chrono::steady_clock::now() + timeout;
  unsigned idle = 0;
  // A slot operation completes when this member sees the others' slots: poll them too (a
  // pass looks at the awaited slot many times between progress passes, and takes the lock
  // only when it shows, or in every 8th idle pass).
  const std::shared_ptr<GroupState> group = init_.slot ? init_.group.lock() : nullptr;
  unsigned spins = 0;
  const bool may_sleep = group != nullptr && group->slot_sleep();
  std::chrono::steady_clock::time_point idle_since;
  while (!done()) {
    int n = group != nullptr ? group->AwaitSlots(*this, spins % 8 == 7) : 0;
    if (!done()) n += init_.runtime->Progress();
    // Slot operations wait for other processes' stores only: after a few idle passes give
    // the CPU away, so that on a busy host the member we wait for gets to run.
    spins = n == 0 ? spins + 1 : 0;
    // Where members outnumber the CPUs, sleep (futex) until a member completes a slot
    // operation instead of taking turns with the others for the CPU.
    if (n == 0 && may_sleep) {
      const auto now = std::chrono::steady_clock::now();
      if (spins == 1) {
        idle_since = now;
      } else if (now - idle_since >= kIdleBeforeSleep) {
        n = group->SleepOnSlots(*this);
        if (n != 0) spins = 0;
      }
    }
    if (n == 0 && (init_.yield_when_idle || (group != nullptr && spins > 64))) sched_yield();
    if (n == 0 && ++idle % 256 == 0) {
      if (timeout.count() >= 0 && std::chrono::steady_clock::now() > deadline) {
        return Status::Timeout("collective still in flight after " +
                               std::to_string(timeout.count()) + " ms");
      }
    }
  }
  return status_;
}

Status CollOp::status() const {
  if (!done()) return Status::FailedPrecondition("the collective has not completed yet");
  return status_;
}

}  // namespace ukai::rt::internal
