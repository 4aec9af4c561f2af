#include "rt/modules/sim/sim_remote.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "rt/core/virtual_time.h"
#include "rt/modules/sim/sim_wire.h"

namespace ukai::rt {
namespace {

namespace sw = simwire;

// A thread in a settled idle round sleeps at most this long (SleepUntilActivity): what it
// waits for comes with a wake-up (Activity) but for what another thread does outside the
// runtime; a timed look per millisecond and waiting thread cost more than the deliveries
// with 16 processes (docs/performance-history.md, "wake-ups instead of timers").
constexpr auto kRemoteIdleSleep = std::chrono::milliseconds(5);
// How often the reader thread looks while a thread of the process waits in the runtime
// (that thread reads the channel when it sleeps: RemoteSimLink::ReadLoop).
constexpr auto kReaderLook = std::chrono::milliseconds(10);

class RemoteSimLink;

// The calling thread's state towards the link (mirrors what the launcher's fabric knows of
// it, so that repeated idle rounds are told once).
struct Slot {
  std::weak_ptr<RemoteSimLink> link;
  const RemoteSimLink* owner = nullptr;
  uint32_t index = 0;
  bool registered = false;  // the fabric has a record of it
  bool idle = false;
  bool program = false;
  int depth = 0;           // threaded handlers running on it
  uint64_t epoch = ~0ull;  // the link's epoch at its last call told
  // The link's epoch at its previous call or idle round (told or not): an idle round is
  // settled when nothing was dispatched since (SimFabric's Thread::settled).
  uint64_t round_epoch = ~0ull;
  bool told_settled = false;  // the fabric has it as a settled idle thread at `epoch`
  // Its last message (sent or corked) was a call that holds the machine (a post, a call,
  // a now request): the launcher has it busy before any later message of it.
  bool busy_told = false;
  int64_t idle_cpu = 0;     // CPU time at its last idle round (after it: waiting)
  int64_t skipped_cpu = 0;  // CPU time spent in idle rounds that were not told
  int64_t last_cpu = 0;
  uint64_t activity = 0;  // the link's activity count at its last call or round
  ~Slot();
};
thread_local Slot tls_remote_slot;

class RemoteSimLink final : public SimLink, public std::enable_shared_from_this<RemoteSimLink> {
 public:
  RemoteSimLink(int fd, uint32_t rank)
      : fd_(fd), rank_(rank), poke_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~RemoteSimLink() override {
    shutdown(fd_, SHUT_RDWR);
    EndReader();
    if (reader_.joinable()) reader_.join();
    close(fd_);
    if (poke_fd_ >= 0) close(poke_fd_);
  }

  uint64_t machine_id() const override { return machine_; }
  double clock_mhz() const override { return clock_mhz_; }

  Result<int> Join(RuntimeId rt, SimMember* m) override {
    if (member_ != nullptr) {
      return Status::FailedPrecondition(
          "sim: the launcher's channel serves one runtime per process");
    }
    member_ = m;
    self_ = rt;
    Slot& s = MySlot();  // the joining thread holds the runtime (as after a call "Init")
    Register(s);
    s.idle = false;
    s.program = true;
    s.busy_told = true;  // the launcher's Join holds the runtime for it (a call "Init")
    UKAI_RETURN_IF_ERROR(Write(sw::EncodeHello(rank_, rt, s.index, Cpu(s))));
    // The answer, read here (the reader thread starts after it).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      sw::Message msg;
      Result<bool> got = parser_.Next(&msg);
      if (!got.ok()) return got.status();
      if (*got) {
        if (msg.type == sw::Type::kRefused) {
          Result<std::string> why = sw::DecodeText(msg.body);
          return Status::Unavailable("sim: the launcher refused this process: " +
                                     (why.ok() ? *why : why.status().message()));
        }
        if (msg.type != sw::Type::kWelcome) {
          return Status::ParseError("sim channel: expected the launcher's welcome, got type " +
                                    std::to_string(static_cast<int>(msg.type)));
        }
        Result<sw::Welcome> w = sw::DecodeWelcome(msg.body);
        if (!w.ok()) return w.status();
        machine_ = w->machine;
        clock_mhz_ = w->clock_mhz;
        cpu_time_.store(w->cpu_time, std::memory_order_relaxed);
        reader_ = std::thread([this] { ReadLoop(); });
        return static_cast<int>(w->process);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return Status::Unavailable("sim: no answer from the launcher in 60 s");
      pollfd p{fd_, POLLIN, 0};
      poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
      uint8_t buf[4096];
      const ssize_t r = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (r == 0) return Status::Unavailable("sim: the launcher closed the channel");
      if (r < 0 && errno != EAGAIN && errno != EINTR) {
        return Status::Unavailable(std::string("sim: channel: ") + std::strerror(errno));
      }
      if (r > 0) parser_.Append(buf, static_cast<size_t>(r));
    }
  }

