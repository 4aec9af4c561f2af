#include "core/config/toml_reader.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace ukai::config {
namespace {

Origin OriginOf(const toml::source_region& region, const std::string& source_name) {
  return Origin{source_name, static_cast<int>(region.begin.line),
                static_cast<int>(region.begin.column)};
}

std::string_view NodeTypeName(toml::node_type t) {
  switch (t) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "a list";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "a value";
  }
}

// Converts one non-container node to a Scalar; false for dates and times.
bool ToScalar(const toml::node& node, Scalar* out) {
  if (auto v = node.value_exact<int64_t>()) {
    *out = *v;
  } else if (auto d = node.value_exact<double>()) {
    *out = *d;
  } else if (auto b = node.value_exact<bool>()) {
    *out = *b;
  } else if (auto s = node.value_exact<std::string>()) {
    *out = *s;
  } else {
    return false;
  }
  return true;
}

// Converts any node (nested arrays and inline tables included) to a Tree.
Status ConvertTree(const KeySpec& spec, const toml::node& node, const Origin& origin,
                   const std::string& source_name, int depth, Tree* out) {
  out->origin = origin;
  if (depth > 16) return KeyError(spec.key, "nested too deeply (more than 16 levels)", origin);
  if (const toml::array* arr = node.as_array()) {
    out->kind = Tree::Kind::kList;
    for (const toml::node& elem : *arr) {
      out->items.emplace_back();
      UKAI_RETURN_IF_ERROR(ConvertTree(spec, elem, OriginOf(elem.source(), source_name),
                                       source_name, depth + 1, &out->items.back()));
    }
  } else if (const toml::table* tab = node.as_table()) {
    out->kind = Tree::Kind::kTable;
    for (auto&& [k, v] : *tab) {
      out->names.emplace_back(k.str());
      out->items.emplace_back();
      UKAI_RETURN_IF_ERROR(ConvertTree(spec, v, OriginOf(v.source(), source_name), source_name,
                                       depth + 1, &out->items.back()));
    }
  } else if (!ToScalar(node, &out->scalar)) {
    return KeyError(spec.key, fmt::format("unsupported value: {}", NodeTypeName(node.type())),
                    origin);
  }
  return Status::Ok();
}

// Converts a value node (scalar or flat array) to a Value, checking it against `spec`.
Status ConvertValue(const KeySpec& spec, const toml::node& node, const Origin& origin,
                    const std::string& source_name, Value* out) {
  out->origin = origin;
  if (spec.type == ValueType::kStructured) {
    out->is_list = node.is_array();
    return ConvertTree(spec, node, origin, source_name, 0, &out->tree);
  }
  if (const toml::array* arr = node.as_array()) {
    out->is_list = true;
    for (const toml::node& elem : *arr) {
      Scalar s;
      if (!ToScalar(elem, &s)) {
        return KeyError(
            spec.key,
            fmt::format("list items must be plain values, got {}", NodeTypeName(elem.type())),
            OriginOf(elem.source(), source_name));
      }
      out->items.push_back(std::move(s));
    }
  } else {
    Scalar s;
    if (!ToScalar(node, &s)) {
      return KeyError(spec.key, fmt::format("unsupported value: {}", NodeTypeName(node.type())),
                      origin);
    }
    out->items.push_back(std::move(s));
  }
  return CheckValue(spec, out);
}

Status UnknownKey(const Schema& schema, const std::string& key, const Origin& origin) {
  std::string suggestion = schema.Suggest(key);
  std::string msg = "unknown key";
  if (!suggestion.empty()) msg += fmt::format(" (did you mean '{}'?)", suggestion);
  return KeyError(key, msg, origin);
}

// Walks `table`, checking every key; appends errors to `errors`.
void WalkTable(const toml::table& table, const std::string& prefix, const Schema& schema,
               const std::string& source_name, ConfigValues* values,
               std::vector<std::string>* errors) {
  for (auto&& [k, node] : table) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    Origin key_origin = OriginOf(k.source(), source_name);
    Status st;
    if (const KeySpec* spec = schema.Find(key)) {
      Value value;
      if (node.is_table() && spec->type != ValueType::kStructured) {
        st = KeyError(key, fmt::format("expected {}, got a table", spec->TypeName()), key_origin);
      } else {
        st = ConvertValue(*spec, node, OriginOf(node.source(), source_name), source_name, &value);
      }
      if (st.ok()) values->Set(key, std::move(value));
    } else if (const toml::table* sub = node.as_table()) {
      if (sub->empty() && !schema.IsTable(key)) {
        st = UnknownKey(schema, key, key_origin);
      } else {
        WalkTable(*sub, key, schema, source_name, values, errors);
      }
    } else if (schema.IsTable(key)) {
      st = KeyError(key, fmt::format("is a table of keys, got {}", NodeTypeName(node.type())),
                    key_origin);
    } else {
      st = UnknownKey(schema, key, key_origin);
    }
    if (!st.ok()) errors->push_back(st.message());
  }
}

