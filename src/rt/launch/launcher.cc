#include "rt/launch/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <set>

#include "rt/core/job_secret.h"
#include "rt/launch/launch_protocol.h"
#include "rt/launch/sim_host.h"
#include "rt/modules/shm/shm_segment.h"
#include "rt/modules/sim/sim_fabric.h"
#include "rt/trace/archive.h"
#include "wire/rsr_frame.h"

extern char** environ;

namespace ukai::rt {
namespace {

using launch::Message;
using launch::MsgType;
using Clock = std::chrono::steady_clock;

struct Client {
  int fd = -1;
  int rank = -1;
  launch::MsgParser parser;
  bool in_barrier = false;
};

struct Child {
  pid_t pid = 0;
  bool running = true;
};

class Job {
 public:
  explicit Job(const LaunchOptions& o) : o_(o), tables_(o.processes) {}
  ~Job();
  Status Start();
  int Run();

 private:
  std::vector<std::string> ChildEnv(int rank) const;
  // The job secret in a sealed memfd the children inherit (UKAI_JOB_SECRET_FD names it).
  Status MakeSecretFd();
  Status Spawn(int rank);
  void OnClientData(Client& c);
  void Handle(Client& c, const Message& m);
  void DropClient(Client& c, const std::string& why);
  void Reap();
  void KillAll(int sig);
  // Releases the barrier when every living rank waits in it.
  void CheckBarrier();
  // --sim: stops the processes the simulated machine stopped; a failed simulation ends the job.
  void CheckSimulation();
  void Log(const std::string& line) const {
    if (o_.trace) std::fprintf(stderr, "[ukai launch] %s\n", line.c_str());
  }

