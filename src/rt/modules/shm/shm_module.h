// shm: runtimes in processes of one host (or in one process), over POSIX shared memory.
//
// Per pair of runtimes one ShmSegment with two lock-free SPSC rings (shm_ring.h), set up on
// first use: the connecting side creates the segment and sends its name plus its eventfd
// over the listener's abstract unix socket (SOCK_SEQPACKET, SCM_RIGHTS); the listener
// attaches, removes the name (so nothing is left in /dev/shm even if both crash later) and
// replies with its own eventfd; it adopts the channel for its sends to the connector.
// Stale names of crashed creators are swept at Init.
//
// Descriptor (<= 1024 bytes): u8 version (1), u16 length + host key (boot id, IPC and
// network namespace ids: same key = same shared memory and abstract sockets), u16 length +
// abstract socket name.
//
// Progress: polls every ring (a record is read in place: small RSRs are delivered without a
// copy); frames larger than one ring record go in chunks and are reassembled. An idle pass
// reports 0. Senders never make a system call while the receiver polls: only when its
// progress engine is about to block (Module::PrepareToBlock) does the module announce in
// each ring that it may sleep; senders that find the announcement write its eventfd, which
// is part of WaitFd() (an epoll fd that also covers the listener and the peers' sockets).
// Unblocked() withdraws the announcements. Housekeeping (accepting peers, hang-ups) runs
// every 200 us of idle polling and right after the engine woke up.
//
// Peer failure: the kernel closes a dead process's socket; the hang-up turns the channel into
// a failed object (after the records already in the ring were delivered), orderly when the
// peer marked its side closed first (Close()).
//
// Large frames: frames of shm.cma_bytes or more (default: those larger than one ring
// record) are read by the receiver straight from the sender's memory with
// process_vm_readv (one copy) when a probe showed it is allowed; else larger-than-a-record
// frames go in chunks of shm.chunk_bytes and are reassembled (two copies).
//
// Registered memory (shm_pool.h): the module owns a pool, a sparse memfd area it offers
// through Module::AllocateBlock (Runtime::NewBuffer) for payloads of shm.pool_min_bytes or
// more. Its fd goes to each peer with the eventfd at set-up (both directions; the accept
// reply says whether the listener mapped the connector's pool); a frame in our pool is sent
// as a pool record (offset, length, id) and delivered in place from the peer's read-only
// mapping; the block is held until the peer's completion counter passes its id (at its next
// poll, or when its engine is about to block: PrepareToBlock), or until the peer fails. The
// pool outlives the module while blocks of it live (Buffers may outlive the Runtime).
//
// Parameters (--ukai-param=): shm.ring_bytes (per direction, power of two, default 4 MiB),
// shm.chunk_bytes (default 1 MiB), shm.cma_bytes (0 = never), shm.pool_bytes (default
// 256 MiB, 0 = no pool, else >= 64 KiB), shm.pool_min_bytes (default 16 KiB).
#ifndef UKAI_RT_MODULES_SHM_SHM_MODULE_H_
#define UKAI_RT_MODULES_SHM_SHM_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

std::unique_ptr<Module> NewShmModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SHM_SHM_MODULE_H_
