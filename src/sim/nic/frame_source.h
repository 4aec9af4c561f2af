// Synthetic Ethernet frames: the internal ingress generator of the gateway model
// (nic.frames, nic.ingress_rate, nic.ingress_frame_bytes, nic.bad_fcs_fraction) and the
// frame builder the egress traffic and the pcap generator use.
//
// Frames: destination MAC, source MAC, EtherType 0x88B5 (IEEE local experimental), then a
// payload whose first 8 bytes are the frame's sequence number (big-endian) and the rest a
// byte pattern; the FCS is appended (and, for a "bad" frame, its last byte inverted).
// Arrivals: exponential gaps of mean 1 / rate cycles (a Poisson process), rounded up.
//
// Thread safety: none.
#ifndef UKAI_SIM_NIC_FRAME_SOURCE_H_
#define UKAI_SIM_NIC_FRAME_SOURCE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/nic/address_table.h"
#include "sim/nic/gateway.h"

namespace ukai::sim {

inline constexpr uint16_t kExperimentalEtherType = 0x88B5;
inline constexpr Mac kExternalMacBase = 0x525400000000ULL;  // 52:54:00:...: outside hosts

// A frame of `bytes` bytes (>= 14 + 8, FCS excluded) from `src` to `dst` carrying `seq`;
// with its FCS when `fcs`.
std::vector<uint8_t> BuildFrame(Mac dst, Mac src, uint64_t seq, int bytes, bool fcs);

// `count` frames to MACs drawn uniformly from `dst_macs`, from external hosts, at `rate`
// frames per cycle, `bytes` bytes each (+ FCS); a share `bad_fcs` has a wrong FCS.
std::unique_ptr<FrameSource> MakeSyntheticSource(std::vector<Mac> dst_macs, int64_t count,
                                                 double rate, int bytes, double bad_fcs,
                                                 uint64_t seed);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_FRAME_SOURCE_H_
