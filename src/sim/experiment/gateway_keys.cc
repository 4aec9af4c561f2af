#include "sim/experiment/gateway_keys.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/config/enum_names.h"

namespace ukai::sim {
namespace {

using config::EnumName;
using config::FromName;
using config::KeySpec;
using config::Names;
using config::Scalar;
using config::Shape;
using config::ToName;
using config::ValueType;
using Items = std::vector<Scalar>;
using Binding = ConfigBinding;

constexpr double kCycleMax = double(int64_t{1} << 50);  // the engine's limit on counts

constexpr EnumName<DetourPolicy> kDetourPolicies[] = {{DetourPolicy::kNone, "none"},
                                                      {DetourPolicy::kLearned, "learned"},
                                                      {DetourPolicy::kManaged, "managed"},
                                                      {DetourPolicy::kPreloaded, "preloaded"}};
constexpr EnumName<CpuDirections> kCpuDirections[] = {{CpuDirections::kBoth, "both"},
                                                      {CpuDirections::kIngress, "ingress"}};
constexpr EnumName<DetourSwitchKind> kDetourSwitches[] = {
    {DetourSwitchKind::kAware, "aware"}, {DetourSwitchKind::kDetector, "detector"}};

}  // namespace

// The group topology and via-node detour keys (docs/gateway.md).
std::vector<Binding> GatewayBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("network.groups", VT::kInt)
           .Min(1)
           .Max(1 << 20)
           .Doc("group topology: number of groups G (a ring of G across groups)"),
       [](const Items& v, SimConfig* c) { c->network.groups = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.groups); }},
      {KeySpec::Make("network.group_size", VT::kInt)
           .Unit("nodes")
           .Min(1)
           .Max(30)
           .Doc("group topology: nodes S per group, fully connected; node <g>G<i> has "
                "index (g-1)*S + i"),
       [](const Items& v, SimConfig* c) { c->network.group_size = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.group_size); }},
      {KeySpec::Make("routing.detour_switch", VT::kEnum)
           .Allowed(Names(kDetourSwitches))
           .Doc("dor-detour: aware = every router knows the faults and a message switches "
                "to its via nodes where its normal path first crosses one; detector = the "
                "router next to the fault switches it"),
       [](const Items& v, SimConfig* c) {
         c->routing.detour_switch = FromName(kDetourSwitches, v[0]);
       },
       [](const SimConfig& c) {
         return std::string(ToName(kDetourSwitches, c.routing.detour_switch));
       }},
  };
}

bool Bool(const Scalar& s) { return std::get<bool>(s); }
std::string StrList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
  return s + "]";
}

