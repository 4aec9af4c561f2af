#include "rt/modules/shm/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace ukai::rt::shm {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kControlPage = kPage;  // header + 2 RingControl
constexpr std::string_view kPrefix = "ukai-shm-";

constexpr size_t kControlOffset = 2 * kCacheLine;  // the RingControl blocks follow the header
static_assert(sizeof(SegmentHeader) <= kControlOffset);
static_assert(kControlOffset + 2 * sizeof(RingControl) <= kControlPage);

size_t MapSize(size_t capacity) { return kControlPage + 2 * capacity; }

std::string Errno(std::string_view what, const std::string& name) {
  return std::string(what) + " " + name + ": " + std::strerror(errno);
}

bool ProcessExists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

// "/ukai-shm-<pid>-<random hex>": the pid lets a sweep find names of dead creators.
std::string FreshShmName() {
  std::random_device rd;
  uint64_t r = (uint64_t{rd()} << 32) ^ rd();
  char buf[64];
  std::snprintf(buf, sizeof buf, "/%.*s%d-%016llx", static_cast<int>(kPrefix.size()),
                kPrefix.data(), static_cast<int>(getpid()), static_cast<unsigned long long>(r));
  return buf;
}

bool IsShmName(const std::string& name) {
  return name.size() >= 2 && name[0] == '/' && name.substr(1, kPrefix.size()) == kPrefix &&
         name.find('/', 1) == std::string::npos && name.find('\0') == std::string::npos &&
         name.size() <= 200;
}

Result<void*> CreateShmObject(const std::string& name, size_t size) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Status::IoError(Errno("shm_open", name));
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    Status s = Status::IoError(Errno("ftruncate", name));
    close(fd);
    shm_unlink(name.c_str());
    return s;
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    shm_unlink(name.c_str());
    return Status::IoError(Errno("mmap", name));
  }
  return base;
}

Status CheckOwnerOnly(int fd, const std::string& name) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::IoError(Errno("fstat", name));
  if (st.st_uid == geteuid() && (st.st_mode & 077) == 0) return Status::Ok();
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return Status::FailedPrecondition(
      "shm object " + name + " (owner uid " + std::to_string(st.st_uid) + ", mode " + mode +
      ") is not this user's alone (uid " + std::to_string(geteuid()) + ", mode 0600): refused");
}

Result<void*> MapShmObject(const std::string& name, size_t* size) {
  if (!IsShmName(name)) {
    return Status::InvalidArgument("shm object name '" + name + "' is not a ukai-shm name");
  }
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return Status::Unavailable(Errno("shm_open", name));
  if (Status own = CheckOwnerOnly(fd, name); !own.ok()) {
    close(fd);
    return own;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return Status::IoError("shm object " + name + " is empty or cannot be inspected");
  }
  *size = static_cast<size_t>(st.st_size);
  void* base = mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return Status::IoError(Errno("mmap", name));
  return base;
}

