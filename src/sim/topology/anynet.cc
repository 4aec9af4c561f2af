#include "sim/topology/anynet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace ukai::sim {
namespace {

enum class Kind { kNode, kRouter };

std::string KindName(Kind k) { return k == Kind::kNode ? "node" : "router"; }

// A router-router direction or a node attachment, with the line that declared it.
struct Declared {
  int latency = -1;
  int line = 0;
};

class Parser {
 public:
  explicit Parser(const std::string& name) : name_(name) {}

  Status Line(std::string_view text, int line) {
    line_ = line;
    std::vector<std::string_view> words;
    for (size_t i = 0; i < text.size();) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      if (i >= text.size() || text.substr(i, 2) == "//") break;
      size_t j = i;
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      words.push_back(text.substr(i, j - i));
      i = j;
    }
    if (words.empty()) return Status::Ok();
    size_t w = 0;
    Kind head_kind;
    int head = -1;
    UKAI_RETURN_IF_ERROR(Entity(words, &w, &head_kind, &head, "the line's head"));
    Kind body_kind = Kind::kRouter;
    int body = -1;
    while (w < words.size()) {
      if (body >= 0 && !IsKind(words[w])) {  // a latency after a body
        int latency = 0;
        UKAI_RETURN_IF_ERROR(Number(words[w], "a latency", &latency));
        SetLatency(head_kind, head, body_kind, body, latency);
        ++w;
        body = -1;
        continue;
      }
      UKAI_RETURN_IF_ERROR(Entity(words, &w, &body_kind, &body, "a connection"));
      UKAI_RETURN_IF_ERROR(Connect(head_kind, head, body_kind, body));
    }
    return Status::Ok();
  }

  Result<GraphSpec> Finish() const {
    GraphSpec spec;
    spec.origin = "anynet file " + name_;
    UKAI_RETURN_IF_ERROR(Sequential(Kind::kNode));
    UKAI_RETURN_IF_ERROR(Sequential(Kind::kRouter));
    for (const auto& [id, router] : node_router_) spec.terminals.push_back(fmt::format("n{}", id));
    for (int r : routers_) spec.switches.push_back(fmt::format("r{}", r));
    // Router-node links by (router, node): a router's node ports come first, in node order.
    std::vector<std::pair<int, int>> attach;
    for (const auto& [id, router] : node_router_) attach.push_back({router, id});
    std::sort(attach.begin(), attach.end());
    for (const auto& [router, id] : attach) {
      GraphLinkSpec l;
      l.a = fmt::format("r{}", router);
      l.b = fmt::format("n{}", id);
      l.latency_ab = l.latency_ba = node_latency_.at(id).latency;
      l.where = fmt::format("at {}:{}", name_, node_latency_.at(id).line);
      spec.links.push_back(std::move(l));
    }
    // Router-router links by (lower, higher): then every router's router ports are in the
    // other router's number order (BookSim's port order).
    std::map<std::pair<int, int>, std::pair<int, int>> pairs;  // -> latencies (ab, ba)
    std::map<std::pair<int, int>, int> lines;
    for (const auto& [dir, d] : channels_) {
      const auto key = std::minmax(dir.first, dir.second);
      auto& lat = pairs.try_emplace(key, std::pair{-1, -1}).first->second;
      (dir.first == key.first ? lat.first : lat.second) = d.latency;
      auto [it, fresh] = lines.emplace(key, d.line);
      if (!fresh) it->second = std::min(it->second, d.line);
    }
    for (const auto& [key, lat] : pairs) {
      GraphLinkSpec l;
      l.a = fmt::format("r{}", key.first);
      l.b = fmt::format("r{}", key.second);
      l.latency_ab = lat.first;
      l.latency_ba = lat.second;
      l.where = fmt::format("at {}:{}", name_, lines.at(key));
      spec.links.push_back(std::move(l));
    }
    return spec;
  }

 private:
  Status Err(const std::string& what) const {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", name_, line_, what));
  }

  static bool IsKind(std::string_view w) {
    std::string lower(w);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower == "router" || lower == "node";
  }

