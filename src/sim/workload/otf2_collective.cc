// Otf2Replay's collectives, RMA operations and figures (the class: otf2_replay.h).
#include <fmt/format.h>

#include <algorithm>

#include "sim/workload/otf2_replay.h"

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
      s.n = sent > 0 ? Div(sent, p) : Div(recv, p);
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
      own = sent > 0 ? Div(sent, p) : Div(recv, p);
      break;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kReduceScatterBlock:
      s.n = static_cast<int64_t>(sent);
      own = Div(recv, p);
      break;
    default:
      break;
  }
  s.block.assign(static_cast<size_t>(p), own);  // uniform operations: every rank's
  return s;
}

}  // namespace

// A collective's Begin (its End read ahead) or an End without Begin.
Status Otf2Replay::Collective(int rank, const Otf2Event& e, bool rma) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const Otf2EventKind end_kind = rma ? Otf2EventKind::kRmaCollEnd : Otf2EventKind::kCollEnd;
  const Otf2EventKind begin_kind = rma ? Otf2EventKind::kRmaCollBegin : Otf2EventKind::kCollBegin;
  const Otf2Event* end = &e;
  if (e.kind == begin_kind) {
    end = nullptr;
    for (size_t ahead = 0; ahead < kMaxLookAhead && end == nullptr; ++ahead) {
      Result<const Otf2Event*> next = archive_->Peek(rank, ahead);
      if (!next.ok()) return next.status();
      if (*next == nullptr || (*next)->kind == begin_kind) break;
      if ((*next)->kind == end_kind) end = *next;
    }
    if (end == nullptr) {
      return Status::ParseError(
          fmt::format("{}: rank {}: a collective begins (event {}) and "
                      "never ends",
                      config_.file, rank, r.events));
    }
    ++r.skip_ends;
  }
  CollInfo info{
      static_cast<CollectiveOp>(end->op), end->comm, end->comm, end->peer, end->bytes, end->bytes2};
  if (end->op >= kCollectiveOpCount) {
    return Status::ParseError(
        fmt::format("{}: rank {}: collective operation {} is not one of "
                    "OTF2's (event {})",
                    config_.file, rank, end->op, r.events));
  }
  if (rma) {
    Result<uint64_t> comm = archive_->WindowComm(end->comm);
    if (!comm.ok()) return comm.status();
    info.comm = *comm;
    info.key = (uint64_t{1} << 63) | end->comm;
  }
  return ArriveCollective(rank, info);
}

