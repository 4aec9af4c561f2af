// Bootstraps of src/rt/launch/ for the table in src/rt/core/bootstrap_registry.cc:
//  * "launcher": a process started by `ukai launch` (launcher.h). Environment:
//      UKAI_BOOTSTRAP=launcher, UKAI_RANK, UKAI_SIZE, UKAI_LAUNCH_ADDR (the launcher's
//      abstract unix socket name), UKAI_MODULES / UKAI_TRACE passed through.
//    Start() connects and says hello with its rank; Exchange() sends this process's
//    descriptor table and receives every rank's (launch_protocol.h); Barrier() waits until
//    every rank entered it; Finish() says goodbye. Every wait is bounded (60 s by default,
//    UKAI_LAUNCH_TIMEOUT_S) so a dead launcher gives an error, not a hang.
//  * "mpi" (mpi_bootstrap.h, only when Open MPI is built in).
#ifndef UKAI_RT_LAUNCH_LAUNCHER_BOOTSTRAP_H_
#define UKAI_RT_LAUNCH_LAUNCHER_BOOTSTRAP_H_

#include <memory>

#include "rt/core/bootstrap.h"

namespace ukai::rt {

// True when UKAI_BOOTSTRAP=launcher or UKAI_LAUNCH_ADDR is set.
bool DetectLauncher();
std::unique_ptr<Bootstrap> NewLauncherBootstrap();

}  // namespace ukai::rt

#endif  // UKAI_RT_LAUNCH_LAUNCHER_BOOTSTRAP_H_
