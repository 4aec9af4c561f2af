// 64 MiB RMA put and get per module (the unit suite, rma_test.cc, stops at 1 MiB): two
// runtimes of this process, the transfer starting one byte before a page end.
#include <gtest/gtest.h>

#include <cstring>

#include "conformance_modules.h"
#include "rma_test_util.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

class RmaLarge : public ::testing::TestWithParam<ConformanceModule> {};

TEST_P(RmaLarge, PutAndGet64MiB) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), large = size_t{64} << 20;
  auto fabric = NewInprocFabric();
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<std::unique_ptr<Rma>> rma;
  for (int i = 0; i < 2; ++i) {
    auto rt = Runtime::Init(ModuleOptions(GetParam().name, fabric));
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rts.push_back(std::move(*rt));
    auto ctx = rts[i]->CreateContext({});
    ASSERT_TRUE(ctx.ok());
    auto r = Rma::Create(**ctx);
    ASSERT_TRUE(r.ok());
    rma.push_back(std::move(*r));
  }
  Pages mem(large + page);
  RemoteKey key = *RemoteKey::Parse(rma[1]->Register(mem.span())->Serialize());
  const std::vector<uint8_t> data = Pattern(large, 64);
  ASSERT_TRUE(rma[0]->PutSync(key, page - 1, data).ok());
  EXPECT_EQ(std::memcmp(mem.data + page - 1, data.data(), large), 0);
  std::vector<uint8_t> back(large);
  ASSERT_TRUE(rma[0]->GetSync(key, page - 1, back).ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(rma[1]->stats().boundary_rejected, 0u);
  rma.clear();
  for (auto& rt : rts) EXPECT_TRUE(rt->Finalize().ok());
}

INSTANTIATE_TEST_SUITE_P(Modules, RmaLarge, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ukai::rt::testing
