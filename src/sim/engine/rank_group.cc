// JoinRankGroup() without MPI support, and the environment test. The MPI group is in
// rank_group_mpi.cc (compiled when Open MPI is found).
#include "sim/engine/rank_group.h"

#include <cstdlib>
#include <string>

namespace ukai::sim {

std::unique_ptr<RankGroup> NewMpiRankGroup(Status* status);  // rank_group_mpi.cc

int MpiJobSizeFromEnvironment() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && std::atoi(v) > 1) return std::atoi(v);
  }
  return 1;
}

bool StartedByMpirunWithPeers() { return MpiJobSizeFromEnvironment() > 1; }

#ifndef UKAI_HAVE_MPI
std::unique_ptr<RankGroup> NewMpiRankGroup(Status* status) {
  *status = Status::Unsupported(
      "started by mpirun with several processes, but this ukai was built without MPI "
      "(install libopenmpi-dev and rebuild)");
  return nullptr;
}
#endif

Result<std::unique_ptr<RankGroup>> JoinRankGroup() {
  if (!StartedByMpirunWithPeers()) return std::unique_ptr<RankGroup>();
  Status status;
  std::unique_ptr<RankGroup> group = NewMpiRankGroup(&status);
  if (!status.ok()) return status;
  return group;
}

}  // namespace ukai::sim
