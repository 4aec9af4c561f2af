// ukai_rma_bench: remote memory access and atomics (docs/rma.md), in one run, beside
//   - Open MPI one-sided: MPI_Put / MPI_Get / MPI_Fetch_and_op + MPI_Win_flush in one
//     passive-target epoch (helper ukai_rma_mpi_onesided under mpirun), btl vader and tcp;
//   - UCX: ucx_perftest ucp_put_lat, ucp_get, ucp_fadd, ucp_put_bw with UCX_TLS=sm,self and
//     tcp,self;
//   - ukai Rma over inproc, shm and tcp: two Runtimes of this process, the target's memory
//     from Rma::Allocate (shared memory): over shm the initiator maps it and takes the direct
//     path (docs/rma.md), over inproc and tcp the software path serves it ("ukai-shm-software":
//     shm with RmaOptions::direct off, for comparison); "default" = default
//     options (each runtime has its progress thread, spin_us 200, then blocks in poll);
//     "tuned" = no progress threads: the initiator's waits progress its runtime themselves on
//     CPU 0, and one thread of the target busy-polls its runtime on CPU 1 (as
//     ukai_rt_bench's ping-pong does).
//   - ukai Rma over the mpi module: 2 ranks under mpirun (this program with --worker=mpi or
//     mpi-tuned, as ukai_rt_bench runs its mpi series); "ukai-mpi*" with Open MPI's default
//     point-to-point path on one node, "ukai-mpi-tcp*" forced through pml ob1 + btl self,tcp
//     (the path between hosts), beside "ompi-osc-pt2pt-tcp" (Open MPI one-sided through the
//     same network path; "ompi-osc-tcp" only restricts the btl, and Open MPI still picks osc/sm
//     for ranks of one node, so it is the shared-memory figure again); "ompi-osc-dynamic*": the
//     same helper with a dynamic window (-d), the kind registering user memory needs. The
//     ukai-mpi rows use RmaOptions' defaults: their 1 MiB put/get take the MPI one-sided path
//     (docs/rma.md) where the mpi module has a window (one node; not through btl tcp).
// Columns: put/get/fop latency (8 bytes, one operation completed before the next: median us
// per operation), fop rate (64 fetch-and-adds in flight, then all completed: million ops/s
// from the median batch), put/get bandwidth (1 MiB operations one after another, median
// operation: GB/s = 1e9 B/s). UCX figures are ucx_perftest's p50 latency and average
// bandwidth / message rate. Our calls and Open MPI's are timed in batches (TimeIt). At the
// end: the shm targets, our shm rows over the best of the Open MPI rows (both use
// osc/sm on one node) and ucx-sm.
//
// Options: --seconds=S (budget per test, default 0.25), --only=name,name (series prefixes),
// --worker=mpi|mpi-tuned (internal: one rank of the ukai-mpi series).
#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "baselines.h"
#include "figures.h"
#include "ukai/ukai.hpp"

namespace ukai::bench {
namespace {

constexpr size_t kLarge = 1 << 20;

struct Row {
  std::string name;
  double put_lat = 0, get_lat = 0, fop_lat = 0, fop_rate = 0, put_bw = 0, get_bw = 0;
  std::string note;
  explicit Row(std::string n) : name(std::move(n)) {}
};

// Median microseconds per call of `fn` over the time budget (the median, as ukai_rt_bench:
// on a loaded 2-core machine a descheduled thread adds milliseconds to a few calls). Each
// sample times a batch of calls, doubled from 1 until a batch takes at least kMinBatchUs, so
// that reading the clock (~20-30 ns here, in 10 ns steps) is not counted in a call that
// takes nanoseconds; the helper ukai_rma_mpi_onesided times Open MPI's calls the same way.
constexpr double kMinBatchUs = 2.0;
double TimeIt(double seconds, const std::function<bool()>& fn) {
  int batch = 1;
  for (;;) {
    double fastest = 1e30;  // of three tries: one preempted try does not stop the doubling
    for (int attempt = 0; attempt < 3; ++attempt) {
      const double t0 = NowSeconds();
      for (int i = 0; i < batch; ++i) {
        if (!fn()) return -1;
      }
      fastest = std::min(fastest, (NowSeconds() - t0) * 1e6);
    }
    if (fastest >= kMinBatchUs || batch >= (1 << 16)) break;
    batch *= 2;
  }
  std::vector<double> samples;
  const double start = NowSeconds();
  double now = start;
  while (now - start < seconds || samples.size() < 5) {
    for (int i = 0; i < batch; ++i) {
      if (!fn()) return -1;
    }
    const double t = NowSeconds();
    samples.push_back((t - now) * 1e6 / batch);
    now = t;
  }
  return Median(samples);
}

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), &set);
  sched_setaffinity(0, sizeof set, &set);
}

