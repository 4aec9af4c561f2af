// ScheduleBuilder, the table of builders per (collective, algorithm), BuildSchedule.
#include "rt/coll/schedule.h"

#include <algorithm>
#include <string>

#include "rt/coll/algorithms.h"

namespace ukai::rt::coll {
namespace {

struct Entry {
  Collective coll;
  Algorithm algorithm;
  Builder build;
  bool rank_order;  // usable with a non-commutative operation
};

// The one table: every algorithm of every collective. Order = the order AlgorithmsFor lists.
constexpr Entry kBuilders[] = {
    {Collective::kBarrier, Algorithm::kDirect, &BarrierDirect, true},
    {Collective::kBarrier, Algorithm::kBinomial, &BarrierBinomial, true},
    {Collective::kBarrier, Algorithm::kRecursiveDoubling, &BarrierDissemination, true},
    {Collective::kBroadcast, Algorithm::kDirect, &BcastDirect, true},
    {Collective::kBroadcast, Algorithm::kBinomial, &BcastBinomial, true},
    {Collective::kBroadcast, Algorithm::kChain, &BcastChain, true},
    {Collective::kBroadcast, Algorithm::kRelay, &BcastRelay, true},
    {Collective::kScatter, Algorithm::kDirect, &ScatterDirect, true},
    {Collective::kScatter, Algorithm::kBinomial, &ScatterBinomial, true},
    {Collective::kGather, Algorithm::kDirect, &GatherDirect, true},
    {Collective::kGather, Algorithm::kBinomial, &GatherBinomial, true},
    {Collective::kAllgather, Algorithm::kDirect, &AllgatherDirect, true},
    {Collective::kAllgather, Algorithm::kRing, &AllgatherRing, true},
    {Collective::kAllgather, Algorithm::kRecursiveDoubling, &AllgatherBruck, true},
    {Collective::kReduce, Algorithm::kDirect, &ReduceDirect, true},
    {Collective::kReduce, Algorithm::kBinomial, &ReduceBinomial, true},
    {Collective::kReduce, Algorithm::kChain, &ReduceChain, true},
    {Collective::kReduce, Algorithm::kRelay, &ReduceRelay, true},
    {Collective::kAllreduce, Algorithm::kDirect, &AllreduceDirect, true},
    {Collective::kAllreduce, Algorithm::kBinomial, &AllreduceBinomial, true},
    {Collective::kAllreduce, Algorithm::kRecursiveDoubling, &AllreduceRecursiveDoubling, true},
    {Collective::kAllreduce, Algorithm::kRecursiveHalving, &AllreduceRabenseifner, false},
    {Collective::kAllreduce, Algorithm::kRing, &AllreduceRing, false},
    {Collective::kAllreduce, Algorithm::kRelay, &AllreduceRelay, true},
    {Collective::kReduceScatter, Algorithm::kDirect, &ReduceScatterDirect, true},
    {Collective::kReduceScatter, Algorithm::kRing, &ReduceScatterRing, false},
    {Collective::kReduceScatter, Algorithm::kRecursiveHalving, &ReduceScatterHalving, false},
    {Collective::kReduceScatter, Algorithm::kPairwise, &ReduceScatterPairwise, false},
    {Collective::kAlltoall, Algorithm::kDirect, &AlltoallDirect, true},
    {Collective::kAlltoall, Algorithm::kPairwise, &AlltoallPairwise, true},
};

const Entry* FindEntry(Collective c, Algorithm alg) {
  for (const Entry& e : kBuilders) {
    if (e.coll == c && e.algorithm == alg) return &e;
  }
  return nullptr;
}

std::string Where(const Step& s, size_t i) {
  return "step " + std::to_string(i) + " (round " + std::to_string(s.round) + ")";
}

Status CheckRegion(const Region& r, uint64_t send, uint64_t recv, uint64_t tmp, bool write,
                   const std::string& where) {
  const uint64_t size = r.buf == BufId::kSend ? send : r.buf == BufId::kRecv ? recv : tmp;
  if (r.length != 0 && (r.offset > size || r.length > size - r.offset)) {
    return Status::Internal("schedule: " + where + " reaches past its buffer");
  }
  if (write && r.buf == BufId::kSend && r.length != 0) {
    return Status::Internal("schedule: " + where + " writes into the send buffer");
  }
  return Status::Ok();
}

int FindIn(const std::vector<std::pair<uint64_t, uint32_t>>& index, int peer, uint32_t tag) {
  const uint64_t key = static_cast<uint64_t>(peer) << 32 | tag;
  auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(key, uint32_t{0}));
  return it != index.end() && it->first == key ? static_cast<int>(it->second) : -1;
}

}  // namespace

