// Algorithm selection for CollOptions::algorithm == kAuto, as Open MPI's tuned component:
// a table of (collective, module, group sizes, message size) -> algorithm that the
// benchmark produced (tuned_table.cc, written by `ukai_coll_bench --tune`), forced choices
// (GroupOptions::algorithms / UKAI_COLL_ALGORITHMS) before it and built-in rules after it.
// "Message size" is the bytes one member contributes: the vector (broadcast, reduce,
// allreduce), the block per rank (scatter, gather, allgather, reduce_scatter, alltoall),
// the message (Send). Thread safety: pure functions over constant tables.
#ifndef UKAI_RT_COLL_SELECT_H_
#define UKAI_RT_COLL_SELECT_H_

#include <cstdint>
#include <map>
#include <span>
#include <string_view>

#include "ukai/rt/group.hpp"

namespace ukai::rt::coll {

using Overrides = std::map<Collective, Algorithm>;

// "allreduce=ring,broadcast=relay" (CollectiveName=AlgorithmName, comma-separated; empty is
// none). Errors name the item; an algorithm not implemented for the collective is one.
Result<Overrides> ParseOverrides(std::string_view text);

struct TableRow {
  Collective coll;
  std::string_view module;  // "shm", "tcp", "inproc", "mpi", or "*" for any
  int min_n, max_n;         // group sizes, inclusive
  uint64_t max_bytes;       // the row applies up to this message size (inclusive)
  Algorithm algorithm;
  // The pipelining unit (CollArgs::chunk_bytes) of chain and relay that the row sets when the
  // call left CollOptions::chunk_bytes at 0; 0 here: the builders' default (64 KiB).
  uint64_t chunk_bytes = 0;
};

// Row bounds for "any size" and "any group size from min_n on".
inline constexpr uint64_t kAny = ~uint64_t{0};
inline constexpr int kLarge = 1 << 20;

// The benchmark's table (tuned_table.cc): first matching row wins.
std::span<const TableRow> TunedTable();

// What kAuto takes: the algorithm, and the chunk size its table row sets (0: none).
struct Choice {
  Algorithm algorithm = Algorithm::kDirect;
  uint64_t chunk_bytes = 0;
};
Choice SelectChoice(const Overrides& forced, Collective c, std::string_view module, int n,
                    uint64_t bytes, bool commutative);
// The algorithm kAuto takes (SelectChoice's).
inline Algorithm SelectAlgorithm(const Overrides& forced, Collective c, std::string_view module,
                                 int n, uint64_t bytes, bool commutative) {
  return SelectChoice(forced, c, module, n, bytes, commutative).algorithm;
}

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_SELECT_H_