// The six figures of a row: `a` accesses `key` (kLarge + 4096 bytes) from `local` (kLarge).
void Measure(rt::Rma& a, const rt::RemoteKey& key, std::vector<uint8_t>& local, double seconds,
             Row* out) {
  Row& row = *out;
  std::span<const uint8_t> small(local.data(), 8);
  std::span<uint8_t> small_out(local.data(), 8);
  // Warm-up (connections, reply routes, first-touch of the buffers), not measured.
  TimeIt(seconds, [&] { return a.PutSync(key, 0, small).ok() && a.GetSync(key, 0, local).ok(); });
  row.put_lat = TimeIt(seconds, [&] { return a.PutSync(key, 0, small).ok(); });
  row.get_lat = TimeIt(seconds, [&] { return a.GetSync(key, 0, small_out).ok(); });
  row.fop_lat = TimeIt(seconds, [&] { return a.FetchOp(key, 0, rt::AtomicOpcode::kAdd, 1).ok(); });
  uint64_t fetched[64];
  const double per64 = TimeIt(seconds, [&] {
    rt::RmaOp ops[64];
    const rt::AtomicOp op{rt::AtomicOpcode::kAdd, 8, 0, 1, 0};
    for (int i = 0; i < 64; ++i) {
      auto r = a.Atomic(key, {&op, 1}, {&fetched[i], 1});
      if (!r.ok()) return false;
      ops[i] = *r;
    }
    for (auto& o : ops) {
      if (!a.Wait(o).ok()) return false;
    }
    return true;
  });
  row.fop_rate = per64 > 0 ? 64 / per64 : 0;
  const double put = TimeIt(seconds, [&] { return a.PutSync(key, 0, local).ok(); });
  const double get = TimeIt(seconds, [&] { return a.GetSync(key, 0, local).ok(); });
  row.put_bw = put > 0 ? kLarge / put / 1e3 : 0;
  row.get_bw = get > 0 ? kLarge / get / 1e3 : 0;
}

