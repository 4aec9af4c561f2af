#include "wire/link_rate.h"

#include <cmath>
#include <string>

namespace ukai::wire {

Result<LineCode> ParseLineCode(std::string_view name) {
  if (name == "8b10b") return LineCode::k8b10b;
  if (name == "none") return LineCode::kNone;
  return Status::InvalidArgument("--code: unknown line code '" + std::string(name) +
                                 "' (known: 8b10b, none)");
}

std::string_view LineCodeName(LineCode code) { return code == LineCode::k8b10b ? "8b10b" : "none"; }

Result<LinkRates> ComputeLinkRates(const LinkParams& p) {
  if (!std::isfinite(p.raw_gbps) || p.raw_gbps <= 0) {
    return Status::InvalidArgument("--raw-gbps: " + std::to_string(p.raw_gbps) +
                                   " is not a positive rate");
  }
  if (p.payload_bytes > kLinkMaxPayloadBytes) {
    return Status::InvalidArgument("--payload-bytes: " + std::to_string(p.payload_bytes) +
                                   " is more than the 4096-byte maximum payload of a packet");
  }
  if (p.switches > 1000) {
    return Status::InvalidArgument("--switches: " + std::to_string(p.switches) +
                                   " is more than 1000");
  }
  LinkRates r;
  const double code_ratio = p.code == LineCode::k8b10b ? 8.0 / 10.0 : 1.0;
  r.data_rate_bps = p.raw_gbps * 1e9 * code_ratio;
  r.overhead_bytes = kLinkHeaderTrailerBytes + kLinkBytesPerSwitch * p.switches;
  r.wire_bytes = p.payload_bytes + r.overhead_bytes;
  r.efficiency = static_cast<double>(p.payload_bytes) / r.wire_bytes;
  r.payload_rate_bps = r.data_rate_bps * r.efficiency;
  r.packets_per_second = r.data_rate_bps / (8.0 * r.wire_bytes);
  return r;
}

}  // namespace ukai::wire
