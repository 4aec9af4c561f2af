// Otf2Replay's collectives: a schedule of workload/collectives.h per collective operation,
// its messages sent as the members reach it (the class: otf2_replay.h).
#include <fmt/format.h>

#include <algorithm>

#include "sim/workload/otf2_replay.h"
#include "sim/workload/slot_pool.h"

namespace ukai::sim {
namespace {

bool IsVariant(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kGatherv:
    case CollectiveOp::kScatterv:
    case CollectiveOp::kAllgatherv:
    case CollectiveOp::kAlltoallv:
    case CollectiveOp::kAlltoallw:
    case CollectiveOp::kReduceScatter:
      return true;
    default:
      return false;
  }
}

int64_t Div(uint64_t a, int64_t b) { return b > 0 ? static_cast<int64_t>(a) / b : 0; }
// The per-rank part of a size counted over the p ranks, or over the p - 1 others (an
// in-place call): whichever divides it, p first.
int64_t PerRank(uint64_t bytes, int p) {
  if (p > 1 && bytes % static_cast<uint64_t>(p) != 0 && bytes % static_cast<uint64_t>(p - 1) == 0) {
    return Div(bytes, p - 1);
  }
  return Div(bytes, p);
}

// The vector n and the calling rank's block from its End record, by Score-P's convention
// (docs/workloads.md): me = its communicator rank.
CollectiveSizes SizesFromRecord(CollectiveOp op, int p, int me, int root, uint64_t sent,
                                uint64_t recv) {
  CollectiveSizes s;
  int64_t own = 0;
  const bool is_root = me == root;
  switch (op) {
    case CollectiveOp::kBcast:
      s.n = recv > 0 ? static_cast<int64_t>(recv) : Div(sent, p);
      break;
    case CollectiveOp::kReduce:
      s.n = sent > 0 ? static_cast<int64_t>(sent) : Div(recv, p - 1);
      break;
    case CollectiveOp::kAllreduce:
      s.n = PerRank(sent > 0 ? sent : recv, p);
      break;
    case CollectiveOp::kScan:
      s.n = sent > 0 ? Div(sent, p - me) : Div(recv, me + 1);
      break;
    case CollectiveOp::kExscan:
      s.n = me > 0 ? Div(recv, me) : Div(sent, p - 1);
      break;
    case CollectiveOp::kGather:
    case CollectiveOp::kGatherv:
      own = !is_root || sent > 0 ? static_cast<int64_t>(sent) : Div(recv, p - 1);
      break;
    case CollectiveOp::kScatter:
    case CollectiveOp::kScatterv:
      own = !is_root || recv > 0 ? static_cast<int64_t>(recv) : Div(sent, p - 1);
      break;
    case CollectiveOp::kAllgather:
    case CollectiveOp::kAllgatherv:
    case CollectiveOp::kAlltoall:
    case CollectiveOp::kAlltoallv:
    case CollectiveOp::kAlltoallw:
      own = PerRank(sent > 0 ? sent : recv, p);
      break;
    case CollectiveOp::kReduceScatter:  // sent: the whole vector; received: p x own part
      s.n = static_cast<int64_t>(sent);
      own = Div(recv, p);
      break;
    case CollectiveOp::kReduceScatterBlock:  // sent = received = p x the block
      own = PerRank(recv, p);
      s.n = own * p;
      break;
    default:
      break;
  }
  s.block.assign(static_cast<size_t>(p), own);  // uniform operations: every rank's
  return s;
}

}  // namespace

