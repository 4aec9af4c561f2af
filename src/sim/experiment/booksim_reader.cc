#include "sim/experiment/booksim_reader.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>

#include "sim/experiment/booksim_keys.h"

namespace ukai::sim {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A cursor over the text that counts lines and columns.
class Scanner {
 public:
  Scanner(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[pos_]; }
  config::Origin here() const { return {source_, line_, column_}; }
  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  // Skips blanks and comments; kParseError for an unterminated /* comment.
  Status SkipSpace() {
    while (!done()) {
      if (std::isspace(static_cast<unsigned char>(peek()))) {
        Advance();
      } else if (text_.substr(pos_, 2) == "//") {
        while (!done() && peek() != '\n') Advance();
      } else if (text_.substr(pos_, 2) == "/*") {
        const config::Origin start = here();
        Advance(), Advance();
        while (!done() && text_.substr(pos_, 2) != "*/") Advance();
        if (done()) return Status::ParseError("unterminated /* comment " + start.Where());
        Advance(), Advance();
      } else {
        break;
      }
    }
    return Status::Ok();
  }

 private:
  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;
};

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// The value after '=' up to the ';' outside braces, parentheses and quotes.
Result<std::string> ScanValue(Scanner* s, const std::string& key) {
  const config::Origin start = s->here();
  std::string value;
  int depth = 0;
  bool quoted = false;
  while (!s->done()) {
    const char c = s->peek();
    if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && (c == '{' || c == '(')) {
      ++depth;
    } else if (!quoted && (c == '}' || c == ')')) {
      if (--depth < 0) break;
    } else if (!quoted && depth == 0 && c == ';') {
      s->Advance();
      value = Trim(value);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      if (value.empty()) return Status::ParseError(key + ": empty value " + start.Where());
      return value;
    }
    value += c;
    s->Advance();
  }
  return Status::ParseError(fmt::format(
      "{}: the value has no closing ';' (or unbalanced braces) {}", key, start.Where()));
}

}  // namespace

Result<std::vector<BooksimStatement>> ParseBooksimStatements(std::string_view text,
                                                             const std::string& source_name) {
  UKAI_RETURN_IF_ERROR(config::CheckConfigSize(text, source_name));
  Scanner s(text, source_name);
  std::vector<BooksimStatement> out;
  for (;;) {
    UKAI_RETURN_IF_ERROR(s.SkipSpace());
    if (s.done()) break;
    BooksimStatement st;
    st.origin = s.here();
    if (!IsIdentStart(s.peek())) {
      return Status::ParseError(
          fmt::format("expected a BookSim2 key (letters, digits, _) {}", st.origin.Where()));
    }
    while (!s.done() && IsIdent(s.peek())) st.key += s.peek(), s.Advance();
    UKAI_RETURN_IF_ERROR(s.SkipSpace());
    if (s.peek() != '=') {
      return Status::ParseError(
          fmt::format("{}: expected '=' after the key {}", st.key, s.here().Where()));
    }
    s.Advance();
    UKAI_RETURN_IF_ERROR(s.SkipSpace());
    Result<std::string> value = ScanValue(&s, st.key);
    if (!value.ok()) return value.status();
    st.value = std::move(*value);
    out.push_back(std::move(st));
  }
  return out;
}

bool LooksLikeBooksim(std::string_view text) {
  if (text.size() > config::kMaxConfigBytes) return false;
  // A TOML table header at the start of a line is TOML's.
  for (size_t i = 0; i < text.size(); ++i) {
    if ((i == 0 || text[i - 1] == '\n') && text[i] == '[') return false;
  }
  Result<std::vector<BooksimStatement>> st = ParseBooksimStatements(text, "");
  return st.ok() && !st->empty();
}

Result<std::string> AppendBooksimOverrides(std::string_view text,
                                           const std::vector<std::string>& overrides) {
  std::string out(text);
  if (!overrides.empty()) out += "\n// command-line overrides\n";
  for (const std::string& arg : overrides) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(
          fmt::format("override '{}': expected key=value (BookSim2's command line)", arg));
    }
    out += fmt::format("{} = {};\n", Trim(arg.substr(0, eq)), Trim(arg.substr(eq + 1)));
  }
  return out;
}

Result<config::RawConfig> ReadBooksimConfig(std::string_view text, const std::string& source_name) {
  Result<std::vector<BooksimStatement>> statements = ParseBooksimStatements(text, source_name);
  if (!statements.ok()) return statements.status();
  // The last statement of a key wins (as in BookSim2); every key must be a BookSim2 key.
  std::map<std::string, BooksimStatement, std::less<>> written;
  for (BooksimStatement& st : *statements) {
    if (FindBooksimKey(st.key) == nullptr) {
      return config::KeyError(st.key,
                              "is not a key of BookSim2 (booksim_config.cpp); docs/booksim.md "
                              "lists them",
                              st.origin);
    }
    written[st.key] = std::move(st);
  }
  config::RawConfig raw;
  raw.source = source_name;
  BooksimContext context(source_name, &written, &raw);
  std::vector<Status> failed;
  for (const BooksimKey& key : BooksimKeys()) {
    Status st = ApplyBooksimKey(key, context);
    if (!st.ok()) failed.push_back(std::move(st));
  }
  if (!failed.empty()) return config::CombineErrors(failed);
  return raw;
}

}  // namespace ukai::sim
