// Network: the partitions of a cycle (network.h, "Parallel simulation"): setting them up,
// running them on the worker threads, merging their deliveries and counters; the
// deadlock and invariant reports over every partition.
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "sim/engine/network.h"
#include "sim/engine/rank_exchange.h"
#include "sim/engine/rank_group.h"
#include "sim/engine/worker_pool.h"

namespace ukai::sim {
namespace {

// Most messages alive at once: as many as fit in the physical memory (and ulimit -v), at
// most Flit::kMaxMessages. The pool reserves that much address space and uses what it
// needs.
int64_t PoolCapacity() {
  double bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  struct rlimit lim;
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    bytes = std::min(bytes, static_cast<double>(lim.rlim_cur) / 4);
  }
  const double n = bytes / sizeof(Message);
  return static_cast<int64_t>(std::clamp(n, 65536.0, double(Flit::kMaxMessages)));
}

}  // namespace

double Network::ReservedBytes() const {
  double bytes =
      fabric_->ReservedBytes() + static_cast<double>(messages_->capacity() * sizeof(Message));
  bytes += static_cast<double>(pe_.size() * sizeof(Pe) + rng_.size() * sizeof(Rng) +
                               paused_until_.size() * sizeof(int64_t));
  for (const Part& part : parts_) {
    bytes += static_cast<double>(part.active.size() * sizeof(int32_t) + part.pe_busy.size() +
                                 part.active_flags.size());
  }
  return bytes;
}

void Network::Counters::Add(const Counters& o) {
  flits_injected += o.flits_injected;
  flits_ejected += o.flits_ejected;
  flit_hops += o.flit_hops;
  flits_discarded += o.flits_discarded;
  flits_copied += o.flits_copied;
  messages_injected += o.messages_injected;
  inflight_flits += o.inflight_flits;
  inflight_created_sum += o.inflight_created_sum;
  messages_created += o.messages_created;
  messages_delivered += o.messages_delivered;
  backlog += o.backlog;
  not_generated += o.not_generated;
  undeliverable += o.undeliverable;
  retransmitted += o.retransmitted;
  discarded += o.discarded;
  last_progress = std::max(last_progress, o.last_progress);
  next_creation = std::min(next_creation, o.next_creation);
  any_active = any_active || o.any_active;
  scheduled = scheduled || o.scheduled;
}

Status Network::SetUpPartitions() {
  const int nodes = topology_->NumNodes();
  RankGroup* group = config_.run.ranks;
  const int ranks = group == nullptr ? 1 : group->size();
  const PartitionChoice choice = ChoosePartitions(config_.run, nodes, ranks);
  partition_note_ = choice.note;
  partitions_ = choice.threads * choice.ranks;
  UKAI_RETURN_IF_ERROR(CheckPartitionable(choice.threads, choice.ranks));
  Result<PartitionPlan> plan =
      PartitionPlan::Make(config_.network, nodes, partitions_, config_.run.partition);
  if (!plan.ok()) return plan.status();
  plan_parts_ = std::move(*plan);
  if (!choice.replicated && ranks > 1) ranks_ = group;
  const int first = ranks_ == nullptr ? 0 : ranks_->rank() * choice.threads;
  messages_ = std::make_unique<MessagePool>(choice.threads, PoolCapacity());
  fabric_ = std::make_unique<Fabric>(*topology_, config_.router, routing_.get(), selection_.get(),
                                     messages_.get(), &plan_parts_, first, choice.threads);
  pe_.Reset(static_cast<size_t>(nodes));
  rng_.Reset(static_cast<size_t>(nodes));
  paused_until_.Reset(static_cast<size_t>(nodes));
  parts_.resize(static_cast<size_t>(choice.threads));
  for (int l = 0; l < choice.threads; ++l) {
    Part& part = parts_[static_cast<size_t>(l)];
    part.lane = l;
    part.runs = plan_parts_.runs(first + l);
    part.active.Reset(static_cast<size_t>(plan_parts_.NodesOf(first + l)) + 8);
    part.active_flags.Reset((static_cast<size_t>(nodes) + 7) / 8 * 8);
    part.pe_busy.Reset(static_cast<size_t>(nodes));
    for (const NodeRun& run : part.runs) {
      pe_.Fill(static_cast<size_t>(run.begin), static_cast<size_t>(run.end), Pe{});
      for (int i = run.begin; i < run.end; ++i) rng_[i] = Rng::Stream(config_.seed, i);
    }
  }
  if (choice.threads > 1) workers_ = std::make_unique<WorkerPool>(choice.threads);
  if (ranks_ != nullptr) rank_state_ = std::make_unique<RankState>();
  return Status::Ok();
}

