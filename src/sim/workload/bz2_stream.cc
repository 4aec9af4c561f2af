#include "sim/workload/bz2_stream.h"

#include <bzlib.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/shared_library.h"

#ifndef UKAI_BZ2_SONAME
#error "UKAI_BZ2_SONAME (libbz2's soname) is set by src/sim/CMakeLists.txt"
#endif

namespace ukai::sim {

Result<size_t> MemoryStream::Read(void* out, size_t n) {
  const size_t take = std::min(n, bytes_.size() - at_);
  if (take > 0) std::memcpy(out, bytes_.data() + at_, take);
  at_ += take;
  return take;
}

// libbz2 is loaded when a stream is made, not linked: only netrace traces need it, and
// every start of `ukai` paid for mapping it (docs/booksim.md, "Where ukai's memory goes").
// The loader counts references; libbz2 keeps no state between streams.
struct Bz2Stream::State {
  ~State() {
    if (open) decompress_end(&strm);
  }
  // Opens the library; false with `error` set when it or a function is missing.
  bool Load() {
    Result<std::unique_ptr<SharedLibrary>> so =
        SharedLibrary::Open(UKAI_BZ2_SONAME, RTLD_NOW | RTLD_LOCAL, "libbz2");
    Status st = so.status();
    if (so.ok()) {
      (*so)->Bind(&decompress_init, "BZ2_bzDecompressInit");
      (*so)->Bind(&decompress, "BZ2_bzDecompress");
      (*so)->Bind(&decompress_end, "BZ2_bzDecompressEnd");
      st = (*so)->Missing();
      library = std::move(*so);
    }
    if (!st.ok()) error = st.message();
    return st.ok();
  }

  std::unique_ptr<SharedLibrary> library;  // declared first: closed after the stream ends
  decltype(&::BZ2_bzDecompressInit) decompress_init = nullptr;
  decltype(&::BZ2_bzDecompress) decompress = nullptr;
  decltype(&::BZ2_bzDecompressEnd) decompress_end = nullptr;
  std::string error = "libbz2 failed to initialise";
  bz_stream strm{};
  bool open = false;
};

namespace {

constexpr size_t kInputBuffer = 64 * 1024;

std::string Bz2Error(int code) {
  switch (code) {
    case BZ_DATA_ERROR_MAGIC:
      return "not bzip2 data (no 'BZh' signature)";
    case BZ_DATA_ERROR:
      return "corrupt bzip2 data (a block fails its checks)";
    case BZ_MEM_ERROR:
      return "libbz2 ran out of memory";
    default:
      return "libbz2 error " + std::to_string(code);
  }
}

}  // namespace

Bz2Stream::Bz2Stream() : state_(std::make_unique<State>()), in_(kInputBuffer) {
  if (state_->Load()) state_->open = state_->decompress_init(&state_->strm, 0, 0) == BZ_OK;
}

Bz2Stream::~Bz2Stream() {
  if (file_ != nullptr) std::fclose(file_);
}

Result<std::unique_ptr<Bz2Stream>> Bz2Stream::OpenFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IoError("cannot open: " + std::string(std::strerror(errno)));
  std::unique_ptr<Bz2Stream> s(new Bz2Stream());
  s->file_ = f;
  return s;
}

std::unique_ptr<Bz2Stream> Bz2Stream::FromMemory(std::span<const uint8_t> compressed) {
  std::unique_ptr<Bz2Stream> s(new Bz2Stream());
  s->memory_ = compressed;
  return s;
}

Result<bool> Bz2Stream::Fill() {
  size_t got = 0;
  if (file_ != nullptr) {
    got = std::fread(in_.data(), 1, in_.size(), file_);
    if (got == 0 && std::ferror(file_)) {
      return Status::IoError("read failed: " + std::string(std::strerror(errno)));
    }
  } else {
    got = std::min(in_.size(), memory_.size() - memory_at_);
    if (got > 0) std::memcpy(in_.data(), memory_.data() + memory_at_, got);
    memory_at_ += got;
  }
  if (got == 0) {
    input_end_ = true;
    return false;
  }
  state_->strm.next_in = in_.data();
  state_->strm.avail_in = static_cast<unsigned>(got);
  return true;
}

Status Bz2Stream::Restart() {
  bz_stream& strm = state_->strm;
  char* next_in = strm.next_in;
  const unsigned avail_in = strm.avail_in;
  state_->decompress_end(&strm);
  strm = bz_stream{};
  state_->open = state_->decompress_init(&strm, 0, 0) == BZ_OK;
  if (!state_->open) return Status::Internal(state_->error);
  strm.next_in = next_in;
  strm.avail_in = avail_in;
  stream_end_ = false;
  started_ = false;
  return Status::Ok();
}

Result<size_t> Bz2Stream::Read(void* out, size_t n) {
  if (!state_->open) return Status::Internal(state_->error);
  bz_stream& strm = state_->strm;
  size_t got = 0;
  while (got < n) {
    if (strm.avail_in == 0 && !input_end_) {
      Result<bool> filled = Fill();
      if (!filled.ok()) return filled.status();
    }
    if (stream_end_) {
      if (strm.avail_in == 0) return got;  // the end of the last stream: a clean end
      UKAI_RETURN_IF_ERROR(Restart());     // another stream follows
    }
    if (strm.avail_in == 0 && input_end_) {
      if (out_total_ == 0 && !started_) return Status::ParseError("empty file: no bzip2 data");
      return Status::ParseError("the bzip2 data ends before its end-of-stream marker (a " +
                                std::string("truncated file?) after ") +
                                std::to_string(out_total_) + " decompressed bytes");
    }
    strm.next_out = static_cast<char*>(out) + got;
    strm.avail_out = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    const unsigned before = strm.avail_out;
    const int r = state_->decompress(&strm);
    const size_t produced = before - strm.avail_out;
    got += produced;
    out_total_ += static_cast<int64_t>(produced);
    if (produced > 0) started_ = true;
    if (r == BZ_STREAM_END) {
      stream_end_ = true;
    } else if (r != BZ_OK) {
      return Status::ParseError(Bz2Error(r) + " after " + std::to_string(out_total_) +
                                " decompressed bytes");
    }
  }
  return got;
}

}  // namespace ukai::sim