  const LaunchOptions& o_;
  std::string addr_;
  int listen_fd_ = -1, signal_fd_ = -1;
  const JobSecret secret_ = JobSecret::Generate();
  int secret_fd_ = -1;
  sigset_t old_mask_{};
  std::vector<Client> clients_;
  std::vector<Child> children_;
  std::vector<std::optional<std::vector<uint8_t>>> tables_;
  std::optional<int> failure_;       // first failing exit code
  std::vector<std::string> failed_;  // "rank R (pid P): exit code C" (keep_going summary)
  bool tables_sent_ = false;         // the start-up exchange is done
  std::optional<Clock::time_point> kill_at_;
  std::unique_ptr<SimHost> sim_host_;
  std::set<int> sim_stopped_;  // ranks the simulated machine stopped (not failures)
  bool sim_failed_ = false;
};

Job::~Job() {
  for (Client& c : clients_) {
    if (c.fd >= 0) close(c.fd);
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  if (signal_fd_ >= 0) close(signal_fd_);
  if (secret_fd_ >= 0) close(secret_fd_);
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

std::vector<std::string> Job::ChildEnv(int rank) const {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv = *e;
    const bool ours = kv.starts_with("UKAI_BOOTSTRAP=") || kv.starts_with("UKAI_RANK=") ||
                      kv.starts_with("UKAI_SIZE=") || kv.starts_with("UKAI_LAUNCH_ADDR=") ||
                      kv.starts_with("UKAI_JOB_SECRET_FD=") ||
                      (!o_.modules.empty() && kv.starts_with("UKAI_MODULES=")) ||
                      (o_.trace && kv.starts_with("UKAI_TRACE=")) || kv.starts_with("UKAI_OTF2=") ||
                      kv.starts_with("UKAI_OTF2_LAUNCHER=") || kv.starts_with("UKAI_SIM_FD=") ||
                      kv.starts_with("UKAI_SIM_RANK=") ||
                      (o_.sim && kv.starts_with("UKAI_MODULES="));
    if (!ours) env.emplace_back(kv);
  }
  env.push_back("UKAI_BOOTSTRAP=launcher");
  env.push_back("UKAI_RANK=" + std::to_string(rank));
  env.push_back("UKAI_SIZE=" + std::to_string(o_.processes));
  env.push_back("UKAI_LAUNCH_ADDR=" + addr_);
  env.push_back("UKAI_JOB_SECRET_FD=" + std::to_string(secret_fd_));  // the number, not the secret
  if (!o_.modules.empty()) {
    std::string list;
    for (const auto& m : o_.modules) list += (list.empty() ? "" : ",") + m;
    env.push_back("UKAI_MODULES=" + list);
  }
  if (o_.trace) env.push_back("UKAI_TRACE=1");
  if (sim_host_) {
    env.push_back("UKAI_MODULES=sim");
    env.push_back("UKAI_SIM_FD=" + std::to_string(sim_host_->child_fd(rank)));
    env.push_back("UKAI_SIM_RANK=" + std::to_string(rank));
  }
  if (!o_.otf2.empty()) {  // absolute (Launch): the runtime compares it with its own
    env.push_back("UKAI_OTF2=" + o_.otf2);
    env.push_back("UKAI_OTF2_LAUNCHER=" + o_.otf2);
  }
  return env;
}

Status Job::Spawn(int rank) {
  std::vector<std::string> env = ChildEnv(rank);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = o_.command;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &old_mask_);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  // The secret's memfd is close-on-exec here; dup2 onto itself clears that in the child only
  // (glibc >= 2.29), so no other program the launcher's process runs ever inherits it.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, secret_fd_, secret_fd_);
  if (sim_host_) {
    const int fd = sim_host_->child_fd(rank);
    posix_spawn_file_actions_adddup2(&files, fd, fd);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::NotFound("ukai launch: cannot start '" + o_.command[0] +
                            "': " + std::strerror(rc));
  }
  children_.push_back({pid, true});
  if (sim_host_) sim_host_->CloseChildEnd(rank);
  Log("rank " + std::to_string(rank) + " is pid " + std::to_string(pid));
  return Status::Ok();
}

Status Job::Start() {
  if (o_.processes < 1 || o_.processes > 1024) {
    return Status::InvalidArgument("ukai launch: -n " + std::to_string(o_.processes) +
                                   " outside [1, 1024]");
  }
  if (o_.command.empty() || o_.command[0].empty()) {
    return Status::InvalidArgument("ukai launch: no program given");
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, &old_mask_);
  signal_fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (o_.sim) {
    if (!o_.modules.empty() && (o_.modules.size() != 1 || o_.modules[0] != "sim")) {
      return Status::InvalidArgument(
          "ukai launch: --modules cannot be given with --sim (every frame goes through the "
          "simulated machine: the module is sim)");
    }
    Result<std::unique_ptr<SimHost>> host = SimHost::Create(o_.sim, o_.processes);
    if (!host.ok()) return host.status();
    sim_host_ = std::move(*host);
  }
  UKAI_RETURN_IF_ERROR(MakeSecretFd());
  std::random_device rd;
  addr_ = "ukai-launch-" + std::to_string(getpid()) + "-" + std::to_string(rd());
  Result<int> l = launch::ListenUnix(addr_);
  if (!l.ok()) return l.status();
  listen_fd_ = *l;
  for (int r = 0; r < o_.processes; ++r) {
    Status s = Spawn(r);
    if (!s.ok()) {
      KillAll(SIGKILL);
      Reap();
      return s;
    }
  }
  return Status::Ok();
}

Status Job::MakeSecretFd() {
  secret_fd_ = memfd_create("ukai-job-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (secret_fd_ < 0) {
    return Status::IoError(std::string("ukai launch: memfd_create: ") + std::strerror(errno));
  }
  const SecretKey& k = secret_.key();
  if (write(secret_fd_, k.data(), k.size()) != static_cast<ssize_t>(k.size()) ||
      fcntl(secret_fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) !=
          0) {
    return Status::IoError(std::string("ukai launch: job secret memfd: ") + std::strerror(errno));
  }
  return Status::Ok();
}

void Job::KillAll(int sig) {
  for (const Child& c : children_) {
    if (c.running) kill(c.pid, sig);
  }
}

void Job::Reap() {
  // First the ranks the simulated machine stopped: one told it was stopped may already have
  // exited on it, and is no failure of the job (SimHost notes a stop before telling it).
  CheckSimulation();
  for (Child& c : children_) {
    if (!c.running) continue;
    int status = 0;
    const pid_t r = waitpid(c.pid, &status, WNOHANG);
    if (r != c.pid) continue;
    c.running = false;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    Log("pid " + std::to_string(c.pid) + " exited with " + std::to_string(code));
    if (sim_stopped_.contains(static_cast<int>(&c - children_.data()))) {
      CheckBarrier();  // stopped by the simulated machine: not a failure of the job
      continue;
    }
    // (A death before the start-up exchange ends the job anyway: the others would wait
    // for its table.)
    if (code != 0 && o_.keep_going && tables_sent_ && !kill_at_) {
      const int rank = static_cast<int>(&c - children_.data());
      failed_.push_back("rank " + std::to_string(rank) + " (pid " + std::to_string(c.pid) +
                        "): exit code " + std::to_string(code));
      if (!failure_) failure_ = code;
      std::fprintf(stderr, "ukai launch: %s; --keep-going: the others go on\n",
                   failed_.back().c_str());
      CheckBarrier();  // the dead rank no longer counts
      continue;
    }
    if (code != 0 && !failure_) {
      failure_ = code;
      std::fprintf(stderr, "ukai launch: process %d exited with code %d; stopping the others%s\n",
                   static_cast<int>(c.pid), code,
                   o_.keep_going ? " (--keep-going applies after the start-up exchange)" : "");
      KillAll(SIGTERM);
      kill_at_ = Clock::now() + std::chrono::seconds(3);
    }
  }
}

void Job::CheckBarrier() {
  int waiting = 0;
  for (const Client& o : clients_) waiting += o.fd >= 0 && o.in_barrier;
  if (waiting == 0 ||
      waiting < o_.processes - static_cast<int>(failed_.size() + sim_stopped_.size())) {
    return;
  }
  for (Client& o : clients_) {
    if (o.fd >= 0 && o.in_barrier) {
      o.in_barrier = false;
      [[maybe_unused]] Status s = launch::SendMsg(o.fd, MsgType::kRelease, {});
    }
  }
}

void Job::CheckSimulation() {
  if (!sim_host_) return;
  for (const SimHost::Stop& s : sim_host_->TakeStopped()) {
    Child& c = children_[static_cast<size_t>(s.rank)];
    if (!c.running || sim_stopped_.contains(s.rank) || sim_failed_) continue;
    Status run = o_.sim->status();
    if (!run.ok()) break;  // the whole run stopped: reported below
    kill(c.pid, SIGKILL);
    if (s.failure) {  // its exit (killed) is the job's failure
      std::fprintf(stderr, "ukai launch: --sim: %s; stopping it\n", s.why.c_str());
      continue;
    }
    sim_stopped_.insert(s.rank);
    std::fprintf(stderr, "ukai launch: rank %d stopped by the simulated machine: %s\n", s.rank,
                 s.why.c_str());
  }
  Status run = o_.sim->status();
  if (run.ok() || sim_failed_) return;
  sim_failed_ = true;
  std::fprintf(stderr, "ukai launch: the simulation stopped: %s; stopping the job\n",
               run.message().c_str());
  if (!failure_) failure_ = 3;
  KillAll(SIGTERM);
  kill_at_ = Clock::now() + std::chrono::seconds(3);
}

void Job::DropClient(Client& c, const std::string& why) {
  if (!why.empty()) std::fprintf(stderr, "ukai launch: %s\n", why.c_str());
  close(c.fd);
  c.fd = -1;
}

void Job::Handle(Client& c, const Message& m) {
  const int n = o_.processes;
  switch (m.type) {
    case MsgType::kHello: {
      const int rank =
          m.body.size() == 4 + kMacBytes ? static_cast<int>(wire::GetLe32(m.body.data())) : -1;
      if (rank < 0 || rank >= n) return DropClient(c, "hello with a bad rank");
      const Mac proof = launch::HelloMac(secret_.key(), static_cast<uint32_t>(rank));
      if (!MacEqual(proof, std::span<const uint8_t>(m.body).subspan(4))) {
        return DropClient(c, "hello for rank " + std::to_string(rank) +
                                 " without a proof of the job secret: refused");
      }
      c.rank = rank;
      return;
    }
    case MsgType::kTable: {
      if (c.rank < 0) return DropClient(c, "table before hello");
      tables_[c.rank] = m.body;
      for (const auto& t : tables_) {
        if (!t) return;
      }
      std::vector<uint8_t> all(4);
      wire::PutLe32(all.data(), static_cast<uint32_t>(n));
      for (auto& t : tables_) {
        const size_t at = all.size();
        all.resize(at + 4 + t->size());
        wire::PutLe32(all.data() + at, static_cast<uint32_t>(t->size()));
        std::memcpy(all.data() + at + 4, t->data(), t->size());
        t.reset();  // a later runtime generation exchanges afresh
      }
      Log("all " + std::to_string(n) + " descriptor tables in; sending them out");
      tables_sent_ = true;
      for (Client& o : clients_) {
        if (o.fd >= 0 && o.rank >= 0) [[maybe_unused]]
          Status s = launch::SendMsg(o.fd, MsgType::kTables, all);
      }
      return;
    }
    case MsgType::kBarrier: {
      c.in_barrier = true;
      return CheckBarrier();
    }
    case MsgType::kFinish:
      return DropClient(c, "");
    default:
      return DropClient(c, "unexpected message type from a child");
  }
}

void Job::OnClientData(Client& c) {
  uint8_t buf[65536];
  const ssize_t r = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (r <= 0) {
    if (r == 0 || (errno != EAGAIN && errno != EINTR)) DropClient(c, "");
    return;
  }
  c.parser.Append(buf, static_cast<size_t>(r));
  Message m;
  for (;;) {
    Result<bool> got = c.parser.Next(&m);
    if (!got.ok()) return DropClient(c, got.status().message());
    if (!*got || c.fd < 0) return;
    Handle(c, m);
    if (c.fd < 0) return;
  }
}

int Job::Run() {
  const auto deadline = Clock::now() + std::chrono::seconds(o_.timeout_s);
  for (;;) {
    Reap();
    bool any = false;
    for (const Child& c : children_) any |= c.running;
    if (!any) break;
    if (kill_at_ && Clock::now() > *kill_at_) {
      KillAll(SIGKILL);
      kill_at_ = Clock::now() + std::chrono::hours(1);
    }
    if (o_.timeout_s > 0 && !failure_ && Clock::now() > deadline) {
      std::fprintf(stderr, "ukai launch: timeout after %d s; killing the job\n", o_.timeout_s);
      failure_ = 124;
      KillAll(SIGTERM);
      kill_at_ = Clock::now() + std::chrono::seconds(3);
    }
    std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0},
                               {signal_fd_, POLLIN, 0},
                               {sim_host_ ? sim_host_->wake_fd() : -1, POLLIN, 0}};
    for (const Client& c : clients_) fds.push_back({c.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 20);
    CheckSimulation();
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo si{};
      if (read(signal_fd_, &si, sizeof si) == sizeof si) {
        std::fprintf(stderr, "ukai launch: got signal %u; forwarding\n", si.ssi_signo);
        KillAll(static_cast<int>(si.ssi_signo));
        if (!failure_) failure_ = 128 + static_cast<int>(si.ssi_signo);
        kill_at_ = Clock::now() + std::chrono::seconds(3);
      }
    }
    if (fds[0].revents & POLLIN) {
      for (;;) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) break;
        // Abstract sockets have no file permissions: only this user's processes may talk.
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid()) {
          std::fprintf(stderr, "ukai launch: refused a connection from uid %d (not ours)\n",
                       static_cast<int>(cred.uid));
          close(fd);
          continue;
        }
        clients_.push_back(Client{fd, -1, {}, false});
      }
    }
    for (size_t i = 3; i < fds.size(); ++i) {
      if (fds[i].revents != 0 && clients_[i - 3].fd >= 0) OnClientData(clients_[i - 3]);
    }
    std::erase_if(clients_, [](const Client& c) { return c.fd < 0; });
  }
  for (const Child& c : children_) shm::SweepStaleSegments(c.pid);
  if (!failed_.empty()) {
    std::fprintf(stderr, "ukai launch: %zu of %d processes failed:", failed_.size(), o_.processes);
    for (const std::string& f : failed_) std::fprintf(stderr, " %s;", f.c_str());
    std::fprintf(stderr, " exit code %d\n", failure_.value_or(1));
  }
  return failure_.value_or(0);
}

}  // namespace

