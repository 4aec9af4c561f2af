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
// copy); frames larger than one ring record go in chunks and are reassembled. After
// `shm.idle_us` (default 50) of idle progress the module announces in each ring that it may
// sleep; senders then write its eventfd, which is part of WaitFd() (an epoll fd that also
// covers the listener and the peers' sockets). Housekeeping (accepting peers, hang-ups)
// runs every 200 us of busy idling, every 5 us once the doorbell is armed.
//
// Peer failure: the kernel closes a dead process's socket; the hang-up turns the channel into
// a failed object (after the records already in the ring were delivered), orderly when the
// peer marked its side closed first (Close()).
//
// Parameters (--ukai-param=): shm.ring_bytes (per direction, power of two, default 4 MiB),
// shm.idle_us (default 50), shm.chunk_bytes (default 1 MiB).
#ifndef UKAI_RT_MODULES_SHM_SHM_MODULE_H_
#define UKAI_RT_MODULES_SHM_SHM_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

std::unique_ptr<Module> NewShmModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SHM_SHM_MODULE_H_
