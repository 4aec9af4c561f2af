// RMA over the mpi module under mpirun (2 ranks): keys exchanged in an RSR; rank 0 puts and
// gets rank 1's memory at boundary sizes and offsets up to 64 MiB; both ranks increment words
// of each other's memory concurrently (exact totals); a revoked key is refused with nothing
// written. The in-process modules are covered by rma_test.cc.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
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

TEST(MpiRmaWorker, PutGetAtomicsAndRevocation) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiRmaTest";
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t kLarge = size_t{64} << 20;
  testing::RmaRank rank;
  // The packet path throughout (the MPI one-sided path: rma_onesided_mpi_itest.cc).
  ASSERT_TRUE(rank.Init({.mpi_onesided_min_bytes = 0}).ok());
  Runtime& r = *rank.rt;
  ASSERT_EQ(r.size(), 2);
  std::unique_ptr<Rma>* rma = &rank.rma;  // (*rma)->, as with Rma::Create's Result
  uint8_t* mem = static_cast<uint8_t*>(std::aligned_alloc(page, kLarge + 2 * page));
  std::memset(mem, 0, kLarge + 2 * page);
  RemoteKey mine = *(*rma)->Register({mem, kLarge + 2 * page});
  ASSERT_TRUE(r.Barrier().ok());
  Result<RemoteKey> key = rank.SwapKeys(mine);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  if (r.rank() == 0) {
    uint32_t seed = 1;
    for (size_t size : {size_t{0}, size_t{1}, page - 1, page, page + 1, size_t{8192}, kLarge}) {
      for (size_t off : {size_t{0}, size_t{1}, page - 1}) {
        if (size == kLarge && off != page - 1) continue;
        std::vector<uint8_t> data(size), back(size);
        for (auto& b : data) b = static_cast<uint8_t>(seed * 7 + (&b - data.data()) * 13);
        ++seed;
        ASSERT_TRUE((*rma)->PutSync(*key, off, data).ok()) << size << " @" << off;
        ASSERT_TRUE((*rma)->GetSync(*key, off, back).ok()) << size << " @" << off;
        ASSERT_EQ(back, data) << size << " @" << off;
      }
    }
  }
  ASSERT_TRUE(r.Barrier().ok());
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(mem)).store(0);
  ASSERT_TRUE(r.Barrier().ok());
  // Both ranks increment word 0 of both segments (their own through the network too).
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE((*rma)->FetchOp(*key, 0, AtomicOpcode::kAdd, 1).ok());
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(mem)).fetch_add(1);
  }
  ASSERT_TRUE(r.Barrier().ok());
  EXPECT_EQ(std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(mem)).load(), 1000u);
  ASSERT_TRUE(r.Barrier().ok());
  // Revocation: rank 1 changes its access ID; rank 0's old key is refused, nothing written.
  if (r.rank() == 1) (*rma)->ChangeAccessId();
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) {
    std::vector<uint8_t> data(3 * page, 0xAB);
    Status s = (*rma)->PutSync(*key, page, data);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ((*rma)->stats().access_rejected, 3u);  // three packets, all refused
    EXPECT_NE(mem[page], 0xAB);
  }
  ASSERT_TRUE(r.Barrier().ok());
  rma->reset();
  EXPECT_TRUE(r.Finalize().ok());
  std::free(mem);
}

TEST(MpiRmaTest, RmaOverTheMpiModule) {
  testing::RunUnderMpirun(2, "MpiRmaWorker.PutGetAtomicsAndRevocation");
}

#else

TEST(MpiRmaTest, NotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
