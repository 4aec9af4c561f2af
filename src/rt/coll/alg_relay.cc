// The full-mesh patent's relay collectives (JP 2020-046713; ../shared/spec/fullmesh-relay.md,
// src/sim/fullmesh/plan.cc is the simulator's message-level version of the same plans).
//
// The data are cut into K near-equal parts (whole elements); part i belongs to relay i, the
// i-th lowest rank of the relay set ([0108]'s machine-wide rule, so every member knows where
// each part goes). Each part is further cut into chunks of CollOptions::chunk_bytes (default
// 64 KiB) so that a relay forwards (or reduces) chunk c while chunk c + 1 arrives: the
// patent's pipelined relays. The parts themselves move in background steps (they flow while
// each relay's rounds pipeline its own part).
//  * Broadcast (embodiments 3 and 6): the root sends part i to relay i, which copies it to
//    every other member. With K = n the root is relay too and sends its own part to all.
//  * Reduce / allreduce (embodiments 4 and 6): every member sends part i of its vector to
//    relay i (an all-to-all); relay i combines the column in rank order, chunk by chunk, and
//    sends the result to the root (reduce) or to every member (allreduce).
// Tags: a part's chunk c travels with tag c on its first hop and tag kHop2 + c on its second.
#include <algorithm>
#include <string>
#include <vector>

#include "rt/coll/algorithms.h"

