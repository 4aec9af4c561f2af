#include "rt/core/bootstrap.h"

namespace ukai::rt {
namespace {

class SingleBootstrap final : public Bootstrap {
 public:
  std::string_view name() const override { return "single"; }
  Status Start() override { return Status::Ok(); }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Result<std::vector<DescriptorTable>> Exchange(const DescriptorTable& mine) override {
    return std::vector<DescriptorTable>{mine};
  }
  Status Barrier() override { return Status::Ok(); }
  void Finish() override {}
};

}  // namespace

std::unique_ptr<Bootstrap> NewSingleBootstrap() { return std::make_unique<SingleBootstrap>(); }

}  // namespace ukai::rt
