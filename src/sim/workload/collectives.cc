#include "sim/workload/collectives.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ukai::sim {
namespace {

constexpr std::string_view kOpNames[kCollectiveOpCount] = {
    "barrier",
    "bcast",
    "gather",
    "gatherv",
    "scatter",
    "scatterv",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "alltoallw",
    "allreduce",
    "reduce",
    "reduce_scatter",
    "scan",
    "exscan",
    "reduce_scatter_block",
    "create_handle",
    "destroy_handle",
    "allocate",
    "deallocate",
    "create_handle_and_allocate",
    "destroy_handle_and_deallocate",
};

int LowBit(int x) { return x & -x; }
int HighPow2AtMost(int x) {  // the largest power of two <= x (x >= 1)
  int p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}
bool IsPow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// n split into `parts` chunks, the first n % parts one byte larger.
std::vector<int64_t> Chunks(int64_t n, int parts) {
  std::vector<int64_t> c(static_cast<size_t>(parts), n / parts);
  for (int64_t i = 0; i < n % parts; ++i) ++c[static_cast<size_t>(i)];
  return c;
}

// Builds a schedule on virtual ranks (vr = rank - root mod p). Send() stages a message with
// the sender's receipts committed so far; Flush() commits the staged ones (the end of a
// step: messages of one step do not wait for each other).
class Builder {
 public:
  Builder(int p, int root, const std::vector<int64_t>& block)
      : p_(p), root_(root), block_(block), committed_(static_cast<size_t>(p), 0) {}

  int Real(int vr) const { return (vr + root_) % p_; }
  int64_t BlockBytes(const std::vector<int>& real_ranks) const {
    int64_t b = 0;
    for (int r : real_ranks) b += r < static_cast<int>(block_.size()) ? block_[r] : 0;
    return b;
  }
  // A message of `bytes` (data sized from n).
  void Send(int from_vr, int to_vr, int64_t bytes) { Push(from_vr, to_vr, bytes, {}); }
  // A message carrying the blocks of the virtual ranks `vrs`.
  void SendBlocks(int from_vr, int to_vr, const std::vector<int>& vrs) {
    std::vector<int> real;
    real.reserve(vrs.size());
    for (int v : vrs) real.push_back(Real(v));
    const int64_t bytes = BlockBytes(real);
    Push(from_vr, to_vr, bytes, std::move(real));
  }
  void Flush() {
    for (int to : staged_) ++committed_[static_cast<size_t>(to)];
    staged_.clear();
  }
  int p() const { return p_; }
  CollSchedule Take() {
    Flush();
    return std::move(schedule_);
  }

 private:
  void Push(int from_vr, int to_vr, int64_t bytes, std::vector<int> blocks) {
    CollMessage m;
    m.from = Real(from_vr);
    m.to = Real(to_vr);
    m.bytes = bytes;
    m.need = committed_[static_cast<size_t>(m.from)];
    m.blocks = std::move(blocks);
    schedule_.messages.push_back(std::move(m));
    staged_.push_back(schedule_.messages.back().to);
  }