ShmSegment::ShmSegment(std::string name, SegmentRole role, void* base, size_t map_size,
                       size_t capacity)
    : name_(std::move(name)),
      role_(role),
      base_(base),
      map_size_(map_size),
      ring_capacity_(capacity) {
  named_ = role == SegmentRole::kCreator;
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::Create(size_t ring_capacity) {
  if (!ValidRingCapacity(ring_capacity)) {
    return Status::InvalidArgument("shm ring capacity " + std::to_string(ring_capacity) +
                                   " must be a power of two in [4 KiB, 1 GiB]");
  }
  std::string name = FreshShmName();
  const size_t size = MapSize(ring_capacity);
  Result<void*> mapped = CreateShmObject(name, size);
  if (!mapped.ok()) return mapped.status();
  void* base = *mapped;
  auto* h = new (base) SegmentHeader{};
  h->magic = kSegmentMagic;
  h->version = kSegmentVersion;
  h->ring_capacity = ring_capacity;
  h->creator_pid.store(getpid(), std::memory_order_relaxed);
  h->base_address[0].store(reinterpret_cast<uintptr_t>(base), std::memory_order_relaxed);
  for (int i = 0; i < 2; ++i) {
    new (static_cast<std::byte*>(base) + kControlOffset + i * sizeof(RingControl)) RingControl{};
  }
  std::atomic_thread_fence(std::memory_order_release);
  return std::unique_ptr<ShmSegment>(
      new ShmSegment(std::move(name), SegmentRole::kCreator, base, size, ring_capacity));
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::Attach(const std::string& name,
                                                       const Mac* job_tag) {
  if (!IsShmName(name)) {
    return Status::InvalidArgument("shm segment name '" + name + "' is not a ukai-shm name");
  }
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return Status::Unavailable(Errno("shm_open", name));
  if (Status own = CheckOwnerOnly(fd, name); !own.ok()) {
    close(fd);
    return own;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < kControlPage) {
    close(fd);
    return Status::ParseError("shm segment " + name + " is too small for a header");
  }
  void* head = mmap(nullptr, kControlPage, PROT_READ, MAP_SHARED, fd, 0);
  if (head == MAP_FAILED) {
    close(fd);
    return Status::IoError(Errno("mmap", name));
  }
  const auto* h = static_cast<const SegmentHeader*>(head);
  const uint64_t magic = h->magic, capacity = h->ring_capacity;
  const uint32_t version = h->version;
  const bool tag_ok =
      job_tag == nullptr || MacEqual(*job_tag, std::span<const uint8_t>(h->job_tag, kMacBytes));
  munmap(head, kControlPage);
  if (!tag_ok) {
    close(fd);
    return Status::FailedPrecondition("shm segment " + name +
                                      " was not made by this job (job tag mismatch): refused");
  }
  if (magic != kSegmentMagic || version != kSegmentVersion || !ValidRingCapacity(capacity) ||
      static_cast<size_t>(st.st_size) != MapSize(capacity)) {
    close(fd);
    return Status::ParseError("shm segment " + name + " has a bad header (magic, version " +
                              "or ring capacity)");
  }
  void* base = mmap(nullptr, MapSize(capacity), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return Status::IoError(Errno("mmap", name));
  static_cast<SegmentHeader*>(base)->base_address[1].store(reinterpret_cast<uintptr_t>(base),
                                                           std::memory_order_relaxed);
  static_cast<SegmentHeader*>(base)->attacher_pid.store(getpid(), std::memory_order_release);
  return std::unique_ptr<ShmSegment>(
      new ShmSegment(name, SegmentRole::kAttacher, base, MapSize(capacity), capacity));
}

ShmSegment::~ShmSegment() {
  if (named_) shm_unlink(name_.c_str());
  munmap(base_, map_size_);
}

pid_t ShmSegment::peer_pid() const {
  return role_ == SegmentRole::kCreator ? header()->attacher_pid.load(std::memory_order_acquire)
                                        : header()->creator_pid.load(std::memory_order_acquire);
}

void ShmSegment::SetTag(const Mac& tag) {
  std::memcpy(header()->job_tag, tag.data(), tag.size());
  std::atomic_thread_fence(std::memory_order_release);
}

Status ShmSegment::Unlink() {
  if (!named_) return Status::Ok();
  named_ = false;
  if (shm_unlink(name_.c_str()) != 0 && errno != ENOENT) {
    return Status::IoError(Errno("shm_unlink", name_));
  }
  return Status::Ok();
}

RingControl* ShmSegment::control(int ring) const {
  auto* first = reinterpret_cast<RingControl*>(static_cast<std::byte*>(base_) + kControlOffset);
  return first + ring;
}

std::byte* ShmSegment::data(int ring) const {
  return static_cast<std::byte*>(base_) + kControlPage + ring * ring_capacity_;
}

RingProducer ShmSegment::MakeProducer() {
  const int ring = role_ == SegmentRole::kCreator ? 0 : 1;
  return RingProducer(control(ring), data(ring), ring_capacity_);
}

RingConsumer ShmSegment::MakeConsumer() {
  const int ring = role_ == SegmentRole::kCreator ? 1 : 0;
  return RingConsumer(control(ring), data(ring), ring_capacity_);
}

void ShmSegment::MarkClosed() {
  auto& flag =
      role_ == SegmentRole::kCreator ? header()->creator_closed : header()->attacher_closed;
  flag.store(1, std::memory_order_release);
}

bool ShmSegment::PeerClosed() const {
  const auto& flag =
      role_ == SegmentRole::kCreator ? header()->attacher_closed : header()->creator_closed;
  return flag.load(std::memory_order_acquire) != 0;
}

bool ShmSegment::ProbePeerMemory() {
  const pid_t peer = peer_pid();
  if (peer <= 0) return false;
  const int peer_role = role_ == SegmentRole::kCreator ? 1 : 0;
  const uint64_t addr = header()->base_address[peer_role].load(std::memory_order_relaxed);
  uint64_t magic = 0;
  iovec local{&magic, sizeof magic};
  iovec remote{reinterpret_cast<void*>(addr), sizeof magic};
  const bool ok =
      addr != 0 &&
      process_vm_readv(peer, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof magic) &&
      magic == kSegmentMagic;
  // Our consumer ring is ring 1 for the creator, ring 0 for the attacher.
  const uint32_t bit = role_ == SegmentRole::kCreator ? 2u : 1u;
  if (ok) header()->cma_readable.fetch_or(bit, std::memory_order_release);
  return ok;
}

bool ShmSegment::PeerCanReadUs() const {
  const uint32_t bit = role_ == SegmentRole::kCreator ? 1u : 2u;
  return (header()->cma_readable.load(std::memory_order_acquire) & bit) != 0;
}

std::atomic<uint64_t>& ShmSegment::CmaDoneOfOurProducer() const {
  return header()->cma_done[role_ == SegmentRole::kCreator ? 0 : 1];
}

std::atomic<uint64_t>& ShmSegment::CmaDoneOfOurConsumer() const {
  return header()->cma_done[role_ == SegmentRole::kCreator ? 1 : 0];
}

PeerWatch::PeerWatch(pid_t pid) : pid_(pid) {
#ifdef SYS_pidfd_open
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0) pidfd_ = -1;
#endif
}

PeerWatch::~PeerWatch() {
  if (pidfd_ >= 0) close(pidfd_);
}

bool PeerWatch::Alive() const {
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }
  if (!ProcessExists(pid_)) return false;
  // A zombie still answers kill(); look at its state.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid_));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  int p = 0;
  char comm[256] = {}, state = '?';
  const int n = std::fscanf(f, "%d %255s %c", &p, comm, &state);
  std::fclose(f);
  return n == 3 && state != 'Z' && state != 'X';
}

int SweepStaleSegments(pid_t only_pid) {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return 0;
  int removed = 0;
  while (dirent* e = readdir(dir)) {
    std::string_view n = e->d_name;
    if (n.substr(0, kPrefix.size()) != kPrefix) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(std::string(n.substr(kPrefix.size())).c_str()));
    if (pid <= 0) continue;
    if (only_pid > 0 ? pid != only_pid : ProcessExists(pid)) continue;
    std::string path(1, '/');
    path.append(n);
    if (shm_unlink(path.c_str()) == 0) ++removed;
  }
  closedir(dir);
  return removed;
}

}  // namespace ukai::rt::shm
