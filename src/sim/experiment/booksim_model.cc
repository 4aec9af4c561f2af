#include "sim/experiment/booksim_model.h"

#include <string>

#include "core/config/enum_names.h"

namespace ukai::sim {
namespace {

using config::KeySpec;
using VT = config::ValueType;

constexpr config::EnumName<RouterModel> kRouterModels[] = {{RouterModel::kUkai, "ukai"},
                                                           {RouterModel::kBooksim, "booksim"}};
constexpr config::EnumName<VcAllocator> kVcAllocators[] = {
    {VcAllocator::kAuto, "auto"},
    {VcAllocator::kMaxCredit, "max_credit"},
    {VcAllocator::kIslip, "islip"},
    {VcAllocator::kSeparableInputFirst, "separable_input_first"}};

// One int key: its spec and where it goes.
struct IntKey {
  std::string_view key, unit, doc;
  int64_t min, max;
  int64_t (*get)(const SimConfig& c);
  void (*set)(int64_t v, SimConfig* c);
};

constexpr std::string_view kStage = "BookSim2 iq router stage delay (with router.model = booksim)";

constexpr IntKey kIntKeys[] = {
    {"router.routing_delay", "cycles", "routing stage (BookSim2 routing_delay)", 0, 1000,
     [](const SimConfig& c) -> int64_t { return c.router.routing_delay; },
     [](int64_t v, SimConfig* c) { c->router.routing_delay = static_cast<int>(v); }},
    {"router.vc_alloc_delay", "cycles", "VC allocation stage (BookSim2 vc_alloc_delay)", 0, 1000,
     [](const SimConfig& c) -> int64_t { return c.router.vc_alloc_delay; },
     [](int64_t v, SimConfig* c) { c->router.vc_alloc_delay = static_cast<int>(v); }},
    {"router.sw_alloc_delay", "cycles", "switch allocation stage (BookSim2 sw_alloc_delay)", 0,
     1000, [](const SimConfig& c) -> int64_t { return c.router.sw_alloc_delay; },
     [](int64_t v, SimConfig* c) { c->router.sw_alloc_delay = static_cast<int>(v); }},
    {"router.st_prepare_delay", "cycles",
     "switch traversal preparation (BookSim2 st_prepare_delay)", 0, 1000,
     [](const SimConfig& c) -> int64_t { return c.router.st_prepare_delay; },
     [](int64_t v, SimConfig* c) { c->router.st_prepare_delay = static_cast<int>(v); }},
    {"router.st_final_delay", "cycles", "switch traversal (BookSim2 st_final_delay)", 0, 1000,
     [](const SimConfig& c) -> int64_t { return c.router.st_final_delay; },
     [](int64_t v, SimConfig* c) { c->router.st_final_delay = static_cast<int>(v); }},
    {"router.credit_delay", "cycles",
     "cycles a credit waits in the router it returns to, after its credit channel (as long "
     "as the data channel) (BookSim2 credit_delay)",
     0, 1000, [](const SimConfig& c) -> int64_t { return c.router.credit_delay; },
     [](int64_t v, SimConfig* c) { c->router.credit_delay = static_cast<int>(v); }},
    {"measure.warmup_periods", "sample periods",
     "booksim modes: sample periods of warm-up before measuring (BookSim2 warmup_periods)", 1,
     int64_t{1} << 40, [](const SimConfig& c) -> int64_t { return c.measure.warmup_periods; },
     [](int64_t v, SimConfig* c) { c->measure.warmup_periods = v; }},
    {"measure.max_samples", "sample periods",
     "booksim modes: most sample periods, warm-up included, before the run is called unstable "
     "(BookSim2 max_samples)",
     1, int64_t{1} << 40, [](const SimConfig& c) -> int64_t { return c.measure.max_samples; },
     [](int64_t v, SimConfig* c) { c->measure.max_samples = v; }},
};

struct FloatKey {
  std::string_view key, unit, doc;
  double (*get)(const SimConfig& c);
  void (*set)(double v, SimConfig* c);
};

constexpr FloatKey kFloatKeys[] = {
    {"measure.latency_threshold", "cycles",
     "booksim mode: a sample whose mean packet latency (in-flight packets counted at their "
     "age) exceeds this ends the run as unstable (BookSim2 latency_thres); < 0: never",
     [](const SimConfig& c) { return c.measure.latency_threshold; },
     [](double v, SimConfig* c) { c->measure.latency_threshold = v; }},
    {"measure.stopping_threshold", "",
     "booksim mode: a sample period converges when the mean packet latency changed by at most "
     "this fraction (BookSim2 stopping_thres); < 0: not checked",
     [](const SimConfig& c) { return c.measure.stopping_threshold; },
     [](double v, SimConfig* c) { c->measure.stopping_threshold = v; }},
    {"measure.accepted_stopping_threshold", "",
     "booksim modes: ... and the accepted rate by at most this fraction (BookSim2 "
     "acc_stopping_thres); < 0: not checked",
     [](const SimConfig& c) { return c.measure.accepted_stopping_threshold; },
     [](double v, SimConfig* c) { c->measure.accepted_stopping_threshold = v; }},
};

}  // namespace

std::string_view RouterModelName(RouterModel m) { return config::ToName(kRouterModels, m); }

std::string_view VcAllocatorName(VcAllocator a) { return config::ToName(kVcAllocators, a); }

std::vector<KeySpec> BooksimKeySpecs() {
  const SimConfig d;
  std::vector<KeySpec> out;
  out.push_back(KeySpec::Make("router.model", VT::kEnum)
                    .Allowed(config::Names(kRouterModels))
                    .Default(std::string(RouterModelName(d.router.model)))
                    .Doc("router timing: ukai (router.hop_cycles per router) or booksim "
                         "(BookSim2's iq router: the stage delays below replace "
                         "router.hop_cycles, and every message crosses a 1-cycle injection "
                         "and a 1-cycle ejection channel; docs/booksim.md)"));
  for (const IntKey& k : kIntKeys) {
    std::string doc(k.doc);
    if (k.key.starts_with("router.")) doc += std::string("; ") + std::string(kStage);
    out.push_back(KeySpec::Make(std::string(k.key), VT::kInt)
                      .Unit(std::string(k.unit))
                      .Min(static_cast<double>(k.min))
                      .Max(static_cast<double>(k.max))
                      .Default(std::to_string(k.get(d)))
                      .Doc(std::move(doc)));
  }
  out.push_back(KeySpec::Make("router.speculative", VT::kBool)
                    .Default(d.router.speculative ? "true" : "false")
                    .Doc("router.model = booksim: switch allocation runs beside VC allocation "
                         "(the longer of the two counts; BookSim2 speculative = 1)"));
  out.push_back(
      KeySpec::Make("router.vc_allocator", VT::kEnum)
          .Allowed(config::Names(kVcAllocators))
          .Default(std::string(config::ToName(kVcAllocators, d.router.vc_allocator)))
          .Doc("how a routed head gets an output VC: max_credit (ukai's: the most preferred "
               "routing tier with a free VC, the VC with the most credits in it), islip "
               "(BookSim2's islip, one iteration: every free candidate VC requested, the "
               "routing's preference ignored, round-robin grants and accepts), "
               "separable_input_first (BookSim2's: the most preferred free VC, round-robin "
               "within a tier, round-robin per output VC); auto: islip with router.model = "
               "booksim (BookSim2's default vc_allocator), else max_credit"));
  for (const FloatKey& k : kFloatKeys) {
    out.push_back(KeySpec::Make(std::string(k.key), VT::kFloat)
                      .Unit(std::string(k.unit))
                      .Min(-1e12)
                      .Max(1e12)
                      .Default(config::ScalarToString(config::Scalar(k.get(d))))
                      .Doc(std::string(k.doc)));
  }
  return out;
}

void ReadBooksimModelConfig(const config::ConfigValues& values, SimConfig* c) {
  if (const config::Value* v = values.Find("router.model")) {
    c->router.model = config::FromName(kRouterModels, v->items[0]);
  }
  for (const IntKey& k : kIntKeys) {
    if (const config::Value* v = values.Find(k.key)) k.set(std::get<int64_t>(v->items[0]), c);
  }
  if (const config::Value* v = values.Find("router.speculative")) {
    c->router.speculative = std::get<bool>(v->items[0]);
  }
  if (const config::Value* v = values.Find("router.vc_allocator")) {
    c->router.vc_allocator = config::FromName(kVcAllocators, v->items[0]);
  }
  for (const FloatKey& k : kFloatKeys) {
    if (const config::Value* v = values.Find(k.key)) k.set(std::get<double>(v->items[0]), c);
  }
  if (c->router.model == RouterModel::kBooksim) c->router.hop_cycles = BooksimHopCycles(c->router);
}

}  // namespace ukai::sim
