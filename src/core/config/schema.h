// Typed configuration schemas: the description of every key a config file may hold (its
// type, shape, unit, default, allowed range and a one-line meaning), the parsed values of
// one config with the place each came from, and the checks that turn a raw value into a
// validated one. The TOML reader (config/toml_reader.h) and `--set key=value` overrides
// both produce `ConfigValues` checked against a `Schema`; a consumer (for example
// sim/experiment/config_schema.h) then copies the values into its typed options struct,
// whose defaults stay written in the struct itself.
//
// Error messages always name the key and where the value came from:
//   "router.vcs: value 0 out of range [1, 64] at quick.toml:4:7"
//   "routr.vcs: unknown key (did you mean 'router.vcs'?) at quick.toml:3:1"
//   "router.vcs: expected an integer, got a string (\"four\") in --set router.vcs=four"
//
// Thread safety: plain values; a const Schema may be shared between threads.
#ifndef UKAI_CORE_CONFIG_SCHEMA_H_
#define UKAI_CORE_CONFIG_SCHEMA_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"

namespace ukai::config {

// The type of one item of a value.
enum class ValueType {
  kInt,     // TOML integer (64-bit)
  kFloat,   // TOML float; an integer is accepted and converted
  kString,  // any string
  kBool,    // true / false
  kEnum,    // a string from KeySpec::allowed
  // Any TOML value, nested lists and inline tables included (Value::tree holds it; the
  // consumer checks its form, e.g. faults.nodes = [[3, 4], [7, 1]]). Shape is ignored.
  kStructured,
};

// How many items a key takes.
enum class Shape {
  kScalar,  // exactly one item; a list is an error
  kList,    // one item or a non-empty list; the whole list is the value (e.g. a radix per
            // dimension). A single item stands for a list of one.
  kSweep,   // one item or a non-empty list; a list asks for one run per item (a sweep)
};

// The description of one key.
struct KeySpec {
  std::string key;  // dotted path, e.g. "router.vcs"; top-level keys have no dot
  ValueType type = ValueType::kInt;
  Shape shape = Shape::kScalar;
  std::string unit;           // "cycles", "flits", "bytes", "" when dimensionless
  std::string default_text;   // the default as printed by describe ("4", "torus")
  std::optional<double> min;  // inclusive lower bound of numbers (exclusive if min_open)
  std::optional<double> max;  // inclusive upper bound of numbers (exclusive if max_open)
  bool min_open = false;
  bool max_open = false;
  std::vector<std::string> allowed;  // kEnum: the accepted names, in the order printed
  std::string doc;                   // one line: what the key means

  // Builder: KeySpec::Make("router.vcs", ValueType::kInt).Min(1).Max(64).Doc("...").
  static KeySpec Make(std::string key, ValueType type, Shape shape = Shape::kScalar) {
    KeySpec k;
    k.key = std::move(key);
    k.type = type;
    k.shape = shape;
    return k;
  }
  KeySpec& Unit(std::string u) { return unit = std::move(u), *this; }
  KeySpec& Default(std::string d) { return default_text = std::move(d), *this; }
  KeySpec& Min(double v, bool open = false) { return min = v, min_open = open, *this; }
  KeySpec& Max(double v, bool open = false) { return max = v, max_open = open, *this; }
  KeySpec& Allowed(std::vector<std::string> a) { return allowed = std::move(a), *this; }
  KeySpec& Doc(std::string d) { return doc = std::move(d), *this; }

