// The mpi module's connections (mpi_module.h): one MpiChannel per peer rank, sending frames
// with MPI_Isend on MPI_COMM_WORLD; the sends MPI has not completed are kept in a SendTable
// (their blocks alive until then). Internal to the module.
#ifndef UKAI_RT_MODULES_MPI_MPI_CHANNEL_H_
#define UKAI_RT_MODULES_MPI_MPI_CHANNEL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "core/mpi/mpi_library.h"
#include "rt/core/module.h"
#include "rt/modules/mpi/mpi_module.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::mpi {

// A larger frame goes as two messages: its header on kMpiFrameTag (the "head": a message
// shorter than the frame its header announces) and the rest on kMpiTailTag, received with
// MPI_Mprobe + MPI_Mrecv from that source straight into the frame's block. Heads and tails
// of one sender are sent in the same order (split_mu_), so the next tail of a source is
// the one of its head; small frames need no such order (they are on the other tag).
constexpr int kMpiTailTag = kMpiFrameTag + 1;

// Sends of one channel MPI has not completed (flow control: CommObject::QueuedBytes).
struct InFlight {
  std::atomic<uint64_t> frames{0};
  std::atomic<uint64_t> bytes{0};
};

// Sends in flight: the block stays alive until MPI completed the send.
class SendTable {
 public:
  // Set once, before the first Add() (MpiModule::Init).
  void set_library(const MpiLibrary* mpi) { mpi_ = mpi; }
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
      mpi_->Test(&pending_.front().req, &done, MPI_STATUS_IGNORE);
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
  const MpiLibrary* mpi_ = nullptr;
  struct Pending {
    MPI_Request req;
    ByteBlock block;
    std::shared_ptr<InFlight> counted;
  };
  std::mutex mu_;
  std::deque<Pending> pending_;
  std::atomic<size_t> size_{0};  // pending_.size(), read without the lock
};

// A send from the caller's memory (CommObject::SendLent): the tail's request, tested by the
// thread that waits for it (MPI_THREAD_MULTIPLE). Counted in the channel's InFlight until done.
class MpiLentSend final : public CommObject::LentSend {
 public:
  MpiLentSend(const MpiLibrary* mpi, MPI_Request tail, uint64_t bytes,
              std::shared_ptr<InFlight> counted)
      : mpi_(mpi), tail_(tail), bytes_(bytes), counted_(std::move(counted)) {
    counted_->frames.fetch_add(1, std::memory_order_relaxed);
    counted_->bytes.fetch_add(bytes_, std::memory_order_relaxed);
  }
  bool Done() override {
    if (done_) return true;
    int flag = 0;
    mpi_->Test(&tail_, &flag, MPI_STATUS_IGNORE);
    if (flag == 0) return false;
    done_ = true;
    counted_->bytes.fetch_sub(bytes_, std::memory_order_relaxed);
    counted_->frames.fetch_sub(1, std::memory_order_release);
    return true;
  }

 private:
  const MpiLibrary* mpi_;
  MPI_Request tail_;
  const uint64_t bytes_;  // the whole frame's
  std::shared_ptr<InFlight> counted_;
  bool done_ = false;
};

// What the channels of one module share (the module owns it).
struct ChannelShared {
  const MpiLibrary* mpi = nullptr;
  SendTable sends;
  // A split frame's head and tail go out together, in the order of every other split frame
  // (kMpiTailTag); channel states change under it too (MpiChannel::MarkFailed).
  std::mutex split_mu;
  // mpi.zero_copy_bytes and mpi.zero_copy_max_bytes: SendLent takes payloads of this many
  // bytes to that many (zero_copy_bytes 0: none).
  size_t zero_copy_bytes = 0;
  size_t zero_copy_max_bytes = 0;
  std::atomic<uint64_t> zero_copy_sends{0};  // SendLent's, counter zero_copy_sends
};