// What a partitioned run cannot simulate yet. Each of these keeps state that one
// partition's thread or rank would have to share with the others during a cycle (a fork
// copies flits into several partitions and its multicast is released by the last of them;
// a message source and the NIC models create messages on the calling thread; BookSim2's
// per-node counts live on every rank) or has no partition plan yet (graph topologies):
// the run says so instead of giving a different answer.
Status Network::CheckPartitionable(int threads, int ranks) const {
  if (threads <= 1 && ranks <= 1) return Status::Ok();
  const std::string key = threads > 1 ? "run.threads" : "run.ranks";
  const std::string how = threads > 1 ? fmt::format("run.threads = {} partitions", threads)
                                      : fmt::format("{} MPI ranks", ranks);
  auto refuse = [&](const std::string& what) {
    return Status::InvalidArgument(
               fmt::format("{}: {} cannot be split into partitions yet ({}); run it with "
                           "run.threads = 1 in one process",
                           key, what, how))
        .WithKey(key);
  };
  const NetworkConfig& nc = config_.network;
  if (config_.sss.active()) return refuse("the SSS-CORE NIC model (sss.operation)");
  if (config_.workload.active()) return refuse("a workload (workload.kind, trace replay)");
  if (nc.topology == TopologyKind::kGraph || nc.topology == TopologyKind::kTree) {
    return refuse("a graph topology (network.topology = graph / tree / anynet)");
  }
  if (config_.router.flow_control == FlowControl::kInBand) {
    return refuse("in-band flow control (router.flow_control = in-band)");
  }
  if (routing_->MayFork()) {
    return refuse("a routing that forks messages (multicast, routing.algorithm = '" +
                  config_.routing.algorithm + "')");
  }
  const MeasureMode mode = config_.measure.mode;
  if (ranks > 1 && (mode == MeasureMode::kBooksim || mode == MeasureMode::kBooksimThroughput)) {
    return refuse("BookSim2's measurement (measure.mode = booksim / booksim-throughput)");
  }
  return Status::Ok();
}

void Network::SetMessageSource(MessageSource* source) {
  if (source != nullptr && partitions_ > 1) {
    std::fprintf(stderr, "ukai sim: a message source needs a network of one partition\n");
    std::abort();
  }
  source_ = source;
}

// One cycle of every partition: evaluate in parallel, exchange with the other ranks, commit
// in parallel, merge.
void Network::RunParts() {
  if (workers_ == nullptr) {
    for (Part& part : parts_) EvaluatePart(part);
    if (ranks_ != nullptr) ExchangeWithRanks();
    for (Part& part : parts_) CommitPart(part);
  } else {
    workers_->Run([this](int i) {
      EvaluatePart(parts_[static_cast<size_t>(i)]);
      workers_->Barrier(i);
      if (ranks_ != nullptr) {
        if (i == 0) ExchangeWithRanks();
        workers_->Barrier(i);
      }
      CommitPart(parts_[static_cast<size_t>(i)]);
    });
  }
  MergeParts();
}

void Network::CommitPart(Part& part) { fabric_->Commit(part.lane, now_, part.active_flags.data()); }

