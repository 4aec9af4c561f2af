#include "core/mpi/mpi_library.h"

#include <dlfcn.h>

#ifndef UKAI_MPI_SONAME
#error "UKAI_MPI_SONAME (libmpi's soname) is set by src/core/CMakeLists.txt"
#endif

namespace ukai {

Result<std::unique_ptr<MpiLibrary>> MpiLibrary::Load() {
  Result<std::unique_ptr<SharedLibrary>> so =
      SharedLibrary::Open(UKAI_MPI_SONAME, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE, "Open MPI");
  if (!so.ok()) return so.status();
  std::unique_ptr<MpiLibrary> lib(new MpiLibrary());
  SharedLibrary& l = **so;
#define UKAI_MPI_BIND(name) l.Bind(&lib->name, "MPI_" #name);
  UKAI_MPI_FUNCTIONS(UKAI_MPI_BIND)
#undef UKAI_MPI_BIND
  // Open MPI's global objects behind the predefined handles (the names its mpi.h uses).
  l.Bind(&lib->comm_world, "ompi_mpi_comm_world");
  l.Bind(&lib->comm_null, "ompi_mpi_comm_null");
  l.Bind(&lib->byte, "ompi_mpi_byte");
  l.Bind(&lib->int_type, "ompi_mpi_int");
  l.Bind(&lib->op_min, "ompi_mpi_op_min");
  l.Bind(&lib->errors_return, "ompi_mpi_errors_return");
  l.Bind(&lib->info_null, "ompi_mpi_info_null");
  l.Bind(&lib->request_null, "ompi_request_null");
  l.Bind(&lib->win_null, "ompi_mpi_win_null");
  UKAI_RETURN_IF_ERROR(l.Missing());
  lib->library_ = std::move(*so);
  return lib;
}

}  // namespace ukai
