// Network: the exchange between MPI ranks (rank_exchange.h) and the collective parts of
// the reports (deadlock, invariants) and of the reconfiguration's discards.
#include "sim/engine/rank_exchange.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/network.h"
#include "sim/engine/rank_group.h"

namespace ukai::sim {

void Network::FailRanks(const std::string& what) const {
  ranks_->Abort("cycle " + std::to_string(now_) + ": " + what);
  std::abort();  // not reached: Abort() ends the job
}

void Network::SendToRanks(const std::vector<std::vector<uint8_t>>& out,
                          std::vector<std::vector<uint8_t>>* in) const {
  Status st = ranks_->Exchange(out, in);
  if (!st.ok()) FailRanks(st.message());
}

Status Network::ExchangeInitial() {
  if (ranks_ == nullptr) {
    totals_ = LocalCounters(now_);
    return Status::Ok();
  }
  RankSummary mine;
  mine.counters = LocalCounters(now_);
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks_->size())), in;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireWriter w(&out[static_cast<size_t>(r)]);
    w.Put(mine.counters);
  }
  SendToRanks(out, &in);
  totals_ = mine.counters;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireReader rd(in[static_cast<size_t>(r)], r);
    const Counters c = rd.Get<Counters>();
    if (rd.bad()) FailRanks("short initial message from rank " + std::to_string(r));
    totals_.Add(c);
  }
  return Status::Ok();
}

// After every partition of this rank evaluated the cycle: encode what crosses to each
// rank plus this rank's summary, exchange, decode what came in.
void Network::ExchangeWithRanks() {
  RankState& st = *rank_state_;
  const int nranks = ranks_->size(), me = ranks_->rank();
  const int threads = static_cast<int>(parts_.size());
  st.out.assign(static_cast<size_t>(nranks), {});
  // Boundary flits and credits, per destination rank.
  std::vector<std::vector<WireFlit>> flits(static_cast<size_t>(nranks));
  std::vector<std::vector<Message>> records(static_cast<size_t>(nranks));
  std::vector<std::vector<int32_t>> credits(static_cast<size_t>(nranks));
  st.release.clear();
  for (const Part& part : parts_) {
    for (int32_t to = 0; to < plan_parts_.count(); ++to) {
      if (fabric_->LaneOf(to) >= 0) continue;
      const std::vector<BoundaryEntry>& box = fabric_->Outbox(part.lane, to);
      const size_t rank = static_cast<size_t>(to / threads);
      for (const BoundaryEntry& e : box) {
        if (e.credit >= 0) credits[rank].push_back(e.credit);
        if (e.dst < 0) continue;
        flits[rank].push_back({e.dst, e.slot, e.flit.arrival, e.flit.word});
        Message& m = (*messages_)[e.flit.msg()];
        if (e.flit.head()) {
          records[rank].push_back(m);
          m.forwarded = true;
        }
        if (e.flit.tail()) st.release.emplace_back(e.flit.msg(), part.lane);
      }
    }
  }
  RankSummary mine;
  mine.counters = LocalCounters(now_ + 1);
  MergeByNode(&mine.deliveries, &mine.tags);
  mine.serial_tags = serial_tags_;
  for (int r = 0; r < nranks; ++r) {
    if (r == me) continue;
    WireWriter w(&st.out[static_cast<size_t>(r)]);
    w.Put<int64_t>(now_);
    w.Put(mine.counters);
    w.PutAll(mine.deliveries);
    w.PutAll(mine.tags);
    w.PutAll(mine.serial_tags);
    w.PutAll(flits[static_cast<size_t>(r)]);
    w.PutAll(records[static_cast<size_t>(r)]);
    w.PutAll(credits[static_cast<size_t>(r)]);
  }
  for (const auto& [id, lane] : st.release) messages_->Release(id, lane);
  SendToRanks(st.out, &st.in);
  summaries_.assign(static_cast<size_t>(nranks), {});
  summaries_[static_cast<size_t>(me)] = std::move(mine);
  for (int r = 0; r < nranks; ++r) {
    if (r != me) ReadRankMessage(st.in[static_cast<size_t>(r)], r);
  }
}

