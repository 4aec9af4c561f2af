#include "core/config/raw_config.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace ukai::config {
namespace {

// Deeper structured values are refused (a config value is a few levels deep at most).
constexpr int kMaxDepth = 16;

// A structured value: every part must be a plain value, a list or a table, at most
// kMaxDepth levels deep.
Status CheckStructured(const KeySpec& spec, const Tree& tree, int depth) {
  if (depth > kMaxDepth) {
    return KeyError(spec.key, "nested too deeply (more than 16 levels)", tree.origin);
  }
  if (tree.kind == Tree::Kind::kOther) {
    return KeyError(spec.key, fmt::format("unsupported value: {}", tree.other), tree.origin);
  }
  for (const Tree& item : tree.items) UKAI_RETURN_IF_ERROR(CheckStructured(spec, item, depth + 1));
  return Status::Ok();
}

// Walks `table`, checking every key; appends errors to `errors`.
void WalkTable(const Tree& table, const std::string& prefix, const Schema& schema,
               ConfigValues* values, std::vector<Status>* errors) {
  for (size_t i = 0; i < table.items.size() && i < table.names.size(); ++i) {
    const std::string key = prefix.empty() ? table.names[i] : prefix + "." + table.names[i];
    const Tree& node = table.items[i];
    const Origin key_origin = i < table.name_origins.size() ? table.name_origins[i] : node.origin;
    Status st;
    if (const KeySpec* spec = schema.Find(key)) {
      Value value;
      if (node.kind == Tree::Kind::kTable && spec->type != ValueType::kStructured) {
        st = KeyError(key, fmt::format("expected {}, got a table", spec->TypeName()), key_origin);
      } else {
        st = ConvertTree(*spec, node, &value);
      }
      if (st.ok()) values->Set(key, std::move(value));
    } else if (node.kind == Tree::Kind::kTable) {
      if (node.items.empty() && !schema.IsTable(key)) {
        st = UnknownKey(schema, key, key_origin);
      } else {
        WalkTable(node, key, schema, values, errors);
      }
    } else if (schema.IsTable(key)) {
      st = KeyError(key, fmt::format("is a table of keys, got {}", node.KindName()), key_origin);
    } else {
      st = UnknownKey(schema, key, key_origin);
    }
    if (!st.ok()) errors->push_back(st);
  }
}

}  // namespace

Status ConvertTree(const KeySpec& spec, const Tree& tree, Value* out) {
  out->origin = tree.origin;
  if (spec.type == ValueType::kStructured) {
    out->is_list = tree.kind == Tree::Kind::kList;
    out->tree = tree;
    return CheckStructured(spec, tree, 0);
  }
  if (tree.kind == Tree::Kind::kList) {
    out->is_list = true;
    for (const Tree& elem : tree.items) {
      if (elem.kind != Tree::Kind::kScalar) {
        return KeyError(spec.key,
                        fmt::format("list items must be plain values, got {}", elem.KindName()),
                        elem.origin);
      }
      out->items.push_back(elem.scalar);
    }
  } else if (tree.kind == Tree::Kind::kScalar) {
    out->items.push_back(tree.scalar);
  } else {
    return KeyError(spec.key, fmt::format("unsupported value: {}", tree.KindName()), tree.origin);
  }
  return CheckValue(spec, out);
}

Status SetRawValue(std::string_view key, Tree value, const Origin& key_origin, RawConfig* raw) {
  Tree* table = &raw->root;
  size_t start = 0;
  for (;;) {
    const size_t dot = key.find('.', start);
    const std::string name(
        key.substr(start, dot == std::string_view::npos ? key.npos : dot - start));
    size_t at = 0;
    while (at < table->names.size() && table->names[at] != name) ++at;
    if (dot == std::string_view::npos) {
      if (at == table->names.size()) {
        table->names.push_back(name);
        table->name_origins.push_back(key_origin);
        table->items.push_back(std::move(value));
      } else {
        table->name_origins.resize(table->names.size(), key_origin);
        table->name_origins[at] = key_origin;
        table->items[at] = std::move(value);
      }
      return Status::Ok();
    }
    if (at == table->names.size()) {
      table->names.push_back(name);
      table->name_origins.push_back(key_origin);
      table->items.push_back(Tree::Of(Tree::Kind::kTable));
      table->items.back().origin = key_origin;
    } else if (table->items[at].kind != Tree::Kind::kTable) {
      return KeyError(key, fmt::format("'{}' already holds a value, not a table of keys", name),
                      key_origin);
    }
    table = &table->items[at];
    start = dot + 1;
  }
}

const Tree* FindRawValue(const RawConfig& raw, std::string_view key) {
  const Tree* node = &raw.root;
  size_t start = 0;
  for (;;) {
    if (node->kind != Tree::Kind::kTable) return nullptr;
    const size_t dot = key.find('.', start);
    node = node->Field(key.substr(start, dot == std::string_view::npos ? key.npos : dot - start));
    if (node == nullptr || dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

Result<std::optional<Value>> CheckedRawValue(const RawConfig& raw, const KeySpec& spec) {
  const Tree* tree = FindRawValue(raw, spec.key);
  if (tree == nullptr) return std::optional<Value>();
  Value value;
  UKAI_RETURN_IF_ERROR(ConvertTree(spec, *tree, &value));
  return std::optional<Value>(std::move(value));
}

Result<ConfigValues> CheckRawConfig(const RawConfig& raw, const Schema& schema) {
  ConfigValues values;
  std::vector<Status> errors;
  WalkTable(raw.root, "", schema, &values, &errors);
  if (!errors.empty()) return CombineErrors(errors);
  return values;
}

Status CheckConfigSize(std::string_view text, const std::string& source_name) {
  if (text.size() <= kMaxConfigBytes) return Status::Ok();
  return Status::InvalidArgument(
      fmt::format("config '{}' is larger than {} bytes, the most "
                  "ukai reads (a config is a few hundred bytes)",
                  source_name, kMaxConfigBytes));
}

Result<std::string> ReadConfigText(const std::string& path) {
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
  // Read at most one byte more than the cap (the size stat() gives may be 0 for /proc files),
  // in chunks: a buffer of the cap's size would touch a megabyte for a file of a few hundred
  // bytes (the peak resident memory of every run).
  std::string text;
  char chunk[16384];
  while (text.size() <= kMaxConfigBytes) {
    const size_t want = std::min(sizeof(chunk), kMaxConfigBytes + 1 - text.size());
    in.read(chunk, static_cast<std::streamsize>(want));
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (!in) break;  // end of the file (or an error, below)
  }
  if (in.bad()) {
    return Status::IoError(fmt::format("cannot read config file '{}': read error", path));
  }
  UKAI_RETURN_IF_ERROR(CheckConfigSize(text, path));
  return text;
}

}  // namespace ukai::config