  // "int", "float", "enum", "int or list of int", "float or list of float (sweep)", ...
  std::string TypeName() const;
  // "[1, 64]", "(0, 1]", ">= 0", "mesh | torus", or "" when anything goes.
  std::string RangeText() const;
};

// One item of a value.
using Scalar = std::variant<int64_t, double, bool, std::string>;

// Where a value came from: a position in a file or a `--set` argument.
struct Origin {
  std::string source;  // the file path, or the whole "--set key=value" argument
  int line = 0;        // 1-based; 0 when the value did not come from a file
  int column = 0;      // 1-based
  // "at quick.toml:4:7", or "in --set router.vcs=0" when line == 0.
  std::string Where() const;
};

// A value as written, before any schema check: a scalar, a list or a table, each part with
// the place it came from. A whole config as read (config/raw_config.h) is a kTable; a
// structured value (ValueType::kStructured) keeps its Tree as written.
struct Tree {
  enum class Kind {
    kScalar,
    kList,
    kTable,
    kOther,  // a value no key takes (a TOML date or time): `other` says what it is
  };
  Kind kind = Kind::kScalar;
  Scalar scalar;                     // kScalar
  std::vector<Tree> items;           // kList: the elements; kTable: the field values
  std::vector<std::string> names;    // kTable: the field names (same order as items)
  std::vector<Origin> name_origins;  // kTable: where each name was written (may be empty)
  std::string other;                 // kOther: "a date", "a time", "a date-time"
  Origin origin;
  // An empty tree of `kind` (an empty table to fill, for a reader).
  static Tree Of(Kind kind) {
    Tree t;
    t.kind = kind;
    return t;
  }
  // The field called `name` of a table, or nullptr.
  const Tree* Field(std::string_view name) const;
  // What the value is, for messages: "a table", "a list", "a date", or "a value" (a scalar).
  std::string_view KindName() const;
};

// A value as written: one item, or a list of items (kStructured: `tree`, no items).
struct Value {
  std::vector<Scalar> items;
  bool is_list = false;  // written as a TOML array
  Origin origin;
  Tree tree = {};  // kStructured only
};

// The set of keys of one config and their meaning.
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<KeySpec> keys) : keys_(std::move(keys)) {}

  const std::vector<KeySpec>& keys() const { return keys_; }
  // The spec of `key`, or nullptr.
  const KeySpec* Find(std::string_view key) const;
  // True when `prefix` names a table of keys ("router" for "router.vcs").
  bool IsTable(std::string_view prefix) const;
  // The known key closest to `key` (small edit distance, or the same last component), or
  // "" when none is close.
  std::string Suggest(std::string_view key) const;

  // A key this schema does not take but recognises: it is refused with `why` ("needs
  // network.topology = \"fullmesh\"") instead of "unknown key". The front door
  // (sim/experiment/front_door.h) adds the keys of the other machine models.
  void Refuse(std::string key, std::string why);
  // The reason `key` is refused, or nullptr.
  const std::string* RefusalOf(std::string_view key) const;
  // Every refused key with its reason.
  const std::vector<std::pair<std::string, std::string>>& refusals() const { return refused_; }

 private:
  std::vector<KeySpec> keys_;
  std::vector<std::pair<std::string, std::string>> refused_;
};

// "key: message where" (the format of every config error), carrying `key` as Status::key().
Status KeyError(std::string_view key, std::string_view message, const Origin& origin);

// "key: unknown key (did you mean 'router.vcs'?) where", or the schema's refusal of the key
// ("key: needs network.topology = \"fullmesh\" where").
Status UnknownKey(const Schema& schema, std::string_view key, const Origin& origin);

// At most this many problems are listed; the rest are counted ("... and 12 more errors").
inline constexpr size_t kMaxListedErrors = 30;

// kInvalidArgument listing `errors` one per line (the first kMaxListedErrors, then how many
// more there were); Ok when `errors` is empty.
Status ErrorList(const std::vector<std::string>& errors);
// ErrorList for Status values: one error is returned as it is (with its key()); several are listed
// one per line as above.
Status CombineErrors(const std::vector<Status>& errors);

// Checks `value` against `spec` (shape, item types, ranges, enum names) and converts
// integer items of float keys to double. Returns the error naming key and origin.
Status CheckValue(const KeySpec& spec, Value* value);

// The validated values of one config, keyed by full dotted key. Keys absent here take
// their default from the consumer's options struct.
class ConfigValues {
 public:
  const Value* Find(std::string_view key) const;
  // Sets or replaces (a later `--set` replaces the file's value).
  void Set(const std::string& key, Value value) { values_[key] = std::move(value); }
  const std::map<std::string, Value, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, Value, std::less<>> values_;
};

// Renders a Scalar as TOML would write it ("4", "0.25", "true", "\"dor\"" when quote).
std::string ScalarToString(const Scalar& s, bool quote_strings = false);

// Text reference of `schema`: one block per key with type, unit, default, range and doc.
std::string DescribeText(const Schema& schema);
// Markdown reference: one table row per key (key | type | unit | default | range | doc).
std::string DescribeMarkdown(const Schema& schema);

}  // namespace ukai::config

#endif  // UKAI_CORE_CONFIG_SCHEMA_H_
