// The Multicaster: sender side (Multicast) and member side (the data and ack handlers).
// Both sides keep a Transfer per message: the bytes available so far, the next hops and
// how much each was sent, and the acks collected; Pump() forwards what is available.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "rt/core/thread_pool.h"
#include "rt/core/virtual_time.h"
#include "rt/multicast/mc_route.h"
#include "ukai/rt/multicast.hpp"

namespace ukai::rt {

using internal::AckEntry;
using internal::DataHeader;
using internal::McKey;
using internal::Route;
using internal::RouteEntry;
using internal::RouteHop;

Result<MulticastKind> ParseMulticastKind(std::string_view name) {
  if (name == "chain") return MulticastKind::kChain;
  if (name == "tree") return MulticastKind::kTree;
  if (name == "naive") return MulticastKind::kNaive;
  return Status::InvalidArgument("unknown multicast kind '" + std::string(name) +
                                 "' (known: chain, tree, naive)");
}

std::string_view MulticastKindName(MulticastKind kind) {
  switch (kind) {
    case MulticastKind::kChain:
      return "chain";
    case MulticastKind::kTree:
      return "tree";
    case MulticastKind::kNaive:
      break;
  }
  return "naive";
}

std::vector<size_t> MulticastResult::Failed() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].state == MulticastMember::State::kFailed) out.push_back(i);
  }
  return out;
}

bool MulticastResult::all_acked() const {
  return std::all_of(members.begin(), members.end(), [](const MulticastMember& m) {
    return m.state == MulticastMember::State::kAcked;
  });
}

namespace {

struct Hop {
  RouteHop hop;
  uint64_t sent = 0;
  bool finished = false;  // the last chunk went out
  bool dead = false;
};

// One message at one node (the sender or a member).
struct Transfer {
  DataHeader first;               // kind, ack, fanout, chunk, reply_to, this node's position
  std::vector<uint8_t> storage;   // members: the receive buffer
  std::span<const uint8_t> data;  // the bytes (storage, or the sender's caller's span)
  uint64_t received = 0;
  std::vector<Hop> hops;
  std::vector<AckEntry> acks;  // own, failed hops, upstream (chain), children (tree)
  std::set<uint32_t> waiting;  // tree: live hops whose ack has not come
  bool complete = false;
};

// An operation of this Multicaster as the sender: the members not yet resolved.
struct Pending {
  std::vector<MulticastMember> members;
  size_t resolved = 0;
};

}  // namespace

struct Multicaster::State {
  Runtime* runtime = nullptr;
  Context* context = nullptr;
  Startpoint self;
  MulticastReceiver receiver;
  std::atomic<uint64_t> next_sequence{1};
  std::atomic<uint64_t> delivered{0}, chunks_forwarded{0}, forward_failures{0}, rejected{0},
      acks_received{0};

  std::mutex ops_mu;  // pending, ops_cv
  std::condition_variable ops_cv;
  std::map<uint64_t, Pending> pending;

  std::mutex transfers_mu;  // transfers (handlers run on the progress thread)
  std::map<McKey, Transfer> transfers;

  void AddHops(Transfer& t, const Route& route) {
    for (RouteHop& h : internal::SplitRoute(t.first.kind, t.first.fanout, route)) {
      if (t.first.kind == MulticastKind::kTree && t.first.ack) t.waiting.insert(h.entry.index);
      t.hops.push_back({std::move(h), 0, false, false});
    }
  }

  Status SendChunk(Transfer& t, Hop& h) {
    const uint64_t end = std::min<uint64_t>(h.sent + t.first.chunk, t.received);
    DataHeader d = t.first;
    d.flags = (h.sent == 0 ? internal::kMcFirst : 0) |
              (end == t.first.total ? internal::kMcLast : 0) |
              (t.first.key.repair ? internal::kMcRepair : 0);
    d.offset = h.sent;
    d.position = h.hop.entry.index;
    d.reply_to = t.first.kind == MulticastKind::kChain ? t.first.reply_to : self;
    d.route = h.hop.route;
    d.acks = t.acks;
    Buffer b(256 + (end - h.sent) + 64 * d.route.size());
    internal::PutDataHeader(b, d);
    b.PutBytes(t.data.subspan(h.sent, end - h.sent));
    Status st = runtime->SendRsr(std::move(b), h.hop.entry.sp, internal::kMcDataHandler);
    if (st.ok()) {
      h.sent = end;
      h.finished = end == t.first.total;
    }
    return st;
  }

