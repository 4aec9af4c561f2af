#include "rt/modules/mpi/mpi_module.h"

#include <algorithm>
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

#include "core/mpi/mpi_library.h"
#include "rt/core/recycled_blocks.h"
#include "rt/modules/mpi/mpi_channel.h"
#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

using mpi::ChannelShared;
using mpi::kMpiTailTag;
using mpi::MpiChannel;

// Version 2 adds the slot size (u32) after the job id.
constexpr uint8_t kDescriptorVersion = 2;
constexpr int kRecvBudget = 64;
// Receives posted ahead (MPI_ANY_SOURCE, kMpiFrameTag), each into a slot of `mpi.slot_bytes`
// (the receiver's, announced in its descriptor: a sender never sends a slot frame larger
// than the peer's slots): a frame that fits lands in a slot on arrival (MPI matches it to
// the oldest posted receive: no unexpected-message copy, no probe; a large one is pulled by
// MPI's single-copy path as soon as it is matched) and is delivered from there in place.
// Slot memory is not initialised: pages are used once a frame touches them.
constexpr int kSlots = 16;
constexpr size_t kDefaultSlotBytes = size_t{64} << 10;
constexpr size_t kMinSlotBytes = 4096;
constexpr size_t kMaxSlotBytes = size_t{64} << 20;
// Recycled blocks (rt/core/recycled_blocks.h) when mpi.recycle_bytes > 0 (the default):
// Runtime::NewBuffer of kRecycleMinBytes to kRecycleMaxBytes (AllocateBlock) and the
// blocks large frames are received into (ReceiveSplit) come from it, keeping up to
// mpi.recycle_bytes of blocks that completed sends and dispatched frames gave back;
// smaller and larger ones come from the heap. Blocks of kHugeMinBytes and more are
// huge-page mappings (mpi.huge_pages=on, the default): vader's single copy
// (process_vm_readv) pins and reads 2 MiB pages 2-5x faster than 4 KiB ones
// (docs/performance.md, "Issue 22: the mpi module", 1 MiB).
constexpr size_t kRecycleMinBytes = size_t{16} << 10;
constexpr size_t kRecycleMaxBytes = size_t{64} << 20;
constexpr size_t kDefaultRecycleBytes = size_t{32} << 20;
constexpr size_t kMaxRecycleBytes = size_t{64} << 30;
constexpr size_t kHugeMinBytes = size_t{1} << 20;
// Runtime::SendRsrBytes payloads of mpi.zero_copy_bytes and more are sent from the caller's
// memory (MpiChannel::SendLent; 0: never), up to mpi.zero_copy_max_bytes (default: any
// size). Default: every frame split with the default slots (docs/performance.md, "Issue 22:
// `SendRsrBytes` from the caller's memory over mpi").
constexpr size_t kDefaultZeroCopyBytes = size_t{64} << 10;
// Close waits at most this long for every other rank's goodbye (receiving what they send
// meanwhile: MpiModule::Close).
constexpr auto kByeWait = std::chrono::seconds(5);

// Parses an unsigned integer parameter; false when `v` is not one.
bool ParseSize(const std::string& v, size_t* out) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || end == v.c_str() || *end != '\0' || v[0] == '-') return false;
  *out = static_cast<size_t>(n);
  return true;
}

struct UnrefBlocks {
  void operator()(RecycledBlocks* b) const { b->Unref(); }
};

std::string JobId() {
  for (const char* v : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}) {
    if (const char* s = std::getenv(v); s != nullptr && *s != '\0') return s;
  }
  return "";
}

struct MpiDescriptor {
  int rank = -1;
  std::string job;
  size_t slot_bytes = kDefaultSlotBytes;
};

Result<MpiDescriptor> DecodeDescriptor(std::span<const uint8_t> d) {
  if (d.size() < 11 || d[0] != kDescriptorVersion) {
    return Status::ParseError("mpi descriptor: bad size or version");
  }
  MpiDescriptor out;
  out.rank = static_cast<int>(wire::GetLe32(d.data() + 1));
  const size_t n = wire::GetLe16(d.data() + 5);
  if (11 + n != d.size()) return Status::ParseError("mpi descriptor: job id length mismatch");
  out.job.assign(reinterpret_cast<const char*>(d.data() + 7), n);
  out.slot_bytes = wire::GetLe32(d.data() + 7 + n);
  if (out.slot_bytes < kMinSlotBytes || out.slot_bytes > kMaxSlotBytes) {
    return Status::ParseError("mpi descriptor: slot size " + std::to_string(out.slot_bytes) +
                              " out of range");
  }
  return out;
}