Status Otf2Replay::ArriveCollective(int rank, const CollInfo& info) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const Otf2Comm* comm = archive_->FindComm(info.comm);
  if (comm == nullptr) {
    return Status::ParseError(
        fmt::format("{}: rank {}: a collective on communicator {}, which "
                    "the archive does not define (event {})",
                    config_.file, rank, info.comm, r.events));
  }
  const std::vector<int> members = comm->self ? std::vector<int>{rank} : comm->members;
  const auto where = std::find(members.begin(), members.end(), rank);
  if (where == members.end()) {
    return Status::ParseError(
        fmt::format("{}: rank {} takes part in a collective on '{}', of "
                    "which it is not a member (event {})",
                    config_.file, rank, comm->name, r.events));
  }
  const int me = static_cast<int>(where - members.begin());
  const int p = static_cast<int>(members.size());
  const int64_t number = r.coll_seq[comm->self ? info.key ^ (uint64_t(rank) << 32) : info.key]++;
  const std::string call = fmt::format("rank {} calls {}", rank, CollectiveOpName(info.op));
  const auto key =
      std::make_pair(comm->self ? info.key ^ (uint64_t(rank) << 32) : info.key, number);
  int32_t idx;
  if (auto it = coll_index_.find(key); it != coll_index_.end()) {
    idx = it->second;
    CollInstance& c = colls_[static_cast<size_t>(idx)];
    if (c.info.op != info.op) {
      return Status::ParseError(fmt::format("{}: collective {} on '{}' does not match: {}, {}",
                                            config_.file, number, comm->name, c.first, call));
    }
  } else {
    if (!free_colls_.empty()) {
      idx = free_colls_.back();
      free_colls_.pop_back();
    } else {
      idx = static_cast<int32_t>(colls_.size());
      colls_.emplace_back();
    }
    coll_index_[key] = idx;
    CollInstance& c = colls_[static_cast<size_t>(idx)];
    c = CollInstance();
    c.live = true;
    c.info = info;
    c.key = key;
    c.p = p;
    c.members = members;
    c.v_op = IsVariant(info.op);
    c.first = call;
    const int root = static_cast<int>(std::min<uint32_t>(info.root, static_cast<uint32_t>(p - 1)));
    CollectiveSizes sizes = SizesFromRecord(info.op, p, me, root, info.sent, info.received);
    c.block = sizes.block;
    c.schedule = BuildSchedule(info.op, config_.collective_algorithm, p, root, sizes);
    const size_t ps = static_cast<size_t>(p), nm = c.schedule.messages.size();
    c.arrived.assign(ps, 0);
    c.ready.assign(ps, 0);
    c.last.assign(ps, 0);
    c.in.assign(ps, {});
    c.out.assign(ps, {});
    c.in_pos.assign(nm, 0);
    c.done_at.assign(nm, -1);
    for (size_t m = 0; m < nm; ++m) {
      const CollMessage& msg = c.schedule.messages[m];
      c.in_pos[m] = static_cast<int32_t>(c.in[static_cast<size_t>(msg.to)].size());
      c.in[static_cast<size_t>(msg.to)].push_back(static_cast<int32_t>(m));
      c.out[static_cast<size_t>(msg.from)].push_back(static_cast<int32_t>(m));
    }
    c.prefix.assign(ps, 0);
    c.next_out.assign(ps, 0);
    c.out_done.assign(ps, 0);
    c.finished.assign(ps, 0);
    c.remaining = p;
    ++collectives_;
  }
  CollInstance& c = colls_[static_cast<size_t>(idx)];
  const size_t m = static_cast<size_t>(me);
  c.arrived[m] = 1;
  c.ready[m] = std::max(c.ready[m], r.time);
  c.last[m] = std::max(c.last[m], r.time);
  if (c.v_op) {
    const int root = static_cast<int>(std::min<uint32_t>(info.root, static_cast<uint32_t>(p - 1)));
    c.block[m] = SizesFromRecord(info.op, p, me, root, info.sent, info.received).block[m];
  }
  r.wait = Wait::kCollective;
  r.wait_on = idx;
  TryAdvance(idx, me);
  if (c.v_op) {  // its block may be what others waited for
    for (int j = 0; j < p; ++j) {
      if (j != me) TryAdvance(idx, j);
    }
  }
  CheckMemberDone(idx, me);
  return Status::Ok();
}

// Sends what member `i` may send now: it has arrived, received the messages before, and
// (v-operations) the blocks it carries are known.
void Otf2Replay::TryAdvance(int32_t inst, int i) {
  CollInstance& c = colls_[static_cast<size_t>(inst)];
  const size_t mi = static_cast<size_t>(i);
  if (!c.arrived[mi]) return;
  while (c.next_out[mi] < static_cast<int32_t>(c.out[mi].size())) {
    const int32_t idx = c.out[mi][static_cast<size_t>(c.next_out[mi])];
    const CollMessage& msg = c.schedule.messages[static_cast<size_t>(idx)];
    if (c.prefix[mi] < msg.need) return;
    int64_t bytes = msg.bytes;
    if (c.v_op && !msg.blocks.empty()) {
      bytes = 0;
      for (int b : msg.blocks) {
        if (!c.arrived[static_cast<size_t>(b)]) return;  // its size is in its own record
        bytes += c.block[static_cast<size_t>(b)];
      }
    }
    ++c.next_out[mi];
    Send(Carrier::kColl, (static_cast<uint64_t>(inst) << 29) | static_cast<uint64_t>(idx),
         c.members[mi], c.members[static_cast<size_t>(msg.to)], bytes, std::max(c.ready[mi], now_));
  }
}

// A member leaves the collective when every message it sends or receives was delivered.
void Otf2Replay::CheckMemberDone(int32_t inst, int i) {
  CollInstance& c = colls_[static_cast<size_t>(inst)];
  const size_t mi = static_cast<size_t>(i);
  if (c.finished[mi] || !c.arrived[mi]) return;
  if (c.prefix[mi] < static_cast<int32_t>(c.in[mi].size()) ||
      c.out_done[mi] < static_cast<int32_t>(c.out[mi].size())) {
    return;
  }
  c.finished[mi] = 1;
  const int world = c.members[mi];
  const int64_t at = c.last[mi];
  if (--c.remaining == 0) {
    coll_index_.erase(c.key);
    c = CollInstance();
    free_colls_.push_back(inst);
  }
  Rank& r = ranks_[static_cast<size_t>(world)];
  if (r.wait == Wait::kCollective && r.wait_on == inst) Resume(world, at);
}

