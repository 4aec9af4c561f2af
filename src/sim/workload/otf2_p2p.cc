// Otf2Replay's point-to-point messages: sends and receives matched in MPI order, eager and
// rendezvous transfers, requests (the class: otf2_replay.h).
#include <fmt/format.h>

#include <algorithm>

#include "sim/workload/otf2_replay.h"
#include "sim/workload/slot_pool.h"

namespace ukai::sim {

int32_t Otf2Replay::NewRequest(int owner, bool is_send) {
  const int32_t i = TakeSlot(&requests_, &free_requests_);
  Request& q = requests_[static_cast<size_t>(i)];
  q = Request();
  q.live = true;
  q.owner = owner;
  q.is_send = is_send;
  return i;
}

void Otf2Replay::FreeRequest(int32_t request) {
  Request& q = requests_[static_cast<size_t>(request)];
  const int32_t transfer = q.transfer;
  q.live = false;
  q.transfer = -1;
  free_requests_.push_back(request);
  if (transfer >= 0) {  // the transfer no longer reports to it
    Transfer& t = transfers_[static_cast<size_t>(transfer)];
    (q.is_send ? t.send_req : t.recv_req) = -1;
    MaybeFreeTransfer(transfer);
  }
}

// Blocks `loc` until `request` completes (at once when it already has); then frees it.
void Otf2Replay::BlockOn(int loc, int32_t request) {
  Request& q = requests_[static_cast<size_t>(request)];
  Location& l = locs_[static_cast<size_t>(loc)];
  if (q.complete) {
    l.time = std::max(l.time, q.done);
    FreeRequest(request);
    return;
  }
  l.wait = Wait::kRequest;
  l.wait_on = request;
}

void Otf2Replay::CompleteRequest(int32_t request, int64_t time) {
  if (request < 0) return;
  Request& q = requests_[static_cast<size_t>(request)];
  q.complete = true;
  q.done = time;
  const int owner = q.owner;
  const Location& l = locs_[static_cast<size_t>(owner)];
  if (l.wait == Wait::kRequest && l.wait_on == request) {
    FreeRequest(request);
    Resume(owner, time);
  }
}

Status Otf2Replay::PostSend(int loc, const Otf2Event& e, bool blocking) {
  Result<int> dst = WorldRank(loc, e.comm, e.peer, "a send");
  if (!dst.ok()) return dst.status();
  Location& l = locs_[static_cast<size_t>(loc)];
  const int32_t ti = TakeSlot(&transfers_, &free_transfers_);
  const int32_t q = NewRequest(loc, true);
  Transfer& t = transfers_[static_cast<size_t>(ti)];
  t = Transfer();
  t.live = true;
  t.src = l.rank;
  t.dst = *dst;
  t.bytes = static_cast<int64_t>(e.bytes);
  t.rendezvous = t.bytes > config_.eager_bytes;
  t.send_req = q;
  requests_[static_cast<size_t>(q)].transfer = ti;
  ++p2p_;
  if (t.rendezvous) {
    Send(Carrier::kRts, static_cast<uint64_t>(ti), t.src, t.dst, 0, l.time);
  } else {
    t.data_added = true;
    Send(Carrier::kData, static_cast<uint64_t>(ti), t.src, t.dst, t.bytes, l.time);
    requests_[static_cast<size_t>(q)].complete = true;  // eager: the buffer is free at once
    requests_[static_cast<size_t>(q)].done = l.time;
  }
  t.sent = l.time;
  const MatchKey key{e.comm, l.rank, *dst, e.tag};
  Queues& qs = queues_[key];
  // In the order of the senders' clocks (several locations of a rank may send).
  auto at = qs.sends.end();
  while (at != qs.sends.begin() && transfers_[static_cast<size_t>(*(at - 1))].sent > t.sent) --at;
  qs.sends.insert(at, ti);
  MatchQueued(key);
  if (blocking) {
    BlockOn(loc, q);
  } else {
    auto [it, fresh] = l.requests.emplace(e.request, q);
    if (!fresh) {  // the trace reuses an id still open: the older request is forgotten
      ++anomalies_["MpiIsend with a request id still in use"];
      FreeRequest(it->second);
      it->second = q;
    }
  }
  return Status::Ok();
}

Status Otf2Replay::PostRecv(int loc, uint64_t comm, uint32_t peer, uint32_t tag, int32_t request,
                            uint64_t trace_time) {
  Result<int> src = WorldRank(loc, comm, peer, "a receive");
  if (!src.ok()) return src.status();
  const Location& l = locs_[static_cast<size_t>(loc)];
  Request& q = requests_[static_cast<size_t>(request)];
  q.posted = l.time;
  q.trace_posted = trace_time;
  q.key = MatchKey{comm, *src, l.rank, tag};
  const MatchKey key = q.key;
  Queues& qs = queues_[key];
  // In post order: by the trace's clock where the rank has several locations (the replay
  // walks them one after the other, and their replayed clocks drift apart), else by the
  // location's clock (the same order).
  const bool by_trace = several_locations_[static_cast<size_t>(l.rank)] != 0;
  auto later = [&](int32_t other) {
    const Request& o = requests_[static_cast<size_t>(other)];
    return by_trace ? o.trace_posted > q.trace_posted : o.posted > q.posted;
  };
  auto at = qs.recvs.end();
  while (at != qs.recvs.begin() && later(*(at - 1))) --at;
  qs.recvs.insert(at, request);
  MatchQueued(key);
  return Status::Ok();
}

// Matches the envelope's first sends and receives while the first receive is surely the
// first posted: on a rank of several locations, no other location may yet post one earlier
// in the trace (its events are in time order, so none earlier than its next one). A
// receive that may not match yet waits in deferred_ until the rank's locations stop
// (RecheckDeferred).
void Otf2Replay::MatchQueued(const MatchKey& key) {
  auto it = queues_.find(key);
  if (it == queues_.end()) return;
  Queues& qs = it->second;
  while (!qs.sends.empty() && !qs.recvs.empty()) {
    const int32_t recv = qs.recvs.front();
    if (!FirstPostedSurely(recv)) {
      deferred_[static_cast<size_t>(key.dst)].insert(key);
      return;
    }
    const int32_t transfer = qs.sends.front();
    qs.sends.pop_front();
    qs.recvs.pop_front();
    Match(transfer, recv);
  }
  if (qs.recvs.empty() && qs.sends.empty()) queues_.erase(it);
}

bool Otf2Replay::FirstPostedSurely(int32_t recv) {
  const Request& q = requests_[static_cast<size_t>(recv)];
  const size_t rank = static_cast<size_t>(q.key.dst);
  if (!several_locations_[rank]) return true;
  for (int other : locations_of_rank_[rank]) {
    if (other == q.owner || locs_[static_cast<size_t>(other)].wait == Wait::kDone) continue;
    // Its next event: the one after the call it waits in (a barrier's End, a receive's
    // completion) is no earlier than when that call returned.
    Result<const Otf2Event*> next = archive_->Peek(other, 0);
    if (!next.ok()) return false;  // its walk reports the error
    if (*next != nullptr && (*next)->time < q.trace_posted) return false;
  }
  return true;
}

void Otf2Replay::RecheckDeferred(int rank) {
  auto& keys = deferred_[static_cast<size_t>(rank)];
  if (keys.empty()) return;
  const std::vector<MatchKey> waiting(keys.begin(), keys.end());
  keys.clear();
  for (const MatchKey& key : waiting) MatchQueued(key);
}

// An MpiIrecvRequest: its source, tag and communicator are in the MpiIrecv that completes
// it, read ahead; posted now with them.
Status Otf2Replay::IrecvRequest(int loc, const Otf2Event& e) {
  for (size_t ahead = 0; ahead < kMaxLookAhead; ++ahead) {
    Result<const Otf2Event*> next = archive_->Peek(loc, ahead);
    if (!next.ok()) return next.status();
    if (*next == nullptr) break;
    const Otf2Event& f = **next;
    if (f.request != e.request) continue;
    if (f.kind == Otf2EventKind::kIrecv) {
      const int32_t q = NewRequest(loc, false);
      Location& l = locs_[static_cast<size_t>(loc)];
      auto [it, fresh] = l.requests.emplace(e.request, q);
      if (!fresh) {
        ++anomalies_["MpiIrecvRequest with a request id still in use"];
        FreeRequest(it->second);
        it->second = q;
      }
      return PostRecv(loc, f.comm, f.peer, f.tag, q, e.time);
    }
    if (f.kind == Otf2EventKind::kRequestCancelled) return Status::Ok();  // never received
  }
  // Posted and never completed (the program ended, or the look-ahead ran out): it received
  // nothing, so nothing is posted.
  ++anomalies_["MpiIrecvRequest never completed by an MpiIrecv (nothing received)"];
  return Status::Ok();
}

Status Otf2Replay::Irecv(int loc, const Otf2Event& e) {
  Location& l = locs_[static_cast<size_t>(loc)];
  auto it = l.requests.find(e.request);
  int32_t q;
  if (it != l.requests.end() && !requests_[static_cast<size_t>(it->second)].is_send) {
    q = it->second;
    l.requests.erase(it);
  } else {  // no MpiIrecvRequest recorded: posted now
    q = NewRequest(loc, false);
    UKAI_RETURN_IF_ERROR(PostRecv(loc, e.comm, e.peer, e.tag, q, e.time));
  }
  BlockOn(loc, q);
  return Status::Ok();
}

// MpiRequestCancelled: an unmatched receive is withdrawn; a matched one, or a send, cannot
// be undone in the replay (counted).
void Otf2Replay::Cancel(int loc, uint64_t trace_request) {
  Location& l = locs_[static_cast<size_t>(loc)];
  auto it = l.requests.find(trace_request);
  if (it == l.requests.end()) return;  // its MpiIrecvRequest was never posted
  const int32_t request = it->second;
  l.requests.erase(it);
  Request& q = requests_[static_cast<size_t>(request)];
  if (q.is_send) {
    ++anomalies_["MpiRequestCancelled of a send (replayed as sent)"];
  } else if (q.transfer < 0) {
    Queues& qs = queues_[q.key];
    qs.recvs.erase(std::remove(qs.recvs.begin(), qs.recvs.end(), request), qs.recvs.end());
    if (qs.recvs.empty() && qs.sends.empty()) queues_.erase(q.key);
  } else {
    ++anomalies_["MpiRequestCancelled of a receive the replay had matched"];
  }
  FreeRequest(request);
}

void Otf2Replay::Match(int32_t transfer, int32_t request) {
  Transfer& t = transfers_[static_cast<size_t>(transfer)];
  Request& q = requests_[static_cast<size_t>(request)];
  t.recv_req = request;
  t.posted = q.posted;
  q.transfer = transfer;
  if (keep_matches_) matches_.push_back({q.key.comm, t.src, t.dst, q.key.tag, t.bytes, q.posted});
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
    if (t.posted >= 0) StartData(transfer);
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
