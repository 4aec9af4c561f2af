// 64 MiB RSRs through every module (integration: slow under sanitizers).
#include <gtest/gtest.h>

#include <atomic>

#include "conformance_modules.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

class Large : public ::testing::TestWithParam<ConformanceModule> {};

TEST_P(Large, SixtyFourMiB) {
  if (!GetParam().multi_runtime_in_process) GTEST_SKIP();
  auto fabric = NewInprocFabric();
  auto a = Runtime::Init(ModuleOptions(GetParam().name, fabric));
  auto b = Runtime::Init(ModuleOptions(GetParam().name, fabric));
  ASSERT_TRUE(a.ok() && b.ok());
  auto ctx = (*b)->CreateContext({.name = "sink"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  constexpr size_t kBytes = 64u << 20;
  std::atomic<int> ok{0}, bad{0};
  for (auto kind : {HandlerKind::kThreaded, HandlerKind::kNonThreaded}) {
    const char* name = kind == HandlerKind::kThreaded ? "t" : "n";
    ASSERT_TRUE(ep->RegisterHandler(name, kind, [&](Rsr& m) {
                    auto v = m.reader().GetBytes();
                    bool good = v.ok() && v->size() == kBytes;
                    for (size_t i = 0; good && i < kBytes; i += 65521) {
                      good = (*v)[i] == static_cast<uint8_t>(i ^ (i >> 13));
                    }
                    ++(good ? ok : bad);
                  }).ok());
  }
  std::vector<uint8_t> data(kBytes);
  for (size_t i = 0; i < kBytes; ++i) data[i] = static_cast<uint8_t>(i ^ (i >> 13));
  for (const char* name : {"t", "n", "t"}) {
    Buffer buf(kBytes + 16);
    buf.PutBytes(data);
    ASSERT_TRUE((*a)->SendRsr(std::move(buf), ep->MakeStartpoint(), HandlerId::Of(name)).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return ok.load() + bad.load() == 3; }, std::chrono::seconds(120)));
  EXPECT_EQ(ok.load(), 3);
}

INSTANTIATE_TEST_SUITE_P(Modules, Large, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ukai::rt::testing
