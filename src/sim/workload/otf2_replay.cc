// Otf2Replay's driver: opening, the rank map, and the locations walking their events (the
// class: otf2_replay.h; point-to-point in otf2_p2p.cc, collectives in otf2_collective.cc,
// RMA and figures in otf2_rma.cc).
#include "sim/workload/otf2_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/rng.h"

namespace ukai::sim {
namespace {

constexpr uint64_t kRankMapStream = 0x4f544632;  // "OTF2": the random rank map's RNG stream

// Events whose preceding gap is waiting for the network, not compute.
bool Completes(Otf2EventKind k) {
  switch (k) {
    case Otf2EventKind::kRecv:
    case Otf2EventKind::kIrecv:
    case Otf2EventKind::kIsendComplete:
    case Otf2EventKind::kCollEnd:
    case Otf2EventKind::kRmaCollEnd:
    case Otf2EventKind::kRmaCompleteBlocking:
      return true;
    default:
      return false;
  }
}

// A message's WorkMessage::user: its carrier in the low 3 bits, the carrier's index above.
uint64_t Pack(uint8_t carrier, uint64_t index) { return (index << 3) | carrier; }

}  // namespace

size_t Otf2Replay::MatchKeyHash::operator()(const MatchKey& k) const {
  uint64_t h = k.comm * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<uint64_t>(static_cast<uint32_t>(k.src)) << 32 | static_cast<uint32_t>(k.dst)) +
       0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= k.tag * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
  return static_cast<size_t>(h);
}

Otf2Replay::~Otf2Replay() = default;

Result<std::unique_ptr<Otf2Replay>> Otf2Replay::Open(const SimConfig& config,
                                                     const Topology& topology, double clock_mhz) {
  std::unique_ptr<Otf2Replay> r(new Otf2Replay());
  UKAI_RETURN_IF_ERROR(r->Init(config, topology, clock_mhz));
  return r;
}

// workload.rank_map: rank -> network node.
Result<std::vector<int>> Otf2Replay::MapRanks(const SimConfig& config,
                                              const Topology& topology) const {
  const int n = archive_->ranks();
  const int nodes = topology.NumNodes();
  if (config_.rank_map == NodeMapKind::kList) {
    if (static_cast<int>(config_.rank_list.size()) < n) {
      return Status::InvalidArgument(
                 fmt::format("workload.rank_map: lists {} nodes but the archive {} has {} ranks",
                             config_.rank_list.size(), config_.file, n))
          .WithKey("workload.rank_map");
    }
    for (size_t i = 0; i < config_.rank_list.size(); ++i) {
      if (config_.rank_list[i] >= nodes) {
        return Status::InvalidArgument(
                   fmt::format(
                       "workload.rank_map: item {} is node {}, but the network has nodes 0..{}", i,
                       config_.rank_list[i], nodes - 1))
            .WithKey("workload.rank_map");
      }
    }
    return std::vector<int>(config_.rank_list.begin(), config_.rank_list.begin() + n);
  }
  if (n > nodes) {
    return Status::InvalidArgument(
               fmt::format("workload.file: the archive {} has {} ranks but the network has only {} "
                           "nodes (use a larger network)",
                           config_.file, n, nodes))
        .WithKey("workload.file");
  }
  std::vector<int> all(static_cast<size_t>(nodes));
  std::iota(all.begin(), all.end(), 0);
  if (config_.rank_map == NodeMapKind::kRandom) {  // Fisher-Yates with the run's seed
    Rng rng = Rng::Stream(config.seed, kRankMapStream);
    for (int i = nodes - 1; i > 0; --i) {
      std::swap(all[static_cast<size_t>(i)], all[rng.Uniform(static_cast<uint64_t>(i) + 1)]);
    }
  }
  all.resize(static_cast<size_t>(n));
  return all;
}

Status Otf2Replay::Init(const SimConfig& config, const Topology& topology, double clock_mhz) {
  config_ = config.workload;
  clock_mhz_ = clock_mhz;
  Result<std::unique_ptr<Otf2Archive>> a = Otf2Archive::Open(config_.file);
  if (!a.ok())
    return Status(a.status().code(), "workload.file: " + a.status().message())
        .WithKey("workload.file");
  archive_ = std::move(*a);
  cycles_per_tick_ = clock_mhz * 1e6 / static_cast<double>(archive_->timer_resolution());
  Result<std::vector<int>> nodes = MapRanks(config, topology);
  if (!nodes.ok()) return nodes.status();
  node_of_rank_ = std::move(*nodes);
  coll_seq_.resize(node_of_rank_.size());
  locs_.resize(static_cast<size_t>(archive_->locations()));
  queued_.assign(locs_.size(), 0);
  locations_of_rank_.resize(node_of_rank_.size());
  for (int i = 0; i < locations(); ++i) {
    Location& l = locs_[static_cast<size_t>(i)];
    l.rank = archive_->rank_of(i);
    l.last_ts = archive_->global_offset();
    locations_of_rank_[static_cast<size_t>(l.rank)].push_back(i);
  }
  several_locations_.resize(node_of_rank_.size());
  for (size_t r = 0; r < node_of_rank_.size(); ++r) {
    several_locations_[r] = locations_of_rank_[r].size() > 1 ? 1 : 0;
  }
  deferred_.resize(node_of_rank_.size());
  return Status::Ok();
}

