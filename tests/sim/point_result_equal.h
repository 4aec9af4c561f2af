// Field-by-field comparison of two PointResults (every result field of point_result.h,
// the gateway and BookSim2 figures included (a partitioned run refuses the SSS and
// workload models, network.h); wall_seconds and partition_note are not results): "" when
// they are identical, else the fields that differ with both values.
#ifndef UKAI_TESTS_SIM_POINT_RESULT_EQUAL_H_
#define UKAI_TESTS_SIM_POINT_RESULT_EQUAL_H_

#include <sstream>
#include <string>

#include "sim/experiment/point_result.h"

namespace ukai::sim::testing {

inline std::string ResultDifferences(const PointResult& a, const PointResult& b) {
  std::ostringstream out;
  out.precision(17);
  auto cmp = [&](const char* name, const auto& x, const auto& y) {
    if (!(x == y)) out << name << ": " << x << " != " << y << "; ";
  };
  auto vec = [&](const char* name, const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
    if (x != y) out << name << " differ; ";
  };
#define UKAI_CMP(f) cmp(#f, a.f, b.f)
  UKAI_CMP(offered_flits_per_node_cycle);
  UKAI_CMP(accepted_flits_per_node_cycle);
  UKAI_CMP(accepted_bytes_per_second);
  UKAI_CMP(clock_mhz);
  UKAI_CMP(avg_latency_cycles);
  UKAI_CMP(p50_latency_cycles);
  UKAI_CMP(p99_latency_cycles);
  UKAI_CMP(max_latency_cycles);
  UKAI_CMP(avg_network_latency_cycles);
  UKAI_CMP(avg_hops);
  UKAI_CMP(messages_measured);
  UKAI_CMP(cycles);
  UKAI_CMP(bandwidth_mbytes_per_second);
  UKAI_CMP(recovered_messages);
  UKAI_CMP(recovery_ratio);
  UKAI_CMP(table_messages);
  UKAI_CMP(table_ratio);
  UKAI_CMP(misrouted_hops);
  UKAI_CMP(avg_misrouted_hops);
  UKAI_CMP(undeliverable_messages);
  UKAI_CMP(not_generated_messages);
  UKAI_CMP(retransmitted_messages);
  UKAI_CMP(discarded_messages);
  UKAI_CMP(reconfigurations);
  UKAI_CMP(reconfiguration_cycles);
  UKAI_CMP(reconfiguration_regions);
  UKAI_CMP(cancelled_root_candidates);
  UKAI_CMP(latency_trend);
  UKAI_CMP(saturated);
  UKAI_CMP(note);
  UKAI_CMP(gateway.present);
  UKAI_CMP(gateway.frames_in);
  UKAI_CMP(gateway.frames_fcs_discarded);
  UKAI_CMP(gateway.frames_delivered);
  UKAI_CMP(gateway.frames_lost);
  UKAI_CMP(gateway.frames_retransmitted);
  UKAI_CMP(gateway.frames_no_owner);
  UKAI_CMP(gateway.frames_owner_faulty);
  UKAI_CMP(gateway.broadcasts);
  UKAI_CMP(gateway.egress_frames);
  UKAI_CMP(gateway.egress_bytes);
  UKAI_CMP(gateway.egress_lost);
  UKAI_CMP(gateway.table_updates_sent);
  UKAI_CMP(gateway.avg_frame_latency_cycles);
  UKAI_CMP(gateway.p99_frame_latency_cycles);
  UKAI_CMP(gateway.max_frame_latency_cycles);
  UKAI_CMP(gateway.max_io_cpu_load);
  UKAI_CMP(gateway.job_launches);
  UKAI_CMP(gateway.nic_commands_sent);
  UKAI_CMP(gateway.frames_dropped_disabled);
  UKAI_CMP(gateway.egress_dropped_disabled);
  UKAI_CMP(gateway.egress_updates_sent);
  UKAI_CMP(gateway.egress_retransmitted);
  UKAI_CMP(gateway.table_rows_cleared);
  UKAI_CMP(gateway.management_messages_lost);
  UKAI_CMP(booksim.present);
  UKAI_CMP(booksim.unstable);
  UKAI_CMP(booksim.hops);
  UKAI_CMP(booksim.log);
  for (int i = 0; i < BooksimFigures::kStats; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (a.booksim.stat[i][j] != b.booksim.stat[i][j]) {
        out << "booksim.stat[" << i << "][" << j << "]: " << a.booksim.stat[i][j]
            << " != " << b.booksim.stat[i][j] << "; ";
      }
    }
  }
#undef UKAI_CMP
  vec("gateway.nic_frames", a.gateway.nic_frames, b.gateway.nic_frames);
  vec("gateway.io_cpu_busy_cycles", a.gateway.io_cpu_busy_cycles, b.gateway.io_cpu_busy_cycles);
  return out.str();
}

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_POINT_RESULT_EQUAL_H_