  int p_, root_;
  const std::vector<int64_t>& block_;
  std::vector<int> committed_;
  std::vector<int> staged_;
  CollSchedule schedule_;
};

// Binomial tree on virtual ranks [0, p): parent vr - lowbit(vr); the subtree of vr spans
// [vr, vr + lowbit(vr)) (all of [0, p) for the root).
int Parent(int vr) { return vr - LowBit(vr); }
std::vector<int> Subtree(int vr, int p) {
  const int end = vr == 0 ? p : std::min(p, vr + LowBit(vr));
  std::vector<int> s(static_cast<size_t>(end - vr));
  std::iota(s.begin(), s.end(), vr);
  return s;
}
// Children of vr, largest subtree first.
std::vector<int> Children(int vr, int p) {
  std::vector<int> c;
  for (int m = vr == 0 ? HighPow2AtMost(std::max(1, p - 1)) : LowBit(vr) / 2; m >= 1; m /= 2) {
    if (vr + m < p && (vr != 0 || m < p)) c.push_back(vr + m);
  }
  return c;
}

// Fan-out from virtual rank 0 over the first `p` virtual ranks: `bytes(vr)` to each vr, or
// the blocks of its subtree.
template <typename Bytes>
void FanOut(Builder& b, int p, Bytes bytes, bool blocks) {
  for (int vr = 0; vr < p; ++vr) {
    for (int child : Children(vr, p)) {
      if (blocks) {
        b.SendBlocks(vr, child, Subtree(child, p));
      } else {
        b.Send(vr, child, bytes(child));
      }
      b.Flush();
    }
  }
}

// Fan-in to virtual rank 0 over the first `p` virtual ranks (children before parents).
template <typename Bytes>
void FanIn(Builder& b, int p, Bytes bytes, bool blocks) {
  for (int vr = p - 1; vr >= 1; --vr) {
    if (blocks) {
      b.SendBlocks(vr, Parent(vr), Subtree(vr, p));
    } else {
      b.Send(vr, Parent(vr), bytes(vr));
    }
    b.Flush();
  }
}

// Recursive doubling among the first p2 = 2^k virtual ranks, the others folded in (their
// data to vr - p2) before and out after. `pre(e)`, `round(vr, k)` and `post(e)` give the
// bytes; with `blocks`, messages carry blocks: the sender's own, what its group holds, and
// everything for the folded-out rank.
void RecursiveDoubling(Builder& b, int64_t n, bool blocks) {
  const int p = b.p();
  const int p2 = HighPow2AtMost(p);
  for (int e = p2; e < p; ++e) {
    blocks ? b.SendBlocks(e, e - p2, {e}) : b.Send(e, e - p2, n);
  }
  b.Flush();
  for (int d = 1; d < p2; d *= 2) {
    for (int vr = 0; vr < p2; ++vr) {
      if (!blocks) {
        b.Send(vr, vr ^ d, n);
        continue;
      }
      std::vector<int> held;  // the aligned group of d ranks vr belongs to, with their extras
      for (int g = vr & ~(d - 1); g < (vr & ~(d - 1)) + d; ++g) {
        held.push_back(g);
        if (g + p2 < p) held.push_back(g + p2);
      }
      b.SendBlocks(vr, vr ^ d, held);
    }
    b.Flush();
  }
  for (int e = p2; e < p; ++e) {
    if (!blocks) {
      b.Send(e - p2, e, n);
      continue;
    }
    std::vector<int> all;
    for (int v = 0; v < p; ++v) {
      if (v != e) all.push_back(v);
    }
    b.SendBlocks(e - p2, e, all);
  }
  b.Flush();
}

// Recursive halving among the first p2 virtual ranks (the others folded in first, sending
// their whole vector of `n` bytes): vr keeps the half of its chunk range holding chunk vr
// and sends the other half; afterwards vr holds chunk vr. `weight[i]` = chunk i's bytes;
// with `block_of` non-empty, the chunk of participant i is the blocks of those ranks.
void RecursiveHalving(Builder& b, int64_t n, const std::vector<int64_t>& weight,
                      const std::vector<std::vector<int>>& block_of) {
  const int p = b.p();
  const int p2 = HighPow2AtMost(p);
  for (int e = p2; e < p; ++e) b.Send(e, e - p2, n);
  b.Flush();
  std::vector<std::pair<int, int>> range(static_cast<size_t>(p2), {0, p2});
  for (int d = p2 / 2; d >= 1; d /= 2) {
    for (int vr = 0; vr < p2; ++vr) {
      auto& [lo, hi] = range[static_cast<size_t>(vr)];
      const int mid = lo + (hi - lo) / 2;
      const bool low = (vr & d) == 0;
      const int send_lo = low ? mid : lo, send_hi = low ? hi : mid;
      if (block_of.empty()) {
        int64_t bytes = 0;
        for (int c = send_lo; c < send_hi; ++c) bytes += weight[static_cast<size_t>(c)];
        b.Send(vr, vr ^ d, bytes);
      } else {
        std::vector<int> carried;
        for (int c = send_lo; c < send_hi; ++c) {
          for (int v : block_of[static_cast<size_t>(c)]) carried.push_back(v);
        }
        b.SendBlocks(vr, vr ^ d, carried);
      }
      if (low) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    b.Flush();
  }
}

void Barrier(Builder& b, CollectiveAlgorithm a) {
  const int p = b.p();
  auto zero = [](int) { return int64_t{0}; };
  switch (a) {
    case CollectiveAlgorithm::kRing:
      for (int round = 0; round < 2; ++round) {
        for (int vr = 0; vr < p; ++vr) {
          b.Send(vr, (vr + 1) % p, 0);
          b.Flush();
        }
      }
      return;
    case CollectiveAlgorithm::kRecursiveDoubling:
      RecursiveDoubling(b, 0, false);
      return;
    default:
      FanIn(b, p, zero, false);
      FanOut(b, p, zero, false);
  }
}

void Bcast(Builder& b, CollectiveAlgorithm a, int64_t n) {
  const int p = b.p();
  switch (a) {
    case CollectiveAlgorithm::kRing:
      for (int vr = 0; vr + 1 < p; ++vr) {
        b.Send(vr, vr + 1, n);
        b.Flush();
      }
      return;
    case CollectiveAlgorithm::kRecursiveDoubling: {  // scatter + allgather of p chunks
      const std::vector<int64_t> chunk = Chunks(n, p);
      FanOut(
          b, p,
          [&](int vr) {
            int64_t s = 0;
            for (int v : Subtree(vr, p)) s += chunk[static_cast<size_t>(v)];
            return s;
          },
          false);
      // The allgather moves chunks: sized like blocks, indexed by virtual rank.
      const int p2 = HighPow2AtMost(p);
      auto sum = [&](const std::vector<int>& vrs) {
        int64_t s = 0;
        for (int v : vrs) s += chunk[static_cast<size_t>(v)];
        return s;
      };
      for (int e = p2; e < p; ++e) b.Send(e, e - p2, chunk[static_cast<size_t>(e)]);
      b.Flush();
      for (int d = 1; d < p2; d *= 2) {
        for (int vr = 0; vr < p2; ++vr) {
          std::vector<int> held;
          for (int g = vr & ~(d - 1); g < (vr & ~(d - 1)) + d; ++g) {
            held.push_back(g);
            if (g + p2 < p) held.push_back(g + p2);
          }
          b.Send(vr, vr ^ d, sum(held));
        }
        b.Flush();
      }
      for (int e = p2; e < p; ++e) b.Send(e - p2, e, n - chunk[static_cast<size_t>(e)]);
      b.Flush();
      return;
    }
    default:
      FanOut(
          b, p, [n](int) { return n; }, false);
  }
}

void Reduce(Builder& b, CollectiveAlgorithm a, int64_t n) {
  const int p = b.p();
  switch (a) {
    case CollectiveAlgorithm::kRing:
      for (int vr = p - 1; vr >= 1; --vr) {
        b.Send(vr, vr - 1, n);
        b.Flush();
      }
      return;
    case CollectiveAlgorithm::kRecursiveDoubling: {  // Rabenseifner
      const int p2 = HighPow2AtMost(p);
      const std::vector<int64_t> chunk = Chunks(n, p2);
      RecursiveHalving(b, n, chunk, {});
      FanIn(
          b, p2,
          [&](int vr) {
            int64_t s = 0;
            for (int v : Subtree(vr, p2)) s += chunk[static_cast<size_t>(v)];
            return s;
          },
          false);
      return;
    }
    default:
      FanIn(
          b, p, [n](int) { return n; }, false);
  }
}

void Allreduce(Builder& b, CollectiveAlgorithm a, int64_t n) {
  const int p = b.p();
  switch (a) {
    case CollectiveAlgorithm::kRing: {  // ring reduce_scatter + ring allgather, p chunks
      const std::vector<int64_t> chunk = Chunks(n, p);
      for (int s = 0; s + 1 < p; ++s) {
        for (int r = 0; r < p; ++r) b.Send(r, (r + 1) % p, chunk[((r - s - 1) % p + p) % p]);
        b.Flush();
      }
      for (int s = 0; s + 1 < p; ++s) {
        for (int r = 0; r < p; ++r) b.Send(r, (r + 1) % p, chunk[((r - s) % p + p) % p]);
        b.Flush();
      }
      return;
    }
    case CollectiveAlgorithm::kRecursiveDoubling:
      RecursiveDoubling(b, n, false);
      return;
    default:
      FanIn(
          b, p, [n](int) { return n; }, false);
      FanOut(
          b, p, [n](int) { return n; }, false);
  }
}

void Gather(Builder& b, CollectiveAlgorithm a) {
  const int p = b.p();
  if (a == CollectiveAlgorithm::kRing) {
    for (int vr = p - 1; vr >= 1; --vr) {
      std::vector<int> carried(static_cast<size_t>(p - vr));
      std::iota(carried.begin(), carried.end(), vr);
      b.SendBlocks(vr, vr - 1, carried);
      b.Flush();
    }
    return;
  }
  FanIn(
      b, p, [](int) { return int64_t{0}; }, true);
}

void Scatter(Builder& b, CollectiveAlgorithm a) {
  const int p = b.p();
  if (a == CollectiveAlgorithm::kRing) {
    for (int vr = 0; vr + 1 < p; ++vr) {
      std::vector<int> carried(static_cast<size_t>(p - vr - 1));
      std::iota(carried.begin(), carried.end(), vr + 1);
      b.SendBlocks(vr, vr + 1, carried);
      b.Flush();
    }
    return;
  }
  FanOut(
      b, p, [](int) { return int64_t{0}; }, true);
}

void Allgather(Builder& b, CollectiveAlgorithm a) {
  const int p = b.p();
  switch (a) {
    case CollectiveAlgorithm::kRing:
      for (int s = 0; s + 1 < p; ++s) {
        for (int r = 0; r < p; ++r) b.SendBlocks(r, (r + 1) % p, {((r - s) % p + p) % p});
        b.Flush();
      }
      return;
    case CollectiveAlgorithm::kRecursiveDoubling:
      RecursiveDoubling(b, 0, true);
      return;
    default: {  // gather to 0, then bcast of every block
      FanIn(
          b, p, [](int) { return int64_t{0}; }, true);
      std::vector<int> all(static_cast<size_t>(p));
      std::iota(all.begin(), all.end(), 0);
      for (int vr = 0; vr < p; ++vr) {
        for (int child : Children(vr, p)) {
          b.SendBlocks(vr, child, all);
          b.Flush();
        }
      }
    }
  }
}

void Alltoall(Builder& b, CollectiveAlgorithm a) {
  const int p = b.p();
  switch (a) {
    case CollectiveAlgorithm::kRing:  // pairwise exchange
      for (int s = 1; s < p; ++s) {
        for (int r = 0; r < p; ++r) b.SendBlocks(r, (r + s) % p, {r});
        b.Flush();
      }
      return;
    case CollectiveAlgorithm::kRecursiveDoubling: {  // Bruck
      // items[r]: the origins of the blocks at r and their destinations.
      std::vector<std::vector<std::pair<int, int>>> items(static_cast<size_t>(p));
      for (int r = 0; r < p; ++r) {
        for (int d = 0; d < p; ++d) {
          if (d != r) items[static_cast<size_t>(r)].push_back({r, d});
        }
      }
      for (int k = 1; k < p; k *= 2) {
        std::vector<std::vector<std::pair<int, int>>> next(static_cast<size_t>(p));
        for (int r = 0; r < p; ++r) {
          std::vector<int> origins;
          for (const auto& [origin, dst] : items[static_cast<size_t>(r)]) {
            if ((((dst - r) % p + p) % p) & k) {
              origins.push_back(origin);
              next[static_cast<size_t>((r + k) % p)].push_back({origin, dst});
            } else {
              next[static_cast<size_t>(r)].push_back({origin, dst});
            }
          }
          b.SendBlocks(r, (r + k) % p, origins);
        }
        b.Flush();
        items = std::move(next);
      }
      return;
    }
    default:  // linear: every pair at once
      for (int s = 1; s < p; ++s) {
        for (int r = 0; r < p; ++r) b.SendBlocks(r, (r + s) % p, {r});
      }
      b.Flush();
  }
}

void ReduceScatter(Builder& b, CollectiveAlgorithm a, int64_t n) {
  const int p = b.p();
  switch (a) {
    case CollectiveAlgorithm::kRing:
      for (int s = 0; s + 1 < p; ++s) {
        for (int r = 0; r < p; ++r) b.SendBlocks(r, (r + 1) % p, {((r - s - 1) % p + p) % p});
        b.Flush();
      }
      return;
    case CollectiveAlgorithm::kRecursiveDoubling: {
      const int p2 = HighPow2AtMost(p);
      std::vector<std::vector<int>> owned(static_cast<size_t>(p2));
      for (int i = 0; i < p2; ++i) {
        owned[static_cast<size_t>(i)].push_back(i);
        if (i + p2 < p) owned[static_cast<size_t>(i)].push_back(i + p2);
      }
      RecursiveHalving(b, n, {}, owned);
      for (int e = p2; e < p; ++e) b.SendBlocks(e - p2, e, {e});
      b.Flush();
      return;
    }
    default:  // reduce to 0, then scatter the parts
      FanIn(
          b, p, [n](int) { return n; }, false);
      FanOut(
          b, p, [](int) { return int64_t{0}; }, true);
  }
}

void Scan(Builder& b, CollectiveAlgorithm a, int64_t n) {
  const int p = b.p();
  if (a == CollectiveAlgorithm::kRing) {  // linear chain
    for (int r = 0; r + 1 < p; ++r) {
      b.Send(r, r + 1, n);
      b.Flush();
    }
    return;
  }
  for (int d = 1; d < p; d *= 2) {
    for (int r = 0; r + d < p; ++r) b.Send(r, r + d, n);
    b.Flush();
  }
}

}  // namespace

std::string_view CollectiveOpName(CollectiveOp op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kCollectiveOpCount ? kOpNames[i] : "?";
}

bool IsRooted(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kBcast:
    case CollectiveOp::kGather:
    case CollectiveOp::kGatherv:
    case CollectiveOp::kScatter:
    case CollectiveOp::kScatterv:
    case CollectiveOp::kReduce:
      return true;
    default:
      return false;
  }
}

