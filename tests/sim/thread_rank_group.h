// ThreadRanks: the ranks of an MPI job played by threads of one process, for unit tests of
// the rank exchange (engine/rank_group.h, rank_exchange.cc) without mpirun. Each member is
// a RankGroup; Exchange() is collective over the members as MPI's is over the ranks: every
// member posts its outgoing messages into a shared table, waits for the others, takes what
// was addressed to it, and waits again before the table may be reused.
//
// Ownership: ThreadRanks owns its members; it outlives every Network that uses them.
// Thread safety: member(r) is used by one thread (rank r's); the table is guarded by the
// barriers.
#ifndef UKAI_TESTS_SIM_THREAD_RANK_GROUP_H_
#define UKAI_TESTS_SIM_THREAD_RANK_GROUP_H_

#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/rank_group.h"

namespace ukai::sim::testing {

class ThreadRanks {
 public:
  explicit ThreadRanks(int size)
      : size_(size), table_(static_cast<size_t>(size) * static_cast<size_t>(size)), barrier_(size) {
    for (int r = 0; r < size; ++r) members_.push_back(std::make_unique<Member>(this, r));
  }
  RankGroup* member(int r) { return members_[static_cast<size_t>(r)].get(); }
  int64_t exchanges() const { return members_[0]->exchanges; }

 private:
  class Member final : public RankGroup {
   public:
    Member(ThreadRanks* group, int rank) : group_(group), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return group_->size_; }
    Status Exchange(const std::vector<std::vector<uint8_t>>& out,
                    std::vector<std::vector<uint8_t>>* in) override {
      const int n = group_->size_;
      for (int r = 0; r < n; ++r) {
        if (r != rank_) group_->Slot(rank_, r) = out[static_cast<size_t>(r)];
      }
      group_->barrier_.arrive_and_wait();
      in->assign(static_cast<size_t>(n), {});
      for (int r = 0; r < n; ++r) {
        if (r != rank_) (*in)[static_cast<size_t>(r)] = group_->Slot(r, rank_);
      }
      group_->barrier_.arrive_and_wait();
      ++exchanges;
      return Status::Ok();
    }
    [[noreturn]] void Abort(const std::string& why) override {
      std::fprintf(stderr, "ThreadRanks: rank %d aborts the test: %s\n", rank_, why.c_str());
      std::abort();
    }
    int64_t exchanges = 0;

   private:
    ThreadRanks* group_;
    int rank_;
  };

  std::vector<uint8_t>& Slot(int from, int to) {
    return table_[static_cast<size_t>(from) * static_cast<size_t>(size_) + static_cast<size_t>(to)];
  }

  int size_;
  std::vector<std::vector<uint8_t>> table_;  // [from * size + to]
  std::barrier<> barrier_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_THREAD_RANK_GROUP_H_
