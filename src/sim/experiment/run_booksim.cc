#include "sim/experiment/run_booksim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/stats.h"
#include "sim/experiment/memory_budget.h"

namespace ukai::sim {
namespace {

using BF = BooksimFigures;

// Count, sum, min and max of a series: what BookSim2's summary lines print (a Summary's
// mean is its sum over its count too, so the figures are the same; no running variance,
// whose division per sample the hot loop does not need).
class MinMaxSum {
 public:
  void Add(double x) {
    min_ = count_ == 0 || x < min_ ? x : min_;
    max_ = count_ == 0 || x > max_ ? x : max_;
    ++count_;
    sum_ += x;
  }
  int64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }

 private:
  int64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

// BookSim2's statistics since the last clear.
struct Stats {
  IntHistogram plat;  // packet latency (for the percentiles of our own record)
  MinMaxSum plat_summary, nlat, flat_head, flat_tail, frag, hops;
  double flat_sum = 0;
  int64_t flat_count = 0;
  std::vector<int64_t> accepted_flits, accepted_packets;  // per destination
  std::vector<int64_t> sent_flits0, sent_packets0;        // the network's counters at the clear
  std::vector<int64_t> sent_flits1, sent_packets1;        // ... at the drain's start
  int64_t reset_time = 0;
};

class BooksimRun {
 public:
  BooksimRun(Network* net, const ProgressFn& progress)
      : net_(*net),
        mc_(net->config().measure),
        progress_(progress),
        measure_latency_(mc_.mode == MeasureMode::kBooksim),
        inject_channel_(net->config().router.model == RouterModel::kBooksim ? 1 : 0),
        nodes_(net->topology().NumTerminals()),  // BookSim2's nodes: the end nodes
        backlog_bound_(BacklogBound(net->config(), net->sending_nodes())) {}

  Status Run(PointResult* r);

 private:
  void Clear() {
    stats_ = Stats();
    stats_.accepted_flits.assign(nodes_, 0);
    stats_.accepted_packets.assign(nodes_, 0);
    stats_.sent_flits0 = net_.sent_flits();
    stats_.sent_packets0 = net_.sent_packets();
    stats_.reset_time = net_.now();
  }
  // One cycle; false when the run must stop (status_ or note_ says why).
  bool Step();
  void Record(const Delivery& d);
  bool Recorded(const Delivery& d) const {
    if (state_ == State::kWarmingUp) return true;
    return d.created >= run_start_ && (state_ == State::kRunning || d.created < drain_time_);
  }
  // Mean latency of the recorded packets with every in-flight flit at its age.
  double LatencyWithInFlight() const {
    const double count = static_cast<double>(stats_.plat_summary.count() + net_.inflight_flits());
    return count == 0
               ? 0
               : (stats_.plat_summary.sum() + static_cast<double>(net_.inflight_age_sum())) / count;
  }
  bool OverThreshold() const {
    return mc_.latency_threshold >= 0 && LatencyWithInFlight() > mc_.latency_threshold;
  }
  void Log(const std::string& line) { log_ += line + "\n"; }
  bool SamplePhases();
  bool DrainMeasured();
  void Fill(PointResult* r) const;