int64_t CollSchedule::total_bytes() const {
  int64_t t = 0;
  for (const CollMessage& m : messages) t += m.bytes;
  return t;
}

CollectiveAlgorithm AutoAlgorithm(CollectiveOp op, int p, const CollectiveSizes& s) {
  using A = CollectiveAlgorithm;
  int64_t block = 0, total = 0;
  for (int64_t b : s.block) total += b;
  if (!s.block.empty()) block = total / static_cast<int64_t>(s.block.size());
  switch (op) {
    case CollectiveOp::kBcast:  // binomial below 2 KiB, split-binary below 362 KiB: a tree
      return s.n < 370728 ? A::kBinomial : A::kRing;  // pipeline
    case CollectiveOp::kReduce:
      return (p < 8 && s.n < 20480) || s.n < 2048 ? A::kBinomial : A::kRing;  // pipeline
    case CollectiveOp::kAllreduce:
      return s.n < 10000 ? A::kRecursiveDoubling : A::kRing;
    case CollectiveOp::kAllgather:
    case CollectiveOp::kAllgatherv:  // recursive doubling or Bruck below 50000 B, else ring
      return p == 2 ? A::kRing : total < 50000 ? A::kRecursiveDoubling : A::kRing;
    case CollectiveOp::kAlltoall:
    case CollectiveOp::kAlltoallv:
    case CollectiveOp::kAlltoallw:
      if (p == 2) return A::kRing;
      if (block < 200 && p > 12) return A::kRecursiveDoubling;  // Bruck
      return block < 3000 ? A::kBinomial : A::kRing;            // linear, else pairwise
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kReduceScatterBlock: {
      const int64_t bytes = s.n > 0 ? s.n : total;
      const bool halving = bytes <= 12 * 1024 || (bytes <= 256 * 1024 && IsPow2(p)) ||
                           p >= 0.0012 * static_cast<double>(bytes) + 8;
      return halving ? A::kRecursiveDoubling : A::kRing;
    }
    case CollectiveOp::kScan:
    case CollectiveOp::kExscan:
      return A::kRing;  // Open MPI's basic linear scan
    case CollectiveOp::kGather:
    case CollectiveOp::kGatherv:
    case CollectiveOp::kScatter:
    case CollectiveOp::kScatterv:
      return A::kBinomial;
    default:  // barrier and the handle operations
      return A::kRecursiveDoubling;
  }
}

