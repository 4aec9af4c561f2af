// SPMD ring: the same program runs as N processes (`ukai launch -n N`, or `mpirun -n N`
// with --ukai-modules=mpi); every rank creates context 1 / endpoint 1, and a token travels
// rank 0 -> 1 -> ... -> N-1 -> 0 for ROUNDS laps, each rank adding its rank to it. Rank 0
// checks the sum and prints the module chosen for its right neighbour and the lap time
// (Runtime::Now(): wall time, or simulated time under `ukai launch --sim`, where rank 0's
// wait in the runtime lets the simulated machine advance; docs/sim-module.md).
//
//   ukai launch -n 4 [--modules shm] rt_example_spmd_ring [ROUNDS]
//   ukai launch -n 16 --sim MACHINE.toml rt_example_spmd_ring [ROUNDS]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  auto made = rt::Runtime::Init(argc, argv);  // bootstrap "auto": launcher or mpi
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  const int rank = r.rank(), size = r.size();
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 1000;
  const rt::HandlerId kToken = rt::HandlerId::Of("token");
  rt::Startpoint next;
  std::atomic<int> laps{0};
  std::atomic<bool> wrong{false};
  auto ctx = r.CreateContext({.name = "ring", .id = 1, .init = [&](rt::Context& c) {
                                auto ep = c.CreateEndpoint({.id = 1});
                                if (!ep.ok()) return ep.status();
                                return (*ep)
                                    ->RegisterHandler(
                                        "token", rt::HandlerKind::kNonThreaded,
                                        [&](rt::Rsr& m) {
                                          auto lap = m.reader().GetU32();
                                          auto sum = m.reader().GetU64();
                                          if (!lap.ok() || !sum.ok()) return wrong.store(true);
                                          uint64_t s = *sum + static_cast<uint64_t>(rank);
                                          if (rank == 0) {  // a lap is complete
                                            if (s != uint64_t(size) * (size - 1) / 2) wrong = true;
                                            if (static_cast<int>(*lap) + 1 == rounds)
                                              return laps.store(rounds);
                                            laps.store(static_cast<int>(*lap) + 1);
                                            s = 0;
                                          }
                                          rt::Buffer b;
                                          b.PutU32(*lap + (rank == 0 ? 1 : 0));
                                          b.PutU64(s);
                                          if (!m.runtime().SendRsr(std::move(b), next, kToken).ok())
                                            wrong = true;
                                        })
                                    .status();
                              }});
  if (!ctx.ok()) return std::fprintf(stderr, "%s\n", ctx.status().ToString().c_str()), 1;
  auto sp = r.WorldStartpoint((rank + 1) % size, 1, 1);
  if (!sp.ok()) return std::fprintf(stderr, "%s\n", sp.status().ToString().c_str()), 1;
  next = *sp;
  if (!r.Barrier().ok()) return 1;  // every rank's context exists before the first send
  if (rank == 0) {
    std::printf("%d processes, module to rank %d: %s\n", size, 1 % size,
                r.SelectModule(next)->c_str());
    const auto t0 = r.Now();
    rt::Buffer b;
    b.PutU32(0);
    b.PutU64(0);
    if (!r.SendRsr(std::move(b), next, kToken).ok()) return 1;
    while (laps.load() < rounds && !wrong.load()) {
      if (r.Progress() == 0) std::this_thread::yield();  // a wait in the runtime
    }
    const double us = std::chrono::duration<double, std::micro>(r.Now() - t0).count();
    std::printf("%d laps: %.2f us per lap, %.2f us per hop; sums %s\n", rounds, us / rounds,
                us / rounds / size, wrong.load() ? "WRONG" : "correct");
  }
  if (!r.Barrier().ok()) return 1;  // nobody leaves while the token travels
  const bool ok = r.Finalize().ok() && !wrong.load();
  return ok ? 0 : 1;
}
