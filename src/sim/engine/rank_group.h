// RankGroup: the processes of an MPI job that simulate one network together
// (docs/simulator.md, "Parallel simulation"). `ukai sim run` under `mpirun -n R` joins the
// job once (JoinRankGroup()) and hands the group to every point through
// RunConfig::ranks; the engine (network.h, rank_exchange.cc) is its only user. Every
// exchange is collective: all ranks make the same calls in the same order.
//
// A rank that fails alone (an allocation failure, a file it cannot write) must not leave
// the others waiting: Abort() ends the whole job with the reason (MPI_Abort; mpirun then
// stops every rank). A rank killed from outside is noticed by mpirun, which stops the
// others (SIGTERM): JoinRankGroup() installs a handler that says so on stderr.
//
// Ownership: the joining program owns the group; destroying it leaves the job
// (MPI_Finalize). Thread safety: one thread at a time (the thread driving the Network).
#ifndef UKAI_SIM_ENGINE_RANK_GROUP_H_
#define UKAI_SIM_ENGINE_RANK_GROUP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::sim {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sends out[r] to every rank r != rank() and returns in (*in)[r] what rank r sent to
  // this one ((*in)[rank()] is left empty). Collective.
  virtual Status Exchange(const std::vector<std::vector<uint8_t>>& out,
                          std::vector<std::vector<uint8_t>>* in) = 0;
  // Ends the whole job after printing "ukai sim: rank R: <why>" on stderr.
  [[noreturn]] virtual void Abort(const std::string& why) = 0;
  // The rank that writes results (rank 0).
  bool writes_output() const { return rank() == 0; }
};

// Joins the MPI job this process was started in by mpirun (MPI_Init) when it has more than
// one process; returns null when the process runs alone. An error when mpirun started
// several processes but this build has no MPI support (UKAI_HAVE_MPI).
Result<std::unique_ptr<RankGroup>> JoinRankGroup();

// Whether this process was started by mpirun as one of several (environment only).
bool StartedByMpirunWithPeers();
// The number of processes mpirun started in this job (1 when not under mpirun), from the
// environment: what a config's memory check divides the network by before the job is
// joined.
int MpiJobSizeFromEnvironment();

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_RANK_GROUP_H_
