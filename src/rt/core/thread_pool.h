// The pool of threads that run threaded RSR handlers (tasks may block).
//
// Handlers that cannot starve: a handler may wait in the runtime (a nested Request's Wait,
// a SendRsr waiting for room, Barrier, an RMA fence). Such waits announce themselves with a
// WaitScope. When a task is queued and every thread of the pool is blocked in such a wait
// (none idle), the pool starts another thread, up to `max_threads`; threads beyond the
// initial ones end after kExtraIdle without work. At `max_threads`, a waiting thread runs
// queued tasks itself (HelpWhileWaiting) instead of sleeping, so nested requests deeper than
// the pool still complete.
//
// Thread safety: Submit may be called from any thread; Stop from one thread, once; the
// WaitScope and HelpWhileWaiting calls from the pool's own threads (they do nothing on
// other threads).
#ifndef UKAI_RT_CORE_THREAD_POOL_H_
#define UKAI_RT_CORE_THREAD_POOL_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

namespace ukai::rt::internal {

// A move-only unit of work (std::function needs copyable callables).
class Task {
 public:
  virtual ~Task() = default;
  virtual void Run() = 0;
};

class ThreadPool {
 public:
  static constexpr std::chrono::milliseconds kExtraIdle{1000};

  // Starts `threads` threads (growing up to `max_threads` >= threads, see above); throws
  // std::system_error (after joining the ones started) when the system refuses one.
  ThreadPool(int threads, int max_threads);
  ~ThreadPool() { Stop(); }
  // Queues `task`; tasks start in submission order.
  void Submit(std::unique_ptr<Task> task);
  // Runs the queued tasks to completion, then joins the threads.
  void Stop();

  // The pool whose thread this is, or null.
  static ThreadPool* Current();
  // On a pool thread blocked in a wait at the pool's limit: runs one queued task and
  // returns true; false when there is none or the pool can still grow (then just wait).
  bool HelpWhileWaiting();

  // Live threads and the most there were at once (for tests and traces).
  int threads() const;
  int peak_threads() const;

 private:
  friend class WaitScope;
  struct Worker {
    std::thread thread;
    bool done = false;
  };
  void Loop(Worker* self, bool extra);
  // Under mu_: starts a thread when tasks wait and every thread is blocked in a wait.
  void GrowIfStarved();
  void EnterWait();
  void LeaveWait();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Task>> queue_;
  bool stopping_ = false;
  const int base_;
  int limit_;        // max_threads, lowered to the live count when the system refuses one
  int live_ = 0;     // threads running Loop
  int idle_ = 0;     // of them waiting for a task
  int blocked_ = 0;  // of them blocked in a runtime wait (WaitScope)
  int peak_ = 0;
  std::list<Worker> workers_;  // stable addresses; finished extra ones are joined lazily
};

// Marks the calling pool thread as blocked in a runtime wait for the scope (no effect on
// other threads). Nested scopes count once.
class WaitScope {
 public:
  WaitScope();
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;
  // The pool of the calling thread while it waits (null off the pool or when nested).
  ThreadPool* pool() const { return pool_; }

 private:
  ThreadPool* pool_ = nullptr;
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_CORE_THREAD_POOL_H_
