// SPMD ping-pong: rank 0 sends rank 1 a ping of each payload size, rank 1 answers at once
// with a pong carrying the time it saw the ping (Runtime::Now()); rank 0 prints the one-way
// time, the round trip and the average round trip over ROUNDS rounds. Other ranks only
// take part in the barriers. It waits in the runtime (Runtime::Progress), so it runs
// unchanged on a simulated machine, where Now() is simulated time (docs/sim-module.md):
//
//   ukai launch -n 2 [--sim MACHINE.toml] rt_example_spmd_ping_pong [ROUNDS] [BYTES...]
//
// Output (rank 0), one line per payload size:
//   ping payload_bytes=P pong_payload_bytes=Q one_way_ns=T1 round_trip_ns=T2
//        avg_round_trip_ns=T3 rounds=R
// (T1 and T2 of the first round; payload sizes as sent: the Buffer's encoding included).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  std::atomic<bool> peer_failed{false};
  rt::RuntimeOptions base;
  base.on_peer_event = [&](const rt::PeerEvent& e) {
    if (!e.orderly) {
      std::fprintf(stderr, "peer failed: %s\n", e.reason.ToString().c_str());
      peer_failed = true;
    }
  };
  auto made = rt::Runtime::Init(argc, argv, base);  // bootstrap "auto": launcher or mpi
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  const int rank = r.rank();
  if (r.size() < 2) return std::fprintf(stderr, "needs at least 2 processes\n"), 1;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  std::vector<size_t> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::strtoul(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {0, 100, 1000};
  const rt::HandlerId kPing = rt::HandlerId::Of("ping"), kPong = rt::HandlerId::Of("pong");
  rt::Startpoint peer;
  std::atomic<int64_t> seen_ns{-1}, back_ns{-1};
  std::atomic<bool> wrong{false};
  auto ctx = r.CreateContext(
      {.name = "pp", .id = 1, .init = [&](rt::Context& c) {
         auto ep = c.CreateEndpoint({.id = 1});
         if (!ep.ok()) return ep.status();
         auto st = (*ep)->RegisterHandler("ping", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
           rt::Buffer b;
           b.PutU64(static_cast<uint64_t>(m.runtime().Now().count()));
           if (!m.runtime().SendRsr(std::move(b), peer, kPong).ok()) wrong = true;
         });
         if (!st.ok()) return st.status();
         return (*ep)
             ->RegisterHandler("pong", rt::HandlerKind::kNonThreaded,
                               [&](rt::Rsr& m) {
                                 auto t = m.reader().GetU64();
                                 if (!t.ok()) wrong = true;
                                 seen_ns.store(t.ok() ? static_cast<int64_t>(*t) : 0);
                                 back_ns.store(m.runtime().Now().count());
                               })
             .status();
       }});
  if (!ctx.ok()) return std::fprintf(stderr, "%s\n", ctx.status().ToString().c_str()), 1;
  if (rank < 2) {
    auto sp = r.WorldStartpoint(1 - rank, 1, 1);
    if (!sp.ok()) return std::fprintf(stderr, "%s\n", sp.status().ToString().c_str()), 1;
    peer = *sp;
  }
  if (!r.Barrier().ok()) return 1;  // every rank's handlers exist before the first ping
  if (rank == 0) {
    for (size_t bytes : sizes) {
      int64_t first_one_way = 0, first_round = 0, total = 0;
      int done = 0;
      for (int i = 0; i < rounds && !wrong.load() && !peer_failed.load(); ++i) {
        seen_ns = -1;
        back_ns = -1;
        rt::Buffer b;
        b.PutBytes(std::vector<uint8_t>(bytes, 0x5a));
        const size_t payload = b.size();
        const int64_t t0 = r.Now().count();
        if (!r.SendRsr(std::move(b), peer, kPing).ok()) break;
        while (back_ns.load() < 0 && !wrong.load() && !peer_failed.load()) {
          r.Progress();  // a wait in the runtime
        }
        if (back_ns.load() < 0) break;
        ++done;
        const int64_t round = back_ns.load() - t0;
        if (i == 0) {
          first_one_way = seen_ns.load() - t0;
          first_round = round;
          rt::Buffer pong;  // what rank 1 answers
          pong.PutU64(0);
          std::printf("ping payload_bytes=%zu pong_payload_bytes=%zu ", payload, pong.size());
        }
        total += round;
      }
      if (done < rounds) {
        std::printf("rank 1 failed after %d round trips of %zu bytes, at %lld ns\n", done, bytes,
                    static_cast<long long>(r.Now().count()));
        r.Finalize();
        return 1;
      }
      std::printf("one_way_ns=%lld round_trip_ns=%lld avg_round_trip_ns=%.1f rounds=%d\n",
                  static_cast<long long>(first_one_way), static_cast<long long>(first_round),
                  static_cast<double>(total) / rounds, rounds);
    }
  }
  if (peer_failed.load()) return 1;
  if (!r.Barrier().ok()) return 1;  // nobody leaves while pings travel
  const bool ok = r.Finalize().ok() && !wrong.load();
  return ok ? 0 : 1;
}