// `direct` false: RmaOptions::direct off, every operation on the software path (the
// "ukai-shm-software" row, for comparison).
Row RunUkai(const std::string& module, bool tuned, double seconds, bool direct = true) {
  Row row("ukai-" + module + (tuned ? "-tuned" : "") + (direct ? "" : "-software"));
  std::vector<std::unique_ptr<rt::Runtime>> rts;
  std::vector<std::unique_ptr<rt::Rma>> rma;
  auto fabric = rt::NewInprocFabric();
  for (int i = 0; i < 2; ++i) {
    rt::RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {module};
    o.params["tcp.listen"] = "127.0.0.1:0";
    if (tuned) o.progress_thread = false;
    if (module == "inproc") o.inproc_fabric = fabric;
    auto r = rt::Runtime::Init(o);
    if (!r.ok()) {
      row.note = r.status().ToString();
      return row;
    }
    auto ctx = (*r)->CreateContext({.name = "rma"});
    auto m = ctx.ok() ? rt::Rma::Create(**ctx, {.direct = direct})
                      : Result<std::unique_ptr<rt::Rma>>(ctx.status());
    if (!m.ok()) {
      row.note = m.status().ToString();
      return row;
    }
    rts.push_back(std::move(*r));
    rma.push_back(std::move(*m));
  }
  // The target's memory comes from Rma::Allocate (shared memory): over shm the initiator
  // maps it and takes the direct path; over inproc and tcp it is served in software.
  std::vector<uint8_t> local(kLarge, 1);
  Result<rt::RmaSegment> seg = rma[1]->Allocate(kLarge + 4096);
  if (!seg.ok()) {
    row.note = seg.status().ToString();
    return row;
  }
  const rt::RemoteKey key = seg->key;
  rt::Rma& a = *rma[0];
  std::atomic<bool> stop{false};
  std::thread target_progress;
  cpu_set_t saved;
  sched_getaffinity(0, sizeof saved, &saved);
  if (tuned) {
    target_progress = std::thread([&] {
      PinTo(1);
      while (!stop.load(std::memory_order_relaxed)) rts[1]->Progress();
    });
    PinTo(0);
  }
  Measure(a, key, local, seconds, &row);
  stop.store(true);
  if (target_progress.joinable()) target_progress.join();
  sched_setaffinity(0, sizeof saved, &saved);
  rma.clear();
  for (auto& r : rts) (void)r->Finalize();
  return row;
}

// Reads the "name value" lines of ukai_rma_mpi_onesided and of the mpi worker into `row`.
void ParseFigures(const std::string& text, Row* out) {
  Row& row = *out;
  std::istringstream in(text);
  std::string key;
  double v;
  while (in >> key) {
    if (!(in >> v)) {
      in.clear();
      continue;
    }
    if (key == "put_lat_us") row.put_lat = v;
    if (key == "get_lat_us") row.get_lat = v;
    if (key == "fop_lat_us") row.fop_lat = v;
    if (key == "fop_rate_mops") row.fop_rate = v;
    if (key == "put_bw_gbs") row.put_bw = v;
    if (key == "get_bw_gbs") row.get_bw = v;
  }
}

// `helper_args`: "-d" for a dynamic window (MPI_Win_create_dynamic + MPI_Win_attach).
Row RunMpi(const std::string& name, const std::string& btl, double seconds,
           const std::string& helper_args = "") {
  Row row(name);
  const std::string helper = SelfDirectory() + "/ukai_rma_mpi_onesided";
  if (access(helper.c_str(), X_OK) != 0) {
    row.note = "no " + helper + " (Open MPI not found at build time)";
    return row;
  }
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.3f", seconds);
  Result<std::string> out = RunCapture(MpirunPrefix("--mca btl " + btl) + " " + helper + " -t " +
                                       budget + " " + helper_args);
  if (!out.ok()) {
    row.note = out.status().message().substr(0, 200);
    return row;
  }
  ParseFigures(*out, &row);
  return row;
}

