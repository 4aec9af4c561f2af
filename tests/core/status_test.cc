#include "core/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace ukai {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status Chain(int x) {
  UKAI_RETURN_IF_ERROR(Half(x).status());
  return Status::Ok();
}

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Status::NotFound("routing 'foo'");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not found: routing 'foo'");
  EXPECT_EQ(s.WithContext("config").message(), "config: routing 'foo'");
}

// A config error carries its key as a field; context keeps it, the message is unchanged.
TEST(StatusTest, KeyIsAFieldThatContextKeeps) {
  EXPECT_EQ(Status::InvalidArgument("x").key(), "");
  Status s = Status::InvalidArgument("router.vcs: must be >= 1").WithKey("router.vcs");
  EXPECT_EQ(s.key(), "router.vcs");
  EXPECT_EQ(s.message(), "router.vcs: must be >= 1");
  EXPECT_EQ(s.WithContext("point 1").key(), "router.vcs");
  EXPECT_EQ(Status::Ok().WithKey("router.vcs").key(), "");
}

TEST(ResultTest, ValueAndError) {
  Result<int> a = Half(8);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 4);
  Result<int> b = Half(3);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.status().message(), "odd: 3");
}

// Move-only values come out of an rvalue Result: `*Make()` and `std::move(r).value()`.
TEST(ResultTest, RvalueAccessMovesTheValueOut) {
  auto make = [] { return Result<std::unique_ptr<int>>(std::make_unique<int>(7)); };
  std::unique_ptr<int> a = *make();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(*a, 7);
  Result<std::unique_ptr<int>> r = make();
  std::unique_ptr<int> b = *std::move(r);
  EXPECT_EQ(*b, 7);
  Result<std::unique_ptr<int>> r2 = make();
  std::unique_ptr<int> c = std::move(r2).value();
  EXPECT_EQ(*c, 7);
  EXPECT_THROW((void)*Result<std::unique_ptr<int>>(Status::NotFound("x")), BadResultAccess);
}

TEST(ResultTest, ReturnIfErrorPropagates) {
  EXPECT_TRUE(Chain(2).ok());
  EXPECT_EQ(Chain(5).message(), "odd: 5");
}

// Reading the value of an error is checked in every build (not only under assert): it
// throws BadResultAccess carrying the error, through value(), * and ->.
TEST(ResultTest, ValueOfAnErrorThrowsInEveryBuild) {
  Result<int> b = Half(3);
  try {
    (void)b.value();
    FAIL() << "value() of an error did not throw";
  } catch (const BadResultAccess& e) {
    EXPECT_EQ(e.status().message(), "odd: 3");
    EXPECT_EQ(std::string(e.what()), "Result::value() on an error: invalid argument: odd: 3");
  }
  EXPECT_THROW((void)*b, BadResultAccess);
  Result<std::string> s = Status::NotFound("key");
  EXPECT_THROW((void)s->size(), BadResultAccess);
  EXPECT_THROW((void)std::move(s).value(), BadResultAccess);
  const Result<int>& cb = b;
  EXPECT_THROW((void)cb.value(), BadResultAccess);
}

TEST(ResultTest, BuiltFromOkStatusIsAnInternalError) {
  Result<int> r{Status::Ok()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_THROW((void)*r, BadResultAccess);
}

}  // namespace
}  // namespace ukai