class MpiChannel final : public CommObject {
 public:
  // `slot_bytes`: the peer's receive slots (frames up to that size go whole).
  MpiChannel(ChannelShared* shared, RuntimeId peer, int rank, size_t slot_bytes)
      : mpi_(shared->mpi), shared_(shared), peer_(peer), rank_(rank), slot_bytes_(slot_bytes) {
    // Only frames that travel as head and tail can leave the tail in the caller's memory.
    if (shared->zero_copy_bytes > 0) {
      lends_from_bytes_ =
          std::max<uint64_t>(shared->zero_copy_bytes, uint64_t{slot_bytes} + 1 - wire::kHeaderSize);
    }
  }
  Status Send(ByteBlock&& frame) override {
    if (state_.load(std::memory_order_acquire) != CommState::kOk) {
      return Status::Unavailable("mpi: connection closed");
    }
    if (frame.size() > static_cast<size_t>(INT32_MAX) || frame.size() < wire::kHeaderSize) {
      return Status::InvalidArgument("mpi: frame of " + std::to_string(frame.size()) +
                                     " bytes (header size to 2 GiB)");
    }
    if (frame.size() > slot_bytes_) return SendSplit(std::move(frame));
    MPI_Request req;
    if (mpi_->Isend(frame.data(), static_cast<int>(frame.size()), mpi_->byte, rank_, kMpiFrameTag,
                    mpi_->comm_world, &req) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Isend to rank " + std::to_string(rank_) + " failed");
    }
    // A small send usually completes at once (copied into MPI's eager buffers): then the
    // block goes now and the send table is not touched.
    int done = 0;
    mpi_->Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) shared_->sends.Add(req, std::move(frame), in_flight_);
    return Status::Ok();
  }
  // The header from its own block (kept until MPI completed its send), the payload straight
  // from the caller's memory as the tail. Declines payloads that would not be split (the
  // frame fits the peer's slot), larger than mpi.zero_copy_max_bytes, or too large for one
  // MPI message (Send says why).
  Result<std::unique_ptr<LentSend>> SendLent(ByteBlock&& header,
                                             std::span<const uint8_t> payload) override {
    if (header.size() != wire::kHeaderSize || payload.size() < lends_from_bytes_ ||
        payload.size() > shared_->zero_copy_max_bytes ||
        payload.size() > static_cast<size_t>(INT32_MAX) - wire::kHeaderSize) {
      return std::unique_ptr<LentSend>();
    }
    const uint8_t* head = header.data();
    std::lock_guard<std::mutex> lock(shared_->split_mu);
    MPI_Request tail;
    UKAI_RETURN_IF_ERROR(IsendSplitLocked(head, payload, std::move(header), &tail));
    shared_->zero_copy_sends.fetch_add(1, std::memory_order_relaxed);
    return std::unique_ptr<LentSend>(
        new MpiLentSend(mpi_, tail, wire::kHeaderSize + payload.size(), in_flight_));
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
    shared_->sends.Test();
    return {in_flight_->frames.load(std::memory_order_acquire),
            in_flight_->bytes.load(std::memory_order_acquire)};
  }
  int rank() const { return rank_; }
  // The peer said goodbye: later sends return kUnavailable. With split_mu held (the
  // module's PeerLeft), so that no split frame leaves after the answer to that goodbye.
  void MarkFailedLocked() { state_.store(CommState::kFailed); }

 private:
  // A frame larger than a receive slot: its header on kMpiFrameTag, the rest on
  // kMpiTailTag (see kDefaultSlotBytes). The frame's block is held with the tail's request.
  Status SendSplit(ByteBlock&& frame) {
    std::lock_guard<std::mutex> lock(shared_->split_mu);
    MPI_Request tail;
    UKAI_RETURN_IF_ERROR(IsendSplitLocked(frame.data(), frame.span().subspan(wire::kHeaderSize),
                                          ByteBlock(), &tail));
    shared_->sends.Add(tail, std::move(frame), in_flight_);
    return Status::Ok();
  }
  // MPI_Isend of a head (`head`, kHeaderSize bytes, kept alive by `head_block` unless that
  // is empty) and its tail, split_mu held; the tail's request in `*tail_req`. kUnavailable
  // when the channel failed or closed (nothing sent) or MPI refused a send.
  Status IsendSplitLocked(const uint8_t* head, std::span<const uint8_t> tail,
                          ByteBlock&& head_block, MPI_Request* tail_req) {
    if (state_.load(std::memory_order_acquire) != CommState::kOk) {
      return Status::Unavailable("mpi: connection closed");
    }
    MPI_Request head_req;
    if (mpi_->Isend(head, static_cast<int>(wire::kHeaderSize), mpi_->byte, rank_, kMpiFrameTag,
                    mpi_->comm_world, &head_req) != MPI_SUCCESS) {
      return Status::Unavailable("mpi: MPI_Isend to rank " + std::to_string(rank_) + " failed");
    }
    shared_->sends.Add(head_req, std::move(head_block));
    if (mpi_->Isend(tail.data(), static_cast<int>(tail.size()), mpi_->byte, rank_, kMpiTailTag,
                    mpi_->comm_world, tail_req) != MPI_SUCCESS) {
      // The head went: the peer waits for this tail. Nothing sensible is left to do with
      // this peer; fail the channel so that later sends say so.
      state_.store(CommState::kFailed);
      return Status::Unavailable("mpi: MPI_Isend of a frame's tail to rank " +
                                 std::to_string(rank_) + " failed");
    }
    return Status::Ok();
  }

  const MpiLibrary* mpi_;
  ChannelShared* shared_;
  const RuntimeId peer_;
  const int rank_;
  const size_t slot_bytes_;
  std::atomic<CommState> state_{CommState::kOk};
  std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
};

}  // namespace ukai::rt::mpi

#endif  // UKAI_RT_MODULES_MPI_MPI_CHANNEL_H_
