#include "sim/experiment/memory_budget.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "sim/engine/network.h"

namespace ukai::sim {

std::string FormatBytes(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, kUnits[u]);
}

MemoryLimit EffectiveMemoryLimit(const RunConfig& run) {
  if (run.memory_limit > 0) {
    return {run.memory_limit, fmt::format("run.memory_limit = {}", run.memory_limit)};
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  const double physical = pages > 0 && page > 0 ? double(pages) * double(page) : 0;
  MemoryLimit limit{static_cast<int64_t>(physical / 2),
                    fmt::format("half of the {} of physical memory; run.memory_limit = 0",
                                FormatBytes(physical))};
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      (physical == 0 || static_cast<double>(as.rlim_cur) < physical)) {
    limit = {static_cast<int64_t>(as.rlim_cur / 2),
             fmt::format("half of the address-space limit (ulimit -v) of {}; "
                         "run.memory_limit = 0",
                         FormatBytes(static_cast<double>(as.rlim_cur)))};
  }
  if (limit.bytes <= 0) limit = {int64_t{1} << 30, "1 GiB (the physical memory is unknown)"};
  return limit;
}

Status CheckMemory(const SimConfig& c) {
  const double need = Network::StateBytes(c);
  const MemoryLimit limit = EffectiveMemoryLimit(c.run);
  if (need <= static_cast<double>(limit.bytes)) return Status::Ok();
  double nodes = 1;
  for (int r : c.network.k) nodes *= r;
  return Status::InvalidArgument(fmt::format(
      "run.memory_limit: the network needs about {} of router and network state, more than "
      "the limit of {} ({}); its size is driven by network.k and network.n ({:.0f} nodes of "
      "{} ports), router.vcs = {} and router.pe_vcs = {} (VCs per port) and "
      "router.vc_buffer_flits = {} (flits per VC): make these smaller or raise "
      "run.memory_limit",
      FormatBytes(need), FormatBytes(static_cast<double>(limit.bytes)), limit.origin, nodes,
      2 * c.network.n + 1, c.router.vcs, c.router.pe_vcs, c.router.vc_buffer_flits));
}

int64_t BacklogBound(const SimConfig& c, int sending_nodes) {
  const double left =
      static_cast<double>(EffectiveMemoryLimit(c.run).bytes) - Network::StateBytes(c);
  const double by_memory = std::max(0.0, left) / kBytesPerQueuedMessage;
  const double by_nodes = static_cast<double>(kBacklogPerSendingNode) * sending_nodes;
  // Half of the message pool's index space: the pool must never run out (it aborts).
  const double by_pool = Flit::kMaxMessages / 2;
  return std::max<int64_t>(sending_nodes,
                           static_cast<int64_t>(std::min({by_memory, by_nodes, by_pool})));
}

}  // namespace ukai::sim
