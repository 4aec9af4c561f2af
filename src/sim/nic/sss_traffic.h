// SssTraffic: the synthetic operations of the SSS NIC model (docs/sss.md): every source NIC
// (traffic.sources, default all end nodes) starts operations of traffic.message_bytes by
// traffic.injection: bernoulli with probability traffic.rate / F per cycle, F the wire flits
// of one operation's data packets to one destination on a route of average length (so
// traffic.rate is the offered wire load in flits/node/cycle, as for plain messages), or one
// every traffic.interval cycles. traffic.operation = write / read go to traffic.pattern's
// destination; with traffic.multicast != none every operation is a write to a group of
// traffic.multicast_group_size members drawn at random among the other end nodes, or the
// next of traffic.multicast_groups that does not hold the source.
//
// Thread safety: none; one thread.
#ifndef UKAI_SIM_NIC_SSS_TRAFFIC_H_
#define UKAI_SIM_NIC_SSS_TRAFFIC_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "sim/engine/creation_schedule.h"
#include "sim/nic/sss_nic.h"
#include "sim/traffic/injection.h"
#include "sim/traffic/pattern.h"

namespace ukai::sim {

class SssTraffic {
 public:
  // Errors name the traffic.* key (unknown node names, groups too small, ...).
  static Result<std::unique_ptr<SssTraffic>> Create(const SimConfig& config,
                                                    const SssMachine& machine);

  // The operations whose start cycle is `now`, appended to `out`.
  void Due(int64_t now, std::vector<SssOp>* out);
  // The next start cycle after `now` (INT64_MAX: none).
  int64_t NextStart(int64_t now) const;
  int sending() const { return static_cast<int>(sources_.size()); }
  // Offered wire flits per end node and cycle (sources' load averaged over all end nodes).
  double offered() const { return offered_; }
  // F above: wire flits of one operation's data to one destination.
  int op_flits() const { return op_flits_; }

 private:
  SssTraffic() = default;
  SssOp Make(int src);

  SimConfig config_;
  int terminals_ = 0;
  std::vector<int> sources_;
  std::unique_ptr<TrafficPattern> pattern_;
  std::unique_ptr<InjectionProcess> injection_;
  std::vector<Rng> rng_;  // per end node
  CreationSchedule schedule_;
  std::vector<int32_t> due_;
  std::vector<std::vector<int>> groups_;
  std::vector<size_t> next_group_;  // per source
  int op_flits_ = 1;
  double offered_ = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_SSS_TRAFFIC_H_
