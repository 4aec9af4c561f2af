// A fixed pool of threads that run threaded RSR handlers (tasks may block).
//
// Thread safety: Submit may be called from any thread; Stop from one thread, once.
#ifndef UKAI_RT_CORE_THREAD_POOL_H_
#define UKAI_RT_CORE_THREAD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ukai::rt::internal {

// A move-only unit of work (std::function needs copyable callables).
class Task {
 public:
  virtual ~Task() = default;
  virtual void Run() = 0;
};

class ThreadPool {
 public:
  // Starts `threads` threads; throws std::system_error (after joining the ones started)
  // when the system refuses one.
  explicit ThreadPool(int threads);
  ~ThreadPool() { Stop(); }
  // Queues `task`; tasks start in submission order.
  void Submit(std::unique_ptr<Task> task);
  // Runs the queued tasks to completion, then joins the threads.
  void Stop();

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_CORE_THREAD_POOL_H_
