// ukai_rt_mpi_idle_test: the instructions of an idle MPI_Test in the states the mpi module
// puts Open MPI in, and of an idle Runtime::Progress() over the mpi module, counted by
// callgrind (repeatable on a shared machine; this VM has no hardware counters).
//
//   ukai_rt_mpi_idle_test [--calls=N] [--keep=DIR] [--ukai-...=V]
//
// --keep=DIR leaves the callgrind dumps in DIR (for callgrind_annotate) instead of a
// temporary directory that is removed.
//
// Runs itself as two ranks under `mpirun -n 2 --bind-to core --mca pml ob1 --mca btl
// self,vader valgrind --tool=callgrind --collect-atstart=no` (the ukai_rt_bench settings),
// each rank counting N calls per phase between callgrind client requests (collection on,
// loop, collection off, dump), then prints per phase the instructions per call, the mean
// of the two ranks, the loop's own few instructions included. Phases, in order:
//   bare    MPI_Test of one posted receive (MPI_ANY_SOURCE) right after
//           MPI_Init_thread(MPI_THREAD_MULTIPLE), before any message between the ranks;
//   set-up  MPI_Test of the oldest of 16 posted persistent receives (MPI_Recv_init +
//           MPI_Start, the module's slots) after an MPI_Allgather and a barrier (what the
//           mpi bootstrap's exchange does: the ranks are connected);
//   ukai    one Runtime::Progress() of an idle runtime (mpi bootstrap and module, no progress
//           thread, the --ukai-* options given, e.g. --ukai-param=mpi.window=off), after the
//           receives above are released;
//   window  MPI_Test of one posted receive after MPI_Comm_dup + MPI_Win_create_dynamic +
//           MPI_Win_lock_all (the module's one-sided window; last, because Open MPI keeps
//           its one-sided progress once a window existed, even after MPI_Win_free).
// MPI is called through MpiLibrary (core/mpi/mpi_library.h), as the module calls it.
#include <dirent.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/mpi/mpi_library.h"
#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

