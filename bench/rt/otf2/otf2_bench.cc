// ukai_otf2_bench: what OTF2 recording costs (docs/otf2-recording.md, docs/performance.md).
//
// Series (each the median [min-max] of --runs runs of --seconds each; archives are written
// into a fresh directory under --dir, default /tmp, and removed):
//  * recorder alone, MpiSend: Recorder::SendAndRecord on one location with a send that does
//    nothing, in a loop: nanoseconds per recorded event, the writes of full buffers to the
//    event file included.
//  * recorder alone, handler start+end: HandlerStart + HandlerEnd (MpiIrecv + MpiIrecvRequest)
//    on a context's location: nanoseconds per recorded event.
//  * one-way RSRs through one runtime (default settings, inproc): main() sends 8-byte RSRs to
//    a non-threaded handler of a context, at most 4096 unreceived at a time, with recording
//    off and on; RSRs per second each, and the difference per RSR divided by the 3 events
//    an RSR records (MpiSend at main, MpiIrecv + MpiIrecvRequest at the context).
//  * the clock alone: trace::Now() (clock_gettime(CLOCK_MONOTONIC)), read once per event.
//  * RSS growth of the process over the recording runs (the recorder keeps at most 1 MiB of
//    events per location; the rest is in the files).
//
//   ukai_otf2_bench [--seconds=S] [--runs=N] [--dir=DIR]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "rt/trace/archive.h"
#include "rt/trace/recorder.h"
#include "ukai/ukai.hpp"

namespace rt = ukai::rt;
namespace trace = ukai::rt::trace;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

long RssKiB() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

std::string FreshDir(const std::string& base, int n) {
  const std::string d =
      base + "/ukai_otf2_bench_" + std::to_string(getpid()) + "_" + std::to_string(n);
  std::filesystem::remove_all(d);
  return d;
}

// ns per event of `record` (which records `events` events per call) on a fresh recorder.
double RecorderAlone(const std::string& dir, double seconds, int events,
                     void (*record)(trace::Recorder&, trace::Location*)) {
  auto r = trace::Recorder::Open({dir, 0, 2, {1, 2}, "bench"});
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    std::exit(1);
  }
  trace::Location* ctx = (*r)->OpenContext(1, "bench");
  uint64_t calls = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    for (int i = 0; i < 1024; ++i) record(**r, ctx);
    calls += 1024;
  }
  const double ns = Seconds(t0) * 1e9 / static_cast<double>(calls * events);
  if (!(*r)->Finish().ok()) std::exit(1);
  std::filesystem::remove_all(dir);
  return ns;
}

void RecordSend(trace::Recorder& r, trace::Location*) {
  r.SendAndRecord(r.main(), 2, trace::kWorldComm, 7, 8, [] { return ukai::Status::Ok(); });
}
void RecordHandler(trace::Recorder& r, trace::Location* ctx) {
  r.HandlerStart(ctx, 2, 7, 8);
  r.HandlerEnd(ctx);
}

// One-way RSRs per second from main() to a context of the same runtime.
double OneWay(const std::string& otf2, double seconds) {
  rt::RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"inproc"};
  o.otf2 = otf2;
  auto made = rt::Runtime::Init(o);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
    std::exit(1);
  }
  rt::Runtime& r = **made;
  std::atomic<uint64_t> sunk{0};
  auto ctx = r.CreateContext({.name = "sink"});
  rt::Endpoint* ep = *(*ctx)->CreateEndpoint();
  if (!ep->RegisterHandler("sink", rt::HandlerKind::kNonThreaded, [&](rt::Rsr&) { ++sunk; }).ok())
    std::exit(1);
  const rt::Startpoint to = ep->MakeStartpoint();
  const rt::HandlerId sink = rt::HandlerId::Of("sink");
  uint64_t sent = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    for (int i = 0; i < 256; ++i, ++sent) {
      rt::Buffer b;
      b.PutU64(sent);
      if (!r.SendRsr(std::move(b), to, sink).ok()) std::exit(1);
    }
    while (sent - sunk.load() > 4096) std::this_thread::yield();
  }
  while (sunk.load() < sent) std::this_thread::yield();
  const double rate = static_cast<double>(sent) / Seconds(t0);
  if (!r.Finalize().ok()) std::exit(1);
  if (!otf2.empty()) std::filesystem::remove_all(otf2);
  return rate;
}

// Nanoseconds per trace::Now() call.
double ClockAlone(double seconds) {
  uint64_t calls = 0, sum = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    for (int i = 0; i < 4096; ++i) sum += trace::Now();
    calls += 4096;
  }
  const double ns = Seconds(t0) * 1e9 / static_cast<double>(calls);
  return sum == 0 ? 0 : ns;  // (uses sum: the calls are not optimised away)
}

struct Stat {
  double median, lo, hi;
};
Stat Of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.5;
  int runs = 5;
  std::string base = "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--seconds=", 0) == 0) {
      seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--runs=", 0) == 0) {
      runs = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a.rfind("--dir=", 0) == 0) {
      base = a.substr(6);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds=S] [--runs=N] [--dir=DIR]\n", argv[0]);
      return 2;
    }
  }
  int n = 0;
  std::vector<double> send_ns, handler_ns, clock_ns, off, on;
  const long rss0 = RssKiB();
  for (int i = 0; i < runs; ++i) {
    send_ns.push_back(RecorderAlone(FreshDir(base, n++), seconds, 1, RecordSend));
    handler_ns.push_back(RecorderAlone(FreshDir(base, n++), seconds, 2, RecordHandler));
    clock_ns.push_back(ClockAlone(seconds / 4));
  }
  for (int i = 0; i < runs; ++i) {  // alternate, so that load drifts hit both alike
    off.push_back(OneWay("", seconds));
    on.push_back(OneWay(FreshDir(base, n++), seconds));
  }
  const long rss1 = RssKiB();
  std::vector<double> per_event;
  for (int i = 0; i < runs; ++i) per_event.push_back((1e9 / on[i] - 1e9 / off[i]) / 3);
  const Stat s = Of(send_ns), h = Of(handler_ns), c = Of(clock_ns), f = Of(off), o = Of(on),
             e = Of(per_event);
  std::printf(
      "OTF2 recording cost (src/rt/trace/), archives under %s; median [min-max] of %d runs of "
      "%.2f s\n",
      base.c_str(), runs, seconds);
  std::printf("%-52s | %s\n", "series", "value");
  std::printf("%-52s | %.1f [%.1f-%.1f] ns/event\n", "recorder alone: MpiSend", s.median, s.lo,
              s.hi);
  std::printf("%-52s | %.1f [%.1f-%.1f] ns/event\n", "recorder alone: handler start+end (2 events)",
              h.median, h.lo, h.hi);
  std::printf("%-52s | %.1f [%.1f-%.1f] ns/call\n",
              "  of which the clock (CLOCK_MONOTONIC) per event", c.median, c.lo, c.hi);
  std::printf("%-52s | %.0f [%.0f-%.0f] RSRs/s\n", "one-way RSRs, one runtime (inproc), off",
              f.median, f.lo, f.hi);
  std::printf("%-52s | %.0f [%.0f-%.0f] RSRs/s\n", "one-way RSRs, one runtime (inproc), on",
              o.median, o.lo, o.hi);
  std::printf("%-52s | %.1f [%.1f-%.1f] ns/event\n", "  recording cost per event (3 per RSR)",
              e.median, e.lo, e.hi);
  std::printf("%-52s | %ld KiB\n", "RSS growth over all runs", rss1 - rss0);
  return 0;
}