// One other rank's message of this cycle: its summary, and the flits and credits it sent
// into this rank's routers (into the lanes' remote inboxes, applied by their commit).
void Network::ReadRankMessage(const std::vector<uint8_t>& bytes, int from) {
  RankState& st = *rank_state_;
  WireReader rd(bytes, from);
  const int64_t cycle = rd.Get<int64_t>();
  RankSummary& s = summaries_[static_cast<size_t>(from)];
  s.counters = rd.Get<Counters>();
  rd.GetAll(&s.deliveries);
  rd.GetAll(&s.tags);
  rd.GetAll(&s.serial_tags);
  std::vector<WireFlit> flits;
  std::vector<Message> records;
  std::vector<int32_t> credits;
  rd.GetAll(&flits);
  rd.GetAll(&records);
  rd.GetAll(&credits);
  if (rd.bad() || cycle != now_) {
    FailRanks("malformed exchange message from rank " + std::to_string(from) + " (cycle " +
              std::to_string(cycle) + ")");
  }
  size_t next_record = 0;
  for (const WireFlit& wf : flits) {
    Flit f;
    f.arrival = wf.arrival;
    f.word = wf.word;
    const int lane = fabric_->LaneOf(fabric_->PartOf(fabric_->RouterOfVc(wf.dst)));
    if (lane < 0) FailRanks("rank " + std::to_string(from) + " sent a flit to another rank's VC");
    int32_t id;
    if (f.head()) {
      if (next_record >= records.size()) FailRanks("head flit without its message record");
      id = messages_->Allocate(lane);
      Message& m = (*messages_)[id];
      m = records[next_record++];
      m.forwarded = false;
      m.next = -1;
      st.arriving[wf.dst] = id;
    } else {
      auto it = st.arriving.find(wf.dst);
      if (it == st.arriving.end()) FailRanks("body flit of an unknown message");
      id = it->second;
    }
    f.word = (f.word & ~static_cast<uint32_t>(Flit::kMaxMessages - 1)) | static_cast<uint32_t>(id);
    fabric_->RemoteInbox(lane)->push_back({wf.dst, -1, wf.slot, f});
  }
  for (int32_t c : credits) {
    const int lane = fabric_->LaneOf(fabric_->PartOf(fabric_->RouterOfVc(c)));
    if (lane < 0) FailRanks("rank " + std::to_string(from) + " sent a credit for another rank");
    fabric_->RemoteInbox(lane)->push_back({-1, c, 0, Flit{}});
  }
}

// Totals and deliveries of the whole network from every rank's summary: deliveries in
// node order (each rank's are; a node belongs to one rank), undeliverable tags of the
// serial part in event order, then those of ejections in node order.
void Network::MergeRanks() {
  totals_ = Counters();
  for (const RankSummary& s : summaries_) totals_.Add(s.counters);
  std::vector<EventTag> serial;
  for (const RankSummary& s : summaries_) {
    serial.insert(serial.end(), s.serial_tags.begin(), s.serial_tags.end());
  }
  std::stable_sort(serial.begin(), serial.end(),
                   [](const EventTag& a, const EventTag& b) { return a.event < b.event; });
  for (const EventTag& t : serial) undeliverable_tags_.push_back(t.tag);
  std::vector<size_t> di(summaries_.size(), 0), ti(summaries_.size(), 0);
  for (;;) {
    size_t best = summaries_.size();
    int32_t node = INT32_MAX;
    for (size_t r = 0; r < summaries_.size(); ++r) {
      const std::vector<Delivery>& d = summaries_[r].deliveries;
      if (di[r] < d.size() && d[di[r]].dst < node) node = d[di[r]].dst, best = r;
    }
    if (best == summaries_.size()) break;
    deliveries_.push_back(summaries_[best].deliveries[di[best]++]);
  }
  for (;;) {
    size_t best = summaries_.size();
    int32_t node = INT32_MAX;
    for (size_t r = 0; r < summaries_.size(); ++r) {
      const auto& t = summaries_[r].tags;
      if (ti[r] < t.size() && t[ti[r]].node < node) node = t[ti[r]].node, best = r;
    }
    if (best == summaries_.size()) break;
    undeliverable_tags_.push_back(summaries_[best].tags[ti[best]++].tag);
  }
}

int64_t Network::SumOverRanks(int64_t value) const {
  if (ranks_ == nullptr) return value;
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks_->size())), in;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r != ranks_->rank()) WireWriter(&out[static_cast<size_t>(r)]).Put(value);
  }
  SendToRanks(out, &in);
  int64_t sum = value;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireReader rd(in[static_cast<size_t>(r)], r);
    sum += rd.Get<int64_t>();
  }
  return sum;
}

