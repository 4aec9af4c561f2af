// The collectives' correctness matrix over inproc, small sizes (coll_matrix.h): every
// collective x algorithm x type x reduction x element count 0, 1, 7, 4097 x group size
// 1, 2, 3, 4, 5, 8, each result checked against the reference computed here.
#include "coll_matrix.h"

namespace ukai::rt {
namespace {

class CollMatrix : public ::testing::TestWithParam<int> {};

TEST_P(CollMatrix, SmallSizesEveryTypeAndOperation) {
  testing::CollWorld w(GetParam(), "inproc");
  ASSERT_TRUE(w.ok());
  testing::RunAll(w, testing::SmallCases());
}

INSTANTIATE_TEST_SUITE_P(GroupSizes, CollMatrix, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

}  // namespace
}  // namespace ukai::rt