namespace ukai::rt::coll {
namespace {

// The parts of the vector and their chunks (byte offsets within the vector).
struct Parts {
  std::vector<uint64_t> begin;  // K + 1 entries
  uint64_t chunk = 1;
  uint32_t hop2 = 0;  // tag offset of second hops: the most chunks any part has
  uint64_t Chunks(int i) const {
    const uint64_t len = begin[i + 1] - begin[i];
    return len == 0 ? 1 : (len + chunk - 1) / chunk;
  }
  // Chunk c of part i in buffer `buf` (offset `base` added).
  Region Chunk(Region (*buf)(uint64_t, uint64_t), int i, uint64_t c, uint64_t base = 0) const {
    const uint64_t lo = begin[i] + c * chunk;
    return buf(lo - begin[i] + base, std::min(begin[i + 1], lo + chunk) - lo);
  }
};

Parts PartsOf(const CollArgs& a, int k) {
  Parts p;
  p.chunk = ChunkBytes(a);
  for (int i = 0; i <= k; ++i) p.begin.push_back(PartBegin(a.count, k, i) * a.element);
  uint64_t most = 1;
  for (int i = 0; i < k; ++i) most = std::max(most, p.Chunks(i));
  p.hop2 = static_cast<uint32_t>(most);
  return p;
}

int IndexOf(const std::vector<int>& v, int x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : static_cast<int>(it - v.begin());
}

// Relay i combines chunk c of its part over every member, in rank order, into `acc` (the
// chunk's region): its own contribution from the send buffer, the others' from tag c.
void AccumulateChunk(const CollArgs& a, const Parts& p, int i, uint64_t c, Region acc,
                     ScheduleBuilder* b) {
  const Region own = p.Chunk(&SendBuf, i, c, p.begin[i]);
  for (int j = 0; j < a.n; ++j) {
    const Order order = j == 0 ? Order::kCopy : Order::kDstFirst;
    if (j != a.rank) {
      b->Recv(j, static_cast<uint32_t>(c), acc, order, /*ordered=*/true);
    } else if (order == Order::kCopy) {
      b->Copy(own, acc, true);
    } else {
      b->Combine(own, acc, order, true);
    }
  }
}

// Every member's first hop of a reduction: chunk c of part i to relay i (tag c). Member r
// starts with the relay after itself (relay (r + 1 + t) mod K at step t), so the members
// send to different relays at once instead of all to relay 0 first (an incast that leaves
// the other relays' links idle).
void ScatterParts(const CollArgs& a, const Parts& p, const std::vector<int>& relays,
                  ScheduleBuilder* b) {
  const int k = static_cast<int>(relays.size());
  uint64_t most = 0;
  for (int i = 0; i < k; ++i) most = std::max(most, p.Chunks(i));
  for (uint64_t c = 0; c < most; ++c) {
    for (int t = 0; t < k; ++t) {
      const int i = (a.rank + 1 + t) % k;
      if (relays[i] != a.rank && c < p.Chunks(i)) {
        b->BackgroundSend(relays[i], static_cast<uint32_t>(c), p.Chunk(&SendBuf, i, c, p.begin[i]));
      }
    }
  }
}

// A relay reduction's plan: the relay set, its parts, this member's part (-1: not a relay).
struct RelayPlan {
  std::vector<int> relays;
  Parts p;
  int me;
};

// The relay set of collective `c` and every member's first hop (ScatterParts).
Result<RelayPlan> ScatterToRelays(Collective c, const CollArgs& a, ScheduleBuilder* b) {
  auto relays = RelaySet(c, a.n, a.root, a.relays);
  if (!relays.ok()) return relays.status();
  RelayPlan plan{*relays, PartsOf(a, static_cast<int>(relays->size())), IndexOf(*relays, a.rank)};
  ScatterParts(a, plan.p, plan.relays, b);
  return plan;
}

// One member alone: its own vector is the result.
Status CopyOwn(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = a.count * a.element;
  b->Copy(SendBuf(0, s), RecvBuf(0, s));
  return Status::Ok();
}

// The second hops of the parts other than `me`, from their relays, into the receive buffer.
void RecvOtherParts(const Parts& p, const std::vector<int>& relays, int me, ScheduleBuilder* b) {
  for (int i = 0; i < static_cast<int>(relays.size()); ++i) {
    if (i == me) continue;
    for (uint64_t c = 0; c < p.Chunks(i); ++c) {
      b->BackgroundRecv(relays[i], p.hop2 + static_cast<uint32_t>(c),
                        p.Chunk(&RecvBuf, i, c, p.begin[i]));
    }
  }
}

// Relay `me`'s second hop of chunk c of its part, to every member but itself and `skip`
// (-1: none), starting with the next rank.
void ForwardChunk(const CollArgs& a, const Parts& p, int me, uint64_t c, int skip,
                  ScheduleBuilder* b) {
  for (int j = 1; j < a.n; ++j) {
    const int m = Mod(a.rank + j, a.n);
    if (m != skip) {
      b->Send(m, p.hop2 + static_cast<uint32_t>(c), p.Chunk(&RecvBuf, me, c, p.begin[me]));
    }
  }
}

}  // namespace

Result<std::vector<int>> RelaySet(Collective c, int n, int root, int k) {
  const bool with_root = c != Collective::kAllreduce;
  if (k == 0) k = n;
  const int max = n;
  if (n == 1) return std::vector<int>{0};
  if (k < 1 || k > max) {
    std::string range = "1.." + std::to_string(max);
    if (with_root) range += "; K = n includes the root, K < n leaves it out";
    return Status::InvalidArgument("relays K = " + std::to_string(k) + " is out of range for " +
                                   std::string(CollectiveName(c)) + " over " + std::to_string(n) +
                                   " members (" + range + ")");
  }
  std::vector<int> out;
  for (int r = 0; r < n && static_cast<int>(out.size()) < k; ++r) {
    if (k == n || !with_root || r != root) out.push_back(r);
  }
  return out;
}

Status BcastRelay(const CollArgs& a, ScheduleBuilder* b) {
  if (a.n == 1) return Status::Ok();
  auto relays = RelaySet(Collective::kBroadcast, a.n, a.root, a.relays);
  if (!relays.ok()) return relays.status();
  const int k = static_cast<int>(relays->size());
  const Parts p = PartsOf(a, k);
  const int me = IndexOf(*relays, a.rank);
  const int root_part = IndexOf(*relays, a.root);
  if (a.rank == a.root) {
    uint64_t most = 0;
    for (int i = 0; i < k; ++i) most = std::max(most, p.Chunks(i));
    for (uint64_t c = 0; c < most; ++c) {
      for (int i = 0; i < k; ++i) {
        if (i != root_part && c < p.Chunks(i)) {
          b->BackgroundSend((*relays)[i], static_cast<uint32_t>(c),
                            p.Chunk(&RecvBuf, i, c, p.begin[i]));
        }
      }
      if (root_part >= 0 && c < p.Chunks(root_part)) {
        for (int j = 1; j < a.n; ++j) {
          b->BackgroundSend(Mod(a.root + j, a.n), p.hop2 + static_cast<uint32_t>(c),
                            p.Chunk(&RecvBuf, root_part, c, p.begin[root_part]));
        }
      }
    }
    return Status::Ok();
  }
  RecvOtherParts(p, *relays, me, b);  // the other parts, from their relays
  if (me < 0) return Status::Ok();
  const uint64_t chunks = p.Chunks(me);
  for (uint64_t c = 0; c <= chunks; ++c) {  // own part: receive chunk c, forward chunk c - 1
    b->Round();
    if (c < chunks) {
      b->Recv(a.root, static_cast<uint32_t>(c), p.Chunk(&RecvBuf, me, c, p.begin[me]));
    }
    if (c >= 1) ForwardChunk(a, p, me, c - 1, a.root, b);
  }
  return Status::Ok();
}

Status ReduceRelay(const CollArgs& a, ScheduleBuilder* b) {
  if (a.n == 1) return CopyOwn(a, b);
  Result<RelayPlan> plan = ScatterToRelays(Collective::kReduce, a, b);
  if (!plan.ok()) return plan.status();
  const Parts& p = plan->p;
  const int me = plan->me;
  if (a.rank == a.root) RecvOtherParts(p, plan->relays, me, b);  // the results
  if (me < 0) return Status::Ok();
  const bool at_root = a.rank == a.root;
  if (!at_root) b->NeedTmp(p.begin[me + 1] - p.begin[me]);
  auto acc = [&](uint64_t c) {
    return at_root ? p.Chunk(&RecvBuf, me, c, p.begin[me]) : p.Chunk(&TmpBuf, me, c);
  };
  const uint64_t chunks = p.Chunks(me);
  for (uint64_t c = 0; c <= chunks; ++c) {
    b->Round();
    if (c < chunks) AccumulateChunk(a, p, me, c, acc(c), b);
    if (c >= 1 && !at_root) b->Send(a.root, p.hop2 + static_cast<uint32_t>(c - 1), acc(c - 1));
  }
  return Status::Ok();
}

Status AllreduceRelay(const CollArgs& a, ScheduleBuilder* b) {
  if (a.n == 1) return CopyOwn(a, b);
  Result<RelayPlan> plan = ScatterToRelays(Collective::kAllreduce, a, b);
  if (!plan.ok()) return plan.status();
  const Parts& p = plan->p;
  const int me = plan->me;
  RecvOtherParts(p, plan->relays, me, b);  // the other parts' results
  if (me < 0) return Status::Ok();
  const uint64_t chunks = p.Chunks(me);
  for (uint64_t c = 0; c <= chunks; ++c) {
    b->Round();
    if (c < chunks) AccumulateChunk(a, p, me, c, p.Chunk(&RecvBuf, me, c, p.begin[me]), b);
    if (c >= 1) ForwardChunk(a, p, me, c - 1, /*skip=*/-1, b);
  }
  return Status::Ok();
}

}  // namespace ukai::rt::coll
