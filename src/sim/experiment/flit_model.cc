#include "sim/experiment/flit_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <new>
#include <ostream>
#include <set>
#include <string>
#include <utility>

#include "sim/experiment/config_schema.h"
#include "sim/experiment/flit_fields.h"
#include "sim/experiment/workload_keys.h"
#include "sim/routing/cdg_check.h"
#include "sim/topology/factory.h"

namespace ukai::sim {
namespace {

// Runs one point; an allocation failure that escapes the runner ends this point only.
Result<PointResult> RunGuarded(const PointRunner& run_point, const SimConfig& point,
                               const ProgressFn& progress) {
  try {
    return run_point ? run_point(point, progress) : RunPoint(point, progress);
  } catch (const std::bad_alloc&) {
    return Status::Unavailable("out of memory while simulating the point");
  }
}

// What the deadlock check depends on: the network, the routing with its options, VCs and
// root, the switching (atomic VCs) and the faults' seed.
std::string CheckKey(const SimConfig& c) {
  return fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {}", static_cast<int>(c.network.topology),
                     fmt::join(c.network.k, ","), c.routing.algorithm, c.router.vcs, c.routing.root,
                     c.faults.any() ? c.seed : 0, static_cast<int>(c.routing.dor_tie),
                     static_cast<int>(c.routing.dor_dateline),
                     static_cast<int>(c.routing.duato_atomic), static_cast<int>(c.router.switching),
                     static_cast<int>(c.routing.min_adapt_candidates),
                     c.routing.valiant_via_destination, static_cast<int>(c.routing.dragonfly_vcs));
}

class FlitExperiment : public Experiment {
 public:
  explicit FlitExperiment(std::vector<SimConfig> points) : points_(std::move(points)) {}

  const std::vector<SimConfig>& points() const { return points_; }

  std::vector<output::TableColumn> TableColumns() const override {
    return FlitTableColumns(points_);
  }

  bool SplitsAcrossRanks() const override { return true; }

  Status Run(const RunEnv& env) const override {
    const size_t total = points_.size();
    std::string last_note;
    for (size_t i = 0; i < total; ++i) {
      SimConfig point = points_[i];
      point.run.ranks = env.ranks;
      const std::string label = PointLabel(point);
      const std::string head = fmt::format("[{}/{}] {}", i + 1, total, label);
      if (env.progress) env.progress->Force(head);
      ProgressFn on_progress = [&](int64_t cycle, int64_t measured) {
        if (env.progress) {
          env.progress->Update(
              fmt::format("{}: cycle {}, {} messages measured", head, cycle, measured));
        }
      };
      Result<PointResult> result = RunGuarded(env.run_point, point, on_progress);
      if (env.progress) env.progress->Clear();
      // How the point was partitioned, when not as asked (said once per change).
      if (result.ok() && env.notes != nullptr && !result->partition_note.empty() &&
          result->partition_note != last_note) {
        *env.notes << "ukai sim run: point " << i + 1 << ": " << result->partition_note << '\n'
                   << std::flush;
        last_note = result->partition_note;
      }
      if (!result.ok()) {
        return Status(result.status().code(),
                      fmt::format("point {} of {} ({}): {}{}", i + 1, total, label,
                                  result.status().ToString(),
                                  i == 0 ? "" : fmt::format(" ({} earlier points written)", i)))
            .WithKey(result.status().key());
      }
      UKAI_RETURN_IF_ERROR(env.writer->Write(PointRecord(i, point, *result)));
    }
    return Status::Ok();
  }

  Result<bool> CheckDeadlockFreedom(std::ostream* out) const override {
    std::set<std::string> done;
    bool all = true;
    for (size_t i = 0; i < points_.size(); ++i) {
      const SimConfig& c = points_[i];
      if (!done.insert(CheckKey(c)).second) continue;
      Result<CdgReport> rep = sim::CheckDeadlockFreedom(c);
      if (!rep.ok()) return rep.status();
      *out << fmt::format("point {}: routing {}, router.vcs {}, seed {}: {}\n", i,
                          c.routing.algorithm, c.router.vcs, c.seed, rep->text);
      all = all && rep->ok;
    }
    return all;
  }

 private:
  std::vector<SimConfig> points_;
};

}  // namespace

std::string PointLabel(const SimConfig& c) {
  if (c.workload.active()) {  // docs/workloads.md
    return fmt::format("routing={} workload={} file={} seed={}", c.routing.algorithm,
                       WorkloadKindName(c.workload.kind), c.workload.file, c.seed);
  }
  std::string load = UsesRate(c.traffic.injection) ? fmt::format("rate={}", c.traffic.rate)
                                                   : fmt::format("interval={}", c.traffic.interval);
  return fmt::format("routing={} pattern={} message_bytes={} {} seed={}", c.routing.algorithm,
                     c.traffic.pattern, c.traffic.message_bytes, load, c.seed);
}

std::vector<TopologyChoice> FlitTopologies() {
  std::vector<TopologyChoice> out;
  for (const TopologyEntry& t : Topologies()) out.push_back({t.name, t.doc});
  return out;
}

Result<std::unique_ptr<Experiment>> PrepareFlit(const config::ConfigValues& values) {
  Result<std::vector<SimConfig>> points = ExpandSimConfigs(values);
  if (!points.ok()) return points.status();
  return MakeFlitExperiment(std::move(*points));
}

std::unique_ptr<Experiment> MakeFlitExperiment(std::vector<SimConfig> points) {
  return std::make_unique<FlitExperiment>(std::move(points));
}

const std::vector<SimConfig>* FlitPoints(const Experiment& experiment) {
  const auto* flit = dynamic_cast<const FlitExperiment*>(&experiment);
  return flit == nullptr ? nullptr : &flit->points();
}

std::string DescribeFlitMore(bool markdown) { return DescribeSimLists(markdown); }

}  // namespace ukai::sim
