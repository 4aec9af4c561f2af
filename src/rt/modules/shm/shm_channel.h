// ShmChannel: the shm module's communication object to one peer runtime: a ShmSegment
// (two rings), the unix socket that set it up (closed by the kernel when the peer process
// dies, so it doubles as the death signal) and the peer's eventfd doorbell.
//
// Send path (any thread, serialised by a spin lock, send_mu_, which the channel lends to
// the runtime: its frame log records each send under it, so a send takes one lock): a frame of
// `cma_bytes` bytes or more, when the peer probed that it can read our memory (process_vm_readv,
// Linux cross-memory attach), is sent as a small record naming its address; the sender keeps the
// ByteBlock until the receiver's completion counter in the segment passes its id, and the receiver
// copies it once, straight into an owned ByteBlock (one copy in all, as Open MPI's vader
// does). Otherwise a frame that fits a ring record (MaxRecordPayload, ~2 MiB with the
// default 4 MiB rings) is copied into one record; larger frames travel as a sequence of
// chunk records (first / middle / last) reassembled by the receiver into one ByteBlock. When the
// ring is full the rest of the frame waits, owned, in a send queue that the module's Progress()
// flushes, so Send() never blocks on the peer (two progress threads sending to each other cannot
// deadlock). Order is kept: while the queue is non-empty new frames go behind it.
//
// Pool frames: a frame whose storage lies in this module's pool (shm_pool.h, from
// Runtime::NewBuffer) and is at least `pool_min_bytes` long goes, when the peer maps our
// pool (it does at set-up, before it reads our first record, or it refuses the
// connection), as a small kPoolFrame record naming its offset; the sender holds the block (with
// the CMA frames, same ids and completion counter) until the receiver, which delivers the
// frame in place from its read-only mapping of our pool, says it is done: at its next Poll()
// (or ReleaseDelivered()), when the runtime no longer needs the delivered span.
//
// Staged heap frames: a frame not from the pool of at least `stage_bytes` (SetStageBytes),
// when the pool can serve it and the peer maps the pool, is copied into a pool block by
// Send() (outside the lock) and goes as a pool frame; the heap block is freed at once.
// On this kind of machine a memcpy into the pool runs at 4-5x the speed of the receiver's
// process_vm_readv (which pins the sender's pages), and the receiver reads the frame in
// place; the sender pays a second copy after the pack. A staged frame counts in
// QueuedBytes until the peer is done with it, as the heap frame it stands for would
// (send_queue_bytes bounds what a stalled receiver makes us hold). When the pool is
// exhausted the frame takes the CMA or ring path as before.
//
// Receive path (progress thread only): Poll() hands whole-record frames to the host in
// place (the record stays in the ring until the next Poll() publishes the tail: the
// runtime's "valid until the next Progress()" rule) and reassembled frames as owned blocks.
//
// Doorbell: a consumer whose progress engine is about to block announces it in the ring
// (RingConsumer::PrepareWait); a sender that then finds the announcement writes the peer's
// eventfd. The connector learns that eventfd from the accept reply; if it needs it before its
// progress thread read the reply, Send() reads the reply itself (it is already there, since the
// peer replies before it ever waits on the ring).
//
// Thread safety: Send/Close/state/peer from any thread; Poll/Flush/Idle* from the progress
// thread.
#ifndef UKAI_RT_MODULES_SHM_SHM_CHANNEL_H_
#define UKAI_RT_MODULES_SHM_SHM_CHANNEL_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "rt/core/module.h"
#include "rt/core/spin_mutex.h"
#include "rt/modules/shm/shm_pool.h"
#include "rt/modules/shm/shm_segment.h"
#include "rt/modules/shm/shm_socket.h"

