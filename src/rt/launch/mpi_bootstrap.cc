#include "rt/launch/mpi_bootstrap.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "core/mpi/mpi_library.h"

namespace ukai::rt {
namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  std::string_view name() const override { return "mpi"; }

  Status Start() override {
    Result<std::unique_ptr<MpiLibrary>> lib = MpiLibrary::Load();
    if (!lib.ok()) return lib.status().WithContext("mpi bootstrap");
    lib_ = std::move(*lib);
    mpi_ = lib_.get();
    int initialized = 0;
    mpi_->Initialized(&initialized);
    int provided = MPI_THREAD_SINGLE;
    if (!initialized) {
      if (mpi_->Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        return Status::Unavailable("mpi bootstrap: MPI_Init_thread failed");
      }
      owns_mpi_ = true;
    } else {
      mpi_->Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
      return Status::Unsupported("mpi bootstrap: the MPI library provides thread level " +
                                 std::to_string(provided) + ", the runtime needs " +
                                 "MPI_THREAD_MULTIPLE");
    }
    mpi_->Comm_rank(mpi_->comm_world, &rank_);
    mpi_->Comm_size(mpi_->comm_world, &size_);
    // One host when the ranks sharing memory with us are all of them (collective).
    MPI_Comm node;
    int node_size = 0;
    if (mpi_->Comm_split_type(mpi_->comm_world, MPI_COMM_TYPE_SHARED, 0, mpi_->info_null, &node) ==
        MPI_SUCCESS) {
      mpi_->Comm_size(node, &node_size);
      mpi_->Comm_free(&node);
    }
    int all_one = node_size == size_ ? 1 : 0, one = 0;
    mpi_->Allreduce(&all_one, &one, 1, mpi_->int_type, mpi_->op_min, mpi_->comm_world);
    one_host_ = one == 1;
    return Status::Ok();
  }
  bool OneHost() const override { return one_host_; }
  // Rank 0's fresh secret, broadcast to the others (collective; MPI carries it like the
  // descriptor tables, through the launcher's own trusted channels).
  Result<JobSecret> Secret() override {
    SecretKey k{};
    if (rank_ == 0) k = JobSecret::Generate().key();
    if (mpi_->Bcast(k.data(), static_cast<int>(k.size()), mpi_->byte, 0, mpi_->comm_world) !=
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
    mpi_->Allgather(&len, 1, mpi_->int_type, lens.data(), 1, mpi_->int_type, mpi_->comm_world);
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
    mpi_->Allgatherv(bytes.data(), len, mpi_->byte, all.data(), lens.data(), displs.data(),
                     mpi_->byte, mpi_->comm_world);
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
    return mpi_->Barrier(mpi_->comm_world) == MPI_SUCCESS
               ? Status::Ok()
               : Status::Unavailable("mpi bootstrap: MPI_Barrier failed");
  }

  void Finish() override {
    if (mpi_ == nullptr) return;  // Start() failed to load MPI
    int finalized = 0;
    mpi_->Finalized(&finalized);
    if (owns_mpi_ && !finalized) mpi_->Finalize();
    owns_mpi_ = false;
  }

 private:
  std::unique_ptr<MpiLibrary> lib_;
  const MpiLibrary* mpi_ = nullptr;  // lib_, once Start() loaded it
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
