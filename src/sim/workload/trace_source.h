// TraceSource: a WorkloadSource that replays a trace file (netrace, OTF2) and reports the
// figures of its own kind once the run has ended (experiment/point_result.h,
// WorkloadFigures). The table of trace kinds is in workload/run_workload.cc.
//
// Thread safety: none; owned by one run.
#ifndef UKAI_SIM_WORKLOAD_TRACE_SOURCE_H_
#define UKAI_SIM_WORKLOAD_TRACE_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/experiment/point_result.h"
#include "sim/workload/workload.h"

namespace ukai::sim {

// How a trace run ended.
struct TraceRunEnd {
  int64_t cycle = 0;      // the clock when the run stopped
  double clock_mhz = 0;   // cycles -> microseconds
  bool finished = false;  // every message of the trace was delivered (or lost)
};

class TraceSource : public WorkloadSource {
 public:
  // Fills the figures of this trace kind into `f` and appends notes (what was odd, why a
  // figure is missing) to `notes`.
  virtual void Report(const Workload& workload, const TraceRunEnd& end, WorkloadFigures* f,
                      std::vector<std::string>* notes) const = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_TRACE_SOURCE_H_
