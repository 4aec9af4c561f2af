#include "rt/modules/shm/shm_module.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rt/modules/shm/shm_channel.h"
#include "rt/modules/shm/shm_pool.h"
#include "rt/modules/shm/shm_socket.h"
#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

using shm::ShmChannel;

constexpr uint8_t kShmDescriptorVersion = 1;
// Frames from this size on go by cross-memory attach (shm.cma_bytes; 0 = never); unset =
// frames too large for one ring record (instead of chunks: one copy instead of two).
constexpr size_t kCmaAuto = ~size_t{0};
constexpr size_t kDefaultCmaBytes = size_t{64} << 10;  // shm.cma_bytes by default
constexpr uint64_t kListenTag = 0, kEventTag = 1;      // epoll tags; channels use 2, 3, ...
constexpr int kPollBudget = 64;                        // frames per channel per Progress()
constexpr uint64_t kHousekeepingNs = 200000;           // accept and hang-up checks while busy-idle
constexpr size_t kDefaultPoolBytes = size_t{256} << 20;
constexpr size_t kDefaultPoolMinBytes = size_t{16} << 10;
// Heap frames from this size on are copied into the pool and sent as pool frames
// (shm.stage_bytes; 0 = never; shm_channel.h).
constexpr size_t kDefaultStageBytes = size_t{64} << 10;

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Processes with the same key see the same /dev/shm and abstract unix sockets.
std::string HostKey() {
  std::string key;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, key);
  char buf[128];
  for (const char* ns : {"/proc/self/ns/ipc", "/proc/self/ns/net"}) {
    const ssize_t n = readlink(ns, buf, sizeof buf);
    key += '|';
    if (n > 0) key.append(buf, static_cast<size_t>(n));
  }
  return key;
}

struct ShmDescriptor {
  std::string host_key;
  std::string socket_name;
};

Result<ShmDescriptor> DecodeShmDescriptor(std::span<const uint8_t> d) {
  auto fail = [](const std::string& what) { return Status::ParseError("shm descriptor: " + what); };
  if (d.size() < 5) return fail("too short (" + std::to_string(d.size()) + " bytes)");
  if (d[0] != kShmDescriptorVersion) return fail("unknown version " + std::to_string(d[0]));
  ShmDescriptor out;
  size_t at = 1;
  for (std::string* field : {&out.host_key, &out.socket_name}) {
    if (at + 2 > d.size()) return fail("truncated at byte " + std::to_string(at));
    const size_t n = wire::GetLe16(d.data() + at);
    at += 2;
    if (at + n > d.size())
      return fail("field overruns the descriptor at byte " + std::to_string(at));
    field->assign(reinterpret_cast<const char*>(d.data() + at), n);
    at += n;
  }
  if (at != d.size()) return fail("trailing bytes");
  if (out.socket_name.empty()) return fail("empty socket name");
  return out;
}

class ShmModule final : public Module {
 public:
  ~ShmModule() override {
    Close();
    // Kept until here (AllocateBlock may be called until the runtime goes); blocks still in
    // use (Buffers, other runtimes' channels) keep the pool alive after our reference.
    if (pool_ != nullptr) pool_->Unref();
  }
  std::string_view name() const override { return "shm"; }

