// Helpers of the workload tests: a driver that steps a network with a workload layer until
// the layer is done (or stuck, or a cycle limit), and a map of the layer's packet log.
#ifndef UKAI_TESTS_SIM_WORKLOAD_WORKLOAD_TEST_UTIL_H_
#define UKAI_TESTS_SIM_WORKLOAD_WORKLOAD_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>

#include "sim/engine/network.h"
#include "sim/workload/workload.h"

namespace ukai::sim::testing {

enum class DriveEnd { kDone, kStuck, kLimit, kError };

// Steps `net` (with `w` as its source) as a trace run does: skipping idle stretches.
inline DriveEnd DriveWorkload(Network& net, Workload& w, int64_t limit = 10000000,
                              int64_t* steps = nullptr) {
  net.SetMessageSource(&w);
  DriveEnd end = DriveEnd::kLimit;
  while (net.now() < limit) {
    if (w.Done()) {
      end = DriveEnd::kDone;
      break;
    }
    if (w.Stuck(net.now())) {
      end = DriveEnd::kStuck;
      break;
    }
    if (net.SkipIdle(limit) && net.now() >= limit) break;
    net.Step();
    if (steps != nullptr) ++*steps;
    if (!w.status().ok()) {
      end = DriveEnd::kError;
      break;
    }
  }
  net.SetMessageSource(nullptr);
  return end;
}

// Per message: the cycle its (first) packet was created and its last packet delivered.
struct MessageTimes {
  int64_t created = -1, delivered = -1;
  int packets = 0;
};
inline std::map<WorkMessageId, MessageTimes> TimesOf(const Workload& w) {
  std::map<WorkMessageId, MessageTimes> out;
  for (const PacketRecord& p : w.packet_log()) {
    MessageTimes& t = out[p.message];
    t.created = t.created < 0 ? p.created : std::min(t.created, p.created);
    t.delivered = std::max(t.delivered, p.delivered);
    ++t.packets;
  }
  return out;
}

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_WORKLOAD_WORKLOAD_TEST_UTIL_H_
