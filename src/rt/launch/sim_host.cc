#include "rt/launch/sim_host.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "rt/modules/sim/sim_wire.h"

namespace ukai::rt {
namespace {

namespace sw = simwire;

std::string RankName(int rank) { return "rank " + std::to_string(rank); }

}  // namespace

struct SimHost::Shared {
  std::mutex mu;
  std::set<RuntimeId> runtimes;  // every runtime id that joined (a second claim is refused)
  std::vector<Stop> stops;
};

// One process: its channel, its threads, and the member the fabric calls.
struct SimHost::Conn final : public SimMember {
  SimHost* host = nullptr;
  int rank = 0;
  int fd = -1, child_fd = -1;
  RuntimeId rt = 0;
  bool joined = false, left = false;  // poller thread only
  bool open = true;                   // poller thread only: its channel is read
  sw::SimWireParser parser;           // poller thread only
  std::atomic<bool> ending{false};    // the channel ended: a Stopped is not a node failure
  std::thread writer;

  struct Out {
    std::vector<uint8_t> head;
    ByteBlock frame;
  };
  std::mutex out_mu;
  std::condition_variable out_cv;
  std::vector<Out> out;
  bool closing = false;
  bool writer_wanted = false;  // a flush found the socket full: the writer sends the rest
  // Frames this process posted are not all taken yet: the writer looks every millisecond.
  std::atomic<bool> watch{false};
  std::atomic<uint64_t> flushes{0};  // writes to the process (each with the taken counts)
  // Frames handed to the process and not yet dispatched by it (their senders' counts).
  std::deque<std::pair<std::shared_ptr<SimInFlight>, size_t>> delivered;

  // One sender at a time (Flush): the bytes taken from `out` and not yet sent, in order.
  std::mutex send_mu;
  std::vector<uint8_t> wbuf;
  size_t wdone = 0;

  // What this process posted, per peer; a flush tells it what its peers took.
  struct PeerPost {
    std::shared_ptr<SimInFlight> in_flight = std::make_shared<SimInFlight>();
    uint64_t frames = 0, bytes = 0, told_frames = 0, told_bytes = 0;
  };
  std::mutex posted_mu;
  std::unordered_map<RuntimeId, PeerPost> posted;

  // Queued for the next flush (by the poller after its batch, the stepping thread's Kick,
  // or the writer).
  void Queue(std::vector<uint8_t> head, ByteBlock frame = {}) {
    std::lock_guard<std::mutex> lock(out_mu);
    out.push_back({std::move(head), std::move(frame)});
  }
  bool HasQueued() {
    std::lock_guard<std::mutex> lock(out_mu);
    return !out.empty();
  }
  // Sends what is queued (and the taken counts) in one write. `block` false: never waits
  // for the socket or for another sender; the writer thread sends what is left.
  void Flush(bool block);
  // Appends to wbuf what its peers took since the last count (send_mu held); whether
  // frames it posted are still not taken.
  bool AppendTaken();

  // SimMember (the fabric's lock is held: queue only; Kick flushes).
  void Arrive(ByteBlock&& frame, std::shared_ptr<SimInFlight> in_flight) override {
    std::vector<uint8_t> head = sw::EncodeArriveHeader(frame.size());
    std::lock_guard<std::mutex> lock(out_mu);
    delivered.emplace_back(std::move(in_flight), frame.size());
    out.push_back({std::move(head), std::move(frame)});
  }
  void PeerGone(RuntimeId peer, bool orderly, const Status& why) override {
    Queue(sw::EncodePeerGone(peer, orderly, why.message()));
  }
  // The stepping thread writes what this step handed over itself (no hand-off to the
  // writer thread and back).
  void Kick() override { Flush(/*block=*/false); }
  void Stopped(const Status& why) override {
    // Noted for the launcher before the process can learn it (and exit on it): a rank the
    // launcher reaps is judged by what was noted by then (launcher.cc, Reap).
    if (!ending.load()) host->StopRank(rank, why.message(), /*failure=*/false);
    Queue(sw::EncodeText(sw::Type::kStopped, why.message()));
  }