namespace {

// A tag nothing is sent on (the module's are 0x55a1 and 0x55a2: the runtime's goodbye frames
// would complete a receive on them).
constexpr int kTag = 0x55b0;
constexpr int kSlots = 16;
constexpr const char* kPhases[] = {"bare", "set-up", "ukai", "window"};

// N idle calls of `fn`, counted by callgrind and dumped under `phase`.
template <typename Fn>
__attribute__((noinline)) void Count(const char* phase, long calls, Fn&& fn) {
  CALLGRIND_ZERO_STATS;
  CALLGRIND_TOGGLE_COLLECT;
  for (long i = 0; i < calls; ++i) fn();
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_DUMP_STATS_AT(phase);
}

// MPI_Test of a request that does not complete (nothing is sent on kTag).
void IdleTest(const ukai::MpiLibrary& mpi, MPI_Request* req, long calls, const char* phase) {
  Count(phase, calls, [&] {
    int flag = 0;
    MPI_Status st;
    mpi.Test(req, &flag, &st);
    if (flag) std::abort();
  });
}

// Phases "bare" and "set-up"; the receives are released again.
void RawPhases(const ukai::MpiLibrary& mpi, long calls) {
  MPI_Request bare;
  uint8_t one[64];
  mpi.Irecv(one, sizeof one, mpi.byte, MPI_ANY_SOURCE, kTag, mpi.comm_world, &bare);
  IdleTest(mpi, &bare, calls, "bare");
  std::vector<std::vector<uint8_t>> bufs(kSlots, std::vector<uint8_t>(65536));
  std::vector<MPI_Request> slots(kSlots);
  for (int i = 0; i < kSlots; ++i) {
    mpi.Recv_init(bufs[i].data(), 65536, mpi.byte, MPI_ANY_SOURCE, kTag, mpi.comm_world, &slots[i]);
    mpi.Start(&slots[i]);
  }
  int rank = 0, all[2] = {0, 0};
  mpi.Comm_rank(mpi.comm_world, &rank);
  mpi.Allgather(&rank, 1, mpi.int_type, all, 1, mpi.int_type, mpi.comm_world);
  mpi.Barrier(mpi.comm_world);
  IdleTest(mpi, &slots[0], calls, "set-up");
  mpi.Cancel(&bare);
  mpi.Wait(&bare, MPI_STATUS_IGNORE);
  for (MPI_Request& r : slots) {
    mpi.Cancel(&r);
    mpi.Wait(&r, MPI_STATUS_IGNORE);
    mpi.Request_free(&r);
  }
}

// Phase "ukai": an idle runtime over the mpi module (its own receives, and its window unless
// mpi.window=off). False when it could not run.
bool UkaiPhase(long calls, const std::vector<std::string>& runtime_args) {
  rt::RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  o.progress_thread = false;
  std::vector<std::string> copy = runtime_args;
  std::vector<char*> argv = {const_cast<char*>("ukai_rt_mpi_idle_test")};
  for (auto& a : copy) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  if (ukai::Status s = rt::ParseRuntimeArgs(argc, argv.data(), &o); !s.ok() || argc != 1) {
    std::fprintf(stderr, "ukai_rt_mpi_idle_test: bad runtime arguments: %s\n",
                 s.ToString().c_str());
    return false;
  }
  auto r = rt::Runtime::Init(o);
  if (!r.ok()) {
    std::fprintf(stderr, "ukai_rt_mpi_idle_test: %s\n", r.status().ToString().c_str());
    return false;
  }
  // Start-up work first (events of the connection set-up): then every pass is idle until
  // the peer finalizes (its goodbye frame), which waits for the barrier after the count.
  if (!(*r)->Barrier().ok()) return false;
  for (int idle = 0; idle < 1000;) idle = (*r)->Progress() == 0 ? idle + 1 : 0;
  long busy = 0;
  Count("ukai", calls, [&] { busy += (*r)->Progress() != 0; });
  if (!(*r)->Barrier().ok()) return false;
  if (busy != 0) {
    std::fprintf(stderr, "ukai_rt_mpi_idle_test: %ld of the passes were not idle\n", busy);
    return false;
  }
  return (*r)->Finalize().ok();
}

// Phase "window": a raw window like the module's (MPI keeps its one-sided components
// active once a window existed, so this phase comes last).
void WindowPhase(const ukai::MpiLibrary& mpi, long calls) {
  MPI_Comm dup;
  MPI_Win win = mpi.win_null;
  mpi.Comm_dup(mpi.comm_world, &dup);
  mpi.Comm_set_errhandler(dup, mpi.errors_return);
  const bool window = mpi.Win_create_dynamic(mpi.info_null, dup, &win) == MPI_SUCCESS &&
                      mpi.Win_lock_all(MPI_MODE_NOCHECK, win) == MPI_SUCCESS;
  MPI_Request req;
  uint8_t one[64];
  mpi.Irecv(one, sizeof one, mpi.byte, MPI_ANY_SOURCE, kTag, mpi.comm_world, &req);
  if (window) IdleTest(mpi, &req, calls, "window");
  mpi.Cancel(&req);
  mpi.Wait(&req, MPI_STATUS_IGNORE);
  if (window) mpi.Win_unlock_all(win);
  if (win != mpi.win_null) mpi.Win_free(&win);
  mpi.Comm_free(&dup);
}

int Worker(long calls, const std::vector<std::string>& runtime_args) {
  auto lib = ukai::MpiLibrary::Load();
  if (!lib.ok()) {
    std::fprintf(stderr, "ukai_rt_mpi_idle_test: %s\n", lib.status().ToString().c_str());
    return 1;
  }
  const ukai::MpiLibrary& mpi = **lib;
  int provided = 0;
  mpi.Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) return 1;
  RawPhases(mpi, calls);
  const bool ok = UkaiPhase(calls, runtime_args);
  if (ok) WindowPhase(mpi, calls);
  mpi.Finalize();
  return ok ? 0 : 1;
}

// What the dumps of one phase hold, summed over the ranks.
struct PhaseCount {
  uint64_t total = 0;     // every instruction counted (the loop included)
  uint64_t mpi_test = 0;  // those inside MPI_Test (callgrind_annotate --inclusive=yes)
  int ranks = 0;
};

