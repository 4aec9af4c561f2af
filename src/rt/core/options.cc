// --ukai-* command-line options and UKAI_* environment variables.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ukai/rt/runtime.hpp"

namespace ukai::rt {
namespace {

std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    std::string item(s.substr(start, comma - start));
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

Result<int> ParseInt(std::string_view what, std::string_view v, int lo, int hi = 1000000000) {
  char* end = nullptr;
  std::string s(v);
  errno = 0;
  long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') ||
      *end != '\0' || errno == ERANGE || x < lo || x > hi) {
    return Status::InvalidArgument(std::string(what) + ": expected an integer in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + s +
                                   "'");
  }
  return static_cast<int>(x);
}

Result<bool> ParseBool(std::string_view what, std::string_view v) {
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return Status::InvalidArgument(std::string(what) + ": expected 0/1, got '" + std::string(v) +
                                 "'");
}

// Applies one option (name without "--ukai-"; value possibly empty when absent).
Status ApplyOption(std::string_view name, std::string_view value, bool has_value,
                   RuntimeOptions* o) {
  const std::string what = "--ukai-" + std::string(name);
  if (name == "modules") {
    o->modules = SplitList(value);
    if (o->modules.empty()) {
      return Status::InvalidArgument(what + ": needs at least one module name, got '" +
                                     std::string(value) + "'");
    }
  } else if (name == "bootstrap") {
    if (value.empty()) return Status::InvalidArgument(what + ": needs a name");
    o->bootstrap = std::string(value);
  } else if (name == "trace") {
    Result<bool> b = has_value ? ParseBool(what, value) : Result<bool>(true);
    if (!b.ok()) return b.status();
    o->trace = *b;
  } else if (name == "progress-thread") {
    Result<bool> b = ParseBool(what, value);
    if (!b.ok()) return b.status();
    o->progress_thread = *b;
  } else if (name == "handler-threads") {
    Result<int> n = ParseInt(what, value, 1, kMaxHandlerThreads);
    if (!n.ok()) return n.status();
    o->handler_threads = *n;
  } else if (name == "handler-threads-max") {
    Result<int> n = ParseInt(what, value, 1, kMaxHandlerThreads);
    if (!n.ok()) return n.status();
    o->handler_threads_max = *n;
  } else if (name == "job-secret-file") {
    if (value.empty()) return Status::InvalidArgument(what + ": needs a path");
    o->job_secret_file = std::string(value);
  } else if (name == "spin-us") {
    Result<int> n = ParseInt(what, value, 0, kMaxSpinUs);
    if (!n.ok()) return n.status();
    o->spin_us = *n;
  } else if (name == "param") {
    size_t eq = value.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Status::InvalidArgument(what + ": expected KEY=VALUE, got '" + std::string(value) +
                                     "'");
    }
    o->params[std::string(value.substr(0, eq))] = std::string(value.substr(eq + 1));
  } else if (name == "send-queue-bytes") {  // flow control (flow_control.cc)
    Result<int> n = ParseInt(what, value, 0);
    if (!n.ok()) return n.status();
    o->send_queue_bytes = static_cast<uint64_t>(*n);
  } else if (name == "pin") {  // fast defaults (fast_defaults.cc)
    if (value != "auto" && value != "core" && value != "off") {
      return Status::InvalidArgument(what + ": expected auto, core or off, got '" +
                                     std::string(value) + "'");
    }
    o->pin = std::string(value);
  } else if (name == "otf2") {  // OTF2 recording (src/rt/trace/)
    if (value.empty()) return Status::InvalidArgument(what + ": needs a directory");
    o->otf2 = std::string(value);
  } else if (name == "sim-fd" || name == "sim-rank") {  // set by `ukai launch --sim`
    Result<int> n = ParseInt(what, value, 0);
    if (!n.ok()) return n.status();
    o->params[name == "sim-fd" ? "sim.fd" : "sim.rank"] = std::to_string(*n);
  } else if (name == "flush-timeout-ms") {
    Result<int> n = ParseInt(what, value, 0);
    if (!n.ok()) return n.status();
    o->flush_timeout_ms = *n;
  } else {
    return Status::InvalidArgument(
        "unknown option " + what +
        " (known: --ukai-modules, --ukai-bootstrap, --ukai-trace, --ukai-progress-thread, "
        "--ukai-handler-threads, --ukai-handler-threads-max, --ukai-spin-us, --ukai-param, "
        "--ukai-send-queue-bytes, --ukai-flush-timeout-ms, --ukai-pin, "
        "--ukai-job-secret-file, --ukai-otf2)");
  }
  return Status::Ok();
}

}  // namespace

