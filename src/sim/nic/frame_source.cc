#include "sim/nic/frame_source.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "wire/crc32.h"

namespace ukai::sim {

std::vector<uint8_t> BuildFrame(Mac dst, Mac src, uint64_t seq, int bytes, bool fcs) {
  std::vector<uint8_t> f(static_cast<size_t>(std::max(bytes, 22)));
  WriteMac(dst, f.data());
  WriteMac(src, f.data() + 6);
  f[12] = kExperimentalEtherType >> 8;
  f[13] = kExperimentalEtherType & 0xFF;
  for (int i = 0; i < 8; ++i) f[14 + i] = static_cast<uint8_t>(seq >> (56 - 8 * i));
  for (size_t i = 22; i < f.size(); ++i) f[i] = static_cast<uint8_t>(i * 31 + seq);
  if (fcs) wire::AppendFcs(&f);
  return f;
}

namespace {

class SyntheticSource final : public FrameSource {
 public:
  SyntheticSource(std::vector<Mac> dst, int64_t count, double rate, int bytes, double bad,
                  uint64_t seed)
      : dst_(std::move(dst)),
        count_(count),
        rate_(rate),
        bytes_(bytes),
        bad_(bad),
        rng_(Rng::Stream(seed, uint64_t{1} << 41)) {}

  Result<bool> Next(IngressFrame* out) override {
    if (made_ >= count_ || dst_.empty()) return false;
    const double gap = -std::log(1.0 - rng_.NextDouble()) / rate_;
    cycle_ += static_cast<int64_t>(std::ceil(gap));
    const Mac dst = dst_[rng_.NextU64() % dst_.size()];
    const Mac src = kExternalMacBase | (rng_.NextU64() & 0xFFFF);
    out->cycle = cycle_;
    out->has_fcs = true;
    out->bytes = BuildFrame(dst, src, static_cast<uint64_t>(made_), bytes_, true);
    if (rng_.NextDouble() < bad_) out->bytes.back() ^= 0xFF;
    ++made_;
    return true;
  }

 private:
  std::vector<Mac> dst_;
  int64_t count_, made_ = 0, cycle_ = 0;
  double rate_;
  int bytes_;
  double bad_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<FrameSource> MakeSyntheticSource(std::vector<Mac> dst_macs, int64_t count,
                                                 double rate, int bytes, double bad_fcs,
                                                 uint64_t seed) {
  return std::make_unique<SyntheticSource>(std::move(dst_macs), count, rate, bytes, bad_fcs, seed);
}

}  // namespace ukai::sim