// The gateway model's keys (nic/nic_config.h, docs/gateway.md).
std::vector<Binding> NicBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("nic.enabled", VT::kString, Shape::kList)
           .Doc("the enable register at start (nic.jobs changes it): nodes whose NIC is "
                "enabled (I/O nodes), by name (\"3G0\"), coordinates name (\"3,4\") or number"),
       [](const Items& v, SimConfig* c) {
         c->nic.enabled.clear();
         for (const Scalar& s : v) c->nic.enabled.push_back(Str(s));
       },
       [](const SimConfig& c) { return StrList(c.nic.enabled); }},
      {KeySpec::Make("nic.management_node", VT::kString)
           .Doc("the node the management node is attached to (Fig. 5: 2G2)"),
       [](const Items& v, SimConfig* c) { c->nic.management_node = Str(v[0]); },
       [](const SimConfig& c) { return c.nic.management_node; }},
      {KeySpec::Make("nic.detours", VT::kEnum)
           .Allowed(Names(kDetourPolicies))
           .Doc("where the NICs' detours come from: none, learned (outgoing packets), managed "
                "(management node after a fault), preloaded (every node at start)"),
       [](const Items& v, SimConfig* c) { c->nic.detours = FromName(kDetourPolicies, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kDetourPolicies, c.nic.detours)); }},
      {KeySpec::Make("nic.frames", VT::kInt)
           .Unit("frames")
           .Min(0)
           .Max(kCycleMax)
           .Doc("ingress frames generated internally (0: none); > 0 or nic.egress_rate > 0 "
                "runs the gateway model"),
       [](const Items& v, SimConfig* c) { c->nic.frames = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.frames); }},
      {KeySpec::Make("nic.ingress_rate", VT::kFloat)
           .Unit("frames/cycle")
           .Min(0, true)
           .Max(1)
           .Doc("arrival rate of internally generated ingress frames (Poisson)"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_rate = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.ingress_rate); }},
      {KeySpec::Make("nic.ingress_frame_bytes", VT::kInt)
           .Unit("bytes")
           .Min(22)
           .Max(9018)
           .Doc("size of internally generated ingress frames, FCS excluded"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_frame_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.ingress_frame_bytes); }},
      {KeySpec::Make("nic.bad_fcs_fraction", VT::kFloat)
           .Min(0)
           .Max(1)
           .Doc("share of internally generated ingress frames with a wrong FCS"),
       [](const Items& v, SimConfig* c) { c->nic.bad_fcs_fraction = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.bad_fcs_fraction); }},
      {KeySpec::Make("nic.egress_rate", VT::kFloat)
           .Unit("frames/node/cycle")
           .Min(0)
           .Max(1)
           .Doc("frames each compute node sends to the outside (Bernoulli per cycle)"),
       [](const Items& v, SimConfig* c) { c->nic.egress_rate = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.egress_rate); }},
      {KeySpec::Make("nic.egress_frame_bytes", VT::kInt)
           .Unit("bytes")
           .Min(22)
           .Max(9018)
           .Doc("size of egress frames, FCS excluded"),
       [](const Items& v, SimConfig* c) { c->nic.egress_frame_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.egress_frame_bytes); }},
      {KeySpec::Make("nic.egress_frames", VT::kInt)
           .Unit("frames")
           .Min(0)
           .Max(kCycleMax)
           .Doc("stop generating egress frames after this many (0: no cap)"),
       [](const Items& v, SimConfig* c) { c->nic.egress_frames = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.egress_frames); }},
      {KeySpec::Make("nic.notify_delay_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(kCycleMax)
           .Doc("delay from a node's failure or repair to the management node's notification"),
       [](const Items& v, SimConfig* c) { c->nic.notify_delay_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.notify_delay_cycles); }},
      {KeySpec::Make("nic.cpu_cycles_per_frame", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(kCycleMax)
           .Doc("> 0: the Fig. 1 baseline, each frame occupies the I/O node's CPU this long "
                "(one frame at a time); 0: the patent's NIC on the router"),
       [](const Items& v, SimConfig* c) { c->nic.cpu_cycles_per_frame = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.cpu_cycles_per_frame); }},
      {KeySpec::Make("nic.cpu_directions", VT::kEnum)
           .Allowed(Names(kCpuDirections))
           .Doc("the frames the Fig. 1 baseline's I/O CPU handles: both (ingress and egress, "
                "as the patent's Fig. 1) or ingress (inbound frames only)"),
       [](const Items& v, SimConfig* c) { c->nic.cpu_directions = FromName(kCpuDirections, v[0]); },
       [](const SimConfig& c) {
         return std::string(ToName(kCpuDirections, c.nic.cpu_directions));
       }},
      {KeySpec::Make("nic.retransmit", VT::kBool)
           .Doc("re-send lost frames from their source, as TCP would: ingress frames from the "
                "external switch, egress frames from their compute node"),
       [](const Items& v, SimConfig* c) { c->nic.retransmit = Bool(v[0]); },
       [](const SimConfig& c) { return std::string(c.nic.retransmit ? "true" : "false"); }},
      {KeySpec::Make("nic.retransmit_timeout_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("a lost frame is re-sent this long after its loss"),
       [](const Items& v, SimConfig* c) { c->nic.retransmit_timeout_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.retransmit_timeout_cycles); }},
      {KeySpec::Make("nic.retransmit_max", VT::kInt)
           .Min(1)
           .Max(1000)
           .Doc("tries per frame (the first included) before it counts as lost"),
       [](const Items& v, SimConfig* c) { c->nic.retransmit_max = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.retransmit_max); }},
      {KeySpec::Make("nic.macs", VT::kString, Shape::kList)
           .Doc("per-node MACs over the default 02:00:00:00:HH:LL (node index in hex): "
                "[\"3G2=02:aa:00:00:00:01\"]"),
       [](const Items& v, SimConfig* c) {
         c->nic.macs.clear();
         for (const Scalar& s : v) c->nic.macs.push_back(Str(s));
       },
       [](const SimConfig& c) { return StrList(c.nic.macs); }},
      {KeySpec::Make("nic.ingress_pcap", VT::kString)
           .Doc("pcap capture (Ethernet) of ingress frames with timestamps, read streaming; "
                "replaces nic.frames; the run lasts until every frame is delivered, "
                "discarded or lost"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_pcap = Str(v[0]); },
       [](const SimConfig& c) { return c.nic.ingress_pcap; }},
      {KeySpec::Make("nic.ingress_fcs", VT::kBool)
           .Doc("the capture's frames end in their FCS (checked: S31-S33); false: taken as "
                "good"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_fcs = Bool(v[0]); },
       [](const SimConfig& c) { return std::string(c.nic.ingress_fcs ? "true" : "false"); }},
      {KeySpec::Make("nic.egress_pcap", VT::kString)
           .Doc("write the frames leaving through the NICs (with their FCS) to this pcap file"),
       [](const Items& v, SimConfig* c) { c->nic.egress_pcap = Str(v[0]); },
       [](const SimConfig& c) { return c.nic.egress_pcap; }},
      {KeySpec::Make("nic.pcap_cycles_per_second", VT::kFloat)
           .Unit("cycles/s")
           .Min(1)
           .Max(1e15)
           .Doc("capture time to cycles: a frame's cycle = seconds since the first frame x "
                "this"),
       [](const Items& v, SimConfig* c) { c->nic.pcap_cycles_per_second = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.pcap_cycles_per_second); }},
      {KeySpec::Make("nic.internal_traffic", VT::kBool)
           .Doc("run the traffic.* synthetic traffic beside the external traffic"),
       [](const Items& v, SimConfig* c) { c->nic.internal_traffic = Bool(v[0]); },
       [](const SimConfig& c) { return std::string(c.nic.internal_traffic ? "true" : "false"); }},
  };
}

std::string_view DetourPolicyName(DetourPolicy d) { return ToName(kDetourPolicies, d); }

}  // namespace ukai::sim