// One dynamic window over a duplicate of MPI_COMM_WORLD (errors returned, not fatal), locked
// for every rank once (MPI_Win_lock_all): segments are attached at registration, and puts /
// gets complete with MPI_Win_flush. Attach/Detach are serialised by `mu_`; data operations
// run concurrently (MPI_THREAD_MULTIPLE).
class MpiOneSided final : public OneSided {
 public:
  // Collective over MPI_COMM_WORLD (every rank initialises its module together: the mpi
  // bootstrap's Exchange follows at once). Null when MPI refuses the window.
  static std::unique_ptr<MpiOneSided> Create(const MpiLibrary* mpi_) {
    auto o = std::unique_ptr<MpiOneSided>(new MpiOneSided(mpi_));
    if (mpi_->Comm_dup(mpi_->comm_world, &o->comm_) != MPI_SUCCESS) return nullptr;
    mpi_->Comm_set_errhandler(o->comm_, mpi_->errors_return);
    if (mpi_->Win_create_dynamic(mpi_->info_null, o->comm_, &o->win_) != MPI_SUCCESS) {
      o->win_ = mpi_->win_null;
      return nullptr;
    }
    mpi_->Win_set_errhandler(o->win_, mpi_->errors_return);
    if (mpi_->Win_lock_all(MPI_MODE_NOCHECK, o->win_) != MPI_SUCCESS) {
      mpi_->Win_free(&o->win_);
      o->win_ = mpi_->win_null;
      return nullptr;
    }
    return o;
  }
  // Collective: every rank closes its module (Runtime::Finalize, before MPI_Finalize).
  ~MpiOneSided() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (win_ == mpi_->win_null) {  // Create failed half-way
      if (comm_ != mpi_->comm_null) mpi_->Comm_free(&comm_);
      return;
    }
    for (const auto& [base, length] : attached_) {
      mpi_->Win_detach(win_, reinterpret_cast<void*>(base));
    }
    mpi_->Win_unlock_all(win_);
    mpi_->Win_free(&win_);
    mpi_->Comm_free(&comm_);
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
    if (mpi_->Win_attach(win_, base, static_cast<MPI_Aint>(length)) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Win_attach failed");
    }
    attached_[b] = length;
    MPI_Aint addr = 0;
    mpi_->Get_address(base, &addr);
    return static_cast<uint64_t>(addr);
  }
  void Detach(uint8_t* base) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (attached_.erase(reinterpret_cast<uintptr_t>(base)) == 1) mpi_->Win_detach(win_, base);
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
          put ? mpi_->Put(local + done, count, mpi_->byte, d->rank, disp, count, mpi_->byte, win_)
              : mpi_->Get(local + done, count, mpi_->byte, d->rank, disp, count, mpi_->byte, win_);
      if (rc != MPI_SUCCESS) {
        mpi_->Win_flush(d->rank, win_);
        return Status::Unavailable(std::string("mpi: ") + (put ? "MPI_Put" : "MPI_Get") +
                                   " to rank " + std::to_string(d->rank) + " failed");
      }
    }
    if (mpi_->Win_flush(d->rank, win_) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Win_flush to rank " + std::to_string(d->rank) +
                                 " failed");
    }
    return Status::Ok();
  }

  explicit MpiOneSided(const MpiLibrary* mpi) : mpi_(mpi) {}

  const MpiLibrary* mpi_;
  MPI_Comm comm_ = mpi_->comm_null;
  MPI_Win win_ = mpi_->win_null;
  std::mutex mu_;
  std::map<uintptr_t, uint64_t> attached_;  // base -> length (mu_)
};

class MpiModule final : public Module {
 public:
  std::string_view name() const override { return "mpi"; }