namespace ukai::rt::shm {

// Record flags of the shm module (low bits, see kRecordSkip in shm_ring.h).
inline constexpr uint32_t kWholeFrame = 1;
inline constexpr uint32_t kFirstChunk = 2;
inline constexpr uint32_t kMiddleChunk = 3;
inline constexpr uint32_t kLastChunk = 4;
inline constexpr uint32_t kCmaFrame = 5;  // payload: u64 address, u64 length, u64 id (LE)
// An RSR frame whose 56-byte wire header is replaced by a compact one (the channel knows
// source and target; magic, version, kind and lengths are implied): u32 context, u32
// endpoint, u32 handler, u32 frame flags, then u64 address only when kFlagHasAddress is
// set; the RSR payload follows. An 8-byte RSR then fits the ring record's first cache
// line (16-byte record header + 16 + 13 bytes) instead of spanning two, and the receiver
// builds the header from four words instead of decoding and validating 56 bytes.
inline constexpr uint32_t kCompactRsr = 6;
inline constexpr size_t kCompactHeader = 16;
// A frame in the sender's pool: u64 offset in the pool, u64 frame length, u64 id (LE).
inline constexpr uint32_t kPoolFrame = 7;

// Counters of a module's channels (tests, diagnostics). Thread safe.
struct ShmCounters {
  std::atomic<uint64_t> pool_frames_sent{0};
  std::atomic<uint64_t> pool_frames_received{0};
  std::atomic<uint64_t> pool_frames_staged{0};  // heap frames copied into the pool to send
};

// Ring positions where the frames written into the ring end, oldest first (the sender's
// flow accounting: a frame is unconfirmed until the consumer's tail passed its end). A
// power-of-two circular array that doubles when full: a push is a store and an add.
class EndQueue {
 public:
  bool full() const { return count_ == buf_.size(); }
  size_t size() const { return count_; }
  void Push(uint64_t end) {
    if (full()) Grow();
    buf_[(head_ + count_++) & (buf_.size() - 1)] = end;
  }
  // Forgets the ends at or before `tail` (frames the consumer took): a binary search, the
  // ends grow (a full queue of 1024 costs ~10 steps, not a step per end).
  void PopUpTo(uint64_t tail);

 private:
  void Grow();
  std::vector<uint64_t> buf_ = std::vector<uint64_t>(1024);
  size_t head_ = 0, count_ = 0;
};

class ShmChannel final : public CommObject {
 public:
  // `socket` is the connected unix socket (owned). `peer_efd` is -1 until known (the
  // connector then completes the handshake through ReadAcceptReply).
  ShmChannel(RuntimeId self, RuntimeId peer, std::unique_ptr<ShmSegment> segment, int socket,
             int peer_efd, size_t chunk_bytes, size_t cma_bytes, ModuleHost* host);
  ~ShmChannel() override;

  // CommObject. The channel lends its send lock (send_lock(): send_mu_), so the runtime's
  // frame log records under it: one lock per send.
  Status Send(ByteBlock&& frame) override;
  Status PrepareSend(ByteBlock& frame, uint32_t* token) override;
  void SendLocked(ByteBlock&& frame, uint32_t token) override;
  // A small RSR straight into the ring as a kCompactRsr record (no frame is built); false
  // when it would not go as one, frames are queued ahead, or the ring is full.
  bool TrySendInPlace(const RsrRoute& route, std::span<const uint8_t> payload) override;
  bool TrySendInPlaceLocked(const RsrRoute& route, std::span<const uint8_t> payload) override;
  void Close() override;
  CommState state() const override { return state_.load(std::memory_order_acquire); }
  RuntimeId peer() const override { return peer_; }
  // Flow control: queued frames, CMA and staged frames held for the peer (NewBuffer's pool
  // frames are bounded by the pool); unconfirmed adds records the peer has not consumed.
  size_t QueuedBytes() const override { return held_bytes_.load(std::memory_order_relaxed); }
  Unconfirmed Outstanding() override;

  // Pool set-up, before the channel is shared: frames of at least `min_bytes` from `local`
  // (referenced while the channel lives; nullptr: none) go as pool records when the peer
  // maps our pool (`peer_mapped`; the accept reply's flag may also turn it on). `counters`
  // may be shared by the module's channels.
  void ConfigurePool(ShmPool* local, size_t min_bytes, bool peer_mapped,
                     std::shared_ptr<ShmCounters> counters);
  // Heap frames of at least `bytes` are staged in the pool (see the header comment); 0 =
  // never. Before the channel is shared.
  void SetStageBytes(size_t bytes) {
    stage_bytes_ = bytes == 0 ? kNeverStage : bytes;
    SetInPlaceLimit();
  }
  // The peer's pool, mapped read-only (listener side: from the hello; before sharing).
  void SetPeerPool(std::unique_ptr<PeerPool> pool);
  // Our ring's producer uses light barriers (shm_ring.h); only when this process's
  // EnableLightBarriers() succeeded. Before the channel is shared.
  void UseLightBarrier() { producer_.UseLightBarrier(); }
  const ShmCounters& counters() const { return *counters_; }
  // Progress thread, when the runtime no longer needs what the last Poll() delivered (the
  // engine is about to block): frees the ring records and tells the peer its pool frames
  // are done, as the next Poll() would.
  void ReleaseDelivered();
  // Blocks held for the peer (pool and CMA frames it has not finished with).
  size_t HeldForTest();
  // Polls that leave the ring alone after one that drained it (coalescing, see Poll).
  static constexpr int kSkipPolls = 4;

