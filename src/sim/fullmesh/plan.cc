#include "sim/fullmesh/plan.h"

#include <algorithm>
#include <cstring>

#include "core/rng.h"

namespace ukai::sim::fullmesh {
namespace {

// Appends a segment and returns its index.
int32_t Add(Plan* p, int from, int to, int64_t bytes, Hop hop, Ref src, Ref dst,
            bool accumulate = false) {
  Segment s;
  s.from = from;
  s.to = to;
  s.bytes = bytes;
  s.hop = from == to ? Hop::kLocal : hop;
  s.src = src;
  s.dst = dst;
  s.accumulate = accumulate;
  p->segments.push_back(s);
  return static_cast<int32_t>(p->segments.size() - 1);
}

void SetParents(Plan* p, int32_t seg, int32_t begin, int32_t count) {
  p->segments[seg].parent_begin = begin;
  p->segments[seg].parent_count = count;
}

}  // namespace

void PartRange(int64_t total, int parts, int i, int64_t align, int64_t* begin, int64_t* end) {
  const int64_t units = total / align;
  *begin = units * i / parts * align;
  *end = i + 1 == parts ? total : units * (i + 1) / parts * align;
}

Plan DirectPlan(const Operation& op, const std::vector<int>& members) {
  Plan p;
  p.direct = true;
  const int64_t s = op.bytes;
  const int n = static_cast<int>(members.size());
  const int root = op.root;
  switch (op.type) {
    case OpType::kP2p:
      Add(&p, root, op.dest, s, Hop::kDirect, InRef(root, 0), OutRef(op.dest, 0));
      break;
    case OpType::kMulticast:
      for (int q : members) {
        if (q != root) Add(&p, root, q, s, Hop::kDirect, InRef(root, 0), OutRef(q, 0));
      }
      break;
    case OpType::kScatter:
      for (int j = 0; j < n; ++j)
        Add(&p, root, members[j], s, Hop::kDirect, InRef(root, j * s), OutRef(members[j], 0));
      break;
    case OpType::kGather:
      for (int j = 0; j < n; ++j)
        Add(&p, members[j], root, s, Hop::kDirect, InRef(members[j], 0), OutRef(root, j * s));
      break;
    case OpType::kReduce:
      Add(&p, root, root, s, Hop::kLocal, InRef(root, 0), OutRef(root, 0));
      for (int q : members) {
        if (q != root) Add(&p, q, root, s, Hop::kDirect, InRef(q, 0), OutRef(root, 0), true);
      }
      break;
    case OpType::kAllreduce:
      for (int d : members) {
        Add(&p, d, d, s, Hop::kLocal, InRef(d, 0), OutRef(d, 0));
        for (int q : members) {
          if (q != d) Add(&p, q, d, s, Hop::kDirect, InRef(q, 0), OutRef(d, 0), true);
        }
      }
      break;
    case OpType::kAllgather:
      for (int d : members) {
        for (int j = 0; j < n; ++j)
          Add(&p, members[j], d, s, Hop::kDirect, InRef(members[j], 0), OutRef(d, j * s));
      }
      break;
    case OpType::kAlltoall:
      for (int e = 0; e < n; ++e) {
        for (int j = 0; j < n; ++j) {
          Add(&p, members[j], members[e], s, Hop::kDirect, InRef(members[j], e * s),
              OutRef(members[e], j * s));
        }
      }
      break;
  }
  return p;
}

Plan P2pRelayPlan(const Operation& op, const std::vector<int>& relays, bool direct) {
  Plan p;
  p.relays = relays;
  p.direct = direct;
  std::vector<int> holders = relays;
  if (direct) holders.insert(std::upper_bound(holders.begin(), holders.end(), op.dest), op.dest);
  const int parts = static_cast<int>(holders.size());
  for (int i = 0; i < parts; ++i) {
    int64_t b, e;
    PartRange(op.bytes, parts, i, 1, &b, &e);
    const int h = holders[i];
    if (h == op.dest) {
      Add(&p, op.root, h, e - b, Hop::kDirect, InRef(op.root, b), OutRef(h, b));
      continue;
    }
    const int32_t first =
        Add(&p, op.root, h, e - b, Hop::kFirst, InRef(op.root, b), StageRef(h, b));
    const int32_t second =
        Add(&p, h, op.dest, e - b, Hop::kSecond, StageRef(h, b), OutRef(op.dest, b));
    SetParents(&p, second, first, 1);
  }
  return p;
}

Plan MulticastRelayPlan(const Operation& op, const std::vector<int>& members,
                        const std::vector<int>& relays) {
  Plan p;
  p.relays = relays;
  const int k = static_cast<int>(relays.size());
  std::vector<int32_t> first(k, -1);
  for (int i = 0; i < k; ++i) {  // the root scatters the parts first
    int64_t b, e;
    PartRange(op.bytes, k, i, 1, &b, &e);
    if (relays[i] != op.root) {
      first[i] =
          Add(&p, op.root, relays[i], e - b, Hop::kFirst, InRef(op.root, b), OutRef(relays[i], b));
    }
  }
  for (int i = 0; i < k; ++i) {  // then every relay copies its part to the other receivers
    int64_t b, e;
    PartRange(op.bytes, k, i, 1, &b, &e);
    const int r = relays[i];
    const Ref src = r == op.root ? InRef(r, b) : OutRef(r, b);
    for (int q : members) {
      if (q == op.root || q == r) continue;
      const int32_t s = Add(&p, r, q, e - b, Hop::kSecond, src, OutRef(q, b));
      if (first[i] >= 0) SetParents(&p, s, first[i], 1);
    }
  }
  return p;
}

Plan ReduceRelayPlan(const Operation& op, const std::vector<int>& members,
                     const std::vector<int>& relays) {
  Plan p;
  p.relays = relays;
  const int k = static_cast<int>(relays.size());
  std::vector<int32_t> begin(k), count(k);
  for (int i = 0; i < k; ++i) {  // all-to-all: part i of every vector to relay i
    int64_t b, e;
    PartRange(op.bytes, k, i, 4, &b, &e);
    const int r = relays[i];
    Add(&p, r, r, e - b, Hop::kLocal, InRef(r, b), StageRef(r, b));
    begin[i] = static_cast<int32_t>(p.segments.size());
    for (int q : members) {
      if (q != r) Add(&p, q, r, e - b, Hop::kFirst, InRef(q, b), StageRef(r, b), true);
    }
    count[i] = static_cast<int32_t>(p.segments.size()) - begin[i];
  }
  for (int i = 0; i < k; ++i) {  // the column sums go to the root or to every member
    int64_t b, e;
    PartRange(op.bytes, k, i, 4, &b, &e);
    const int r = relays[i];
    for (int d : members) {
      if (op.type == OpType::kReduce && d != op.root) continue;
      const int32_t s = Add(&p, r, d, e - b, Hop::kSecond, StageRef(r, b), OutRef(d, b));
      SetParents(&p, s, begin[i], count[i]);
    }
  }
  return p;
}

Plan GroupRelayPlan(const Operation& op, const std::vector<int>& members,
                    const std::vector<int>& relay_of) {
  Plan p;
  const int64_t s = op.bytes;
  const bool scatter = op.type == OpType::kScatter;
  int other = 0;
  for (int j = 0; j < static_cast<int>(members.size()); ++j) {
    const int q = members[j];
    const Ref root_ref = scatter ? InRef(op.root, j * s) : OutRef(op.root, j * s);
    const Ref q_ref = scatter ? OutRef(q, 0) : InRef(q, 0);
    const int r = q == op.root ? -1 : relay_of[other++];
    if (r < 0) {
      if (scatter)
        Add(&p, op.root, q, s, Hop::kDirect, root_ref, q_ref);
      else
        Add(&p, q, op.root, s, Hop::kDirect, q_ref, root_ref);
      p.direct |= q != op.root;
      continue;
    }
    p.relays.push_back(r);
    p.direct = true;
    for (int part = 0; part < 2; ++part) {  // part 0 to the lower node number
      int64_t b, e;
      PartRange(s, 2, part, 1, &b, &e);
      Ref rb = root_ref, qb = q_ref;
      rb.offset += b;
      qb.offset += b;
      if ((part == 0) == (q < r)) {
        if (scatter)
          Add(&p, op.root, q, e - b, Hop::kDirect, rb, qb);
        else
          Add(&p, q, op.root, e - b, Hop::kDirect, qb, rb);
        continue;
      }
      const int32_t f = scatter ? Add(&p, op.root, r, e - b, Hop::kFirst, rb, StageRef(r, b))
                                : Add(&p, q, r, e - b, Hop::kFirst, qb, StageRef(r, b));
      const int32_t sec = scatter ? Add(&p, r, q, e - b, Hop::kSecond, StageRef(r, b), qb)
                                  : Add(&p, r, op.root, e - b, Hop::kSecond, StageRef(r, b), rb);
      SetParents(&p, sec, f, 1);
    }
  }
  std::sort(p.relays.begin(), p.relays.end());
  return p;
}

PlanTimer::PlanTimer(int nodes)
    : nodes_(nodes), link_free_(static_cast<size_t>(nodes) * nodes, 0.0) {}

double PlanTimer::Duration(const Plan& plan, const TimingParams& t) {
  const size_t n = plan.segments.size();
  start_.assign(n, 0.0);
  end_.assign(n, 0.0);
  arrive_.assign(n, 0.0);
  const double half = t.t1_us / 2;
  const bool pipelined = t.mode == RelayMode::kPipelined;
  double done = 0;
  for (size_t i = 0; i < n; ++i) {
    const Segment& s = plan.segments[i];
    double ready = 0;  // every `after` segment delivered
    for (int32_t k = s.after_begin; k < s.after_begin + s.after_count; ++k)
      ready = std::max(ready, arrive_[plan.after[k]]);
    if (s.hop == Hop::kLocal) {
      arrive_[i] = ready;
      continue;
    }
    const size_t l = static_cast<size_t>(s.from) * nodes_ + s.to;
    double& free = link_free_[l];
    if (free == 0) touched_.push_back(static_cast<int32_t>(l));
    const double serial = static_cast<double>(s.bytes) / t.bytes_per_us;
    double st = std::max(free, ready), en = st + serial, arrive;
    if (s.hop == Hop::kSecond) {
      // When the relay can start (rs) and the earliest its last byte can leave (re).
      double rs = half, re = half;
      if (s.parent_count > 0) {
        rs = re = 0;
        for (int32_t k = s.parent_begin; k < s.parent_begin + s.parent_count; ++k) {
          rs = std::max(rs, (pipelined ? start_[k] : end_[k]) + half);
          re = std::max(re, end_[k] + half);
        }
        if (pipelined) {
          const double chunk =
              static_cast<double>(std::min(t.chunk_bytes, s.bytes)) / t.bytes_per_us;
          rs += chunk;
          re += chunk;
        }
      }
      st = std::max(free, rs);
      en = std::max(st + serial, re);
      arrive = en + half;
    } else {
      arrive = en + (s.hop == Hop::kDirect || s.dst.kind == BufKind::kOut ? t.t0_us : half);
    }
    start_[i] = st;
    end_[i] = en;
    arrive_[i] = arrive;
    free = en > 0 ? en : 1e-300;  // nonzero marks the link as touched
    done = std::max(done, arrive);
  }
  for (int32_t l : touched_) link_free_[l] = 0;
  touched_.clear();
  return done;
}

namespace {

// Bytes of the input and output buffers a member needs.
void BufferSizes(const Operation& op, int node, int n, int64_t* in, int64_t* out) {
  const int64_t s = op.bytes;
  *in = *out = 0;
  const bool root = node == op.root;
  switch (op.type) {
    case OpType::kP2p:
      *in = root ? s : 0;
      *out = node == op.dest ? s : 0;
      break;
    case OpType::kMulticast:
      *in = root ? s : 0;
      *out = root ? 0 : s;
      break;
    case OpType::kScatter:
      *in = root ? n * s : 0;
      *out = s;
      break;
    case OpType::kGather:
      *in = s;
      *out = root ? n * s : 0;
      break;
    case OpType::kReduce:
      *in = s;
      *out = root ? s : 0;
      break;
    case OpType::kAllreduce:
      *in = *out = s;
      break;
    case OpType::kAllgather:
      *in = s;
      *out = n * s;
      break;
    case OpType::kAlltoall:
      *in = *out = n * s;
      break;
  }
}

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void AddInto(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  for (int64_t i = 0; i + 4 <= bytes; i += 4) {
    const uint32_t v = Load32(dst + i) + Load32(src + i);
    std::memcpy(dst + i, &v, 4);
  }
}

bool Same(const std::vector<uint8_t>& out, int64_t off, const uint8_t* want, int64_t bytes) {
  return static_cast<int64_t>(out.size()) >= off + bytes &&
         (bytes == 0 || std::memcmp(out.data() + off, want, bytes) == 0);
}

}  // namespace

OpData MakeOpData(const Operation& op, const std::vector<int>& members, int nodes, uint64_t seed) {
  OpData d;
  d.in.resize(nodes);
  d.out.resize(nodes);
  d.stage.resize(nodes);
  const int n = static_cast<int>(members.size());
  for (int node : members) {
    int64_t in, out;
    BufferSizes(op, node, n, &in, &out);
    d.in[node].resize(in);
    d.out[node].resize(out);
    Rng rng = Rng::Stream(seed, static_cast<uint64_t>(node));
    for (int64_t i = 0; i < in; i += 8) {
      const uint64_t v = rng.NextU64();
      std::memcpy(d.in[node].data() + i, &v, std::min<int64_t>(8, in - i));
    }
  }
  return d;
}

void ExecutePlanData(const Plan& plan, OpData* data) {
  auto buf = [data](const Ref& r) -> std::vector<uint8_t>& {
    switch (r.kind) {
      case BufKind::kIn:
        return data->in[r.node];
      case BufKind::kOut:
        return data->out[r.node];
      case BufKind::kStage:
        break;
    }
    return data->stage[r.node];
  };
  for (const Segment& s : plan.segments) {
    if (s.bytes == 0) continue;
    std::vector<uint8_t>& dst = buf(s.dst);
    if (static_cast<int64_t>(dst.size()) < s.dst.offset + s.bytes)
      dst.resize(s.dst.offset + s.bytes);
    const uint8_t* from = buf(s.src).data() + s.src.offset;
    if (s.accumulate)
      AddInto(dst.data() + s.dst.offset, from, s.bytes);
    else
      std::memcpy(dst.data() + s.dst.offset, from, s.bytes);
  }
}

bool CheckOpData(const Operation& op, const std::vector<int>& members, const OpData& d) {
  const int64_t s = op.bytes;
  const int n = static_cast<int>(members.size());
  std::vector<uint8_t> sum;
  if (IsReduction(op.type)) {
    sum.assign(s, 0);
    for (int q : members) AddInto(sum.data(), d.in[q].data(), s);
  }
  for (int e = 0; e < n; ++e) {
    const int node = members[e];
    const std::vector<uint8_t>& out = d.out[node];
    bool ok = true;
    switch (op.type) {
      case OpType::kP2p:
        ok = node != op.dest || Same(out, 0, d.in[op.root].data(), s);
        break;
      case OpType::kMulticast:
        ok = node == op.root || Same(out, 0, d.in[op.root].data(), s);
        break;
      case OpType::kScatter:
        ok = Same(out, 0, d.in[op.root].data() + e * s, s);
        break;
      case OpType::kGather:
        for (int j = 0; j < n && node == op.root; ++j)
          ok &= Same(out, j * s, d.in[members[j]].data(), s);
        break;
      case OpType::kReduce:
        ok = node != op.root || Same(out, 0, sum.data(), s);
        break;
      case OpType::kAllreduce:
        ok = Same(out, 0, sum.data(), s);
        break;
      case OpType::kAllgather:
        for (int j = 0; j < n; ++j) ok &= Same(out, j * s, d.in[members[j]].data(), s);
        break;
      case OpType::kAlltoall:
        for (int j = 0; j < n; ++j) ok &= Same(out, j * s, d.in[members[j]].data() + e * s, s);
        break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace ukai::sim::fullmesh
