#include "sim/workload/list_source.h"

#include <algorithm>
#include <tuple>

#include "core/rng.h"
#include "sim/traffic/injection.h"
#include "sim/traffic/pattern.h"

namespace ukai::sim {

Status ListSource::Advance(int64_t now, Workload* workload) {
  while (next_ < messages_.size() && messages_[next_].earliest <= now) {
    workload->Add(this, messages_[next_++]);
  }
  return Status::Ok();
}

int64_t ListSource::NextCycle() const {
  return next_ < messages_.size() ? messages_[next_].earliest : MessageSource::kNever;
}

Result<std::vector<WorkMessage>> SyntheticMessageList(const SimConfig& config,
                                                      const Topology& topology, int64_t cycles) {
  Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(topology, config.traffic);
  if (!pattern.ok()) return pattern.status();
  const int fb = config.router.flit_bytes;
  const int flits = (config.traffic.message_bytes + fb - 1) / fb;
  Result<std::unique_ptr<InjectionProcess>> injection = MakeInjection(config.traffic, flits);
  if (!injection.ok()) return injection.status();
  std::vector<std::tuple<int64_t, int32_t, int32_t>> made;  // (cycle, src, dst)
  for (int node = 0; node < topology.NumNodes(); ++node) {
    if ((*pattern)->Idle(node)) continue;
    Rng rng = Rng::Stream(config.seed, static_cast<uint64_t>(node));
    for (int64_t t = (*injection)->First(rng); t < cycles; t = (*injection)->Next(t, rng)) {
      const int dst = (*pattern)->Destination(node, rng);
      if (dst >= 0 && topology.NodeAlive(node) && topology.NodeAlive(dst)) {
        made.emplace_back(t, node, dst);
      }
    }
  }
  std::sort(made.begin(), made.end());
  std::vector<WorkMessage> out;
  out.reserve(made.size());
  for (const auto& [t, src, dst] : made) {
    WorkMessage m;
    m.src = src;
    m.dst = dst;
    m.bytes = config.traffic.message_bytes;
    m.earliest = t;
    out.push_back(m);
  }
  return out;
}

}  // namespace ukai::sim
