// The local launcher behind `ukai launch -n N [--modules a,b] [--trace] PROGRAM ARGS...`:
// starts N processes of PROGRAM on this host and serves their start-up rendez-vous.
//
// Each child gets UKAI_BOOTSTRAP=launcher, UKAI_RANK (0..N-1), UKAI_SIZE=N, UKAI_LAUNCH_ADDR
// (the launcher's abstract unix socket, "ukai-launch-<pid>-<random>"), and UKAI_MODULES /
// UKAI_TRACE=1 when given; the runtime's "launcher" bootstrap (launcher_bootstrap.h) talks to
// the launcher over it (launch_protocol.h): it gathers every rank's descriptor table and
// sends all of them back, and implements the barrier.
//
// Exit: waits for all children. When one exits non-zero or dies of a signal, the others get
// SIGTERM (SIGKILL 3 s later) and Launch returns that first failure's code (128 + signal
// for a signal); 0 when all succeeded. With keep_going the others are left running and the
// code is returned when all have ended, after a summary of the failed ranks on stderr.
// SIGINT/SIGTERM to the launcher are forwarded. With `otf2` the children also get UKAI_OTF2
// and UKAI_OTF2_LAUNCHER (both DIR, absolute: the runtime then leaves the merge to us). With
// `timeout_s` > 0 the job is killed after that many seconds (exit code 124). Afterwards the
// shared-memory names the children may have left (crash during set-up) are removed.
//
// Thread safety: Launch is blocking and uses the calling thread only; call it from a
// single-threaded program (it blocks SIGINT/SIGTERM/SIGCHLD while it runs).
#ifndef UKAI_RT_LAUNCH_LAUNCHER_H_
#define UKAI_RT_LAUNCH_LAUNCHER_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::rt {

class SimFabric;

struct LaunchOptions {
  int processes = 1;                 // N, 1..1024
  std::vector<std::string> modules;  // UKAI_MODULES (empty: the runtime's defaults)
  bool trace = false;                // UKAI_TRACE=1 and launcher messages on stderr
  int timeout_s = 0;                 // kill the job after this long (0: never)
  // --keep-going: a process that fails does not stop the others (they see the peer event
  // and go on; barriers count the living); Launch reports every failure and returns the
  // first failure's code once all have ended. Default off: the job ends, as under mpirun.
  // It applies once every rank's runtime did the start-up exchange (Runtime::Init): a
  // process that fails before (or a program that never starts a runtime) ends the job, as
  // the others would wait for its descriptor table.
  bool keep_going = false;
  // --otf2 DIR: every process records into the job's OTF2 archive DIR/traces.otf2 (UKAI_OTF2,
  // docs/otf2-recording.md). DIR is checked before any process starts (created when missing;
  // it must be writable and hold no archive); after the job the launcher merges the parts
  // and prints a summary, or the merge's error (then, if the job itself succeeded, Launch
  // returns that error).
  std::string otf2;
  std::vector<std::string> command;  // PROGRAM and its arguments (PATH lookup)
  // --sim MACHINE.toml: the simulated machine (built and checked by the caller before any
  // process starts, rt/sim_machine/). The launcher hosts it (sim_host.h): every process
  // gets UKAI_MODULES=sim, UKAI_SIM_FD (its end of a socketpair) and UKAI_SIM_RANK. A
  // process whose node fails (faults.events) is stopped (SIGKILL) and does not count as a
  // failure; a stalled simulation stops the job (exit code 3). Results stay in the fabric.
  std::shared_ptr<SimFabric> sim;
};

// Runs the job; returns the exit code to forward (see above). Errors: bad options, the
// program cannot be started (kNotFound naming it), the socket cannot be created.
Result<int> Launch(const LaunchOptions& options);

}  // namespace ukai::rt

#endif  // UKAI_RT_LAUNCH_LAUNCHER_H_
