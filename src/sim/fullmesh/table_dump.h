// `ukai sim tables`: the controller's two tables (tables.h) as they stand after every event
// of a full-mesh run, so that a run can be followed the way the document's Figs 17-18 and
// 22-28 follow its A/B/C example.
//
// The run is the one `ukai sim run` makes (a list workload on one machine; a sweep one
// machine per size); after each event (an operation arrives, a communication finishes) one
// snapshot is written:
//   - the event: its time, the operation's index (0-based, the `index` field of `ukai sim
//     run`), its type and bytes, and for a finish the communication number it held;
//   - the communication management table (Fig. 17), every row in table order: number, type,
//     sender, receiver, communicator, send address, receive address, count, precision, ID,
//     state (sender / receiver -1 = every member of the communicator; addresses are the
//     model's placeholders, unique per operation);
//   - the link management table (Fig. 18): the links in use (or every link with
//     `all_links`), each with its plane, sender, receiver, usage (the communication number
//     and whether as direct, 1-hop first or 1-hop second hop; idle: -1) and its 1-hop via
//     nodes (the destinations one more hop after the link reaches);
//   - how many operations wait outside the table (all 1024 numbers in use).
// Text: one block per snapshot, aligned columns. JSON: one object per snapshot per line
// (JSON Lines): {"run", "event", "time_us", "index", "operation", "bytes", "number",
// "communication_table": [...], "link_table": [...], "links_in_use", "links",
// "queued_outside"}; the rows carry the column names below.
//
// Thread safety: none beyond the stream's.
#ifndef UKAI_SIM_FULLMESH_TABLE_DUMP_H_
#define UKAI_SIM_FULLMESH_TABLE_DUMP_H_

#include <ostream>

#include "core/status.h"
#include "sim/fullmesh/fullmesh_config.h"

namespace ukai::sim::fullmesh {

struct TableDumpOptions {
  bool json = false;       // JSON Lines instead of text
  bool all_links = false;  // every link of the link table, idle ones too
};

// Runs `run` and writes a snapshot after every event to `out`. A data check that fails is an
// error (kInternal) after the snapshots before it, as for RunFullMesh.
Status WriteControllerTables(const FullMeshRun& run, const TableDumpOptions& options,
                             std::ostream* out);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_TABLE_DUMP_H_
