// MpiLibrary: Open MPI's libmpi, loaded when a process joins an MPI job (the mpi bootstrap,
// the mpi module, the simulator's MPI ranks) rather than when the program starts.
//
// Linked into `ukai`, libmpi and what it pulls in (libopen-rte, libopen-pal, libevent,
// libhwloc, libudev, libz) were mapped and relocated at every start: about 1.1 MB of resident
// memory and 1900 symbol bindings, although only a process started by mpirun uses them
// (docs/booksim.md, "Where ukai's memory goes"). Load() opens the library by the soname the
// build found (UKAI_MPI_SONAME) with RTLD_GLOBAL (Open MPI's own plugins resolve libmpi's
// symbols through it) and RTLD_NODELETE (MPI is never unloaded: its threads and handlers
// may outlive MPI_Finalize); the loader counts references, so a second Load() costs a lookup.
// The types and integer constants still come from <mpi.h>; the predefined handles that Open
// MPI defines as addresses of its global objects (MPI_COMM_WORLD, MPI_BYTE, ...) are members
// here, looked up by the symbol names its mpi.h uses.
//
// Ownership: every user keeps its own MpiLibrary (unique_ptr) as long as it calls MPI.
// Thread safety: the members are set by Load() and then only read; the functions may be
// called as MPI allows.
#ifndef UKAI_CORE_MPI_MPI_LIBRARY_H_
#define UKAI_CORE_MPI_MPI_LIBRARY_H_

// The C API only (Open MPI's deprecated C++ bindings need libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <memory>

#include "core/shared_library.h"
#include "core/status.h"

#ifndef OPEN_MPI
#error "MpiLibrary looks up Open MPI's predefined handles; other MPI libraries are not supported"
#endif

namespace ukai {

// The MPI functions ukai calls (X(name) declares member `name` for MPI_<name>).
// clang-format off
#define UKAI_MPI_FUNCTIONS(X) \
  X(Abort) \
  X(Allgather) \
  X(Allgatherv) \
  X(Allreduce) \
  X(Barrier) \
  X(Bcast) \
  X(Cancel) \
  X(Comm_dup) \
  X(Comm_free) \
  X(Comm_rank) \
  X(Comm_set_errhandler) \
  X(Comm_size) \
  X(Comm_split_type) \
  X(Finalize) \
  X(Finalized) \
  X(Get) \
  X(Get_address) \
  X(Get_count) \
  X(Improbe) \
  X(Init_thread) \
  X(Initialized) \
  X(Irecv) \
  X(Isend) \
  X(Mprobe) \
  X(Mrecv) \
  X(Put) \
  X(Query_thread) \
  X(Recv_init) \
  X(Request_free) \
  X(Start) \
  X(Test) \
  X(Wait) \
  X(Waitall) \
  X(Win_attach) \
  X(Win_create_dynamic) \
  X(Win_detach) \
  X(Win_flush) \
  X(Win_free) \
  X(Win_lock_all) \
  X(Win_set_errhandler) \
  X(Win_unlock_all)
// clang-format on

class MpiLibrary {
 public:
  // Opens libmpi; kUnavailable naming the library and dlerror()'s reason when it is missing
  // or lacks one of the symbols.
  static Result<std::unique_ptr<MpiLibrary>> Load();
  MpiLibrary(const MpiLibrary&) = delete;
  MpiLibrary& operator=(const MpiLibrary&) = delete;

#define UKAI_MPI_MEMBER(name) decltype(&::MPI_##name) name = nullptr;
  UKAI_MPI_FUNCTIONS(UKAI_MPI_MEMBER)
#undef UKAI_MPI_MEMBER

  // The predefined handles (MPI_COMM_WORLD ...).
  MPI_Comm comm_world = nullptr;
  MPI_Comm comm_null = nullptr;
  MPI_Datatype byte = nullptr;
  MPI_Datatype int_type = nullptr;
  MPI_Op op_min = nullptr;
  MPI_Errhandler errors_return = nullptr;
  MPI_Info info_null = nullptr;
  MPI_Request request_null = nullptr;
  MPI_Win win_null = nullptr;

 private:
  MpiLibrary() = default;
  std::unique_ptr<SharedLibrary> library_;  // RTLD_NODELETE: stays mapped after it
};

}  // namespace ukai

#endif  // UKAI_CORE_MPI_MPI_LIBRARY_H_
