#include "rt/launch/mpi_bootstrap.h"

// The C API only (Open MPI's deprecated C++ bindings need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace ukai::rt {
namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  std::string_view name() const override { return "mpi"; }

  Status Start() override {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = MPI_THREAD_SINGLE;
    if (!initialized) {
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        return Status::Unavailable("mpi bootstrap: MPI_Init_thread failed");
      }
      owns_mpi_ = true;
    } else {
      MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
      return Status::Unsupported("mpi bootstrap: the MPI library provides thread level " +
                                 std::to_string(provided) + ", the runtime needs " +
                                 "MPI_THREAD_MULTIPLE");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // One host when the ranks sharing memory with us are all of them (collective).
    MPI_Comm node;
    int node_size = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
      MPI_Comm_size(node, &node_size);
      MPI_Comm_free(&node);
    }
    int all_one = node_size == size_ ? 1 : 0, one = 0;
    MPI_Allreduce(&all_one, &one, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    one_host_ = one == 1;
    return Status::Ok();
  }
  bool OneHost() const override { return one_host_; }
  // Rank 0's fresh secret, broadcast to the others (collective; MPI carries it like the
  // descriptor tables, through the launcher's own trusted channels).
  Result<JobSecret> Secret() override {
    SecretKey k{};
    if (rank_ == 0) k = JobSecret::Generate().key();
    if (MPI_Bcast(k.data(), static_cast<int>(k.size()), MPI_BYTE, 0, MPI_COMM_WORLD) !=
        MPI_SUCCESS) {
      return Status::Unavailable("mpi bootstrap: MPI_Bcast of the job secret failed");
    }
    return JobSecret::FromKey(k);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Result<std::vector<DescriptorTable>> Exchange(const DescriptorTable& mine) override {
    std::vector<uint8_t> bytes;
    mine.EncodeTo(&bytes);
    int len = static_cast<int>(bytes.size());
    std::vector<int> lens(size_), displs(size_);
    MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      if (lens[r] < 0 || lens[r] > (1 << 20)) {
        return Status::ParseError("mpi bootstrap: rank " + std::to_string(r) +
                                  " announced a table of " + std::to_string(lens[r]) + " bytes");
      }
      displs[r] = total;
      total += lens[r];
    }
    std::vector<uint8_t> all(static_cast<size_t>(total));
    MPI_Allgatherv(bytes.data(), len, MPI_BYTE, all.data(), lens.data(), displs.data(), MPI_BYTE,
                   MPI_COMM_WORLD);
    std::vector<DescriptorTable> out;
    for (int r = 0; r < size_; ++r) {
      size_t used = 0;
      Result<DescriptorTable> t = DescriptorTable::Decode(
          std::span<const uint8_t>(all.data() + displs[r], static_cast<size_t>(lens[r])), &used);
      if (!t.ok())
        return t.status().WithContext("mpi bootstrap: table of rank " + std::to_string(r));
      out.push_back(std::move(*t));
    }
    return out;
  }

  Status Barrier() override {
    return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS
               ? Status::Ok()
               : Status::Unavailable("mpi bootstrap: MPI_Barrier failed");
  }

  void Finish() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_mpi_ && !finalized) MPI_Finalize();
    owns_mpi_ = false;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool one_host_ = true;
  bool owns_mpi_ = false;
};

}  // namespace

bool DetectMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

std::unique_ptr<Bootstrap> NewMpiBootstrap() { return std::make_unique<MpiBootstrap>(); }

}  // namespace ukai::rt
