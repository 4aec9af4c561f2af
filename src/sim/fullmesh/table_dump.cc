#include "sim/fullmesh/table_dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/fullmesh/machine.h"

namespace ukai::sim::fullmesh {
namespace {

using Json = nlohmann::ordered_json;

std::string_view HopName(Hop h) {
  switch (h) {
    case Hop::kDirect:
      return "direct";
    case Hop::kFirst:
      return "1-hop first";
    case Hop::kSecond:
      return "1-hop second";
    case Hop::kLocal:
      break;
  }
  return "local";
}

std::string_view StateName(RowState s) {
  return s == RowState::kCommunicating ? "communicating" : "waiting";
}

// A node column of the communication table: the node, or the communicator for -1.
std::string NodeText(int node, const std::string& comm) {
  return node >= 0 ? std::to_string(node) : comm;
}

// Text columns aligned to their widest cell, two spaces apart, indented by two.
void WriteAligned(const std::vector<std::vector<std::string>>& rows, std::ostream* out) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      line += " " + row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 1, ' ');
    }
    *out << line << '\n';
  }
}

class Dumper {
 public:
  Dumper(const FullMeshConfig& config, const TableDumpOptions& options, std::ostream* out)
      : config_(config), options_(options), out_(out) {}

  // One snapshot of `m` after its last event; `run` numbers the machine (a sweep's size).
  void Write(const Machine& m, const Operation& op, int64_t run, int64_t index) {
    if (options_.json) {
      WriteJson(m, op, run, index);
      return;
    }
    const MachineEvent& e = m.last_event();
    const CommTable& comm = m.controller().comm_table();
    const LinkTable& links = m.controller().link_table();
    *out_ << fmt::format(
        "== t = {} us: index {} ({}, {} bytes) {}\n", e.at_us, index, OpName(op), op.bytes,
        e.finish ? fmt::format("finished (communication {})", e.number) : std::string("arrives"));
    WriteCommText(comm);
    WriteLinkText(links);
    if (m.controller().queued_outside() > 0) {
      *out_ << fmt::format("queued outside the table: {}\n", m.controller().queued_outside());
    }
  }

 private:
  void WriteCommText(const CommTable& comm) {
    *out_ << fmt::format("communication management table: {} row(s)\n", comm.rows().size());
    std::vector<std::vector<std::string>> rows = {
        {"number", "type", "sender", "receiver", "communicator", "send_address", "receive_address",
         "count", "precision", "id", "state"}};
    for (const CommRow& r : comm.rows()) {
      const std::string& name = config_.comms[r.comm].name;
      rows.push_back({std::to_string(r.number), std::string(OpTypeName(r.type)),
                      NodeText(r.sender, name), NodeText(r.receiver, name), name,
                      fmt::format("{:#x}", r.send_address), fmt::format("{:#x}", r.recv_address),
                      std::to_string(r.count), std::to_string(r.precision), std::to_string(r.id),
                      std::string(StateName(r.state))});
    }
    WriteAligned(rows, out_);
  }

  void WriteLinkText(const LinkTable& links) {
    *out_ << fmt::format("link management table: {} of {} link(s) in use{}\n", links.busy_links(),
                         links.num_links(), options_.all_links ? "" : " (idle links not shown)");
    std::vector<std::vector<std::string>> rows = {
        {"plane", "sender", "receiver", "usage", "one_hop_via"}};
    for (int32_t id = 0; id < links.num_links(); ++id) {
      if (links.usage(id) < 0 && !options_.all_links) continue;
      int from, to, plane;
      links.Endpoints(id, &from, &to, &plane);
      const std::string usage = links.usage(id) < 0 ? std::string("idle")
                                                    : fmt::format("{} ({})", links.usage(id),
                                                                  HopName(links.usage_hop(id)));
      rows.push_back({std::to_string(plane), std::to_string(from), std::to_string(to), usage,
                      fmt::format("{}", fmt::join(links.OneHopVia(from, to), " "))});
    }
    WriteAligned(rows, out_);
  }

