// The "mpi" bootstrap (built only with Open MPI): a process started by mpirun takes its rank
// and the job size from MPI_COMM_WORLD and all-gathers the descriptor tables with
// MPI_Allgather/MPI_Allgatherv; Barrier() is MPI_Barrier. Start() initialises MPI with
// MPI_Init_thread(MPI_THREAD_MULTIPLE) unless the program already did, and then Finish()
// finalises it (after the runtime closed its modules); a program that initialised MPI
// itself keeps that duty. Detected by OMPI_COMM_WORLD_SIZE (or PMI_SIZE) in the environment.
//
// Threading: MPI is asked for MPI_THREAD_MULTIPLE because the runtime's progress thread
// (mpi module) and the thread calling Barrier() may call MPI at the same time; Start() fails
// when the library provides less.
#ifndef UKAI_RT_LAUNCH_MPI_BOOTSTRAP_H_
#define UKAI_RT_LAUNCH_MPI_BOOTSTRAP_H_

#include <memory>

#include "rt/core/bootstrap.h"

namespace ukai::rt {

bool DetectMpi();
std::unique_ptr<Bootstrap> NewMpiBootstrap();

}  // namespace ukai::rt

#endif  // UKAI_RT_LAUNCH_MPI_BOOTSTRAP_H_
