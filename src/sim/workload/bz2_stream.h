// Byte streams for trace readers: a ByteStream hands out decompressed bytes in order;
// Bz2Stream decompresses bzip2 data (libbz2's streaming API, one 64 KiB input buffer and
// libbz2's own state: memory does not grow with the stream) read from a file or from
// memory; MemoryStream serves raw bytes (tests, the fuzz target).
//
// A bzip2 file may hold several concatenated streams (parallel compressors write them);
// they are read as one. Errors (kParseError: not bzip2 data, corrupt data, a stream cut
// short; kIoError: the file cannot be read) say what went wrong and after how many
// decompressed bytes; the caller adds the file name and its own position.
//
// Thread safety: none; one reader per stream.
#ifndef UKAI_SIM_WORKLOAD_BZ2_STREAM_H_
#define UKAI_SIM_WORKLOAD_BZ2_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::sim {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads up to `n` bytes into `out`: returns how many (fewer than n only at the end of
  // the stream), or the error.
  virtual Result<size_t> Read(void* out, size_t n) = 0;
  // Decompressed bytes handed out so far.
  virtual int64_t offset() const = 0;
};

// Raw bytes (not owned: the span must outlive the stream).
class MemoryStream final : public ByteStream {
 public:
  explicit MemoryStream(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  Result<size_t> Read(void* out, size_t n) override;
  int64_t offset() const override { return static_cast<int64_t>(at_); }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

class Bz2Stream final : public ByteStream {
 public:
  // Opens `path` (kIoError naming it when it cannot be opened).
  static Result<std::unique_ptr<Bz2Stream>> OpenFile(const std::string& path);
  // Decompresses `compressed` (not owned: must outlive the stream).
  static std::unique_ptr<Bz2Stream> FromMemory(std::span<const uint8_t> compressed);
  ~Bz2Stream() override;
  Bz2Stream(const Bz2Stream&) = delete;
  Bz2Stream& operator=(const Bz2Stream&) = delete;

  Result<size_t> Read(void* out, size_t n) override;
  int64_t offset() const override { return out_total_; }

 private:
  Bz2Stream();
  // Refills the input buffer; false at the end of the input.
  Result<bool> Fill();
  Status Restart();  // a new bzip2 stream after the end of one

  struct State;
  std::unique_ptr<State> state_;
  std::FILE* file_ = nullptr;        // owned, when reading a file
  std::span<const uint8_t> memory_;  // when reading memory
  size_t memory_at_ = 0;
  std::vector<char> in_;
  bool stream_end_ = false;  // the current bzip2 stream ended
  bool input_end_ = false;
  bool started_ = false;  // decompressed at least one byte of the current stream
  int64_t out_total_ = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_BZ2_STREAM_H_
