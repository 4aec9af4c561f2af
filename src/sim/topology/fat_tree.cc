#include "sim/topology/fat_tree.h"

#include <cmath>

namespace ukai::sim {

void FatTree::Size(const NetworkConfig& config, double* nodes, int* ports) {
  const double k = config.k.empty() ? 2 : config.k[0];
  *nodes = std::pow(k, config.n) + config.n * std::pow(k, config.n - 1);
  *ports = 2 * static_cast<int>(k);
}

Result<std::unique_ptr<FatTree>> FatTree::Create(const NetworkConfig& config) {
  if (config.k.empty()) {
    return Status::InvalidArgument("network.k: the fat tree needs its arity k")
        .WithKey("network.k");
  }
  const int k = config.k[0];
  for (int other : config.k) {
    if (other != k) {
      return Status::InvalidArgument(
                 "network.k: the fat tree has one arity k (give one int, or the same int for "
                 "every level)")
          .WithKey("network.k");
    }
  }
  if (k < 2 || 2 * k > 64) {
    return Status::InvalidArgument("network.k: the fat tree's arity must be 2..32 (got " +
                                   std::to_string(k) + ")")
        .WithKey("network.k");
  }
  const int n = config.n;
  double terminals = std::pow(static_cast<double>(k), n);
  if (terminals > double(int64_t{1} << 21)) terminals = double(int64_t{1} << 21);
  UKAI_RETURN_IF_ERROR(CheckSize(static_cast<int64_t>(terminals),
                                 static_cast<int64_t>(terminals / k * n), "network.k"));
  return std::unique_ptr<FatTree>(new FatTree(k, n));
}

namespace {

int IntPow(int k, int e) {
  int r = 1;
  for (int i = 0; i < e; ++i) r *= k;
  return r;
}

}  // namespace

FatTree::FatTree(int k, int n)
    : SwitchTopology(IntPow(k, n), n * IntPow(k, n - 1), 2 * k),
      k_(k),
      n_(n),
      per_level_(IntPow(k, n - 1)) {
  for (int e = 0; e <= n; ++e) pow_.push_back(IntPow(k, e));
  for (int l = 0; l < n_; ++l) {
    for (int pos = 0; pos < per_level_; ++pos) {
      const int r = l * per_level_ + pos;
      if (l == n_ - 1) {
        for (int j = 0; j < k_; ++j) AttachTerminal(pos * k_ + j, r, j);
        continue;
      }
      const int weight = pow_[n_ - 2 - l];  // digit l of pos
      const int digit = (pos / weight) % k_;
      for (int j = 0; j < k_; ++j) {
        const int child = (l + 1) * per_level_ + pos + (j - digit) * weight;
        ConnectRouters(r, j, child, UpPort(digit));
      }
    }
  }
}

std::string FatTree::Describe() const {
  return std::to_string(k_) + std::string("-ary ") + std::to_string(n_) + "-tree";
}

std::string FatTree::PortName(int port) const {
  if (port == PePort()) return "pe";
  return (IsUpPort(port) ? "up" : "down") + std::to_string(IsUpPort(port) ? port - k_ : port);
}

}  // namespace ukai::sim