  // Sends every hop what it has not got yet, one chunk per hop in turn (pipelining). A hop
  // whose send fails is recorded as failed and replaced by its own next hops. The last
  // chunk goes out once the whole message is here (an empty message is one empty chunk).
  void Pump(Transfer& t) {
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t i = 0; i < t.hops.size(); ++i) {
        Hop& h = t.hops[i];
        if (h.dead || h.finished || (h.sent >= t.received && t.received != t.first.total)) {
          continue;
        }
        progress = true;
        Status st = SendChunk(t, h);
        if (st.ok()) {
          chunks_forwarded.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        forward_failures.fetch_add(1, std::memory_order_relaxed);
        h.dead = true;
        t.waiting.erase(h.hop.entry.index);
        t.acks.push_back({h.hop.entry.index,
                          st.WithContext("multicast member " + std::to_string(h.hop.entry.index))});
        Route orphans = h.hop.route;  // AddHops may reallocate t.hops
        AddHops(t, orphans);
      }
    }
  }

  void SendAck(const McKey& key, Transfer& t) {
    Buffer b;
    b.PutU64(key.origin);
    b.PutU32(key.context);
    b.PutU64(key.sequence);
    b.PutU32(t.first.position);
    internal::PutAcks(b, t.acks);
    Status st = runtime->SendRsr(std::move(b), t.first.reply_to, internal::kMcAckHandler);
    if (!st.ok()) forward_failures.fetch_add(1, std::memory_order_relaxed);
  }

  bool AllHopsDead(const Transfer& t) const {
    return std::all_of(t.hops.begin(), t.hops.end(), [](const Hop& h) { return h.dead; });
  }

  // After data or an ack arrived: acks up when due; forgets the transfer when done. A chain
  // member with a live next hop sent its ack on with the last chunk; the last live one
  // returns the combined ack. A tree node acks once its children did.
  void MaybeFinish(const McKey& key, Transfer& t) {
    if (!t.complete) return;
    if (t.first.ack) {
      if (t.first.kind == MulticastKind::kChain) {
        if (AllHopsDead(t)) SendAck(key, t);
      } else if (t.waiting.empty()) {
        SendAck(key, t);
      } else {
        return;  // waiting for children
      }
    }
    transfers.erase(key);
  }

  // Messages completed here (the last kCompletedKept), so that the sender's repair round
  // does not deliver a message twice.
  static constexpr size_t kCompletedKept = 4096;
  std::set<McKey> completed;
  std::deque<McKey> completed_order;
  bool FirstCompletion(McKey key) {
    key.repair = false;
    if (!completed.insert(key).second) return false;
    completed_order.push_back(key);
    if (completed_order.size() > kCompletedKept) {
      completed.erase(completed_order.front());
      completed_order.pop_front();
    }
    return true;
  }

  // Sends `data` to `route` (one round of the sender) and records the failed sends.
  void SendRound(uint64_t seq, bool repair, const MulticastOptions& o, MulticastKind kind,
                 const Route& route, std::span<const uint8_t> data) {
    Transfer t;
    t.first.key = {self.runtime(), self.context(), seq, repair};
    t.first.kind = kind;
    t.first.ack = o.ack;
    t.first.fanout = static_cast<uint32_t>(o.fanout);
    t.first.chunk = static_cast<uint32_t>(o.chunk_bytes);
    t.first.position = UINT32_MAX;  // the sender
    t.first.total = data.size();
    t.first.reply_to = self;
    t.data = data;
    t.received = data.size();
    AddHops(t, route);
    Pump(t);
    Resolve(seq, t.acks);  // members the sender could not send to
  }

  void OnData(Rsr& m);
  void OnAck(Rsr& m);
  Status Receive(DataHeader& h, Reader& r);
  void Resolve(uint64_t sequence, const std::vector<AckEntry>& acks);
};

