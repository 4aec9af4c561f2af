// libFuzzer target: the simulator's main input. The input is TOML text; each line that
// starts with "#set " (a TOML comment, so the text still parses) is also passed as a
// `--set` argument ("#set router.vcs=4"). The text and the overrides go through the config
// loader (LoadSimConfigsFromString: schema, cross-key rules, every point checked by the
// simulator's own rules, run.memory_limit), and the first point that loads is run briefly:
// at most 256 nodes, 1000 cycles, 100 measured messages, 64 MiB (BookSim2's measurement,
// measure.mode = booksim*, which keeps no cycle cap of its own: sample periods of at most 250
// cycles, at most 4 of them, 2 of warm-up, a latency threshold of at most 300 cycles).
//
// Must never crash, hang, abort or throw; a loaded config's point either runs or fails
// with a Status other than kInternal, and its figures obey the result's invariants.
// Corpus: fuzz/corpus/sim_config/ (the experiments' configs and edge cases); replayed by
// tests/sim/sim_config_fuzz_replay_test.cc under gcc, ASan and UBSan.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_lines.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"
#include "sim/topology/factory.h"

namespace {

constexpr int64_t kMaxNodes = 256;
constexpr int64_t kMaxCycles = 1000;
constexpr int64_t kMaxMeasured = 100;
constexpr int64_t kMemoryLimit = int64_t{64} << 20;

// Shrinks a loaded point to the fuzzer's bounds; false when the network is too large.
bool Bound(ukai::sim::SimConfig* c) {
  int64_t nodes = 1;
  for (int k : c->network.k) nodes *= k;
  const ukai::sim::TopologyKind kind = c->network.topology;
  if (kind == ukai::sim::TopologyKind::kGraph || kind == ukai::sim::TopologyKind::kTree) {
    ukai::Result<std::unique_ptr<ukai::sim::Topology>> t = ukai::sim::MakeTopology(c->network);
    if (!t.ok()) return false;
    nodes = (*t)->NumNodes();
  }
  if (nodes > kMaxNodes) return false;
  c->sss.operations = std::min<int64_t>(
      c->sss.operations == 0 ? kMaxMeasured * 2 : c->sss.operations, kMaxMeasured * 2);
  ukai::sim::MeasureConfig& m = c->measure;
  m.max_cycles = std::min(m.max_cycles, kMaxCycles);
  m.warmup_messages = std::min(m.warmup_messages, kMaxMeasured);
  m.measure_messages = std::min(m.measure_messages, kMaxMeasured);
  m.warmup_cycles = std::min(m.warmup_cycles, kMaxCycles / 4);
  m.sample_cycles = std::min(m.sample_cycles, kMaxCycles / 4);
  m.max_samples = std::min<int64_t>(m.max_samples, 4);
  m.warmup_periods = std::min<int64_t>(m.warmup_periods, 2);
  if (m.latency_threshold < 0 || m.latency_threshold > 300) m.latency_threshold = 300;
  if (c->run.memory_limit == 0 || c->run.memory_limit > kMemoryLimit) {
    c->run.memory_limit = kMemoryLimit;
  }
  if (c->run.threads == 0 || c->run.threads > 4) c->run.threads = 4;  // parallel, but few
  return true;
}

void CheckResult(const ukai::sim::SimConfig& c, const ukai::sim::PointResult& r) {
  // BookSim2's measurement runs its periods and drains, not to measure.max_cycles.
  const bool booksim = r.booksim.present;
  if (r.cycles < 0 || (!booksim && r.cycles > c.measure.max_cycles)) std::abort();
  if (r.messages_measured < 0) std::abort();
  if (!std::isfinite(r.accepted_flits_per_node_cycle) || r.accepted_flits_per_node_cycle < 0) {
    std::abort();
  }
  if (r.messages_measured > 0 && !(r.avg_latency_cycles >= 1)) std::abort();
  // Says why (BookSim2's measurement: its verdict).
  if (r.messages_measured == 0 && r.note.empty() && !(booksim && r.booksim.unstable)) std::abort();
  if (booksim) {
    for (const auto& stat : r.booksim.stat) {
      for (double x : stat) {
        if (!std::isfinite(x)) std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ukai::Result<std::vector<ukai::sim::SimConfig>> points = ukai::sim::LoadSimConfigsFromString(
      text, "fuzz.toml", ukai::fuzz::PrefixedLines(text, "#set "));
  if (!points.ok()) {
    if (points.status().message().empty()) std::abort();  // an error always says what
    return 0;
  }
  if (points->empty()) std::abort();
  ukai::sim::SimConfig point = points->front();
  if (!Bound(&point)) return 0;
  ukai::Result<ukai::sim::PointResult> r = ukai::sim::RunPoint(point);
  if (!r.ok()) {
    if (r.status().code() == ukai::StatusCode::kInternal) std::abort();
    return 0;
  }
  CheckResult(point, *r);
  return 0;
}
