#include "core/config/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ukai::config {
namespace {

std::string_view ItemTypeName(ValueType t) {
  switch (t) {
    case ValueType::kInt:
      return "int";
    case ValueType::kFloat:
      return "float";
    case ValueType::kString:
      return "string";
    case ValueType::kBool:
      return "bool";
    case ValueType::kEnum:
      return "enum";
    case ValueType::kStructured:
      return "list";
  }
  return "?";
}

// "an integer", "a float", ...: for "expected ..." messages.
std::string_view ExpectedName(ValueType t) {
  switch (t) {
    case ValueType::kInt:
      return "an integer";
    case ValueType::kFloat:
      return "a number";
    case ValueType::kString:
    case ValueType::kEnum:
      return "a string";
    case ValueType::kBool:
      return "a boolean (true or false)";
    case ValueType::kStructured:
      return "a list";
  }
  return "?";
}

std::string DescribeScalar(const Scalar& s) {
  if (std::holds_alternative<int64_t>(s)) return "an integer (" + ScalarToString(s) + ")";
  if (std::holds_alternative<double>(s)) return "a float (" + ScalarToString(s) + ")";
  if (std::holds_alternative<bool>(s)) return "a boolean (" + ScalarToString(s) + ")";
  return "a string (" + ScalarToString(s, true) + ")";
}

std::string FormatBound(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", int64_t(v));
  return fmt::format("{}", v);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view LastComponent(std::string_view key) {
  size_t dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

bool InRange(const KeySpec& spec, double v) {
  if (spec.min && (spec.min_open ? !(v > *spec.min) : !(v >= *spec.min))) return false;
  if (spec.max && (spec.max_open ? !(v < *spec.max) : !(v <= *spec.max))) return false;
  return true;
}

// Checks one item; converts an integer to double for float keys.
Status CheckItem(const KeySpec& spec, Scalar* item, const Origin& origin) {
  switch (spec.type) {
    case ValueType::kFloat:
      if (auto* i = std::get_if<int64_t>(item)) *item = static_cast<double>(*i);
      [[fallthrough]];
    case ValueType::kInt: {
      bool ok = spec.type == ValueType::kInt ? std::holds_alternative<int64_t>(*item)
                                             : std::holds_alternative<double>(*item);
      if (!ok) {
        return KeyError(
            spec.key,
            fmt::format("expected {}, got {}", ExpectedName(spec.type), DescribeScalar(*item)),
            origin);
      }
      double v = spec.type == ValueType::kInt ? static_cast<double>(std::get<int64_t>(*item))
                                              : std::get<double>(*item);
      if (!std::isfinite(v)) {
        return KeyError(spec.key, fmt::format("{} is not a finite number", ScalarToString(*item)),
                        origin);
      }
      if (!InRange(spec, v)) {
        return KeyError(
            spec.key,
            fmt::format("value {} out of range {}", ScalarToString(*item), spec.RangeText()),
            origin);
      }
      return Status::Ok();
    }
    case ValueType::kBool:
      if (!std::holds_alternative<bool>(*item)) {
        return KeyError(
            spec.key,
            fmt::format("expected {}, got {}", ExpectedName(spec.type), DescribeScalar(*item)),
            origin);
      }
      return Status::Ok();
    case ValueType::kString:
    case ValueType::kEnum:
      break;
    case ValueType::kStructured:
      return Status::Ok();  // the consumer checks the form
  }
  const std::string* s = std::get_if<std::string>(item);
  if (s == nullptr) {
    return KeyError(
        spec.key,
        fmt::format("expected {}, got {}", ExpectedName(spec.type), DescribeScalar(*item)), origin);
  }
  if (spec.type == ValueType::kEnum &&
      std::find(spec.allowed.begin(), spec.allowed.end(), *s) == spec.allowed.end()) {
    std::string msg = fmt::format("'{}' is not one of {}", *s, fmt::join(spec.allowed, ", "));
    std::string best;
    size_t best_d = 3;
    for (const std::string& a : spec.allowed) {
      size_t d = EditDistance(*s, a);
      if (d < best_d) best_d = d, best = a;
    }
    if (!best.empty()) msg += fmt::format(" (did you mean '{}'?)", best);
    return KeyError(spec.key, msg, origin);
  }
  return Status::Ok();
}

}  // namespace

std::string KeySpec::TypeName() const {
  std::string item(ItemTypeName(type));
  if (type == ValueType::kStructured) return item;
  switch (shape) {
    case Shape::kScalar:
      return item;
    case Shape::kList:
      return item + " or list of " + item;
    case Shape::kSweep:
      return item + " or list of " + item + " (sweep)";
  }
  return item;
}

std::string KeySpec::RangeText() const {
  if (type == ValueType::kEnum) return fmt::format("{}", fmt::join(allowed, " | "));
  if (min && max) {
    return fmt::format("{}{}, {}{}", min_open ? "(" : "[", FormatBound(*min), FormatBound(*max),
                       max_open ? ")" : "]");
  }
  if (min) return fmt::format("{} {}", min_open ? ">" : ">=", FormatBound(*min));
  if (max) return fmt::format("{} {}", max_open ? "<" : "<=", FormatBound(*max));
  return "";
}

std::string Origin::Where() const {
  if (line == 0) return "in " + source;
  return fmt::format("at {}:{}:{}", source, line, column);
}

const KeySpec* Schema::Find(std::string_view key) const {
  for (const KeySpec& k : keys_) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

bool Schema::IsTable(std::string_view prefix) const {
  for (const KeySpec& k : keys_) {
    if (k.key.size() > prefix.size() && k.key.compare(0, prefix.size(), prefix) == 0 &&
        k.key[prefix.size()] == '.') {
      return true;
    }
  }
  return false;
}

std::string Schema::Suggest(std::string_view key) const {
  std::string best;
  size_t best_d = std::max<size_t>(3, key.size() / 4 + 1);
  for (const KeySpec& k : keys_) {
    size_t d = EditDistance(key, k.key);
    if (d < best_d) best_d = d, best = k.key;
  }
  if (!best.empty()) return best;
  // "vcs" written at the top level, or in the wrong table: same last component.
  for (const KeySpec& k : keys_) {
    if (LastComponent(k.key) == LastComponent(key)) return k.key;
  }
  return "";
}

Status KeyError(std::string_view key, std::string_view message, const Origin& origin) {
  return Status::InvalidArgument(fmt::format("{}: {} {}", key, message, origin.Where()))
      .WithKey(std::string(key));
}

void Schema::Refuse(std::string key, std::string why) {
  refused_.emplace_back(std::move(key), std::move(why));
}

const std::string* Schema::RefusalOf(std::string_view key) const {
  for (const auto& [k, why] : refused_) {
    if (k == key) return &why;
  }
  return nullptr;
}

std::string_view Tree::KindName() const {
  switch (kind) {
    case Kind::kTable:
      return "a table";
    case Kind::kList:
      return "a list";
    case Kind::kOther:
      return other;
    case Kind::kScalar:
      break;
  }
  return "a value";
}

Status UnknownKey(const Schema& schema, std::string_view key, const Origin& origin) {
  if (const std::string* why = schema.RefusalOf(key)) return KeyError(key, *why, origin);
  std::string suggestion = schema.Suggest(key);
  std::string msg = "unknown key";
  if (!suggestion.empty()) msg += fmt::format(" (did you mean '{}'?)", suggestion);
  return KeyError(key, msg, origin);
}

const Tree* Tree::Field(std::string_view name) const {
  for (size_t i = 0; i < names.size() && i < items.size(); ++i) {
    if (names[i] == name) return &items[i];
  }
  return nullptr;
}

Status ErrorList(const std::vector<std::string>& errors) {
  if (errors.empty()) return Status::Ok();
  const size_t shown = std::min(errors.size(), kMaxListedErrors);
  std::string text = fmt::format(
      "{}", fmt::join(errors.begin(), errors.begin() + static_cast<std::ptrdiff_t>(shown), "\n"));
  if (shown < errors.size()) {
    text += fmt::format("\n... and {} more errors (the first {} are listed)", errors.size() - shown,
                        shown);
  }
  return Status::InvalidArgument(std::move(text));
}

Status CombineErrors(const std::vector<Status>& errors) {
  if (errors.size() == 1) return errors[0];
  std::vector<std::string> messages;
  for (const Status& st : errors) messages.push_back(st.message());
  return ErrorList(messages);
}

Status CheckValue(const KeySpec& spec, Value* value) {
  if (spec.type == ValueType::kStructured) return Status::Ok();  // the consumer checks it
  if (value->items.empty()) {
    return KeyError(spec.key, "empty list (give at least one value)", value->origin);
  }
  if (value->is_list && spec.shape == Shape::kScalar) {
    return KeyError(spec.key,
                    fmt::format("expected a single {}, got a list", ItemTypeName(spec.type)),
                    value->origin);
  }
  for (Scalar& item : value->items) {
    UKAI_RETURN_IF_ERROR(CheckItem(spec, &item, value->origin));
  }
  return Status::Ok();
}

const Value* ConfigValues::Find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

std::string ScalarToString(const Scalar& s, bool quote_strings) {
  if (auto* i = std::get_if<int64_t>(&s)) return fmt::format("{}", *i);
  if (auto* d = std::get_if<double>(&s)) {
    std::string t = fmt::format("{}", *d);
    // Keep floats recognisable as floats ("1.0", not "1").
    if (std::isfinite(*d) && t.find_first_of(".eE") == std::string::npos) t += ".0";
    return t;
  }
  if (auto* b = std::get_if<bool>(&s)) return *b ? "true" : "false";
  const std::string& str = std::get<std::string>(s);
  return quote_strings ? "\"" + str + "\"" : str;
}

std::string DescribeText(const Schema& schema) {
  std::string out;
  for (const KeySpec& k : schema.keys()) {
    out += fmt::format("{}\n", k.key);
    out += fmt::format("    type:    {}\n", k.TypeName());
    if (!k.unit.empty()) out += fmt::format("    unit:    {}\n", k.unit);
    out += fmt::format("    default: {}\n", k.default_text);
    std::string range = k.RangeText();
    if (!range.empty()) out += fmt::format("    range:   {}\n", range);
    out += fmt::format("    {}\n\n", k.doc);
  }
  return out;
}

std::string DescribeMarkdown(const Schema& schema) {
  std::string out =
      "| key | type | unit | default | range | meaning |\n"
      "|---|---|---|---|---|---|\n";
  for (const KeySpec& k : schema.keys()) {
    std::string range = k.RangeText();
    // A '|' inside a cell would end it.
    for (std::string* s : {&range}) {
      std::string esc;
      for (char c : *s) esc += c == '|' ? std::string("\\|") : std::string(1, c);
      *s = esc;
    }
    out += fmt::format("| `{}` | {} | {} | `{}` | {} | {} |\n", k.key, k.TypeName(), k.unit,
                       k.default_text, range, k.doc);
  }
  return out;
}

}  // namespace ukai::config