// One rank of the ukai-mpi series (--worker=mpi / mpi-tuned, under mpirun with 2 ranks):
// rank 1 registers the target memory and sends its key to rank 0 in an RSR; rank 0 measures
// and prints the figures as "name value" lines, then tells rank 1 to stop serving. Default:
// progress threads on; tuned: none, rank 1 busy-polls its runtime (each rank has its own
// core: mpirun --bind-to core).
int MpiWorker(bool tuned, double seconds) {
  rt::RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  if (tuned) o.progress_thread = false;
  auto r = rt::Runtime::Init(o);
  if (!r.ok() || (*r)->size() != 2) {
    std::fprintf(stderr, "ukai_rma_bench worker: %s\n",
                 r.ok() ? "needs 2 ranks" : r.status().ToString().c_str());
    return 1;
  }
  rt::Runtime& rt = **r;
  std::mutex mu;
  std::vector<uint8_t> peer_key;
  std::atomic<bool> stop{false};
  rt::ContextOptions co;
  co.id = 1;
  co.init = [&](rt::Context& c) -> Status {
    auto ep = c.CreateEndpoint({1});
    if (!ep.ok()) return ep.status();
    auto k = (*ep)->RegisterHandler("key", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
      std::lock_guard<std::mutex> lock(mu);
      peer_key.assign(m.payload().begin(), m.payload().end());
    });
    if (!k.ok()) return k.status();
    return (*ep)
        ->RegisterHandler("stop", rt::HandlerKind::kNonThreaded, [&](rt::Rsr&) { stop = true; })
        .status();
  };
  auto ctx = rt.CreateContext(co);
  auto rma = ctx.ok() ? rt::Rma::Create(**ctx) : Result<std::unique_ptr<rt::Rma>>(ctx.status());
  auto peer = rt.WorldStartpoint(1 - rt.rank(), 1, 1);
  if (!rma.ok() || !peer.ok() || !rt.Barrier().ok()) return 1;
  std::vector<uint8_t> target(kLarge + 4096), local(kLarge, 1);
  if (rt.rank() == 1) {
    const std::vector<uint8_t> bytes = (*(*rma)->Register(target)).Serialize();
    rt::Buffer kb;
    kb.block().Resize(rt::Buffer::kHeadroom + bytes.size());
    std::memcpy(kb.block().data() + rt::Buffer::kHeadroom, bytes.data(), bytes.size());
    if (!rt.SendRsr(std::move(kb), *peer, rt::HandlerId::Of("key")).ok()) return 1;
    while (!stop.load(std::memory_order_relaxed)) {
      if (tuned) {
        rt.Progress();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  } else {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!peer_key.empty()) break;
      }
      rt.Progress();
    }
    Result<rt::RemoteKey> key = rt::RemoteKey::Parse(peer_key);
    if (!key.ok()) return 1;
    Row row("ukai-mpi");
    Measure(**rma, *key, local, seconds, &row);
    std::printf(
        "put_lat_us %.4f\nget_lat_us %.4f\nfop_lat_us %.4f\nfop_rate_mops %.4f\n"
        "put_bw_gbs %.4f\nget_bw_gbs %.4f\n",
        row.put_lat, row.get_lat, row.fop_lat, row.fop_rate, row.put_bw, row.get_bw);
    std::fflush(stdout);
    if (!rt.SendRsr(rt::Buffer(), *peer, rt::HandlerId::Of("stop")).ok()) return 1;
  }
  Status st = rt.Barrier();
  rma->reset();
  if (st.ok()) st = rt.Finalize();
  if (!st.ok()) {
    std::fprintf(stderr, "ukai_rma_bench worker rank %d: %s\n", rt.rank(), st.ToString().c_str());
  }
  return st.ok() ? 0 : 1;
}

// The ukai-mpi series: this program as MpiWorker under mpirun; `mca` selects the path.
Row RunUkaiMpi(const std::string& name, const std::string& mca, bool tuned, double seconds) {
  Row row(name);
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.3f", seconds);
  Result<std::string> out =
      RunCapture(MpirunPrefix(mca) + " " + SelfDirectory() + "/ukai_rma_bench --worker=mpi" +
                 (tuned ? "-tuned" : "") + " --seconds=" + budget);
  if (!out.ok()) {
    row.note = out.status().message().substr(0, 200);
    return row;
  }
  ParseFigures(*out, &row);
  return row;
}

