#include "rt/core/thread_pool.h"

#include <memory>

namespace ukai::rt::internal {

ThreadPool::ThreadPool(int threads) {
  try {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  } catch (...) {  // the system refused a thread: join the started ones, then report
    Stop();
    throw;
  }
}

void ThreadPool::Submit(std::unique_ptr<Task> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void ThreadPool::Loop() {
  for (;;) {
    std::unique_ptr<Task> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task->Run();
  }
}

}  // namespace ukai::rt::internal
