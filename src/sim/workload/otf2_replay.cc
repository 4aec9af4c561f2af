#include "sim/workload/otf2_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/rng.h"

namespace ukai::sim {
namespace {

constexpr uint64_t kRankMapStream = 0x4f544632;  // "OTF2": the random rank map's RNG stream

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

Status Otf2Replay::Init(const SimConfig& config, const Topology& topology, double clock_mhz) {
  config_ = config.workload;
  clock_mhz_ = clock_mhz;
  Result<std::unique_ptr<Otf2Archive>> a = Otf2Archive::Open(config_.file);
  if (!a.ok()) return Status(a.status().code(), "workload.file: " + a.status().message());
  archive_ = std::move(*a);
  cycles_per_tick_ = clock_mhz * 1e6 / static_cast<double>(archive_->timer_resolution());
  const int n = archive_->ranks();
  const int nodes = topology.NumNodes();
  std::vector<int> node_of;
  switch (config_.rank_map) {
    case NodeMapKind::kList:
      if (static_cast<int>(config_.rank_list.size()) < n) {
        return Status::InvalidArgument(
            fmt::format("workload.rank_map: lists {} nodes but the archive {} has {} ranks",
                        config_.rank_list.size(), config_.file, n));
      }
      for (size_t i = 0; i < config_.rank_list.size(); ++i) {
        if (config_.rank_list[i] >= nodes) {
          return Status::InvalidArgument(
              fmt::format("workload.rank_map: item {} is node {}, but the network has nodes 0..{}",
                          i, config_.rank_list[i], nodes - 1));
        }
      }
      node_of.assign(config_.rank_list.begin(), config_.rank_list.begin() + n);
      break;
    default: {
      if (n > nodes) {
        return Status::InvalidArgument(fmt::format(
            "workload.file: the archive {} has {} ranks but the network has only {} nodes (use "
            "a larger network)",
            config_.file, n, nodes));
      }
      std::vector<int> all(static_cast<size_t>(nodes));
      std::iota(all.begin(), all.end(), 0);
      if (config_.rank_map == NodeMapKind::kRandom) {  // Fisher-Yates with the run's seed
        Rng rng = Rng::Stream(config.seed, kRankMapStream);
        for (int i = nodes - 1; i > 0; --i) {
          std::swap(all[static_cast<size_t>(i)], all[rng.Uniform(static_cast<uint64_t>(i) + 1)]);
        }
      }
      node_of.assign(all.begin(), all.begin() + n);
    }
  }
  ranks_.resize(static_cast<size_t>(n));
  queued_.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    ranks_[static_cast<size_t>(i)].node = node_of[static_cast<size_t>(i)];
    ranks_[static_cast<size_t>(i)].last_ts = archive_->global_offset();
  }
  return Status::Ok();
}

int64_t Otf2Replay::Cycles(uint64_t ticks) const {
  return static_cast<int64_t>(static_cast<long double>(ticks) * cycles_per_tick_ + 0.5L);
}

void Otf2Replay::Fail(Status st) {
  if (status_.ok()) status_ = std::move(st);
}

// ---- The driver ---------------------------------------------------------------------------

Status Otf2Replay::Advance(int64_t now, Workload* workload) {
  workload_ = workload;
  now_ = now;
  if (!started_) {
    started_ = true;
    for (int r = 0; r < ranks(); ++r) Wake(r);
  }
  while (!paused_.empty() && paused_.top().first <= now) {
    const int r = paused_.top().second;
    paused_.pop();
    if (ranks_[static_cast<size_t>(r)].wait == Wait::kPaused) {
      ranks_[static_cast<size_t>(r)].wait = Wait::kNone;
      Wake(r);
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

bool Otf2Replay::Finished() const { return started_ && finished_ranks_ == ranks(); }

void Otf2Replay::Wake(int rank) {
  if (queued_[static_cast<size_t>(rank)]) return;
  queued_[static_cast<size_t>(rank)] = 1;
  runnable_.push_back(rank);
}

// Runs woken ranks until none can go on (a rank's events may wake others).
void Otf2Replay::Drain() {
  if (draining_) return;
  draining_ = true;
  while (!runnable_.empty() && status_.ok()) {
    const int r = runnable_.front();
    runnable_.pop_front();
    queued_[static_cast<size_t>(r)] = 0;
    RunRank(r);
  }
  draining_ = false;
}

void Otf2Replay::RunRank(int rank) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  while (r.wait == Wait::kNone && status_.ok()) {
    if (r.time > now_ + kRunAheadCycles) {  // far ahead of the network: wait for its clock
      r.wait = Wait::kPaused;
      paused_.emplace(r.time - kRunAheadCycles, rank);
      return;
    }
    Result<const Otf2Event*> next = archive_->Peek(rank, 0);
    if (!next.ok()) {
      Fail(next.status());
      return;
    }
    if (*next == nullptr) {  // the end of its events
      r.wait = Wait::kDone;
      r.finish = r.time;
      ++finished_ranks_;
      return;
    }
    const Otf2Event e = **next;
    archive_->Pop(rank);
    ++r.events;
    Status st = Step(rank, e);
    if (!st.ok()) Fail(std::move(st));
  }
}

void Otf2Replay::CountTime(Rank& r, const Otf2Event& e) {
  if (config_.compute == ComputeMode::kTrace && e.time > r.last_ts && r.mpi_depth == 0 &&
      !Completes(e.kind)) {
    const int64_t c = Cycles(e.time - r.last_ts);
    r.time += c;
    r.compute += c;
  }
  r.last_ts = std::max(r.last_ts, e.time);
}

Status Otf2Replay::Step(int rank, Otf2Event e) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  CountTime(r, e);
  switch (e.kind) {
    case Otf2EventKind::kEnter:
      r.mpi_depth += archive_->IsMpiRegion(e.comm) ? 1 : 0;
      return Status::Ok();
    case Otf2EventKind::kLeave:
      if (archive_->IsMpiRegion(e.comm) && r.mpi_depth > 0) --r.mpi_depth;
      return Status::Ok();
    case Otf2EventKind::kSend:
    case Otf2EventKind::kIsend:
      return PostSend(rank, e, e.kind == Otf2EventKind::kSend);
    case Otf2EventKind::kRecv: {
      const int32_t q = NewRequest(rank, false);
      UKAI_RETURN_IF_ERROR(PostRecv(rank, e.comm, e.peer, e.tag, q));
      BlockOn(rank, q);
      return Status::Ok();
    }
    case Otf2EventKind::kIrecvRequest:
      return IrecvRequest(rank, e);
    case Otf2EventKind::kIrecv: {
      auto it = r.requests.find(e.request);
      int32_t q;
      if (it != r.requests.end()) {
        q = it->second;
        r.requests.erase(it);
      } else {  // no MpiIrecvRequest recorded: posted now
        q = NewRequest(rank, false);
        UKAI_RETURN_IF_ERROR(PostRecv(rank, e.comm, e.peer, e.tag, q));
      }
      BlockOn(rank, q);
      return Status::Ok();
    }
    case Otf2EventKind::kIsendComplete: {
      auto it = r.requests.find(e.request);
      if (it == r.requests.end()) {
        ++anomalies_["MpiIsendComplete of a request without MpiIsend"];
        return Status::Ok();
      }
      const int32_t q = it->second;
      r.requests.erase(it);
      BlockOn(rank, q);
      return Status::Ok();
    }
    case Otf2EventKind::kRequestTest:
      return Status::Ok();
    case Otf2EventKind::kRequestCancelled: {
      auto it = r.requests.find(e.request);
      if (it == r.requests.end()) return Status::Ok();
      Request& q = requests_[static_cast<size_t>(it->second)];
      if (!q.is_send && q.transfer < 0) {  // an unmatched receive: withdrawn
        Queues& qs = queues_[q.key];
        qs.recvs.erase(std::remove(qs.recvs.begin(), qs.recvs.end(), it->second), qs.recvs.end());
        if (qs.recvs.empty() && qs.sends.empty()) queues_.erase(q.key);
        FreeRequest(it->second);
        r.requests.erase(it);
      }
      return Status::Ok();
    }
    case Otf2EventKind::kCollBegin:
    case Otf2EventKind::kRmaCollBegin:
      return Collective(rank, e, e.kind == Otf2EventKind::kRmaCollBegin);
    case Otf2EventKind::kCollEnd:
    case Otf2EventKind::kRmaCollEnd:
      if (r.skip_ends > 0) {
        --r.skip_ends;
        return Status::Ok();
      }
      return Collective(rank, e, e.kind == Otf2EventKind::kRmaCollEnd);  // no Begin recorded
    case Otf2EventKind::kRmaPut:
    case Otf2EventKind::kRmaGet:
    case Otf2EventKind::kRmaAtomic:
      return Rma(rank, e);
    case Otf2EventKind::kRmaCompleteBlocking:
      return RmaComplete(rank, e, true);
    case Otf2EventKind::kRmaCompleteNonBlocking:
    case Otf2EventKind::kRmaCompleteRemote:
      return RmaComplete(rank, e, false);
    case Otf2EventKind::kBufferFlush:
      r.last_ts = std::max(r.last_ts, e.request);  // the tracer's time, not the program's
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

Result<int> Otf2Replay::WorldRank(int rank, uint64_t comm, uint32_t peer, const char* what) const {
  const Otf2Comm* c = archive_->FindComm(comm);
  if (c == nullptr) {
    return Status::ParseError(
        fmt::format("{}: rank {}: {} on communicator {}, which the archive "
                    "does not define (event {})",
                    config_.file, rank, what, comm, ranks_[static_cast<size_t>(rank)].events));
  }
  if (c->self) return rank;
  if (peer >= c->members.size()) {
    return Status::ParseError(
        fmt::format("{}: rank {}: {} names rank {} of communicator '{}', "
                    "which has {} (event {})",
                    config_.file, rank, what, peer, c->name, c->members.size(),
                    ranks_[static_cast<size_t>(rank)].events));
  }
  return c->members[peer];
}

void Otf2Replay::Resume(int rank, int64_t time) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  r.time = std::max(r.time, time);
  r.wait = Wait::kNone;
  r.wait_on = -1;
  Wake(rank);
}

WorkMessageId Otf2Replay::Send(Carrier c, uint64_t index, int src_rank, int dst_rank, int64_t bytes,
                               int64_t earliest) {
  WorkMessage m;
  m.src = ranks_[static_cast<size_t>(src_rank)].node;
  m.dst = ranks_[static_cast<size_t>(dst_rank)].node;
  m.bytes = bytes > 0 ? bytes : config_.control_bytes;
  m.earliest = earliest;
  m.klass = static_cast<int32_t>(c);
  m.user = Pack(static_cast<uint8_t>(c), index);
  return workload_->Add(this, m);
}

void Otf2Replay::Delivered(WorkMessageId, const WorkMessage& m, int64_t cycle, Workload* w) {
  workload_ = w;
  now_ = cycle;
  const Carrier c = static_cast<Carrier>(m.user & 7);
  const uint64_t index = m.user >> 3;
  switch (c) {
    case Carrier::kData:
    case Carrier::kRts:
      TransferDelivered(c, static_cast<int32_t>(index), cycle);
      break;
    case Carrier::kColl:
      CollDelivered(static_cast<int32_t>(index >> 29),
                    static_cast<int32_t>(index & ((1u << 29) - 1)), cycle);
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

// ---- Point-to-point -----------------------------------------------------------------------

int32_t Otf2Replay::NewRequest(int owner, bool is_send) {
  int32_t i;
  if (!free_requests_.empty()) {
    i = free_requests_.back();
    free_requests_.pop_back();
  } else {
    i = static_cast<int32_t>(requests_.size());
    requests_.emplace_back();
  }
  Request& q = requests_[static_cast<size_t>(i)];
  q = Request();
  q.live = true;
  q.owner = owner;
  q.is_send = is_send;
  return i;
}

void Otf2Replay::FreeRequest(int32_t request) {
  Request& q = requests_[static_cast<size_t>(request)];
  if (q.transfer >= 0) {  // the transfer no longer reports to it
    Transfer& t = transfers_[static_cast<size_t>(q.transfer)];
    (q.is_send ? t.send_req : t.recv_req) = -1;
    const int32_t tr = q.transfer;
    q.live = false;
    free_requests_.push_back(request);
    MaybeFreeTransfer(tr);
    return;
  }
  q.live = false;
  free_requests_.push_back(request);
}

// Blocks `rank` until `request` completes (at once when it already has); then frees it.
void Otf2Replay::BlockOn(int rank, int32_t request) {
  Request& q = requests_[static_cast<size_t>(request)];
  Rank& r = ranks_[static_cast<size_t>(rank)];
  if (q.complete) {
    r.time = std::max(r.time, q.done);
    FreeRequest(request);
    return;
  }
  r.wait = Wait::kRequest;
  r.wait_on = request;
}

void Otf2Replay::CompleteRequest(int32_t request, int64_t time) {
  if (request < 0) return;
  Request& q = requests_[static_cast<size_t>(request)];
  q.complete = true;
  q.done = time;
  Rank& owner = ranks_[static_cast<size_t>(q.owner)];
  if (owner.wait == Wait::kRequest && owner.wait_on == request) {
    FreeRequest(request);
    Resume(q.owner, time);
  }
}

Status Otf2Replay::PostSend(int rank, const Otf2Event& e, bool blocking) {
  Result<int> dst = WorldRank(rank, e.comm, e.peer, "a send");
  if (!dst.ok()) return dst.status();
  Rank& r = ranks_[static_cast<size_t>(rank)];
  int32_t ti;
  if (!free_transfers_.empty()) {
    ti = free_transfers_.back();
    free_transfers_.pop_back();
  } else {
    ti = static_cast<int32_t>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& t = transfers_[static_cast<size_t>(ti)];
  t = Transfer();
  t.live = true;
  t.src = rank;
  t.dst = *dst;
  t.bytes = static_cast<int64_t>(e.bytes);
  t.rendezvous = t.bytes > config_.eager_bytes;
  ++p2p_;
  const int32_t q = NewRequest(rank, true);
  t.send_req = q;
  requests_[static_cast<size_t>(q)].transfer = ti;
  if (t.rendezvous) {
    Send(Carrier::kRts, static_cast<uint64_t>(ti), rank, t.dst, 0, r.time);
  } else {
    transfers_[static_cast<size_t>(ti)].data_added = true;
    Send(Carrier::kData, static_cast<uint64_t>(ti), rank, t.dst, t.bytes, r.time);
    requests_[static_cast<size_t>(q)].complete = true;  // eager: the buffer is free at once
    requests_[static_cast<size_t>(q)].done = r.time;
  }
  const MatchKey key{e.comm, rank, *dst, e.tag};
  Queues& qs = queues_[key];
  if (!qs.recvs.empty()) {
    const int32_t recv = qs.recvs.front();
    qs.recvs.pop_front();
    if (qs.recvs.empty() && qs.sends.empty()) queues_.erase(key);
    Match(ti, recv);
  } else {
    qs.sends.push_back(ti);
  }
  if (blocking) {
    BlockOn(rank, q);
  } else {
    r.requests[e.request] = q;
  }
  return Status::Ok();
}

Status Otf2Replay::PostRecv(int rank, uint64_t comm, uint32_t peer, uint32_t tag, int32_t request) {
  Result<int> src = WorldRank(rank, comm, peer, "a receive");
  if (!src.ok()) return src.status();
  Request& q = requests_[static_cast<size_t>(request)];
  q.posted = ranks_[static_cast<size_t>(rank)].time;
  q.key = MatchKey{comm, *src, rank, tag};
  const MatchKey key = q.key;
  Queues& qs = queues_[key];
  if (!qs.sends.empty()) {
    const int32_t t = qs.sends.front();
    qs.sends.pop_front();
    if (qs.recvs.empty() && qs.sends.empty()) queues_.erase(key);
    Match(t, request);
  } else {
    qs.recvs.push_back(request);
  }
  return Status::Ok();
}

// An MpiIrecvRequest: its source, tag and communicator are in the MpiIrecv that completes
// it, read ahead; posted now with them.
Status Otf2Replay::IrecvRequest(int rank, const Otf2Event& e) {
  for (size_t ahead = 0; ahead < kMaxLookAhead; ++ahead) {
    Result<const Otf2Event*> next = archive_->Peek(rank, ahead);
    if (!next.ok()) return next.status();
    if (*next == nullptr) break;
    const Otf2Event& f = **next;
    if (f.request != e.request) continue;
    if (f.kind == Otf2EventKind::kIrecv) {
      const int32_t q = NewRequest(rank, false);
      ranks_[static_cast<size_t>(rank)].requests[e.request] = q;
      return PostRecv(rank, f.comm, f.peer, f.tag, q);
    }
    if (f.kind == Otf2EventKind::kRequestCancelled) return Status::Ok();  // never received
  }
  ++anomalies_["MpiIrecvRequest without its MpiIrecv"];
  return Status::Ok();
}

void Otf2Replay::Match(int32_t transfer, int32_t request) {
  Transfer& t = transfers_[static_cast<size_t>(transfer)];
  Request& q = requests_[static_cast<size_t>(request)];
  t.recv_req = request;
  t.posted = q.posted;
  q.transfer = transfer;
  if (keep_matches_) matches_.push_back({t.src, t.dst, q.key.tag, t.bytes, q.posted});
  if (t.rendezvous && t.rts_done && !t.data_added) StartData(transfer);
  if (t.data_done) CompleteRequest(request, std::max(t.data_time, t.posted));
}

// A rendezvous send's data: when its request has arrived and the receive is posted.
void Otf2Replay::StartData(int32_t transfer) {
  Transfer& t = transfers_[static_cast<size_t>(transfer)];
  t.data_added = true;
  Send(Carrier::kData, static_cast<uint64_t>(transfer), t.src, t.dst, t.bytes,
       std::max(t.rts_time, t.posted));
}

void Otf2Replay::TransferDelivered(Carrier c, int32_t transfer, int64_t cycle) {
  Transfer& t = transfers_[static_cast<size_t>(transfer)];
  if (c == Carrier::kRts) {
    t.rts_done = true;
    t.rts_time = cycle;
    if (t.recv_req >= 0 || t.posted >= 0) StartData(transfer);
    return;
  }
  t.data_done = true;
  t.data_time = cycle;
  const int32_t send = t.send_req, recv = t.recv_req;
  const int64_t posted = t.posted;
  if (t.rendezvous) CompleteRequest(send, cycle);
  if (recv >= 0) CompleteRequest(recv, std::max(cycle, posted));
  MaybeFreeTransfer(transfer);
}

// A transfer is done when its data was delivered and both ends have let go of it.
void Otf2Replay::MaybeFreeTransfer(int32_t transfer) {
  Transfer& t = transfers_[static_cast<size_t>(transfer)];
  if (!t.live || !t.data_done) return;
  const bool send_open = t.send_req >= 0 && !requests_[static_cast<size_t>(t.send_req)].complete;
  const bool recv_open =
      t.posted < 0 || (t.recv_req >= 0 && !requests_[static_cast<size_t>(t.recv_req)].complete);
  if (send_open || recv_open) return;
  if (t.send_req >= 0) requests_[static_cast<size_t>(t.send_req)].transfer = -1;
  if (t.recv_req >= 0) requests_[static_cast<size_t>(t.recv_req)].transfer = -1;
  t.live = false;
  free_transfers_.push_back(transfer);
}

}  // namespace ukai::sim