// PMPI_Test's inclusive count in callgrind dump `file` (0 when absent).
uint64_t MpiTestInclusive(const std::string& file) {
  FILE* p = popen(("callgrind_annotate --inclusive=yes --threshold=100 " + file).c_str(), "r");
  if (p == nullptr) return 0;
  uint64_t n = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    if (std::strstr(line, ":PMPI_Test ") == nullptr) continue;
    for (const char* c = line; *c != '\0' && *c != ' '; ++c) {
      if (*c >= '0' && *c <= '9') n = n * 10 + static_cast<uint64_t>(*c - '0');
    }
    break;
  }
  pclose(p);
  return n;
}

// The callgrind dumps in `dir`, by phase.
std::map<std::string, PhaseCount> ReadDumps(const std::string& dir) {
  std::map<std::string, PhaseCount> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string file = dir + "/" + e->d_name;
    std::ifstream in(file);
    std::string line, phase;
    while (std::getline(in, line)) {
      const std::string trigger = "desc: Trigger: Client Request: ";
      if (line.rfind(trigger, 0) == 0) phase = line.substr(trigger.size());
      if (line.rfind("totals: ", 0) == 0 && !phase.empty()) {
        PhaseCount& c = out[phase];
        c.total += std::strtoull(line.c_str() + 8, nullptr, 10);
        c.mpi_test += MpiTestInclusive(file);
        ++c.ranks;
      }
    }
  }
  closedir(d);
  return out;
}

int Driver(const char* self, long calls, const std::string& keep,
           const std::vector<std::string>& runtime_args) {
  char temp[] = "/tmp/ukai_mpi_idle_XXXXXX";
  if (keep.empty() && mkdtemp(temp) == nullptr) return 1;
  const std::string dir = keep.empty() ? std::string(temp) : keep;
  std::error_code ignored;
  std::filesystem::create_directories(dir, ignored);
  std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 mpirun -n 2 "
      "--oversubscribe --bind-to core --mca pml ob1 --mca btl self,vader valgrind -q "
      "--tool=callgrind --collect-atstart=no --callgrind-out-file=" +
      dir + "/cg.%p " + self + " --worker --calls=" + std::to_string(calls);
  for (const auto& a : runtime_args) cmd += " '" + a + "'";
  std::fprintf(stderr, "ukai_rt_mpi_idle_test: %s\n", cmd.c_str());
  const int rc = std::system(cmd.c_str());
  const auto dumps = ReadDumps(dir);
  if (keep.empty()) std::filesystem::remove_all(dir, ignored);
  if (rc != 0) {
    std::fprintf(stderr, "ukai_rt_mpi_idle_test: the mpirun job failed (status %d)\n", rc);
    return 1;
  }
  std::printf(
      "instructions per idle call (callgrind, %ld calls per rank, mean of the ranks): the\n"
      "whole call (loop included), of which inside MPI_Test\n",
      calls);
  for (const char* phase : kPhases) {
    auto it = dumps.find(phase);
    if (it == dumps.end() || it->second.ranks == 0) {
      std::printf("  %-7s not measured (no dump: MPI refused the window?)\n", phase);
      continue;
    }
    const double per = static_cast<double>(it->second.ranks) * static_cast<double>(calls);
    std::printf("  %-7s %7.1f  MPI_Test %7.1f\n", phase,
                static_cast<double>(it->second.total) / per,
                static_cast<double>(it->second.mpi_test) / per);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  long calls = 100000;
  bool worker = false;
  std::string keep;
  std::vector<std::string> runtime_args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--calls=", 0) == 0) {
      calls = std::atol(a.c_str() + 8);
    } else if (a.rfind("--keep=", 0) == 0) {
      keep = a.substr(7);
    } else if (a == "--worker") {
      worker = true;
    } else if (a.rfind("--ukai-", 0) == 0) {
      runtime_args.push_back(a);
    } else {
      std::fprintf(stderr,
                   "usage: ukai_rt_mpi_idle_test [--calls=N] [--keep=DIR] [--ukai-...=V]\n");
      return 2;
    }
  }
  if (calls < 1) {
    std::fprintf(stderr, "ukai_rt_mpi_idle_test: --calls must be >= 1\n");
    return 2;
  }
  return worker ? Worker(calls, runtime_args) : Driver(argv[0], calls, keep, runtime_args);
}
