// ukai runtime series of the rt benchmark: RSR ping-pong latency and streaming bandwidth
// per communication module, measured with the public API (<ukai/ukai.hpp>).
//
// Set-up per series: two runtimes, each driving progress from one thread (progress_thread
// off, the benchmark loop calls Runtime::Progress()), non-threaded handlers that read the
// message in place, one core each.
//  * shm, tcp: two processes started by the launcher (rt::Launch) running this binary with
//    --worker=MODULE; the launcher bootstrap exchanges the descriptor tables.
//  * mpi: the same worker started by mpirun (2 ranks, --bind-to core), mpi bootstrap.
//  * inproc: two runtimes sharing an InprocFabric in this process, one thread each.
// Latency: rank 0 packs `size` bytes into a Buffer and sends RSR "ping"; rank 1's handler
// packs the payload into a new Buffer and answers with "pong"; one-way = median round trip
// / 2. The Buffers come from Runtime::NewBuffer (registered memory: the shm module's pool,
// for payloads >= shm.pool_min_bytes), except in "ukai shm heap" (worker "shm-heap"),
// which packs into plain heap Buffers as before, so both paths are visible, and "ukai shm
// bytes" (worker "shm-bytes"), where both sides send by Runtime::SendRsrBytes from an array
// (the payload is the `size` bytes alone; no Buffer). Bandwidth: rank 0 sends
// windows of 64 RSRs of `size` bytes (a progress pass after every 8th send), rank 1's handler
// counts them and acknowledges each full window; the median over the windows of bytes / window
// time. The workers set mallopt(M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD 1 GiB): Open MPI's
// benchmark reuses one buffer, ours allocates a Buffer per RSR, and fresh pages would measure the
// allocator, not the runtime (the "fresh buffers" Open MPI series packs a new buffer per message
// under the same settings).
#ifndef UKAI_BENCH_RT_UKAI_PINGPONG_H_
#define UKAI_BENCH_RT_UKAI_PINGPONG_H_

#include <functional>
#include <string>
#include <vector>

#include "figures.h"
#include "ukai/status.hpp"

namespace ukai::bench {

struct PingPongSeries {
  std::string name;  // "ukai shm", ...
  bool tcp_like;     // compared with the TCP baselines (else the shared-memory ones)
  // `runtime_args`: --ukai-* options for the runtimes (e.g. --ukai-param=shm.cma_bytes=0).
  std::function<Figures(const std::vector<size_t>& sizes, double seconds,
                        const std::vector<std::string>& runtime_args)>
      run;
};

// UKAI_BENCH_SEND_WORK / UKAI_BENCH_SINK_WORK: busy-loop iterations added per streamed
// message to the sender / the receiver's sink handler (0 when unset). Error: a value that is
// not an integer in [0, 1e9], naming the variable.
Status ReadBenchWork(int* send_work, int* sink_work);

// The runtime's series, in table order.
std::vector<PingPongSeries> UkaiSeries();

// Worker mode (`ukai_rt_bench --worker=MODULE[-heap|-bytes|-default] --out=FILE --sizes=..
// --seconds=S`): one of the two processes of a series (-heap: heap Buffers instead of
// NewBuffer; -bytes: SendRsrBytes; -default: default runtime settings). Returns
// the process exit code.
int RunWorker(const std::string& worker, const std::string& out_path,
              const std::vector<size_t>& sizes, double seconds,
              const std::vector<std::string>& runtime_args);

}  // namespace ukai::bench

#endif  // UKAI_BENCH_RT_UKAI_PINGPONG_H_
