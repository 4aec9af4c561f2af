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
  // Declared first, so destroyed last: after a failed check the runtimes go before the
  // memory that transfers still in flight may write.
  Pages mem(large + page);
  std::vector<uint8_t> back(large);
  auto fabric = NewInprocFabric();
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<std::unique_ptr<Rma>> rma;
  for (int i = 0; i < 2; ++i) {
    auto rt = Runtime::Init(ModuleOptions(GetParam().name, fabric));
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rts.push_back(std::move(*rt));
    auto ctx = rts[i]->CreateContext({});
    ASSERT_TRUE(ctx.ok());
    // The test checks the data, not the speed: the sim module moves 64 MiB as 16 Ki
    // packets through the flit-level model, which took over 60 s (the default operation
    // timeout) on a loaded 2-core host; the ctest timeout (600 s) still bounds a hang.
    RmaOptions o;
    o.op_timeout_ms = 300000;
    auto r = Rma::Create(**ctx, o);
    ASSERT_TRUE(r.ok());
    rma.push_back(std::move(*r));
  }
  RemoteKey key = *RemoteKey::Parse(rma[1]->Register(mem.span())->Serialize());
  const std::vector<uint8_t> data = Pattern(large, 64);
  const Status put = rma[0]->PutSync(key, page - 1, data);
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_EQ(std::memcmp(mem.data + page - 1, data.data(), large), 0);
  const Status get = rma[0]->GetSync(key, page - 1, back);
  ASSERT_TRUE(get.ok()) << get.ToString();
  EXPECT_EQ(back, data);
  EXPECT_EQ(rma[1]->stats().boundary_rejected, 0u);
  rma.clear();
  for (auto& rt : rts) EXPECT_TRUE(rt->Finalize().ok());
}

INSTANTIATE_TEST_SUITE_P(Modules, RmaLarge, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ukai::rt::testing