void Otf2Replay::CollDelivered(int32_t inst, int32_t message, int64_t cycle) {
  CollInstance& c = colls_[static_cast<size_t>(inst)];
  const CollMessage& msg = c.schedule.messages[static_cast<size_t>(message)];
  const int to = msg.to, from = msg.from;
  const size_t t = static_cast<size_t>(to);
  c.done_at[static_cast<size_t>(message)] = cycle;
  c.last[t] = std::max(c.last[t], cycle);
  while (c.prefix[t] < static_cast<int32_t>(c.in[t].size())) {
    const int64_t at = c.done_at[static_cast<size_t>(c.in[t][static_cast<size_t>(c.prefix[t])])];
    if (at < 0) break;
    c.ready[t] = std::max(c.ready[t], at);
    ++c.prefix[t];
  }
  ++c.out_done[static_cast<size_t>(from)];
  c.last[static_cast<size_t>(from)] = std::max(c.last[static_cast<size_t>(from)], cycle);
  TryAdvance(inst, to);
  CheckMemberDone(inst, to);
  if (colls_[static_cast<size_t>(inst)].live) CheckMemberDone(inst, from);
}

// ---- RMA ------------------------------------------------------------------------------------

Status Otf2Replay::Rma(int rank, const Otf2Event& e) {
  Result<uint64_t> comm = archive_->WindowComm(e.comm);
  if (!comm.ok()) return comm.status();
  Result<int> target = WorldRank(rank, *comm, e.peer, "an RMA operation");
  if (!target.ok()) return target.status();
  Rank& r = ranks_[static_cast<size_t>(rank)];
  int32_t i;
  if (!free_rma_.empty()) {
    i = free_rma_.back();
    free_rma_.pop_back();
  } else {
    i = static_cast<int32_t>(rma_.size());
    rma_.emplace_back();
  }
  RmaOp& op = rma_[static_cast<size_t>(i)];
  op = RmaOp();
  op.live = true;
  op.owner = rank;
  op.target = *target;
  op.kind = e.kind;
  int64_t first = static_cast<int64_t>(e.bytes);  // put: the data; atomic: the operands
  if (e.kind == Otf2EventKind::kRmaGet) {
    first = 0;  // a request
    op.back = static_cast<int64_t>(e.bytes);
  } else if (e.kind == Otf2EventKind::kRmaAtomic) {
    op.back = static_cast<int64_t>(e.bytes2);
  }
  ++rma_ops_;
  if (auto old = r.rma.find(e.request); old != r.rma.end()) {
    ++anomalies_["RMA matching id reused before its completion"];
    rma_[static_cast<size_t>(old->second)].forget = true;
  }
  r.rma[e.request] = i;
  Send(Carrier::kRmaFirst, static_cast<uint64_t>(i), rank, op.target, first, r.time);
  return Status::Ok();
}

Status Otf2Replay::RmaComplete(int rank, const Otf2Event& e, bool blocking) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  auto it = r.rma.find(e.request);
  if (it == r.rma.end()) {
    if (blocking) ++anomalies_["RmaOpCompleteBlocking of an unknown matching id"];
    return Status::Ok();
  }
  const int32_t i = it->second;
  r.rma.erase(it);
  RmaOp& op = rma_[static_cast<size_t>(i)];
  if (op.complete) {
    if (blocking) r.time = std::max(r.time, op.done);
    op.live = false;
    free_rma_.push_back(i);
    return Status::Ok();
  }
  if (blocking) {
    r.wait = Wait::kRma;
    r.wait_on = i;
    op.waited = true;
  } else {
    op.forget = true;  // completed elsewhere: freed when its messages are done
  }
  return Status::Ok();
}

void Otf2Replay::RmaDelivered(Carrier c, int32_t i, int64_t cycle) {
  RmaOp& op = rma_[static_cast<size_t>(i)];
  if (c == Carrier::kRmaFirst && op.kind != Otf2EventKind::kRmaPut) {
    Send(Carrier::kRmaReply, static_cast<uint64_t>(i), op.target, op.owner, op.back, cycle);
    return;
  }
  op.complete = true;
  op.done = cycle;
  const int owner = op.owner;
  Rank& r = ranks_[static_cast<size_t>(owner)];
  if (op.waited && r.wait == Wait::kRma && r.wait_on == i) {
    op.live = false;
    free_rma_.push_back(i);
    Resume(owner, cycle);
  } else if (op.forget) {
    op.live = false;
    free_rma_.push_back(i);
  }
}

