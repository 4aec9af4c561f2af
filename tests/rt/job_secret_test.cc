// The job secret (src/rt/core/job_secret.h): where it comes from (descriptor, file, API),
// the checks on the file, the key a runtime proves towards a peer, and that it never shows
// in an error, a trace, the environment or the command line (docs/runtime.md,
// "Authentication and confinement").
#include <fcntl.h>
#include <sodium.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>

#include "rt/core/job_secret.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

SecretKey Key(uint8_t first) {
  SecretKey k;
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(first + 7 * i);
  return k;
}

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out(2 * bytes.size() + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes.data(), bytes.size());
  out.pop_back();
  return out;
}

// A file in the test's temporary directory holding `text`, with `mode`.
std::string WriteFile(const std::string& name, const std::string& text, mode_t mode) {
  const std::string path =
      ::testing::TempDir() + "ukai_job_secret_" + std::to_string(getpid()) + "_" + name;
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }
  EXPECT_EQ(::chmod(path.c_str(), mode), 0);
  return path;
}

TEST(JobSecret, FreshSecretsDifferAndTheTokenIsNotTheSecret) {
  const JobSecret a = JobSecret::Generate();
  const JobSecret b = JobSecret::Generate();
  EXPECT_NE(a.key(), b.key());
  EXPECT_NE(a.key(), a.join_token());
  // The token is a function of the secret alone: one job, one token.
  EXPECT_EQ(JobSecret::FromKey(a.key()).join_token(), a.join_token());
  EXPECT_NE(a.join_token(), b.join_token());
}

TEST(JobSecret, TheKeyProvedTowardsAPeerDependsOnItsStartpointsToken) {
  const JobSecret ours = JobSecret::FromKey(Key(1));
  const JobSecret theirs = JobSecret::FromKey(Key(2));
  PeerKey k = ours.KeyTowards(nullptr);  // a table of our own job's bootstrap
  EXPECT_EQ(k.kind, KeyKind::kJob);
  EXPECT_EQ(k.key, ours.key());
  k = ours.KeyTowards(&ours.join_token());  // our own token: same job
  EXPECT_EQ(k.kind, KeyKind::kJob);
  EXPECT_EQ(k.key, ours.key());
  k = ours.KeyTowards(&theirs.join_token());  // another job's startpoint: its token
  EXPECT_EQ(k.kind, KeyKind::kJoin);
  EXPECT_EQ(k.key, theirs.join_token());
  EXPECT_EQ(theirs.KeyFor(KeyKind::kJoin), theirs.join_token());
  EXPECT_EQ(theirs.KeyFor(KeyKind::kJob), theirs.key());
}

TEST(JobSecret, AuthDescriptorRoundTripsAndRejectsBadBytes) {
  const SecretKey t = Key(9);
  const std::vector<uint8_t> d = EncodeAuthDescriptor(t);
  Result<SecretKey> back = DecodeAuthDescriptor(d);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, t);
  std::vector<uint8_t> bad = d;
  bad[0] = 2;  // unknown version
  EXPECT_FALSE(DecodeAuthDescriptor(bad).ok());
  bad = d;
  bad.pop_back();
  EXPECT_FALSE(DecodeAuthDescriptor(bad).ok());
}

TEST(JobSecret, ReadFromASealedMemfdAsTheLauncherHandsItDown) {
  const SecretKey k = Key(3);
  const int fd = ::memfd_create("test-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, k.data(), k.size()), static_cast<ssize_t>(k.size()));
  ASSERT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL), 0);
  Result<JobSecret> s = JobSecret::ReadFd(fd);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->key(), k);
  // pread: a second runtime of the process reads it again.
  s = JobSecret::ReadFd(fd);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->key(), k);
  EXPECT_LT(::write(fd, k.data(), 1), 0);  // sealed: nobody changes it
  ::close(fd);

  // A short descriptor and a closed one: errors name the descriptor, not any bytes.
  const int short_fd = ::memfd_create("short", MFD_CLOEXEC);
  ASSERT_EQ(::write(short_fd, k.data(), 5), 5);
  Result<JobSecret> bad = JobSecret::ReadFd(short_fd);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("descriptor " + std::to_string(short_fd)),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("holds 5 bytes"), std::string::npos);
  ::close(short_fd);
  EXPECT_FALSE(JobSecret::ReadFd(short_fd).ok());
}

