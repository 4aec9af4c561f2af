#include "rt/modules/mpi/mpi_module.h"

// The C API only (Open MPI's deprecated C++ bindings need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

constexpr uint8_t kDescriptorVersion = 1;
constexpr int kRecvBudget = 64;
// Receives posted ahead (MPI_ANY_SOURCE, kMpiFrameTag), each into a slot of kSlotBytes:
// a frame that fits lands in a slot on arrival (MPI matches it to the oldest posted
// receive: no unexpected-message copy, no probe) and is delivered from there in place.
constexpr int kSlots = 16;
constexpr size_t kSlotBytes = size_t{64} << 10;
// A larger frame goes as two messages: its header on kMpiFrameTag (the "head": a message
// shorter than the frame its header announces) and the rest on kMpiTailTag, received with
// MPI_Mprobe + MPI_Mrecv from that source straight into the frame's block. Heads and tails
// of one sender are sent in the same order (split_mu_), so the next tail of a source is
// the one of its head; small frames need no such order (they are on the other tag).
constexpr int kMpiTailTag = kMpiFrameTag + 1;

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
    size_.store(pending_.size(), std::memory_order_release);
  }
  // Completes what MPI finished; returns how many are still pending.
  size_t Test() {
    if (size_.load(std::memory_order_acquire) == 0) return 0;  // no lock on an idle pass
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
    size_.store(pending_.size(), std::memory_order_release);
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
  std::atomic<size_t> size_{0};  // pending_.size(), read without the lock
};

