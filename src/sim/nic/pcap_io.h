// Real captures in and out of the gateway model, through libpcap: a streaming FrameSource
// reading Ethernet frames with their timestamps from a pcap file (nic.ingress_pcap), a
// FrameSink writing egress frames (with their FCS) to a pcap file (nic.egress_pcap), and
// a generator of valid synthetic captures (tests, the demo).
//
// Streaming: one frame is held at a time (libpcap reads the file sequentially), so memory
// does not grow with the capture's size. Time: a frame's cycle is (its timestamp - the
// first frame's timestamp) x cycles_per_second, rounded down; written frames get the
// timestamp cycle / cycles_per_second. Captures are read with nanosecond precision.
//
// Errors name the file and, for a frame, its 1-based number in the capture: not a pcap
// file, a link type other than Ethernet, a truncated file, a frame captured only in part
// (snap length), a frame too long, timestamps going backwards.
//
// Thread safety: none; one object per file.
#ifndef UKAI_SIM_NIC_PCAP_IO_H_
#define UKAI_SIM_NIC_PCAP_IO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/nic/gateway.h"

namespace ukai::sim {

// Opens `path` for reading. `has_fcs`: every frame ends in its FCS (nic.ingress_fcs).
Result<std::unique_ptr<FrameSource>> OpenPcapSource(const std::string& path,
                                                    double cycles_per_second, bool has_fcs);

// Creates (truncates) `path` for writing Ethernet frames.
Result<std::unique_ptr<FrameSink>> OpenPcapSink(const std::string& path, double cycles_per_second);

// Writes `frames` synthetic frames (frame_bytes each, FCS excluded; with the FCS appended
// when `with_fcs`) to `path`, addressed uniformly to `dst_macs`, arriving at `rate` frames
// per cycle, timestamps at `cycles_per_second`; a share `bad_fcs` has a wrong FCS.
Status WriteSyntheticPcap(const std::string& path, const std::vector<Mac>& dst_macs, int64_t frames,
                          int frame_bytes, double rate, bool with_fcs, double bad_fcs,
                          double cycles_per_second, uint64_t seed);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_PCAP_IO_H_
