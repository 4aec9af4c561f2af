// What the MPI ranks of one Network exchange every cycle (rank_exchange.cc implements the
// Network methods that use it; network.h, "Parallel simulation").
//
// Every cycle, after evaluation and before commit, each rank sends every other rank one
// message: a header with its counters, its deliveries of the cycle (in node order) and its
// undeliverable tags, and — to the ranks holding the far end of a boundary channel — the
// flits that cross it (with the message record when the flit is a head: the receiving
// rank allocates its own copy, and maps the message's later flits on that input VC to it)
// and the credits that go back. A tail that crosses releases the sender's copy; a head
// marks it forwarded (the copy downstream is the live one). Every rank then knows the
// whole network's deliveries and counters, so the run control decides alike everywhere.
//
// The encoding is the ranks' own memory layout (one binary on every rank of a job).
// Thread safety: used by the thread driving the Network only.
#ifndef UKAI_SIM_ENGINE_RANK_EXCHANGE_H_
#define UKAI_SIM_ENGINE_RANK_EXCHANGE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace ukai::sim {

// Appends and reads plain values of the exchange messages.
class WireWriter {
 public:
  explicit WireWriter(std::vector<uint8_t>* out) : out_(out) {}
  template <typename T>
  void Put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t at = out_->size();
    out_->resize(at + sizeof(T));
    std::memcpy(out_->data() + at, &v, sizeof(T));
  }
  template <typename T>
  void PutAll(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    Put<int64_t>(static_cast<int64_t>(v.size()));
    if (v.empty()) return;
    const size_t at = out_->size();
    out_->resize(at + v.size() * sizeof(T));
    std::memcpy(out_->data() + at, v.data(), v.size() * sizeof(T));
  }

 private:
  std::vector<uint8_t>* out_;
};

class WireReader {
 public:
  WireReader(const std::vector<uint8_t>& in, int from) : in_(in), from_(from) {}
  template <typename T>
  T Get() {
    T v{};
    if (pos_ + sizeof(T) > in_.size()) {
      bad_ = true;
      return v;
    }
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  template <typename T>
  void GetAll(std::vector<T>* v) {
    const int64_t n = Get<int64_t>();
    if (n < 0 || static_cast<size_t>(n) > (in_.size() - pos_) / sizeof(T)) {
      bad_ = true;
      return;
    }
    v->resize(static_cast<size_t>(n));
    if (n > 0) std::memcpy(v->data(), in_.data() + pos_, static_cast<size_t>(n) * sizeof(T));
    pos_ += static_cast<size_t>(n) * sizeof(T);
  }
  bool bad() const { return bad_; }
  int from() const { return from_; }

 private:
  const std::vector<uint8_t>& in_;
  int from_;
  size_t pos_ = 0;
  bool bad_ = false;
};

// A flit crossing to another rank: written into input VC `dst` at ring slot `slot`.
struct WireFlit {
  int32_t dst;
  int32_t slot;
  uint32_t arrival;
  uint32_t word;
};

// Per-Network state of the exchange.
struct RankState {
  std::vector<std::vector<uint8_t>> out, in;
  // The local message each boundary input VC's current worm maps to (set by its head).
  std::unordered_map<int32_t, int32_t> arriving;
  // Messages of this rank whose last flit left this cycle (released after encoding).
  std::vector<std::pair<int32_t, int>> release;  // (message, lane)
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_RANK_EXCHANGE_H_
