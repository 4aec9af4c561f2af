// The collectives' correctness matrix over inproc at 1 MiB of data (coll_matrix.h): every
// collective x algorithm x group size 1, 2, 3, 4, 5, 8 with a type of each element size and
// an operation of each kernel family. Integration (release build only): it moves about 1 GB.
#include "coll_matrix.h"

namespace ukai::rt {
namespace {

class CollMatrixLarge : public ::testing::TestWithParam<int> {};

TEST_P(CollMatrixLarge, OneMebibyte) {
  testing::CollWorld w(GetParam(), "inproc");
  ASSERT_TRUE(w.ok());
  testing::RunAll(w, testing::LargeCases());
}

INSTANTIATE_TEST_SUITE_P(GroupSizes, CollMatrixLarge, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

}  // namespace
}  // namespace ukai::rt
