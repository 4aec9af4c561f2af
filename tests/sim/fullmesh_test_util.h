// Helpers shared by the full-mesh tests.
#ifndef UKAI_TESTS_SIM_FULLMESH_TEST_UTIL_H_
#define UKAI_TESTS_SIM_FULLMESH_TEST_UTIL_H_

#include <cstdint>

#include "sim/fullmesh/fullmesh_types.h"

namespace ukai::sim::fullmesh {

inline Operation Op(OpType t, int root, int dest, int64_t bytes, int comm = 0, double at = 0) {
  Operation op;
  op.type = t;
  op.root = root;
  op.dest = dest;
  op.bytes = bytes;
  op.comm = comm;
  op.at_us = at;
  return op;
}

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_TESTS_SIM_FULLMESH_TEST_UTIL_H_
