// StagedTables<T>: the routing tables of a table-driven routing function as the
// reconfiguration (engine/reconfiguration.h) updates them: the current set, a pending set
// built by PrepareTables(), and per node whether it already routes with the pending one.
// Finish() makes the pending set current everywhere.
//
// Thread safety: At() only reads; the other methods run between cycles.
#ifndef UKAI_SIM_ROUTING_STAGED_TABLES_H_
#define UKAI_SIM_ROUTING_STAGED_TABLES_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace ukai::sim {

template <typename T>
class StagedTables {
 public:
  void Reset(std::unique_ptr<T> tables, int nodes) {
    cur_ = std::move(tables);
    next_.reset();
    use_next_.assign(static_cast<size_t>(nodes), 0);
  }
  // The tables node `node` routes with.
  const T& At(int node) const { return use_next_[node] ? *next_ : *cur_; }
  const T& current() const { return *cur_; }
  bool has_current() const { return cur_ != nullptr; }
  void Prepare(std::unique_ptr<T> tables) { next_ = std::move(tables); }
  bool prepared() const { return next_ != nullptr; }
  void Commit(int node) {
    if (next_) use_next_[node] = 1;
  }
  // Pending -> current everywhere (false when nothing was prepared).
  bool Finish() {
    if (!next_) return false;
    Reset(std::move(next_), static_cast<int>(use_next_.size()));
    return true;
  }

 private:
  std::unique_ptr<T> cur_, next_;
  std::vector<uint8_t> use_next_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_STAGED_TABLES_H_
