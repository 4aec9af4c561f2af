#include "core/shared_library.h"

#include <dlfcn.h>

namespace ukai {

Result<std::unique_ptr<SharedLibrary>> SharedLibrary::Open(const char* soname, int flags,
                                                           std::string_view what) {
  void* handle = dlopen(soname, flags);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable("cannot load " + std::string(what) + " (" + soname +
                               "): " + (why != nullptr ? why : "unknown reason"));
  }
  return std::unique_ptr<SharedLibrary>(new SharedLibrary(handle, soname, what));
}

SharedLibrary::~SharedLibrary() { dlclose(handle_); }

void* SharedLibrary::Symbol(const char* name) {
  void* sym = dlsym(handle_, name);
  if (sym == nullptr) missing_ += std::string(missing_.empty() ? "" : ", ") + name;
  return sym;
}

Status SharedLibrary::Missing() const {
  if (missing_.empty()) return Status::Ok();
  return Status::Unavailable(what_ + " (" + soname_ + ") lacks " + missing_);
}

}  // namespace ukai