Row RunUcxRma(const std::string& name, const std::string& tls) {
  Row row(name);
  if (!RunCapture("command -v ucx_perftest").ok()) {
    row.note = "ucx_perftest not installed (Debian ucx-utils)";
    return row;
  }
  // Fields: iterations, p50 lat, avg lat, overall lat, avg bw (MB/s), overall bw, avg mr, ...
  // After a failure the remaining tests are skipped (a failing client waits for its timeout).
  auto run = [&](const std::string& args, int field, double scale) {
    if (!row.note.empty()) return 0.0;
    Result<std::vector<double>> f = UcxOnce(tls, args);
    if (!f.ok()) {
      const std::string m = f.status().message();
      row.note = m.substr(0, m.find('\n'));
      return 0.0;
    }
    return (*f)[field] * scale;
  };
  const std::string n = tls.rfind("tcp", 0) == 0 ? " -n 2000" : " -n 20000";
  const double mb = 1048576.0 / 1e9;  // UCX MB/s are MiB/s
  row.put_lat = run("-t ucp_put_lat -s 8" + n, 1, 1);
  row.get_lat = run("-t ucp_get -s 8" + n, 1, 1);
  row.fop_lat = run("-t ucp_fadd -s 8" + n, 1, 1);
  row.fop_rate = run("-t ucp_fadd -s 8" + n + "0", 6, 1e-6);
  row.put_bw = run("-t ucp_put_bw -s 1048576 -n 1000", 4, mb);
  row.get_bw = run("-t ucp_get -s 1048576 -n 1000", 4, mb);
  return row;
}

// The targets on shm: small put/get latency and atomic rate within 1.5x of the
// better of Open MPI and UCX, 1 MiB put bandwidth at least theirs. Prints, per ukai shm row,
// ours / theirs for each (latency: met when <= 1.5; rate: >= 1/1.5; bandwidth: >= 1).
void PrintTargets(const std::vector<Row>& rows) {
  double put = 0, get = 0, rate = 0, bw = 0;
  auto low = [](double a, double b) { return a > 0 && (b <= 0 || a < b) ? a : b; };
  std::string from;
  for (const Row& r : rows) {
    // Open MPI and UCX on one node (not the rows forced through TCP with osc pt2pt).
    if ((r.name.rfind("ompi-", 0) != 0 && r.name != "ucx-sm") || !r.note.empty()) continue;
    if (r.name.find("pt2pt") != std::string::npos || r.name == "ompi-osc-dynamic-tcp") continue;
    put = low(r.put_lat, put);
    get = low(r.get_lat, get);
    rate = std::max(rate, r.fop_rate);
    bw = std::max(bw, r.put_bw);
    from += (from.empty() ? "" : ", ") + r.name;
  }
  if (from.empty()) return;
  std::printf(
      "targets on shm (ours / best of %s): %.3f us put, %.3f us get, %.3f Mops fop, %.3f "
      "GB/s put\n",
      from.c_str(), put, get, rate, bw);
  for (const Row& r : rows) {
    if (r.name.rfind("ukai-shm", 0) != 0 || !r.note.empty()) continue;
    auto mark = [](bool met) { return met ? "met" : "NOT met"; };
    std::printf(
        "  %-18s put_lat %.2fx (%s) get_lat %.2fx (%s) fop_rate %.2fx (%s) put_bw %.2fx (%s)\n",
        r.name.c_str(), r.put_lat / put, mark(r.put_lat <= 1.5 * put), r.get_lat / get,
        mark(r.get_lat <= 1.5 * get), r.fop_rate / rate, mark(r.fop_rate * 1.5 >= rate),
        r.put_bw / bw, mark(r.put_bw >= bw));
  }
}