  // Frames the process will never dispatch (it died): taken, as far as their senders go.
  void ReleaseDelivered() {
    std::lock_guard<std::mutex> lock(out_mu);
    for (auto& [f, bytes] : delivered) {
      f->bytes.fetch_sub(bytes, std::memory_order_relaxed);
      f->frames.fetch_sub(1, std::memory_order_release);
    }
    delivered.clear();
  }
};

Result<std::unique_ptr<SimHost>> SimHost::Create(std::shared_ptr<SimFabric> fabric, int ranks) {
  std::unique_ptr<SimHost> h(new SimHost());
  h->fabric_ = std::move(fabric);
  h->shared_ = std::make_unique<Shared>();
  if (pipe2(h->wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::IoError(std::string("ukai launch --sim: pipe: ") + std::strerror(errno));
  }
  for (int r = 0; r < ranks; ++r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return Status::IoError(std::string("ukai launch --sim: socketpair: ") + std::strerror(errno));
    }
    auto c = std::make_unique<Conn>();
    c->host = h.get();
    c->rank = r;
    c->fd = sv[0];
    c->child_fd = sv[1];
    h->conns_.push_back(std::move(c));
  }
  h->epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (h->epoll_fd_ < 0) {
    return Status::IoError(std::string("ukai launch --sim: epoll: ") + std::strerror(errno));
  }
  for (size_t i = 0; i < h->conns_.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (epoll_ctl(h->epoll_fd_, EPOLL_CTL_ADD, h->conns_[i]->fd, &ev) != 0) {
      return Status::IoError(std::string("ukai launch --sim: epoll_ctl: ") + std::strerror(errno));
    }
  }
  h->fabric_->ExpectJoins(ranks);     // no process starts late in simulated time
  h->fabric_->SetSteppedByCallers();  // the poller steps the network (PollLoop)
  for (auto& c : h->conns_) {
    Conn* p = c.get();
    p->writer = std::thread([hp = h.get(), p] { hp->WriteLoop(*p); });
  }
  h->poller_ = std::thread([hp = h.get()] { hp->PollLoop(); });
  return h;
}

SimHost::~SimHost() {
  for (auto& c : conns_) shutdown(c->fd, SHUT_RDWR);  // the poller ends each channel
  if (poller_.joinable()) poller_.join();
  for (auto& c : conns_) {
    {
      std::lock_guard<std::mutex> lock(c->out_mu);
      c->closing = true;
    }
    c->out_cv.notify_all();
    if (c->writer.joinable()) c->writer.join();
    // The fabric may outlive this host: it calls the channel no more.
    if (c->joined) fabric_->DetachMember(c->rt, Status::Unavailable("sim: the launcher ended"));
    close(c->fd);
    if (c->child_fd >= 0) close(c->child_fd);
  }
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

int SimHost::child_fd(int rank) const { return conns_[static_cast<size_t>(rank)]->child_fd; }

void SimHost::CloseChildEnd(int rank) {
  Conn& c = *conns_[static_cast<size_t>(rank)];
  if (c.child_fd >= 0) close(c.child_fd);
  c.child_fd = -1;
}

int SimHost::wake_fd() const { return wake_[0]; }

std::vector<SimHost::Stop> SimHost::TakeStopped() {
  uint8_t buf[64];
  while (read(wake_[0], buf, sizeof buf) > 0) {
  }
  std::lock_guard<std::mutex> lock(shared_->mu);
  std::vector<Stop> out;
  out.swap(shared_->stops);
  return out;
}

void SimHost::StopRank(int rank, const std::string& why, bool failure) {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stops.push_back({rank, why, failure});
  }
  const uint8_t b = 1;
  [[maybe_unused]] ssize_t w = write(wake_[1], &b, 1);
}

// One thread reads every process's channel: what came in one look at all of them is
// replayed, answered, and then the network stepped once (one wake-up of this thread for
// the messages of several processes, instead of one reader thread woken per process).
void SimHost::PollLoop() {
  std::vector<epoll_event> events(conns_.size());
  std::vector<uint8_t> buf(65536);
  size_t open = conns_.size();
  while (open > 0) {
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < n; ++i) {
      Conn& c = *conns_[static_cast<size_t>(events[i].data.u64)];
      if (!c.open) continue;
      Status why;
      if (!ReadConn(c, buf, &why)) {
        EndConn(c, why);
        --open;
      }
    }
    // Everything the processes sent so far is replayed: answer it (taken counts alone wait
    // for the next write: the step's arrivals, or the writer's look), then step the network
    // as far as that lets it move (here, rather than waking the driver thread).
    for (int i = 0; i < n; ++i) {
      Conn& c = *conns_[static_cast<size_t>(events[i].data.u64)];
      if (c.open && c.HasQueued()) c.Flush(/*block=*/false);
    }
    fabric_->StepOn();
  }
}

