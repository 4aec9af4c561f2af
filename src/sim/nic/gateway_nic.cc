#include "sim/nic/gateway_nic.h"

#include "wire/crc32.h"

namespace ukai::sim {
namespace {

std::vector<int32_t> ToNodes(const std::vector<uint32_t>& v) { return {v.begin(), v.end()}; }

}  // namespace

Result<std::vector<uint8_t>> GatewayNic::Transmit(std::span<const uint8_t> bytes) {
  Result<wire::GatewayPacket> p = wire::DecodePacket(bytes);
  if (!p.ok()) return p.status();
  if (!p->to_nic || !p->has_command || p->dst != static_cast<uint32_t>(node_)) {
    return Status::InvalidArgument("NIC at node " + std::to_string(node_) +
                                   ": outbound packet is not a send command to this NIC");
  }
  StartCall();
  trace_.push_back("S11");  // source node, source MAC, detour (external -> internal)
  const Mac src_mac = ReadMac(p->frame.data() + 6);
  std::vector<int32_t> detour = ToNodes(p->command.return_detour);
  if (!learn_detours_) {  // the detour column belongs to the setting unit: keep it
    const AddressRow* row = table_.Find(src_mac);
    detour = row != nullptr ? row->detour : std::vector<int32_t>{};
  }
  trace_.push_back("S12");
  switch (table_.Learn(src_mac, static_cast<int32_t>(p->command.src), detour)) {
    case LearnStep::kEqual:
      trace_.push_back("S13:yes");
      break;
    case LearnStep::kUpdated:
      trace_.insert(trace_.end(), {"S13:no", "S14:yes", "S15"});
      break;
    case LearnStep::kAdded:
      trace_.insert(trace_.end(), {"S13:no", "S14:no", "S16"});
      break;
  }
  trace_.push_back("S17");  // strip parts A and B
  std::vector<uint8_t> frame = std::move(p->frame);
  wire::AppendFcs(&frame);  // S2 (the preamble is not modelled: pcap has none)
  trace_.push_back("S2");
  trace_.push_back("S3");
  ++frames_transmitted_;
  return frame;
}

InboundPacket GatewayNic::Receive(std::span<const uint8_t> frame, bool has_fcs) {
  InboundPacket out;
  Receive(frame, has_fcs, &out);
  return out;
}

void GatewayNic::Receive(std::span<const uint8_t> frame, bool has_fcs, InboundPacket* out) {
  out->discarded = out->broadcast = false;
  out->node = -1;
  out->detour.clear();
  out->bytes.clear();
  ++frames_received_;
  StartCall();
  trace_.push_back("S21");
  const size_t fcs = has_fcs ? wire::kFcsBytes : 0;
  if (has_fcs) trace_.insert(trace_.end(), {"S31", "S32"});
  const bool good = frame.size() >= wire::kMinFrameBytes + fcs &&
                    frame.size() - fcs <= wire::kMaxFrameBytes && (!has_fcs || wire::FcsOk(frame));
  if (!good) {
    trace_.push_back("S33");
    ++fcs_discarded_;
    out->discarded = true;
    return;
  }
  trace_.push_back("S34");
  const AddressRow* row = table_.Find(ReadMac(frame.data()));
  wire::GatewayPacket p;  // Part C: the frame without its FCS, encoded from `frame` itself
  p.inbound = true;
  if (row != nullptr) {
    trace_.insert(trace_.end(), {"S35:yes", "S36"});
    out->node = row->node;
    out->detour.assign(row->detour.begin(), row->detour.end());
    p.dst = static_cast<uint32_t>(row->node);
    p.detour.assign(row->detour.begin(), row->detour.end());
  } else {
    trace_.insert(trace_.end(), {"S35:no", "S37"});
    out->broadcast = true;
    p.broadcast = true;
    p.dst = wire::kBroadcastNode;
    ++broadcasts_;
  }
  trace_.push_back("S23");
  // The fields are checked above: always encodable (else BadResultAccess, as value()).
  const Status encoded = wire::EncodePacketInto(p, frame.first(frame.size() - fcs), &out->bytes);
  if (!encoded.ok()) throw BadResultAccess(encoded);
  trace_.push_back("S24");
}

}  // namespace ukai::sim