  Status Init(ModuleHost* host) override {
    host_ = host;
    if (const std::string v = host_->Param("mpi.window"); !v.empty()) {
      if (v != "on" && v != "off") {
        return Status::InvalidArgument("mpi.window=" + v + ": must be on or off");
      }
      window_wanted_ = v == "on";
    }
    if (const std::string v = host_->Param("mpi.slot_bytes"); !v.empty()) {
      if (!ParseSize(v, &slot_bytes_) || slot_bytes_ < kMinSlotBytes ||
          slot_bytes_ > kMaxSlotBytes) {
        return Status::InvalidArgument("mpi.slot_bytes=" + v + ": must be an integer in [" +
                                       std::to_string(kMinSlotBytes) + ", " +
                                       std::to_string(kMaxSlotBytes) + "]");
      }
    }
    size_t recycle = kDefaultRecycleBytes;
    UKAI_RETURN_IF_ERROR(SizeParam("mpi.recycle_bytes", kMaxRecycleBytes, &recycle));
    shared_.zero_copy_bytes = kDefaultZeroCopyBytes;
    UKAI_RETURN_IF_ERROR(
        SizeParam("mpi.zero_copy_bytes", wire::kMaxPayloadBytes, &shared_.zero_copy_bytes));
    shared_.zero_copy_max_bytes = wire::kMaxPayloadBytes;
    UKAI_RETURN_IF_ERROR(
        SizeParam("mpi.zero_copy_max_bytes", wire::kMaxPayloadBytes, &shared_.zero_copy_max_bytes));
    bool huge = true;
    if (const std::string v = host_->Param("mpi.huge_pages"); !v.empty()) {
      if (v != "on" && v != "off") {
        return Status::InvalidArgument("mpi.huge_pages=" + v + ": must be on or off");
      }
      huge = v == "on";
    }
    if (recycle > 0) {
      recycled_.reset(RecycledBlocks::Create(kRecycleMinBytes, kRecycleMaxBytes, recycle,
                                             huge ? kHugeMinBytes : 0));
    }
    Result<std::unique_ptr<MpiLibrary>> lib = MpiLibrary::Load();
    if (!lib.ok()) return lib.status().WithContext("mpi module");
    lib_ = std::move(*lib);
    mpi_ = lib_.get();
    shared_.mpi = mpi_;
    shared_.sends.set_library(mpi_);
    for (Slot& slot : slots_) slot.req = mpi_->request_null;
    int initialized = 0, provided = 0;
    mpi_->Initialized(&initialized);
    if (!initialized) {
      return Status::Unsupported(
          "mpi module: MPI is not initialised (run under mpirun; the mpi bootstrap initialises "
          "it)");
    }
    mpi_->Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      return Status::Unsupported("mpi module: needs MPI_THREAD_MULTIPLE, MPI provides level " +
                                 std::to_string(provided));
    }
    mpi_->Comm_rank(mpi_->comm_world, &rank_);
    mpi_->Comm_size(mpi_->comm_world, &size_);
    said_bye_.assign(static_cast<size_t>(size_), false);
    said_bye_[static_cast<size_t>(rank_)] = true;
    job_ = JobId();
    for (Slot& slot : slots_) {
      slot.buf.reset(new uint8_t[slot_bytes_]);  // not initialised
      // Persistent: each repost is an MPI_Start of the same request (no request allocated
      // and initialised per frame, as MPI_Irecv does).
      if (mpi_->Recv_init(slot.buf.get(), static_cast<int>(slot_bytes_), mpi_->byte, MPI_ANY_SOURCE,
                          kMpiFrameTag, mpi_->comm_world, &slot.req) != MPI_SUCCESS) {
        return Status::Unavailable("mpi: MPI_Recv_init of a receive slot failed");
      }
    }
    // Collective: every rank says whether it wants the window (mpi.window) and the job
    // creates it only when all do (the window itself is collective too).
    int want = window_wanted_ ? 1 : 0, all_want = 0;
    if (mpi_->Allreduce(&want, &all_want, 1, mpi_->int_type, mpi_->op_min, mpi_->comm_world) !=
        MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Allreduce of mpi.window failed");
    }
    if (all_want == 1) {
      one_sided_ = MpiOneSided::Create(mpi_);  // collective (see MpiOneSided::Create)
      if (!one_sided_) host_->Trace("mpi: no one-sided window (MPI refused it)");
    } else {
      host_->Trace("mpi: no one-sided window (mpi.window=off on some rank)");
    }
    taken_ = kSlots;  // every slot: post them all
    Repost();
    return Status::Ok();
  }
  OneSided* one_sided() override { return one_sided_.get(); }
  ByteBlock AllocateBlock(size_t capacity) override {
    return recycled_ ? ByteBlock::FromSource(recycled_.get(), capacity) : ByteBlock();
  }
  // one_sided_window: 1 when the job's one-sided window exists (set by Init, read only
  // after); zero_copy_sends: SendRsrBytes payloads sent from the caller's memory
  // (SendLent); close_dropped_large_frames: split frames Close took and dropped (their
  // senders' waits ended); recycled_*: the blocks behind NewBuffer (RecycledBlocks::Stats).
  std::map<std::string, uint64_t> Counters() const override {
    std::map<std::string, uint64_t> c = {
        {"one_sided_window", one_sided_ ? 1 : 0},
        {"zero_copy_sends", shared_.zero_copy_sends.load(std::memory_order_relaxed)},
        {"close_dropped_large_frames", tails_dropped_.load(std::memory_order_relaxed)}};
    if (recycled_) {
      const RecycledBlocks::Stats s = recycled_->stats();
      c["recycled_allocated"] = s.allocated;
      c["recycled_mapped"] = s.mapped;
      c["recycled_reused"] = s.reused;
      c["recycled_released"] = s.released;
      c["recycled_blocks_in_use"] = s.blocks_in_use;
      c["recycled_kept_bytes"] = s.kept_bytes;
    }
    return c;
  }
  ModuleCaps Query() const override {
    ModuleCaps c;
    c.reach = Reach::kAnyHost;
    c.latency_us = 2;
    c.bandwidth_gbytes_s = 5;
    c.max_payload_bytes = wire::kMaxPayloadBytes;
    c.detects_peer_failure = false;
    c.multi_process = true;
    if (recycled_) c.min_block_bytes = kRecycleMinBytes;
    return c;
  }
  Result<std::vector<uint8_t>> MakeDescriptor() override {
    std::vector<uint8_t> d(11 + job_.size());
    d[0] = kDescriptorVersion;
    wire::PutLe32(d.data() + 1, static_cast<uint32_t>(rank_));
    wire::PutLe16(d.data() + 5, static_cast<uint16_t>(job_.size()));
    std::memcpy(d.data() + 7, job_.data(), job_.size());
    wire::PutLe32(d.data() + 7 + job_.size(), static_cast<uint32_t>(slot_bytes_));
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
    const MpiDescriptor d = *DecodeDescriptor(descriptor);
    auto channel = std::make_shared<MpiChannel>(&shared_, peer, d.rank, d.slot_bytes);
    {
      std::lock_guard<std::mutex> lock(channels_mu_);
      channels_.push_back(channel);
    }
    return std::shared_ptr<CommObject>(std::move(channel));
  }
  int Progress() override {
    // An idle pass makes one call, the MPI_Test of the oldest posted slot: the two steps
    // below and shared_.sends.Test() cost a compare each when there is nothing to do.
    if (!delivered_.empty()) delivered_.clear();  // the previous pass's frames were dispatched
    if (taken_ > 0) Repost();                     // so were the slots it delivered in place
    const size_t pending = shared_.sends.Test();
    int n = 0, got = 0;
    // At most every slot once per pass: a taken slot is posted again only by the next one.
    while (n < kRecvBudget && taken_ < kSlots) {
      Slot& slot = slots_[next_];
      int flag = 0;
      MPI_Status st;
      mpi_->Test(&slot.req, &flag, &st);
      if (!flag) break;
      slot.active = false;
      next_ = (next_ + 1) % kSlots;
      ++taken_;
      ++got;
      int count = 0;
      mpi_->Get_count(&st, mpi_->byte, &count);
      const size_t split_before = delivered_.size();
      if (ReceiveFrame({slot.buf.get(), static_cast<size_t>(count)}, st.MPI_SOURCE)) ++n;
      // After a large frame the pass ends: the runtime dispatches it and its block goes
      // back before the next one is received, so a stream of large frames reuses one
      // (warm) block instead of taking up to kSlots of them per pass.
      if (delivered_.size() != split_before) break;
      // A frame after a pass that found none is most likely alone (a request, a reply): it is
      // dispatched now, not after one more MPI_Test, which would find nothing after a round
      // of MPI's progress engine (about half an idle pass) on the latency's critical path.
      // A pass after one that found frames takes all it can (streams keep their batches).
      if (!busy_) break;
    }
    busy_ = got > 0;
    return n + (pending > 0 ? 1 : 0);
  }
  void Close() override {
    if (mpi_ == nullptr) return;  // Init() could not load MPI
    // A goodbye to every other rank, after everything we sent (MPI keeps the order of
    // messages between two ranks on one tag): they mark us failed, orderly, instead of
    // sending into a finalized process, and answer with a goodbye of their own.
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) SendBye(r);
    }
    // Then receive (and drop: the engine has stopped) what the others send until each said
    // goodbye, answering ours or leaving itself: a rank sends no split frame after that
    // (MpiChannel::MarkFailedLocked), so every tail announced to us is taken, and no sender
    // waits forever in SendRsrBytes for us to read its memory. Bounded by kByeWait: a rank
    // that runs no progress meanwhile (no progress thread, busy elsewhere) is not waited for
    // longer (it has no lent send pending then: that would be driving its progress).
    closing_ = true;
    const auto deadline = std::chrono::steady_clock::now() + kByeWait;
    while (std::find(said_bye_.begin(), said_bye_.end(), false) != said_bye_.end() &&
           std::chrono::steady_clock::now() < deadline) {
      Progress();
    }
    // Let sends in flight finish (bounded), so the peers get what we sent before leaving.
    for (int i = 0; i < 100000 && shared_.sends.Test() > 0; ++i) {
    }
    // Withdraw the posted receives (what they matched meanwhile is not delivered: the
    // engine has stopped).
    for (Slot& slot : slots_) {
      if (slot.req == nullptr || slot.req == mpi_->request_null) continue;
      if (slot.active) {
        mpi_->Cancel(&slot.req);
        mpi_->Wait(&slot.req, MPI_STATUS_IGNORE);
      }
      mpi_->Request_free(&slot.req);
    }
    one_sided_.reset();  // collective, like the MPI_Finalize that follows
  }

 private:
  std::unique_ptr<MpiLibrary> lib_;
  const MpiLibrary* mpi_ = nullptr;  // lib_, once Init() loaded it
  ModuleHost* host_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::string job_;
  size_t slot_bytes_ = kDefaultSlotBytes;  // mpi.slot_bytes: our receive slots
  bool window_wanted_ = true;              // mpi.window (the job agrees on it in Init)
  // NewBuffer's blocks and those of large receives (mpi.recycle_bytes > 0); blocks hold
  // their own references.
  std::unique_ptr<RecycledBlocks, UnrefBlocks> recycled_;
  // An empty block with room for `size` bytes: recycled when the module keeps blocks
  // (mpi.recycle_bytes) and the size is theirs, else from the heap.
  ByteBlock NewBlock(size_t size) {
    if (recycled_) {
      ByteBlock b = ByteBlock::FromSource(recycled_.get(), size);
      if (b.capacity() >= size) return b;
    }
    return ByteBlock(size);
  }
  // Parameter `key`, when set, into `*out`: an integer in [0, max], else kInvalidArgument
  // naming the key and the value.
  Status SizeParam(const std::string& key, size_t max, size_t* out) const {
    const std::string v = host_->Param(key);
    if (v.empty()) return Status::Ok();
    if (!ParseSize(v, out) || *out > max) {
      return Status::InvalidArgument(key + "=" + v + ": must be an integer in [0, " +
                                     std::to_string(max) + "]");
    }
    return Status::Ok();
  }
  // A goodbye (kBye frame) to `rank`; kept until MPI completed its send.
  void SendBye(int rank) {
    wire::FrameHeader bye;
    bye.kind = wire::FrameKind::kBye;
    bye.source = host_->runtime_id();
    bye.target = 0;  // a rank's runtime id is known only once it connected
    ByteBlock b(wire::kHeaderSize);
    b.Resize(wire::kHeaderSize);
    wire::EncodeHeader(bye, {b.data(), b.size()});
    MPI_Request req;
    if (mpi_->Isend(b.data(), static_cast<int>(b.size()), mpi_->byte, rank, kMpiFrameTag,
                    mpi_->comm_world, &req) == MPI_SUCCESS) {
      shared_.sends.Add(req, std::move(b));
    }
  }
  // A kBye from `rank`: its channel (if we have one) fails, the runtime is told, and the
  // rank gets our goodbye back (its Close waits for it: nothing split follows it).
  void PeerLeft(const wire::FrameHeader& h, int rank) {
    said_bye_[static_cast<size_t>(rank)] = true;
    {
      std::lock_guard<std::mutex> split(shared_.split_mu);
      {
        std::lock_guard<std::mutex> lock(channels_mu_);
        for (const auto& c : channels_) {
          if (c->rank() == rank) c->MarkFailedLocked();
        }
      }
      SendBye(rank);
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
      // A start that fails leaves the request inactive: MPI_Test then completes it with an
      // empty status, a 0-byte frame that is rejected, not delivered.
      slot.active = mpi_->Start(&slot.req) == MPI_SUCCESS;
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
      if (bytes.size() == wire::kHeaderSize && frame_size > slot_bytes_ &&
          wire::DecodeHeader(bytes).ok()) {
        return ReceiveSplit(bytes, frame_size, source);
      }
      if (bytes[5] == static_cast<uint8_t>(wire::FrameKind::kBye)) {
        Result<wire::FrameHeader> h = wire::DecodeHeader(bytes);
        if (h.ok() && source >= 0 && source < size_) {
          if (closing_) {
            said_bye_[static_cast<size_t>(source)] = true;
          } else {
            PeerLeft(*h, source);
          }
          return true;
        }
      }
    }
    if (closing_) return false;  // Close: the engine has stopped
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
    while (mpi_->Improbe(source, kMpiTailTag, mpi_->comm_world, &found, &msg, &st) == MPI_SUCCESS &&
           !found && std::chrono::steady_clock::now() < deadline) {
    }
    if (!found) {
      host_->RejectFrame(Status::Unavailable("mpi: the tail of a " + std::to_string(frame_size) +
                                             "-byte frame from rank " + std::to_string(source) +
                                             " did not come"));
      return false;
    }
    int count = 0;
    mpi_->Get_count(&st, mpi_->byte, &count);
    const bool fits = frame_size <= wire::kHeaderSize + wire::kMaxPayloadBytes &&
                      head.size() + static_cast<uint64_t>(count) == frame_size;
    const size_t size = fits ? frame_size : static_cast<size_t>(count);
    ByteBlock& b = delivered_.emplace_back(NewBlock(size));
    b.Resize(size);
    if (fits) std::memcpy(b.data(), head.data(), head.size());
    mpi_->Mrecv(b.data() + (fits ? head.size() : 0), count, mpi_->byte, &msg, MPI_STATUS_IGNORE);
    if (!fits) {  // the tail is taken (the stream stays in step) and the frame rejected
      host_->RejectFrame(
          Status::ParseError("mpi: frame from rank " + std::to_string(source) + " announces " +
                             std::to_string(frame_size) + " bytes, head and tail carry " +
                             std::to_string(head.size() + static_cast<uint64_t>(count))));
      return false;
    }
    if (closing_) {  // Close: taken (its sender's lent memory is free), not delivered
      ++tails_dropped_;
      return false;
    }
    return host_->DeliverFrame(b.span(), &b).ok();
  }

  struct Slot {
    std::unique_ptr<uint8_t[]> buf;  // slot_bytes_, uninitialised
    MPI_Request req = nullptr;       // persistent (MPI_Recv_init in Init()), freed by Close
    bool active = false;             // started, not completed by MPI_Test yet
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
  int next_ = 0;          // the slot whose receive was posted first (progress thread)
  int taken_ = 0;         // slots before next_ taken by the last pass, to post again
  bool busy_ = false;     // the last pass took a slot (progress thread)
  ChannelShared shared_;  // the channels' send table, split lock and zero-copy setting
  // Ranks whose goodbye came (progress thread; Close once it stopped), ours included.
  std::vector<bool> said_bye_;
  bool closing_ = false;  // Close receives until every goodbye came: drops what arrives
  std::atomic<uint64_t> tails_dropped_{0};  // large frames taken and dropped by Close
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
