#include "rt/core/job_secret.h"

#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ukai::rt {
namespace {

// libsodium must be initialised once per process before its random source is used;
// sodium_init() is thread safe and idempotent.
void EnsureSodium() {
  if (sodium_init() < 0) {
    std::fprintf(stderr, "ukai: libsodium failed to initialise (no OS random source?)\n");
    std::abort();
  }
}

constexpr uint8_t kAuthDescriptorVersion = 1;

}  // namespace

JobSecret::JobSecret(const SecretKey& key) : key_(key) {
  token_ = ComputeMac(key_, "ukai join token v1", {});
}

JobSecret JobSecret::Generate() {
  SecretKey k;
  RandomBytes(k);
  return JobSecret(k);
}

JobSecret JobSecret::FromKey(const SecretKey& key) { return JobSecret(key); }

Result<JobSecret> JobSecret::ReadFd(int fd) {
  SecretKey k;
  const ssize_t n = ::pread(fd, k.data(), k.size(), 0);
  if (n != static_cast<ssize_t>(k.size())) {
    return Status::InvalidArgument(
        "job secret descriptor " + std::to_string(fd) + ": " +
        (n < 0 ? std::string(std::strerror(errno)) : "holds " + std::to_string(n) + " bytes") +
        " (expected " + std::to_string(k.size()) + " bytes)");
  }
  JobSecret s(k);
  sodium_memzero(k.data(), k.size());
  return s;
}

Result<JobSecret> JobSecret::ReadFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::InvalidArgument("job secret file '" + path + "': " + std::strerror(errno));
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::InvalidArgument("job secret file '" + path + "' (owner uid " +
                                   std::to_string(st.st_uid) + ", mode " + mode +
                                   ") must belong to this user and be readable by it only "
                                   "(chmod 600)");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string hex = text.str();
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.back()))) hex.pop_back();
  size_t start = 0;
  while (start < hex.size() && std::isspace(static_cast<unsigned char>(hex[start]))) ++start;
  hex = hex.substr(start);
  SecretKey k;
  size_t bin_len = 0;
  if (hex.size() != 2 * k.size() ||
      sodium_hex2bin(k.data(), k.size(), hex.data(), hex.size(), nullptr, &bin_len, nullptr) != 0 ||
      bin_len != k.size()) {
    sodium_memzero(hex.data(), hex.size());
    return Status::InvalidArgument("job secret file '" + path + "': expected " +
                                   std::to_string(2 * k.size()) + " hex digits");
  }
  sodium_memzero(hex.data(), hex.size());
  JobSecret s(k);
  sodium_memzero(k.data(), k.size());
  return s;
}

PeerKey JobSecret::KeyTowards(const SecretKey* token) const {
  if (token == nullptr || sodium_memcmp(token->data(), token_.data(), token_.size()) == 0) {
    return PeerKey{KeyKind::kJob, key_};
  }
  return PeerKey{KeyKind::kJoin, *token};
}

Mac ComputeMac(const SecretKey& key, std::string_view label,
               std::initializer_list<std::span<const uint8_t>> parts) {
  EnsureSodium();
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, key.data(), key.size());
  auto feed = [&](const uint8_t* p, size_t n) {
    const std::array<uint8_t, 4> len = {static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8),
                                        static_cast<uint8_t>(n >> 16),
                                        static_cast<uint8_t>(n >> 24)};
    crypto_auth_hmacsha256_update(&st, len.data(), len.size());
    if (n != 0) crypto_auth_hmacsha256_update(&st, p, n);
  };
  feed(reinterpret_cast<const uint8_t*>(label.data()), label.size());
  for (std::span<const uint8_t> part : parts) feed(part.data(), part.size());
  Mac out;
  crypto_auth_hmacsha256_final(&st, out.data());
  sodium_memzero(&st, sizeof st);
  return out;
}

bool MacEqual(const Mac& expected, std::span<const uint8_t> received) {
  return received.size() == expected.size() &&
         sodium_memcmp(expected.data(), received.data(), expected.size()) == 0;
}

void RandomBytes(std::span<uint8_t> out) {
  EnsureSodium();
  randombytes_buf(out.data(), out.size());
}

Nonce NewNonce() {
  Nonce n;
  RandomBytes(n);
  return n;
}

std::array<uint8_t, 8> LeBytes(uint64_t v) {
  std::array<uint8_t, 8> b;
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

std::vector<uint8_t> EncodeAuthDescriptor(const SecretKey& token) {
  std::vector<uint8_t> d;
  d.reserve(1 + token.size());
  d.push_back(kAuthDescriptorVersion);
  d.insert(d.end(), token.begin(), token.end());
  return d;
}

Result<SecretKey> DecodeAuthDescriptor(std::span<const uint8_t> bytes) {
  SecretKey t;
  if (bytes.size() != 1 + t.size() || bytes[0] != kAuthDescriptorVersion) {
    return Status::ParseError("auth descriptor: expected version 1 and a " +
                              std::to_string(t.size()) + "-byte join token, got " +
                              std::to_string(bytes.size()) + " bytes");
  }
  std::memcpy(t.data(), bytes.data() + 1, t.size());
  return t;
}

}  // namespace ukai::rt
