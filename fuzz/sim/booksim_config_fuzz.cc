// libFuzzer target: the BookSim2 config reader (sim/experiment/booksim_reader.h). The input is
// BookSim2 text; each line that starts with "//set " (a comment, so the text still parses) is
// also passed as a BookSim2 command-line override ("//set k=4"). The text goes through
// AppendBooksimOverrides, the reader and the front door (LoadSimConfigsFromString), and the
// first point that loads is run briefly: at most 64 nodes, sample periods of at most 100
// cycles, at most 4 of them, a latency threshold of at most 300 cycles, 64 MiB.
//
// Must never crash, hang, abort or throw; an error always names what is wrong; a loaded
// point runs or fails with a Status other than kInternal, and BookSim2's figures are finite.
// Corpus: fuzz/corpus/booksim_config/; replayed by tests/sim/booksim_fuzz_replay_test.cc.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_lines.h"
#include "sim/experiment/booksim_reader.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"

namespace {

bool Bound(ukai::sim::SimConfig* c) {
  int64_t nodes = 1;
  for (int k : c->network.k) nodes *= k;
  if (nodes > 64) return false;
  ukai::sim::MeasureConfig& m = c->measure;
  m.sample_cycles = std::min<int64_t>(m.sample_cycles, 100);
  m.max_samples = std::min<int64_t>(m.max_samples, 4);
  m.warmup_periods = std::min<int64_t>(m.warmup_periods, 2);
  m.max_cycles = std::min<int64_t>(m.max_cycles, 2000);
  m.warmup_messages = std::min<int64_t>(m.warmup_messages, 100);
  m.measure_messages = std::min<int64_t>(m.measure_messages, 100);
  if (m.latency_threshold < 0 || m.latency_threshold > 300) m.latency_threshold = 300;
  c->run.memory_limit = int64_t{64} << 20;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ukai::Result<std::string> with =
      ukai::sim::AppendBooksimOverrides(text, ukai::fuzz::PrefixedLines(text, "//set "));
  if (!with.ok()) {
    if (with.status().message().empty()) std::abort();
    return 0;
  }
  ukai::Result<ukai::config::RawConfig> raw = ukai::sim::ReadBooksimConfig(*with, "fuzz.cfg");
  if (!raw.ok() && raw.status().message().empty()) std::abort();
  ukai::Result<std::vector<ukai::sim::SimConfig>> points =
      ukai::sim::LoadSimConfigsFromString(*with, "fuzz.cfg", {});
  if (!points.ok()) {
    if (points.status().message().empty()) std::abort();
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
  for (const auto& stat : r->booksim.stat) {
    for (double v : stat) {
      if (!std::isfinite(v) || v < 0) std::abort();
    }
  }
  return 0;
}
