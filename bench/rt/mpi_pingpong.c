/* Open MPI baseline for ukai_rt_bench: ping-pong latency and windowed streaming bandwidth
 * between ranks 0 and 1 with MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv.
 *
 * Run by ukai_rt_bench under mpirun (2 ranks). Rank 0 prints one line per figure:
 *   lat <bytes> <median one-way latency in us> <iterations>
 *   bw <bytes> <bandwidth in GB/s (1e9 B/s)> <messages>
 * One-way latency is half the round trip, median over `iters` round trips each timed on its
 * own. Bandwidth: rank 0 posts `window` MPI_Isend, rank 1 `window` MPI_Irecv, both wait, rank 1
 * acknowledges with a 1-byte message; repeated; the median over the windows of the bytes of
 * a window divided by its time (send of the first message to the ack).
 *
 * Options: -s size,size,...  (default 8,64,512,4096,32768,262144,1048576)
 *          -t seconds budget per size and test (default 0.5), -w window (default 64),
 *          -m 1: initialise with MPI_Init_thread(MPI_THREAD_MULTIPLE), the thread level the
 *          ukai mpi module runs at (default 0: MPI_Init),
 *          -f 1: fresh buffers: every message sent is first packed (memcpy) into a buffer
 *          malloc'ed for it and freed once its send completed, as a ukai sender packs a new
 *          Buffer per RSR (default 0: every send and receive uses one reused buffer, which
 *          stays in the cache). The allocator keeps freed memory (M_MMAP_THRESHOLD 32 MiB,
 *          M_TRIM_THRESHOLD 1 GiB, as the ukai workers set it), so no page is faulted in
 *          per message. */
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxSizes = 32, kMaxWindow = 256 };

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int CompareDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* MPI_Send of `size` bytes of `buf`; `fresh` (-f 1): from a packed copy in a new buffer. */
static void Send(const char* buf, int size, int peer, int tag, int fresh) {
  if (!fresh) {
    MPI_Send(buf, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    return;
  }
  char* packed = malloc((size_t)size);
  memcpy(packed, buf, (size_t)size);
  MPI_Send(packed, size, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
  free(packed);
}

/* Round trips with rank 1; returns the median one-way latency in us (rank 0 only). */
static double Latency(int rank, char* buf, int size, double budget, int fresh, int* iters_out) {
  const int peer = 1 - rank;
  /* Warm up with a fixed count on both ranks, timed on rank 0, and size the run from it. */
  enum { kWarmup = 200 };
  int iters = 0;
  double t0 = Now();
  for (int i = 0; i < kWarmup; ++i) {
    if (rank == 0) {
      Send(buf, size, peer, 1, fresh);
      MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      Send(buf, size, peer, 1, fresh);
    }
  }
  if (rank == 0) {
    double per = (Now() - t0) / kWarmup;
    iters = (int)(budget / per);
    if (iters < 20) iters = 20;
    if (iters > 200000) iters = 200000;
  }
  MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
  double* samples = malloc(sizeof(double) * (size_t)iters);
  for (int i = 0; i < iters; ++i) {
    double s = Now();
    if (rank == 0) {
      Send(buf, size, peer, 2, fresh);
      MPI_Recv(buf, size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      Send(buf, size, peer, 2, fresh);
    }
    samples[i] = Now() - s;
  }
  qsort(samples, (size_t)iters, sizeof(double), CompareDouble);
  double median = samples[iters / 2] / 2 * 1e6;
  free(samples);
  *iters_out = iters;
  return median;
}

/* Windows of `window` messages, each closed by a 1-byte ack; returns the median over the
 * windows of (window * size) / (window time) in GB/s, robust against the other jobs of a
 * shared machine preempting one of the two processes now and then. */
static double Bandwidth(int rank, char* buf, int size, int window, double budget, int fresh,
                        int* msgs) {
  const int peer = 1 - rank;
  MPI_Request req[kMaxWindow];
  char* packed[kMaxWindow] = {0};
  char ack = 0;
  int rounds = 0, stop = 0, cap = 1024;
  double* rates = malloc(sizeof(double) * (size_t)cap);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = Now();
  while (!stop) {
    double w0 = Now();
    for (int w = 0; w < window; ++w) {
      if (rank == 0) {
        const char* from = buf;
        if (fresh) {
          packed[w] = malloc((size_t)size);
          memcpy(packed[w], buf, (size_t)size);
          from = packed[w];
        }
        MPI_Isend(from, size, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[w]);
      } else {
        MPI_Irecv(buf, size, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &req[w]);
      }
    }
    MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
    for (int w = 0; w < window && fresh && rank == 0; ++w) free(packed[w]);
    /* The ack carries rank 0's stop decision back to rank 1 through a second message. */
    if (rank == 1) {
      MPI_Send(&ack, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
      MPI_Recv(&stop, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&ack, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rounds == cap) {
        cap *= 2;
        rates = realloc(rates, sizeof(double) * (size_t)cap);
      }
      rates[rounds] = (double)size * window / (Now() - w0) / 1e9;
      stop = Now() - t0 > budget && rounds >= 4;
      MPI_Send(&stop, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
    }
    ++rounds;
  }
  *msgs = rounds * window;
  double median = 0;
  if (rank == 0) {
    qsort(rates, (size_t)rounds, sizeof(double), CompareDouble);
    median = rates[rounds / 2];
  }
  free(rates);
  return median;
}

int main(int argc, char** argv) {
  int multiple = 0, fresh = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-m") == 0) multiple = atoi(argv[i + 1]);
    if (strcmp(argv[i], "-f") == 0) fresh = atoi(argv[i + 1]);
  }
  if (fresh) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  if (multiple) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
      fprintf(stderr, "mpi_pingpong: MPI_THREAD_MULTIPLE not provided\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int sizes[kMaxSizes] = {8, 64, 512, 4096, 32768, 262144, 1048576};
  int nsizes = 7, window = 64;
  double budget = 0.5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-s") == 0) {
      nsizes = 0;
      for (char* tok = strtok(argv[i + 1], ","); tok && nsizes < kMaxSizes; tok = strtok(NULL, ","))
        sizes[nsizes++] = atoi(tok);
    } else if (strcmp(argv[i], "-t") == 0) {
      budget = atof(argv[i + 1]);
    } else if (strcmp(argv[i], "-w") == 0) {
      window = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "-m") == 0 || strcmp(argv[i], "-f") == 0) {
      /* read above */
    } else {
      if (rank == 0) fprintf(stderr, "mpi_pingpong: unknown option %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (nranks != 2 || window < 1 || window > kMaxWindow || budget <= 0) {
    if (rank == 0)
      fprintf(stderr, "mpi_pingpong: needs 2 ranks, 1 <= window <= %d, -t > 0\n", kMaxWindow);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int max_size = 0;
  for (int i = 0; i < nsizes; ++i) {
    if (sizes[i] < 1) {
      if (rank == 0) fprintf(stderr, "mpi_pingpong: size must be >= 1\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (sizes[i] > max_size) max_size = sizes[i];
  }
  char* buf = malloc((size_t)max_size);
  memset(buf, 7, (size_t)max_size);
  for (int i = 0; i < nsizes; ++i) {
    int iters = 0;
    double lat = Latency(rank, buf, sizes[i], budget, fresh, &iters);
    if (rank == 0) printf("lat %d %.4f %d\n", sizes[i], lat, iters);
    fflush(stdout);
  }
  for (int i = 0; i < nsizes; ++i) {
    int msgs = 0;
    double bw = Bandwidth(rank, buf, sizes[i], window, budget, fresh, &msgs);
    if (rank == 0) printf("bw %d %.4f %d\n", sizes[i], bw, msgs);
    fflush(stdout);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
