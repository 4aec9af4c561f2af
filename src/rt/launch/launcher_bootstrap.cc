#include "rt/launch/launcher_bootstrap.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "rt/launch/launch_protocol.h"
#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

using launch::MsgType;

Result<int> EnvInt(const char* name, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return Status::InvalidArgument(std::string(name) + " is not set");
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < lo || n > hi) {
    return Status::InvalidArgument(std::string(name) + "=" + v + ": expected an integer in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(n);
}

class LauncherBootstrap final : public Bootstrap {
 public:
  ~LauncherBootstrap() override {
    if (fd_ >= 0) close(fd_);
  }
  std::string_view name() const override { return "launcher"; }

  Status Start() override {
    Result<int> size = EnvInt("UKAI_SIZE", 1, 1 << 20);
    if (!size.ok()) return size.status();
    Result<int> rank = EnvInt("UKAI_RANK", 0, *size - 1);
    if (!rank.ok()) return rank.status();
    if (const char* t = std::getenv("UKAI_LAUNCH_TIMEOUT_S")) timeout_ms_ = std::atoi(t) * 1000;
    const char* addr = std::getenv("UKAI_LAUNCH_ADDR");
    if (addr == nullptr || *addr == '\0') {
      return Status::InvalidArgument("UKAI_LAUNCH_ADDR is not set (start with `ukai launch`)");
    }
    // The job secret, from the memfd the launcher handed down (its number is in the
    // environment; the secret is not).
    Result<int> secret_fd = EnvInt("UKAI_JOB_SECRET_FD", 0, 1 << 20);
    if (!secret_fd.ok()) {
      return secret_fd.status().WithContext("launcher bootstrap (start with `ukai launch`)");
    }
    Result<JobSecret> secret = JobSecret::ReadFd(*secret_fd);
    if (!secret.ok()) return secret.status().WithContext("launcher bootstrap");
    // Kept open (a later runtime of this process reads it too), but no program this process
    // starts inherits it.
    ::fcntl(*secret_fd, F_SETFD, ::fcntl(*secret_fd, F_GETFD) | FD_CLOEXEC);
    secret_ = std::make_unique<JobSecret>(*secret);
    Result<int> fd = launch::ConnectUnix(addr);
    if (!fd.ok()) return fd.status();
    fd_ = *fd;
    rank_ = *rank;
    size_ = *size;
    std::vector<uint8_t> hello(4);
    wire::PutLe32(hello.data(), static_cast<uint32_t>(rank_));
    const Mac proof = launch::HelloMac(secret_->key(), static_cast<uint32_t>(rank_));
    hello.insert(hello.end(), proof.begin(), proof.end());
    return launch::SendMsg(fd_, MsgType::kHello, hello);
  }
  Result<JobSecret> Secret() override { return *secret_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Result<std::vector<DescriptorTable>> Exchange(const DescriptorTable& mine) override {
    std::vector<uint8_t> bytes;
    mine.EncodeTo(&bytes);
    UKAI_RETURN_IF_ERROR(launch::SendMsg(fd_, MsgType::kTable, bytes));
    Result<launch::Message> m = launch::ReceiveMsg(fd_, timeout_ms_);
    if (!m.ok()) return m.status().WithContext("launcher bootstrap: waiting for the tables");
    if (m->type != MsgType::kTables)
      return Status::ParseError("launcher bootstrap: expected the tables");
    return launch::DecodeTables(m->body, size_);
  }

  Status Barrier() override {
    UKAI_RETURN_IF_ERROR(launch::SendMsg(fd_, MsgType::kBarrier, {}));
    Result<launch::Message> m = launch::ReceiveMsg(fd_, timeout_ms_);
    if (!m.ok()) return m.status().WithContext("launcher bootstrap: barrier");
    if (m->type != MsgType::kRelease)
      return Status::ParseError("launcher bootstrap: expected a release");
    return Status::Ok();
  }

  void Finish() override {
    if (fd_ < 0) return;
    [[maybe_unused]] Status s = launch::SendMsg(fd_, MsgType::kFinish, {});
    close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  std::unique_ptr<JobSecret> secret_;
  int rank_ = 0;
  int size_ = 1;
  int timeout_ms_ = 60000;
};

}  // namespace

bool DetectLauncher() {
  const char* b = std::getenv("UKAI_BOOTSTRAP");
  const char* a = std::getenv("UKAI_LAUNCH_ADDR");
  return (b != nullptr && std::strcmp(b, "launcher") == 0) || (a != nullptr && *a != '\0');
}

std::unique_ptr<Bootstrap> NewLauncherBootstrap() { return std::make_unique<LauncherBootstrap>(); }

}  // namespace ukai::rt
