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
  if (bytes < kMinBlock || bytes > (size_t{1} << 40)) {
    return Status::InvalidArgument("shm pool of " + std::to_string(bytes) +
                                   " bytes: must be in [64 KiB, 1 TiB]");
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
  int classes = 0;
  for (size_t c = kMinBlock; c <= size_; c <<= 1) ++classes;
  free_.resize(static_cast<size_t>(classes));
  // Room for every block a class can have (capped), so that Free() does not allocate.
  for (size_t k = 0; k < free_.size(); ++k) {
    free_[k].reserve(std::min<size_t>(size_ / (kMinBlock << k), size_t{1} << 16));
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

uint8_t* ShmPool::Allocate(size_t bytes, size_t* capacity) noexcept {
  const int k = ClassOf(bytes);
  std::lock_guard<SpinMutex> lock(mu_);
  if (k < 0 || static_cast<size_t>(k) >= free_.size()) {
    ++stats_.failures;
    return nullptr;
  }
  const size_t cap = kMinBlock << k;
  uint8_t* p = nullptr;
  std::vector<uint8_t*>& list = free_[static_cast<size_t>(k)];
  if (!list.empty()) {
    p = list.back();
    list.pop_back();
  } else if (size_ - carved_ >= cap) {
    p = base_ + carved_;
    carved_ += cap;
    stats_.bytes_carved = carved_;
  } else {
    ++stats_.failures;
    return nullptr;
  }
  ++stats_.allocations;
  ++stats_.blocks_in_use;
  stats_.bytes_in_use += cap;
  *capacity = cap;
  return p;
}

void ShmPool::Free(uint8_t* data, size_t capacity) noexcept {
  const int k = ClassOf(capacity);
  std::lock_guard<SpinMutex> lock(mu_);
  free_[static_cast<size_t>(k)].push_back(data);
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