// Every rank's first `limit` lines (each in node order) hold the first `limit` lines of the
// whole network: they are merged by node (a node's lines stay in port and VC order) and
// cut as the serial run's are, "..." when any line is left out.
std::vector<std::string> Network::BlockedChannels(size_t limit) const {
  if (ranks_ == nullptr) return fabric_->DescribeBlocked(*topology_, limit);
  std::vector<int32_t> nodes;
  std::vector<std::string> lines = fabric_->DescribeBlocked(*topology_, limit, &nodes);
  bool more = lines.size() > nodes.size();  // the trailing "..."
  std::vector<char> text;
  for (size_t i = 0; i < nodes.size(); ++i) {
    text.insert(text.end(), lines[i].begin(), lines[i].end());
    text.push_back('\n');
  }
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks_->size())), in;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireWriter w(&out[static_cast<size_t>(r)]);
    w.Put<uint8_t>(more ? 1 : 0);
    w.PutAll(nodes);
    w.PutAll(text);
  }
  SendToRanks(out, &in);
  std::vector<std::pair<int32_t, std::string>> all;
  for (size_t i = 0; i < nodes.size(); ++i) all.emplace_back(nodes[i], std::move(lines[i]));
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireReader rd(in[static_cast<size_t>(r)], r);
    more |= rd.Get<uint8_t>() != 0;
    std::vector<int32_t> their_nodes;
    std::vector<char> their_text;
    rd.GetAll(&their_nodes);
    rd.GetAll(&their_text);
    if (rd.bad()) FailRanks("malformed blocked-channel list from rank " + std::to_string(r));
    size_t at = 0;
    for (int32_t node : their_nodes) {
      const auto nl =
          std::find(their_text.begin() + static_cast<std::ptrdiff_t>(at), their_text.end(), '\n');
      if (nl == their_text.end()) {
        FailRanks("malformed blocked-channel list from rank " + std::to_string(r));
      }
      const size_t end = static_cast<size_t>(nl - their_text.begin());
      all.emplace_back(node, std::string(their_text.data() + at, end - at));
      at = end + 1;
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> merged;
  for (auto& [node, line] : all) {
    if (merged.size() >= limit) {
      more = true;
      break;
    }
    merged.push_back(std::move(line));
  }
  if (more) merged.push_back("...");
  return merged;
}

std::vector<Network::DiscardInfo> Network::AllRanksDiscards(std::vector<DiscardInfo> mine) const {
  if (ranks_ == nullptr) return mine;
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks_->size())), in;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r != ranks_->rank()) WireWriter(&out[static_cast<size_t>(r)]).PutAll(mine);
  }
  SendToRanks(out, &in);
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireReader rd(in[static_cast<size_t>(r)], r);
    std::vector<DiscardInfo> theirs;
    rd.GetAll(&theirs);
    if (rd.bad()) FailRanks("malformed discard list from rank " + std::to_string(r));
    mine.insert(mine.end(), theirs.begin(), theirs.end());
  }
  return mine;
}

void Network::ExchangePurgedCredits(const std::vector<Fabric::PurgedCredits>& remote) {
  if (ranks_ == nullptr) return;
  const int threads = static_cast<int>(parts_.size());
  std::vector<std::vector<Fabric::PurgedCredits>> to(static_cast<size_t>(ranks_->size()));
  for (const Fabric::PurgedCredits& c : remote) {
    to[static_cast<size_t>(fabric_->PartOf(fabric_->RouterOfVc(c.ovc)) / threads)].push_back(c);
  }
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks_->size())), in;
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r != ranks_->rank())
      WireWriter(&out[static_cast<size_t>(r)]).PutAll(to[static_cast<size_t>(r)]);
  }
  SendToRanks(out, &in);
  for (int r = 0; r < ranks_->size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireReader rd(in[static_cast<size_t>(r)], r);
    std::vector<Fabric::PurgedCredits> got;
    rd.GetAll(&got);
    if (rd.bad()) FailRanks("malformed purge credits from rank " + std::to_string(r));
    for (const Fabric::PurgedCredits& c : got) fabric_->ApplyPurgedCredits(c);
  }
}

}  // namespace ukai::sim
