// The MPI RankGroup (rank_group.h): Open MPI point-to-point messages on a duplicate of
// MPI_COMM_WORLD. An exchange sends one message to every other rank (MPI_Isend) and takes
// one from each (MPI_Mprobe + MPI_Mrecv, sizes vary).
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "core/mpi/mpi_library.h"
#include "sim/engine/rank_group.h"

namespace ukai::sim {
namespace {

constexpr int kTag = 0x51a2;

// mpirun sends SIGTERM to the other ranks when one ends abnormally: say so before going.
char g_term_message[160];  // written once before the handler is installed

extern "C" void OnTerm(int sig) {
  const ssize_t n = write(STDERR_FILENO, g_term_message, std::strlen(g_term_message));
  (void)n;
  signal(sig, SIG_DFL);
  raise(sig);
}

class MpiRankGroup final : public RankGroup {
 public:
  MpiRankGroup(std::unique_ptr<MpiLibrary> lib, bool owns) : lib_(std::move(lib)), owns_(owns) {
    mpi_->Comm_dup(mpi_->comm_world, &comm_);
    mpi_->Comm_set_errhandler(comm_, mpi_->errors_return);
    mpi_->Comm_rank(comm_, &rank_);
    mpi_->Comm_size(comm_, &size_);
    std::snprintf(g_term_message, sizeof(g_term_message),
                  "ukai sim: rank %d: stopped by mpirun (another rank of the job ended or was "
                  "killed; see mpirun's message)\n",
                  rank_);
    signal(SIGTERM, OnTerm);
  }
  ~MpiRankGroup() override {
    mpi_->Comm_free(&comm_);
    int finalized = 0;
    mpi_->Finalized(&finalized);
    if (owns_ && !finalized) mpi_->Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status Exchange(const std::vector<std::vector<uint8_t>>& out,
                  std::vector<std::vector<uint8_t>>* in) override {
    in->resize(static_cast<size_t>(size_));
    requests_.clear();
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const std::vector<uint8_t>& b = out[static_cast<size_t>(r)];
      MPI_Request req;
      if (mpi_->Isend(b.data(), static_cast<int>(b.size()), mpi_->byte, r, kTag, comm_, &req) !=
          MPI_SUCCESS) {
        return Status::Unavailable("MPI_Isend to rank " + std::to_string(r) + " failed");
      }
      requests_.push_back(req);
    }
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      MPI_Message msg;
      MPI_Status st;
      if (mpi_->Mprobe(r, kTag, comm_, &msg, &st) != MPI_SUCCESS) {
        return Status::Unavailable("MPI_Mprobe from rank " + std::to_string(r) + " failed");
      }
      int count = 0;
      mpi_->Get_count(&st, mpi_->byte, &count);
      std::vector<uint8_t>& b = (*in)[static_cast<size_t>(r)];
      b.resize(static_cast<size_t>(count));
      if (mpi_->Mrecv(b.data(), count, mpi_->byte, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        return Status::Unavailable("MPI_Mrecv from rank " + std::to_string(r) + " failed");
      }
    }
    if (mpi_->Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE) !=
        MPI_SUCCESS) {
      return Status::Unavailable("MPI_Waitall failed");
    }
    return Status::Ok();
  }

  [[noreturn]] void Abort(const std::string& why) override {
    std::fprintf(stderr, "ukai sim: rank %d: %s\n", rank_, why.c_str());
    std::fflush(stderr);
    signal(SIGTERM, SIG_DFL);
    mpi_->Abort(mpi_->comm_world, 1);
    std::_Exit(1);
  }

 private:
  std::unique_ptr<MpiLibrary> lib_;
  const MpiLibrary* mpi_ = lib_.get();
  bool owns_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<RankGroup> NewMpiRankGroup(Status* status) {
  Result<std::unique_ptr<MpiLibrary>> lib = MpiLibrary::Load();
  if (!lib.ok()) {
    *status = lib.status();
    return nullptr;
  }
  const MpiLibrary* mpi_ = lib->get();
  int initialized = 0;
  mpi_->Initialized(&initialized);
  bool owns = false;
  if (!initialized) {
    int provided = 0;
    if (mpi_->Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      *status = Status::Unavailable("MPI_Init_thread failed");
      return nullptr;
    }
    owns = true;
  }
  *status = Status::Ok();
  return std::make_unique<MpiRankGroup>(std::move(*lib), owns);
}

}  // namespace ukai::sim
