// Single-copy reads (and writes) of another member's memory: between processes on one host
// with cross-memory attach (process_vm_readv / process_vm_writev, as the shm module's large
// frames and Open MPI's vader do), inside one process with memcpy.
//
// A member may be read only once its pid is proven: at group creation every member publishes
// (host key, pid, the address of a random 64-bit nonce in its memory, the nonce); a peer on
// the same host reads the nonce back from that pid and address (Verify). Reading a pid a
// member merely claims could read a third process's memory; a process that holds the
// member's random nonce at that address is the member. Addresses to read then come from the
// member itself (in its rendezvous announcements) and point into its own memory, so a lying
// member can only make us read its own memory, never more than the step's length.
// Thread safety: pure functions.
#ifndef UKAI_RT_COLL_CROSS_MEMORY_H_
#define UKAI_RT_COLL_CROSS_MEMORY_H_

#include <cstdint>
#include <span>

#include "ukai/status.hpp"

namespace ukai::rt::coll {

struct MemberProof {
  uint64_t host = 0;  // HostKey(): same boot and pid namespace
  uint64_t pid = 0;   // 0: not readable (other host, not proven, single copy off)
  uint64_t addr = 0;  // where the nonce lives in that process
  uint64_t nonce = 0;
};

// A hash of the boot id and the pid namespace: processes with the same key can name each
// other by pid.
uint64_t HostKey();
// A fresh random nonce (never 0).
uint64_t NewNonce();
// True when `p` is on this host and its pid holds p.nonce at p.addr.
bool Verify(const MemberProof& p);
// Copies out.size() bytes at address `addr` of the proven member `p` into `out`.
// kUnavailable when that process is gone, kIoError for other failures.
Status ReadMember(const MemberProof& p, uint64_t addr, std::span<uint8_t> out);
// Copies `in` to address `addr` of the proven member `p` (process_vm_writev; memcpy inside
// one process). The address comes from the member itself (it asks us to write into its own
// memory), so a lying member can only corrupt itself. Errors as ReadMember.
Status WriteMember(const MemberProof& p, uint64_t addr, std::span<const uint8_t> in);

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_CROSS_MEMORY_H_