Status Multicaster::State::Receive(DataHeader& h, Reader& r) {
  auto it = transfers.find(h.key);
  if (h.flags & internal::kMcFirst) {
    if (it != transfers.end() || h.offset != 0) {
      return Status::ParseError("multicast message: repeated first chunk");
    }
    it = transfers.emplace(h.key, Transfer{}).first;
    Transfer& t = it->second;
    t.first = h;
    t.first.flags = 0;
    t.first.route.clear();
    // Grown as chunks arrive: a forged total costs nothing until the bytes come.
    t.storage.reserve(std::min<uint64_t>(h.total, internal::kMcReserveBytes));
    AddHops(t, h.route);
  } else if (it == transfers.end()) {
    return Status::ParseError("multicast message: chunk of an unknown message");
  }
  Transfer& t = it->second;
  if (h.total != t.first.total || h.offset != t.received) {
    const uint64_t expected = t.received;
    transfers.erase(it);
    return Status::ParseError("multicast message: chunk at offset " + std::to_string(h.offset) +
                              ", expected " + std::to_string(expected));
  }
  const bool last = h.flags & internal::kMcLast;
  if (last && t.first.kind == MulticastKind::kChain && t.first.ack) {
    auto acks = internal::GetAcks(r);
    if (!acks.ok()) return acks.status();
    t.acks.insert(t.acks.end(), acks->begin(), acks->end());
  }
  auto bytes = r.GetBytes();
  if (!bytes.ok() || bytes->size() > t.first.total - t.received ||
      (last != (t.received + bytes->size() == t.first.total))) {
    transfers.erase(h.key);
    return Status::ParseError("multicast message: chunk bytes missing or of the wrong size");
  }
  t.storage.insert(t.storage.end(), bytes->begin(), bytes->end());
  t.data = t.storage;
  t.received += bytes->size();
  if (last) {
    t.complete = true;
    t.acks.push_back({t.first.position, Status::Ok()});
  }
  Pump(t);  // forward first (store and forward), then deliver
  if (last) {
    if (FirstCompletion(h.key)) {  // a repair of a message delivered already is only acked
      delivered.fetch_add(1, std::memory_order_relaxed);
      if (receiver) receiver({h.key.origin, h.key.sequence, t.data});
    }
    MaybeFinish(h.key, t);
  }
  return Status::Ok();
}

void Multicaster::State::OnData(Rsr& m) {
  auto h = internal::GetData(m.reader());
  std::lock_guard<std::mutex> lock(transfers_mu);
  Status st = h.ok() ? Receive(*h, m.reader()) : h.status();
  if (!st.ok()) rejected.fetch_add(1, std::memory_order_relaxed);
}

void Multicaster::State::Resolve(uint64_t sequence, const std::vector<AckEntry>& acks) {
  std::lock_guard<std::mutex> lock(ops_mu);
  auto it = pending.find(sequence);
  if (it == pending.end()) return;  // timed out already
  Pending& p = it->second;
  for (const AckEntry& a : acks) {
    if (a.index >= p.members.size()) continue;
    MulticastMember& mm = p.members[a.index];
    if (mm.state != MulticastMember::State::kUnconfirmed) continue;
    mm.state = a.status.ok() ? MulticastMember::State::kAcked : MulticastMember::State::kFailed;
    mm.status = a.status;
    ++p.resolved;
  }
  ops_cv.notify_all();
}

