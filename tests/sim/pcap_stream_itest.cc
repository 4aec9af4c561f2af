// The pcap reader streams: reading a capture of 48 MiB raises the process's peak resident
// memory by less than the 8 MiB limit this test sets (one frame is held at a time).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <vector>

#include "scratch_path.h"
#include "sim/nic/pcap_io.h"

namespace ukai::sim {
namespace {

int64_t PeakRssBytes() {
  struct rusage u = {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

TEST(PcapStreamTest, MemoryStaysFlatWhateverTheCaptureSize) {
  const std::string path = testing_util::ScratchPath("big.pcap");
  constexpr int64_t kFrames = 33000;  // x (1514 + 4 + 16 header) bytes = 48 MiB
  std::vector<Mac> macs = {0x020000000001ULL};
  ASSERT_TRUE(WriteSyntheticPcap(path, macs, kFrames, 1514, 0.01, true, 0, 1e9, 3).ok());
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  const int64_t file_bytes = std::ftell(f);
  std::fclose(f);
  constexpr int64_t kLimit = 8 << 20;
  ASSERT_GT(file_bytes, 6 * kLimit);
  const int64_t before = PeakRssBytes();
  Result<std::unique_ptr<FrameSource>> src = OpenPcapSource(path, 1e9, true);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  IngressFrame frame;
  int64_t frames = 0, bytes = 0;
  while ((*src)->Next(&frame).value()) {
    ++frames;
    bytes += static_cast<int64_t>(frame.bytes.size());
  }
  EXPECT_EQ(frames, kFrames);
  EXPECT_EQ(bytes, kFrames * 1518);
  EXPECT_LT(PeakRssBytes() - before, kLimit) << "the reader keeps frames in memory";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ukai::sim
