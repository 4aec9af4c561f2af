// Algorithm selection: forced choices, the benchmark's table, built-in rules.
#include "rt/coll/select.h"

#include <string>

#include "rt/coll/schedule.h"

namespace ukai::rt::coll {
namespace {

// Used when no table row matches: the classical choices (small messages: logarithmic
// latency; large ones: bandwidth-optimal pipelines and rings).
Algorithm BuiltinRule(Collective c, int n, uint64_t bytes, bool commutative) {
  const uint64_t total = bytes * static_cast<uint64_t>(n);
  switch (c) {
    case Collective::kBarrier:
      return Algorithm::kRecursiveDoubling;
    case Collective::kBroadcast:
      return bytes < (32u << 10) ? Algorithm::kBinomial : Algorithm::kChain;
    case Collective::kScatter:
    case Collective::kGather:
      return total < (64u << 10) ? Algorithm::kBinomial : Algorithm::kDirect;
    case Collective::kAllgather:
      return total < (64u << 10) ? Algorithm::kRecursiveDoubling : Algorithm::kRing;
    case Collective::kReduce:
      return bytes < (32u << 10) ? Algorithm::kBinomial : Algorithm::kChain;
    case Collective::kAllreduce:
      if (bytes < (32u << 10) || !commutative) return Algorithm::kRecursiveDoubling;
      return n <= 2 ? Algorithm::kRecursiveDoubling : Algorithm::kRing;
    case Collective::kReduceScatter:
      if (!commutative) return Algorithm::kDirect;
      return total < (64u << 10) ? Algorithm::kRecursiveHalving : Algorithm::kRing;
    case Collective::kAlltoall:
      return total < (8u << 10) ? Algorithm::kDirect : Algorithm::kPairwise;
    case Collective::kSendRecv:
      break;
  }
  return Algorithm::kDirect;
}

bool Usable(Collective c, Algorithm a, bool commutative) {
  if (c == Collective::kSendRecv) return a == Algorithm::kDirect || a == Algorithm::kRelay;
  return Implemented(c, a) && (commutative || KeepsRankOrder(c, a));
}

}  // namespace

Result<Overrides> ParseOverrides(std::string_view text) {
  Overrides out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("algorithm choice '" + std::string(item) +
                                     "': expected COLLECTIVE=ALGORITHM");
    }
    Result<Collective> c = ParseCollective(item.substr(0, eq));
    if (!c.ok()) return c.status().WithContext("algorithm choice '" + std::string(item) + "'");
    Result<Algorithm> a = ParseAlgorithm(item.substr(eq + 1));
    if (!a.ok()) return a.status().WithContext("algorithm choice '" + std::string(item) + "'");
    if (*a != Algorithm::kAuto && !Usable(*c, *a, true)) {
      return Status::InvalidArgument("algorithm choice '" + std::string(item) +
                                     "': " + std::string(AlgorithmName(*a)) +
                                     " is not implemented for " + std::string(CollectiveName(*c)));
    }
    out[*c] = *a;
  }
  return out;
}

Choice SelectChoice(const Overrides& forced, Collective c, std::string_view module, int n,
                    uint64_t bytes, bool commutative) {
  auto f = forced.find(c);
  if (f != forced.end() && f->second != Algorithm::kAuto && Usable(c, f->second, commutative)) {
    return {f->second, 0};
  }
  for (const TableRow& row : TunedTable()) {
    if (row.coll != c || n < row.min_n || n > row.max_n || bytes > row.max_bytes) continue;
    if (row.module != "*" && row.module != module) continue;
    if (Usable(c, row.algorithm, commutative)) return {row.algorithm, row.chunk_bytes};
    break;
  }
  return {BuiltinRule(c, n, bytes, commutative), 0};
}

}  // namespace ukai::rt::coll
