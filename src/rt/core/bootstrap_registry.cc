// The explicit table of bootstraps. Order matters for "auto": the first entry whose
// detect() is true wins; "single" is last and always applies.
//
// RT-B adds, one line each (declared in src/rt/launch/...):
//   {"launcher", "...", DetectLauncher, NewLauncherBootstrap},
//   #if UKAI_HAVE_MPI {"mpi", "...", DetectMpi, NewMpiBootstrap}, #endif
#include <string>

#include "rt/core/bootstrap.h"

namespace ukai::rt {
namespace {

bool Always() { return true; }

const BootstrapEntry kBootstraps[] = {
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
