// Baselines of the rt benchmark: Open MPI (MPI_Send/MPI_Recv ping-pong and windowed
// MPI_Isend/MPI_Irecv streaming, the helper ukai_rt_mpi_pingpong under mpirun, 2 ranks bound
// to one core each) and UCX (ucx_perftest tag_lat and ucp_am_bw, a server and a client on
// localhost). Each returns a Figures with `note` set and no figures when the tool is missing.
#ifndef UKAI_BENCH_RT_BASELINES_H_
#define UKAI_BENCH_RT_BASELINES_H_

#include <string>
#include <vector>

#include "figures.h"

namespace ukai::bench {

// `btl` is "self,vader" (shared memory) or "self,tcp" (TCP loopback); the ob1 PML is forced
// so the BTL is really the one used (OpenMpiSettings). `seconds` is the time budget per
// size and test. `thread_multiple`: the helper initialises MPI with MPI_THREAD_MULTIPLE.
// `fresh_buffers`: every message sent is packed into a newly allocated buffer (as a ukai
// sender packs a new Buffer per RSR) instead of going from one reused, cache-resident one.
Figures RunOpenMpi(const std::string& btl, const std::vector<size_t>& sizes, double seconds,
                   bool thread_multiple = false, bool fresh_buffers = false);

// The mpirun MCA settings of the Open MPI baselines for `btl`: "--mca pml ob1 --mca btl
// BTL" (the ukai mpi series runs under the same ones).
std::string OpenMpiSettings(const std::string& btl);

// `tls` is the UCX_TLS value ("sm,self" or "tcp,self").
Figures RunUcx(const std::string& tls, const std::vector<size_t>& sizes, bool quick);

// One ucx_perftest run with UCX_TLS=`tls` and test arguments `args` (e.g. "-t ucp_put_lat
// -s 8 -n 1000"): a server and a client on localhost; the client's CSV figures
// (iterations, p50 latency, avg latency, overall latency, avg bw MB/s, overall bw, avg msg
// rate, overall msg rate).
Result<std::vector<double>> UcxOnce(const std::string& tls, const std::string& args);

// The mpirun prefix used for every MPI run here (2 ranks, root allowed, oversubscribe,
// one core each); `mca` adds "--mca k v" pairs.
std::string MpirunPrefix(const std::string& mca);

}  // namespace ukai::bench

#endif  // UKAI_BENCH_RT_BASELINES_H_
