// ukai_ud_load: how much UD-VC traffic a reconfiguration meets, to size the model's
// simplification that reconfiguration control messages take reconfig.hop_cycles per hop
// WITHOUT contention (docs/simulator.md, "Reconfiguration").
//
// For every point of CONFIG.toml (detour-ud with faults.events) it runs `cycles` cycles with
// traffic and prints, for the cycles while a reconfiguration runs and for the others:
//   - ud_load: flits moved on the UD-VC (the highest VC) of network channels per live
//     channel (one direction) per cycle;
//   - ud_busy_channels: heads switched onto a UD-VC per live channel per cycle;
//   - ud_occupied: the share of live channels whose UD-VC input buffer (at the far end)
//     holds a flit — where a control message on the UD-VC would queue behind a message;
// and the control hops the protocol's messages would make (one hop per reconfiguration
// message received — adopted or stopped — plus the completion reduction and the restart,
// one hop per tree edge each), with their load per live channel per cycle if each were
// one flit.
//
// Usage: ukai_ud_load CONFIG.toml [cycles] [key=value ...]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/network.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"

namespace ukai::sim {
namespace {

struct Window {
  int64_t cycles = 0, ud_flits = 0, busy_channel_cycles = 0, occupied_channel_cycles = 0;
};

// Live channels whose UD-VC input buffer at the far end holds a flit.
int64_t Occupied(const Network& net, int ud) {
  const Topology& t = net.topology();
  int64_t n = 0;
  for (int v = 0; v < t.NumNodes(); ++v) {
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      n += far.valid() && net.BufferedFlits(far.node, far.port, ud) > 0;
    }
  }
  return n;
}

int64_t ControlHops(const ReconfigPlan& p) {
  int64_t hops = 0, nodes = 0;
  for (const ReconfigWave& w : p.waves) {
    for (size_t v = 0; v < w.arrive.size(); ++v) hops += w.arrive[v] >= 0 && int(v) != w.root;
  }
  for (int64_t u : p.update) nodes += u >= 0;
  return hops + 2 * (nodes - 1);  // + completion up the tree + restart down it
}

int LiveChannels(const Network& net) {
  const Topology& t = net.topology();
  int live = 0;
  for (int v = 0; v < t.NumNodes(); ++v) {
    for (int p = 0; p < t.NumNetworkPorts(); ++p) live += t.LiveNeighbor(v, p).valid();
  }
  return live;
}

int RunLoadPoint(const SimConfig& config, int64_t cycles) {
  Result<std::unique_ptr<Network>> made = Network::Create(config);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
    return 2;
  }
  Network& net = **made;
  const int ud = config.router.vcs - 1, ports = net.topology().NumNetworkPorts();
  Window in, out;
  std::set<std::pair<int, int>> busy;  // (node, port) whose UD-VC moved a head this cycle
  int64_t ud_flits = 0;
  net.SetHopObserver([&](const HopEvent& e) {
    if (e.out_port >= ports || e.out_vc != ud) return;
    ud_flits += net.message(e.msg).length;
    busy.insert({e.node, e.out_port});
  });
  int64_t control = 0;
  bool was = false;
  while (net.now() < cycles) {
    ud_flits = 0;
    busy.clear();
    net.Step();
    Window& w = net.reconfiguring() ? in : out;
    ++w.cycles;
    w.ud_flits += ud_flits;
    w.busy_channel_cycles += static_cast<int64_t>(busy.size());
    w.occupied_channel_cycles += Occupied(net, ud);
    if (was && !net.reconfiguring()) control += ControlHops(net.reconfig_plan());
    was = net.reconfiguring();
  }
  const double live = LiveChannels(net);
  auto per = [&](int64_t x, int64_t c) { return c > 0 ? static_cast<double>(x) / live / c : 0.0; };
  std::printf(
      "rate %.3f pattern %s: reconfigurations %lld, cycles reconfiguring %lld / other %lld\n"
      "  ud_load (flits/channel/cycle): reconfiguring %.5f, other %.5f\n"
      "  ud_busy_channels (head moves/channel/cycle): reconfiguring %.5f, other %.5f\n"
      "  ud_occupied (channels whose UD-VC buffer holds a flit): reconfiguring %.5f, other %.5f\n"
      "  control hops %lld = %.5f flits/channel/cycle while reconfiguring (1 flit each)\n",
      config.traffic.rate, config.traffic.pattern.c_str(),
      static_cast<long long>(net.reconfigurations()), static_cast<long long>(in.cycles),
      static_cast<long long>(out.cycles), per(in.ud_flits, in.cycles),
      per(out.ud_flits, out.cycles), per(in.busy_channel_cycles, in.cycles),
      per(out.busy_channel_cycles, out.cycles), per(in.occupied_channel_cycles, in.cycles),
      per(out.occupied_channel_cycles, out.cycles), static_cast<long long>(control),
      per(control, in.cycles));
  return 0;
}

}  // namespace
}  // namespace ukai::sim

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ukai_ud_load CONFIG.toml [cycles] [key=value ...]\n");
    return 2;
  }
  const int64_t cycles = argc > 2 ? std::atoll(argv[2]) : 30000;
  std::vector<std::string> overrides(argv + std::min(argc, 3), argv + argc);
  ukai::Result<std::vector<ukai::sim::SimConfig>> configs =
      ukai::sim::LoadSimConfigs(argv[1], overrides);
  if (!configs.ok() || cycles <= 0) {
    std::fprintf(stderr, "%s\n",
                 configs.ok() ? "cycles: must be > 0" : configs.status().ToString().c_str());
    return 2;
  }
  for (const ukai::sim::SimConfig& c : *configs) {
    if (const int rc = ukai::sim::RunLoadPoint(c, cycles); rc != 0) return rc;
  }
  return 0;
}