class MpiChannel final : public CommObject {
 public:
  MpiChannel(RuntimeId peer, int rank, SendTable* sends, std::mutex* split_mu)
      : peer_(peer), rank_(rank), sends_(sends), split_mu_(split_mu) {}
  Status Send(ByteBlock&& frame) override {
    if (state_.load(std::memory_order_acquire) != CommState::kOk) {
      return Status::Unavailable("mpi: connection closed");
    }
    if (frame.size() > static_cast<size_t>(INT32_MAX) || frame.size() < wire::kHeaderSize) {
      return Status::InvalidArgument("mpi: frame of " + std::to_string(frame.size()) +
                                     " bytes (header size to 2 GiB)");
    }
    if (frame.size() > kSlotBytes) return SendSplit(std::move(frame));
    MPI_Request req;
    if (MPI_Isend(frame.data(), static_cast<int>(frame.size()), MPI_BYTE, rank_, kMpiFrameTag,
                  MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Isend to rank " + std::to_string(rank_) + " failed");
    }
    // A small send usually completes at once (copied into MPI's eager buffers): then the
    // block goes now and the send table is not touched.
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) sends_->Add(req, std::move(frame), in_flight_);
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
  // A frame larger than a receive slot: its header on kMpiFrameTag, the rest on
  // kMpiTailTag (see kSlotBytes). The frame's block is held with the tail's request.
  Status SendSplit(ByteBlock&& frame) {
    std::lock_guard<std::mutex> lock(*split_mu_);
    MPI_Request head, tail;
    if (MPI_Isend(frame.data(), static_cast<int>(wire::kHeaderSize), MPI_BYTE, rank_, kMpiFrameTag,
                  MPI_COMM_WORLD, &head) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Isend to rank " + std::to_string(rank_) + " failed");
    }
    sends_->Add(head, ByteBlock());
    if (MPI_Isend(frame.data() + wire::kHeaderSize,
                  static_cast<int>(frame.size() - wire::kHeaderSize), MPI_BYTE, rank_, kMpiTailTag,
                  MPI_COMM_WORLD, &tail) != MPI_SUCCESS) {
      // The head went: the peer waits for this tail. Nothing sensible is left to do with
      // this peer; fail the channel so that later sends say so.
      state_.store(CommState::kFailed);
      return Status::Unavailable("mpi: MPI_Isend of a frame's tail to rank " +
                                 std::to_string(rank_) + " failed");
    }
    sends_->Add(tail, std::move(frame), in_flight_);
    return Status::Ok();
  }

  const RuntimeId peer_;
  const int rank_;
  SendTable* sends_;
  std::mutex* split_mu_;
  std::atomic<CommState> state_{CommState::kOk};
  std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
};

// One dynamic window over a duplicate of MPI_COMM_WORLD (errors returned, not fatal), locked
// for every rank once (MPI_Win_lock_all): segments are attached at registration, and puts /
// gets complete with MPI_Win_flush. Attach/Detach are serialised by `mu_`; data operations
// run concurrently (MPI_THREAD_MULTIPLE).
class MpiOneSided final : public OneSided {
 public:
  // Collective over MPI_COMM_WORLD (every rank initialises its module together: the mpi
  // bootstrap's Exchange follows at once). Null when MPI refuses the window.
  static std::unique_ptr<MpiOneSided> Create() {
    auto o = std::unique_ptr<MpiOneSided>(new MpiOneSided);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &o->comm_) != MPI_SUCCESS) return nullptr;
    MPI_Comm_set_errhandler(o->comm_, MPI_ERRORS_RETURN);
    if (MPI_Win_create_dynamic(MPI_INFO_NULL, o->comm_, &o->win_) != MPI_SUCCESS) {
      o->win_ = MPI_WIN_NULL;
      return nullptr;
    }
    MPI_Win_set_errhandler(o->win_, MPI_ERRORS_RETURN);
    if (MPI_Win_lock_all(MPI_MODE_NOCHECK, o->win_) != MPI_SUCCESS) {
      MPI_Win_free(&o->win_);
      o->win_ = MPI_WIN_NULL;
      return nullptr;
    }
    return o;
  }
  // Collective: every rank closes its module (Runtime::Finalize, before MPI_Finalize).
  ~MpiOneSided() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (win_ == MPI_WIN_NULL) {  // Create failed half-way
      if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
      return;
    }
    for (const auto& [base, length] : attached_) {
      MPI_Win_detach(win_, reinterpret_cast<void*>(base));
    }
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    MPI_Comm_free(&comm_);
  }

  Result<uint64_t> Attach(uint8_t* base, uint64_t length) override {
    const auto b = reinterpret_cast<uintptr_t>(base);
    std::lock_guard<std::mutex> lock(mu_);
    auto next = attached_.lower_bound(b);
    const bool overlaps =
        (next != attached_.end() && next->first < b + length) ||
        (next != attached_.begin() && std::prev(next)->first + std::prev(next)->second > b);
    if (overlaps || length == 0 || length > static_cast<uint64_t>(PTRDIFF_MAX)) {
      return Status::FailedPrecondition("mpi: memory overlaps an attached range or is empty");
    }
    if (MPI_Win_attach(win_, base, static_cast<MPI_Aint>(length)) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Win_attach failed");
    }
    attached_[b] = length;
    MPI_Aint addr = 0;
    MPI_Get_address(base, &addr);
    return static_cast<uint64_t>(addr);
  }
  void Detach(uint8_t* base) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (attached_.erase(reinterpret_cast<uintptr_t>(base)) == 1) MPI_Win_detach(win_, base);
  }
  Status Put(std::span<const uint8_t> peer, uint64_t addr, std::span<const uint8_t> data) override {
    return Transfer(peer, addr, const_cast<uint8_t*>(data.data()), data.size(), true);
  }
  Status Get(std::span<const uint8_t> peer, uint64_t addr, std::span<uint8_t> out) override {
    return Transfer(peer, addr, out.data(), out.size(), false);
  }

 private:
  MpiOneSided() = default;
  // MPI counts are ints: pieces of at most 1 GiB, then one flush.
  Status Transfer(std::span<const uint8_t> peer, uint64_t addr, uint8_t* local, uint64_t n,
                  bool put) {
    Result<MpiDescriptor> d = DecodeDescriptor(peer);
    if (!d.ok()) return d.status();
    constexpr uint64_t kPiece = uint64_t{1} << 30;
    for (uint64_t done = 0; done < n; done += kPiece) {
      const int count = static_cast<int>(std::min(kPiece, n - done));
      const auto disp = static_cast<MPI_Aint>(addr + done);
      const int rc =
          put ? MPI_Put(local + done, count, MPI_BYTE, d->rank, disp, count, MPI_BYTE, win_)
              : MPI_Get(local + done, count, MPI_BYTE, d->rank, disp, count, MPI_BYTE, win_);
      if (rc != MPI_SUCCESS) {
        MPI_Win_flush(d->rank, win_);
        return Status::Unavailable(std::string("mpi: ") + (put ? "MPI_Put" : "MPI_Get") +
                                   " to rank " + std::to_string(d->rank) + " failed");
      }
    }
    if (MPI_Win_flush(d->rank, win_) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Win_flush to rank " + std::to_string(d->rank) +
                                 " failed");
    }
    return Status::Ok();
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::mutex mu_;
  std::map<uintptr_t, uint64_t> attached_;  // base -> length (mu_)
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
    one_sided_ = MpiOneSided::Create();  // collective (see MpiOneSided::Create)
    if (!one_sided_) host_->Trace("mpi: no one-sided window (MPI refused it)");
    taken_ = kSlots;  // every slot: post them all
    Repost();
    return Status::Ok();
  }
  OneSided* one_sided() override { return one_sided_.get(); }
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
      return Status::Unsupported("mpi: peer " + RuntimeIdString(peer) + " is not in this MPI job");
    }
    const int rank = DecodeDescriptor(descriptor)->rank;
    auto channel = std::make_shared<MpiChannel>(peer, rank, &sends_, &split_mu_);
    {
      std::lock_guard<std::mutex> lock(channels_mu_);
      channels_.push_back(channel);
    }
    return std::shared_ptr<CommObject>(std::move(channel));
  }
  int Progress() override {
    delivered_.clear();  // the previous pass's frames were dispatched by now
    Repost();            // so were the slots it delivered in place
    const size_t pending = sends_.Test();
    int n = 0;
    // At most every slot once per pass: a taken slot is posted again only by the next one.
    while (n < kRecvBudget && taken_ < kSlots) {
      Slot& slot = slots_[next_];
      int flag = 0;
      MPI_Status st;
      MPI_Test(&slot.req, &flag, &st);
      if (!flag) break;
      slot.req = MPI_REQUEST_NULL;
      next_ = (next_ + 1) % kSlots;
      ++taken_;
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      if (ReceiveFrame({slot.buf.data(), static_cast<size_t>(count)}, st.MPI_SOURCE)) ++n;
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
    // Withdraw the posted receives (what they matched meanwhile is not delivered: the
    // engine has stopped).
    for (Slot& slot : slots_) {
      if (slot.req == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&slot.req);
      MPI_Wait(&slot.req, MPI_STATUS_IGNORE);
    }
    one_sided_.reset();  // collective, like the MPI_Finalize that follows
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

  // Posts the receive of every slot the last pass took (they were delivered in place and
  // dispatched since), in the order they were taken: slots are posted, completed and taken
  // in one circular order, so MPI's matching order (oldest posted receive first, messages
  // of one source in send order) is the delivery order.
  void Repost() {
    for (; taken_ > 0; --taken_) {
      Slot& slot = slots_[(next_ + kSlots - taken_) % kSlots];
      if (MPI_Irecv(slot.buf.data(), static_cast<int>(kSlotBytes), MPI_BYTE, MPI_ANY_SOURCE,
                    kMpiFrameTag, MPI_COMM_WORLD, &slot.req) != MPI_SUCCESS) {
        slot.req = MPI_REQUEST_NULL;  // MPI_Test of a null request completes: not delivered
      }
    }
  }
  // One message from a slot: a whole frame (delivered in place), a head (its tail is
  // received here, into an owned block) or a goodbye. True when a frame was delivered.
  bool ReceiveFrame(std::span<const uint8_t> bytes, int source) {
    if (bytes.size() >= wire::kHeaderSize) {
      const uint64_t frame_size = uint64_t{wire::GetLe16(bytes.data() + 6)} +
                                  wire::GetLe32(bytes.data() + 12);  // header_len + payload_len
      // A head is exactly a valid header announcing more than a slot (what SendSplit sends);
      // anything else shorter than it announces is a malformed frame (rejected below).
      if (bytes.size() == wire::kHeaderSize && frame_size > kSlotBytes &&
          wire::DecodeHeader(bytes).ok()) {
        return ReceiveSplit(bytes, frame_size, source);
      }
      if (bytes[5] == static_cast<uint8_t>(wire::FrameKind::kBye)) {
        Result<wire::FrameHeader> h = wire::DecodeHeader(bytes);
        if (h.ok()) {
          PeerLeft(*h, source);
          return true;
        }
      }
    }
    // In place: the slot is posted again at the next Progress() (threaded handlers and
    // booting contexts get a copy from the runtime).
    return host_->DeliverFrame(bytes, nullptr).ok();  // a malformed frame is counted there
  }
  bool ReceiveSplit(std::span<const uint8_t> head, uint64_t frame_size, int source) {
    // The sender sent the tail right after the head: it is on its way. A peer that never
    // sends it (a bug, not a protocol state) costs at most kTailWait, then the head is
    // rejected (a late tail then fails the size check of a later head and is rejected too).
    constexpr auto kTailWait = std::chrono::seconds(5);
    MPI_Message msg;
    MPI_Status st;
    int found = 0;
    const auto deadline = std::chrono::steady_clock::now() + kTailWait;
    while (MPI_Improbe(source, kMpiTailTag, MPI_COMM_WORLD, &found, &msg, &st) == MPI_SUCCESS &&
           !found && std::chrono::steady_clock::now() < deadline) {
    }
    if (!found) {
      host_->RejectFrame(Status::Unavailable("mpi: the tail of a " + std::to_string(frame_size) +
                                             "-byte frame from rank " + std::to_string(source) +
                                             " did not come"));
      return false;
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    const bool fits = frame_size <= wire::kHeaderSize + wire::kMaxPayloadBytes &&
                      head.size() + static_cast<uint64_t>(count) == frame_size;
    ByteBlock& b = delivered_.emplace_back(fits ? frame_size : static_cast<size_t>(count));
    b.Resize(fits ? frame_size : static_cast<size_t>(count));
    if (fits) std::memcpy(b.data(), head.data(), head.size());
    MPI_Mrecv(b.data() + (fits ? head.size() : 0), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (!fits) {  // the tail is taken (the stream stays in step) and the frame rejected
      host_->RejectFrame(
          Status::ParseError("mpi: frame from rank " + std::to_string(source) + " announces " +
                             std::to_string(frame_size) + " bytes, head and tail carry " +
                             std::to_string(head.size() + static_cast<uint64_t>(count))));
      return false;
    }
    return host_->DeliverFrame(b.span(), &b).ok();
  }

  struct Slot {
    std::vector<uint8_t> buf = std::vector<uint8_t>(kSlotBytes);
    MPI_Request req = MPI_REQUEST_NULL;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
  int next_ = 0;   // the slot whose receive was posted first (progress thread)
  int taken_ = 0;  // slots before next_ taken by the last pass, to post again
  SendTable sends_;
  std::mutex split_mu_;  // a split frame's head and tail go out together (SendSplit)
  std::unique_ptr<MpiOneSided> one_sided_;
  std::deque<ByteBlock> delivered_;
  std::mutex channels_mu_;
  std::vector<std::shared_ptr<MpiChannel>> channels_;  // every channel Connect() made
};

}  // namespace

std::unique_ptr<Module> NewMpiModule(const ModuleEnv& /*env*/) {
  return std::make_unique<MpiModule>();
}

}  // namespace ukai::rt
