// A small OTF2 archive writer for tests (libotf2's writer API): ranks with one CPU-thread
// location each (location r, in location group r), optional extra threads of a rank
// (AddThread: location (k << 32) | r in the rank's group, as the runtime's recorder writes its
// contexts), the MPI locations group, MPI_COMM_WORLD and extra communicators, RMA windows,
// MPI regions, and each location's events written through its OTF2_EvtWriter (Events(i):
// i < ranks is rank i's main location, then the threads in the order added). Close() writes
// the definitions and returns the anchor file's path.
#ifndef UKAI_TESTS_SIM_WORKLOAD_OTF2_WRITER_H_
#define UKAI_TESTS_SIM_WORKLOAD_OTF2_WRITER_H_

#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ukai::testing {

class Otf2TestArchive {
 public:
  // Regions written by every archive.
  static constexpr OTF2_RegionRef kMpiSend = 0, kMpiRecv = 1, kMpiWait = 2, kMpiAllreduce = 3,
                                  kCompute = 4;
  static constexpr OTF2_CommRef kWorld = 0;

  // `dir` is created (and emptied); ticks are nanoseconds unless `resolution` says.
  Otf2TestArchive(const std::string& dir, int ranks, uint64_t resolution = 1000000000)
      : dir_(dir), ranks_(ranks), resolution_(resolution) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    archive_ = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    flush_.otf2_pre_flush = [](void*, OTF2_FileType, OTF2_LocationRef, void*,
                               bool) -> OTF2_FlushType { return OTF2_FLUSH; };
    flush_.otf2_post_flush = [](void*, OTF2_FileType, OTF2_LocationRef) -> OTF2_TimeStamp {
      return 0;
    };
    OTF2_Archive_SetFlushCallbacks(archive_, &flush_, nullptr);
    OTF2_Archive_SetSerialCollectiveCallbacks(archive_);
    OTF2_Archive_OpenEvtFiles(archive_);
    for (int r = 0; r < ranks; ++r) {
      writers_.push_back(OTF2_Archive_GetEvtWriter(archive_, static_cast<OTF2_LocationRef>(r)));
    }
    std::vector<int> all;
    for (int r = 0; r < ranks; ++r) all.push_back(r);
    AddComm("MPI_COMM_WORLD", all);
  }
  ~Otf2TestArchive() {
    if (archive_ != nullptr) Close();
  }

  OTF2_EvtWriter* Events(int location) { return writers_[static_cast<size_t>(location)]; }

  // One more thread of `rank`; returns its index for Events().
  int AddThread(int rank) {
    const uint64_t ref =
        (static_cast<uint64_t>(++threads_of_[rank]) << 32) | static_cast<uint64_t>(rank);
    threads_.push_back({ref, rank});
    writers_.push_back(OTF2_Archive_GetEvtWriter(archive_, ref));
    return static_cast<int>(writers_.size() - 1);
  }

  // A communicator of the world ranks `members` (comm rank = index); returns its ref.
  OTF2_CommRef AddComm(const std::string& name, const std::vector<int>& members) {
    comms_.push_back({name, members});
    return static_cast<OTF2_CommRef>(comms_.size() - 1);
  }
  // A communicator of type MPI_COMM_SELF (each rank alone).
  OTF2_CommRef AddSelfComm(const std::string& name) {
    comms_.push_back({name, {}, true});
    return static_cast<OTF2_CommRef>(comms_.size() - 1);
  }
  OTF2_RmaWinRef AddWindow(OTF2_CommRef comm) {
    windows_.push_back(comm);
    return static_cast<OTF2_RmaWinRef>(windows_.size() - 1);
  }
  // Leave out the MPI locations group (an archive not written by an MPI measurement).
  void WithoutMpiGroup() { mpi_group_ = false; }

  // Writes the definitions; returns the anchor file.
  std::string Close() {
    for (OTF2_EvtWriter* w : writers_) OTF2_Archive_CloseEvtWriter(archive_, w);
    OTF2_Archive_CloseEvtFiles(archive_);
    OTF2_Archive_OpenDefFiles(archive_);
    for (uint64_t ref : AllLocations()) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive_, ref);
      OTF2_Archive_CloseDefWriter(archive_, d);
    }
    OTF2_Archive_CloseDefFiles(archive_);
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
    OTF2_GlobalDefWriter_WriteClockProperties(g, resolution_, 0, 1, 0);
    uint32_t s = 0;
    auto str = [&](const std::string& text) {
      OTF2_GlobalDefWriter_WriteString(g, s, text.c_str());
      return s++;
    };
    const char* regions[] = {"MPI_Send", "MPI_Recv", "MPI_Wait", "MPI_Allreduce", "compute"};
    for (uint32_t i = 0; i < 5; ++i) {
      const uint32_t name = str(regions[i]);
      OTF2_GlobalDefWriter_WriteRegion(g, i, name, name, name, OTF2_REGION_ROLE_FUNCTION,
                                       i < 4 ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER,
                                       OTF2_REGION_FLAG_NONE, name, 0, 0);
    }
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("machine"), str("machine"),
                                             OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (int r = 0; r < ranks_; ++r) {
      const uint32_t name = str("MPI Rank " + std::to_string(r));
      OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<uint64_t>(r), name,
                                              OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                              OTF2_UNDEFINED_LOCATION_GROUP);
      OTF2_GlobalDefWriter_WriteLocation(g, static_cast<uint64_t>(r), str("Master thread"),
                                         OTF2_LOCATION_TYPE_CPU_THREAD, 0,
                                         static_cast<uint64_t>(r));
    }
    for (const Thread& t : threads_) {
      OTF2_GlobalDefWriter_WriteLocation(g, t.ref, str("thread " + std::to_string(t.ref >> 32)),
                                         OTF2_LOCATION_TYPE_CPU_THREAD, 0,
                                         static_cast<uint64_t>(t.rank));
    }
    std::vector<uint64_t> locations;
    for (int r = 0; r < ranks_; ++r) locations.push_back(static_cast<uint64_t>(r));
    uint64_t group = 0;
    if (mpi_group_) {
      OTF2_GlobalDefWriter_WriteGroup(
          g, group++, str("MPI locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
          OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(ranks_), locations.data());
    }
    for (size_t c = 0; c < comms_.size(); ++c) {
      std::vector<uint64_t> members(comms_[c].members.begin(), comms_[c].members.end());
      const uint64_t gid = group++;
      OTF2_GlobalDefWriter_WriteGroup(g, gid, str(comms_[c].name + " group"),
                                      comms_[c].self ? OTF2_GROUP_TYPE_COMM_SELF
                                      : mpi_group_   ? OTF2_GROUP_TYPE_COMM_GROUP
                                                     : OTF2_GROUP_TYPE_LOCATIONS,
                                      OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                      static_cast<uint32_t>(members.size()), members.data());
      OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(c), str(comms_[c].name), gid,
                                     OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    }
    for (size_t w = 0; w < windows_.size(); ++w) {
      OTF2_GlobalDefWriter_WriteRmaWin(g, static_cast<OTF2_RmaWinRef>(w),
                                       str("window " + std::to_string(w)), windows_[w],
                                       OTF2_RMA_WIN_FLAG_NONE);
    }
    OTF2_Archive_Close(archive_);
    archive_ = nullptr;
    return dir_ + "/traces.otf2";
  }

 private:
  struct Comm {
    std::string name;
    std::vector<int> members;
    bool self = false;
  };
  struct Thread {
    uint64_t ref;
    int rank;
  };
  std::vector<uint64_t> AllLocations() const {
    std::vector<uint64_t> all;
    for (int r = 0; r < ranks_; ++r) all.push_back(static_cast<uint64_t>(r));
    for (const Thread& t : threads_) all.push_back(t.ref);
    return all;
  }
  std::string dir_;
  int ranks_;
  uint64_t resolution_;
  OTF2_Archive* archive_ = nullptr;
  OTF2_FlushCallbacks flush_{};
  std::vector<OTF2_EvtWriter*> writers_;
  std::vector<Comm> comms_;
  std::vector<OTF2_CommRef> windows_;
  std::vector<Thread> threads_;
  std::map<int, uint32_t> threads_of_;
  bool mpi_group_ = true;
};

}  // namespace ukai::testing

#endif  // UKAI_TESTS_SIM_WORKLOAD_OTF2_WRITER_H_
