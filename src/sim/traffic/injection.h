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
#include <vector>

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
// `message_flits` is the mean size of a message (a mix of sizes: their weighted mean).
Result<std::unique_ptr<InjectionProcess>> MakeInjection(const TrafficConfig& config,
                                                        double message_flits);

// A mix of message sizes (TrafficConfig::size_mix_flits, _weights): one size drawn per
// message from the node's stream, as BookSim2 draws a packet's size. Empty without a mix.
class SizeMix {
 public:
  explicit SizeMix(const TrafficConfig& config);
  bool empty() const { return flits_.empty(); }
  int Draw(Rng& rng) const;
  double mean() const { return mean_; }  // flits per message
  int largest() const { return largest_; }

 private:
  std::vector<int> flits_;
  std::vector<double> cumulative_;  // of the weights, normalised to end at 1
  double mean_ = 0;
  int largest_ = 0;
};

// The mix's own errors (sizes in [1, 32767] flits, weights > 0, one weight per size or
// none), naming traffic.size_mix_flits or traffic.size_mix_weights.
Status CheckSizeMix(const TrafficConfig& config);

// Flits per message on average: the mix's mean, else ceil(message_bytes / flit_bytes).
double MeanMessageFlits(const TrafficConfig& config, int flit_bytes);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TRAFFIC_INJECTION_H_