bool SimHost::ReadConn(Conn& c, std::vector<uint8_t>& buf, Status* why) {
  for (;;) {
    sw::Message m;
    Result<bool> got = c.parser.Next(&m);
    if (!got.ok()) {
      *why = got.status();
      return false;
    }
    if (*got) {
      *why = Handle(c, static_cast<uint8_t>(m.type), m.body);
      if (!why->ok()) return false;
      continue;
    }
    const ssize_t r = recv(c.fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (r <= 0) return false;  // the process ended (or the launcher shuts down)
    c.parser.Append(buf.data(), static_cast<size_t>(r));
  }
}

void SimHost::EndConn(Conn& c, const Status& why) {
  c.open = false;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  if (!why.ok()) {  // a process that does not speak the protocol is cut off and stopped
    StopRank(c.rank, RankName(c.rank) + ": " + why.message(), /*failure=*/true);
  }
  c.ending.store(true);
  if (!c.joined) fabric_->AbandonJoin();
  if (c.joined && !c.left) {
    fabric_->FailRuntime(c.rt, Status::Unavailable("sim: process " + std::to_string(c.rank) +
                                                   (why.ok() ? " ended without leaving the "
                                                               "simulated machine"
                                                             : " was cut off: " + why.message())));
  }
  fabric_->ForgetRemoteThread(static_cast<uint64_t>(c.rank + 1) << 32);
  c.ReleaseDelivered();
  fabric_->StepOn();  // its end may let the others move on
  {
    std::lock_guard<std::mutex> lock(c.out_mu);
    c.closing = true;
  }
  c.out_cv.notify_all();
}

Status SimHost::Handle(Conn& c, uint8_t type, std::span<const uint8_t> body) {
  const auto t = static_cast<sw::Type>(type);
  if (!c.joined && t != sw::Type::kHello) {
    return Status::ParseError("sim channel: message type " + std::to_string(type) +
                              " before the hello");
  }
  auto caller = [&c](uint32_t thread, int64_t cpu) {
    return SimCaller{(static_cast<uint64_t>(c.rank + 1) << 32) | thread, cpu};
  };
  switch (t) {
    case sw::Type::kHello: {
      Result<sw::Hello> h = sw::DecodeHello(body);
      if (!h.ok()) return h.status();
      Status refuse;
      if (c.joined) {
        refuse = Status::ParseError("sim channel: a second hello (one runtime per process)");
      } else if (h->rank != static_cast<uint32_t>(c.rank)) {
        refuse = Status::ParseError("sim channel: the process of rank " + std::to_string(c.rank) +
                                    " says it is rank " + std::to_string(h->rank));
      } else {
        std::lock_guard<std::mutex> lock(shared_->mu);
        if (!shared_->runtimes.insert(h->runtime).second) {
          refuse = Status::ParseError("sim channel: runtime id claimed by another process");
        }
      }
      if (refuse.ok()) {
        const SimCaller who = caller(h->thread, h->cpu);
        Result<int> p = fabric_->Join(h->runtime, &c, c.rank, &who);
        if (!p.ok()) {
          refuse = p.status();
        } else {
          c.joined = true;
          c.rt = h->runtime;
          c.Queue(sw::EncodeWelcome(fabric_->id(), fabric_->clock_mhz(), static_cast<uint32_t>(*p),
                                    /*cpu_time=*/fabric_->cpu_scale() > 0));
          return Status::Ok();
        }
      }
      c.Queue(sw::EncodeText(sw::Type::kRefused, refuse.message()));
      return refuse;
    }
    case sw::Type::kCall: {
      Result<sw::Call> call = sw::DecodeCall(body);
      if (!call.ok()) return call.status();
      if (c.left) return Status::Ok();
      const SimCaller who = caller(call->thread, call->cpu);
      switch (call->kind) {
        case sw::CallKind::kIdle:
          fabric_->ThreadIdle(c.rt, call->call, &who);
          break;
        case sw::CallKind::kIdleSettled:
          fabric_->ThreadIdle(c.rt, call->call, &who, /*settled=*/true);
          break;
        case sw::CallKind::kCall:
          fabric_->ThreadCall(c.rt, call->call, &who);
          break;
        case sw::CallKind::kHandlerQueued:
          fabric_->HandlerQueued(c.rt);
          break;
        case sw::CallKind::kHandlerBegin:
          fabric_->HandlerBegin(c.rt, &who);
          break;
        case sw::CallKind::kHandlerEnd:
          fabric_->HandlerEnd(c.rt, &who);
          break;
        case sw::CallKind::kThreadEnd:
          if (call->thread != 0) fabric_->ForgetRemoteThread(who.key);
          break;
      }
      return Status::Ok();
    }
    case sw::Type::kNow: {
      Result<sw::Now> n = sw::DecodeNow(body);
      if (!n.ok()) return n.status();
      const SimCaller who = caller(n->thread, n->cpu);
      c.Queue(sw::EncodeNowIs(n->thread, fabric_->NowCycles(c.rt, &who)));
      return Status::Ok();
    }
    case sw::Type::kPost: {
      Result<sw::Post> p = sw::DecodePost(body);
      if (!p.ok()) return p.status();
      const SimCaller who = caller(p->thread, p->cpu);
      ByteBlock frame(p->frame.size());
      frame.Resize(p->frame.size());
      std::memcpy(frame.data(), p->frame.data(), p->frame.size());
      std::lock_guard<std::mutex> lock(c.posted_mu);
      Conn::PeerPost& pp = c.posted[p->peer];
      const size_t bytes = frame.size();
      if (fabric_->Post(c.rt, p->peer, std::move(frame), pp.in_flight, &who).ok()) {
        ++pp.frames;
        pp.bytes += bytes;
      } else {
        fabric_->CountRefused();
      }
      return Status::Ok();
    }
    case sw::Type::kDispatched: {
      Result<sw::Dispatched> d = sw::DecodeDispatched(body);
      if (!d.ok()) return d.status();
      {
        std::lock_guard<std::mutex> lock(c.out_mu);
        if (d->frames > c.delivered.size()) {
          return Status::ParseError("sim channel: dispatched " + std::to_string(d->frames) +
                                    " frames, but " + std::to_string(c.delivered.size()) +
                                    " were delivered");
        }
        for (uint32_t i = 0; i < d->frames; ++i) {
          auto& [f, bytes] = c.delivered.front();
          f->bytes.fetch_sub(bytes, std::memory_order_relaxed);
          f->frames.fetch_sub(1, std::memory_order_release);
          c.delivered.pop_front();
        }
      }
      const SimCaller who = caller(d->thread, 0);
      fabric_->Dispatched(c.rt, static_cast<int>(d->frames), &who);
      return Status::Ok();
    }
    case sw::Type::kLeave:
      if (!body.empty()) return Status::ParseError("sim channel: leave with a body");
      if (!c.left) fabric_->Leave(c.rt);
      c.left = true;
      return Status::Ok();
    default:
      return Status::ParseError("sim channel: message type " + std::to_string(type) +
                                " is the launcher's, not a process's");
  }
}

bool SimHost::Conn::AppendTaken() {
  bool outstanding = false;
  std::lock_guard<std::mutex> lock(posted_mu);
  for (auto& [peer, pp] : posted) {
    const uint64_t frames = pp.frames - pp.in_flight->frames.load(std::memory_order_acquire);
    const uint64_t bytes = pp.bytes - pp.in_flight->bytes.load(std::memory_order_relaxed);
    if (frames > pp.told_frames) {
      const std::vector<uint8_t> m =
          sw::EncodeTaken(peer, frames - pp.told_frames, bytes - pp.told_bytes);
      wbuf.insert(wbuf.end(), m.begin(), m.end());
      pp.told_frames = frames;
      pp.told_bytes = bytes;
    }
    outstanding = outstanding || pp.told_frames < pp.frames;
  }
  return outstanding;
}

void SimHost::Conn::Flush(bool block) {
  std::unique_lock<std::mutex> sending(send_mu, std::defer_lock);
  if (block) {
    sending.lock();
  } else if (!sending.try_lock()) {  // the writer sends: it takes what is queued after
    {
      std::lock_guard<std::mutex> lock(out_mu);
      writer_wanted = true;
    }
    out_cv.notify_one();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(out_mu);
    for (Out& o : out) {
      wbuf.insert(wbuf.end(), o.head.begin(), o.head.end());
      wbuf.insert(wbuf.end(), o.frame.data(), o.frame.data() + o.frame.size());
    }
    out.clear();
  }
  const bool outstanding = AppendTaken();
  if (outstanding && !watch.exchange(true)) {
    {
      std::lock_guard<std::mutex> lock(out_mu);
      writer_wanted = true;  // from now on every millisecond
    }
    out_cv.notify_one();
  } else if (!outstanding) {
    watch.store(false);
  }
  const int flags = MSG_NOSIGNAL | (block ? 0 : MSG_DONTWAIT);
  while (wdone < wbuf.size()) {
    const ssize_t r = send(fd, wbuf.data() + wdone, wbuf.size() - wdone, flags);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && !block && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      {
        std::lock_guard<std::mutex> lock(out_mu);
        writer_wanted = true;  // the socket is full: the writer waits for room
      }
      out_cv.notify_one();
      return;
    }
    if (r <= 0) {  // the process is gone: the poller ends the connection
      wdone = wbuf.size();
      break;
    }
    wdone += static_cast<size_t>(r);
  }
  if (!wbuf.empty()) flushes.fetch_add(1, std::memory_order_relaxed);
  wbuf.clear();
  wdone = 0;
}