void Multicaster::State::OnAck(Rsr& m) {
  Reader& r = m.reader();
  auto origin = r.GetU64();
  auto context = r.GetU32();
  auto sequence = r.GetU64();
  auto from = r.GetU32();
  if (!origin.ok() || !context.ok() || !sequence.ok() || !from.ok()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto acks = internal::GetAcks(r);
  if (!acks.ok()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  acks_received.fetch_add(1, std::memory_order_relaxed);
  if (*origin == self.runtime() && *context == self.context()) {
    Resolve(*sequence, *acks);
    return;
  }
  std::lock_guard<std::mutex> lock(transfers_mu);
  const McKey key{*origin, *context, *sequence};
  auto it = transfers.find(key);
  if (it == transfers.end() || !it->second.waiting.erase(*from)) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  it->second.acks.insert(it->second.acks.end(), acks->begin(), acks->end());
  MaybeFinish(key, it->second);
}

Multicaster::Multicaster(std::shared_ptr<State> state) : state_(std::move(state)) {}
Multicaster::~Multicaster() = default;

Result<std::unique_ptr<Multicaster>> Multicaster::Attach(Context& context,
                                                         MulticastReceiver receiver) {
  auto ep = context.CreateEndpoint();
  if (!ep.ok()) return ep.status().WithContext("multicast endpoint");
  auto state = std::make_shared<State>();
  state->runtime = &context.runtime();
  state->context = &context;
  state->self = (*ep)->MakeStartpoint();
  state->receiver = std::move(receiver);
  auto data = (*ep)->RegisterHandler("ukai.mc.data", HandlerKind::kNonThreaded,
                                     [state](Rsr& m) { state->OnData(m); });
  if (!data.ok()) return data.status();
  auto ack = (*ep)->RegisterHandler("ukai.mc.ack", HandlerKind::kNonThreaded,
                                    [state](Rsr& m) { state->OnAck(m); });
  if (!ack.ok()) return ack.status();
  return std::make_unique<Multicaster>(std::move(state));
}

Startpoint Multicaster::startpoint() const { return state_->self; }

MulticastStats Multicaster::stats() const {
  return {state_->delivered.load(), state_->chunks_forwarded.load(),
          state_->forward_failures.load(), state_->rejected.load(), state_->acks_received.load()};
}

namespace {

Status CheckArgs(std::span<const Startpoint> group, const Startpoint& self,
                 const MulticastOptions& o) {
  if (o.chunk_bytes < 1 || o.chunk_bytes > (size_t{16} << 20)) {
    return Status::InvalidArgument("multicast chunk_bytes " + std::to_string(o.chunk_bytes) +
                                   " not in [1, 16 MiB]");
  }
  if (o.fanout < 1 || o.fanout > 64) {
    return Status::InvalidArgument("multicast fanout " + std::to_string(o.fanout) +
                                   " not in [1, 64]");
  }
  if (o.timeout.count() <= 0) return Status::InvalidArgument("multicast timeout must be > 0 ms");
  if (o.kind < MulticastKind::kChain || o.kind > MulticastKind::kNaive) {
    return Status::InvalidArgument("multicast kind " + std::to_string(int(o.kind)));
  }
  if (group.size() > internal::kMcMaxMembers) {
    return Status::InvalidArgument("multicast group of " + std::to_string(group.size()) +
                                   " members (at most 65536)");
  }
  std::set<std::tuple<RuntimeId, ContextId, EndpointId>> seen;
  for (size_t i = 0; i < group.size(); ++i) {
    const Startpoint& sp = group[i];
    const std::string at = "multicast group member " + std::to_string(i);
    if (!sp.valid()) return Status::InvalidArgument(at + ": null startpoint");
    if (sp == self) return Status::InvalidArgument(at + ": is the sender itself");
    if (!seen.insert({sp.runtime(), sp.context(), sp.endpoint()}).second) {
      return Status::InvalidArgument(at + ": repeated");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<MulticastResult> Multicaster::Multicast(std::span<const Startpoint> group,
                                               std::span<const uint8_t> data,
                                               const MulticastOptions& options) {
  UKAI_RETURN_IF_ERROR(CheckArgs(group, state_->self, options));
  if (data.size() > internal::kMcMaxTotalBytes) {
    return Status::InvalidArgument("multicast data of " + std::to_string(data.size()) +
                                   " bytes (at most 4 GiB)");
  }
  const uint64_t seq = state_->next_sequence.fetch_add(1);
  Route route;
  for (size_t i = 0; i < group.size(); ++i) route.push_back({uint32_t(i), group[i]});
  {
    std::lock_guard<std::mutex> lock(state_->ops_mu);
    state_->pending[seq].members.resize(group.size());
  }
  state_->SendRound(seq, false, options, options.kind, route, data);
  internal::WaitScope scope;  // a handler thread may wait here (thread_pool.h)
  std::unique_lock<std::mutex> lock(state_->ops_mu);
  Pending& p = state_->pending[seq];
  auto all = [&] { return p.resolved == group.size(); };
  // Under the sim module each round of the wait must be a runtime wait (Progress), so
  // that the simulated machine advances (rt/core/virtual_time.h).
  auto wait = [&](std::chrono::milliseconds timeout) {
    if (!internal::ThreadInSimulation()) return state_->ops_cv.wait_for(lock, timeout, all);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!all()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      lock.unlock();
      state_->runtime->Progress();
      lock.lock();
    }
    return true;
  };
  if (options.ack && !wait(options.timeout)) {
    // Repair round: the members not heard of get the data straight from the sender (naive),
    // in case a member before them died after receiving and before forwarding.
    Route missing;
    for (const RouteEntry& e : route) {
      if (p.members[e.index].state == MulticastMember::State::kUnconfirmed) missing.push_back(e);
    }
    lock.unlock();
    state_->SendRound(seq, true, options, MulticastKind::kNaive, missing, data);
    lock.lock();
    wait(options.timeout);
    for (size_t i = 0; i < p.members.size(); ++i) {
      if (p.members[i].state != MulticastMember::State::kUnconfirmed) continue;
      p.members[i].state = MulticastMember::State::kFailed;
      p.members[i].status =
          Status::Unavailable("multicast member " + std::to_string(i) + ": no ack within " +
                              std::to_string(options.timeout.count()) +
                              " ms, nor within as long after a direct re-send");
    }
  }
  MulticastResult result{std::move(p.members)};
  state_->pending.erase(seq);
  return result;
}

}  // namespace ukai::rt
