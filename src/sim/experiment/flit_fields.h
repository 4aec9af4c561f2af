// The result record of the flit-level model (network.topology mesh, torus, group, graph, tree):
// every field of a point's record declared once (name, unit, meaning, table column) in
// flit_fields.cc. The record (CSV/JSON), the text table and the field reference of
// `ukai sim describe` and docs/cli.md come from that list.
//
// Adding a field: one FieldOf row in flit_fields.cc (in record order), then regenerate the
// reference in docs/cli.md (tools/update_reference_docs.py; tests/cli/output_fields_docs_test.cc
// fails until it is there).
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_FLIT_FIELDS_H_
#define UKAI_SIM_EXPERIMENT_FLIT_FIELDS_H_

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "core/output/fields.h"
#include "core/output/writer.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// A line of BookSim2's overall summary: its label and the fields (`field`_avg, _min, _max)
// it prints ("Packet latency average = 20.5 (1 samples)", "\tminimum = ...", ...).
struct BooksimLine {
  std::string_view label;
  std::string_view field;
};
std::span<const BooksimLine> BooksimSummaryLines();

// Every field of a point's record, in record order.
std::vector<output::FieldSpec> FlitFields();

// The record of point `index` (0-based, sweep order): its config, then its figures, then the
// gateway model's figures when it ran (result.gateway.present).
output::Record PointRecord(size_t index, const SimConfig& config, const PointResult& result);

// The columns of the text table (the fields with a column header), wide enough for every
// point's routing and pattern names; shows traffic.rate or traffic.interval, whichever the
// injection of the first point uses.
std::vector<output::TableColumn> FlitTableColumns(const std::vector<SimConfig>& points);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_FLIT_FIELDS_H_
