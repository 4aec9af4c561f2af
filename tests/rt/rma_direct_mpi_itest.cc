// The direct path of RMA over the mpi module under mpirun (2 ranks of this host): each rank
// allocates a segment with Rma::Allocate and sends its key in an RSR; rank 0 puts and gets
// rank 1's segment in mapped memory (direct_accesses counted, no packet sent); both ranks
// fetch-add word 0 of both segments while adding to their own locally (exact totals); a
// revoked key is refused through the software path with nothing written.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "mpi_run.h"
#include "rma_mpi_util.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

#if UKAI_HAVE_MPI

TEST(MpiRmaDirectWorker, MappedAccessAtomicsAndRevocation) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiRmaDirect";
  testing::RmaRank rank;
  ASSERT_TRUE(rank.Init().ok());
  Runtime& r = *rank.rt;
  ASSERT_EQ(r.size(), 2);
  Rma& a = *rank.rma;
  const size_t size = (size_t{1} << 20) + 3;
  Result<RmaSegment> seg = a.Allocate(size);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  ASSERT_TRUE(r.Barrier().ok());
  Result<RemoteKey> key = rank.SwapKeys(seg->key);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  if (r.rank() == 0) {
    uint32_t n = 0;
    for (size_t len : {size_t{0}, size_t{1}, size_t{4095}, size_t{4097}, size}) {
      std::vector<uint8_t> data(len), back(len);
      for (size_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(i * 13 + len);
      const size_t off = len == size ? 0 : 4095;
      ASSERT_TRUE(a.PutSync(*key, off, data).ok()) << len;
      ASSERT_TRUE(a.GetSync(*key, off, back).ok()) << len;
      ASSERT_EQ(back, data) << len;
      n += 2;
    }
    EXPECT_EQ(a.stats().direct_accesses, n);
    EXPECT_EQ(a.stats().packets_sent, 0u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  std::atomic_ref<uint64_t> mine(*reinterpret_cast<uint64_t*>(seg->memory.data()));
  mine.store(0);
  ASSERT_TRUE(r.Barrier().ok());
  const uint64_t before = a.stats().direct_accesses;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(a.FetchOp(*key, 0, AtomicOpcode::kAdd, 1).ok());
    mine.fetch_add(1);
  }
  ASSERT_TRUE(r.Barrier().ok());
  EXPECT_EQ(mine.load(), 4000u);
  EXPECT_EQ(a.stats().direct_accesses - before, 2000u);
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) a.ChangeAccessId();
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) {
    std::vector<uint8_t> data(100, 0xAB);
    Status s = a.PutSync(*key, 8, data);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
    EXPECT_EQ(a.stats().direct_fallbacks, 1u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(a.stats().access_rejected, 1u);
    EXPECT_NE(seg->memory[8], 0xAB);
  }
  ASSERT_TRUE(r.Barrier().ok());
  rank.rma.reset();
  EXPECT_TRUE(r.Finalize().ok());
}

TEST(MpiRmaDirect, DirectPathBetweenRanksOfOneHost) {
  testing::RunUnderMpirun(2, "MpiRmaDirectWorker.MappedAccessAtomicsAndRevocation");
}

#else

TEST(MpiRmaDirect, NotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
