#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

struct Argv {
  explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(args.size());
  }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
  int argc;
};

TEST(RuntimeArgs, ConsumesUkaiOptionsAndKeepsTheRest) {
  Argv a({"prog", "--ukai-modules=shm,tcp", "x", "--ukai-trace", "--flag",
          "--ukai-handler-threads=3", "--ukai-param=tcp.listen=127.0.0.1:0", "y"});
  RuntimeOptions o;
  ASSERT_TRUE(ParseRuntimeArgs(a.argc, a.ptrs.data(), &o).ok());
  ASSERT_EQ(a.argc, 4);
  EXPECT_STREQ(a.ptrs[1], "x");
  EXPECT_STREQ(a.ptrs[2], "--flag");
  EXPECT_STREQ(a.ptrs[3], "y");
  EXPECT_EQ(a.ptrs[4], nullptr);
  EXPECT_EQ(o.modules, (std::vector<std::string>{"shm", "tcp"}));
  EXPECT_TRUE(o.trace);
  EXPECT_EQ(o.handler_threads, 3);
  EXPECT_EQ(o.params["tcp.listen"], "127.0.0.1:0");
}

TEST(RuntimeArgs, BadOptionsAreErrorsNamingTheOption) {
  for (const char* bad : {"--ukai-bogus=1", "--ukai-handler-threads=0", "--ukai-spin-us=x",
                          "--ukai-param=novalue", "--ukai-progress-thread=maybe"}) {
    Argv a({"prog", bad});
    RuntimeOptions o;
    Status st = ParseRuntimeArgs(a.argc, a.ptrs.data(), &o);
    ASSERT_FALSE(st.ok()) << bad;
    std::string name(bad);
    name = name.substr(0, name.find('='));
    EXPECT_NE(st.message().find(name), std::string::npos) << st.ToString();
  }
}

// Both spellings of every option that takes a value: --ukai-NAME=VALUE and
// --ukai-NAME VALUE. (`--ukai-modules tcp` used to load the defaults silently.)
TEST(RuntimeArgs, SpaceSeparatedValuesAreTheSameAsEquals) {
  Argv a({"prog", "--ukai-modules", "tcp", "x", "--ukai-handler-threads", "7", "--ukai-spin-us",
          "0", "--ukai-progress-thread", "0", "--ukai-bootstrap", "single", "--ukai-param",
          "tcp.listen=127.0.0.1:0", "--ukai-trace=1", "y"});
  RuntimeOptions o;
  Status st = ParseRuntimeArgs(a.argc, a.ptrs.data(), &o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(a.argc, 3);
  EXPECT_STREQ(a.ptrs[1], "x");
  EXPECT_STREQ(a.ptrs[2], "y");
  EXPECT_EQ(o.modules, (std::vector<std::string>{"tcp"}));
  EXPECT_EQ(o.handler_threads, 7);
  EXPECT_EQ(o.spin_us, 0);
  EXPECT_FALSE(o.progress_thread);
  EXPECT_EQ(o.bootstrap, "single");
  EXPECT_EQ(o.params["tcp.listen"], "127.0.0.1:0");
  EXPECT_TRUE(o.trace);
}

// Every option is range-checked; the message names the option and the allowed range.
TEST(RuntimeArgs, OutOfRangeAndMissingValuesAreClearErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--ukai-handler-threads=100000"},
       "--ukai-handler-threads: expected an integer in [1, 1024], got '100000'"},
      {{"--ukai-handler-threads", "0"},
       "--ukai-handler-threads: expected an integer in [1, 1024], got '0'"},
      {{"--ukai-handler-threads=99999999999999999999"},
       "--ukai-handler-threads: expected an integer in [1, 1024], got '99999999999999999999'"},
      {{"--ukai-handler-threads= 4"},
       "--ukai-handler-threads: expected an integer in [1, 1024], got ' 4'"},
      {{"--ukai-spin-us=-1"}, "--ukai-spin-us: expected an integer in [0, 1000000], got '-1'"},
      {{"--ukai-spin-us=2000000"},
       "--ukai-spin-us: expected an integer in [0, 1000000], got '2000000'"},
      {{"--ukai-modules"},
       "--ukai-modules: needs a value (--ukai-modules=VALUE or --ukai-modules VALUE)"},
      {{"--ukai-modules", "--ukai-trace"},
       "--ukai-modules: needs a value (--ukai-modules=VALUE or --ukai-modules VALUE)"},
      {{"--ukai-modules="}, "--ukai-modules: needs at least one module name, got ''"},
      {{"--ukai-modules=,"}, "--ukai-modules: needs at least one module name, got ','"},
      {{"--ukai-bootstrap="}, "--ukai-bootstrap: needs a name"},
      {{"--ukai-progress-thread", "2"}, "--ukai-progress-thread: expected 0/1, got '2'"},
      {{"--ukai-param", "x"}, "--ukai-param: expected KEY=VALUE, got 'x'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"prog"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Argv a(args);
    RuntimeOptions o;
    Status st = ParseRuntimeArgs(a.argc, a.ptrs.data(), &o);
    ASSERT_FALSE(st.ok()) << c.args[0];
    EXPECT_EQ(st.message(), c.message);
  }
}