int Schedule::FindRecv(int peer, uint32_t tag) const { return FindIn(recv_index, peer, tag); }
int Schedule::FindSend(int peer, uint32_t tag) const { return FindIn(send_index, peer, tag); }

void ScheduleBuilder::Round() {
  if (begins_.back() != steps_.size()) begins_.push_back(static_cast<uint32_t>(steps_.size()));
}

void ScheduleBuilder::Add(Step s) {
  s.round = static_cast<uint32_t>(begins_.size() - 1);
  steps_.push_back(s);
}

void ScheduleBuilder::Send(int peer, uint32_t tag, Region src) {
  Step s;
  s.kind = StepKind::kSend;
  s.peer = peer;
  s.tag = tag;
  s.src = src;
  Add(s);
}

void ScheduleBuilder::Recv(int peer, uint32_t tag, Region dst, Order order, bool ordered) {
  Step s;
  s.kind = StepKind::kRecv;
  s.peer = peer;
  s.tag = tag;
  s.dst = dst;
  s.order = order;
  s.ordered = ordered || order != Order::kCopy;
  Add(s);
}

void ScheduleBuilder::BackgroundSend(int peer, uint32_t tag, Region src) {
  Step s;
  s.kind = StepKind::kSend;
  s.peer = peer;
  s.tag = tag;
  s.src = src;
  s.background = true;
  background_.push_back(s);
}

void ScheduleBuilder::BackgroundRecv(int peer, uint32_t tag, Region dst) {
  Step s;
  s.kind = StepKind::kRecv;
  s.peer = peer;
  s.tag = tag;
  s.dst = dst;
  s.background = true;
  background_.push_back(s);
}

void ScheduleBuilder::Copy(Region src, Region dst, bool ordered) {
  if (src.length == 0 && dst.length == 0) return;
  Step s;
  s.kind = StepKind::kCopy;
  s.src = src;
  s.dst = dst;
  s.ordered = ordered;
  Add(s);
}

void ScheduleBuilder::Combine(Region src, Region dst, Order order, bool ordered) {
  Step s;
  s.kind = StepKind::kCombine;
  s.order = order;
  s.src = src;
  s.dst = dst;
  s.ordered = ordered;
  Add(s);
}

Result<Schedule> ScheduleBuilder::Finish(int n, int rank, uint64_t send_bytes,
                                         uint64_t recv_bytes) {
  Round();
  Schedule s;
  // Background steps go first, in round 0.
  s.steps = std::move(background_);
  const uint32_t shift = static_cast<uint32_t>(s.steps.size());
  s.steps.insert(s.steps.end(), steps_.begin(), steps_.end());
  s.round_begin = std::move(begins_);
  for (size_t r = 1; r < s.round_begin.size(); ++r) s.round_begin[r] += shift;
  if (s.round_begin.back() != s.steps.size()) {
    s.round_begin.push_back(static_cast<uint32_t>(s.steps.size()));
  }
  s.tmp_bytes = tmp_;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    const std::string where = Where(st, i);
    if (st.kind == StepKind::kSend || st.kind == StepKind::kRecv) {
      if (st.peer < 0 || st.peer >= n || st.peer == rank) {
        return Status::Internal("schedule: " + where + " names peer " + std::to_string(st.peer));
      }
      const uint64_t key = static_cast<uint64_t>(st.peer) << 32 | st.tag;
      (st.kind == StepKind::kSend ? s.send_index : s.recv_index)
          .emplace_back(key, static_cast<uint32_t>(i));
    }
    if (st.kind != StepKind::kRecv) {
      UKAI_RETURN_IF_ERROR(CheckRegion(st.src, send_bytes, recv_bytes, s.tmp_bytes, false, where));
    }
    if (st.kind != StepKind::kSend) {
      UKAI_RETURN_IF_ERROR(CheckRegion(st.dst, send_bytes, recv_bytes, s.tmp_bytes, true, where));
    }
    if ((st.kind == StepKind::kCopy || st.kind == StepKind::kCombine) &&
        st.src.length != st.dst.length) {
      return Status::Internal("schedule: " + where + " has regions of different lengths");
    }
  }
  for (auto* index : {&s.recv_index, &s.send_index}) {
    std::sort(index->begin(), index->end());
    for (size_t i = 1; i < index->size(); ++i) {
      if ((*index)[i].first == (*index)[i - 1].first) {
        return Status::Internal("schedule: two steps share peer and tag " +
                                std::to_string((*index)[i].first & 0xffffffffu));
      }
    }
  }
  return s;
}