  Status Init(ModuleHost* host) override;
  ModuleCaps Query() const override {
    ModuleCaps c;
    c.reach = Reach::kSameHost;
    c.latency_us = 0.5;
    c.bandwidth_gbytes_s = 10;
    c.max_payload_bytes = wire::kMaxPayloadBytes;
    c.detects_peer_failure = true;
    c.multi_process = true;
    if (pool_ != nullptr) c.min_block_bytes = pool_min_bytes_;
    return c;
  }
  Result<std::vector<uint8_t>> MakeDescriptor() override;
  bool CanReach(std::span<const uint8_t> descriptor) const override {
    Result<ShmDescriptor> d = DecodeShmDescriptor(descriptor);
    return d.ok() && d->host_key == host_key_;
  }
  Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer,
                                              std::span<const uint8_t> descriptor) override;
  int Progress() override;
  int WaitFd() const override { return epfd_; }
  ByteBlock AllocateBlock(size_t capacity) override {
    if (pool_ == nullptr || capacity < pool_min_bytes_) return ByteBlock();
    return ByteBlock::FromSource(pool_, capacity);
  }
  std::map<std::string, uint64_t> Counters() const override;
  bool PrepareToBlock() override;
  void Unblocked() override;
  void Close() override;

 private:
  Result<size_t> SizeParam(const char* key, size_t fallback) const;
  void Register(const std::shared_ptr<ShmChannel>& ch);
  void Unregister(uint64_t tag);
  int Housekeeping();
  void Accept();
  void OnSocketEvent(uint64_t tag, uint32_t events);
  void RefreshSnapshot();

  ModuleHost* host_ = nullptr;
  std::string host_key_;
  std::string socket_name_;
  int listen_fd_ = -1, event_fd_ = -1, epfd_ = -1;
  size_t ring_bytes_ = shm::kDefaultRingCapacity;
  size_t chunk_bytes_ = size_t{1} << 20;
  size_t cma_bytes_ = 0;
  shm::ShmPool* pool_ = nullptr;  // our reference, set by Init; nullptr: no pool
  size_t pool_min_bytes_ = kDefaultPoolMinBytes;
  size_t stage_bytes_ = kDefaultStageBytes;
  bool light_barriers_ = false;  // this process registered for membarrier (shm_ring.h)
  // Progress passes coalesce (ShmChannel::Poll) unless the job oversubscribes the host:
  // there a skipped poll is followed by a turn of the other processes (a sched_yield, 5-40
  // us), so a message the skip left in the ring waits that long (docs/collectives.md,
  // "Waiting when processes outnumber the cores").
  bool coalesce_ = true;
  std::shared_ptr<shm::ShmCounters> counters_ = std::make_shared<shm::ShmCounters>();
  std::atomic<uint64_t> refused_{0};  // connections refused at set-up (Counters: "refused")

  std::mutex mu_;  // guards channels_, next_tag_, version_
  std::unordered_map<uint64_t, std::shared_ptr<ShmChannel>> channels_;
  uint64_t next_tag_ = 2;
  std::atomic<uint64_t> version_{0};

  // Progress thread only.
  std::vector<std::pair<uint64_t, std::shared_ptr<ShmChannel>>> snapshot_;
  uint64_t snapshot_version_ = ~uint64_t{0};
  bool asleep_ = false;  // doorbells armed (between PrepareToBlock and Unblocked)
  unsigned idle_passes_ = 0;
  // Channels that hung up during this Progress(): frames they delivered in place (ring
  // records, the peer's pool) must stay mapped until the next one.
  std::vector<std::shared_ptr<ShmChannel>> retired_;
  // Peers with a channel that closed in order while another channel to them remained
  // (progress thread only; see OnSocketEvent).
  std::unordered_set<RuntimeId> left_in_order_;
  uint64_t last_housekeeping_ns_ = 0;
};

Result<size_t> ShmModule::SizeParam(const char* key, size_t fallback) const {
  const std::string v = host_->Param(key);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || v[0] == '-') {
    return Status::InvalidArgument(std::string(key) + "=" + v + ": not a non-negative integer");
  }
  return static_cast<size_t>(n);
}

