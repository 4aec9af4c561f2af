// Injection processes: when each node creates its next message.
//
//   bernoulli  every cycle a node creates a message with probability p = rate / L (rate in
//              flits/node/cycle, L flits per message). Drawn as geometric gaps between
//              creation cycles, which is the same process without a draw per node per cycle.
//   interval   one message every `interval` cycles per node; each node's first message at
//              a phase drawn uniformly from [0, interval) with the node's own stream.
//   on_off     BookSim2's OnOffInjectionProcess: each node is on or off (the first state
//              drawn with equal odds); every cycle an off node turns on with probability
//              alpha and an on node turns off with beta, then an on node creates a message
//              with probability r1 (so p = rate / L = r1 alpha / (alpha + beta) on
//              average). Drawn as geometric runs: after a creation the node is on, so
//              Next() needs no state beyond the last creation cycle.
//
// Thread safety: const methods; the Rng is the node's own stream.
#ifndef UKAI_SIM_TRAFFIC_INJECTION_H_
#define UKAI_SIM_TRAFFIC_INJECTION_H_

#include <cstdint>
#include <memory>

#include "core/rng.h"
#include "core/status.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

class InjectionProcess {
 public:
  virtual ~InjectionProcess() = default;
  // The first creation cycle (>= 0).
  virtual int64_t First(Rng& rng) const = 0;
  // The creation cycle after one at `last` (> last).
  virtual int64_t Next(int64_t last, Rng& rng) const = 0;
  // Offered load of a sending node, flits/cycle.
  virtual double OfferedFlitsPerCycle() const = 0;
};

// Validates traffic.injection / traffic.rate / traffic.interval for messages of
// `message_flits` flits and builds the process.
Result<std::unique_ptr<InjectionProcess>> MakeInjection(const TrafficConfig& config,
                                                        int message_flits);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TRAFFIC_INJECTION_H_