uint64_t SendBytesNeeded(const CollArgs& a) {
  const uint64_t s = a.count * a.element;
  const uint64_t n = static_cast<uint64_t>(a.n);
  switch (a.coll) {
    case Collective::kScatter:
      return a.rank == a.root ? n * s : 0;
    case Collective::kGather:
    case Collective::kAllgather:
    case Collective::kReduce:
    case Collective::kAllreduce:
      return s;
    case Collective::kReduceScatter:
    case Collective::kAlltoall:
      return n * s;
    default:
      return 0;
  }
}

uint64_t RecvBytesNeeded(const CollArgs& a) {
  const uint64_t s = a.count * a.element;
  const uint64_t n = static_cast<uint64_t>(a.n);
  switch (a.coll) {
    case Collective::kBroadcast:
    case Collective::kScatter:
    case Collective::kAllreduce:
    case Collective::kReduceScatter:
      return s;
    case Collective::kGather:
      return a.rank == a.root ? n * s : 0;
    case Collective::kReduce:
      return a.rank == a.root ? s : 0;
    case Collective::kAllgather:
    case Collective::kAlltoall:
      return n * s;
    default:
      return 0;
  }
}

std::vector<Algorithm> ImplementedAlgorithms(Collective c) {
  std::vector<Algorithm> out;
  for (const Entry& e : kBuilders) {
    if (e.coll == c) out.push_back(e.algorithm);
  }
  if (c == Collective::kSendRecv) out = {Algorithm::kDirect, Algorithm::kRelay};
  return out;
}

bool Implemented(Collective c, Algorithm alg) { return FindEntry(c, alg) != nullptr; }

bool KeepsRankOrder(Collective c, Algorithm alg) {
  const Entry* e = FindEntry(c, alg);
  return e == nullptr || e->rank_order;
}

Result<Schedule> BuildSchedule(const CollArgs& a) {
  const Entry* e = FindEntry(a.coll, a.algorithm);
  if (e == nullptr) {
    std::string known;
    for (Algorithm alg : ImplementedAlgorithms(a.coll)) {
      known += (known.empty() ? "" : ", ") + std::string(AlgorithmName(alg));
    }
    return Status::InvalidArgument(
        "algorithm " + std::string(AlgorithmName(a.algorithm)) + " is not implemented for " +
        std::string(CollectiveName(a.coll)) + " (its algorithms: " + known + ")");
  }
  if (!a.commutative && !e->rank_order) {
    return Status::InvalidArgument(
        "algorithm " + std::string(AlgorithmName(a.algorithm)) + " of " +
        std::string(CollectiveName(a.coll)) +
        " needs a commutative operation (it does not combine in rank order)");
  }
  ScheduleBuilder b;
  UKAI_RETURN_IF_ERROR(e->build(a, &b));
  return b.Finish(a.n, a.rank, SendBytesNeeded(a), RecvBytesNeeded(a));
}

}  // namespace ukai::rt::coll
