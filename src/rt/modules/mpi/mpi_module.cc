#include "rt/modules/mpi/mpi_module.h"

// The C API only (Open MPI's deprecated C++ bindings need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>

#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

constexpr uint8_t kDescriptorVersion = 1;
constexpr int kRecvBudget = 64;

std::string JobId() {
  for (const char* v : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}) {
    if (const char* s = std::getenv(v); s != nullptr && *s != '\0') return s;
  }
  return "";
}

struct MpiDescriptor {
  int rank = -1;
  std::string job;
};

Result<MpiDescriptor> DecodeDescriptor(std::span<const uint8_t> d) {
  if (d.size() < 7 || d[0] != kDescriptorVersion) {
    return Status::ParseError("mpi descriptor: bad size or version");
  }
  MpiDescriptor out;
  out.rank = static_cast<int>(wire::GetLe32(d.data() + 1));
  const size_t n = wire::GetLe16(d.data() + 5);
  if (7 + n != d.size()) return Status::ParseError("mpi descriptor: job id length mismatch");
  out.job.assign(reinterpret_cast<const char*>(d.data() + 7), n);
  return out;
}

// Sends of one channel MPI has not completed (flow control: CommObject::QueuedBytes).
struct InFlight {
  std::atomic<uint64_t> frames{0};
  std::atomic<uint64_t> bytes{0};
};

