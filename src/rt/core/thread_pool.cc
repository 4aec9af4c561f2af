#include "rt/core/thread_pool.h"

#include <algorithm>
#include <memory>

namespace ukai::rt::internal {
namespace {

thread_local ThreadPool* tls_pool = nullptr;
thread_local int tls_wait_depth = 0;  // nested WaitScopes on this thread

}  // namespace

ThreadPool::ThreadPool(int threads, int max_threads)
    : base_(threads), limit_(std::max(threads, max_threads)) {
  std::unique_lock<std::mutex> lock(mu_);
  try {
    for (int i = 0; i < threads; ++i) {
      Worker& w = workers_.emplace_back();
      ++live_;
      w.thread = std::thread([this, &w] { Loop(&w, /*extra=*/false); });
    }
    peak_ = live_;
  } catch (...) {  // the system refused a thread: join the started ones, then report
    workers_.pop_back();
    --live_;
    lock.unlock();
    Stop();
    throw;
  }
}

ThreadPool* ThreadPool::Current() { return tls_pool; }

void ThreadPool::GrowIfStarved() {
  // Join extra threads that ended (they returned already: the join does not wait).
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();
    it = workers_.erase(it);
  }
  if (stopping_ || queue_.empty() || idle_ > 0 || blocked_ < live_ || live_ >= limit_) return;
  Worker& w = workers_.emplace_back();
  try {
    w.thread = std::thread([this, &w] { Loop(&w, /*extra=*/true); });
  } catch (...) {  // out of threads: the waiting threads help instead (HelpWhileWaiting)
    workers_.pop_back();
    limit_ = live_;
    return;
  }
  ++live_;
  peak_ = std::max(peak_, live_);
}

void ThreadPool::Submit(std::unique_ptr<Task> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
    GrowIfStarved();
  }
  cv_.notify_one();
}

void ThreadPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (;;) {
    std::list<Worker> workers;
    {
      std::lock_guard<std::mutex> lock(mu_);
      workers.swap(workers_);
    }
    if (workers.empty()) return;
    for (Worker& w : workers) w.thread.join();
  }
}

void ThreadPool::Loop(Worker* self, bool extra) {
  tls_pool = this;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    bool timed_out = false;
    if (extra) {
      timed_out = !cv_.wait_for(lock, kExtraIdle, [this] { return stopping_ || !queue_.empty(); });
    } else {
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    }
    --idle_;
    if (queue_.empty() && (stopping_ || (timed_out && live_ > base_))) break;
    if (queue_.empty()) continue;
    std::unique_ptr<Task> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task->Run();
    lock.lock();
  }
  --live_;
  self->done = true;  // joined by GrowIfStarved or Stop
  tls_pool = nullptr;
}

bool ThreadPool::HelpWhileWaiting() {
  std::unique_ptr<Task> task;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty() || idle_ > 0 || live_ < limit_) return false;
    task = std::move(queue_.front());
    queue_.pop_front();
    // While it runs the task this thread is not blocked in its wait; a wait inside the
    // task counts afresh.
    --blocked_;
  }
  const int depth = tls_wait_depth;
  tls_wait_depth = 0;
  task->Run();
  tls_wait_depth = depth;
  std::lock_guard<std::mutex> lock(mu_);
  ++blocked_;
  return true;
}

void ThreadPool::EnterWait() {
  std::lock_guard<std::mutex> lock(mu_);
  ++blocked_;
  GrowIfStarved();
}

void ThreadPool::LeaveWait() {
  std::lock_guard<std::mutex> lock(mu_);
  --blocked_;
}

int ThreadPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

int ThreadPool::peak_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

WaitScope::WaitScope() {
  if (tls_pool == nullptr || tls_wait_depth++ > 0) return;
  pool_ = tls_pool;
  pool_->EnterWait();
}

WaitScope::~WaitScope() {
  if (tls_pool == nullptr) return;
  if (--tls_wait_depth > 0 || pool_ == nullptr) return;
  pool_->LeaveWait();
}

}  // namespace ukai::rt::internal
