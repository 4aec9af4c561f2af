#include "rt/modules/inproc/inproc_module.h"

#include <atomic>
#include <random>
#include <vector>

namespace ukai::rt {

class InprocModule final : public Module {
 public:
  explicit InprocModule(std::shared_ptr<InprocFabric> fabric) : fabric_(std::move(fabric)) {}
  ~InprocModule() override { Close(); }

  std::string_view name() const override { return "inproc"; }
  Status Init(ModuleHost* host) override {
    host_ = host;
    fabric_->Join(host->runtime_id(), this);
    joined_ = true;
    return Status::Ok();
  }
  ModuleCaps Query() const override {
    ModuleCaps c;
    c.reach = Reach::kSameProcess;
    c.latency_us = 0.05;
    c.bandwidth_gbytes_s = 100;  // a pointer handoff: no copy of the payload
    c.max_payload_bytes = wire::kMaxPayloadBytes;
    c.detects_peer_failure = true;  // a runtime leaving the fabric is reported
    c.multi_process = false;
    return c;
  }
  Result<std::vector<uint8_t>> MakeDescriptor() override {
    std::vector<uint8_t> d(8);
    wire::PutLe64(d.data(), fabric_->id());
    return d;
  }
  bool CanReach(std::span<const uint8_t> d) const override {
    return d.size() == 8 && wire::GetLe64(d.data()) == fabric_->id();
  }
  Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer, std::span<const uint8_t> d) override;
  int Progress() override;
  void Close() override {
    if (joined_) fabric_->Leave(host_->runtime_id());
    joined_ = false;
  }

  // Called by the fabric (any thread).
  void Enqueue(ByteBlock&& frame, std::shared_ptr<InprocInFlight> in_flight) {
    in_flight->frames.fetch_add(1, std::memory_order_relaxed);
    in_flight->bytes.fetch_add(frame.size(), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back({std::move(frame), std::move(in_flight)});
      pending_.store(true, std::memory_order_release);
    }
    host_->Wake();
  }
  void PeerLeft(RuntimeId peer) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      left_.push_back(peer);
      pending_.store(true, std::memory_order_release);
    }
    host_->Wake();
  }

 private:
  std::shared_ptr<InprocFabric> fabric_;
  ModuleHost* host_ = nullptr;
  bool joined_ = false;
  std::mutex mu_;
  // Set under mu_ whenever inbox_ or left_ gains an entry, cleared under mu_ when Progress
  // takes them: an idle pass costs one load, no lock (no in-process peer, no traffic).
  std::atomic<bool> pending_{false};
  struct Posted {
    ByteBlock frame;
    std::shared_ptr<InprocInFlight> in_flight;  // the sender's count, until we took it
  };
  std::vector<Posted> inbox_;
  std::vector<RuntimeId> left_;
  std::vector<Posted> work_;  // progress thread only
};

namespace {

class InprocObject final : public CommObject {
 public:
  InprocObject(std::shared_ptr<InprocFabric> fabric, RuntimeId peer)
      : fabric_(std::move(fabric)), peer_(peer) {}
  Status Send(ByteBlock&& frame) override {
    if (state_.load() != CommState::kOk) {
      return Status::Unavailable("inproc: connection to the peer is closed or failed");
    }
    Status st = fabric_->Post(peer_, std::move(frame), in_flight_);
    if (!st.ok()) state_.store(CommState::kFailed);
    return st;
  }
  void Close() override { state_.store(CommState::kClosed); }
  CommState state() const override { return state_.load(); }
  RuntimeId peer() const override { return peer_; }
  // Frames wait in the target's inbox until its progress engine takes them (a target that
  // left the fabric dropped them: they stay counted, as lost).
  size_t QueuedBytes() const override {
    return static_cast<size_t>(in_flight_->bytes.load(std::memory_order_relaxed));
  }
  Unconfirmed Outstanding() override {
    return {in_flight_->frames.load(std::memory_order_acquire),
            in_flight_->bytes.load(std::memory_order_acquire)};
  }

 private:
  std::shared_ptr<InprocFabric> fabric_;
  RuntimeId peer_;
  std::shared_ptr<InprocInFlight> in_flight_ = std::make_shared<InprocInFlight>();
  std::atomic<CommState> state_{CommState::kOk};
};

uint64_t RandomId() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

Result<std::shared_ptr<CommObject>> InprocModule::Connect(RuntimeId peer,
                                                          std::span<const uint8_t> d) {
  if (!CanReach(d)) return Status::Unavailable("inproc: peer is in another fabric");
  return std::shared_ptr<CommObject>(std::make_shared<InprocObject>(fabric_, peer));
}

int InprocModule::Progress() {
  if (!pending_.load(std::memory_order_acquire)) return 0;
  std::vector<RuntimeId> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.store(false, std::memory_order_relaxed);
    if (inbox_.empty() && left_.empty()) return 0;
    work_.swap(inbox_);
    left.swap(left_);
  }
  int n = 0;
  for (Posted& p : work_) {
    ByteBlock& b = p.frame;
    const size_t size = b.size();
    // The block is the sender's buffer: give it to the runtime (no copy for threaded
    // handlers either). A malformed one (impossible from our own runtimes) is counted.
    if (host_->DeliverFrame(b.span(), &b).ok()) ++n;
    p.in_flight->bytes.fetch_sub(size, std::memory_order_relaxed);
    p.in_flight->frames.fetch_sub(1, std::memory_order_release);
  }
  work_.clear();
  for (RuntimeId peer : left) {
    host_->PeerFailed(peer, "inproc", /*orderly=*/true,
                      Status::Unavailable("runtime left the inproc fabric"));
  }
  return n + static_cast<int>(left.size());
}

InprocFabric::InprocFabric() : id_(RandomId()) {}

void InprocFabric::Join(RuntimeId rt, InprocModule* m) {
  std::lock_guard<std::mutex> lock(mu_);
  members_[rt] = m;
}

void InprocFabric::Leave(RuntimeId rt) {
  std::lock_guard<std::mutex> lock(mu_);
  members_.erase(rt);
  for (auto& [id, m] : members_) m->PeerLeft(rt);
}

Status InprocFabric::Post(RuntimeId target, ByteBlock&& frame,
                          std::shared_ptr<InprocInFlight> in_flight) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = members_.find(target);
  if (it == members_.end()) {
    return Status::Unavailable("inproc: runtime is not in the fabric (finalized?)");
  }
  it->second->Enqueue(std::move(frame), std::move(in_flight));
  return Status::Ok();
}

bool InprocFabric::Has(RuntimeId rt) {
  std::lock_guard<std::mutex> lock(mu_);
  return members_.count(rt) != 0;
}

std::shared_ptr<InprocFabric> NewInprocFabric() { return std::make_shared<InprocFabric>(); }

std::unique_ptr<Module> NewInprocModule(const ModuleEnv& env) {
  return std::make_unique<InprocModule>(env.fabric);
}

}  // namespace ukai::rt
