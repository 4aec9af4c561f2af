// StagedTables<T>: the routing tables of a table-driven routing function as the
// reconfiguration (engine/reconfiguration.h) updates them: the current set, the pending sets
// built by PrepareTables() (one per reconfiguration wave: competing roots and versions), and
// per node the set it routes with. Finish(set) makes one pending set current everywhere.
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
    sets_.clear();
    sets_.push_back(std::move(tables));
    at_.assign(static_cast<size_t>(nodes), sets_[0].get());
  }
  // The tables node `node` routes with.
  const T& At(int node) const { return *at_[node]; }
  const T& current() const { return *sets_[0]; }
  bool has_current() const { return !sets_.empty(); }
  // A new pending set; returns its id (> 0).
  int Prepare(std::unique_ptr<T> tables) {
    sets_.push_back(std::move(tables));
    return static_cast<int>(sets_.size()) - 1;
  }
  void Commit(int node, int set) {
    if (set > 0 && set < static_cast<int>(sets_.size())) at_[node] = sets_[set].get();
  }
  // Pending set `set` -> current everywhere; the other sets are dropped (false when `set`
  // is not a pending set).
  bool Finish(int set) {
    if (set <= 0 || set >= static_cast<int>(sets_.size())) return false;
    std::unique_ptr<T> chosen = std::move(sets_[set]);
    Reset(std::move(chosen), static_cast<int>(at_.size()));
    return true;
  }

 private:
  std::vector<std::unique_ptr<T>> sets_;  // [0]: current; then the pending sets
  std::vector<const T*> at_;              // per node: the set it routes with
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_STAGED_TABLES_H_