  // Leaves, then closes the channel: nothing reaches the module after this returns.
  void Leave(RuntimeId) override {
    [[maybe_unused]] Status s = Write(sw::Encode(sw::Type::kLeave, {}), {}, false, nullptr,
                                      std::nullopt, std::nullopt, /*urgent=*/true);
    leaving_.store(true);
    shutdown(fd_, SHUT_RDWR);
    EndReader();
    if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
  }

  bool Has(RuntimeId rt) override {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_.ok() && !gone_.contains(rt);
  }

  Status Post(RuntimeId, RuntimeId to, ByteBlock&& frame,
              std::shared_ptr<SimInFlight> in_flight) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopped_.ok()) return Status::Unavailable(stopped_.message());
      if (gone_.contains(to)) {
        return Status::Unavailable(
            "sim: the peer is not on the simulated machine (finalized "
            "or failed)");
      }
      in_flight->frames.fetch_add(1, std::memory_order_relaxed);
      in_flight->bytes.fetch_add(frame.size(), std::memory_order_relaxed);
      posted_[to].push_back({in_flight, frame.size()});
    }
    Slot& s = MySlot();
    const int64_t cpu = Cpu(s);
    const bool busy = ProgramThread(s) && s.busy_told;
    if (s.registered) Busy(s);
    Status st = Write(sw::EncodePostHeader(s.index, cpu, to, frame.size()), frame.span(), false,
                      &s.epoch, std::nullopt, std::nullopt, /*urgent=*/false, /*hold=*/busy);
    if (s.registered) {
      s.round_epoch = s.epoch;
      s.busy_told = true;
    }
    return st;
  }

  // A program thread's report waits in the cork for the next message of this process (its
  // own next round, as a rule: the thread waits, and its round after the dispatch tells the
  // launcher it looked; one write instead of two) or a pass of another thread (FlushHeld);
  // the launcher holds the machine at this runtime's clock until it has the report, so
  // nothing this process says meanwhile can be late. Other threads' reports go at once.
  void Dispatched(RuntimeId, int n) override {
    Slot& s = MySlot();
    [[maybe_unused]] Status st = Write(sw::EncodeDispatched(s.index, static_cast<uint32_t>(n)), {},
                                       /*bump=*/true, nullptr, std::nullopt,
                                       /*dispatched=*/static_cast<uint64_t>(n), /*urgent=*/false,
                                       /*hold=*/ProgramThread(s));
  }
  void FlushHeld() override {
    if (ProgramThread(MySlot())) return;  // the report waits for that thread's next message
    std::lock_guard<std::mutex> lock(write_mu_);
    if (cork_.empty() || undispatched_ > 0) return;  // else the next report sends it
    [[maybe_unused]] Status st = Send({}, {});
  }

  // Only settled rounds are told (an unsettled one holds the machine exactly as the busy
  // call before it does), each once per epoch, as kIdleSettled: one message per dispatch
  // epoch instead of two. The CPU time of a wait's rounds is not charged.
  void ThreadIdle(RuntimeId, const char* call) override {
    Slot& s = MySlot();
    const int64_t cpu = CpuNow();
    const uint64_t now = epoch_.load(std::memory_order_acquire);
    const bool settled = s.round_epoch == now;
    s.round_epoch = now;
    if (s.idle) s.skipped_cpu += cpu - s.idle_cpu;  // waiting since the last round
    if (!s.idle) waiting_.fetch_add(1, std::memory_order_relaxed);
    s.idle = true;
    s.idle_cpu = cpu;
    s.last_cpu = cpu;
    const uint64_t seen = s.activity;  // at its call before this round's check
    s.activity = activity_.load(std::memory_order_acquire);
    if (!settled) return;
    if (!s.registered || !s.told_settled || s.epoch != now) {
      Register(s);
      // Told only if no dispatch slipped in before the write (under the write lock).
      const Status st = Write(sw::EncodeCall(s.index, sw::CallKind::kIdleSettled,
                                             sw::CallIndex(call), cpu - s.skipped_cpu),
                              {}, false, &s.epoch, /*only_at=*/now);
      s.told_settled = st.ok() && s.epoch == now;
      if (!s.told_settled) return;
      s.busy_told = false;
    }
    // The launcher has it waiting and it saw everything: it sleeps until something happens
    // in this process that it may wait for (SleepUntilActivity), instead of spinning on the
    // host's cores that the other processes and the launcher need.
    if (seen == s.activity) SleepUntilActivity(seen);
  }

  void ThreadCall(RuntimeId, const char* call) override {
    Slot& s = MySlot();
    Register(s);
    const int64_t cpu = Cpu(s);
    const bool busy = ProgramThread(s) && s.busy_told;
    Busy(s);
    s.program = s.program || s.depth == 0;
    [[maybe_unused]] Status st =
        Write(sw::EncodeCall(s.index, sw::CallKind::kCall, sw::CallIndex(call), cpu), {}, false,
              &s.epoch, std::nullopt, std::nullopt, /*urgent=*/false, /*hold=*/busy);
    s.round_epoch = s.epoch;
    s.busy_told = true;
  }

  int64_t NowCycles(RuntimeId) override {
    Slot& s = MySlot();
    const int64_t cpu = Cpu(s);
    if (s.registered) Busy(s);
    std::unique_lock<std::mutex> lock(mu_);
    now_.erase(s.index);
    lock.unlock();
    if (!Write(sw::EncodeNow(s.index, cpu), {}, false, &s.epoch, std::nullopt, std::nullopt,
               /*urgent=*/true)
             .ok()) {
      return last_now_.load();
    }
    if (s.registered) {
      s.round_epoch = s.epoch;
      s.busy_told = true;
    }
    // The answer may be this thread's to read (WaitChannel).
    for (;;) {
      const uint64_t answers = answers_.load(std::memory_order_acquire);
      lock.lock();
      if (now_.contains(s.index) || broken_) break;
      lock.unlock();
      WaitChannel([&] { return answers_.load(std::memory_order_acquire) != answers; });
    }
    auto it = now_.find(s.index);
    if (it == now_.end()) return last_now_.load();
    const int64_t v = it->second;
    now_.erase(it);
    return v;
  }

  void HandlerQueued(RuntimeId) override {
    [[maybe_unused]] Status st = Write(sw::EncodeCall(0, sw::CallKind::kHandlerQueued, 0, 0));
  }
  void HandlerBegin(RuntimeId) override {
    Slot& s = MySlot();
    Register(s);
    ++s.depth;
    Busy(s);
    s.busy_told = false;  // corks only at depth 0 (ProgramThread)
    const int64_t cpu = Cpu(s);
    [[maybe_unused]] Status st = Write(sw::EncodeCall(s.index, sw::CallKind::kHandlerBegin,
                                                      sw::CallIndex("a threaded handler"), cpu),
                                       {}, false, &s.epoch);
    s.round_epoch = s.epoch;
  }
  void HandlerEnd(RuntimeId) override {
    Slot& s = MySlot();
    const int64_t cpu = Cpu(s);
    if (--s.depth <= 0) {
      s.depth = 0;
      if (!s.program) {
        if (s.idle) waiting_.fetch_sub(1, std::memory_order_relaxed);
        s.idle = false;  // a pool thread holds nothing between handlers
        s.told_settled = false;
        s.round_epoch = ~0ull;
      }
    }
    [[maybe_unused]] Status st =
        Write(sw::EncodeCall(s.index, sw::CallKind::kHandlerEnd, 0, cpu), {}, /*bump=*/true);
  }
  std::map<std::string, uint64_t> Counters() override {
    return {{"frames_posted", posted_total_.load()}};
  }
  bool ThreadWaits() override { return waiting_.load(std::memory_order_relaxed) > 0; }

  // A thread of this process ended (`idle`: in a wait; `registered`: the fabric knows it).
  void ThreadEnded(uint32_t index, bool idle, bool registered) {
    if (idle) waiting_.fetch_sub(1, std::memory_order_relaxed);
    if (!registered) return;
    [[maybe_unused]] Status st = Write(sw::EncodeCall(index, sw::CallKind::kThreadEnd, 0, 0));
  }

 private:
  struct Sent {
    std::shared_ptr<SimInFlight> in_flight;
    size_t bytes;
  };

  Slot& MySlot() {
    Slot& s = tls_remote_slot;
    if (s.owner != this || s.link.expired()) {
      s = Slot{};
      s.link = weak_from_this();
      s.owner = this;
      s.index = next_thread_.fetch_add(1);
      s.last_cpu = CpuNow();
    }
    return s;
  }
  static bool ProgramThread(const Slot& s) { return s.registered && s.program && s.depth == 0; }
  // A call that is not an idle round: the thread holds (the fabric is told by the call).
  void Busy(Slot& s) {
    if (s.idle) waiting_.fetch_sub(1, std::memory_order_relaxed);
    s.idle = false;
    s.told_settled = false;
    s.activity = activity_.load(std::memory_order_acquire);
  }
  // Something a waiting thread of this process may wait for happened: an arrival, a peer
  // event, a taken count, a dispatch or a threaded handler's end (an epoch), the channel's end.
  void Activity() {
    bool poke;
    {
      std::lock_guard<std::mutex> lock(idle_mu_);
      activity_.fetch_add(1, std::memory_order_acq_rel);
      poke = poller_;
    }
    idle_cv_.notify_all();
    Poke(poke);
  }
  // Wakes the thread polling the channel (WaitChannel) for something it does not read.
  void Poke(bool poke) {
    if (!poke) return;
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t w = write(poke_fd_, &one, sizeof one);
  }
  // At most kRemoteIdleSleep: the wait may also end by what a thread does outside the runtime.
  void SleepUntilActivity(uint64_t seen) {
    WaitChannel([&] { return activity_.load(std::memory_order_acquire) != seen; });
  }
  // Waits until `done` (checked under idle_mu_; what makes it true notifies idle_cv_ or
  // pokes), at most kRemoteIdleSleep. The first thread to wait reads the channel itself
  // while it waits (the poller: one wake-up per arrival in this process instead of two,
  // the reader thread's and this one's); others wait for its Activity.
  template <typename Done>
  void WaitChannel(Done done) {
    std::unique_lock<std::mutex> lock(idle_mu_);
    if (done()) return;
    if (poller_ || poke_fd_ < 0 || ended_) {
      idle_cv_.wait_for(lock, kRemoteIdleSleep, done);
      return;
    }
    poller_ = true;
    lock.unlock();
    pollfd p[2] = {{fd_, POLLIN, 0}, {poke_fd_, POLLIN, 0}};
    const int r = poll(p, 2, static_cast<int>(kRemoteIdleSleep.count()));
    uint64_t pokes;
    if (r > 0 && (p[1].revents & POLLIN) != 0) {
      [[maybe_unused]] ssize_t n = read(poke_fd_, &pokes, sizeof pokes);
    }
    lock.lock();
    poller_ = false;
    lock.unlock();
    idle_cv_.notify_all();  // another waiting thread may poll now
    if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) ReadAvailable();
  }
  // The reader thread is to end (the channel is closed or closing).
  void EndReader() {
    {
      std::lock_guard<std::mutex> lock(idle_mu_);
      ended_ = true;
    }
    reader_cv_.notify_all();
    idle_cv_.notify_all();
  }
  void Register(Slot& s) {
    if (s.registered) return;
    s.registered = true;
    internal::SetThreadInSimulation(true);
  }
  // The CPU time to report for a call that is not a skipped idle round.
  // The calling thread's CPU time; 0 when the machine charges none (sim.cpu_scale = 0: the
  // launcher's welcome says so), saving the system call.
  int64_t CpuNow() const { return cpu_time_.load(std::memory_order_relaxed) ? ThreadCpuNs() : 0; }
  int64_t Cpu(Slot& s) {
    s.last_cpu = CpuNow();
    return s.last_cpu - s.skipped_cpu;
  }

  // One message (and the frame after it), whole. `bump`: a dispatch epoch ends with it;
  // `epoch_out`: the epoch this message is part of (both under the write lock, so the
  // launcher sees epochs in the order the link counts them).
  // `only_at`: sent only if the epoch is still that (else kWouldBlock, nothing written).
  // `dispatched`: a kDispatched of that many frames; sent at once unless `hold`.
  // `hold`: corked in any case (a program thread's dispatch report, or a call or post of a
  // program thread the launcher already has busy: it holds the machine at the runtime's
  // clock until that thread's next round, so its calls and posts cannot be late; they go
  // with that round, the next message of another thread, or FlushHeld).
  //
  // Corking: while frames delivered to this process are not yet reported dispatched, the
  // launcher holds the whole machine at this runtime's clock, and nothing this process
  // says can move it on (no call of its threads holds it earlier: they carry the runtime's
  // clock) nor be needed before the network passes that clock (a frame it posts now is
  // stamped with it). Its messages then wait here, in order, and go in one write with the
  // next one that matters: the dispatch report, a now request, the leave.
  Status Write(const std::vector<uint8_t>& head, std::span<const uint8_t> tail = {},
               bool bump = false, uint64_t* epoch_out = nullptr,
               std::optional<uint64_t> only_at = std::nullopt,
               std::optional<uint64_t> dispatched = std::nullopt, bool urgent = false,
               bool hold = false) {
    std::unique_lock<std::mutex> lock(write_mu_);
    if (only_at && epoch_.load(std::memory_order_acquire) != *only_at) {
      return Status::WouldBlock("sim: a dispatch came first");
    }
    if (bump) epoch_.fetch_add(1, std::memory_order_acq_rel);
    if (epoch_out != nullptr) *epoch_out = epoch_.load(std::memory_order_acquire);
    if (!tail.empty()) posted_total_.fetch_add(1, std::memory_order_relaxed);
    if (dispatched) undispatched_ -= std::min(undispatched_, *dispatched);
    Status st;
    if (!urgent && (hold || (!dispatched && undispatched_ > 0))) {
      cork_.insert(cork_.end(), head.begin(), head.end());
      cork_.insert(cork_.end(), tail.begin(), tail.end());
    } else {
      st = Send(head, tail);
    }
    lock.unlock();
    if (bump) Activity();  // a waiting thread of this process looks again
    return st;
  }

  // Sends the corked messages, then `head` and `tail` (write lock held).
  Status Send(const std::vector<uint8_t>& head, std::span<const uint8_t> tail) {
    iovec v[3] = {{cork_.data(), cork_.size()},
                  {const_cast<uint8_t*>(head.data()), head.size()},
                  {const_cast<uint8_t*>(tail.data()), tail.size()}};
    const size_t total = cork_.size() + head.size() + tail.size();
    size_t done = 0;
    while (done < total) {
      size_t skip = done;
      iovec cur[3];
      int n = 0;
      for (int i = 0; i < 3; ++i) {
        if (skip >= v[i].iov_len) {
          skip -= v[i].iov_len;
          continue;
        }
        cur[n].iov_base = static_cast<uint8_t*>(v[i].iov_base) + skip;
        cur[n].iov_len = v[i].iov_len - skip;
        skip = 0;
        ++n;
      }
      msghdr mh{};
      mh.msg_iov = cur;
      mh.msg_iovlen = static_cast<size_t>(n);
      const ssize_t r = sendmsg(fd_, &mh, MSG_NOSIGNAL);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        const Status why = Status::Unavailable(std::string("sim: the launcher's channel broke: ") +
                                               (r < 0 ? std::strerror(errno) : "closed"));
        cork_.clear();
        return why;
      }
      done += static_cast<size_t>(r);
    }
    cork_.clear();
    return Status::Ok();
  }

  // A peer event: the fabric starts a new epoch for every waiting thread (its failures do),
  // so their next idle rounds are told again.
  void NewEpoch() {
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      epoch_.fetch_add(1, std::memory_order_acq_rel);
    }
    Activity();
  }

  // The reader thread: takes the launcher's messages while no thread of this process waits
  // in the runtime. A waiting thread reads them itself when it sleeps (WaitChannel): the
  // reader then looks every 10 ms only, in case that thread left its wait without a
  // runtime call (it polls the socket then, without waiting, if nobody polls it).
  void ReadLoop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(idle_mu_);
        if (ended_) break;
        if (waiting_.load(std::memory_order_acquire) > 0) {
          reader_cv_.wait_for(lock, kReaderLook, [&] { return ended_; });
          if (ended_) break;
          if (poller_ || waiting_.load(std::memory_order_acquire) == 0) continue;
          lock.unlock();
          pollfd p{fd_, POLLIN, 0};
          if (poll(&p, 1, 0) <= 0) continue;
          if (!ReadAvailable()) break;
          continue;
        }
      }
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, static_cast<int>(kReaderLook.count()));
      if (r < 0 && errno != EINTR) break;
      if (r > 0 && !ReadAvailable()) break;
    }
  }

  // Reads and handles what the channel holds now, without waiting for more; false once
  // the channel is gone (Broken was called, by this thread or another).
  bool ReadAvailable() {
    std::lock_guard<std::mutex> reading(read_mu_);
    if (closed_) return false;
    uint8_t buf[65536];
    Status why;
    for (;;) {
      sw::Message msg;
      Result<bool> got = parser_.Next(&msg);
      if (!got.ok()) {
        why = got.status();
        break;
      }
      if (*got) {
        why = Handle(msg);
        if (!why.ok()) break;
        continue;
      }
      const ssize_t r = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (r <= 0) {
        why = Status::Unavailable(std::string("sim: the launcher's channel closed") +
                                  (r < 0 ? std::string(": ") + std::strerror(errno) : ""));
        break;
      }
      parser_.Append(buf, static_cast<size_t>(r));
    }
    closed_ = true;
    Broken(why);
    EndReader();
    return false;
  }

  Status Handle(const sw::Message& msg) {
    if (leaving_.load() && msg.type != sw::Type::kNowIs) return Status::Ok();
    switch (msg.type) {
      case sw::Type::kArrive: {
        Result<std::span<const uint8_t>> f = sw::DecodeArrive(msg.body);
        if (!f.ok()) return f.status();
        ByteBlock b(f->size());
        b.Resize(f->size());
        std::memcpy(b.data(), f->data(), f->size());
        arrived_->frames.fetch_add(1, std::memory_order_relaxed);
        arrived_->bytes.fetch_add(f->size(), std::memory_order_relaxed);
        {
          std::lock_guard<std::mutex> lock(write_mu_);
          ++undispatched_;  // before its dispatch can be reported (Write's corking)
        }
        member_->Arrive(std::move(b), arrived_);
        Activity();  // a thread that polls the runtime itself may dispatch it
        return Status::Ok();
      }
      case sw::Type::kPeerGone: {
        Result<sw::PeerGone> g = sw::DecodePeerGone(msg.body);
        if (!g.ok()) return g.status();
        NewEpoch();
        {
          std::lock_guard<std::mutex> lock(mu_);
          gone_.insert(g->peer);
        }
        member_->PeerGone(g->peer, g->orderly, Status::Unavailable(g->text));
        return Status::Ok();
      }
      case sw::Type::kStopped: {
        Result<std::string> t = sw::DecodeText(msg.body);
        if (!t.ok()) return t.status();
        NewEpoch();
        {
          std::lock_guard<std::mutex> lock(mu_);
          stopped_ = Status::Unavailable(*t);
        }
        member_->Stopped(Status::Unavailable(*t));
        return Status::Ok();
      }
      case sw::Type::kNowIs: {
        Result<sw::NowIs> n = sw::DecodeNowIs(msg.body);
        if (!n.ok()) return n.status();
        {
          std::lock_guard<std::mutex> lock(mu_);
          now_[n->thread] = n->cycles;
        }
        last_now_.store(n->cycles);
        bool poke;
        {
          std::lock_guard<std::mutex> lock(idle_mu_);
          answers_.fetch_add(1, std::memory_order_acq_rel);
          poke = poller_;
        }
        idle_cv_.notify_all();  // the asking thread (NowCycles) may wait there
        Poke(poke);
        return Status::Ok();
      }
      case sw::Type::kTaken: {
        Result<sw::Taken> t = sw::DecodeTaken(msg.body);
        if (!t.ok()) return t.status();
        std::lock_guard<std::mutex> lock(mu_);
        auto it = posted_.find(t->peer);
        const size_t have = it == posted_.end() ? 0 : it->second.size();
        if (t->frames > have) {
          return Status::ParseError("sim channel: the launcher reports " +
                                    std::to_string(t->frames) + " frames taken of " +
                                    std::to_string(have) + " posted");
        }
        for (uint64_t i = 0; i < t->frames; ++i) {
          Sent& s = it->second.front();
          s.in_flight->bytes.fetch_sub(s.bytes, std::memory_order_relaxed);
          s.in_flight->frames.fetch_sub(1, std::memory_order_release);
          it->second.pop_front();
        }
        Activity();  // a send waiting for room may go on
        return Status::Ok();
      }
      default:
        return Status::ParseError("sim channel: unexpected message type " +
                                  std::to_string(static_cast<int>(msg.type)) +
                                  " from the launcher");
    }
  }

  // The channel is gone: this runtime is stopped, its sends fail, waits end.
  void Broken(const Status& why) {
    std::vector<RuntimeId> peers;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      broken_ = true;
      if (stopped_.ok()) {
        first = true;
        stopped_ = why.ok() ? Status::Unavailable("sim: the launcher's channel closed") : why;
      }
      for (auto& [peer, q] : posted_) {
        if (!gone_.contains(peer)) peers.push_back(peer);
        gone_.insert(peer);
      }
    }
    answers_.fetch_add(1, std::memory_order_acq_rel);  // a NowCycles waiting gives up
    Activity();
    if (!first || leaving_.load()) return;
    if (why.code() == StatusCode::kParseError) {  // not a close: say why this runtime stops
      std::fprintf(stderr, "ukai sim module (rank %u): %s\n", rank_, why.ToString().c_str());
    }
    member_->Stopped(stopped_);
    for (RuntimeId p : peers) member_->PeerGone(p, /*orderly=*/false, stopped_);
  }

  const int fd_;
  const uint32_t rank_;
  uint64_t machine_ = 0;
  double clock_mhz_ = 1000;
  SimMember* member_ = nullptr;
  RuntimeId self_ = 0;
  sw::SimWireParser parser_;  // Join's thread, then whoever reads (read_mu_)
  std::thread reader_;
  std::mutex read_mu_;   // one thread reads and handles at a time (ReadAvailable)
  bool closed_ = false;  // the channel is gone (read_mu_)
  const int poke_fd_;    // wakes the poller (WaitChannel)
  bool poller_ = false;  // a waiting thread polls the channel (idle_mu_)
  bool ended_ = false;   // the reader thread ends (idle_mu_)
  std::condition_variable reader_cv_;
  std::atomic<uint64_t> answers_{0};  // now replies taken (NowCycles)
  std::atomic<bool> cpu_time_{true};  // the machine charges CPU time (the welcome)
  std::mutex write_mu_;
  std::vector<uint8_t> cork_;  // messages waiting for the next one that matters (Write)
  uint64_t undispatched_ = 0;  // frames arrived and not yet reported dispatched
  std::atomic<uint64_t> epoch_{0};
  std::mutex idle_mu_;
  std::condition_variable idle_cv_;  // threads sleeping in a settled idle round
  std::atomic<uint64_t> activity_{0};
  std::atomic<int> waiting_{0};  // threads whose last call was an idle round (ThreadWaits)
  std::atomic<bool> leaving_{false};
  std::atomic<uint32_t> next_thread_{1};
  std::atomic<uint64_t> posted_total_{0};
  std::atomic<int64_t> last_now_{0};
  std::shared_ptr<SimInFlight> arrived_ = std::make_shared<SimInFlight>();

  std::mutex mu_;
  Status stopped_;
  bool broken_ = false;  // the channel is gone: no answer will come
  std::set<RuntimeId> gone_;
  std::unordered_map<uint32_t, int64_t> now_;
  std::unordered_map<RuntimeId, std::deque<Sent>> posted_;
};

Slot::~Slot() {
  if (!registered && !idle) return;
  if (std::shared_ptr<RemoteSimLink> l = link.lock()) l->ThreadEnded(index, idle, registered);
}

Result<int> ParseNumber(const std::string& what, const std::string& v) {
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("sim: " + what + " '" + v + "' is not a number");
  }
  return std::stoi(v);
}

}  // namespace

Result<std::shared_ptr<SimLink>> NewRemoteSimLink(const std::string& fd, const std::string& rank) {
  Result<int> f = ParseNumber("UKAI_SIM_FD", fd);
  if (!f.ok()) return f.status();
  Result<int> r = ParseNumber("UKAI_SIM_RANK", rank);
  if (!r.ok()) return r.status();
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(*f, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
    return Status::InvalidArgument("sim: UKAI_SIM_FD=" + fd +
                                   " is not the launcher's stream socket (run under `ukai "
                                   "launch --sim MACHINE.toml`)");
  }
  return std::shared_ptr<SimLink>(std::make_shared<RemoteSimLink>(*f, static_cast<uint32_t>(*r)));
}

}  // namespace ukai::rt
