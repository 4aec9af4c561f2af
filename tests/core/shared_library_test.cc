// SharedLibrary (core/shared_library.h): a library missing at run time and a symbol missing
// from it are errors naming them, not a crash on a null function pointer.
#include "core/shared_library.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>

namespace ukai {
namespace {

TEST(SharedLibraryTest, MissingLibraryIsAnErrorNamingIt) {
  auto so = SharedLibrary::Open("libukai_no_such_library.so.9", RTLD_NOW | RTLD_LOCAL, "nothing");
  ASSERT_FALSE(so.ok());
  EXPECT_EQ(so.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(so.status().message().find("cannot load nothing (libukai_no_such_library.so.9): "),
            std::string::npos)
      << so.status().ToString();
}

TEST(SharedLibraryTest, BindsFunctionsAndNamesTheMissingOnes) {
  auto so = SharedLibrary::Open("libm.so.6", RTLD_NOW | RTLD_LOCAL, "libm");
  ASSERT_TRUE(so.ok()) << so.status().ToString();
  double (*cosine)(double) = nullptr;
  (*so)->Bind(&cosine, "cos");
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  EXPECT_TRUE((*so)->Missing().ok());
  void (*absent)() = nullptr;
  (*so)->Bind(&absent, "ukai_absent_one");
  (*so)->Bind(&absent, "ukai_absent_two");
  EXPECT_EQ(absent, nullptr);
  const Status st = (*so)->Missing();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), "libm (libm.so.6) lacks ukai_absent_one, ukai_absent_two");
}

}  // namespace
}  // namespace ukai
