// SPMD remote memory access (docs/rma.md): rank 1 registers a 1 MiB segment and hands its
// RemoteKey to rank 0 in an RSR; rank 0 then times, with Runtime::Now(), a put, a get
// (checked against what it put) and a fetch-and-add per size, and a burst of put bandwidth.
// On a simulated machine (`ukai launch --sim`) Now() is simulated time (docs/sim-module.md):
//
//   ukai launch -n 2 [--sim MACHINE.toml] rt_example_spmd_rma [SIZES...]
//
// Output (rank 0): one line per size: rma bytes=B put_ns=P get_ns=G fetch_add_ns=F
// and "put bandwidth: N x B bytes in T ns = X MB/s".
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  auto made = rt::Runtime::Init(argc, argv);
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  if (r.size() < 2) return std::fprintf(stderr, "needs 2 processes\n"), 1;
  const int rank = r.rank();
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoul(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {8, 4096, 65536};
  constexpr size_t kSegment = 1 << 20;
  std::vector<uint8_t> memory(kSegment, 0);
  std::mutex mu;
  std::vector<uint8_t> key_bytes;
  std::atomic<bool> have_key{false};
  std::unique_ptr<rt::Rma> rma;
  auto ctx = r.CreateContext({.name = "rma", .id = 1, .init = [&](rt::Context& c) {
                                auto ep = c.CreateEndpoint({.id = 1});
                                if (!ep.ok()) return ep.status();
                                return (*ep)
                                    ->RegisterHandler("key", rt::HandlerKind::kNonThreaded,
                                                      [&](rt::Rsr& m) {
                                                        auto b = m.reader().GetBytes();
                                                        std::lock_guard<std::mutex> l(mu);
                                                        if (b.ok())
                                                          key_bytes.assign(b->begin(), b->end());
                                                        have_key = b.ok();
                                                      })
                                    .status();
                              }});
  if (!ctx.ok()) return std::fprintf(stderr, "%s\n", ctx.status().ToString().c_str()), 1;
  auto made_rma = rt::Rma::Create(**ctx);
  if (!made_rma.ok()) return std::fprintf(stderr, "%s\n", made_rma.status().ToString().c_str()), 1;
  rma = std::move(*made_rma);
  if (!r.Barrier().ok()) return 1;
  if (rank == 1) {
    auto key = rma->Register(std::span<uint8_t>(memory));
    if (!key.ok()) return std::fprintf(stderr, "%s\n", key.status().ToString().c_str()), 1;
    rt::Buffer b;
    b.PutBytes(key->Serialize());
    auto to = r.WorldStartpoint(0, 1, 1);
    if (!to.ok() || !r.SendRsr(std::move(b), *to, rt::HandlerId::Of("key")).ok()) return 1;
  }
  if (rank == 0) {
    while (!have_key.load()) r.Progress();  // a wait in the runtime
    std::vector<uint8_t> wire;
    {
      std::lock_guard<std::mutex> l(mu);
      wire = key_bytes;
    }
    auto key = rt::RemoteKey::Parse(wire);
    if (!key.ok()) return std::fprintf(stderr, "%s\n", key.status().ToString().c_str()), 1;
    for (size_t bytes : sizes) {
      if (bytes == 0 || bytes > kSegment) continue;
      std::vector<uint8_t> data(bytes), back(bytes);
      for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 7 + bytes);
      const int64_t t0 = r.Now().count();
      if (!rma->PutSync(*key, 0, data).ok()) return 1;
      const int64_t t1 = r.Now().count();
      if (!rma->GetSync(*key, 0, back).ok()) return 1;
      const int64_t t2 = r.Now().count();
      auto old = rma->FetchOp(*key, kSegment - 8, rt::AtomicOpcode::kAdd, 1);
      const int64_t t3 = r.Now().count();
      if (!old.ok() || back != data) return std::fprintf(stderr, "rma: wrong data\n"), 1;
      std::printf("rma bytes=%zu put_ns=%lld get_ns=%lld fetch_add_ns=%lld\n", bytes,
                  static_cast<long long>(t1 - t0), static_cast<long long>(t2 - t1),
                  static_cast<long long>(t3 - t2));
    }
    const size_t burst = 16, bytes = 65536;
    std::vector<uint8_t> data(bytes, 0x11);
    const int64_t t0 = r.Now().count();
    for (size_t i = 0; i < burst; ++i) {
      if (!rma->PutSync(*key, (i * bytes) % (kSegment - bytes), data).ok()) return 1;
    }
    const int64_t t = r.Now().count() - t0;
    std::printf("put bandwidth: %zu x %zu bytes in %lld ns = %.1f MB/s\n", burst, bytes,
                static_cast<long long>(t), t > 0 ? double(burst * bytes) * 1e3 / double(t) : 0.0);
  }
  if (!r.Barrier().ok()) return 1;  // rank 1 keeps its memory until rank 0 is done
  rma.reset();
  return r.Finalize().ok() ? 0 : 1;
}
