// ShmSegment: one POSIX shared-memory object (shm_open + mmap) that joins two processes of a
// host with two ShmRings, one per direction. The creator makes it under a fresh unique name
// and hands the name to the peer (the shm module does that over its unix socket); the peer
// attaches; the creator then removes the name (Unlink), so no name outlives the set-up even
// if both processes crash later. Names that a crash left behind (creator dead before the
// peer attached) are removed by SweepStaleSegments(), which the module runs at start-up and
// the launcher after its children exit.
//
// Names: "/ukai-shm-<creator pid>-<64-bit random hex>". Layout: a page with SegmentHeader
// and the two RingControl blocks, then ring 0 (creator -> attacher) and ring 1 (attacher ->
// creator) data areas, each `ring_capacity` bytes, page-aligned.
//
// Peer death: PeerWatch holds a pidfd (Linux >= 5.3; falls back to kill(pid, 0)) for the
// peer's pid, which turns readable when the process exits; a peer that closes in order sets
// its `closed` flag in the header first.
//
// Ownership: a ShmSegment owns its mapping and, until Unlink(), its name (the creator's
// destructor unlinks). Thread safety: the object is immutable after set-up; the rings follow
// shm_ring.h's rules.
#ifndef UKAI_RT_MODULES_SHM_SHM_SEGMENT_H_
#define UKAI_RT_MODULES_SHM_SHM_SEGMENT_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "rt/core/job_secret.h"
#include "rt/modules/shm/shm_ring.h"

namespace ukai::rt::shm {

inline constexpr uint64_t kSegmentMagic = 0x554b41492d53484dull;  // "UKAI-SHM"
inline constexpr uint32_t kSegmentVersion = 3;
inline constexpr size_t kDefaultRingCapacity = size_t{4} << 20;  // per direction

// Ring r's producer is the creator for r = 0, the attacher for r = 1.
struct SegmentHeader {
  uint64_t magic;
  uint32_t version;
  std::atomic<uint32_t> cma_readable;  // bit r: ring r's consumer can read its producer's memory
  uint64_t ring_capacity;
  std::atomic<int32_t> creator_pid;
  std::atomic<int32_t> attacher_pid;  // 0 until attached
  std::atomic<uint32_t> creator_closed;
  std::atomic<uint32_t> attacher_closed;
  std::atomic<uint64_t> base_address[2];  // where creator / attacher mapped the segment
  std::atomic<uint64_t> cma_done[2];      // ring r: id of the last CMA frame its consumer copied
  uint8_t job_tag[32];  // SetTag: proves the creator holds the job's key (shm_socket.h)
};

enum class SegmentRole { kCreator, kAttacher };

class ShmSegment {
 public:
  // Creates a new segment with two rings of `ring_capacity` bytes (ValidRingCapacity).
  static Result<std::unique_ptr<ShmSegment>> Create(size_t ring_capacity);
  // Attaches to the segment named `name` made by another process; records our pid in it.
  // Refused (kFailedPrecondition, naming owner and mode) unless the object belongs to this
  // user and is accessible to it only (mode 0600), and, with `job_tag`, unless its header
  // carries that tag (a segment of another job).
  static Result<std::unique_ptr<ShmSegment>> Attach(const std::string& name,
                                                    const Mac* job_tag = nullptr);

  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  const std::string& name() const { return name_; }
  SegmentRole role() const { return role_; }
  size_t ring_capacity() const { return ring_capacity_; }
  // The other process's pid (0 when the creator asks before anyone attached).
  pid_t peer_pid() const;

  // Writes the job tag the attacher checks (creator, before handing out the name).
  void SetTag(const Mac& tag);
  // Removes the name (idempotent). The mapping stays valid.
  Status Unlink();
  // Rings for our direction of travel.
  RingProducer MakeProducer();
  RingConsumer MakeConsumer();
  // Marks our side closed in order; PeerClosed() tells whether the peer did.
  void MarkClosed();
  bool PeerClosed() const;

  // Cross-memory attach (process_vm_readv) for large frames. The consumer of a ring probes
  // once whether it can read the peer's memory (reads the segment magic through the peer's
  // own mapping address) and publishes the answer; the producer uses CMA only then.
  bool ProbePeerMemory();
  bool PeerCanReadUs() const;  // our producer ring's consumer probed successfully
  // Completion counter of CMA frames: the consumer stores the id it finished copying, the
  // producer frees every held frame up to it.
  std::atomic<uint64_t>& CmaDoneOfOurProducer() const;
  std::atomic<uint64_t>& CmaDoneOfOurConsumer() const;

 private:
  ShmSegment(std::string name, SegmentRole role, void* base, size_t map_size, size_t capacity);
  SegmentHeader* header() const { return static_cast<SegmentHeader*>(base_); }
  RingControl* control(int ring) const;
  std::byte* data(int ring) const;

  std::string name_;
  SegmentRole role_;
  void* base_;
  size_t map_size_;
  size_t ring_capacity_;
  bool named_ = true;
};

// Watches another process for exit. Open it while the process is known alive (e.g. right
// after a handshake) so pid reuse cannot confuse it.
class PeerWatch {
 public:
  explicit PeerWatch(pid_t pid);
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // False once the process has exited (a zombie counts as exited).
  bool Alive() const;
  // A pollable fd that turns readable when the process exits, or -1 without pidfd support.
  int fd() const { return pidfd_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_;
  int pidfd_ = -1;
};

// Named POSIX shared-memory objects, shared by ShmSegment and the RMA layer's directly
// mapped segments (src/rt/rma/rma_direct.h). Names are "/ukai-shm-<creator pid>-<64-bit
// random hex>", so that SweepStaleSegments removes those a crashed creator left behind.
std::string FreshShmName();
// Whether `name` has that form (no other '/', at most 200 characters).
bool IsShmName(const std::string& name);
// Creates the object `name` (O_EXCL, mode 0600: same user only) of `size` bytes, zeroed, and
// maps it read-write; the name stays until shm_unlink. Returns the mapping's base.
Result<void*> CreateShmObject(const std::string& name, size_t size);
// Opens the object `name` made by another process and maps all of it read-write;
// *size receives its size. Errors: kUnavailable (no such object), kIoError,
// kFailedPrecondition (the object is not this user's, or others may access it:
// CheckOwnerOnly).
Result<void*> MapShmObject(const std::string& name, size_t* size);

// OK when the open shared-memory object `fd` belongs to this user and nobody else may
// access it (no group or other permission bits); else kFailedPrecondition naming `name`,
// its owner and its mode.
Status CheckOwnerOnly(int fd, const std::string& name);

// Removes "/ukai-shm-<pid>-*" names whose creator pid is no longer alive, or, with
// `only_pid` > 0, the names of that pid whatever its state. Returns how many it removed.
int SweepStaleSegments(pid_t only_pid = 0);

}  // namespace ukai::rt::shm

#endif  // UKAI_RT_MODULES_SHM_SHM_SEGMENT_H_