// A collective's Begin (its End read ahead) or an End without Begin.
Status Otf2Replay::Collective(int loc, const Otf2Event& e, bool rma) {
  Location& l = locs_[static_cast<size_t>(loc)];
  const Otf2EventKind end_kind = rma ? Otf2EventKind::kRmaCollEnd : Otf2EventKind::kCollEnd;
  const Otf2EventKind begin_kind = rma ? Otf2EventKind::kRmaCollBegin : Otf2EventKind::kCollBegin;
  const Otf2Event* end = &e;
  if (e.kind == begin_kind) {
    end = nullptr;
    for (size_t ahead = 0; ahead < kMaxLookAhead && end == nullptr; ++ahead) {
      Result<const Otf2Event*> next = archive_->Peek(loc, ahead);
      if (!next.ok()) return next.status();
      if (*next == nullptr || (*next)->kind == begin_kind) break;
      if ((*next)->kind == end_kind) end = *next;
    }
    if (end == nullptr) {
      return Status::ParseError(
          fmt::format("{}: a collective begins and never ends (no {} before the next begin or "
                      "the end of the location's events)",
                      Where(loc), rma ? "RmaCollectiveEnd" : "MpiCollectiveEnd"));
    }
    ++l.skip_ends;
  }
  if (end->op >= kCollectiveOpCount) {
    return Status::ParseError(
        fmt::format("{}: collective operation {} is not one of OTF2's", Where(loc), end->op));
  }
  CollInfo info{
      static_cast<CollectiveOp>(end->op), end->comm, end->comm, end->peer, end->bytes, end->bytes2};
  if (rma) {
    Result<uint64_t> comm = archive_->WindowComm(end->comm);
    if (!comm.ok())
      return Status(comm.status().code(), Where(loc) + ": " + comm.status().message());
    info.comm = *comm;
    info.key = (uint64_t{1} << 63) | end->comm;
  }
  return ArriveCollective(loc, info);
}

Status Otf2Replay::ArriveCollective(int loc, const CollInfo& info) {
  Location& l = locs_[static_cast<size_t>(loc)];
  const Otf2Comm* comm = archive_->FindComm(info.comm);
  if (comm == nullptr) {
    return Status::ParseError(
        fmt::format("{}: a collective on communicator {}, which the archive does not define",
                    Where(loc), info.comm));
  }
  const std::vector<int> members = comm->self ? std::vector<int>{l.rank} : comm->members;
  const auto where = std::find(members.begin(), members.end(), l.rank);
  if (where == members.end()) {
    return Status::ParseError(
        fmt::format("{}: a collective on '{}', of which rank {} is not a member", Where(loc),
                    comm->name, l.rank));
  }
  const int me = static_cast<int>(where - members.begin());
  const int p = static_cast<int>(members.size());
  // MPI_COMM_SELF's collectives are each rank's own.
  const uint64_t key = comm->self ? info.key ^ (uint64_t(l.rank) << 32) : info.key;
  const int64_t number = coll_seq_[static_cast<size_t>(l.rank)][key]++;
  const std::string call =
      fmt::format("rank {} calls {} ({})", l.rank, CollectiveOpName(info.op), Where(loc));
  int32_t idx;
  if (auto it = coll_index_.find({key, number}); it != coll_index_.end()) {
    idx = it->second;
    const CollInstance& c = colls_[static_cast<size_t>(idx)];
    if (c.info.op != info.op) {
      return Status::ParseError(fmt::format("collective {} on '{}' differs between ranks: {}; {}",
                                            number, comm->name, c.first, call));
    }
  } else {
    idx = NewCollective(info, {key, number}, members, me, call);
  }
  CollInstance& c = colls_[static_cast<size_t>(idx)];
  const size_t m = static_cast<size_t>(me);
  c.caller[m] = loc;
  c.ready[m] = std::max(c.ready[m], l.time);
  c.last[m] = std::max(c.last[m], l.time);
  if (c.v_op) {
    const int root = static_cast<int>(std::min<uint32_t>(info.root, static_cast<uint32_t>(p - 1)));
    c.block[m] = SizesFromRecord(info.op, p, me, root, info.sent, info.received).block[m];
  }
  l.wait = Wait::kCollective;
  l.wait_on = idx;
  TryAdvance(idx, me);
  if (c.v_op) {  // its block may be what others waited for
    for (int j = 0; j < p; ++j) {
      if (j != me) TryAdvance(idx, j);
    }
  }
  CheckMemberDone(idx, me);
  return Status::Ok();
}