Status CheckRuntimeOptions(const RuntimeOptions& o) {
  if (o.handler_threads < 1 || o.handler_threads > kMaxHandlerThreads) {
    return Status::InvalidArgument("handler_threads must be in [1, " +
                                   std::to_string(kMaxHandlerThreads) + "] (got " +
                                   std::to_string(o.handler_threads) + ")");
  }
  if (o.handler_threads_max < 1 || o.handler_threads_max > kMaxHandlerThreads) {
    return Status::InvalidArgument("handler_threads_max must be in [1, " +
                                   std::to_string(kMaxHandlerThreads) + "] (got " +
                                   std::to_string(o.handler_threads_max) + ")");
  }
  if (o.spin_us < 0 || o.spin_us > kMaxSpinUs) {
    return Status::InvalidArgument("spin_us must be in [0, " + std::to_string(kMaxSpinUs) +
                                   "] (got " + std::to_string(o.spin_us) + ")");
  }
  return Status::Ok();
}

Status ParseRuntimeArgs(int& argc, char** argv, RuntimeOptions* options) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.substr(0, 7) != "--ukai-") {
      argv[out++] = argv[i];
      continue;
    }
    a.remove_prefix(7);
    size_t eq = a.find('=');
    std::string_view name = a.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : a.substr(eq + 1);
    bool has_value = eq != std::string_view::npos;
    if (!has_value && name != "trace") {  // "--ukai-NAME VALUE": the value is the next word
      if (i + 1 >= argc || std::string_view(argv[i + 1]).substr(0, 2) == "--") {
        return Status::InvalidArgument("--ukai-" + std::string(name) + ": needs a value (--ukai-" +
                                       std::string(name) + "=VALUE or --ukai-" + std::string(name) +
                                       " VALUE)");
      }
      value = argv[++i];
      has_value = true;
    }
    UKAI_RETURN_IF_ERROR(ApplyOption(name, value, has_value, options));
  }
  for (int i = out; i < argc; ++i) argv[i] = nullptr;
  argc = out;
  return Status::Ok();
}

Status ApplyRuntimeEnv(RuntimeOptions* options) {
  struct Var {
    const char* env;
    const char* option;
  };
  static constexpr Var kVars[] = {{"UKAI_MODULES", "modules"},
                                  {"UKAI_BOOTSTRAP", "bootstrap"},
                                  {"UKAI_TRACE", "trace"},
                                  {"UKAI_HANDLER_THREADS", "handler-threads"},
                                  {"UKAI_HANDLER_THREADS_MAX", "handler-threads-max"},
                                  {"UKAI_JOB_SECRET_FILE", "job-secret-file"},
                                  {"UKAI_SPIN_US", "spin-us"},
                                  {"UKAI_SEND_QUEUE_BYTES", "send-queue-bytes"},
                                  {"UKAI_FLUSH_TIMEOUT_MS", "flush-timeout-ms"},
                                  {"UKAI_PIN", "pin"},
                                  {"UKAI_OTF2", "otf2"},
                                  {"UKAI_SIM_FD", "sim-fd"},
                                  {"UKAI_SIM_RANK", "sim-rank"}};
  for (const Var& v : kVars) {
    const char* value = std::getenv(v.env);
    if (value == nullptr) continue;
    Status st = ApplyOption(v.option, value, true, options);
    if (!st.ok()) return st.WithContext(std::string("environment ") + v.env);
  }
  return Status::Ok();
}

}  // namespace ukai::rt