Status ShmModule::Init(ModuleHost* host) {
  host_ = host;
  coalesce_ = !host_->oversubscribed();
  Result<size_t> ring = SizeParam("shm.ring_bytes", shm::kDefaultRingCapacity);
  Result<size_t> chunk = SizeParam("shm.chunk_bytes", size_t{1} << 20);
  Result<size_t> cma = SizeParam("shm.cma_bytes", kCmaAuto);
  Result<size_t> pool = SizeParam("shm.pool_bytes", kDefaultPoolBytes);
  Result<size_t> pool_min = SizeParam("shm.pool_min_bytes", kDefaultPoolMinBytes);
  Result<size_t> stage = SizeParam("shm.stage_bytes", kDefaultStageBytes);
  for (const Result<size_t>* r : {&ring, &chunk, &cma, &pool, &pool_min, &stage}) {
    if (!r->ok()) return r->status();
  }
  if (*pool != 0) {
    if (*pool < shm::ShmPool::kMinBlock) {
      return Status::InvalidArgument("shm.pool_bytes=" + std::to_string(*pool) +
                                     ": must be 0 (no pool) or at least 65536");
    }
    Result<shm::ShmPool*> p = shm::ShmPool::Create(*pool);
    if (!p.ok()) return p.status().WithContext("shm.pool_bytes=" + std::to_string(*pool));
    pool_ = *p;
  }
  pool_min_bytes_ = *pool_min;
  stage_bytes_ = *stage;
  if (!shm::ValidRingCapacity(*ring)) {
    return Status::InvalidArgument("shm.ring_bytes=" + std::to_string(*ring) +
                                   ": must be a power of two in [4096, 2^30]");
  }
  ring_bytes_ = *ring;
  // Default: heap frames of kDefaultCmaBytes or more (or larger than a record, in small
  // rings) are read by the receiver from our memory: one copy instead of two (the sender's
  // copy into the ring, the pack aside).
  cma_bytes_ =
      *cma == kCmaAuto ? std::min(kDefaultCmaBytes, shm::MaxRecordPayload(ring_bytes_) + 1) : *cma;
  chunk_bytes_ = std::min(*chunk, shm::MaxRecordPayload(ring_bytes_));
  if (chunk_bytes_ < 1024) return Status::InvalidArgument("shm.chunk_bytes must be >= 1024");
  shm::SweepStaleSegments();
  light_barriers_ = shm::EnableLightBarriers();  // our producers skip a fence per record
  if (host_->tracing()) {
    host_->Trace(light_barriers_ ? "shm: light barriers (membarrier)"
                                 : "shm: no membarrier: a fence per record");
  }
  host_key_ = HostKey();
  std::random_device rd;
  socket_name_ = "ukai-shm-" + std::to_string(getpid()) + "-" + std::to_string(rd()) + "-" +
                 std::to_string(rd());
  Result<int> l = shm::ListenAbstract(socket_name_);
  if (!l.ok()) return l.status();
  listen_fd_ = *l;
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (event_fd_ < 0 || epfd_ < 0) return Status::IoError("shm: eventfd/epoll_create failed");
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenTag;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, listen_fd_, &e);
  e.data.u64 = kEventTag;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, event_fd_, &e);
  return Status::Ok();
}

Result<std::vector<uint8_t>> ShmModule::MakeDescriptor() {
  std::vector<uint8_t> d(1 + 2 + host_key_.size() + 2 + socket_name_.size());
  d[0] = kShmDescriptorVersion;
  size_t at = 1;
  for (const std::string* f : {&host_key_, &socket_name_}) {
    wire::PutLe16(d.data() + at, static_cast<uint16_t>(f->size()));
    std::memcpy(d.data() + at + 2, f->data(), f->size());
    at += 2 + f->size();
  }
  return d;
}

void ShmModule::Register(const std::shared_ptr<ShmChannel>& ch) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t tag = next_tag_++;
  channels_[tag] = ch;
  epoll_event e{};
  e.events = EPOLLIN | EPOLLRDHUP;
  e.data.u64 = tag;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, ch->socket(), &e);
  version_.fetch_add(1, std::memory_order_release);
}

void ShmModule::Unregister(uint64_t tag) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = channels_.find(tag);
  if (it == channels_.end()) return;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, it->second->socket(), nullptr);
  channels_.erase(it);
  version_.fetch_add(1, std::memory_order_release);
}

