/* Open MPI one-sided baseline of ukai_rma_bench: 2 ranks; rank 0 accesses rank 1's window in
 * one passive-target epoch (MPI_Win_lock shared ... MPI_Win_unlock), each operation completed
 * by MPI_Win_flush. Prints "name value" lines:
 *   put_lat_us / get_lat_us / fop_lat_us: 8-byte MPI_Put, MPI_Get, MPI_Fetch_and_op (MPI_SUM,
 *     uint64) each followed by a flush, median per operation;
 *   fop_rate_mops: 64 MPI_Fetch_and_op per flush, operations per microsecond;
 *   put_bw_gbs / get_bw_gbs: 1 MiB MPI_Put / MPI_Get + flush, 1e9 bytes per second.
 * With -d the window is a dynamic one (MPI_Win_create_dynamic + MPI_Win_attach of malloc'd
 * memory, the target's address sent to rank 0), the kind a library registering user memory
 * needs, instead of MPI_Win_allocate.
 * Usage: ukai_rma_mpi_onesided [-t seconds-per-test] [-d] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define kLarge (1 << 20)

static double budget = 0.25;
static MPI_Aint target_base = 0; /* displacement of the target memory (dynamic: its address) */

static int CompareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* One call: `op` (1 = put, 2 = get, 3 = fop, 4 = fop x64, 5 = big put, 6 = big get), then
 * MPI_Win_flush. */
static void Call(int op, MPI_Win win, char* local) {
  uint64_t one = 1, result[64];
  switch (op) {
    case 1:
      MPI_Put(local, 8, MPI_BYTE, 1, target_base, 8, MPI_BYTE, win);
      break;
    case 2:
      MPI_Get(local, 8, MPI_BYTE, 1, target_base, 8, MPI_BYTE, win);
      break;
    case 3:
      MPI_Fetch_and_op(&one, result, MPI_UINT64_T, 1, target_base, MPI_SUM, win);
      break;
    case 4:
      for (int i = 0; i < 64; ++i) {
        MPI_Fetch_and_op(&one, &result[i], MPI_UINT64_T, 1, target_base, MPI_SUM, win);
      }
      break;
    case 5:
      MPI_Put(local, kLarge, MPI_BYTE, 1, target_base + 64, kLarge, MPI_BYTE, win);
      break;
    default:
      MPI_Get(local, kLarge, MPI_BYTE, 1, target_base + 64, kLarge, MPI_BYTE, win);
      break;
  }
  MPI_Win_flush(1, win);
}

/* Runs Call(op) for the time budget and returns the median microseconds per call, as
 * ukai_rma_bench measures its own: each sample times a batch of calls, doubled from 1 until a
 * batch takes at least 2 us, so that reading the clock is not counted in a call of a few
 * nanoseconds. */
static double Run(int op, MPI_Win win, char* local) {
  static double samples[1 << 20];
  long n = 0, batch = 1;
  for (;;) {
    double fastest = 1e30; /* of three tries, as ukai_rma_bench */
    for (int attempt = 0; attempt < 3; ++attempt) {
      const double t0 = MPI_Wtime();
      for (long i = 0; i < batch; ++i) Call(op, win, local);
      const double us = (MPI_Wtime() - t0) * 1e6;
      if (us < fastest) fastest = us;
    }
    if (fastest >= 2.0 || batch >= (1 << 16)) break;
    batch *= 2;
  }
  const double start = MPI_Wtime();
  double now = start;
  while ((now - start < budget || n < 5) && n < (1 << 20)) {
    for (long i = 0; i < batch; ++i) Call(op, win, local);
    const double t = MPI_Wtime();
    samples[n++] = (t - now) * 1e6 / (double)batch;
    now = t;
  }
  qsort(samples, (size_t)n, sizeof samples[0], CompareDoubles);
  return samples[n / 2];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int dynamic = 0;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "-t") == 0) budget = atof(argv[i + 1]);
    if (strcmp(argv[i], "-d") == 0) dynamic = 1;
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "ukai_rma_mpi_onesided: needs 2 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* base = NULL;
  MPI_Win win;
  if (dynamic) {
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    base = malloc(kLarge + 64);
    MPI_Win_attach(win, base, kLarge + 64);
    MPI_Get_address(base, &target_base);
    MPI_Bcast(&target_base, 1, MPI_AINT, 1, MPI_COMM_WORLD);
  } else {
    MPI_Win_allocate(kLarge + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  }
  memset(base, 0, kLarge + 64);
  char* local = malloc(kLarge);
  memset(local, 1, kLarge);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    printf("put_lat_us %.4f\n", Run(1, win, local));
    printf("get_lat_us %.4f\n", Run(2, win, local));
    printf("fop_lat_us %.4f\n", Run(3, win, local));
    printf("fop_rate_mops %.4f\n", 64.0 / Run(4, win, local));
    printf("put_bw_gbs %.4f\n", kLarge / Run(5, win, local) / 1e3);
    printf("get_bw_gbs %.4f\n", kLarge / Run(6, win, local) / 1e3);
    MPI_Win_unlock(1, win);
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (dynamic) MPI_Win_detach(win, base);
  MPI_Win_free(&win);
  if (dynamic) free(base);
  free(local);
  MPI_Finalize();
  return 0;
}
