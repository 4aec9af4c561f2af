// ukai_multicast_bench: chain, tree and naive multicast (with acks) compared for 2..N
// members and several sizes, per module (docs/performance.md, "Multicast").
//
// Set-up: 1 + N runtimes in this process (the sender and N members), each with one context
// and a Multicaster, joined by the module under test (shm, tcp or inproc); every runtime has
// its progress thread. One multicast = Multicast() until every member's ack is back (the
// chain's one combined ack, the tree's acks up the tree, naive's N acks). Reported: the
// median time per multicast over the repetitions of a time budget, and the delivered
// bandwidth (size x members / time). This machine has 2 cores for 1 + N progress threads:
// the figures measure the algorithms' cost here, not a network's links.
//
// Options: --modules=shm,tcp (inproc also accepted), --members=2,4,8, --sizes=1024,65536,
//          1048576,8388608 (bytes), --kinds=chain,tree,naive, --fanout=2, --chunk=65536,
//          --seconds=S (budget per point, default 0.2), --spin-us=N (progress thread busy
//          poll, default 0: block at once, as the threads outnumber the cores).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ukai/rt/multicast.hpp"
#include "ukai/ukai.hpp"

namespace ukai::bench {
namespace {

namespace rt = ukai::rt;

struct Options {
  std::vector<std::string> modules = {"shm", "tcp"};
  std::vector<size_t> members = {2, 4, 8};
  std::vector<size_t> sizes = {1024, 65536, 1048576, 8388608};
  std::vector<std::string> kinds = {"chain", "tree", "naive"};
  int fanout = 2;
  size_t chunk = 65536;
  double seconds = 0.2;
  int spin_us = 0;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool ParseSizes(const std::string& s, std::vector<size_t>* out) {
  out->clear();
  for (const std::string& v : SplitList(s)) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n == 0) return false;
    out->push_back(static_cast<size_t>(n));
  }
  return !out->empty();
}

// Returns an error message, or "" when the options parsed.
std::string Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* key) -> const char* {
      const size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? a.c_str() + n : nullptr;
    };
    bool ok = true;
    if (const char* v = value("--modules=")) {
      o->modules = SplitList(v);
    } else if (const char* v = value("--members=")) {
      ok = ParseSizes(v, &o->members);
    } else if (const char* v = value("--sizes=")) {
      ok = ParseSizes(v, &o->sizes);
    } else if (const char* v = value("--kinds=")) {
      o->kinds = SplitList(v);
      for (const std::string& k : o->kinds) ok = ok && rt::ParseMulticastKind(k).ok();
    } else if (const char* v = value("--fanout=")) {
      o->fanout = std::atoi(v);
      ok = o->fanout >= 1 && o->fanout <= 64;
    } else if (const char* v = value("--chunk=")) {
      o->chunk = std::strtoull(v, nullptr, 10);
      ok = o->chunk >= 1;
    } else if (const char* v = value("--seconds=")) {
      o->seconds = std::atof(v);
      ok = o->seconds > 0;
    } else if (const char* v = value("--spin-us=")) {
      o->spin_us = std::atoi(v);
      ok = o->spin_us >= 0;
    } else {
      return "unknown option '" + a + "'";
    }
    if (!ok) return "bad value in '" + a + "'";
  }
  return "";
}

struct Group {
  std::vector<std::unique_ptr<rt::Runtime>> runtimes;
  std::vector<std::unique_ptr<rt::Multicaster>> casters;
  std::vector<rt::Startpoint> members;
  ~Group() {
    casters.clear();
    for (auto& r : runtimes) r->Finalize();
  }
};

// The sender (index 0) and `n` members over `module`.
Result<std::unique_ptr<Group>> MakeGroup(const std::string& module, size_t n, const Options& o) {
  auto g = std::make_unique<Group>();
  auto fabric = rt::NewInprocFabric();
  for (size_t i = 0; i <= n; ++i) {
    rt::RuntimeOptions ro;
    ro.bootstrap = "single";
    ro.modules = {module};
    ro.spin_us = o.spin_us;
    ro.handler_threads = 1;
    ro.params["tcp.listen"] = "127.0.0.1:0";
    if (module == "inproc") ro.inproc_fabric = fabric;
    auto r = rt::Runtime::Init(ro);
    if (!r.ok()) return r.status();
    auto ctx = (*r)->CreateContext({.name = "mc"});
    if (!ctx.ok()) return ctx.status();
    auto mc = rt::Multicaster::Attach(**ctx, nullptr);
    if (!mc.ok()) return mc.status();
    if (i > 0) g->members.push_back((*mc)->startpoint());
    g->runtimes.push_back(std::move(*r));
    g->casters.push_back(std::move(*mc));
  }
  return g;
}

// Median microseconds per acked multicast, or a negative value on failure.
double Measure(Group& g, rt::MulticastKind kind, size_t bytes, const Options& o) {
  std::vector<uint8_t> data(bytes, 0x5a);
  rt::MulticastOptions mo;
  mo.kind = kind;
  mo.fanout = o.fanout;
  mo.chunk_bytes = o.chunk;
  std::vector<double> us;
  auto start = std::chrono::steady_clock::now();
  for (int rep = 0;
       rep < 3 || (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
                       o.seconds &&
                   rep < 10000);
       ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = g.casters[0]->Multicast(g.members, data, mo);
    auto t1 = std::chrono::steady_clock::now();
    if (!r.ok() || !r->all_acked()) {
      std::fprintf(stderr, "multicast failed: %s\n",
                   r.ok() ? r->members[r->Failed()[0]].status.ToString().c_str()
                          : r.status().ToString().c_str());
      return -1;
    }
    if (rep > 0) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

int Main(int argc, char** argv) {
  Options o;
  std::string err = Parse(argc, argv, &o);
  if (!err.empty()) {
    std::fprintf(stderr, "ukai_multicast_bench: %s\n", err.c_str());
    return 2;
  }
  std::printf("%-7s %-6s %7s %9s %12s %10s\n", "module", "kind", "members", "bytes", "median_us",
              "MB/s");
  for (const std::string& module : o.modules) {
    for (size_t n : o.members) {
      auto g = MakeGroup(module, n, o);
      if (!g.ok()) {
        std::fprintf(stderr, "ukai_multicast_bench: %s\n", g.status().ToString().c_str());
        return 1;
      }
      for (size_t bytes : o.sizes) {
        for (const std::string& k : o.kinds) {
          const double us = Measure(**g, *rt::ParseMulticastKind(k), bytes, o);
          if (us < 0) return 1;
          std::printf("%-7s %-6s %7zu %9zu %12.1f %10.1f\n", module.c_str(), k.c_str(), n, bytes,
                      us, double(bytes) * double(n) / us);
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace ukai::bench

int main(int argc, char** argv) { return ukai::bench::Main(argc, argv); }