  static std::string OpName(const Operation& op) {
    return op.broadcast_name ? std::string("broadcast") : std::string(OpTypeName(op.type));
  }

  void WriteJson(const Machine& m, const Operation& op, int64_t run, int64_t index) {
    const MachineEvent& e = m.last_event();
    const LinkTable& links = m.controller().link_table();
    Json rows = Json::array();
    for (const CommRow& r : m.controller().comm_table().rows()) {
      rows.push_back({{"number", r.number},
                      {"type", OpTypeName(r.type)},
                      {"sender", r.sender},
                      {"receiver", r.receiver},
                      {"communicator", config_.comms[r.comm].name},
                      {"send_address", r.send_address},
                      {"receive_address", r.recv_address},
                      {"count", r.count},
                      {"precision", r.precision},
                      {"id", r.id},
                      {"state", StateName(r.state)}});
    }
    Json link_rows = Json::array();
    for (int32_t id = 0; id < links.num_links(); ++id) {
      if (links.usage(id) < 0 && !options_.all_links) continue;
      int from, to, plane;
      links.Endpoints(id, &from, &to, &plane);
      const bool idle = links.usage(id) < 0;
      link_rows.push_back({{"plane", plane},
                           {"sender", from},
                           {"receiver", to},
                           {"usage", links.usage(id)},
                           {"hop", idle ? "" : HopName(links.usage_hop(id))},
                           {"one_hop_via", links.OneHopVia(from, to)}});
    }
    Json j = {{"run", run},
              {"event", e.finish ? "finish" : "new"},
              {"time_us", e.at_us},
              {"index", index},
              {"operation", OpName(op)},
              {"bytes", op.bytes},
              {"number", e.number},
              {"communication_table", std::move(rows)},
              {"link_table", std::move(link_rows)},
              {"links_in_use", links.busy_links()},
              {"links", links.num_links()},
              {"queued_outside", m.controller().queued_outside()}};
    *out_ << j.dump() << '\n';
  }

  const FullMeshConfig& config_;
  const TableDumpOptions& options_;
  std::ostream* out_;
};

// Steps `m` to the end, a snapshot after every event; `ops` are the machine's operations and
// `first_index` the index of ops[0] in the run.
Status DumpMachine(Machine* m, const std::vector<Operation>& ops, int64_t run, int64_t first_index,
                   Dumper* dumper) {
  while (m->Step()) {
    const MachineEvent& e = m->last_event();
    const Operation& op = ops[static_cast<size_t>(e.op_index)];
    dumper->Write(*m, op, run, first_index + e.op_index);
    if (!e.finish) continue;
    const OpResult& r = m->results()[static_cast<size_t>(e.op_index)];
    if (r.data_checked && !r.data_ok) {
      return Status::Internal(
          fmt::format("index {} ({}): the data delivered differ from the result computed directly",
                      first_index + e.op_index, OpTypeName(op.type)));
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteControllerTables(const FullMeshRun& run, const TableDumpOptions& options,
                             std::ostream* out) {
  Dumper dumper(run.config, options, out);
  if (run.sweep) {
    for (size_t i = 0; i < run.ops.size(); ++i) {
      if (!options.json) {
        *out << fmt::format("# run {}: workload.bytes item {} alone ({} bytes)\n", i, i + 1,
                            run.ops[i].bytes);
      }
      Machine m(run.config, {run.ops[i]});
      const int64_t index = static_cast<int64_t>(i);
      UKAI_RETURN_IF_ERROR(DumpMachine(&m, {run.ops[i]}, index, index, &dumper));
    }
  } else {
    Machine m(run.config, run.ops);
    UKAI_RETURN_IF_ERROR(DumpMachine(&m, run.ops, 0, 0, &dumper));
  }
  *out << std::flush;
  return Status::Ok();
}

}  // namespace ukai::sim::fullmesh