Result<std::shared_ptr<CommObject>> ShmModule::Connect(RuntimeId peer,
                                                       std::span<const uint8_t> descriptor) {
  Result<ShmDescriptor> d = DecodeShmDescriptor(descriptor);
  if (!d.ok()) return d.status();
  if (d->host_key != host_key_) {
    return Status::Unsupported("shm: peer " + shm::IdString(peer) + " is on another host");
  }
  if (host_->job_secret() == nullptr) return Status::FailedPrecondition("shm: no job secret");
  Result<int> sock = shm::ConnectAbstract(d->socket_name);
  if (!sock.ok()) return sock.status();
  // Abstract sockets have no permissions: the listener must run as this user.
  if (Result<uid_t> uid = shm::PeerUid(*sock); !uid.ok() || *uid != geteuid()) {
    close(*sock);
    return Status::Unavailable(
        "shm: the socket of peer " + shm::IdString(peer) +
        (uid.ok() ? " belongs to uid " + std::to_string(*uid) + ", not ours: refused"
                  : ": " + uid.status().message()));
  }
  auto seg = shm::ShmSegment::Create(ring_bytes_);
  if (!seg.ok()) {
    close(*sock);
    return seg.status();
  }
  const PeerKey key = host_->KeyFor(peer);
  shm::Hello hello{host_->runtime_id(), peer, key.kind, NewNonce(), {}, (*seg)->name()};
  hello.mac = shm::HelloMac(key.key, hello);
  (*seg)->SetTag(shm::SegmentTag(key.key, hello.from, peer, hello.segment));
  std::vector<int> fds = {event_fd_};
  if (pool_ != nullptr) fds.push_back(pool_->fd());
  Status s = shm::SendMessage(*sock, shm::EncodeHello(hello), fds);
  if (!s.ok()) {
    close(*sock);
    return s;
  }
  auto ch = std::make_shared<ShmChannel>(host_->runtime_id(), peer, std::move(*seg), *sock, -1,
                                         chunk_bytes_, cma_bytes_, host_);
  // The reply must prove the listener holds the key too (checked when it is read).
  ch->SetReplyCheck([key, hello, peer](const shm::Reply& r) {
    if (MacEqual(shm::ReplyMac(key.key, r, hello.from, hello.nonce), r.mac)) return Status::Ok();
    return Status::Unavailable("shm: runtime " + shm::IdString(peer) +
                               " did not prove the job secret in its reply");
  });
  // The peer maps our pool before it reads our first record, or refuses the connection.
  ch->ConfigurePool(pool_, pool_min_bytes_, /*peer_mapped=*/true, counters_);
  ch->SetStageBytes(stage_bytes_);
  if (light_barriers_) ch->UseLightBarrier();
  Register(ch);
  // Our progress engine may be blocked in poll(): it must take the new channel into its
  // snapshot (and keep polling until its doorbell is armed) before the peer answers.
  host_->Wake();
  if (host_->tracing()) host_->Trace("shm: connecting to " + shm::IdString(peer));
  return std::shared_ptr<CommObject>(ch);
}

