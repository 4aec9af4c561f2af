// The on-disk layout of a job's OTF2 archive, the checks made before a run, and the merge of
// the processes' parts into one archive (docs/otf2-recording.md).
//
//   DIR/traces.otf2              the anchor file (what OTF2 tools and `workload.file` open)
//   DIR/traces.def               global definitions (unified by MergeArchive)
//   DIR/traces/<location>.evt    one event file per location (moved from the parts)
//   DIR/traces/<location>.def    local definitions: the location's ClockOffset record (offset
//                                0 when all parts came from one host)
//   DIR/traces.parts/rank-R.*    while the job runs: rank R's serial archive (recorder.h),
//                                removed by a successful merge
//
// Who merges: `ukai launch --otf2 DIR` after all its processes ended; otherwise (a program
// run with --ukai-otf2=DIR under mpirun, under `ukai launch` without --otf2, or alone)
// rank 0 at the end of Runtime::Finalize, after a bootstrap barrier that every rank reaches
// once its part is complete.
//
// Thread safety: the functions are independent; one merge per directory at a time.
#ifndef UKAI_RT_TRACE_ARCHIVE_H_
#define UKAI_RT_TRACE_ARCHIVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::rt::trace {

inline constexpr char kArchiveName[] = "traces";
std::string AnchorPath(const std::string& dir);                // DIR/traces.otf2
std::string PartsDir(const std::string& dir);                  // DIR/traces.parts
std::string PartName(int rank);                                // rank-R
std::string PartAnchorPath(const std::string& dir, int rank);  // DIR/traces.parts/rank-R.otf2

// Makes DIR ready for a new archive: creates it (and its parents) when missing, checks that it
// is a directory this process may write, and that it holds no archive yet (traces.otf2,
// traces.def, traces/) nor, with `no_parts`, a traces.parts/ directory (a previous run's
// leftovers). Errors name the path and why (kInvalidArgument for an existing archive, kIoError
// for the system's refusal).
Status PrepareArchiveDir(const std::string& dir, bool no_parts);

// What MergeArchive did.
struct MergeReport {
  std::string anchor;              // DIR/traces.otf2
  int ranks = 0;                   // parts merged
  std::vector<int> missing_ranks;  // ranks without a complete part (did not finalize)
  uint64_t locations = 0;
  uint64_t events = 0;
  uint64_t unrecorded = 0;  // messages with peers outside the job (summed over the parts)
  int hosts = 0;
};

// Merges the parts of ranks 0..size-1 in DIR into DIR/traces.otf2 and removes the parts.
// A rank without a complete part (it died, or never finalized) is reported in
// missing_ranks and keeps an empty main location, so that the communicator still has `size`
// ranks. Errors: no part at all, a part that is not what the recorder writes (naming its
// file), an archive already in DIR, a file that cannot be moved or written.
Result<MergeReport> MergeArchive(const std::string& dir, int size);

// "OTF2 archive DIR/traces.otf2: 4 ranks, 8 locations, 1234 events" (+ missing ranks, peers
// outside the job), for `ukai launch` and traces.
std::string Describe(const MergeReport& report);

}  // namespace ukai::rt::trace

#endif  // UKAI_RT_TRACE_ARCHIVE_H_
