// The JSON Lines writer: the one place of src/core/output that includes nlohmann-json.
#include <nlohmann/json.hpp>

#include <string>
#include <type_traits>

#include "core/output/writer.h"

namespace ukai::output {
namespace {

class JsonWriter : public RecordWriter {
 public:
  explicit JsonWriter(std::ostream* out) : out_(out) {}

  Status Write(const Record& r) override {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (const auto& [name, value] : r.fields()) {
      std::visit(
          [&obj, &n = name](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, NoValue>) {
              obj[n] = nullptr;
            } else if constexpr (std::is_same_v<T, JsonText>) {
              // Invalid text (a producer's bug) is written as a string rather than thrown.
              obj[n] = nlohmann::ordered_json::parse(v.text, nullptr, /*allow_exceptions=*/false);
              if (obj[n].is_discarded()) obj[n] = v.text;
            } else {
              obj[n] = v;
            }
          },
          value);
    }
    // Replace invalid UTF-8 rather than throw: a name from a config must not abort output.
    *out_ << obj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n'
          << std::flush;
    return out_->good() ? Status::Ok() : Status::IoError("write failed");
  }

 private:
  std::ostream* out_;
};

}  // namespace

std::unique_ptr<RecordWriter> MakeJsonWriter(std::ostream* out) {
  return std::make_unique<JsonWriter>(out);
}

}  // namespace ukai::output