  enum class State { kWarmingUp, kRunning, kDraining };
  Network& net_;
  const MeasureConfig& mc_;
  const ProgressFn& progress_;
  const bool measure_latency_;
  const int64_t inject_channel_;
  const int nodes_;
  const int64_t backlog_bound_;
  State state_ = State::kWarmingUp;
  Stats stats_;
  int64_t run_start_ = 0, drain_time_ = 0;
  int64_t measured_created0_ = 0, measured_created_ = -1, measured_delivered_ = 0;
  // Messages that became undeliverable (no live route, a failed destination) since the
  // measurement began: the drain counts them as done (it would wait for ever otherwise).
  // Undeliverable messages carry no creation cycle, so one created during the warm-up
  // counts too and the drain may end before the last measured packet arrives (faults only;
  // the note says how many were lost).
  int64_t Lost() const {
    return state_ == State::kWarmingUp ? 0 : net_.messages_undeliverable() - lost0_;
  }
  int64_t lost0_ = 0;
  Status status_;
  std::string log_, note_;
  bool unstable_ = false;
};

bool BooksimRun::Step() {
  net_.Step();
  for (const Delivery& d : net_.deliveries()) Record(d);
  if (net_.Stalled(mc_.watchdog_cycles)) {
    status_ = net_.DeadlockStatus(mc_.watchdog_cycles);
    return false;
  }
  if (net_.backlog() > backlog_bound_) {
    note_ = fmt::format(
        "stopped at cycle {}: {} messages waited in the source queues, more "
        "than the bound of {}",
        net_.now(), net_.backlog(), backlog_bound_);
    return false;
  }
  if (progress_ && (net_.now() & 8191) == 0) progress_(net_.now(), stats_.plat_summary.count());
  return true;
}

void BooksimRun::Record(const Delivery& d) {
  if (state_ != State::kDraining) {  // BookSim2 counts rates until the drain starts
    stats_.accepted_flits[d.dst] += d.length;
    ++stats_.accepted_packets[d.dst];
  }
  if (state_ != State::kWarmingUp && d.created >= run_start_ &&
      (state_ == State::kRunning || d.created < drain_time_)) {
    ++measured_delivered_;
  }
  if (!Recorded(d)) return;
  const int64_t plat = d.delivered - d.created;
  stats_.plat.Add(plat);
  stats_.plat_summary.Add(static_cast<double>(plat));
  stats_.nlat.Add(static_cast<double>(d.delivered - (d.injected - inject_channel_)));
  stats_.flat_head.Add(static_cast<double>(d.head_delivered - d.created));
  stats_.flat_tail.Add(static_cast<double>(plat));
  // BookSim2's flit latency: each flit's arrival minus its own injection (itime, the cycle
  // it entered the injection channel), not the packet's creation.
  stats_.flat_sum += static_cast<double>(d.flit_transit_sum + inject_channel_ * d.length);
  stats_.flat_count += d.length;
  stats_.frag.Add(static_cast<double>((d.delivered - d.head_delivered) - (d.length - 1)));
  // BookSim2 counts the routers a packet crosses; an end node that does not forward (the
  // terminals of the indirect and graph topologies) is not one of them, nor its channel
  // (also a packet to itself that went through its switch and back; one ejected at once
  // crossed no channel).
  const bool via_terminals = d.hops >= 2 && !net_.topology().Forwards(d.src);
  stats_.hops.Add(d.hops + 1 - (via_terminals ? 2 : 0));
}

// The sample periods; false when the run ended early (deadlock, backlog bound).
bool BooksimRun::SamplePhases() {
  double prev_latency = 0, prev_accepted = 0;
  bool clear_last = false;
  int converged = 0;
  for (int64_t phase = 0; phase < mc_.max_samples && (state_ != State::kRunning || converged < 3);
       ++phase) {
    if (clear_last || (state_ == State::kWarmingUp && phase % 2 == 0)) {
      clear_last = false;
      Clear();
    }
    for (int64_t i = 0; i < mc_.sample_cycles; ++i) {
      if (!Step()) return false;
    }
    const double latency = stats_.plat_summary.mean();
    int64_t accepted_total = 0;
    for (int64_t a : stats_.accepted_flits) accepted_total += a;
    const double accepted = static_cast<double>(accepted_total) /
                            static_cast<double>(net_.now() - stats_.reset_time) / nodes_;
    const double latency_change = std::fabs((latency - prev_latency) / latency);
    const double accepted_change = std::fabs((accepted - prev_accepted) / accepted);
    prev_latency = latency;
    prev_accepted = accepted;
    if (measure_latency_ && OverThreshold()) {
      Log(fmt::format("Average latency for class 0 exceeded {:g} cycles. Aborting simulation.",
                      mc_.latency_threshold));
      state_ = State::kDraining;
      drain_time_ = net_.now();
      converged = 0;
      break;
    }
    if (state_ == State::kWarmingUp) {
      if (phase + 1 >= mc_.warmup_periods) {
        Log(fmt::format("Warmed up ...Time used is {} cycles", net_.now()));
        clear_last = true;
        state_ = State::kRunning;
        run_start_ = net_.now();
        measured_created0_ = net_.messages_created();
        lost0_ = net_.messages_undeliverable();
      }
    } else if (state_ == State::kRunning) {
      const bool latency_moved = measure_latency_ && mc_.stopping_threshold >= 0 &&
                                 latency_change > mc_.stopping_threshold;
      const bool accepted_moved =
          mc_.accepted_stopping_threshold >= 0 && accepted_change > mc_.accepted_stopping_threshold;
      converged = latency_moved || accepted_moved ? 0 : converged + 1;
    }
  }
  if (state_ != State::kRunning) {
    Log("Too many sample periods needed to converge");
    unstable_ = true;
  }
  return true;
}

// Runs until every measured packet is delivered; false when the run ended early.
bool BooksimRun::DrainMeasured() {
  state_ = State::kDraining;
  drain_time_ = net_.now();
  stats_.sent_flits1 = net_.sent_flits();
  stats_.sent_packets1 = net_.sent_packets();
  measured_created_ = net_.messages_created() - measured_created0_;
  if (!measure_latency_) return true;
  Log("Draining all recorded packets ...");
  for (int64_t steps = 1; measured_delivered_ + Lost() < measured_created_; ++steps) {
    if (!Step()) return false;
    if (steps % 1000 == 0 && OverThreshold()) {
      Log(fmt::format("Average latency for class 0 exceeded {:g} cycles. Aborting simulation.",
                      mc_.latency_threshold));
      unstable_ = true;
      return true;
    }
  }
  if (Lost() > 0) {
    Log(
        fmt::format("{} packets could not be delivered (undeliverable_messages); the drain "
                    "counted them as done",
                    Lost()));
  }
  return true;
}

// avg over nodes, min and max of per-node counts over `cycles`.
void Rates(const std::vector<int64_t>& counts, double cycles, double out[3]) {
  int64_t sum = 0;
  for (int64_t c : counts) sum += c;
  out[BF::kAvg] = static_cast<double>(sum) / cycles / static_cast<double>(counts.size());
  out[BF::kMin] = static_cast<double>(*std::min_element(counts.begin(), counts.end())) / cycles;
  out[BF::kMax] = static_cast<double>(*std::max_element(counts.begin(), counts.end())) / cycles;
}

void Set(const MinMaxSum& s, double out[3]) {
  out[BF::kAvg] = s.mean();
  out[BF::kMin] = s.min();
  out[BF::kMax] = s.max();
}

void BooksimRun::Fill(PointResult* r) const {
  BooksimFigures& b = r->booksim;
  b.present = true;
  b.unstable = unstable_ || !note_.empty();
  b.log = log_;
  Set(stats_.plat_summary, b.stat[BF::kPacketLatency]);
  Set(stats_.nlat, b.stat[BF::kNetworkLatency]);
  b.stat[BF::kFlitLatency][BF::kAvg] =
      stats_.flat_count ? stats_.flat_sum / static_cast<double>(stats_.flat_count) : 0;
  b.stat[BF::kFlitLatency][BF::kMin] = stats_.flat_head.min();
  b.stat[BF::kFlitLatency][BF::kMax] = stats_.flat_tail.max();
  Set(stats_.frag, b.stat[BF::kFragmentation]);
  const double cycles = static_cast<double>(std::max<int64_t>(1, drain_time_ - stats_.reset_time));
  std::vector<int64_t> sent_f(nodes_), sent_p(nodes_);
  for (int i = 0; i < nodes_; ++i) {
    const bool drained = !stats_.sent_flits1.empty();
    sent_f[i] = (drained ? stats_.sent_flits1[i] : net_.sent_flits()[i]) - stats_.sent_flits0[i];
    sent_p[i] =
        (drained ? stats_.sent_packets1[i] : net_.sent_packets()[i]) - stats_.sent_packets0[i];
  }
  Rates(sent_p, cycles, b.stat[BF::kInjectedPacketRate]);
  Rates(stats_.accepted_packets, cycles, b.stat[BF::kAcceptedPacketRate]);
  Rates(sent_f, cycles, b.stat[BF::kInjectedFlitRate]);
  Rates(stats_.accepted_flits, cycles, b.stat[BF::kAcceptedFlitRate]);
  b.hops = stats_.hops.mean();

  r->offered_flits_per_node_cycle = net_.offered_flits_per_node_cycle();
  r->accepted_flits_per_node_cycle = b.stat[BF::kAcceptedFlitRate][BF::kAvg];
  r->avg_latency_cycles = stats_.plat_summary.mean();
  r->p50_latency_cycles = static_cast<double>(stats_.plat.Percentile(0.5));
  r->p99_latency_cycles = static_cast<double>(stats_.plat.Percentile(0.99));
  r->max_latency_cycles = static_cast<double>(stats_.plat.Max());
  r->avg_network_latency_cycles = stats_.nlat.mean();
  r->avg_hops = stats_.hops.count() > 0 ? b.hops - 1 : 0;
  r->messages_measured = stats_.plat.count();
  r->cycles = net_.now();
  r->saturated = b.unstable;
  r->note = note_;
  if (Lost() > 0) {
    r->note += fmt::format(
        "{}{} messages undeliverable since the measurement began (no route "
        "or a failed destination), counted as done by the drain",
        r->note.empty() ? "" : "; ", Lost());
  }
}

Status BooksimRun::Run(PointResult* r) {
  Clear();
  bool ok = SamplePhases();
  if (ok && status_.ok() && !unstable_) ok = DrainMeasured();
  if (ok && status_.ok() && !unstable_) {
    Log("Draining remaining packets ...");
    net_.StopTraffic();
    // Until nothing is left anywhere (a flit stuck in a router ends it by the watchdog).
    while (net_.inflight_flits() > 0 && (net_.flits_in_network() > 0 || net_.backlog() > 0) && ok) {
      ok = Step();
    }
  }
  if (!status_.ok()) return status_;
  Fill(r);
  return Status::Ok();
}

}  // namespace

Status RunBooksimMeasurement(Network& net, const ProgressFn& progress, PointResult* r) {
  BooksimRun run(&net, progress);
  return run.Run(r);
}

}  // namespace ukai::sim