bool Wanted(const std::vector<std::string>& only, const std::string& name) {
  if (only.empty()) return true;
  for (const std::string& o : only) {
    if (name.rfind(o, 0) == 0) return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  double seconds = 0.25;
  std::vector<std::string> only;
  std::string worker;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--worker=", 0) == 0) {
      worker = a.substr(9);
    } else if (a.rfind("--seconds=", 0) == 0) {
      seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--only=", 0) == 0) {
      std::stringstream list(a.substr(7));
      for (std::string n; std::getline(list, n, ',');) only.push_back(n);
    } else {
      std::fprintf(stderr, "ukai_rma_bench: unknown argument '%s' (--seconds=S, --only=a,b)\n",
                   a.c_str());
      return 2;
    }
  }
  if (!(seconds > 0)) {
    std::fprintf(stderr, "ukai_rma_bench: --seconds must be positive\n");
    return 2;
  }
  if (!worker.empty()) {
    if (worker != "mpi" && worker != "mpi-tuned") {
      std::fprintf(stderr, "ukai_rma_bench: unknown --worker '%s' (mpi, mpi-tuned)\n",
                   worker.c_str());
      return 2;
    }
    return MpiWorker(worker == "mpi-tuned", seconds);
  }
  const std::string kMpiTcp = "--mca pml ob1 --mca btl self,tcp";  // the path between hosts
  std::vector<std::function<Row()>> runs = {
      [&] { return RunUkai("inproc", false, seconds); },
      [&] { return RunUkai("inproc", true, seconds); },
      [&] { return RunUkai("shm", false, seconds); },
      [&] { return RunUkai("shm", true, seconds); },
      [&] { return RunUkai("shm", false, seconds, false); },
      [&] { return RunUkai("tcp", false, seconds); },
      [&] { return RunUkai("tcp", true, seconds); },
      [&] { return RunMpi("ompi-osc-vader", "self,vader", seconds); },
      [&] { return RunMpi("ompi-osc-tcp", "self,tcp", seconds); },
      [&] { return RunUcxRma("ucx-sm", "sm,self"); },
      [&] { return RunUcxRma("ucx-tcp", "tcp,self"); },
      [&] { return RunUkaiMpi("ukai-mpi", "", false, seconds); },
      [&] { return RunUkaiMpi("ukai-mpi-tuned", "", true, seconds); },
      [&] { return RunUkaiMpi("ukai-mpi-tcp", kMpiTcp, false, seconds); },
      [&] { return RunUkaiMpi("ukai-mpi-tcp-tuned", kMpiTcp, true, seconds); },
      [&] {
        return RunMpi("ompi-osc-pt2pt-tcp", "self,tcp --mca pml ob1 --mca osc pt2pt", seconds);
      },
      [&] { return RunMpi("ompi-osc-dynamic", "self,vader", seconds, "-d"); },
      [&] {
        return RunMpi("ompi-osc-dynamic-tcp", "self,tcp --mca pml ob1 --mca osc pt2pt", seconds,
                      "-d");
      },
  };
  const char* names[] = {"ukai-inproc",
                         "ukai-inproc-tuned",
                         "ukai-shm",
                         "ukai-shm-tuned",
                         "ukai-shm-software",
                         "ukai-tcp",
                         "ukai-tcp-tuned",
                         "ompi-osc-vader",
                         "ompi-osc-tcp",
                         "ucx-sm",
                         "ucx-tcp",
                         "ukai-mpi",
                         "ukai-mpi-tuned",
                         "ukai-mpi-tcp",
                         "ukai-mpi-tcp-tuned",
                         "ompi-osc-pt2pt-tcp",
                         "ompi-osc-dynamic",
                         "ompi-osc-dynamic-tcp"};
  std::printf("%-20s %11s %11s %11s %13s %11s %11s\n", "series", "put_lat_us", "get_lat_us",
              "fop_lat_us", "fop_rate_Mops", "put_bw_GBs", "get_bw_GBs");
  std::vector<Row> rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!Wanted(only, names[i])) continue;
    Row r = runs[i]();
    rows.push_back(r);
    std::printf("%-20s %11.3f %11.3f %11.3f %13.3f %11.3f %11.3f%s%s\n", r.name.c_str(), r.put_lat,
                r.get_lat, r.fop_lat, r.fop_rate, r.put_bw, r.get_bw, r.note.empty() ? "" : "  # ",
                r.note.c_str());
    std::fflush(stdout);
  }
  PrintTargets(rows);
  return 0;
}

}  // namespace
}  // namespace ukai::bench

int main(int argc, char** argv) { return ukai::bench::Main(argc, argv); }
