// The explicit table of bootstraps. Order matters for "auto": the first entry whose
// detect() is true wins; "single" is last and always applies.
//
// RT-B adds, one line each (declared in src/rt/launch/...):
//   {"launcher", "...", DetectLauncher, NewLauncherBootstrap},
//   #if UKAI_HAVE_MPI {"mpi", "...", DetectMpi, NewMpiBootstrap}, #endif
#include <string>

#include "rt/core/bootstrap.h"
#include "rt/launch/launcher_bootstrap.h"
#if UKAI_HAVE_MPI
#include "rt/launch/mpi_bootstrap.h"
#endif

namespace ukai::rt {
namespace {

bool Always() { return true; }

const BootstrapEntry kBootstraps[] = {
    {"launcher", "a process started by `ukai launch` (UKAI_LAUNCH_ADDR)", DetectLauncher,
     NewLauncherBootstrap},
#if UKAI_HAVE_MPI
    {"mpi", "a process started by mpirun (rank, size and tables from MPI)", DetectMpi,
     NewMpiBootstrap},
#endif
    {"single", "one process: rank 0 of 1, no peers at start-up", Always, NewSingleBootstrap},
};

}  // namespace

std::span<const BootstrapEntry> BootstrapTable() { return kBootstraps; }

Result<std::unique_ptr<Bootstrap>> CreateBootstrap(std::string_view name) {
  std::string known;
  for (const BootstrapEntry& e : BootstrapTable()) {
    if (name == "auto" ? e.detect() : name == e.name) return e.create();
    known += known.empty() ? "" : ", ";
    known += e.name;
  }
  return Status::NotFound("unknown bootstrap '" + std::string(name) + "' (known: auto, " + known +
                          ")");
}

}  // namespace ukai::rt
