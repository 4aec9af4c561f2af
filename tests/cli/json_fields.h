// The JSON fields every `ukai sim run --format json` point must carry (issue 2's list plus
// the swept parameters and the remaining PointResult fields). Shared by the in-process and
// the end-to-end CLI tests.
#ifndef UKAI_TESTS_CLI_JSON_FIELDS_H_
#define UKAI_TESTS_CLI_JSON_FIELDS_H_

namespace ukai::testing_util {

inline constexpr const char* kRequiredJsonFields[] = {
    "topology",
    "k",
    "n",
    "routing",
    "pattern",
    "message_bytes",
    "offered_flits_per_node_cycle",
    "accepted_flits_per_node_cycle",
    "avg_latency_cycles",
    "p99_latency_cycles",
    "avg_network_latency_cycles",
    "avg_hops",
    "messages_measured",
    "cycles",
    "saturated",
    "wall_seconds",
    "rate",
    "interval",
    "seed",
    "vcs",
    "clock_mhz",
    "p50_latency_cycles",
    "max_latency_cycles",
    "accepted_bytes_per_second",
    "bandwidth_mbytes_per_second",
    "recovered_messages",
    "recovery_ratio",
    "table_messages",
    "table_ratio",
    "misrouted_hops",
    "avg_misrouted_hops",
    "undeliverable_messages",
    "not_generated_messages",
    "retransmitted_messages",
    "discarded_messages",
    "reconfigurations",
    "reconfiguration_cycles",
    "reconfiguration_regions",
    "cancelled_root_candidates",
    "note",
    "latency_trend",
};

}  // namespace ukai::testing_util

#endif  // UKAI_TESTS_CLI_JSON_FIELDS_H_
