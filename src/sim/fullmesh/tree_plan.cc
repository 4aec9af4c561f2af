#include "sim/fullmesh/tree_plan.h"

#include <algorithm>
#include <functional>

namespace ukai::sim::fullmesh {
namespace {

// Builds a tree plan round by round; remembers every node's messages for Segment::after.
class TreeBuilder {
 public:
  TreeBuilder(Plan* plan, const std::vector<int>& members, int root_index)
      : plan_(plan),
        members_(members),
        n_(static_cast<int>(members.size())),
        root_index_(root_index),
        seen_(members.size()) {}

  int n() const { return n_; }
  // The node of relative rank r, and the index of its block in member order.
  int Node(int r) const { return members_[Index(r)]; }
  int Index(int r) const { return (root_index_ + r) % n_; }

  // A message of rank `from` to rank `to` (a local copy when equal), after every earlier
  // message of `from`.
  void Send(int from, int to, int64_t bytes, Ref src, Ref dst, bool accumulate = false) {
    Segment s;
    s.from = Node(from);
    s.to = Node(to);
    s.bytes = bytes;
    s.hop = from == to ? Hop::kLocal : Hop::kDirect;
    s.accumulate = accumulate;
    s.src = src;
    s.dst = dst;
    s.after_begin = static_cast<int32_t>(plan_->after.size());
    plan_->after.insert(plan_->after.end(), seen_[from].begin(), seen_[from].end());
    s.after_count = static_cast<int32_t>(seen_[from].size());
    const auto i = static_cast<int32_t>(plan_->segments.size());
    plan_->segments.push_back(s);
    if (from != to) {
      round_.push_back({from, i});
      round_.push_back({to, i});
    }
  }
  // Blocks of ranks [a, b) (s bytes each); `at(rank)` places a block. Blocks in member order
  // (the root's buffers) may wrap around: up to two segments then.
  void SendBlocks(int from, int to, int a, int b, int64_t s, const std::function<Ref(int)>& src,
                  const std::function<Ref(int)>& dst) {
    const int wrap = n_ - root_index_;  // first rank whose block index is 0
    for (int lo = a; lo < b;) {
      const int hi = lo < wrap ? std::min(b, wrap) : b;
      Send(from, to, (hi - lo) * s, src(lo), dst(lo));
      lo = hi;
    }
  }
  // Messages of this round count for the next rounds.
  void EndRound() {
    for (auto [rank, seg] : round_) seen_[rank].push_back(seg);
    round_.clear();
  }

 private:
  Plan* plan_;
  const std::vector<int>& members_;
  int n_, root_index_;
  std::vector<std::vector<int32_t>> seen_;
  std::vector<std::pair<int, int32_t>> round_;
};

// Rank 0's `from` (bytes) to every rank's OutRef(0) (rank 0's own excluded).
void Broadcast(TreeBuilder* t, int64_t bytes, Ref from) {
  for (int k = 1; k < t->n(); k *= 2) {
    for (int r = 0; r < k && r + k < t->n(); ++r)
      t->Send(r, r + k, bytes, r == 0 ? from : OutRef(t->Node(r), 0), OutRef(t->Node(r + k), 0));
    t->EndRound();
  }
}

// Sums every rank's In into acc(rank); rank 0's acc gets the total.
void Reduce(TreeBuilder* t, int64_t bytes, const std::function<Ref(int)>& acc) {
  for (int r = 0; r < t->n(); ++r) t->Send(r, r, bytes, InRef(t->Node(r), 0), acc(r));
  for (int k = 1; k < t->n(); k *= 2) {
    for (int r = k; r < t->n(); r += 2 * k) t->Send(r, r - k, bytes, acc(r), acc(r - k), true);
    t->EndRound();
  }
}

// Every rank's In block to OutRef(root) in member order; other ranks stage by rank.
void Gather(TreeBuilder* t, int64_t s) {
  const int root = t->Node(0);
  auto at = [t, s, root](int parent) {
    return [t, s, root, parent](int x) {
      return parent == 0 ? OutRef(root, t->Index(x) * s) : StageRef(t->Node(parent), x * s);
    };
  };
  for (int r = 0; r < t->n(); ++r) t->Send(r, r, s, InRef(t->Node(r), 0), at(r)(r));
  for (int k = 1; k < t->n(); k *= 2) {
    for (int r = k; r < t->n(); r += 2 * k)
      t->SendBlocks(r, r - k, r, std::min(r + k, t->n()), s, at(r), at(r - k));
    t->EndRound();
  }
}

void Scatter(TreeBuilder* t, int64_t s) {
  const int root = t->Node(0);
  auto at = [t, s, root](int holder) {
    return [t, s, root, holder](int x) {
      return holder == 0 ? InRef(root, t->Index(x) * s) : StageRef(t->Node(holder), x * s);
    };
  };
  int top = 1;
  while (top < t->n()) top *= 2;
  for (int k = top / 2; k >= 1; k /= 2) {
    for (int r = 0; r + k < t->n(); r += 2 * k)
      t->SendBlocks(r, r + k, r + k, std::min(r + 2 * k, t->n()), s, at(r), at(r + k));
    t->EndRound();
  }
  for (int r = 0; r < t->n(); ++r) t->Send(r, r, s, at(r)(r), OutRef(t->Node(r), 0));
}

}  // namespace

bool HasTreePlan(OpType t) { return t != OpType::kP2p && t != OpType::kAlltoall; }

Plan TreePlan(const Operation& op, const std::vector<int>& members) {
  Plan p;
  if (!HasTreePlan(op.type)) return p;
  p.direct = true;
  const bool rooted = op.type != OpType::kAllreduce && op.type != OpType::kAllgather;
  const int root_index =
      rooted
          ? static_cast<int>(std::find(members.begin(), members.end(), op.root) - members.begin())
          : 0;
  TreeBuilder t(&p, members, root_index);
  const int64_t s = op.bytes;
  const int root = t.Node(0);
  switch (op.type) {
    case OpType::kMulticast:
      Broadcast(&t, s, InRef(root, 0));
      break;
    case OpType::kScatter:
      Scatter(&t, s);
      break;
    case OpType::kGather:
      Gather(&t, s);
      break;
    case OpType::kReduce:
      Reduce(&t, s,
             [&t, root](int r) { return r == 0 ? OutRef(root, 0) : StageRef(t.Node(r), 0); });
      break;
    case OpType::kAllreduce:
      Reduce(&t, s, [&t](int r) { return OutRef(t.Node(r), 0); });
      Broadcast(&t, s, OutRef(root, 0));
      break;
    case OpType::kAllgather:
      Gather(&t, s);
      Broadcast(&t, t.n() * s, OutRef(root, 0));
      break;
    default:
      break;
  }
  return p;
}

}  // namespace ukai::sim::fullmesh
