// ukai_coll_mpi: Open MPI's collectives timed the way ukai_coll_bench times ukai's (the
// baseline of the same run). Run under mpirun -n N. For each requested operation and size it
// times batches of calls (doubling from 1 until a batch takes >= BATCH_US = 20 us, then
// batches over the time budget) and prints one line per (operation, size) from rank 0:
//   coll OP BYTES MEDIAN_US_PER_CALL SAMPLES
// OP: barrier, allreduce (double sum; BYTES of doubles), bcast (root 0), alltoall (BYTES per
// pair), reduce (double sum to root 0), allgather (BYTES per rank). Every rank synchronises
// the start of each sample with the same barrier-free scheme ukai's bench uses: a sample is
// the time rank 0 measured for a batch; batches run back to back.
// Options: -p op:bytes,op:bytes,... -t seconds (budget per pair), -q percentile (instead of
// the median).
#include <mpi.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// As ukai_coll_bench's kBatchUs (why: there).
#define BATCH_US 20.0

static double Now(void) { return MPI_Wtime(); }

// With UKAI_COLL_BENCH_RUSAGE set, every rank prints its CPU time and context switches per
// call of each measured (op, size) on stderr (ukai_coll_bench's worker prints the same).
static void Usage(struct rusage* u) { getrusage(RUSAGE_SELF, u); }
static double CpuUs(const struct rusage* u) {
  return (u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e6 + u->ru_utime.tv_usec +
         u->ru_stime.tv_usec;
}
static void PrintUsage(const char* op, size_t bytes, int rank, long calls, double wall_us,
                       const struct rusage* a, const struct rusage* b) {
  if (getenv("UKAI_COLL_BENCH_RUSAGE") == NULL || calls == 0) return;
  fprintf(stderr, "rusage %s:%zu rank %d calls %ld wall_us %.2f cpu_us %.2f vcsw %.3f ivcsw %.3f\n",
          op, bytes, rank, calls, wall_us / calls, (CpuUs(b) - CpuUs(a)) / calls,
          (double)(b->ru_nvcsw - a->ru_nvcsw) / calls, (double)(b->ru_nivcsw - a->ru_nivcsw) / calls);
}

static int Cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static char* send_buf;
static char* recv_buf;
static int world;

static void RunOnce(const char* op, size_t bytes) {
  if (strcmp(op, "barrier") == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(op, "allreduce") == 0) {
    MPI_Allreduce(send_buf, recv_buf, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else if (strcmp(op, "reduce") == 0) {
    MPI_Reduce(send_buf, recv_buf, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (strcmp(op, "bcast") == 0) {
    MPI_Bcast(send_buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
  } else if (strcmp(op, "alltoall") == 0) {
    MPI_Alltoall(send_buf, (int)bytes, MPI_BYTE, recv_buf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
  } else if (strcmp(op, "allgather") == 0) {
    MPI_Allgather(send_buf, (int)bytes, MPI_BYTE, recv_buf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
  }
}

// Every rank runs the same number of batches: rank 0 decides and broadcasts (outside timing).
static void Measure(const char* op, size_t bytes, double seconds, int rank, int percentile) {
  int batch = 1;
  for (;;) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = Now();
    for (int i = 0; i < batch; ++i) RunOnce(op, bytes);
    double us = (Now() - t0) * 1e6;
    int more = us < BATCH_US && batch < (1 << 16);
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!more) break;
    batch *= 2;
  }
  int cap = 100000;
  double* samples = malloc(sizeof(double) * (size_t)cap);
  int n = 0;
  double start = Now();
  MPI_Barrier(MPI_COMM_WORLD);
  struct rusage u0, u1;
  Usage(&u0);
  double w0 = Now();
  for (;;) {
    double t0 = Now();
    for (int i = 0; i < batch; ++i) RunOnce(op, bytes);
    double t = Now();
    if (n < cap) samples[n++] = (t - t0) * 1e6 / batch;
    int more = (t - start < seconds || n < 5) && n < cap;
    // Rank 0's clock decides; the decision travels piggy-backed once per sample.
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!more) break;
  }
  Usage(&u1);
  PrintUsage(op, bytes, rank, (long)n * batch, (Now() - w0) * 1e6, &u0, &u1);
  if (rank == 0) {
    qsort(samples, (size_t)n, sizeof(double), Cmp);
    double med = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    if (percentile != 50) med = samples[(long)n * percentile / 100 < n ? (long)n * percentile / 100 : n - 1];
    printf("coll %s %zu %.4f %d\n", op, bytes, med, n);
    fflush(stdout);
  }
  free(samples);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  char pairs[1024] = "barrier:8,allreduce:8";
  double seconds = 0.25;
  int percentile = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-p") == 0) snprintf(pairs, sizeof pairs, "%s", argv[i + 1]);
    if (strcmp(argv[i], "-t") == 0) seconds = atof(argv[i + 1]);
    if (strcmp(argv[i], "-q") == 0) percentile = atoi(argv[i + 1]);
  }
  size_t max = 8;
  for (char* p = strchr(pairs, ':'); p != NULL; p = strchr(p + 1, ':')) {
    size_t s = strtoul(p + 1, NULL, 10);
    if (s > max) max = s;
  }
  send_buf = calloc(max * (size_t)world, 1);
  recv_buf = calloc(max * (size_t)world, 1);
  char* save = NULL;
  for (char* pair = strtok_r(pairs, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
    char* colon = strchr(pair, ':');
    if (colon == NULL) continue;
    *colon = '\0';
    Measure(pair, strtoul(colon + 1, NULL, 10), seconds, rank, percentile);
  }
  free(send_buf);
  free(recv_buf);
  MPI_Finalize();
  return 0;
}
