// Link-rate accounting for a packet link (spec/rma-nic.md, "Switches and links"): the data
// rate left after the line code, the efficiency of a packet (payload over bytes on the wire)
// and the packet rate. Header and trailer cost 30 B + 2 B per switch on the route (the
// paper's figure for its source-routed packets); a packet carries at most 4096 B of payload.
//
// Units: rates in bits per second unless the name says otherwise; sizes in bytes.
// Thread safety: pure functions.
#ifndef UKAI_WIRE_LINK_RATE_H_
#define UKAI_WIRE_LINK_RATE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ukai::wire {

inline constexpr uint32_t kLinkHeaderTrailerBytes = 30;
inline constexpr uint32_t kLinkBytesPerSwitch = 2;
inline constexpr uint32_t kLinkMaxPayloadBytes = 4096;

enum class LineCode { k8b10b, kNone };

// "8b10b" or "none"; kInvalidArgument naming the value otherwise.
Result<LineCode> ParseLineCode(std::string_view name);
std::string_view LineCodeName(LineCode code);

struct LinkParams {
  double raw_gbps = 1.0625;  // line rate, code bits included (the paper: 53.125 MHz x 20 bits)
  LineCode code = LineCode::k8b10b;
  uint32_t payload_bytes = 4;  // the paper's example: a 4-byte remote write
  uint32_t switches = 1;
};

struct LinkRates {
  double data_rate_bps = 0;       // raw rate x (8/10 for 8b/10b)
  uint32_t overhead_bytes = 0;    // header + trailer
  uint32_t wire_bytes = 0;        // payload + overhead
  double efficiency = 0;          // payload / wire bytes
  double payload_rate_bps = 0;    // data rate x efficiency
  double packets_per_second = 0;  // data rate / (wire bytes x 8)
};

// kInvalidArgument (naming the parameter and value) for a non-positive or non-finite raw
// rate, a payload above kLinkMaxPayloadBytes or more than 1000 switches.
Result<LinkRates> ComputeLinkRates(const LinkParams& p);

}  // namespace ukai::wire

#endif  // UKAI_WIRE_LINK_RATE_H_
