// Helpers of the RMA tests: page-aligned zeroed memory and a seeded byte pattern.
#ifndef UKAI_TESTS_RT_RMA_TEST_UTIL_H_
#define UKAI_TESTS_RT_RMA_TEST_UTIL_H_

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <vector>

namespace ukai::rt::testing {

// Page-aligned zeroed memory.
struct Pages {
  explicit Pages(size_t bytes) : size(bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    data = static_cast<uint8_t*>(std::aligned_alloc(page, (bytes + page - 1) / page * page));
    std::memset(data, 0, bytes);
  }
  ~Pages() { std::free(data); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  std::span<uint8_t> span() { return {data, size}; }
  uint8_t* data;
  size_t size;
};

inline std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_RMA_TEST_UTIL_H_
