// The BookSim2 key table behind the BookSim config reader (booksim_reader.h): the context a
// mapped key's function sees (every BookSim2 key's value: written, else BookSim2's default)
// and the lookup of one row. Internal to the reader.
//
// Thread safety: a context is used by one reader call.
#ifndef UKAI_SIM_EXPERIMENT_BOOKSIM_KEYS_H_
#define UKAI_SIM_EXPERIMENT_BOOKSIM_KEYS_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/config/raw_config.h"
#include "sim/experiment/booksim_reader.h"

namespace ukai::sim {

using BooksimWritten = std::map<std::string, BooksimStatement, std::less<>>;

class BooksimContext {
 public:
  BooksimContext(const std::string& source, const BooksimWritten* written, config::RawConfig* raw)
      : source_(source), written_(*written), raw_(*raw) {}

  // The value of the BookSim2 key `key`: as written (the last statement), else its default.
  std::string Value(std::string_view key) const;
  bool Written(std::string_view key) const { return written_.count(key) != 0; }
  // Where `key` was written, or "in FILE (BookSim2's default of key = value)".
  config::Origin OriginOf(std::string_view key) const;
  // The value of `key` as an integer / a number; kInvalidArgument naming key and place.
  Result<int64_t> Int(std::string_view key) const;
  Result<double> Number(std::string_view key) const;
  // Sets our dotted key `ours` to `value`, placed where the BookSim2 key `from` was written.
  Status Set(std::string_view ours, config::Scalar value, std::string_view from);
  Status SetList(std::string_view ours, const std::vector<config::Scalar>& values,
                 std::string_view from);
  // kInvalidArgument "key: message at FILE:LINE:COL" with key() = the BookSim2 key.
  Status Error(std::string_view key, std::string_view message) const;

 private:
  const std::string& source_;
  const BooksimWritten& written_;
  config::RawConfig& raw_;
};

// The row of `name`, or nullptr when it is not a BookSim2 key.
const BooksimKey* FindBooksimKey(std::string_view name);

// Applies one row: maps it, or checks that its value is the default (kDefaultOnly), or that
// it is not written with another value than the default (kRefused).
Status ApplyBooksimKey(const BooksimKey& key, BooksimContext& context);

// The rows that depend on the BookSim2 topology (booksim_topology.cc).
Status MapBooksimTopology(BooksimContext& c);
Status MapBooksimK(BooksimContext& c);
Status MapBooksimN(BooksimContext& c);
Status MapBooksimConcentration(BooksimContext& c);
Status CheckBooksimLayout(BooksimContext& c, std::string_view key);
Status MapBooksimRouting(BooksimContext& c);
Status MapBooksimNocLatency(BooksimContext& c);
Status MapBooksimNetworkFile(BooksimContext& c);
// OK when the traffic pattern is one the reader maps on the file's topology.
Status CheckBooksimTrafficOnTopology(BooksimContext& c);

// The elements of a BookSim2 list value "{a, b}" (one element when not a list).
std::vector<std::string> SplitBooksimList(std::string_view value);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_BOOKSIM_KEYS_H_
