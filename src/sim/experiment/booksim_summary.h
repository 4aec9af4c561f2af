// BookSim2's output for `ukai sim run FILE.cfg` / `ukai booksim FILE.cfg` (--format booksim,
// the BookSim reader's default): per point the lines BookSim2 prints that scripts parse:
// its progress lines on how the run ended ("Warmed up ...", "Average latency for class 0
// exceeded 500 cycles. Aborting simulation.", "Draining ..."), then either "Simulation
// unstable, ending ..." or "Time taken is N cycles" and the overall statistics
// ("====== Overall Traffic Statistics ======", "Packet latency average = 20.5 (1 samples)",
// "\tminimum = ...", ..., "Hops average = ..."), and "Total run time S". Numbers print as
// C++ streams print doubles (6 significant digits). The lines come from the record's fields
// (flit_fields.h: BooksimSummaryLines()).
//
// Ownership: the writer does not own the stream. Thread safety: one thread per writer.
#ifndef UKAI_SIM_EXPERIMENT_BOOKSIM_SUMMARY_H_
#define UKAI_SIM_EXPERIMENT_BOOKSIM_SUMMARY_H_

#include <memory>
#include <ostream>

#include "core/output/writer.h"

namespace ukai::sim {

// A record without BookSim2's fields (a run without measure.mode = booksim) is refused with
// kInvalidArgument naming measure.mode.
std::unique_ptr<output::RecordWriter> MakeBooksimSummaryWriter(std::ostream* out);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_BOOKSIM_SUMMARY_H_
