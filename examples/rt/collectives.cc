// Collectives over the world of an SPMD job: the same program runs as N processes
// (`ukai launch -n N`, or `mpirun -n N`, then add --ukai-modules=mpi to use MPI itself);
// every rank makes context 1 and the world Group over it, then runs each collective with
// data whose result it can compute itself, checks it and prints a line per collective
// (rank 0), and a summary per rank on failure. Exit status 0 when every check held.
//
//   ukai launch -n 4 rt_example_collectives [--count=N] [--algorithms=allreduce=ring,...]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

namespace {

int rank = 0, size = 1, failures = 0;
constexpr rt::EndpointId kDoneEndpoint = 2;  // beside the groups' endpoint (kGroupEndpointId)

// Records one collective's outcome; rank 0 prints it.
void Report(const char* what, const ukai::Status& st, bool correct, const std::string& detail) {
  const bool ok = st.ok() && correct;
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, what,
                 st.ok() ? ("WRONG " + detail).c_str() : st.ToString().c_str());
  }
  if (rank == 0) std::printf("%-34s %s  %s\n", what, ok ? "ok   " : "FAIL ", detail.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  auto made = rt::Runtime::Init(argc, argv);  // bootstrap "auto": launcher or mpi
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  rank = r.rank();
  size = r.size();
  size_t count = 1000;
  rt::GroupOptions options;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--count=", 8) == 0) count = std::strtoul(argv[i] + 8, nullptr, 10);
    if (std::strncmp(argv[i], "--algorithms=", 13) == 0) options.algorithms = argv[i] + 13;
  }
  auto ctx = r.CreateContext({.name = "collectives", .id = 1});
  if (!ctx.ok()) return std::fprintf(stderr, "%s\n", ctx.status().ToString().c_str()), 1;
  // "done" answers at once, in the same progress pass as the group's messages (non-threaded):
  // its answer to a member tells that member that everything it sent before has arrived here.
  auto ep = (*ctx)->CreateEndpoint({.id = kDoneEndpoint});
  const ukai::Status done =
      ep.ok() ? (*ep)
                    ->RegisterHandler("collectives.done", rt::HandlerKind::kNonThreaded,
                                      [](rt::Rsr& m) { m.Reply(rt::Buffer()); })
                    .status()
              : ep.status();
  if (!done.ok()) return std::fprintf(stderr, "%s\n", done.ToString().c_str()), 1;
  auto made_world = rt::Group::World(**ctx, options);
  if (!made_world.ok()) {
    return std::fprintf(stderr, "%s\n", made_world.status().ToString().c_str()), 1;
  }
  rt::Group& world = **made_world;
  const size_t n = static_cast<size_t>(size);
  if (rank == 0) {
    std::printf("%d processes, module %s, %zu elements per member\n", size, world.module().c_str(),
                count);
  }

  Report("barrier", world.Barrier(), true, "");

  std::vector<int64_t> buf(count, rank == 0 ? 7 : 0);  // broadcast from rank 0
  ukai::Status st = world.Broadcast(buf, 0);
  Report("broadcast (root 0)", st,
         std::all_of(buf.begin(), buf.end(), [](int64_t v) { return v == 7; }),
         rt::AlgorithmName(world.Select(rt::Collective::kBroadcast, count * 8)).data());

  std::vector<double> in(count, rank + 1.0), out(count);  // sum of 1..n everywhere
  st = world.Allreduce(in, out, rt::ReduceOp::kSum);
  const double sum = static_cast<double>(n * (n + 1) / 2);
  Report("allreduce sum", st, out[0] == sum && out[count - 1] == sum,
         "= " + std::to_string(out[0]));

  std::vector<int32_t> mine(count, rank), top(rank == size - 1 ? count : 0);
  st = world.Reduce(mine, top, rt::ReduceOp::kMax, size - 1);
  Report("reduce max (root n-1)", st, rank != size - 1 || top[0] == size - 1, "");

  std::vector<int32_t> all(count * n), part(count), back(rank == 0 ? count * n : 0);
  std::iota(all.begin(), all.end(), 0);
  st = world.Scatter(all, part, 0);
  bool correct = st.ok() && part[0] == static_cast<int32_t>(rank * count);
  if (st.ok()) st = world.Gather(part, back, 0);
  Report("scatter + gather (root 0)", st, correct && (rank != 0 || back == all), "");

  std::vector<int32_t> ranks(n);
  st = world.Allgather(rt::ConstView(&rank, 1, rt::DataType::kInt32), ranks);
  correct = true;
  for (size_t j = 0; j < n; ++j) correct &= ranks[j] == static_cast<int32_t>(j);
  Report("allgather", st, correct, "");

  std::vector<int64_t> blocks(count * n, 1), mine_sum(count);  // block r: n ones summed
  st = world.ReduceScatter(blocks, mine_sum, rt::ReduceOp::kSum);
  Report("reduce_scatter sum", st, mine_sum[0] == size, "");

  std::vector<int32_t> to(n), from(n);  // to[j] = 100 * rank + j; from[j] = 100 * j + rank
  for (size_t j = 0; j < n; ++j) to[j] = 100 * rank + static_cast<int32_t>(j);
  st = world.Alltoall(to, from);
  correct = true;
  for (size_t j = 0; j < n; ++j) correct &= from[j] == static_cast<int32_t>(100 * j + rank);
  Report("alltoall", st, correct, "");

  // Non-blocking: an allreduce and a broadcast in flight together.
  std::vector<uint64_t> a(count, 1), a_out(count), b(count, rank == 0 ? 3 : 0);
  rt::CollRequest q1 = world.IAllreduce(a, a_out, rt::ReduceOp::kSum);
  rt::CollRequest q2 = world.IBroadcast(b, 0);
  st = q1.Wait();
  if (st.ok()) st = q2.Wait();
  Report("iallreduce + ibroadcast in flight", st, a_out[0] == n && b[count - 1] == 3, "");

  // The patent's relay algorithms: broadcast and allreduce split over every member.
  rt::CollOptions relay;
  relay.algorithm = rt::Algorithm::kRelay;
  std::vector<int64_t> rb(count, rank == 0 ? 11 : 0);
  st = world.Broadcast(rb, 0, relay);
  Report("broadcast (relay, K = n)", st, rb[count - 1] == 11, "");
  st = world.Allreduce(in, out, rt::ReduceOp::kSum, relay);
  Report("allreduce (relay, K = n)", st, out[count - 1] == sum, "");

  // Point-to-point around the ring, split over the direct path and the relays.
  if (size > 1) {
    std::vector<int64_t> msg(count, rank), got(count);
    rt::CollRequest rq = world.IRecv(got, (rank + size - 1) % size, 5);
    st = world.Send(msg, (rank + 1) % size, 5, relay);
    if (st.ok()) st = rq.Wait();
    Report("send/recv ring (relay)", st, got[0] == (rank + size - 1) % size, "");
  }

  // Split: even and odd ranks.
  auto half = world.Split(rank % 2, rank);
  st = half.ok() ? ukai::Status::Ok() : half.status();
  int32_t one = 1, members = 0;
  if (st.ok()) {
    st = (*half)->Allreduce(rt::ConstView(&one, 1, rt::DataType::kInt32),
                            rt::MutView(&members, 1, rt::DataType::kInt32), rt::ReduceOp::kSum);
  }
  Report("split even/odd + allreduce", st, members == (size + (rank % 2 == 0 ? 1 : 0)) / 2, "");
  half = ukai::Result<std::unique_ptr<rt::Group>>(std::unique_ptr<rt::Group>());

  st = world.Barrier();  // nobody leaves while others still need it
  made_world->reset();   // says goodbye to the other members (a message each)
  // Nobody closes its context (Finalize) while another member's goodbye may still be on its
  // way: it would be refused, and the refusal would reach a process that has left (a message
  // sent and never received, in an OTF2 recording of the job). A "done" request to each
  // member follows our goodbye on the same connection: its answer means the goodbye arrived;
  // the barrier then tells everyone that every goodbye arrived everywhere.
  for (int peer = 0; peer < size && st.ok(); ++peer) {
    if (peer == rank) continue;
    auto sp = r.WorldStartpoint(peer, 1, kDoneEndpoint);
    st = sp.ok()
             ? r.Request(rt::Buffer(), *sp, rt::HandlerId::Of("collectives.done")).Wait().status()
             : sp.status();
  }
  const ukai::Status left = r.Barrier();
  if (st.ok()) st = left;
  const ukai::Status fin = r.Finalize();
  if (!fin.ok()) std::fprintf(stderr, "rank %d: %s\n", rank, fin.ToString().c_str());
  if (rank == 0)
    std::printf("%s\n", failures == 0 && st.ok() ? "all collectives correct" : "FAILED");
  return failures == 0 && st.ok() && fin.ok() ? 0 : 1;
}
