// Bootstrap: how a Runtime learns, at Init, its rank, the job size and the other
// processes' descriptor tables.
//
// Implementations: "single" (one process, rank 0 of 1; src/rt/core/bootstrap_single.cc),
// "launcher" (`ukai launch`) and "mpi" (under mpirun) in src/rt/launch/. They are listed in
// the explicit table of src/rt/core/bootstrap_registry.cc.
//
// Sequence in Runtime::Init:
//   1. Create()            (the registry's factory; mpi calls MPI_Init here if needed)
//   2. Start()             learns rank()/size() (before modules are initialised, so a
//                          module may use them, e.g. via host params)
//      Secret()            the job secret (rt/core/job_secret.h), once, right after
//      OneHost()           whether the whole job runs on this host
//   3. modules Init + MakeDescriptor -> this runtime's DescriptorTable
//   4. Exchange(mine)      all-gather: returns every rank's table, index = rank
//                          (entry [rank()] is `mine`)
//   ... Barrier() on Runtime::Barrier()
//   5. Finish()            in Runtime::Finalize after the modules closed
//
// Environment for "launcher" (set by `ukai launch` for each process):
//   UKAI_BOOTSTRAP=launcher, UKAI_RANK, UKAI_SIZE, UKAI_LAUNCH_ADDR (the launcher's
//   rendez-vous address, defined by src/rt/launch/), UKAI_MODULES (from --modules).
//
// Threading: called only from the thread that runs Runtime::Init/Barrier/Finalize.
#ifndef UKAI_RT_CORE_BOOTSTRAP_H_
#define UKAI_RT_CORE_BOOTSTRAP_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "rt/core/job_secret.h"
#include "ukai/rt/startpoint.hpp"

namespace ukai::rt {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual std::string_view name() const = 0;
  virtual Status Start() = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The job secret this process shares with the others of its job: "single" makes a fresh
  // one; "launcher" reads the one `ukai launch` handed down; "mpi" takes rank 0's (a
  // collective broadcast). Never printed.
  virtual Result<JobSecret> Secret() { return JobSecret::Generate(); }
  // True when every process of the job runs on this host (valid after Start()).
  virtual bool OneHost() const { return true; }
  virtual Result<std::vector<DescriptorTable>> Exchange(const DescriptorTable& mine) = 0;
  virtual Status Barrier() = 0;
  virtual void Finish() = 0;
};

struct BootstrapEntry {
  const char* name;
  const char* description;
  // True when the environment says this bootstrap applies ("auto" picks the first such
  // entry in table order; "single" is last and always applies).
  bool (*detect)();
  std::unique_ptr<Bootstrap> (*create)();
};

// The explicit table (src/rt/core/bootstrap_registry.cc).
std::span<const BootstrapEntry> BootstrapTable();
// Creates the bootstrap named `name` ("auto" resolves via detect()). Unknown names list the
// known ones.
Result<std::unique_ptr<Bootstrap>> CreateBootstrap(std::string_view name);

// The single-process bootstrap (also used by tests).
std::unique_ptr<Bootstrap> NewSingleBootstrap();

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_BOOTSTRAP_H_
