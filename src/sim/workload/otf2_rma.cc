// Otf2Replay's RMA operations and its figures (the class: otf2_replay.h).
#include <fmt/format.h>

#include <algorithm>

#include "sim/workload/otf2_replay.h"
#include "sim/workload/slot_pool.h"

namespace ukai::sim {

// RmaPut: the data to the target; RmaGet: a request, the data back; RmaAtomic: the operands,
// the result back.
Status Otf2Replay::Rma(int loc, const Otf2Event& e) {
  Result<uint64_t> comm = archive_->WindowComm(e.comm);
  if (!comm.ok()) return Status(comm.status().code(), Where(loc) + ": " + comm.status().message());
  Result<int> target = WorldRank(loc, *comm, e.peer, "an RMA operation");
  if (!target.ok()) return target.status();
  Location& l = locs_[static_cast<size_t>(loc)];
  const int32_t i = TakeSlot(&rma_, &free_rma_);
  RmaOp& op = rma_[static_cast<size_t>(i)];
  op = RmaOp();
  op.live = true;
  op.owner = loc;
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
  if (auto old = l.rma.find(e.request); old != l.rma.end()) {
    ++anomalies_["RMA matching id reused before its completion"];
    rma_[static_cast<size_t>(old->second)].forget = true;
  }
  l.rma[e.request] = i;
  Send(Carrier::kRmaFirst, static_cast<uint64_t>(i), l.rank, op.target, first, l.time);
  return Status::Ok();
}

Status Otf2Replay::RmaComplete(int loc, const Otf2Event& e, bool blocking) {
  Location& l = locs_[static_cast<size_t>(loc)];
  auto it = l.rma.find(e.request);
  if (it == l.rma.end()) {
    if (blocking) ++anomalies_["RmaOpCompleteBlocking of an unknown matching id"];
    return Status::Ok();
  }
  const int32_t i = it->second;
  l.rma.erase(it);
  RmaOp& op = rma_[static_cast<size_t>(i)];
  if (op.complete) {
    if (blocking) l.time = std::max(l.time, op.done);
    op.live = false;
    free_rma_.push_back(i);
    return Status::Ok();
  }
  if (blocking) {
    l.wait = Wait::kRma;
    l.wait_on = i;
    op.waited = true;
  } else {
    op.forget = true;  // completed elsewhere: freed when its messages are done
  }
  return Status::Ok();
}

void Otf2Replay::RmaDelivered(Carrier c, int32_t i, int64_t cycle) {
  RmaOp& op = rma_[static_cast<size_t>(i)];
  if (c == Carrier::kRmaFirst && op.kind != Otf2EventKind::kRmaPut) {
    Send(Carrier::kRmaReply, static_cast<uint64_t>(i), op.target,
         locs_[static_cast<size_t>(op.owner)].rank, op.back, cycle);
    return;
  }
  op.complete = true;
  op.done = cycle;
  const int owner = op.owner;
  const Location& l = locs_[static_cast<size_t>(owner)];
  if (op.waited && l.wait == Wait::kRma && l.wait_on == i) {
    op.live = false;
    free_rma_.push_back(i);
    Resume(owner, cycle);
  } else if (op.forget) {
    op.live = false;
    free_rma_.push_back(i);
  }
}

// ---- Figures --------------------------------------------------------------------------------

std::string Otf2Replay::DescribeWait(int loc) const {
  const Location& l = locs_[static_cast<size_t>(loc)];
  const std::string who =
      loc < ranks() ? fmt::format("rank {}", l.rank)
                    : fmt::format("rank {} (location {})", l.rank, archive_->location_ref(loc));
  switch (l.wait) {
    case Wait::kRequest: {
      const Request& q = requests_[static_cast<size_t>(l.wait_on)];
      if (q.is_send) return who + " waits for a send to complete";
      return fmt::format("{} waits for a message from rank {} (tag {}) on '{}'", who, q.key.src,
                         q.key.tag, archive_->CommName(q.key.comm));
    }
    case Wait::kCollective: {
      const CollInstance& c = colls_[static_cast<size_t>(l.wait_on)];
      const int missing = static_cast<int>(std::count(c.caller.begin(), c.caller.end(), -1));
      return fmt::format("{} waits in {} on '{}' ({})", who, CollectiveOpName(c.info.op),
                         archive_->CommName(c.info.comm),
                         missing > 0
                             ? fmt::format("{} of {} members never reached it", missing, c.p)
                             : "every member reached it; its messages were in flight");
    }
    case Wait::kRma:
      return who + " waits for an RMA operation";
    default:
      return who + " is stopped";
  }
}

void Otf2Replay::Report(const Workload& workload, const TraceRunEnd& end, WorkloadFigures* f,
                        std::vector<std::string>* notes) const {
  const double mhz = clock_mhz_ > 0 ? clock_mhz_ : 1;
  f->ranks = ranks();
  f->rank_finish_us.assign(static_cast<size_t>(ranks()), 0.0);
  std::vector<int> stopped;  // locations that did not reach their end
  for (int i = 0; i < locations(); ++i) {
    const Location& l = locs_[static_cast<size_t>(i)];
    if (l.finish < 0) stopped.push_back(i);
    const int64_t finish = l.finish >= 0 ? l.finish : l.time;
    double& rank_finish = f->rank_finish_us[static_cast<size_t>(l.rank)];
    rank_finish = std::max(rank_finish, static_cast<double>(finish) / mhz);
  }
  double total_comm = 0;
  for (int r = 0; r < ranks(); ++r) {  // the main location's time not spent computing
    const Location& l = locs_[static_cast<size_t>(r)];
    const double comm = static_cast<double>((l.finish >= 0 ? l.finish : l.time) - l.compute) / mhz;
    f->rank_communication_us.push_back(comm);
    total_comm += comm;
    f->program_time_us = std::max(f->program_time_us, f->rank_finish_us[static_cast<size_t>(r)]);
  }
  f->communication_time_us = ranks() > 0 ? total_comm / ranks() : 0;
  f->replayed_messages = workload.stats().messages_delivered;
  f->replayed_bytes = workload.stats().bytes_delivered;
  f->p2p_messages = p2p_;
  f->collectives = collectives_;
  f->rma_operations = rma_ops_;
  std::string json = "{";
  std::vector<std::string> kinds;
  for (const auto& [name, count] : unmodelled_) {
    json += fmt::format("{}\"{}\": {}", json.size() > 1 ? ", " : "", name, count);
    kinds.push_back(fmt::format("{} {}", count, name));
  }
  f->unmodelled_events = json + "}";
  if (!kinds.empty()) {
    notes->push_back(fmt::format("events not modelled (counted in unmodelled_events): {}",
                                 fmt::join(kinds, ", ")));
  }
  for (const auto& [what, count] : anomalies_) {
    notes->push_back(fmt::format("{} x {}", count, what));
  }
  int64_t unmatched_sends = 0, unmatched_recvs = 0;
  for (const auto& [key, q] : queues_) {
    unmatched_sends += static_cast<int64_t>(q.sends.size());
    unmatched_recvs += static_cast<int64_t>(q.recvs.size());
  }
  if (unmatched_sends + unmatched_recvs > 0) {
    notes->push_back(
        fmt::format("{} send(s) never matched by a receive, {} receive(s) never matched by a send",
                    unmatched_sends, unmatched_recvs));
  }
  if (lost_ > 0) notes->push_back(fmt::format("{} message(s) lost to faults", lost_));
  if (!stopped.empty() && !end.finished) {
    std::vector<std::string> waits;
    for (size_t k = 0; k < std::min<size_t>(stopped.size(), 4); ++k) {
      waits.push_back(DescribeWait(stopped[k]));
    }
    notes->push_back(fmt::format("{} location(s) did not finish: {}{}", stopped.size(),
                                 fmt::join(waits, "; "), stopped.size() > 4 ? "; ..." : ""));
  }
}

}  // namespace ukai::sim