Network::Counters Network::LocalCounters(int64_t next_cycle) const {
  Counters c = serial_;
  for (const Part& part : parts_) {
    c.Add(part.c);
    c.flits_ejected += fabric_->flits_ejected(part.lane);
    c.flit_hops += fabric_->flit_hops(part.lane);
    c.last_progress = std::max(c.last_progress, fabric_->last_move_cycle(part.lane));
  }
  c.flits_discarded = fabric_->flits_discarded();
  c.flits_copied = fabric_->flits_copied();
  c.scheduled = 0;
  c.next_creation = INT64_MAX;
  for (const Part& part : parts_) {
    if (part.schedule.empty()) continue;
    c.scheduled = 1;
    // The next cycle's earliest creation matters only when no node is active.
    if (!c.any_active) c.next_creation = std::min(c.next_creation, part.schedule.Next(next_cycle));
  }
  return c;
}

void Network::MergeParts() {
  if (ranks_ != nullptr) {
    MergeRanks();  // rank_exchange.cc: totals_ and deliveries of every rank
    return;
  }
  totals_ = LocalCounters(now_ + 1);
  for (const EventTag& t : serial_tags_) undeliverable_tags_.push_back(t.tag);
  if (parts_.size() == 1) {
    deliveries_.swap(parts_[0].deliveries);
    for (const NodeTag& t : parts_[0].tags) undeliverable_tags_.push_back(t.tag);
    return;
  }
  std::vector<NodeTag> tags;
  MergeByNode(&deliveries_, &tags);
  for (const NodeTag& t : tags) undeliverable_tags_.push_back(t.tag);
}

// The partitions' deliveries (and undeliverable tags) merged by node: each holds its
// nodes' in node order, and every node belongs to one partition.
void Network::MergeByNode(std::vector<Delivery>* deliveries, std::vector<NodeTag>* tags) {
  // Read positions per partition, in a member: no allocation per cycle.
  merge_pos_.assign(2 * parts_.size(), 0);
  size_t* di = merge_pos_.data();
  size_t* ti = di + parts_.size();
  for (;;) {
    size_t best = parts_.size();
    int32_t node = INT32_MAX;
    for (size_t p = 0; p < parts_.size(); ++p) {
      if (di[p] < parts_[p].deliveries.size() && parts_[p].deliveries[di[p]].dst < node) {
        node = parts_[p].deliveries[di[p]].dst;
        best = p;
      }
    }
    if (best == parts_.size()) break;
    deliveries->push_back(parts_[best].deliveries[di[best]++]);
  }
  for (;;) {
    size_t best = parts_.size();
    int32_t node = INT32_MAX;
    for (size_t p = 0; p < parts_.size(); ++p) {
      if (ti[p] < parts_[p].tags.size() && parts_[p].tags[ti[p]].node < node) {
        node = parts_[p].tags[ti[p]].node;
        best = p;
      }
    }
    if (best == parts_.size()) break;
    tags->push_back(parts_[best].tags[ti[best]++]);
  }
}

Status Network::DeadlockStatus(int64_t watchdog_cycles) const {
  std::string msg =
      std::to_string(flits_in_network()) + " flit(s) in the network and none moved for " +
      std::to_string(watchdog_cycles + PipelineCycles()) +
      " cycles (measure.watchdog_cycles = " + std::to_string(watchdog_cycles) + " plus the " +
      std::to_string(PipelineCycles()) + "-cycle link and hop pipeline), at cycle " +
      std::to_string(now_) + " on " + topology_->Describe() + " with routing '" +
      config_.routing.algorithm + "'; blocked channels:";
  for (const std::string& line : BlockedChannels(32)) msg += "\n  " + line;
  return Status::Deadlock(msg);
}

Status Network::CheckInvariants() const {
  const std::string err = fabric_->CheckInvariants();
  if (!err.empty()) return Status::Internal("cycle " + std::to_string(now_) + ": " + err);
  int64_t buffered = 0;
  for (const NodeRun& run : fabric_->local_routers()) {
    for (int r = run.begin; r < run.end; ++r) buffered += fabric_->buffered(r);
  }
  buffered = SumOverRanks(buffered);
  if (buffered != flits_in_network()) {
    return Status::Internal("cycle " + std::to_string(now_) +
                            ": flit conservation: " + std::to_string(flits_injected()) +
                            " injected - " + std::to_string(flits_ejected()) +
                            " ejected != " + std::to_string(buffered) + " buffered");
  }
  return Status::Ok();
}

}  // namespace ukai::sim