void ShmModule::Accept() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::vector<uint8_t> bytes;
    std::vector<int> fds;
    Status s = shm::ReceiveMessage(fd, 1000, &bytes, &fds);
    const int peer_efd = fds.empty() ? -1 : fds[0];
    // The connector's pool, mapped read-only. It sends pool records from the start (they
    // wait in the ring until we accepted), so a pool we cannot map refuses the connection.
    std::unique_ptr<shm::PeerPool> peer_pool;
    if (s.ok() && fds.size() >= 2) {
      Result<std::unique_ptr<shm::PeerPool>> pp = shm::PeerPool::Map(fds[1]);
      if (pp.ok()) {
        peer_pool = std::move(*pp);
      } else {
        s = pp.status();
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) close(fds[i]);
    Result<shm::Hello> hello = s.ok() ? shm::DecodeHello(bytes) : Result<shm::Hello>(s);
    std::unique_ptr<shm::ShmSegment> seg;
    if (hello.ok() && hello->to != host_->runtime_id()) {
      hello = Status::InvalidArgument("shm: hello for runtime " + shm::IdString(hello->to));
    }
    // Only this user's processes, proving the job secret (or our join token), get in.
    if (Result<uid_t> uid = shm::PeerUid(fd); hello.ok() && (!uid.ok() || *uid != geteuid())) {
      hello =
          Status::Unavailable("shm: a connection from uid " +
                              (uid.ok() ? std::to_string(*uid) : std::string("?")) + " (not ours)");
    }
    const JobSecret* secret = host_->job_secret();
    SecretKey key{};
    if (hello.ok() && secret != nullptr) key = secret->KeyFor(hello->key_kind);
    if (hello.ok() && (secret == nullptr || !MacEqual(shm::HelloMac(key, *hello), hello->mac))) {
      hello = Status::Unavailable("shm: runtime " + shm::IdString(hello->from) +
                                  " did not prove the job secret");
    }
    if (hello.ok()) {
      const Mac tag = shm::SegmentTag(key, hello->from, hello->to, hello->segment);
      auto a = shm::ShmSegment::Attach(hello->segment, &tag);
      if (a.ok()) {
        seg = std::move(*a);
        shm_unlink(hello->segment.c_str());  // both sides mapped it: drop the name now
      } else {
        hello = a.status();
      }
    }
    if (!hello.ok() || peer_efd < 0) {
      if (host_->tracing()) host_->Trace("shm: refused a connection: " + hello.status().ToString());
      host_->RejectFrame(hello.ok() ? Status::InvalidArgument("shm: hello without an eventfd")
                                    : hello.status());
      refused_.fetch_add(1, std::memory_order_relaxed);
      [[maybe_unused]] Status r =
          shm::SendMessage(fd, shm::EncodeReply({1, host_->runtime_id(), 0, {}}), -1);
      if (peer_efd >= 0) close(peer_efd);
      close(fd);
      continue;
    }
    // Reply before the channel can ever wait on the ring (see shm_channel.h).
    std::vector<int> reply_fds = {event_fd_};
    if (pool_ != nullptr) reply_fds.push_back(pool_->fd());
    const uint32_t flags = peer_pool ? shm::kReplyMappedYourPool : 0;
    shm::Reply reply{0, host_->runtime_id(), flags, {}};
    reply.mac = shm::ReplyMac(key, reply, hello->from, hello->nonce);
    if (!shm::SendMessage(fd, shm::EncodeReply(reply), reply_fds).ok()) {
      close(peer_efd);
      close(fd);
      continue;
    }
    auto ch = std::make_shared<ShmChannel>(host_->runtime_id(), hello->from, std::move(seg), fd,
                                           peer_efd, chunk_bytes_, cma_bytes_, host_);
    // The connector maps our pool when it reads the reply, before it reads our records.
    ch->ConfigurePool(pool_, pool_min_bytes_, /*peer_mapped=*/true, counters_);
    ch->SetStageBytes(stage_bytes_);
    ch->SetStageBytes(stage_bytes_);
    if (light_barriers_) ch->UseLightBarrier();
    if (peer_pool) ch->SetPeerPool(std::move(peer_pool));
    Register(ch);
    if (host_->tracing()) host_->Trace("shm: accepted " + shm::IdString(hello->from));
    host_->AdoptIncoming(hello->from, ch);
  }
}

void ShmModule::OnSocketEvent(uint64_t tag, uint32_t events) {
  std::shared_ptr<ShmChannel> ch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(tag);
    if (it == channels_.end()) return;
    ch = it->second;
  }
  bool gone = (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)) != 0;
  if (!gone && (events & EPOLLIN)) {
    // The readiness may be stale: a sender may have read the accept reply meanwhile
    // (ShmChannel::RingDoorbell). Nothing there now is not a hang-up.
    if (!ch->handshake_done()) {
      const Status r = ch->ReadAcceptReply(0);
      gone = !r.ok() && r.code() != StatusCode::kOutOfRange;
    } else {
      char c;
      const ssize_t n = recv(ch->socket(), &c, 1, MSG_DONTWAIT);  // nothing else is ever sent
      gone =
          n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || n > 0;
    }
  }
  if (!gone) return;
  // Deliver what the peer wrote before it went, then fail the object.
  while (ch->Poll(host_, 1 << 20) > 0) {
  }
  const bool orderly = ch->PeerClosedInOrder();
  Unregister(tag);
  retired_.push_back(ch);
  bool others = false;  // another channel with the same peer (both sides connected at once)
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [t, o] : channels_) others |= o->peer() == ch->peer();
  }
  if (!ch->MarkFailed()) return;
  // A peer that closed in order has left when its last channel hung up: records may still
  // wait in the other channel's ring. A connection the peer never accepted (both sides
  // connected at once and the peer left before it looked at ours) says nothing either. In
  // both cases the last channel to the peer decides, remembering an orderly close seen on
  // any of them. An established channel that failed is reported at once.
  const bool never_accepted = !ch->handshake_done();
  if (orderly) left_in_order_.insert(ch->peer());
  if (others && (orderly || never_accepted)) return;
  const bool left = left_in_order_.erase(ch->peer()) > 0;
  host_->PeerFailed(ch->peer(), "shm", left,
                    left ? Status::Unavailable("shm: peer closed")
                         : Status::Unavailable("shm: peer process exited or hung up"));
}