// ---- Figures --------------------------------------------------------------------------------

std::string Otf2Replay::DescribeWait(int rank) const {
  const Rank& r = ranks_[static_cast<size_t>(rank)];
  switch (r.wait) {
    case Wait::kRequest: {
      const Request& q = requests_[static_cast<size_t>(r.wait_on)];
      if (q.is_send) return fmt::format("rank {} waits for a send to complete", rank);
      return fmt::format("rank {} waits for a message from rank {} (tag {}) on '{}'", rank,
                         q.key.src, q.key.tag, archive_->CommName(q.key.comm));
    }
    case Wait::kCollective: {
      const CollInstance& c = colls_[static_cast<size_t>(r.wait_on)];
      int missing = 0;
      for (char a : c.arrived) missing += a == 0;
      return fmt::format("rank {} waits in {} on '{}' ({} of {} members never arrived)", rank,
                         CollectiveOpName(c.info.op), archive_->CommName(c.info.comm), missing,
                         c.p);
    }
    case Wait::kRma:
      return fmt::format("rank {} waits for an RMA operation", rank);
    default:
      return fmt::format("rank {} is stopped", rank);
  }
}

void Otf2Replay::Report(const Workload& workload, const TraceRunEnd& end, WorkloadFigures* f,
                        std::vector<std::string>* notes) const {
  const double mhz = clock_mhz_ > 0 ? clock_mhz_ : 1;
  f->ranks = ranks();
  double total_comm = 0;
  std::vector<int> blocked;
  for (int i = 0; i < ranks(); ++i) {
    const Rank& r = ranks_[static_cast<size_t>(i)];
    const int64_t finish = r.finish >= 0 ? r.finish : r.time;
    if (r.finish < 0) blocked.push_back(i);
    f->rank_finish_us.push_back(static_cast<double>(finish) / mhz);
    const double comm = static_cast<double>(finish - r.compute) / mhz;
    f->rank_communication_us.push_back(comm);
    total_comm += comm;
    f->program_time_us = std::max(f->program_time_us, static_cast<double>(finish) / mhz);
  }
  f->communication_time_us = ranks() > 0 ? total_comm / ranks() : 0;
  f->replayed_messages = workload.stats().messages_delivered;
  f->replayed_bytes = workload.stats().bytes_delivered;
  f->p2p_messages = p2p_;
  f->collectives = collectives_;
  f->rma_operations = rma_ops_;
  std::string json = "{";
  for (const auto& [name, count] : unmodelled_) {
    json += fmt::format("{}\"{}\": {}", json.size() > 1 ? ", " : "", name, count);
  }
  f->unmodelled_events = json + "}";
  if (!unmodelled_.empty()) {
    std::vector<std::string> kinds;
    for (const auto& [name, count] : unmodelled_)
      kinds.push_back(fmt::format("{} {}", count, name));
    notes->push_back(fmt::format("events not modelled (counted in unmodelled_events): {}",
                                 fmt::join(kinds, ", ")));
  }
  for (const auto& [what, count] : anomalies_)
    notes->push_back(fmt::format("{} x {}", count, what));
  int64_t unmatched_sends = 0, unmatched_recvs = 0;
  for (const auto& [key, q] : queues_) {
    unmatched_sends += static_cast<int64_t>(q.sends.size());
    unmatched_recvs += static_cast<int64_t>(q.recvs.size());
  }
  if (unmatched_sends + unmatched_recvs > 0) {
    notes->push_back(
        fmt::format("{} send(s) never matched by a receive, {} receive(s) never "
                    "matched by a send",
                    unmatched_sends, unmatched_recvs));
  }
  if (lost_ > 0) notes->push_back(fmt::format("{} message(s) lost to faults", lost_));
  if (!blocked.empty() && !end.finished) {
    std::vector<std::string> waits;
    for (size_t k = 0; k < std::min<size_t>(blocked.size(), 4); ++k) {
      waits.push_back(DescribeWait(blocked[k]));
    }
    notes->push_back(fmt::format("{} rank(s) did not finish: {}{}", blocked.size(),
                                 fmt::join(waits, "; "), blocked.size() > 4 ? "; ..." : ""));
  }
}

}  // namespace ukai::sim