// A new instance of a collective, its schedule sized from the first member's record.
int32_t Otf2Replay::NewCollective(const CollInfo& info, std::pair<uint64_t, int64_t> key,
                                  std::vector<int> members, int me, const std::string& call) {
  const int32_t idx = TakeSlot(&colls_, &free_colls_);
  coll_index_[key] = idx;
  CollInstance& c = colls_[static_cast<size_t>(idx)];
  c = CollInstance();
  c.live = true;
  c.info = info;
  c.key = key;
  c.p = static_cast<int>(members.size());
  c.members = std::move(members);
  c.v_op = IsVariant(info.op);
  c.first = call;
  const int p = c.p;
  const int root = static_cast<int>(std::min<uint32_t>(info.root, static_cast<uint32_t>(p - 1)));
  const CollectiveSizes sizes = SizesFromRecord(info.op, p, me, root, info.sent, info.received);
  c.block = sizes.block;
  c.schedule = BuildSchedule(info.op, config_.collective_algorithm, p, root, sizes);
  const size_t ps = static_cast<size_t>(p), nm = c.schedule.messages.size();
  c.caller.assign(ps, -1);
  c.ready.assign(ps, 0);
  c.last.assign(ps, 0);
  c.in.assign(ps, {});
  c.out.assign(ps, {});
  c.done_at.assign(nm, -1);
  for (size_t i = 0; i < nm; ++i) {
    const CollMessage& msg = c.schedule.messages[i];
    c.in[static_cast<size_t>(msg.to)].push_back(static_cast<int32_t>(i));
    c.out[static_cast<size_t>(msg.from)].push_back(static_cast<int32_t>(i));
  }
  c.prefix.assign(ps, 0);
  c.next_out.assign(ps, 0);
  c.out_done.assign(ps, 0);
  c.finished.assign(ps, 0);
  c.remaining = p;
  ++collectives_;
  return idx;
}

// Sends what member `i` may send now: it has arrived, received the messages before, and
// (v-operations) the blocks it carries are known.
void Otf2Replay::TryAdvance(int32_t inst, int i) {
  CollInstance& c = colls_[static_cast<size_t>(inst)];
  const size_t mi = static_cast<size_t>(i);
  if (c.caller[mi] < 0) return;
  while (c.next_out[mi] < static_cast<int32_t>(c.out[mi].size())) {
    const int32_t idx = c.out[mi][static_cast<size_t>(c.next_out[mi])];
    const CollMessage& msg = c.schedule.messages[static_cast<size_t>(idx)];
    if (c.prefix[mi] < msg.need) return;
    int64_t bytes = msg.bytes;
    if (c.v_op && !msg.blocks.empty()) {
      bytes = 0;
      for (int b : msg.blocks) {
        if (c.caller[static_cast<size_t>(b)] < 0) return;  // its size is in its own record
        bytes += c.block[static_cast<size_t>(b)];
      }
    }
    ++c.next_out[mi];
    Send(Carrier::kColl, (static_cast<uint64_t>(inst) << 29) | static_cast<uint64_t>(idx),
         c.members[mi], c.members[static_cast<size_t>(msg.to)], bytes, c.ready[mi]);
  }
}

// A member leaves the collective when every message it sends or receives was delivered.
void Otf2Replay::CheckMemberDone(int32_t inst, int i) {
  CollInstance& c = colls_[static_cast<size_t>(inst)];
  const size_t mi = static_cast<size_t>(i);
  if (c.finished[mi] || c.caller[mi] < 0) return;
  if (c.prefix[mi] < static_cast<int32_t>(c.in[mi].size()) ||
      c.out_done[mi] < static_cast<int32_t>(c.out[mi].size())) {
    return;
  }
  c.finished[mi] = 1;
  const int loc = c.caller[mi];
  const int64_t at = c.last[mi];
  if (--c.remaining == 0) {
    coll_index_.erase(c.key);
    c = CollInstance();
    free_colls_.push_back(inst);
  }
  const Location& l = locs_[static_cast<size_t>(loc)];
  if (l.wait == Wait::kCollective && l.wait_on == inst) Resume(loc, at);
}

void Otf2Replay::CollDelivered(int32_t inst, int32_t message, int64_t cycle) {
  CollInstance& c = colls_[static_cast<size_t>(inst)];
  const CollMessage& msg = c.schedule.messages[static_cast<size_t>(message)];
  const size_t to = static_cast<size_t>(msg.to), from = static_cast<size_t>(msg.from);
  c.done_at[static_cast<size_t>(message)] = cycle;
  c.last[to] = std::max(c.last[to], cycle);
  while (c.prefix[to] < static_cast<int32_t>(c.in[to].size())) {
    const int64_t at = c.done_at[static_cast<size_t>(c.in[to][static_cast<size_t>(c.prefix[to])])];
    if (at < 0) break;
    c.ready[to] = std::max(c.ready[to], at);
    ++c.prefix[to];
  }
  ++c.out_done[from];
  c.last[from] = std::max(c.last[from], cycle);
  TryAdvance(inst, static_cast<int>(to));
  CheckMemberDone(inst, static_cast<int>(to));
  if (colls_[static_cast<size_t>(inst)].live) CheckMemberDone(inst, static_cast<int>(from));
}

}  // namespace ukai::sim