Result<ConfigValues> ParseAndCheck(std::string_view text, const std::string& source_name,
                                   const Schema& schema) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const toml::source_position& p = e.source().begin;
    return Status::ParseError(fmt::format("TOML syntax error at {}:{}:{}: {}", source_name, p.line,
                                          p.column, e.description()));
  }
  ConfigValues values;
  std::vector<std::string> errors;
  WalkTable(root, "", schema, source_name, &values, &errors);
  if (!errors.empty()) return ErrorList(errors);
  return values;
}

}  // namespace

Result<ConfigValues> ReadTomlFile(const std::string& path, const Schema& schema) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return Status::IoError(
        fmt::format("cannot read config file '{}': {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::IoError(fmt::format("config file '{}' is {}, not a regular file", path,
                                       S_ISDIR(st.st_mode) ? "a directory" : "a special file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IoError(
        fmt::format("cannot read config file '{}': {}", path, std::strerror(errno)));
  }
  // Read at most one byte more than the cap (the size stat() gives may be 0 for /proc files).
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) {
    return Status::IoError(fmt::format("cannot read config file '{}': read error", path));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  return ReadTomlString(text, path, schema);
}

Result<ConfigValues> ReadTomlString(std::string_view text, const std::string& source_name,
                                    const Schema& schema) {
  if (text.size() > kMaxConfigBytes) {
    return Status::InvalidArgument(
        fmt::format("config '{}' is larger than {} bytes, the most "
                    "ukai reads (a config is a few hundred bytes)",
                    source_name, kMaxConfigBytes));
  }
  return ParseAndCheck(text, source_name, schema);
}

Status ApplySetArgument(std::string_view arg, const Schema& schema, ConfigValues* values) {
  const std::string where = "--set " + std::string(arg);
  size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status::InvalidArgument(fmt::format(
        "bad argument '{}': expected --set key=value (e.g. --set router.vcs=4)", where));
  }
  std::string key(arg.substr(0, eq));
  while (!key.empty() && key.back() == ' ') key.pop_back();
  std::string text(arg.substr(eq + 1));
  Origin origin{where, 0, 0};
  const KeySpec* spec = schema.Find(key);
  if (spec == nullptr) {
    if (schema.IsTable(key)) return KeyError(key, "is a table of keys, not a value", origin);
    return UnknownKey(schema, key, origin);
  }
  if (text.empty()) return KeyError(key, "missing value after '='", origin);
  Value value;
  toml::table parsed;
  bool is_toml = true;
  try {
    parsed = toml::parse("v = " + text, std::string_view("--set"));
  } catch (const toml::parse_error& e) {
    is_toml = false;
    // Text that starts like a list, string or table is meant as TOML: say what is wrong with
    // it rather than taking it for a bare word.
    if (text.find_first_of("[\"'{") == 0) {
      return KeyError(key,
                      fmt::format("'{}' is not a valid TOML value ({}{})", text, e.description(),
                                  text[0] != '['       ? ""
                                  : text.back() != ']' ? "; is the closing ']' missing?"
                                                       : "; words in a list need quotes: "
                                                         "[\"a\", \"b\"]"),
                      origin);
    }
  }
  const toml::node* node = is_toml && parsed.size() == 1 ? parsed.get("v") : nullptr;
  if (node == nullptr) {
    // Not TOML: a bare word stands for a string.
    value = Value{{Scalar(text)}, false, origin};
    UKAI_RETURN_IF_ERROR(CheckValue(*spec, &value));
  } else if (node->is_table()) {
    return KeyError(key, fmt::format("expected {}, got a table", spec->TypeName()), origin);
  } else {
    UKAI_RETURN_IF_ERROR(ConvertValue(*spec, *node, origin, where, &value));
  }
  values->Set(key, std::move(value));
  return Status::Ok();
}

Status ApplySetArguments(const std::vector<std::string>& args, const Schema& schema,
                         ConfigValues* values) {
  // The key of an argument, as ApplySetArgument() reads it ("" when there is no '=').
  auto key_of = [](std::string_view arg) {
    const size_t eq = arg.find('=');
    std::string key(arg.substr(0, eq == std::string_view::npos ? 0 : eq));
    while (!key.empty() && key.back() == ' ') key.pop_back();
    return key;
  };
  std::vector<std::string> errors;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string key = key_of(args[i]);
    bool replaced = false;
    for (size_t j = i + 1; j < args.size() && !key.empty() && !replaced; ++j) {
      replaced = key_of(args[j]) == key;
    }
    if (replaced) continue;
    Status st = ApplySetArgument(args[i], schema, values);
    if (!st.ok()) errors.push_back(st.message());
  }
  return ErrorList(errors);
}

}  // namespace ukai::config