  int socket() const { return socket_; }
  bool handshake_done() const { return peer_efd_.load(std::memory_order_acquire) >= 0; }
  // Connector side: reads the accept reply from the socket (blocking at most `timeout_ms`).
  // kUnavailable when the peer refused or hung up, or `check` (set before the channel is
  // shared: the module's proof check of the reply, shm_socket.h) says no.
  Status ReadAcceptReply(int timeout_ms);
  void SetReplyCheck(std::function<Status(const Reply&)> check) { reply_check_ = std::move(check); }

  // Progress thread: frees records delivered by the previous Poll, then delivers up to
  // `budget` frames to `host`. Returns the number delivered; adds the records consumed
  // (chunks included) to *records when given. `coalesce` (the module's progress passes):
  // after a poll that delivered frames and emptied the ring, the next kSkipPolls coalescing
  // polls only free what was delivered and leave the ring alone (see Poll); a poll without
  // it (draining loops) always reads the ring.
  int Poll(ModuleHost* host, int budget, int* records = nullptr, bool coalesce = false);
  // Progress thread: pushes queued frames into the ring. Returns true when the queue is
  // non-empty afterwards (the caller keeps the progress engine busy).
  bool Flush();
  bool HasQueued() const { return queued_.load(std::memory_order_acquire); }
  // Frees CMA frames the peer finished copying (any thread). True when some are still held.
  bool ReapCma();
  // Doorbell: announce/withdraw that this side may sleep (see the header comment).
  bool PrepareIdle() { return consumer_.PrepareWait(); }
  void EndIdle() { consumer_.EndWait(); }
  // Marks the object failed (peer gone); true the first time.
  bool MarkFailed();
  bool PeerClosedInOrder() const { return segment_->PeerClosed(); }
  ShmSegment* segment_for_test() const { return segment_.get(); }

 private:
  bool FlushLocked();  // Flush() with send_mu_ held
  // Frames (header included) from this size on do not go in place: larger than a record,
  // staged in the pool, or sent by cross-memory attach (WriteSome's other paths).
  void SetInPlaceLimit();
  // Flow accounting (send_mu_ held): a frame went whole into the ring / into cma_held_.
  // `counted`: its bytes count in QueuedBytes while held (heap frames, staged ones too: the
  // sender sent ordinary memory; not NewBuffer's pool frames, which the pool bounds).
  void InRing() {  // inline: once per record sent
    // A full queue: forget what the (lagging) peer consumed before growing it.
    if (ends_.full()) ends_.PopUpTo(producer_.ConsumedUpTo());
    ends_.Push(producer_.position());
  }
  void Hold(uint64_t id, ByteBlock&& frame, bool counted);
  bool Counted(const ByteBlock& frame, bool staged) const {
    return staged || pool_ == nullptr || frame.source() != pool_;
  }
  Unconfirmed CountLocked();
  void DropPending();
  // Writes as much of `frame` from `offset` on as the ring takes; returns the new offset.
  size_t WriteSome(const ByteBlock& frame, size_t offset);
  // After a commit: wakes the peer when it announced that it may sleep. The check is
  // inline (once per record sent); the wake-up is not.
  void RingDoorbell() {
    if (producer_.NeedsWake()) WakePeer();
  }
  void WakePeer();
  // Replaces a `frame` of at least stage_bytes_ by a copy in a pool block when it is a heap
  // frame and the pool can serve it (any thread, without send_mu_); true when it did.
  bool MaybeStage(ByteBlock& frame);
  // Writes a whole RSR frame as one kCompactRsr record; false when the ring is full.
  bool WriteCompact(const ByteBlock& frame);
  // A compact record from a route and payload; false when the ring is full. The common
  // small RSR inline, the rest in WriteCompactRecordSlow.
  bool WriteCompactRecord(const RsrRoute& route, std::span<const uint8_t> payload);
  bool WriteCompactRecordSlow(const RsrRoute& route, std::span<const uint8_t> payload);
  // Delivers a kCompactRsr record; false when it was rejected (and counted).
  bool DeliverCompact(ModuleHost* host, const RecordView& v);
  [[gnu::cold]] void RejectCompact(ModuleHost* host, size_t size);  // counts a bad one
  // Delivers or reassembles one record; false when it was rejected (and counted).
  bool DeliverRecord(ModuleHost* host, const RecordView& v);
  // Delivers a kPoolFrame record in place from the peer's pool; false when rejected.
  bool DeliverPool(ModuleHost* host, const RecordView& v);
  // Tells the peer that its CMA/pool frames up to `id` are done: now, or with the next
  // publish when pool frames delivered by this Poll are still in use.
  void Complete(uint64_t id);
  void PublishDone();
  // Copies a CMA frame out of the peer; the frame lands in *complete.
  Status PullCma(const RecordView& v, ByteBlock* complete);
  void ReapCmaLocked();
  // Appends a chunk; moves the frame into *complete when its last chunk arrived. A first
  // chunk while a frame is still being reassembled starts the new frame and reports the
  // unfinished one to `host` (RejectFrame) as lost.
  Status ReassembleChunk(const RecordView& v, ModuleHost* host, ByteBlock* complete);

