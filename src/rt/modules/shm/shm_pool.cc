#include "rt/modules/shm/shm_pool.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

namespace ukai::rt::shm {
namespace {

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

constexpr int kPoolSeals = F_SEAL_SHRINK | F_SEAL_GROW;

}  // namespace

Result<ShmPool*> ShmPool::Create(size_t bytes) {
  if (bytes < kMinBlock || bytes > kMaxBytes) {
    return Status::InvalidArgument("shm pool of " + std::to_string(bytes) +
                                   " bytes: must be in [64 KiB, 64 GiB]");
  }
  bytes = (bytes + kMinBlock - 1) & ~(kMinBlock - 1);
  const int fd = memfd_create("ukai-shm-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Status::IoError(Errno("shm pool: memfd_create"));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    Status s = Status::IoError(Errno("shm pool: ftruncate"));
    close(fd);
    return s;
  }
  // Peers map the pool: its size must never change under them (a shrunk file would turn
  // their reads into SIGBUS), and PeerPool::Map checks these seals.
  if (fcntl(fd, F_ADD_SEALS, kPoolSeals | F_SEAL_SEAL) != 0) {
    Status s = Status::IoError(Errno("shm pool: F_ADD_SEALS"));
    close(fd);
    return s;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    Status s = Status::IoError(Errno("shm pool: mmap"));
    close(fd);
    return s;
  }
  return new ShmPool(fd, static_cast<uint8_t*>(base), bytes);
}

ShmPool::ShmPool(int fd, uint8_t* base, size_t size) : fd_(fd), base_(base), size_(size) {
  const size_t units = size_ / kMinBlock;
  int classes = 0;
  while ((size_t{1} << classes) <= units) ++classes;
  head_.assign(static_cast<size_t>(classes), -1);
  free_class_.assign(units, -1);
  next_.assign(units, -1);
  prev_.assign(units, -1);
  touched_.assign(units, false);
  // The area as the largest aligned power-of-two blocks that fit, each free.
  for (size_t u = 0; u < units;) {
    int k = classes - 1;
    while ((u & ((size_t{1} << k) - 1)) != 0 || u + (size_t{1} << k) > units) --k;
    Push(static_cast<int32_t>(u), k);
    u += size_t{1} << k;
  }
}

ShmPool::~ShmPool() {
  munmap(base_, size_);
  close(fd_);
}

int ShmPool::ClassOf(size_t bytes) {
  int k = 0;
  for (size_t c = kMinBlock; c < bytes; c <<= 1) {
    if (c > (size_t{1} << 40)) return -1;
    ++k;
  }
  return k;
}

void ShmPool::Push(int32_t u, int k) {
  const auto ui = static_cast<size_t>(u);
  const auto ki = static_cast<size_t>(k);
  free_class_[ui] = static_cast<int8_t>(k);
  prev_[ui] = -1;
  next_[ui] = head_[ki];
  if (head_[ki] >= 0) prev_[static_cast<size_t>(head_[ki])] = u;
  head_[ki] = u;
}

void ShmPool::Unlink(int32_t u) {
  const auto ui = static_cast<size_t>(u);
  const int32_t p = prev_[ui], n = next_[ui];
  if (p >= 0) {
    next_[static_cast<size_t>(p)] = n;
  } else {
    head_[static_cast<size_t>(free_class_[ui])] = n;
  }
  if (n >= 0) prev_[static_cast<size_t>(n)] = p;
  free_class_[ui] = -1;
}

int32_t ShmPool::Take(int k) {
  for (int j = k; j < static_cast<int>(head_.size()); ++j) {
    const int32_t u = head_[static_cast<size_t>(j)];
    if (u < 0) continue;
    Unlink(u);
    while (j > k) {  // split: the upper halves stay free
      --j;
      Push(u + (int32_t{1} << j), j);
    }
    return u;
  }
  return -1;
}

void ShmPool::Coalesce() {
  const size_t units = free_class_.size();
  for (size_t k = 0; k + 1 < head_.size(); ++k) {
    const size_t half = size_t{1} << k;
    for (size_t u = 0; u + 2 * half <= units; u += 2 * half) {
      if (free_class_[u] == static_cast<int8_t>(k) &&
          free_class_[u + half] == static_cast<int8_t>(k)) {
        Unlink(static_cast<int32_t>(u));
        Unlink(static_cast<int32_t>(u + half));
        Push(static_cast<int32_t>(u), static_cast<int>(k) + 1);
      }
    }
  }
}

uint8_t* ShmPool::Allocate(size_t bytes, size_t* capacity) noexcept {
  const int k = ClassOf(bytes);
  std::lock_guard<SpinMutex> lock(mu_);
  int32_t u = k >= 0 && static_cast<size_t>(k) < head_.size() ? Take(k) : -1;
  if (u < 0 && k >= 0 && static_cast<size_t>(k) < head_.size()) {
    Coalesce();  // merge free buddies only when needed: reuse keeps the warm blocks
    u = Take(k);
  }
  if (u < 0) {
    ++stats_.failures;
    return nullptr;
  }
  const size_t first = static_cast<size_t>(u), count = size_t{1} << k;
  for (size_t i = first; i < first + count; ++i) {
    if (!touched_[i]) {
      touched_[i] = true;
      stats_.bytes_touched += kMinBlock;
    }
  }
  const size_t cap = kMinBlock << k;
  ++stats_.allocations;
  ++stats_.blocks_in_use;
  stats_.bytes_in_use += cap;
  *capacity = cap;
  return base_ + first * kMinBlock;
}

void ShmPool::Free(uint8_t* data, size_t capacity) noexcept {
  const int k = ClassOf(capacity);
  std::lock_guard<SpinMutex> lock(mu_);
  Push(static_cast<int32_t>(static_cast<size_t>(data - base_) / kMinBlock), k);
  --stats_.blocks_in_use;
  stats_.bytes_in_use -= capacity;
}

ShmPool::Stats ShmPool::stats() const {
  std::lock_guard<SpinMutex> lock(mu_);
  return stats_;
}

Result<std::unique_ptr<PeerPool>> PeerPool::Map(int fd) {
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & kPoolSeals) != kPoolSeals) {
    return Status::InvalidArgument("shm peer pool: the memfd is not sealed against resizing");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::IoError(Errno("shm peer pool: fstat"));
  if (st.st_size <= 0) return Status::InvalidArgument("shm peer pool: empty");
  const size_t size = static_cast<size_t>(st.st_size);
  void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Status::IoError(Errno("shm peer pool: mmap"));
  return std::unique_ptr<PeerPool>(new PeerPool(static_cast<const uint8_t*>(base), size));
}

PeerPool::~PeerPool() { munmap(const_cast<uint8_t*>(base_), size_); }

}  // namespace ukai::rt::shm
