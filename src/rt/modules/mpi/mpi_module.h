// mpi: runtimes in the processes of one mpirun job, over Open MPI point-to-point messages
// (built only when Open MPI is found; UKAI_HAVE_MPI). Not loaded by default: ask for it
// with --ukai-modules=mpi (its descriptor only reaches ranks of the same job).
//
// Requires MPI to be initialised with MPI_THREAD_MULTIPLE (the "mpi" bootstrap does it
// under mpirun): user threads call MPI_Isend from Send() while the progress thread
// probes and receives; Init fails with kUnsupported otherwise. Frames go on MPI_COMM_WORLD
// with tags kMpiFrameTag and kMpiFrameTag + 1 (user MPI traffic on other tags is not
// disturbed). Receives are posted ahead (16 slots of 64 KiB, MPI_ANY_SOURCE, persistent
// requests made once with MPI_Recv_init): a frame that fits a slot is one MPI message
// (MPI_Isend of the ByteBlock, kept until MPI_Test says it completed) and is delivered in
// place from its slot, which is started again (MPI_Start) at the next Progress(); a larger frame is
// its header on kMpiFrameTag and the rest on kMpiFrameTag + 1, received with MPI_Mprobe + MPI_Mrecv
// into an owned ByteBlock (threaded handlers get it without a copy; see Blocks below). Order: slots
// are posted and taken in one circular order (MPI matches the oldest posted receive first), and
// heads and tails leave in one order. WaitFd() is -1 (MPI has no pollable fd): the progress engine
// polls it.
//
// Sends from the caller's memory (mpi_channel.h, MpiChannel::SendLent): a
// Runtime::SendRsrBytes payload of mpi.zero_copy_bytes (default 64 KiB; 0 = never) to
// mpi.zero_copy_max_bytes (default any size), only of frames larger than the peer's slot
// (split anyway), goes as its header from a small block and its tail straight from the
// caller's span, in the order of every other split frame; the runtime returns from the
// call once MPI completed the tail (the caller's thread drives progress meanwhile: the peer
// may wait for us to take its own).
// Where the caller cannot wait (inside a progress pass, with a send timeout) or while
// recording, the runtime copies the payload into a frame instead. Counter zero_copy_sends.
//
// Peers leaving: Close() (Finalize) sends a kBye frame to every other rank after its
// last frames (MPI keeps the order between two ranks on one tag); a rank receiving it
// fails its channel to the sender (under the split lock), answers with a kBye of its own
// (so it sends no split frame after that answer) and reports an orderly PeerFailed, so
// later sends return kUnavailable instead of going into a finalized process. Close then
// receives and drops what arrives until every other rank said goodbye (its answer, or its
// own Close), at most 5 s: every tail announced to a closing rank is taken, so no sender
// waits forever in a lent send (Open MPI 4.1 cannot cancel a send, and a rendezvous send
// nobody matches never completes); such a sender returns kUnavailable. Counter
// close_dropped_large_frames. A rank that dies abruptly is not
// detected (detects_peer_failure is false): Open MPI 4.1 (Debian) has no ULFM, and mpirun
// aborts the whole job when a rank exits without MPI_Finalize.
//
// One-sided (Module::one_sided(), rt/core/one_sided.h): Init creates one dynamic window
// (MPI_Win_create_dynamic over a duplicate of MPI_COMM_WORLD with errors returned, then
// MPI_Win_lock_all once) — collective, like the bootstrap's Exchange that follows, so every
// rank must load the module (they do: one module list per job); Close frees it (collective,
// like the MPI_Finalize after it). The RMA layer attaches segments (MPI_Win_attach) and does
// granted large put/get with MPI_Put/MPI_Get + MPI_Win_flush (docs/rma.md). When MPI refuses
// the window (Open MPI 4.1 through btl tcp: osc rdma needs a capable btl, osc pt2pt refuses
// MPI_THREAD_MULTIPLE) the module works without it (traced) and RMA keeps its packets.
// mpi.window=off (default on) on any rank leaves the window out for the whole job: Init
// agrees on it with an MPI_Allreduce (MIN) before creating it (an idle MPI_Test costs more
// once a window exists: bench/rt/profile/mpi_idle_test.cc). Counters(): one_sided_window
// (1 when the window exists).
//
// Blocks: with mpi.recycle_bytes > 0 (default 32 MiB) Runtime::NewBuffer of 16 KiB-64 MiB
// and the blocks large frames are received into are recycled (rt/core/recycled_blocks.h;
// counters recycled_*), those of 1 MiB and more in huge-page mappings (mpi.huge_pages=on,
// default; 2 MiB aligned, MADV_HUGEPAGE): Open MPI's single copy reads them faster. A
// progress pass ends after a large frame, so that its block goes back before the next
// one is received. mpi.recycle_bytes=0: heap blocks, as NewBuffer's were before.
//
// Progress: a pass takes the completed slots in order; after a pass that took none it
// stops at the first frame (dispatched at once, without one more MPI_Test: latency),
// after a pass that took some it takes all that completed (streams keep their batches).
//
// Descriptor: u8 version (1), u32 world rank, u16 length + job id (PMIX_NAMESPACE or
// OMPI_MCA_ess_base_jobid).
#ifndef UKAI_RT_MODULES_MPI_MPI_MODULE_H_
#define UKAI_RT_MODULES_MPI_MPI_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

inline constexpr int kMpiFrameTag = 0x55a1;

std::unique_ptr<Module> NewMpiModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_MPI_MPI_MODULE_H_
