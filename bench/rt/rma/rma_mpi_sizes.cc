// ukai_rma_mpi_sizes: put/get latency by size over the mpi module, packet path beside the MPI
// one-sided path (docs/rma.md), to choose RmaOptions::mpi_onesided_min_bytes. Run with two
// ranks: `mpirun -n 2 --oversubscribe build/bench/ukai_rma_mpi_sizes [--seconds=S]
// [--min=BYTES] [--max=BYTES]`. Rank 1 serves two Rmas (contexts 1 and 2: one-sided off and
// on, each with its own registered memory); rank 0 times PutSync/GetSync of each size
// (powers of 2 from --min to --max, default 256 B .. 1 MiB) for S seconds each (default 0.2)
// and prints one line per size: bytes, mean microseconds of put and get on both paths.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace {

using namespace ukai;

struct Side {  // one context and its Rma
  std::unique_ptr<rt::Rma> rma;
  std::vector<uint8_t> key;  // the peer's serialised key (rank 0), under the rank's mutex
};

// Mean microseconds of `op` repeated for `seconds`.
template <typename Op>
double MeanUs(double seconds, const Op& op) {
  const auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  uint64_t reps = 0;
  do {
    if (!op().ok()) return -1;
    ++reps;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < seconds);
  return elapsed / static_cast<double>(reps) * 1e6;
}

int Run(double seconds, size_t min, size_t max) {
  rt::RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  auto r = rt::Runtime::Init(o);
  if (!r.ok() || (*r)->size() != 2) {
    std::fprintf(stderr, "ukai_rma_mpi_sizes: %s\n",
                 r.ok() ? "needs 2 ranks" : r.status().ToString().c_str());
    return 1;
  }
  rt::Runtime& rt = **r;
  std::mutex mu;
  std::atomic<bool> stop{false};
  Side side[2];
  for (int c = 0; c < 2; ++c) {
    rt::ContextOptions co;
    co.id = static_cast<rt::ContextId>(c + 1);
    co.init = [&, c](rt::Context& ctx) -> Status {
      auto ep = ctx.CreateEndpoint({1});
      if (!ep.ok()) return ep.status();
      auto k = (*ep)->RegisterHandler("key", rt::HandlerKind::kNonThreaded, [&, c](rt::Rsr& m) {
        std::lock_guard<std::mutex> lock(mu);
        side[c].key.assign(m.payload().begin(), m.payload().end());
      });
      if (!k.ok()) return k.status();
      return (*ep)
          ->RegisterHandler("stop", rt::HandlerKind::kNonThreaded, [&](rt::Rsr&) { stop = true; })
          .status();
    };
    auto ctx = rt.CreateContext(co);
    rt::RmaOptions ro;
    ro.mpi_onesided_min_bytes = c == 0 ? 0 : 1;  // context 1: packets; context 2: one-sided
    auto rma =
        ctx.ok() ? rt::Rma::Create(**ctx, ro) : Result<std::unique_ptr<rt::Rma>>(ctx.status());
    if (!rma.ok()) return 1;
    side[c].rma = std::move(*rma);
  }
  if (!rt.Barrier().ok()) return 1;
  std::vector<uint8_t> target[2] = {std::vector<uint8_t>(max), std::vector<uint8_t>(max)};
  std::vector<uint8_t> local(max, 1);
  if (rt.rank() == 1) {
    for (int c = 0; c < 2; ++c) {
      const std::vector<uint8_t> bytes = (*side[c].rma->Register(target[c])).Serialize();
      rt::Buffer kb;
      kb.block().Resize(rt::Buffer::kHeadroom + bytes.size());
      std::memcpy(kb.block().data() + rt::Buffer::kHeadroom, bytes.data(), bytes.size());
      auto sp = rt.WorldStartpoint(0, static_cast<rt::ContextId>(c + 1), 1);
      if (!sp.ok() || !rt.SendRsr(std::move(kb), *sp, rt::HandlerId::Of("key")).ok()) return 1;
    }
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } else {
    for (bool ready = false; !ready; rt.Progress()) {
      std::lock_guard<std::mutex> lock(mu);
      ready = !side[0].key.empty() && !side[1].key.empty();
    }
    rt::RemoteKey key[2] = {*rt::RemoteKey::Parse(side[0].key), *rt::RemoteKey::Parse(side[1].key)};
    std::printf("%9s %11s %11s %11s %11s\n", "bytes", "put_pkt_us", "put_1s_us", "get_pkt_us",
                "get_1s_us");
    for (size_t n = min; n <= max; n *= 2) {
      double us[4];
      for (int i = 0; i < 4; ++i) {
        rt::Rma& a = *side[i % 2].rma;
        const rt::RemoteKey& k = key[i % 2];
        std::span<uint8_t> s(local.data(), n);
        us[i] = MeanUs(seconds, [&] { return i < 2 ? a.PutSync(k, 0, s) : a.GetSync(k, 0, s); });
      }
      std::printf("%9zu %11.2f %11.2f %11.2f %11.2f\n", n, us[0], us[1], us[2], us[3]);
      std::fflush(stdout);
    }
    auto sp = rt.WorldStartpoint(1, 1, 1);
    if (!sp.ok() || !rt.SendRsr(rt::Buffer(), *sp, rt::HandlerId::Of("stop")).ok()) return 1;
  }
  Status st = rt.Barrier();
  side[0].rma.reset();
  side[1].rma.reset();
  if (st.ok()) st = rt.Finalize();
  return st.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.2;
  size_t min = 256, max = size_t{1} << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--seconds=", 0) == 0) {
      seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--min=", 0) == 0) {
      min = std::strtoull(a.c_str() + 6, nullptr, 10);
    } else if (a.rfind("--max=", 0) == 0) {
      max = std::strtoull(a.c_str() + 6, nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "ukai_rma_mpi_sizes: unknown argument '%s' (--seconds=S, --min=B, "
                   "--max=B)\n",
                   argv[i]);
      return 2;
    }
  }
  if (seconds <= 0 || min == 0 || max < min || max > (size_t{1} << 30)) {
    std::fprintf(stderr, "ukai_rma_mpi_sizes: need seconds > 0 and 0 < min <= max <= 1 GiB\n");
    return 2;
  }
  return Run(seconds, min, max);
}