// Sends what a flush could not (a full socket), the last messages (a refusal) before the
// channel closes, and the taken counts while frames this process posted are not yet taken
// (its peers' dispatches do not wake this thread: it looks then, and writes only when
// nothing was written to the process since its last look, for every write carries the
// counts of its time. It looks 1 ms after it wrote, and twice as long after each look that
// found a write, up to kWatchMaxMs: a count is told within 2 x kWatchMaxMs).
void SimHost::WriteLoop(Conn& c) {
  constexpr int kWatchMaxMs = 8;
  uint64_t looked = 0;  // c.flushes at the last look
  int interval_ms = 1;
  for (;;) {
    bool wanted;
    {
      std::unique_lock<std::mutex> lock(c.out_mu);
      c.out_cv.wait_for(lock, std::chrono::milliseconds(c.watch.load() ? interval_ms : 50),
                        [&] { return c.writer_wanted || c.closing; });
      wanted = c.writer_wanted;
      c.writer_wanted = false;
      if (c.closing && c.out.empty()) {
        lock.unlock();
        c.Flush(/*block=*/true);
        shutdown(c.fd, SHUT_RDWR);  // after the last message (a refusal) went out
        break;
      }
    }
    const uint64_t flushes = c.flushes.load(std::memory_order_relaxed);
    if (!wanted && flushes != looked) {
      looked = flushes;
      interval_ms = std::min(2 * interval_ms, kWatchMaxMs);
      continue;
    }
    c.Flush(/*block=*/true);
    looked = c.flushes.load(std::memory_order_relaxed);
    interval_ms = 1;
  }
}

}  // namespace ukai::rt