int ShmModule::Housekeeping() {
  epoll_event ev[16];
  const int n = epoll_wait(epfd_, ev, 16, 0);
  int work = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t tag = ev[i].data.u64;
    if (tag == kListenTag) {
      Accept();
      ++work;
    } else if (tag == kEventTag) {
      uint64_t drained;
      [[maybe_unused]] ssize_t r = read(event_fd_, &drained, sizeof drained);
    } else {
      OnSocketEvent(tag, ev[i].events);
      ++work;
    }
  }
  return work;
}

void ShmModule::RefreshSnapshot() {
  const uint64_t v = version_.load(std::memory_order_acquire);
  if (v == snapshot_version_) return;
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_.assign(channels_.begin(), channels_.end());
  snapshot_version_ = version_.load(std::memory_order_relaxed);
}

bool ShmModule::PrepareToBlock() {
  RefreshSnapshot();
  for (auto& [tag, ch] : snapshot_) {
    // The runtime dispatched what the last Progress() delivered: senders get their ring
    // space and pool blocks back now rather than after we wake up.
    ch->ReleaseDelivered();
    if (ch->HasQueued() || !ch->PrepareIdle()) {  // work to do, or a record arrived
      for (auto& [t, c] : snapshot_) c->EndIdle();
      return false;
    }
  }
  asleep_ = true;
  return true;
}

void ShmModule::Unblocked() {
  for (auto& [tag, ch] : snapshot_) ch->EndIdle();
  asleep_ = false;
  // Whatever woke the engine (doorbell, listener, hang-up) is handled by the next idle pass.
  idle_passes_ = 63;
  last_housekeeping_ns_ = 0;
}

int ShmModule::Progress() {
  if (!retired_.empty()) retired_.clear();
  RefreshSnapshot();
  int n = 0, records = 0;
  bool queued = false;
  for (auto& [tag, ch] : snapshot_) {
    if (ch->HasQueued()) queued |= ch->Flush();
    ch->ReapCma();
    n += ch->Poll(host_, kPollBudget, &records, coalesce_);
  }
  if (records > 0 || queued) {
    idle_passes_ = 0;
    return std::max(n, 1);  // chunks consumed or frames queued: busy, keep polling
  }
  // Idle. Housekeeping (accepting peers, hang-ups: a system call) runs every
  // kHousekeepingNs, the clock read every 64 idle passes; while the engine blocks, the
  // listener and sockets are in WaitFd() and wake it. Senders ring our doorbell only after
  // PrepareToBlock armed it, so an idle pass reports 0 and costs them nothing.
  if ((++idle_passes_ & 63) != 0) return n;
  const uint64_t now = NowNs();
  if (now - last_housekeeping_ns_ >= kHousekeepingNs) {
    last_housekeeping_ns_ = now;
    n += Housekeeping();
  }
  return n;
}

void ShmModule::Close() {
  std::unordered_map<uint64_t, std::shared_ptr<ShmChannel>> channels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    channels.swap(channels_);
    version_.fetch_add(1);
  }
  for (auto& [tag, ch] : channels) ch->Close();
  snapshot_.clear();
  retired_.clear();
  for (int* fd : {&listen_fd_, &event_fd_, &epfd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

std::map<std::string, uint64_t> ShmModule::Counters() const {
  std::map<std::string, uint64_t> c;
  c["pool_frames_sent"] = counters_->pool_frames_sent.load();
  c["pool_frames_received"] = counters_->pool_frames_received.load();
  c["pool_frames_staged"] = counters_->pool_frames_staged.load();
  c["refused"] = refused_.load();
  if (pool_ != nullptr) {
    const shm::ShmPool::Stats st = pool_->stats();
    c["pool_bytes"] = pool_->size();
    c["pool_blocks_in_use"] = st.blocks_in_use;
    c["pool_bytes_in_use"] = st.bytes_in_use;
    c["pool_bytes_touched"] = st.bytes_touched;
    c["pool_allocations"] = st.allocations;
    c["pool_failures"] = st.failures;
  }
  return c;
}

}  // namespace

std::unique_ptr<Module> NewShmModule(const ModuleEnv& /*env*/) {
  return std::make_unique<ShmModule>();
}

}  // namespace ukai::rt
