// Internal to the flit model's result record (experiment/flit_fields.h): what a field
// reads, and the parts of the record that live in files of their own.
//
// Thread safety: constant tables.
#ifndef UKAI_SIM_EXPERIMENT_FLIT_FIELD_PARTS_H_
#define UKAI_SIM_EXPERIMENT_FLIT_FIELD_PARTS_H_

#include <cstddef>
#include <span>

#include "core/output/fields.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// What a field reads: the point's number (0-based), config and figures (not owned).
struct FlitPointContext {
  size_t index;
  const SimConfig* config;
  const PointResult* result;
};
using FlitField = output::FieldOf<FlitPointContext>;

// BookSim2's statistics (experiment/booksim_fields.cc), the record's last part.
std::span<const FlitField> BooksimFieldPart();

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_FLIT_FIELD_PARTS_H_