  const RuntimeId self_;
  const RuntimeId peer_;
  std::unique_ptr<ShmSegment> segment_;
  const int socket_;
  std::atomic<int> peer_efd_;
  const size_t max_record_;  // MaxRecordPayload of our ring
  const size_t chunk_bytes_;
  const size_t cma_bytes_;   // 0: never use cross-memory attach
  ModuleHost* const host_;   // woken when a send is queued (its progress engine flushes)
  std::mutex handshake_mu_;  // serialises ReadAcceptReply (sender, progress thread)
  std::function<Status(const Reply&)> reply_check_;  // set before sharing
  ShmPool* pool_ = nullptr;                          // our pool (a reference held), nullptr: none
  size_t pool_min_ = 0;
  static constexpr size_t kNeverStage = ~size_t{0};
  size_t stage_bytes_ = kNeverStage;  // heap frames from this size on are staged
  size_t in_place_limit_ = 0;         // SetInPlaceLimit
  std::atomic<bool> peer_mapped_pool_{false};
  std::unique_ptr<PeerPool> peer_pool_owner_;
  std::atomic<const PeerPool*> peer_pool_{nullptr};
  std::shared_ptr<ShmCounters> counters_ = std::make_shared<ShmCounters>();
  std::atomic<CommState> state_{CommState::kOk};

  SpinMutex send_mu_;  // guards producer_, queue_, queue_offset_, handshake reads
  RingProducer producer_;
  struct Queued {
    ByteBlock frame;
    bool staged = false;  // a heap frame copied into the pool (MaybeStage)
  };
  std::deque<Queued> queue_;
  size_t queue_offset_ = 0;  // bytes of queue_.front() already in the ring
  std::atomic<bool> queued_{false};
  struct Held {
    uint64_t id;
    ByteBlock frame;
    bool counted;  // in held_bytes_ (see Hold)
  };
  std::deque<Held> cma_held_;  // CMA and pool frames until the peer is done with them
  uint64_t cma_next_id_ = 0;
  std::atomic<bool> cma_pending_{false};
  // Flow control (under send_mu_ unless atomic): bytes of queue_ and of the counted frames
  // in cma_held_; ring positions where frames written into the ring end, until the peer
  // consumed them; what was lost when the channel failed or closed.
  std::atomic<size_t> held_bytes_{0};
  EndQueue ends_;
  Unconfirmed lost_;
  bool lost_counted_ = false;

  // Progress thread only.
  RingConsumer consumer_;
  bool probed_ = false;           // tried ProbePeerMemory
  bool consumed_ = false;         // records consumed since the last Publish
  ByteBlock reassembly_;          // frame being reassembled from chunks
  std::deque<ByteBlock> held_;    // reassembled frames delivered by the last Poll
  std::vector<ByteBlock> spare_;  // blocks the runtime left us, reused (warm, no page faults)
  // A block of at least `size` bytes: a spare one when possible.
  ByteBlock TakeBlock(size_t size);
  size_t reassembly_expected_ = 0;
  uint64_t done_id_ = 0;       // last CMA/pool id completed
  bool done_pending_ = false;  // done_id_ not yet published (pool frames in use)
  static constexpr int kMaxBatch = 64;
  int batch_ = 1;       // records the next Poll may deliver (see Poll)
  int skip_polls_ = 0;  // polls that leave the ring alone (coalescing, see Poll)
};

}  // namespace ukai::rt::shm

#endif  // UKAI_RT_MODULES_SHM_SHM_CHANNEL_H_