// Sends in flight: the block stays alive until MPI completed the send.
class SendTable {
 public:
  void Add(MPI_Request r, ByteBlock&& b, std::shared_ptr<InFlight> counted = nullptr) {
    if (counted) {
      counted->frames.fetch_add(1, std::memory_order_relaxed);
      counted->bytes.fetch_add(b.size(), std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back({r, std::move(b), std::move(counted)});
  }
  // Completes what MPI finished; returns how many are still pending.
  size_t Test() {
    std::lock_guard<std::mutex> lock(mu_);
    while (!pending_.empty()) {
      int done = 0;
      MPI_Test(&pending_.front().req, &done, MPI_STATUS_IGNORE);
      if (!done) break;  // MPI completes sends to one peer in order; good enough to scan FIFO
      if (const auto& c = pending_.front().counted) {
        c->bytes.fetch_sub(pending_.front().block.size(), std::memory_order_relaxed);
        c->frames.fetch_sub(1, std::memory_order_release);
      }
      pending_.pop_front();
    }
    return pending_.size();
  }

 private:
  struct Pending {
    MPI_Request req;
    ByteBlock block;
    std::shared_ptr<InFlight> counted;
  };
  std::mutex mu_;
  std::deque<Pending> pending_;
};

class MpiChannel final : public CommObject {
 public:
  MpiChannel(RuntimeId peer, int rank, SendTable* sends)
      : peer_(peer), rank_(rank), sends_(sends) {}
  Status Send(ByteBlock&& frame) override {
    if (state_.load() != CommState::kOk) return Status::Unavailable("mpi: connection closed");
    if (frame.size() > static_cast<size_t>(INT32_MAX)) {
      return Status::InvalidArgument("mpi: frame too large");
    }
    MPI_Request req;
    if (MPI_Isend(frame.data(), static_cast<int>(frame.size()), MPI_BYTE, rank_, kMpiFrameTag,
                  MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Isend to rank " + std::to_string(rank_) + " failed");
    }
    sends_->Add(req, std::move(frame), in_flight_);
    return Status::Ok();
  }
  void Close() override { state_.store(CommState::kClosed); }
  CommState state() const override { return state_.load(); }
  RuntimeId peer() const override { return peer_; }
  // Sends MPI has not completed (the module's Progress() tests them; MPI's own eager
  // buffering is not ours to count).
  size_t QueuedBytes() const override {
    return static_cast<size_t>(in_flight_->bytes.load(std::memory_order_relaxed));
  }
  Unconfirmed Outstanding() override {
    // Test first: a send MPI completed is not outstanding, even when no progress pass ran
    // since (Finalize after the peer left would otherwise report it lost).
    sends_->Test();
    return {in_flight_->frames.load(std::memory_order_acquire),
            in_flight_->bytes.load(std::memory_order_acquire)};
  }
  int rank() const { return rank_; }
  // The peer said goodbye: later sends return kUnavailable.
  void MarkFailed() { state_.store(CommState::kFailed); }

 private:
  const RuntimeId peer_;
  const int rank_;
  SendTable* sends_;
  std::atomic<CommState> state_{CommState::kOk};
  std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
};

class MpiModule final : public Module {
 public:
  std::string_view name() const override { return "mpi"; }

  Status Init(ModuleHost* host) override {
    host_ = host;
    int initialized = 0, provided = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      return Status::Unsupported(
          "mpi module: MPI is not initialised (run under mpirun; the mpi bootstrap initialises "
          "it)");
    }
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      return Status::Unsupported("mpi module: needs MPI_THREAD_MULTIPLE, MPI provides level " +
                                 std::to_string(provided));
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    job_ = JobId();
    return Status::Ok();
  }
  ModuleCaps Query() const override {
    ModuleCaps c;
    c.reach = Reach::kAnyHost;
    c.latency_us = 2;
    c.bandwidth_gbytes_s = 5;
    c.max_payload_bytes = wire::kMaxPayloadBytes;
    c.detects_peer_failure = false;
    c.multi_process = true;
    return c;
  }
  Result<std::vector<uint8_t>> MakeDescriptor() override {
    std::vector<uint8_t> d(7 + job_.size());
    d[0] = kDescriptorVersion;
    wire::PutLe32(d.data() + 1, static_cast<uint32_t>(rank_));
    wire::PutLe16(d.data() + 5, static_cast<uint16_t>(job_.size()));
    std::memcpy(d.data() + 7, job_.data(), job_.size());
    return d;
  }
  bool CanReach(std::span<const uint8_t> descriptor) const override {
    Result<MpiDescriptor> d = DecodeDescriptor(descriptor);
    return d.ok() && !job_.empty() && d->job == job_ && d->rank >= 0 && d->rank < size_;
  }
  Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer,
                                              std::span<const uint8_t> descriptor) override {
    if (!CanReach(descriptor)) {
      return Status::Unsupported("mpi: peer " + std::to_string(peer) + " is not in this MPI job");
    }
    const int rank = DecodeDescriptor(descriptor)->rank;
    auto channel = std::make_shared<MpiChannel>(peer, rank, &sends_);
    {
      std::lock_guard<std::mutex> lock(channels_mu_);
      channels_.push_back(channel);
    }
    return std::shared_ptr<CommObject>(std::move(channel));
  }
  int Progress() override {
    delivered_.clear();  // the previous pass's frames were dispatched by now
    const size_t pending = sends_.Test();
    int n = 0;
    while (n < kRecvBudget) {
      int flag = 0;
      MPI_Message msg;
      MPI_Status st;
      MPI_Improbe(MPI_ANY_SOURCE, kMpiFrameTag, MPI_COMM_WORLD, &flag, &msg, &st);
      if (!flag) break;
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      delivered_.emplace_back(static_cast<size_t>(count));
      ByteBlock& b = delivered_.back();
      b.Resize(static_cast<size_t>(count));
      MPI_Mrecv(b.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
      Result<wire::FrameHeader> h = wire::DecodeHeader(b.span());
      if (h.ok() && h->kind == wire::FrameKind::kBye) {
        PeerLeft(*h, st.MPI_SOURCE);
        ++n;
      } else if (host_->DeliverFrame(b.span(), &b).ok()) {
        ++n;
      }
    }
    return n + (pending > 0 ? 1 : 0);
  }
  void Close() override {
    // A goodbye to every other rank, after everything we sent (MPI keeps the order of
    // messages between two ranks on one tag): they mark us failed, orderly, instead of
    // sending into a finalized process. Ranks that run no mpi module never receive it.
    std::vector<ByteBlock> byes;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      wire::FrameHeader bye;
      bye.kind = wire::FrameKind::kBye;
      bye.source = host_->runtime_id();
      bye.target = 0;  // a rank's runtime id is known only once it connected
      ByteBlock b(wire::kHeaderSize);
      b.Resize(wire::kHeaderSize);
      wire::EncodeHeader(bye, {b.data(), b.size()});
      MPI_Request req;
      if (MPI_Isend(b.data(), static_cast<int>(b.size()), MPI_BYTE, r, kMpiFrameTag, MPI_COMM_WORLD,
                    &req) == MPI_SUCCESS) {
        sends_.Add(req, std::move(b));
      }
    }
    // Let sends in flight finish (bounded), so the peers get what we sent before leaving.
    for (int i = 0; i < 100000 && sends_.Test() > 0; ++i) {
    }
  }

 private:
  ModuleHost* host_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::string job_;
  // A kBye from `rank`: its channel (if we have one) fails and the runtime is told.
  void PeerLeft(const wire::FrameHeader& h, int rank) {
    {
      std::lock_guard<std::mutex> lock(channels_mu_);
      for (const auto& c : channels_) {
        if (c->rank() == rank) c->MarkFailed();
      }
    }
    host_->PeerFailed(h.source, "mpi", /*orderly=*/true,
                      Status::Unavailable("mpi: rank " + std::to_string(rank) + " said goodbye"));
  }

  SendTable sends_;
  std::deque<ByteBlock> delivered_;
  std::mutex channels_mu_;
  std::vector<std::shared_ptr<MpiChannel>> channels_;  // every channel Connect() made
};

}  // namespace

std::unique_ptr<Module> NewMpiModule(const ModuleEnv& /*env*/) {
  return std::make_unique<MpiModule>();
}

}  // namespace ukai::rt
