// ukai_otf2_hot_path: a fixed amount of RSR traffic on one thread, to count the instructions
// of the send and dispatch path with `perf stat -e instructions:u` — the measure of what the
// OTF2 recorder's seam costs when recording is off (docs/performance.md). It uses only the
// public API, so the same file builds against a libukai without the recorder.
//
// One runtime, no progress thread (this thread calls Progress()), inproc: main() sends N 8-byte
// RSRs to a non-threaded handler of a context, 64 at a time, and progresses until they ran.
//
//   perf stat -e instructions:u ukai_otf2_hot_path [N] [--ukai-otf2=DIR]
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  rt::RuntimeOptions base;
  base.bootstrap = "single";
  base.modules = {"inproc"};
  base.progress_thread = false;
  auto made = rt::Runtime::Init(argc, argv, base);
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  uint64_t sunk = 0;
  auto ctx = r.CreateContext({.name = "sink"});
  if (!ctx.ok()) return 1;
  rt::Endpoint* ep = *(*ctx)->CreateEndpoint();
  if (!ep->RegisterHandler("sink", rt::HandlerKind::kNonThreaded, [&](rt::Rsr&) { ++sunk; }).ok())
    return 1;
  const rt::Startpoint to = ep->MakeStartpoint();
  const rt::HandlerId sink = rt::HandlerId::Of("sink");
  for (long sent = 0; sent < n;) {
    for (int i = 0; i < 64 && sent < n; ++i, ++sent) {
      rt::Buffer b;
      b.PutU64(static_cast<uint64_t>(sent));
      if (!r.SendRsr(std::move(b), to, sink).ok()) return 1;
    }
    while (sunk < static_cast<uint64_t>(sent)) r.Progress();
  }
  std::printf("%ld RSRs sent and handled\n", n);
  return r.Finalize().ok() ? 0 : 1;
}