  Status Number(std::string_view w, const char* what, int* out) const {
    int v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size() || v < 0) {
      return Err(fmt::format("expected {} (an integer >= 0), got '{}'", what, w));
    }
    *out = v;
    return Status::Ok();
  }

  // `router ID` or `node ID` at words[*w]; advances *w past it.
  Status Entity(const std::vector<std::string_view>& words, size_t* w, Kind* kind, int* id,
                const char* what) {
    if (!IsKind(words[*w])) {
      return Err(fmt::format("expected 'router' or 'node' for {}, got '{}'", what, words[*w]));
    }
    *kind =
        std::tolower(static_cast<unsigned char>(words[*w][0])) == 'n' ? Kind::kNode : Kind::kRouter;
    if (*w + 1 >= words.size()) {
      return Err(fmt::format("'{}' without a number", words[*w]));
    }
    UKAI_RETURN_IF_ERROR(Number(words[*w + 1], "a node or router number", id));
    *w += 2;
    if (*kind == Kind::kRouter) routers_.insert(*id);
    return Status::Ok();
  }

  Status Connect(Kind hk, int head, Kind bk, int body) {
    if (hk == Kind::kNode && bk == Kind::kNode) {
      return Err(fmt::format("cannot connect node {} to node {} (a node attaches to a router)",
                             head, body));
    }
    if (hk == Kind::kRouter && bk == Kind::kRouter) {
      if (head == body) return Err(fmt::format("router {} is connected to itself", head));
      auto [it, fresh] = channels_.emplace(std::pair{head, body}, Declared{-1, line_});
      if (!fresh) {
        return Err(fmt::format("duplicate link router {} -> router {} (declared at line {})", head,
                               body, it->second.line));
      }
      return Status::Ok();
    }
    const int node = hk == Kind::kNode ? head : body;
    const int router = hk == Kind::kNode ? body : head;
    auto [it, fresh] = node_router_.emplace(node, router);
    if (!fresh) {
      if (it->second != router) {
        return Err(
            fmt::format("node {} is attached to router {} and router {} (a node attaches "
                        "to exactly one router)",
                        node, it->second, router));
      }
      return Err(fmt::format("duplicate link node {} - router {} (declared at line {})", node,
                             router, node_latency_[node].line));
    }
    node_latency_[node] = Declared{-1, line_};
    return Status::Ok();
  }

  void SetLatency(Kind hk, int head, Kind bk, int body, int latency) {
    if (hk == Kind::kRouter && bk == Kind::kRouter) {
      channels_[{head, body}].latency = latency;
    } else {
      node_latency_[hk == Kind::kNode ? head : body].latency = latency;
    }
  }

  // Numbers of `kind` run 0..N-1 (BookSim's traffic manager and router table need it).
  Status Sequential(Kind kind) const {
    std::vector<int> ids;
    if (kind == Kind::kNode) {
      for (const auto& [id, r] : node_router_) ids.push_back(id);
    } else {
      ids.assign(routers_.begin(), routers_.end());
    }
    if (ids.empty()) {
      return Status::InvalidArgument(fmt::format("{}: no {} is declared", name_, KindName(kind)));
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] != static_cast<int>(i)) {
        return Status::InvalidArgument(fmt::format(
            "{}: {} {} is missing: {}s must be numbered 0..{} without gaps (found {} {})", name_,
            KindName(kind), i, KindName(kind), ids.size() - 1, KindName(kind), ids[i]));
      }
    }
    return Status::Ok();
  }

  std::string name_;
  int line_ = 0;
  std::map<int, int> node_router_;                    // node -> its router
  std::map<int, Declared> node_latency_;              // node -> its link's latency
  std::map<std::pair<int, int>, Declared> channels_;  // (from, to) router channels
  std::set<int> routers_;
};

}  // namespace

Result<GraphSpec> ParseAnynet(std::string_view text, const std::string& name) {
  Parser parser(name);
  int line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    UKAI_RETURN_IF_ERROR(parser.Line(text.substr(pos, end - pos), ++line));
    pos = end + 1;
  }
  return parser.Finish();
}

Result<GraphSpec> ReadAnynetFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::IoError("network.file: '" + path + "' is not a readable file");
  }
  if (std::filesystem::file_size(path, ec) > kMaxAnynetBytes) {
    return Status::InvalidArgument("network.file: '" + path + "' is larger than " +
                                   std::to_string(kMaxAnynetBytes >> 20) + " MiB")
        .WithKey("network.file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("network.file: cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("network.file: cannot read '" + path + "'");
  return ParseAnynet(text.str(), path);
}

}  // namespace ukai::sim