CollSchedule BuildSchedule(CollectiveOp op, CollectiveAlgorithm algorithm, int p, int root,
                           const CollectiveSizes& sizes) {
  if (algorithm == CollectiveAlgorithm::kAuto) algorithm = AutoAlgorithm(op, p, sizes);
  if (p <= 1) return {};
  CollectiveSizes s = sizes;
  if (s.block.size() < static_cast<size_t>(p)) s.block.resize(static_cast<size_t>(p), 0);
  if ((op == CollectiveOp::kReduceScatter || op == CollectiveOp::kReduceScatterBlock) && s.n == 0) {
    for (int64_t x : s.block) s.n += x;
  }
  Builder b(p, IsRooted(op) ? ((root % p) + p) % p : 0, s.block);
  const CollectiveSizes& sizes_used = s;
  switch (op) {
    case CollectiveOp::kBcast:
      Bcast(b, algorithm, sizes_used.n);
      break;
    case CollectiveOp::kGather:
    case CollectiveOp::kGatherv:
      Gather(b, algorithm);
      break;
    case CollectiveOp::kScatter:
    case CollectiveOp::kScatterv:
      Scatter(b, algorithm);
      break;
    case CollectiveOp::kAllgather:
    case CollectiveOp::kAllgatherv:
      Allgather(b, algorithm);
      break;
    case CollectiveOp::kAlltoall:
    case CollectiveOp::kAlltoallv:
    case CollectiveOp::kAlltoallw:
      Alltoall(b, algorithm);
      break;
    case CollectiveOp::kAllreduce:
      Allreduce(b, algorithm, sizes_used.n);
      break;
    case CollectiveOp::kReduce:
      Reduce(b, algorithm, sizes_used.n);
      break;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kReduceScatterBlock:
      ReduceScatter(b, algorithm, sizes_used.n);
      break;
    case CollectiveOp::kScan:
    case CollectiveOp::kExscan:
      Scan(b, algorithm, sizes_used.n);
      break;
    default:  // barrier and the handle operations synchronise
      Barrier(b, algorithm);
  }
  return b.Take();
}

}  // namespace ukai::sim