// The same bounds hold for the options struct and the environment.
TEST(RuntimeInit, OutOfRangeOptionsAreErrorsNotAborts) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"inproc"};
  o.handler_threads = 100000;
  auto rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().message(),
            "ukai runtime init: handler_threads must be in [1, 1024] (got 100000)");
  o.handler_threads = 2;
  o.spin_us = -5;
  rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().message(), "ukai runtime init: spin_us must be in [0, 1000000] (got -5)");
  ::setenv("UKAI_HANDLER_THREADS", "100000", 1);
  RuntimeOptions env;
  Status st = ApplyRuntimeEnv(&env);
  ::unsetenv("UKAI_HANDLER_THREADS");
  EXPECT_EQ(st.message(),
            "environment UKAI_HANDLER_THREADS: --ukai-handler-threads: expected an integer in "
            "[1, 1024], got '100000'");
}

TEST(RuntimeInit, UnknownParametersAreErrorsNamingTheKey) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"tcp"};
  o.params["tcp.listen"] = "127.0.0.1:0";
  o.params["tcp.lisen"] = "127.0.0.1:0";  // typo of a loaded module's parameter
  auto rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("'tcp.lisen'"), std::string::npos) << rt.status().ToString();
  EXPECT_NE(rt.status().message().find("tcp.listen"), std::string::npos) << rt.status().ToString();

  o.params.erase("tcp.lisen");
  o.params["nosuchmodule.x"] = "1";  // a prefix that is no module
  rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("'nosuchmodule.x'"), std::string::npos)
      << rt.status().ToString();

  o.params.erase("nosuchmodule.x");
  o.params["shm.ring_bytes"] = "65536";  // a module not loaded in this run: ignored
  rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  (*rt)->Finalize();
}

TEST(RuntimeInit, UnknownModuleAndBootstrapListTheKnownOnes) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"carrier-pigeon"};
  auto rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("known: inproc"), std::string::npos)
      << rt.status().ToString();
  o.modules = {};
  o.bootstrap = "nope";
  rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("single"), std::string::npos);
}

TEST(RuntimeInit, HandlerNamesAndIds) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"inproc"};
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  auto ctx = (*rt)->CreateContext({.name = "c", .id = 7});
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ((*ctx)->id(), 7u);
  EXPECT_FALSE((*rt)->CreateContext({.name = "dup", .id = 7}).ok());
  Endpoint* ep = *(*ctx)->CreateEndpoint({.id = 3});
  EXPECT_EQ(ep->id(), 3u);
  EXPECT_FALSE((*ctx)->CreateEndpoint({.id = 3}).ok());
  Result<HandlerId> id = ep->RegisterHandler("h", HandlerKind::kNonThreaded, [](Rsr&) {});
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, HandlerId::Of("h"));
  EXPECT_FALSE(ep->RegisterHandler("h", HandlerKind::kThreaded, [](Rsr&) {}).ok());
  EXPECT_FALSE(ep->RegisterHandler("", HandlerKind::kThreaded, [](Rsr&) {}).ok());
  // "costarring" and "liquid" collide under 32-bit FNV-1a.
  ASSERT_EQ(HandlerId::Of("costarring"), HandlerId::Of("liquid"));
  ASSERT_TRUE(ep->RegisterHandler("costarring", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
  Result<HandlerId> clash = ep->RegisterHandler("liquid", HandlerKind::kNonThreaded, [](Rsr&) {});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("collision"), std::string::npos);
  EXPECT_FALSE((*rt)->SendRsr(Buffer(), Startpoint(), HandlerId::Of("h")).ok());
  auto failing = (*rt)->CreateContext(
      {.name = "bad", .init = [](Context&) { return Status::Internal("boom"); }});
  ASSERT_FALSE(failing.ok());
  EXPECT_NE(failing.status().message().find("boom"), std::string::npos);
  EXPECT_TRUE((*rt)->Finalize().ok());
  EXPECT_TRUE((*rt)->Finalize().ok());
}

TEST(RuntimeInit, ExplicitProgressWithoutThread) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"inproc"};
  o.progress_thread = false;
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok());
  int got = 0;
  auto ctx = (*rt)->CreateContext({.name = "c"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("h", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  ASSERT_TRUE((*rt)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("h")).ok());
  EXPECT_EQ(got, 0);  // nothing runs without progress
  EXPECT_EQ((*rt)->Progress(), 1);
  EXPECT_EQ(got, 1);
}

}  // namespace
}  // namespace ukai::rt
