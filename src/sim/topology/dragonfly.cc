#include "sim/topology/dragonfly.h"

namespace ukai::sim {
namespace {

void Params(const NetworkConfig& c, int* p, int* a, int* h) {
  *p = c.dragonfly_p;
  *a = c.dragonfly_a > 0 ? c.dragonfly_a : 2 * c.dragonfly_p;
  *h = c.dragonfly_h > 0 ? c.dragonfly_h : c.dragonfly_p;
}

}  // namespace

void Dragonfly::Size(const NetworkConfig& config, double* nodes, int* ports) {
  int p = 0, a = 0, h = 0;
  Params(config, &p, &a, &h);
  const double routers = static_cast<double>(a) * (static_cast<double>(a) * h + 1);
  *nodes = routers * (p + 1);
  *ports = p + a - 1 + h;
}

Result<std::unique_ptr<Dragonfly>> Dragonfly::Create(const NetworkConfig& config) {
  int p = 0, a = 0, h = 0;
  Params(config, &p, &a, &h);
  if (p < 1) {
    return Status::InvalidArgument(std::string("network.dragonfly_p: must be >= 1 (got ") +
                                   std::to_string(p) + ")")
        .WithKey("network.dragonfly_p");
  }
  if (a < 1 || config.dragonfly_a < 0) {
    return Status::InvalidArgument("network.dragonfly_a: must be >= 1, or 0 for 2 * p")
        .WithKey("network.dragonfly_a");
  }
  if (h < 1 || config.dragonfly_h < 0) {
    return Status::InvalidArgument("network.dragonfly_h: must be >= 1, or 0 for p")
        .WithKey("network.dragonfly_h");
  }
  if (p + a - 1 + h > 64) {
    return Status::InvalidArgument("network.dragonfly_a: routers would have " +
                                   std::to_string(p + a - 1 + h) +
                                   " network ports (p + a - 1 + h), at most 64")
        .WithKey("network.dragonfly_a");
  }
  const int64_t routers = static_cast<int64_t>(a) * (static_cast<int64_t>(a) * h + 1);
  UKAI_RETURN_IF_ERROR(CheckSize(routers * p, routers, "network.dragonfly_p"));
  std::unique_ptr<Dragonfly> t(new Dragonfly(p, a, h));
  if (config.dragonfly_local_cycles > 0) t->local_cycles_ = config.dragonfly_local_cycles;
  if (config.dragonfly_global_cycles > 0) t->global_cycles_ = config.dragonfly_global_cycles;
  return t;
}

int Dragonfly::LinkCycles(int node, int port) const {
  if (IsTerminal(node) || port < p_) return -1;
  return IsGlobalPort(port) ? global_cycles_ : local_cycles_;
}

Dragonfly::Dragonfly(int p, int a, int h)
    : SwitchTopology(p * a * (a * h + 1), a * (a * h + 1), p + a - 1 + h),
      p_(p),
      a_(a),
      h_(h),
      g_(a * h + 1) {
  for (int r = 0; r < NumRouters(); ++r) {
    for (int j = 0; j < p_; ++j) AttachTerminal(r * p_ + j, r, j);
    const int group = GroupOf(r), i = r % a_;
    for (int m = i + 1; m < a_; ++m) {
      ConnectRouters(r, LocalPort(i, m), group * a_ + m, LocalPort(m, i));
    }
    for (int c = 0; c < h_; ++c) {
      const int j = i * h_ + c;
      const int to = j < group ? j : j + 1;
      if (to < group) continue;  // joined from the lower group
      ConnectRouters(r, GlobalPort(c), GatewayRouter(to, group), GatewayPort(to, group));
    }
  }
}

std::string Dragonfly::Describe() const {
  return std::string("dragonfly (p=") + std::to_string(p_) + std::string(", a=") +
         std::to_string(a_) + std::string(", h=") + std::to_string(h_) + std::string(", ") +
         std::to_string(g_) + " groups)";
}

std::string Dragonfly::PortName(int port) const {
  if (port == PePort()) return "pe";
  if (port < p_) return std::string("t") + std::to_string(port);
  if (!IsGlobalPort(port)) return std::string("l") + std::to_string(port - p_);
  return std::string("g") + std::to_string(port - (p_ + a_ - 1));
}

int Dragonfly::RouterDistance(int a, int b) const {
  if (a == b) return 0;
  const int ga = GroupOf(a), gb = GroupOf(b);
  if (ga == gb) return 1;
  return (GatewayRouter(ga, gb) != a ? 1 : 0) + 1 + (GatewayRouter(gb, ga) != b ? 1 : 0);
}

}  // namespace ukai::sim