Result<int> Launch(const LaunchOptions& options) {
  LaunchOptions o = options;
  if (!o.otf2.empty()) {  // checked before any process starts (docs/otf2-recording.md)
    std::error_code ec;
    o.otf2 = std::filesystem::absolute(o.otf2, ec).lexically_normal().string();
    if (!o.otf2.empty() && o.otf2.size() > 1 && o.otf2.back() == '/') o.otf2.pop_back();
    UKAI_RETURN_IF_ERROR(
        trace::PrepareArchiveDir(o.otf2, /*no_parts=*/true).WithContext("ukai launch --otf2"));
  }
  Job job(o);
  UKAI_RETURN_IF_ERROR(job.Start());
  const int code = job.Run();
  if (o.otf2.empty()) return code;
  Result<trace::MergeReport> merged = trace::MergeArchive(o.otf2, o.processes);
  if (merged.ok()) {
    std::fprintf(stderr, "ukai launch: %s\n", trace::Describe(*merged).c_str());
    return code;
  }
  if (code != 0) {  // the job's failure comes first; the merge's is only reported
    std::fprintf(stderr, "ukai launch: %s\n", merged.status().ToString().c_str());
    return code;
  }
  return merged.status().WithContext("ukai launch");
}

}  // namespace ukai::rt