int64_t Otf2Replay::Cycles(uint64_t ticks) const {
  return static_cast<int64_t>(static_cast<long double>(ticks) * cycles_per_tick_ + 0.5L);
}

void Otf2Replay::Fail(Status st) {
  if (status_.ok()) status_ = std::move(st);
}

std::string Otf2Replay::Where(int loc) const {
  const Location& l = locs_[static_cast<size_t>(loc)];
  return fmt::format("{}: location {} (rank {}), event {}", config_.file,
                     archive_->location_ref(loc), l.rank, l.events);
}

int64_t Otf2Replay::finish_cycle(int rank) const {
  int64_t finish = 0;
  for (const Location& l : locs_) {
    if (l.rank != rank) continue;
    if (l.finish < 0) return -1;
    finish = std::max(finish, l.finish);
  }
  return finish;
}

// ---- The driver ---------------------------------------------------------------------------

Status Otf2Replay::Advance(int64_t now, Workload* workload) {
  workload_ = workload;
  now_ = now;
  if (!started_) {
    started_ = true;
    for (int i = 0; i < locations(); ++i) Wake(i);
  }
  while (!paused_.empty() && paused_.top().first <= now) {
    const int i = paused_.top().second;
    paused_.pop();
    if (locs_[static_cast<size_t>(i)].wait == Wait::kPaused) {
      locs_[static_cast<size_t>(i)].wait = Wait::kNone;
      Wake(i);
    }
  }
  Drain();
  return status_;
}

int64_t Otf2Replay::NextCycle() const {
  if (!started_) return 0;
  if (!status_.ok()) return now_;  // Advance reports it
  return paused_.empty() ? MessageSource::kNever : paused_.top().first;
}

bool Otf2Replay::Finished() const { return started_ && finished_locs_ == locations(); }

void Otf2Replay::Wake(int loc) {
  if (queued_[static_cast<size_t>(loc)]) return;
  queued_[static_cast<size_t>(loc)] = 1;
  runnable_.push_back(loc);
}

// Runs woken locations until none can go on (a location's events may wake others).
void Otf2Replay::Drain() {
  if (draining_) return;
  draining_ = true;
  while (!runnable_.empty() && status_.ok()) {
    const int i = runnable_.front();
    runnable_.pop_front();
    queued_[static_cast<size_t>(i)] = 0;
    RunLocation(i);
  }
  draining_ = false;
}

// Walks the location until it waits; then receives of its rank that waited for it to walk
// on may match.
void Otf2Replay::RunLocation(int loc) {
  WalkLocation(loc);
  const int rank = locs_[static_cast<size_t>(loc)].rank;
  if (several_locations_[static_cast<size_t>(rank)]) RecheckDeferred(rank);
}

void Otf2Replay::WalkLocation(int loc) {
  Location& l = locs_[static_cast<size_t>(loc)];
  while (l.wait == Wait::kNone && status_.ok()) {
    if (l.time > now_ + kRunAheadCycles) {  // far ahead of the network: wait for its clock
      l.wait = Wait::kPaused;
      paused_.emplace(l.time - kRunAheadCycles, loc);
      return;
    }
    Result<const Otf2Event*> next = archive_->Peek(loc, 0);
    if (!next.ok()) {
      Fail(next.status());
      return;
    }
    if (*next == nullptr) {  // the end of its events
      l.wait = Wait::kDone;
      l.finish = l.time;
      ++finished_locs_;
      return;
    }
    const Otf2Event e = **next;
    archive_->Pop(loc);
    ++l.events;
    Status st = Step(loc, e);
    if (!st.ok()) Fail(std::move(st));
  }
}

void Otf2Replay::CountTime(Location& l, const Otf2Event& e) {
  if (config_.compute == ComputeMode::kTrace && e.time > l.last_ts && l.mpi_depth == 0 &&
      !Completes(e.kind)) {
    const int64_t c = Cycles(e.time - l.last_ts);
    l.time += c;
    l.compute += c;
  }
  l.last_ts = std::max(l.last_ts, e.time);
}

