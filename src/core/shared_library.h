// SharedLibrary: a library opened at run time (dlopen) instead of linked, and the lookup of
// its functions and objects. Used by the loaders of libraries that only some runs need
// (libmpi: core/mpi/mpi_library.h, libpcap: sim/nic/pcap_library.h, libbz2:
// sim/workload/bz2_stream.cc), so that `ukai` does not map and relocate them at every start.
//
// Ownership: the owner keeps the SharedLibrary as long as it uses anything looked up in it;
// the destructor closes the library (the loader counts references: opening it twice costs a
// lookup, and RTLD_NODELETE keeps it mapped for good).
// Thread safety: Open() may run on any thread; Bind() on one thread at a time.
#ifndef UKAI_CORE_SHARED_LIBRARY_H_
#define UKAI_CORE_SHARED_LIBRARY_H_

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace ukai {

class SharedLibrary {
 public:
  // dlopen(soname, flags); kUnavailable "cannot load <what> (<soname>): <dlerror>" if it fails.
  static Result<std::unique_ptr<SharedLibrary>> Open(const char* soname, int flags,
                                                     std::string_view what);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // Sets *target to the symbol `name` (nullptr when it is missing; Missing() says which).
  template <typename T>
  void Bind(T* target, const char* name) {
    *target = reinterpret_cast<T>(Symbol(name));
  }
  // Ok, or kUnavailable "<what> (<soname>) lacks <names>" for the symbols Bind did not find.
  Status Missing() const;

 private:
  SharedLibrary(void* handle, const char* soname, std::string_view what)
      : handle_(handle), soname_(soname), what_(what) {}
  void* Symbol(const char* name);

  void* handle_;
  std::string soname_;
  std::string what_;
  std::string missing_;  // "a, b": what Bind did not find
};

}  // namespace ukai

#endif  // UKAI_CORE_SHARED_LIBRARY_H_
