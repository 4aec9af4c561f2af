#include "core/config/toml_reader.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/config/toml.h"

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

// Converts any node (tables, arrays, scalars) to a Tree with the place of every part.
Tree ToTree(const toml::node& node, const std::string& source_name) {
  Tree out;
  out.origin = OriginOf(node.source(), source_name);
  if (const toml::array* arr = node.as_array()) {
    out.kind = Tree::Kind::kList;
    for (const toml::node& elem : *arr) out.items.push_back(ToTree(elem, source_name));
  } else if (const toml::table* tab = node.as_table()) {
    out.kind = Tree::Kind::kTable;
    for (auto&& [k, v] : *tab) {
      out.names.emplace_back(k.str());
      out.name_origins.push_back(OriginOf(k.source(), source_name));
      out.items.push_back(ToTree(v, source_name));
    }
  } else if (!ToScalar(node, &out.scalar)) {
    out.kind = Tree::Kind::kOther;
    out.other = std::string(NodeTypeName(node.type()));
  }
  return out;
}

}  // namespace

Result<RawConfig> ParseToml(std::string_view text, const std::string& source_name) {
  UKAI_RETURN_IF_ERROR(CheckConfigSize(text, source_name));
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const toml::source_position& p = e.source().begin;
    return Status::ParseError(fmt::format("TOML syntax error at {}:{}:{}: {}", source_name, p.line,
                                          p.column, e.description()));
  }
  RawConfig raw;
  raw.source = source_name;
  raw.root = ToTree(root, source_name);
  return raw;
}

Result<ConfigValues> ReadTomlFile(const std::string& path, const Schema& schema) {
  Result<std::string> text = ReadConfigText(path);
  if (!text.ok()) return text.status();
  return ReadTomlString(*text, path, schema);
}

Result<ConfigValues> ReadTomlString(std::string_view text, const std::string& source_name,
                                    const Schema& schema) {
  Result<RawConfig> raw = ParseToml(text, source_name);
  if (!raw.ok()) return raw.status();
  return CheckRawConfig(*raw, schema);
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
    Tree tree = ToTree(*node, where);
    tree.origin = origin;
    UKAI_RETURN_IF_ERROR(ConvertTree(*spec, tree, &value));
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
  std::vector<Status> errors;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string key = key_of(args[i]);
    bool replaced = false;
    for (size_t j = i + 1; j < args.size() && !key.empty() && !replaced; ++j) {
      replaced = key_of(args[j]) == key;
    }
    if (replaced) continue;
    Status st = ApplySetArgument(args[i], schema, values);
    if (!st.ok()) errors.push_back(st);
  }
  return CombineErrors(errors);
}

}  // namespace ukai::config