Status Otf2Replay::Step(int loc, const Otf2Event& e) {
  Location& l = locs_[static_cast<size_t>(loc)];
  CountTime(l, e);
  switch (e.kind) {
    case Otf2EventKind::kEnter:
      l.mpi_depth += archive_->IsMpiRegion(e.comm) ? 1 : 0;
      return Status::Ok();
    case Otf2EventKind::kLeave:
      if (archive_->IsMpiRegion(e.comm) && l.mpi_depth > 0) --l.mpi_depth;
      return Status::Ok();
    case Otf2EventKind::kSend:
    case Otf2EventKind::kIsend:
      return PostSend(loc, e, e.kind == Otf2EventKind::kSend);
    case Otf2EventKind::kRecv: {
      const int32_t q = NewRequest(loc, false);
      UKAI_RETURN_IF_ERROR(PostRecv(loc, e.comm, e.peer, e.tag, q, e.time));
      BlockOn(loc, q);
      return Status::Ok();
    }
    case Otf2EventKind::kIrecvRequest:
      return IrecvRequest(loc, e);
    case Otf2EventKind::kIrecv:
      return Irecv(loc, e);
    case Otf2EventKind::kIsendComplete: {
      auto it = l.requests.find(e.request);
      if (it == l.requests.end()) {
        ++anomalies_["MpiIsendComplete of a request without MpiIsend"];
        return Status::Ok();
      }
      const int32_t q = it->second;
      l.requests.erase(it);
      BlockOn(loc, q);
      return Status::Ok();
    }
    case Otf2EventKind::kRequestTest:
      return Status::Ok();
    case Otf2EventKind::kRequestCancelled:
      Cancel(loc, e.request);
      return Status::Ok();
    case Otf2EventKind::kCollBegin:
    case Otf2EventKind::kRmaCollBegin:
      return Collective(loc, e, e.kind == Otf2EventKind::kRmaCollBegin);
    case Otf2EventKind::kCollEnd:
    case Otf2EventKind::kRmaCollEnd:
      if (l.skip_ends > 0) {
        --l.skip_ends;
        return Status::Ok();
      }
      return Collective(loc, e, e.kind == Otf2EventKind::kRmaCollEnd);  // no Begin recorded
    case Otf2EventKind::kRmaPut:
    case Otf2EventKind::kRmaGet:
    case Otf2EventKind::kRmaAtomic:
      return Rma(loc, e);
    case Otf2EventKind::kRmaCompleteBlocking:
      return RmaComplete(loc, e, true);
    case Otf2EventKind::kRmaCompleteNonBlocking:
    case Otf2EventKind::kRmaCompleteRemote:
      return RmaComplete(loc, e, false);
    case Otf2EventKind::kBufferFlush:
      l.last_ts = std::max(l.last_ts, e.request);  // the tracer's time, not the program's
      return Status::Ok();
    case Otf2EventKind::kRmaWinCreate:
    case Otf2EventKind::kRmaWinDestroy:
    case Otf2EventKind::kTimeOnly:
      return Status::Ok();
    case Otf2EventKind::kUnmodelled:
      ++unmodelled_[std::string(Otf2EventNames()[e.name])];
      return Status::Ok();
  }
  return Status::Ok();
}

Result<int> Otf2Replay::WorldRank(int loc, uint64_t comm, uint32_t peer, const char* what) const {
  const Otf2Comm* c = archive_->FindComm(comm);
  if (c == nullptr) {
    return Status::ParseError(fmt::format(
        "{}: {} on communicator {}, which the archive does not define", Where(loc), what, comm));
  }
  if (c->self) return locs_[static_cast<size_t>(loc)].rank;
  if (peer >= c->members.size()) {
    return Status::ParseError(fmt::format("{}: {} names rank {} of communicator '{}', which has {}",
                                          Where(loc), what, peer, c->name, c->members.size()));
  }
  return c->members[peer];
}

void Otf2Replay::Resume(int loc, int64_t time) {
  Location& l = locs_[static_cast<size_t>(loc)];
  l.time = std::max(l.time, time);
  l.wait = Wait::kNone;
  l.wait_on = -1;
  Wake(loc);
}

WorkMessageId Otf2Replay::Send(Carrier c, uint64_t index, int src_rank, int dst_rank, int64_t bytes,
                               int64_t earliest) {
  WorkMessage m;
  m.src = node_of_rank_[static_cast<size_t>(src_rank)];
  m.dst = node_of_rank_[static_cast<size_t>(dst_rank)];
  m.bytes = bytes > 0 ? bytes : config_.control_bytes;
  m.earliest = earliest;
  m.klass = static_cast<int32_t>(c);
  m.user = Pack(static_cast<uint8_t>(c), index);
  return workload_->Add(this, m);
}

void Otf2Replay::Delivered(WorkMessageId, const WorkMessage& m, int64_t cycle, Workload* w) {
  workload_ = w;
  now_ = std::max(now_, cycle);
  const Carrier c = static_cast<Carrier>(m.user & 7);
  const uint64_t index = m.user >> 3;
  switch (c) {
    case Carrier::kData:
    case Carrier::kRts:
      TransferDelivered(c, static_cast<int32_t>(index), cycle);
      break;
    case Carrier::kColl:
      CollDelivered(static_cast<int32_t>(index >> 29),
                    static_cast<int32_t>(index & ((uint64_t{1} << 29) - 1)), cycle);
      break;
    case Carrier::kRmaFirst:
    case Carrier::kRmaReply:
      RmaDelivered(c, static_cast<int32_t>(index), cycle);
      break;
  }
  Drain();
}

void Otf2Replay::Lost(WorkMessageId, const WorkMessage&, int64_t, Workload*) {
  ++lost_;  // whoever waits for it never goes on: the run ends as stuck and says so
}

}  // namespace ukai::sim
