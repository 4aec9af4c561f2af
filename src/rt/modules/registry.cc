// The built-in communication modules, one line each. RT-B adds (their factories declared
// in rt/modules/shm/shm_module.h and rt/modules/mpi/mpi_module.h):
//   {"shm", "...", true, NewShmModule},
//   #if UKAI_HAVE_MPI  {"mpi", "...", false, NewMpiModule},  #endif
#include "rt/modules/registry.h"

#include <string>

#include "rt/modules/inproc/inproc_module.h"
#if UKAI_HAVE_MPI
#include "rt/modules/mpi/mpi_module.h"
#endif
#include "rt/modules/shm/shm_module.h"
#include "rt/modules/sim/sim_module.h"
#include "rt/modules/tcp/tcp_module.h"

namespace ukai::rt {
namespace {

const ModuleEntry kModules[] = {
    {"inproc", "runtimes and contexts in one process (zero-copy handoff); always loaded", true,
     NewInprocModule},
    {"tcp", "processes on any hosts over TCP (non-blocking sockets, epoll)", true, NewTcpModule},
    {"shm", "processes on one host over shared-memory rings", true, NewShmModule},
#if UKAI_HAVE_MPI
    {"mpi", "processes under mpirun via Open MPI", false, NewMpiModule},
#endif
    {"sim", "runtimes on a simulated machine (flit-level simulator, virtual time); exclusive",
     false, NewSimModule},
};

}  // namespace

std::span<const ModuleEntry> ModuleTable() { return kModules; }

Result<const ModuleEntry*> FindModule(std::string_view name) {
  std::string known;
  for (const ModuleEntry& e : ModuleTable()) {
    if (name == e.name) return &e;
    known += known.empty() ? "" : ", ";
    known += e.name;
  }
  return Status::NotFound("unknown module '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace ukai::rt
