#include "sim/experiment/booksim_summary.h"

#include <fmt/format.h>

#include <string>
#include <variant>

#include "sim/experiment/flit_fields.h"

namespace ukai::sim {
namespace {

// A double as a C++ stream prints it by default (%g, 6 significant digits).
std::string Num(double v) { return fmt::format("{:g}", v); }

double NumberOf(const output::Field* f) {
  if (f == nullptr) return 0;
  if (const double* d = std::get_if<double>(f)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(f)) return static_cast<double>(*i);
  return 0;
}

class BooksimSummaryWriter : public output::RecordWriter {
 public:
  explicit BooksimSummaryWriter(std::ostream* out) : out_(*out) {}

  Status Write(const output::Record& rec) override {
    const output::Field* unstable = rec.Find("unstable");
    if (unstable == nullptr) {
      return Status::InvalidArgument(
                 "--format booksim: the point has no BookSim2 statistics (it needs "
                 "measure.mode = \"booksim\" or \"booksim_throughput\")")
          .WithKey("measure.mode");
    }
    std::string text;
    if (const output::Field* log = rec.Find("booksim_log")) {
      if (const std::string* s = std::get_if<std::string>(log)) text += *s;
    }
    const bool is_unstable = std::get_if<bool>(unstable) != nullptr && std::get<bool>(*unstable);
    if (is_unstable) {
      text += "Simulation unstable, ending ...\n";
    } else {
      text += fmt::format("Time taken is {} cycles\n",
                          static_cast<int64_t>(NumberOf(rec.Find("cycles"))));
      text += "====== Overall Traffic Statistics ======\n====== Traffic class 0 ======\n";
      for (const BooksimLine& line : BooksimSummaryLines()) {
        const std::string f(line.field);
        text +=
            fmt::format("{} = {} (1 samples)\n", line.label, Num(NumberOf(rec.Find(f + "_avg"))));
        text += fmt::format("\tminimum = {} (1 samples)\n", Num(NumberOf(rec.Find(f + "_min"))));
        text += fmt::format("\tmaximum = {} (1 samples)\n", Num(NumberOf(rec.Find(f + "_max"))));
      }
      const double sent_p = NumberOf(rec.Find("injected_packet_rate_avg"));
      const double acc_p = NumberOf(rec.Find("accepted_packet_rate_avg"));
      text += fmt::format("Injected packet size average = {} (1 samples)\n",
                          Num(NumberOf(rec.Find("injected_flit_rate_avg")) / sent_p));
      text += fmt::format("Accepted packet size average = {} (1 samples)\n",
                          Num(NumberOf(rec.Find("accepted_flit_rate_avg")) / acc_p));
      text += fmt::format("Hops average = {} (1 samples)\n",
                          Num(NumberOf(rec.Find("router_hops_avg"))));
    }
    text += fmt::format("Total run time {}\n", Num(NumberOf(rec.Find("wall_seconds"))));
    out_ << text << std::flush;
    if (!out_) return Status::IoError("cannot write the BookSim2 summary");
    return Status::Ok();
  }

 private:
  std::ostream& out_;
};

}  // namespace

std::unique_ptr<output::RecordWriter> MakeBooksimSummaryWriter(std::ostream* out) {
  return std::make_unique<BooksimSummaryWriter>(out);
}

}  // namespace ukai::sim