TEST(JobSecret, FileMustBeOwnerOnlyAndHoldSixtyFourHexDigits) {
  const SecretKey k = Key(5);
  const std::string hex = Hex(k);
  const std::string good = WriteFile("good", "  " + hex + "\n", 0600);
  Result<JobSecret> s = JobSecret::ReadFile(good);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->key(), k);
  ::chmod(good.c_str(), 0400);
  EXPECT_TRUE(JobSecret::ReadFile(good).ok());

  // Readable by others: refused, naming the path and the mode, never the contents.
  const std::string open = WriteFile("open", hex, 0644);
  Result<JobSecret> bad = JobSecret::ReadFile(open);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(open), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("mode 0644"), std::string::npos) << bad.status().message();
  EXPECT_EQ(bad.status().message().find(hex), std::string::npos);
  ::chmod(open.c_str(), 0640);  // group alone is too much as well
  EXPECT_FALSE(JobSecret::ReadFile(open).ok());

  // Wrong contents: refused without echoing them.
  const std::string short_hex = hex.substr(0, 63);
  const std::string shorter = WriteFile("short", short_hex, 0600);
  bad = JobSecret::ReadFile(shorter);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected 64 hex digits"), std::string::npos);
  EXPECT_EQ(bad.status().message().find(short_hex), std::string::npos);
  const std::string not_hex = WriteFile("nothex", std::string(64, 'g'), 0600);
  EXPECT_FALSE(JobSecret::ReadFile(not_hex).ok());
  EXPECT_FALSE(JobSecret::ReadFile(::testing::TempDir() + "ukai_no_such_secret_file").ok());
  for (const std::string& p : {good, open, shorter, not_hex}) ::unlink(p.c_str());
}

// Two runtimes of one job (the secret set through the API) connect over tcp and shm with
// tracing on: the trace shows the handshake happened and never the secret, the token, or
// their bytes; the runtimes' options given as a file work the same.
TEST(JobSecret, NeverInATraceAndTheFileMakesTwoRuntimesOneJob) {
  const SecretKey k = Key(11);
  const JobSecret js = JobSecret::FromKey(k);
  const std::string path = WriteFile("job", Hex(k), 0600);
  for (const std::string module : {"tcp", "shm"}) {
    SCOPED_TRACE(module);
    ::testing::internal::CaptureStderr();
    std::vector<std::unique_ptr<Runtime>> rts;
    std::atomic<int> got{0};
    Startpoint sp;
    {
      RuntimeOptions server = ModuleOptions(module, nullptr);
      server.trace = true;
      server.job_secret = k;
      auto ctx = StartWithContext(server, "server", &rts);
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      auto ep = (*ctx)->CreateEndpoint();
      ASSERT_TRUE(ep.ok());
      ASSERT_TRUE(
          (*ep)->RegisterHandler("n", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
      sp = (*ep)->MakeStartpoint();
    }
    RuntimeOptions client = ModuleOptions(module, nullptr);
    client.trace = true;
    client.job_secret_file = path;  // the same secret, from the file
    auto c = Runtime::Init(client);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    // Without the startpoint's token (a bare address and id) only the job secret gets in:
    // the file made the client one job with the server.
    auto stripped = std::make_shared<DescriptorTable>(sp.descriptors());
    ASSERT_EQ(std::erase_if(stripped->entries,
                            [](const Descriptor& d) { return d.module == kAuthDescriptor; }),
              1u);
    const Startpoint bare(stripped, sp.context(), sp.endpoint());
    ASSERT_TRUE((*c)->SendRsr(Buffer(), bare, HandlerId::Of("n")).ok());
    EXPECT_TRUE(WaitFor([&] { return got.load() == 1; }));
    EXPECT_TRUE((*c)->Finalize().ok());
    c->reset();
    rts.clear();
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("loaded module " + module), std::string::npos) << err;
    for (const std::string& secret : {Hex(k), Hex(js.join_token())}) {
      EXPECT_EQ(err.find(secret), std::string::npos) << err;
      // Nor in upper case, nor as raw bytes.
      std::string upper = secret;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      EXPECT_EQ(err.find(upper), std::string::npos);
    }
    EXPECT_EQ(err.find(std::string(reinterpret_cast<const char*>(k.data()), k.size())),
              std::string::npos);
  }
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace ukai::rt::testing
