// MpiLibrary (core/mpi/mpi_library.h): Open MPI loaded on demand. Loading binds every
// function and predefined handle (a wrong symbol name fails here, not under mpirun); the
// functions answer before MPI_Init; a second load shares the library.
#include <gtest/gtest.h>

#if UKAI_HAVE_MPI
#include "core/mpi/mpi_library.h"

namespace ukai {
namespace {

TEST(MpiLibraryTest, LoadsEveryFunctionAndHandle) {
  Result<std::unique_ptr<MpiLibrary>> lib = MpiLibrary::Load();
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  const MpiLibrary& mpi = **lib;
  int initialized = -1, finalized = -1;
  EXPECT_EQ(mpi.Initialized(&initialized), MPI_SUCCESS);
  EXPECT_EQ(initialized, 0);
  EXPECT_EQ(mpi.Finalized(&finalized), MPI_SUCCESS);
  EXPECT_EQ(finalized, 0);
  for (const void* h :
       {static_cast<const void*>(mpi.comm_world), static_cast<const void*>(mpi.comm_null),
        static_cast<const void*>(mpi.byte), static_cast<const void*>(mpi.int_type),
        static_cast<const void*>(mpi.op_min), static_cast<const void*>(mpi.errors_return),
        static_cast<const void*>(mpi.info_null), static_cast<const void*>(mpi.request_null),
        static_cast<const void*>(mpi.win_null)}) {
    EXPECT_NE(h, nullptr);
  }
  EXPECT_NE(static_cast<const void*>(mpi.comm_world), static_cast<const void*>(mpi.comm_null));
  Result<std::unique_ptr<MpiLibrary>> again = MpiLibrary::Load();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->comm_world, mpi.comm_world);
  EXPECT_EQ((*again)->Isend, mpi.Isend);
}

}  // namespace
}  // namespace ukai
#endif  // UKAI_HAVE_MPI
