// SpinMutex: a test-and-test-and-set lock for short critical sections on hot paths (a
// module's send side): one atomic exchange to lock and a plain release store to unlock,
// where std::mutex costs two locked instructions. Waiters spin briefly, then yield, so a
// holder that blocks (rare set-up paths) does not starve them of the CPU for long.
// Meets the Lockable requirements (std::lock_guard, std::unique_lock with try_to_lock).
// Thread safety: that is its purpose; not recursive.
#ifndef UKAI_RT_CORE_SPIN_MUTEX_H_
#define UKAI_RT_CORE_SPIN_MUTEX_H_

#include <atomic>
#include <thread>

namespace ukai::rt {

class SpinMutex {
 public:
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void lock() {
    for (int i = 0; !try_lock(); ++i) {
      if (i < 128) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_SPIN_MUTEX_H_
