// RunGatewayPoint: runs one point of the gateway model (nic.* traffic, docs/gateway.md):
// until every ingress frame is delivered, discarded or lost and every gateway message has
// arrived (or measure.max_cycles, which marks the point saturated). The internal traffic
// (traffic.*) runs beside and its messages fill the usual latency fields.
// Errors: config errors naming the key, a frame source's error, kDeadlock.
// Thread safety: owns its whole simulation.
#ifndef UKAI_SIM_NIC_RUN_GATEWAY_H_
#define UKAI_SIM_NIC_RUN_GATEWAY_H_

#include <functional>
#include <memory>

#include "core/status.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"
#include "sim/nic/gateway.h"

namespace ukai::sim {

// `source`/`sink` as in Gateway::Create (null: internal frames / no capture).
Result<PointResult> RunGatewayPoint(const SimConfig& config,
                                    const std::function<void(int64_t, int64_t)>& progress,
                                    std::unique_ptr<FrameSource> source = {},
                                    std::unique_ptr<FrameSink> sink = {});

// Opens nic.ingress_pcap into `*source` and nic.egress_pcap into `*sink` where the config
// names them and the pointer is still null (under MPI only the writing rank opens the
// sink). Errors: the capture's, naming the file.
Status OpenGatewayCaptures(const SimConfig& config, std::unique_ptr<FrameSource>* source,
                           std::unique_ptr<FrameSink>* sink);

// The gateway's figures after `cycles` cycles (the busiest I/O CPU's share is over them).
void FillGatewayFigures(const Gateway& g, int64_t cycles, GatewayFigures* f);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_RUN_GATEWAY_H_
