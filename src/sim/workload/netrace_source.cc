#include "sim/workload/netrace_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/workload/slot_pool.h"

namespace ukai::sim {

Result<std::unique_ptr<NetraceSource>> NetraceSource::Open(const WorkloadConfig& config,
                                                           const Topology& topology) {
  Result<std::unique_ptr<NetraceReader>> reader = NetraceReader::Open(config.file);
  if (!reader.ok()) {
    return Status(reader.status().code(), "workload.file: " + reader.status().message())
        .WithKey("workload.file");
  }
  return FromReader(std::move(*reader), config, topology);
}

Result<std::unique_ptr<NetraceSource>> NetraceSource::FromReader(
    std::unique_ptr<NetraceReader> reader, const WorkloadConfig& config, const Topology& topology) {
  std::unique_ptr<NetraceSource> s(new NetraceSource());
  s->config_ = config;
  const int trace_nodes = reader->header().nodes;
  const int nodes = topology.NumNodes();
  if (config.node_map == NodeMapKind::kList) {
    if (static_cast<int>(config.node_list.size()) < trace_nodes) {
      return Status::InvalidArgument(
                 fmt::format(
                     "workload.node_map: lists {} network nodes but the trace {} has {} nodes",
                     config.node_list.size(), reader->name(), trace_nodes))
          .WithKey("workload.node_map");
    }
    for (size_t i = 0; i < config.node_list.size(); ++i) {
      if (config.node_list[i] >= nodes) {
        return Status::InvalidArgument(
                   fmt::format(
                       "workload.node_map: item {} is node {}, but the network has nodes 0..{}", i,
                       config.node_list[i], nodes - 1))
            .WithKey("workload.node_map");
      }
    }
    s->node_of_.assign(config.node_list.begin(), config.node_list.begin() + trace_nodes);
  } else {
    if (trace_nodes > nodes) {
      return Status::InvalidArgument(
                 fmt::format("workload.file: the trace {} has {} nodes but the network has only {} "
                             "(use a larger "
                             "network, or map the trace's nodes with workload.node_map)",
                             reader->name(), trace_nodes, nodes))
          .WithKey("workload.file");
    }
    for (int i = 0; i < trace_nodes; ++i) s->node_of_.push_back(i);
  }
  UKAI_RETURN_IF_ERROR(reader->SeekRegion(config.region));
  s->reader_ = std::move(reader);
  return s;
}

int64_t NetraceSource::NetworkCycle(uint64_t cycle) const {
  const uint64_t start = reader_->start_cycle();
  const uint64_t since = cycle > start ? cycle - start : 0;
  if (config_.cycle_scale == 1.0)
    return static_cast<int64_t>(std::min<uint64_t>(since, 1ull << 62));
  return static_cast<int64_t>(
      std::min(std::floor(static_cast<double>(since) / config_.cycle_scale), 4e18));
}

Status NetraceSource::Advance(int64_t now, Workload* workload) {
  const int64_t limit = now + kReadAheadCycles;
  while (!eof_) {
    if (!have_next_) {
      Result<bool> got = reader_->Next(&next_);
      if (!got.ok()) {
        eof_ = true;  // nothing more can be read
        return got.status();
      }
      if (!*got) {
        eof_ = true;
        break;
      }
      have_next_ = true;
    }
    if (NetworkCycle(next_.cycle) > limit) break;
    AddPacket(workload);
    have_next_ = false;
  }
  return Status::Ok();
}

int64_t NetraceSource::NextCycle() const {
  if (eof_) return MessageSource::kNever;
  if (!have_next_) return 0;
  return std::max<int64_t>(0, NetworkCycle(next_.cycle) - kReadAheadCycles);
}

void NetraceSource::AddPacket(Workload* workload) {
  const NetracePacket& p = next_;
  ++packets_read_;
  WorkMessage m;
  m.src = node_of_[p.src];
  m.dst = node_of_[p.dst];
  m.bytes = kNetracePacketTypes[p.type].bytes;
  m.earliest = NetworkCycle(p.cycle);
  m.klass = p.type;
  last_cycle_ = std::max(last_cycle_, m.earliest);
  std::vector<WorkMessageId> after;
  bool blocked = false;
  if (config_.dependencies) {
    if (auto node = waiters_.extract(p.id)) {
      m.earliest = std::max(m.earliest, node.mapped().ready);
      after = std::move(node.mapped().after);
      blocked = node.mapped().blocked;
    }
  }
  if (blocked) {  // waits for a lost packet: never starts, nor do the packets after it
    ++blocked_;
    for (uint32_t q : p.deps) waiters_[q].blocked = true;
    return;
  }
  const uint32_t index = TakeSlot(&live_, &free_live_);
  m.user = index;
  const WorkMessageId id = workload->Add(this, m, after);
  if (keep_add_log_) add_log_.emplace_back(p.id, id);
  Live& l = live_[index];
  l.id = p.id;
  l.dependents.clear();
  if (!config_.dependencies) return;
  l.dependents.assign(p.deps.begin(), p.deps.end());
  added_[p.id] = id;
  for (uint32_t q : p.deps) {
    if (auto it = added_.find(q); it != added_.end() && it->second != id) {
      ++late_;  // q was read before the packet it waits for: honoured if not yet created
      workload->AddDependency(it->second, id);
      continue;
    }
    waiters_[q].after.push_back(id);
  }
}

void NetraceSource::Retire(WorkMessageId id, const WorkMessage& m, int64_t cycle, bool lost) {
  Live& l = live_[m.user];
  for (uint32_t q : l.dependents) {
    auto it = waiters_.find(q);
    if (it == waiters_.end()) continue;  // q was read: the layer releases it
    if (lost) {
      it->second.blocked = true;
    } else {
      it->second.ready = std::max(it->second.ready, cycle);
    }
  }
  if (auto it = added_.find(l.id); it != added_.end() && it->second == id) added_.erase(it);
  l.dependents.clear();
  free_live_.push_back(static_cast<uint32_t>(m.user));
}

void NetraceSource::Delivered(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload*) {
  Retire(id, m, cycle, /*lost=*/false);
}

void NetraceSource::Lost(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload*) {
  ++lost_;
  Retire(id, m, cycle, /*lost=*/true);
}

int64_t NetraceSource::missing_dependencies() const {
  if (!eof_) return 0;
  return static_cast<int64_t>(waiters_.size());  // listed as dependents, never read
}

std::vector<uint32_t> NetraceSource::missing_examples(size_t n) const {
  std::vector<uint32_t> ids;
  if (!eof_) return ids;
  for (const auto& [id, w] : waiters_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  if (ids.size() > n) ids.resize(n);
  return ids;
}

}  // namespace ukai::sim

namespace ukai::sim {

void NetraceSource::Report(const Workload& workload, const TraceRunEnd& end, WorkloadFigures* f,
                           std::vector<std::string>* notes) const {
  const WorkloadStats& st = workload.stats();
  f->trace_packets = packets_read_;
  f->trace_cycles = last_cycle_;
  f->runtime_cycles = st.last_delivery;
  f->slowdown = static_cast<double>(st.last_delivery) /
                static_cast<double>(std::max<int64_t>(1, last_cycle_));
  f->missing_dependencies = missing_dependencies();
  f->blocked_messages += blocked_;
  std::string json = "{";
  for (const auto& [type, k] : st.classes) {
    const char* name =
        type >= 0 && type < kNetracePacketTypeCount ? kNetracePacketTypes[type].name : "?";
    json += fmt::format(
        "{}\"{}\": {{\"packets\": {}, \"bytes\": {}, \"avg_latency_cycles\": "
        "{}, \"p99_latency_cycles\": {}, \"max_latency_cycles\": {}}}",
        json.size() > 1 ? ", " : "", name, k.messages, k.bytes, k.latency.Mean(),
        k.latency.Percentile(0.99), k.latency.Max());
  }
  f->latency_by_type = json + "}";
  if (f->missing_dependencies > 0) {
    notes->push_back(fmt::format(
        "{} packet id(s) listed as dependents never appear in the trace (first: {}); the rest "
        "of the trace ran",
        f->missing_dependencies, fmt::join(missing_examples(5), ", ")));
  }
  if (late_ > 0) {
    notes->push_back(
        fmt::format("{} dependencies named a packet read before the packet it waits "
                    "for (honoured when it had not started yet)",
                    late_));
  }
  const int64_t undelivered = packets_read_ - st.messages_delivered;
  if (end.finished && undelivered > 0) {
    notes->push_back(
        fmt::format("{} of {} packets were not delivered ({} lost to faults, {} "
                    "waited for a lost packet)",
                    undelivered, packets_read_, lost_, blocked_));
  }
}

}  // namespace ukai::sim
