// `ukai sim check` in-process: the verdict per distinct point and the exit statuses.
#include "cli/sim_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "scratch_path.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;

int Check(const std::string& toml, std::string* out, std::string* err) {
  const std::string path = ukai::testing_util::ScratchPath("sim_check_test.toml");
  std::ofstream(path) << toml;
  std::ostringstream o, e;
  SimCheckOptions options;
  options.config_path = path;
  const int code = CheckSim(options, CliIo{&o, &e, false});
  std::remove(path.c_str());
  *out = o.str();
  *err = e.str();
  return code;
}

TEST(SimCheckTest, ProvesEachDistinctPoint) {
  std::string out, err;
  const int code = Check(
      "routing.algorithm = [\"detour-ud\", \"updown\"]\n[network]\nk = 5\n"
      "[traffic]\nrate = [0.1, 0.2]\n[faults]\nnodes = [[1, 1], [3, 2]]\n",
      &out, &err);
  EXPECT_EQ(code, kExitOk) << err;
  EXPECT_THAT(out, HasSubstr("point 0: routing detour-ud, router.vcs 4, seed 1: deadlock-free: "
                             "the UD-VC (VC 3) with up*/down*"));
  EXPECT_THAT(out, HasSubstr("point 2: routing updown"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("point 1:")));  // same check as point 0
}

TEST(SimCheckTest, DuatoExtendedGraphAndNonAtomicCycle) {
  std::string out, err;
  EXPECT_EQ(Check("routing.algorithm = \"duato\"\n[network]\nk = 6\n", &out, &err), kExitOk) << err;
  EXPECT_THAT(out, HasSubstr("indirect ones (through the adaptive VCs); the extended dependency "
                             "graph is acyclic"));
  EXPECT_EQ(Check("routing.algorithm = \"duato\"\nrouting.duato_atomic = \"none\"\n"
                  "[network]\nk = 6\n",
                  &out, &err),
            kExitRunFailed);
  EXPECT_THAT(out, HasSubstr("NOT deadlock-free: Duato's escape VCs 0-1"));
  EXPECT_THAT(out, HasSubstr("[queue: "));
}

TEST(SimCheckTest, ConfigErrorIsUsage) {
  std::string out, err;
  EXPECT_EQ(Check("routing.algorithm = \"dor\"\n[faults]\nnodes = [[1, 1]]\n", &out, &err),
            kExitUsage);
  EXPECT_THAT(err, HasSubstr("not fault tolerant"));
}

// The full mesh comes through the same front door; its model has no checker.
TEST(SimCheckTest, ModelWithoutACheckerIsUsage) {
  std::string out, err;
  EXPECT_EQ(Check("[network]\ntopology = \"fullmesh\"\n[workload]\noperation = \"p2p\"\n"
                  "bytes = [8]\n",
                  &out, &err),
            kExitUsage);
  EXPECT_THAT(err, HasSubstr("unsupported: network.topology = \"fullmesh\" is a message-level "
                             "model"));
  EXPECT_EQ(Check("[network]\ntopology = \"fullmesh\"\n[router]\nvcs = 4\n", &out, &err),
            kExitUsage);
  EXPECT_THAT(err, HasSubstr("router.vcs: is not used by network.topology = \"fullmesh\""));
}

}  // namespace
}  // namespace ukai::cli
