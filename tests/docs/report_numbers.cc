#include "docs/report_numbers.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

namespace ukai::docs {
namespace {

namespace fs = std::filesystem;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::optional<double> ParseNumber(const std::string& s) {
  const std::string t = Trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A CSV file (RFC 4180 quoting: "a ""b""" is a "b"; newlines inside quotes allowed).
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int Column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  }
};

std::optional<Csv> ReadCsv(const fs::path& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path.string();
    return std::nullopt;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string cell;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      record.push_back(cell);
      cell.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !cell.empty()) {
        record.push_back(cell);
        records.push_back(record);
      }
      record.clear();
      cell.clear();
      any = false;
    } else {
      cell += c;
      any = true;
    }
  }
  if (any || !cell.empty()) {
    record.push_back(cell);
    records.push_back(record);
  }
  if (records.empty()) {
    *error = path.string() + " is empty";
    return std::nullopt;
  }
  Csv csv;
  csv.header = records[0];
  csv.rows.assign(records.begin() + 1, records.end());
  return csv;
}

// Arithmetic over named values: numbers, names, + - * / and parentheses.
class Expr {
 public:
  using Lookup = std::function<std::optional<double>(const std::string&, std::string*)>;
  Expr(const std::string& text, Lookup lookup) : s_(text), lookup_(std::move(lookup)) {}

  std::optional<double> Eval(std::string* error) {
    std::optional<double> v = Sum(error);
    Skip();
    if (v && pos_ != s_.size()) {
      *error = "cannot read '" + s_.substr(pos_) + "' in the expression '" + s_ + "'";
      return std::nullopt;
    }
    return v;
  }

 private:
  void Skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  std::optional<double> Sum(std::string* error) {
    std::optional<double> v = Product(error);
    for (Skip(); v && pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-'); Skip()) {
      const char op = s_[pos_++];
      std::optional<double> r = Product(error);
      if (!r) return std::nullopt;
      v = op == '+' ? *v + *r : *v - *r;
    }
    return v;
  }
  std::optional<double> Product(std::string* error) {
    std::optional<double> v = Unary(error);
    for (Skip(); v && pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/'); Skip()) {
      const char op = s_[pos_++];
      std::optional<double> r = Unary(error);
      if (!r) return std::nullopt;
      if (op == '/' && *r == 0) {
        *error = "division by zero in '" + s_ + "'";
        return std::nullopt;
      }
      v = op == '*' ? *v * *r : *v / *r;
    }
    return v;
  }
  std::optional<double> Unary(std::string* error) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == '-') {
      ++pos_;
      std::optional<double> v = Unary(error);
      return v ? std::optional<double>(-*v) : std::nullopt;
    }
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      std::optional<double> v = Sum(error);
      Skip();
      if (!v) return std::nullopt;
      if (pos_ >= s_.size() || s_[pos_] != ')') {
        *error = "missing ')' in '" + s_ + "'";
        return std::nullopt;
      }
      ++pos_;
      return v;
    }
    const size_t start = pos_;
    if (pos_ < s_.size() &&
        (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
      while (pos_ < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
        ++pos_;
      }
      return ParseNumber(s_.substr(start, pos_ - start));
    }
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '.')) {
      ++pos_;
    }
    if (pos_ == start) {
      *error = "expected a number or a name at '" + s_.substr(start) + "' in '" + s_ + "'";
      return std::nullopt;
    }
    return lookup_(s_.substr(start, pos_ - start), error);
  }

  std::string s_;
  Lookup lookup_;
  size_t pos_ = 0;
};

// One selection of rows and the value computed from them.
struct Selector {
  std::string csv;  // path (relative to the Markdown file), may hold {key}
  std::vector<std::pair<std::string, std::string>> equal, contains;
  std::string agg;   // "", max, min, sum, mean, count
  std::string expr;  // the value: a column or an expression over the row's columns
};

// Parses `&`-joined items into `sel` (items override what `sel` holds).
bool ParseSelector(const std::string& text, Selector* sel, std::string* error) {
  for (const std::string& raw : Split(text, '&')) {
    const std::string item = Trim(raw);
    if (item.empty()) continue;
    const size_t eq = item.find('='), tilde = item.find('~');
    if (item[0] == '@') {
      if (item.rfind("@csv=", 0) == 0) {
        sel->csv = item.substr(5);
      } else if (item == "@max" || item == "@min" || item == "@sum" || item == "@mean" ||
                 item == "@count") {
        sel->agg = item.substr(1);
      } else {
        *error = "unknown item '" + item + "' (@csv=, @max, @min, @sum, @mean, @count)";
        return false;
      }
    } else if (item[0] == '=') {
      sel->expr = item.substr(1);
    } else if (tilde != std::string::npos && (eq == std::string::npos || tilde < eq)) {
      sel->contains.emplace_back(item.substr(0, tilde), item.substr(tilde + 1));
    } else if (eq != std::string::npos) {
      sel->equal.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    } else {
      sel->expr = item;
    }
  }
  return true;
}

bool CellEquals(const std::string& cell, const std::string& want) {
  if (cell == want) return true;
  const std::optional<double> a = ParseNumber(cell), b = ParseNumber(want);
  return a && b && *a == *b;
}

// A cited value: a number, or the text of a non-numeric cell (`true`, a name).
struct Cited {
  double number = 0;
  bool is_text = false;
  std::string text;
};

Cited Number(double v) { return Cited{v, false, {}}; }

bool IsName(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

class Evaluator {
 public:
  explicit Evaluator(fs::path dir) : dir_(std::move(dir)) {}

  // The value of `sel`: a number, or (a single row's column that holds no number) its text.
  std::optional<Cited> Cite(Selector sel, std::string* error) {
    // {key} in the file name takes the value of the key= item (which is no filter then).
    for (auto it = sel.equal.begin(); it != sel.equal.end();) {
      const std::string slot = "{" + it->first + "}";
      const size_t at = sel.csv.find(slot);
      if (at == std::string::npos) {
        ++it;
        continue;
      }
      sel.csv.replace(at, slot.size(), it->second);
      it = sel.equal.erase(it);
    }
    if (sel.csv.empty() || sel.csv.find('{') != std::string::npos) {
      *error = "no CSV file (or an unfilled {key}) in '" + sel.csv + "'";
      return std::nullopt;
    }
    if (sel.expr.empty()) {
      *error = "no value column or expression in the selection";
      return std::nullopt;
    }
    const Csv* csv = Load(sel.csv, error);
    if (csv == nullptr) return std::nullopt;
    std::vector<const std::vector<std::string>*> rows;
    if (!Filter(*csv, sel, &rows, error)) return std::nullopt;
    const std::string where = sel.csv + Describe(sel);
    if (sel.agg.empty() && rows.size() != 1) {
      *error = std::to_string(rows.size()) + " rows of " + where + " match (need exactly 1)";
      return std::nullopt;
    }
    if (rows.empty()) {
      *error = "no row of " + where + " matches";
      return std::nullopt;
    }
    if (sel.agg == "count") return Number(static_cast<double>(rows.size()));
    const int named = IsName(sel.expr) ? csv->Column(sel.expr) : -1;
    if (sel.agg.empty() && named >= 0 && named < static_cast<int>(rows[0]->size()) &&
        !ParseNumber((*rows[0])[named])) {
      return Cited{0, true, (*rows[0])[named]};
    }
    std::vector<double> values;
    for (const std::vector<std::string>* row : rows) {
      Expr e(sel.expr, [&](const std::string& name, std::string* err) -> std::optional<double> {
        const int col = csv->Column(name);
        if (col < 0 || col >= static_cast<int>(row->size())) {
          *err = "no column '" + name + "' in " + sel.csv;
          return std::nullopt;
        }
        std::optional<double> v = ParseNumber((*row)[col]);
        if (!v) *err = "column '" + name + "' of " + where + " is '" + (*row)[col] + "'";
        return v;
      });
      std::optional<double> v = e.Eval(error);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    double out = values[0];
    for (size_t i = 1; i < values.size(); ++i) {
      if (sel.agg == "max") out = std::max(out, values[i]);
      if (sel.agg == "min") out = std::min(out, values[i]);
      if (sel.agg == "sum" || sel.agg == "mean") out += values[i];
    }
    if (sel.agg == "mean") out /= static_cast<double>(values.size());
    return Number(out);
  }

 private:
  static std::string Describe(const Selector& sel) {
    std::string s;
    for (const auto& [k, v] : sel.equal) s += (s.empty() ? " " : ", ") + k + "=" + v;
    for (const auto& [k, v] : sel.contains) s += (s.empty() ? " " : ", ") + k + "~" + v;
    return s;
  }

  const Csv* Load(const std::string& name, std::string* error) {
    auto it = cache_.find(name);
    if (it != cache_.end()) return &it->second;
    std::optional<Csv> csv = ReadCsv(dir_ / name, error);
    if (!csv) return nullptr;
    return &cache_.emplace(name, std::move(*csv)).first->second;
  }

  static bool Filter(const Csv& csv, const Selector& sel,
                     std::vector<const std::vector<std::string>*>* rows, std::string* error) {
    std::vector<std::pair<int, std::string>> eq, has;
    for (const auto& [k, v] : sel.equal) eq.emplace_back(csv.Column(k), v);
    for (const auto& [k, v] : sel.contains) has.emplace_back(csv.Column(k), v);
    for (const auto& list : {sel.equal, sel.contains}) {
      for (const auto& kv : list) {
        if (csv.Column(kv.first) < 0) {
          *error = "no column '" + kv.first + "' in " + sel.csv;
          return false;
        }
      }
    }
    for (const std::vector<std::string>& row : csv.rows) {
      bool ok = true;
      for (const auto& [col, v] : eq) ok = ok && col < int(row.size()) && CellEquals(row[col], v);
      for (const auto& [col, v] : has) {
        ok = ok && col < int(row.size()) && row[col].find(v) != std::string::npos;
      }
      if (ok) rows->push_back(&row);
    }
    return true;
  }

  fs::path dir_;
  std::map<std::string, Csv> cache_;
};

// The one number in `text` ("4,544", ".024", "-3.5", "8.7 %"): its digits without
// commas, and its count of decimals.
bool FindNumber(const std::string& text, std::string* digits, int* decimals, std::string* error) {
  std::vector<std::string> found;
  for (size_t i = 0; i < text.size();) {
    const bool starts = std::isdigit(static_cast<unsigned char>(text[i])) ||
                        (text[i] == '.' && i + 1 < text.size() &&
                         std::isdigit(static_cast<unsigned char>(text[i + 1])));
    if (!starts) {
      ++i;
      continue;
    }
    std::string num = i > 0 && text[i - 1] == '-' ? "-" : "";
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                               text[i] == ',' || text[i] == '.')) {
      // A comma counts as a thousands separator only when exactly 3 digits follow it.
      if (text[i] == ',') {
        auto digit = [&](size_t j) {
          return j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]));
        };
        if (!digit(i + 1) || !digit(i + 2) || !digit(i + 3) || digit(i + 4)) break;
      }
      if (text[i] != ',') num += text[i];
      ++i;
    }
    while (!num.empty() && num.back() == '.') num.pop_back();  // a full stop after it
    found.push_back(num);
  }
  if (found.size() != 1) {
    *error = "'" + text + "' holds " + std::to_string(found.size()) +
             " numbers (a citation quotes exactly one)";
    return false;
  }
  *digits = found[0];
  const size_t dot = digits->find('.');
  *decimals = dot == std::string::npos ? 0 : static_cast<int>(digits->size() - dot - 1);
  return true;
}

// Compares the number in `text` with `value` at the text's precision.
bool Matches(const std::string& text, double value, std::string* error) {
  std::string digits;
  int decimals = 0;
  if (!FindNumber(text, &digits, &decimals, error)) return false;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  std::string want = buf;
  if (want[0] == '-' && want.find_first_not_of("-0.") == std::string::npos) want.erase(0, 1);
  std::string got = digits;
  if (got.rfind(".", 0) == 0) got = "0" + got;
  if (got.rfind("-.", 0) == 0) got = "-0" + got.substr(1);
  if (got == want) return true;
  char full[64];
  std::snprintf(full, sizeof(full), "%.6g", value);
  *error = "cites " + digits + ", the CSV gives " + want + " (" + full + ")";
  return false;
}

// Compares `text` with a cited value: a number at the text's precision, a text exactly.
bool MatchesCited(const std::string& text, const Cited& c, std::string* error) {
  if (!c.is_text) return Matches(text, c.number, error);
  if (Trim(text) == c.text) return true;
  *error = "cites '" + Trim(text) + "', the CSV gives '" + c.text + "'";
  return false;
}

// An inline citation: the link text and its target "PATH.csv#QUERY".
void CheckLink(const std::string& text, const std::string& target, int line, Evaluator* ev,
               NumberCheck* out) {
  const size_t hash = target.find('#');
  const std::string path = target.substr(0, hash);
  const std::string query = target.substr(hash + 1);
  ++out->inline_citations;
  std::string error;
  std::map<std::string, double> named;
  std::optional<Cited> value;
  for (const std::string& raw : Split(query, ';')) {
    const std::string term = Trim(raw);
    if (term.empty()) continue;
    if (term[0] == '=' && !named.empty()) {
      Expr e(term.substr(1), [&](const std::string& name, std::string* err) {
        auto it = named.find(name);
        if (it == named.end()) *err = "no selection named '" + name + "'";
        return it == named.end() ? std::nullopt : std::optional<double>(it->second);
      });
      std::optional<double> v = e.Eval(&error);
      value = v ? std::optional<Cited>(Number(*v)) : std::nullopt;
      break;
    }
    std::string name;
    std::string body = term;
    const size_t colon = term.find(':');
    if (colon != std::string::npos && colon > 0 && term.find_first_of("=&~@") > colon) {
      name = term.substr(0, colon);
      body = term.substr(colon + 1);
    }
    Selector sel;
    sel.csv = path;
    if (!ParseSelector(body, &sel, &error)) break;
    value = ev->Cite(sel, &error);
    if (!value) break;
    if (!name.empty() && value->is_text) {
      error = "selection '" + name + "' is the text '" + value->text + "', no number";
      value.reset();
      break;
    }
    if (!name.empty()) named[name] = value->number;
  }
  if (value && MatchesCited(text, *value, &error)) return;
  out->problems.push_back({line, "[" + text + "](" + target + "): " + error});
}

std::vector<std::string> TableCells(const std::string& line) {
  std::string s = Trim(line);
  if (!s.empty() && s.front() == '|') s.erase(0, 1);
  if (!s.empty() && s.back() == '|') s.pop_back();
  std::vector<std::string> cells = Split(s, '|');
  for (std::string& c : cells) c = Trim(c);
  return cells;
}

// Whether `line` is a Markdown table's |---|---| line.
bool IsTableRule(const std::string& line) {
  const std::string t = Trim(line);
  return t.size() >= 3 && t[0] == '|' && t.find("---") != std::string::npos &&
         t.find_first_not_of("|-: ") == std::string::npos;
}

// Whether the last non-blank line before the table at `header` is a
// `<!-- not-from-csv: why -->` comment.
bool MarkedNotFromCsv(const std::vector<std::string>& lines, size_t header) {
  for (size_t i = header; i-- > 0;) {
    const std::string t = Trim(lines[i]);
    if (t.empty()) continue;
    return t.find("-->") != std::string::npos &&
           (t.rfind("<!-- not-from-csv:", 0) == 0 ||
            (i > 0 && Trim(lines[i - 1]).rfind("<!-- not-from-csv:", 0) == 0));
  }
  return false;
}

// A csv-table directive (lines[begin..end] the comment) and the table after it.
size_t CheckTable(const std::vector<std::string>& lines, size_t begin, size_t end, Evaluator* ev,
                  NumberCheck* out) {
  auto problem = [&](size_t i, const std::string& m) {
    out->problems.push_back({static_cast<int>(i) + 1, m});
  };
  Selector base;
  std::vector<std::string> rows, cols;
  int label_cols = 1;
  std::string error;
  for (size_t i = begin; i <= end; ++i) {
    std::string l = lines[i];
    if (i == begin) l = l.substr(l.find("csv-table") + 9);
    if (i == end) l = l.substr(0, l.find("-->"));
    l = Trim(l);
    if (l.empty()) continue;
    const size_t colon = l.find(':');
    const std::string key = colon == std::string::npos ? "" : Trim(l.substr(0, colon));
    const std::string val = colon == std::string::npos ? "" : Trim(l.substr(colon + 1));
    if (i == begin && key.empty()) {
      base.csv = l;
    } else if (key == "csv") {
      base.csv = val;
    } else if (key == "value") {
      if (!ParseSelector("=" + val, &base, &error)) problem(i, error);
    } else if (key == "where") {
      if (!ParseSelector(val, &base, &error)) problem(i, error);
    } else if (key == "row") {
      rows.push_back(val);
    } else if (key == "col") {
      cols.push_back(val);
    } else if (key == "label_cols") {
      label_cols = std::atoi(val.c_str());
    } else {
      problem(i, "csv-table: unknown line '" + l + "' (csv, value, where, row, col, label_cols)");
    }
  }
  size_t i = end + 1;
  while (i < lines.size() && Trim(lines[i]).empty()) ++i;
  const size_t header = i;
  if (i + 1 >= lines.size() || Trim(lines[i]).rfind('|', 0) != 0) {
    problem(begin, "csv-table: no Markdown table follows the directive");
    return i;
  }
  i += 2;  // the header and the |---| line
  size_t r = 0;
  for (; i < lines.size() && Trim(lines[i]).rfind('|', 0) == 0; ++i, ++r) {
    if (r >= rows.size()) {
      problem(i,
              "csv-table: more table rows than row: lines (" + std::to_string(rows.size()) + ")");
      continue;
    }
    if (rows[r] == "-") continue;
    const std::vector<std::string> cells = TableCells(lines[i]);
    if (cells.size() != static_cast<size_t>(label_cols) + cols.size()) {
      problem(i, "csv-table: " + std::to_string(cells.size()) + " cells, expected " +
                     std::to_string(label_cols + cols.size()));
      continue;
    }
    for (size_t c = 0; c < cols.size(); ++c) {
      if (cols[c] == "-") continue;
      Selector sel = base;
      if (!ParseSelector(rows[r], &sel, &error) || !ParseSelector(cols[c], &sel, &error)) {
        problem(i, error);
        continue;
      }
      ++out->table_cells;
      const std::string& text = cells[label_cols + c];
      std::optional<Cited> v = ev->Cite(sel, &error);
      if (!v || !MatchesCited(text, *v, &error)) {
        problem(i, "table cell '" + text + "' (row " + std::to_string(r + 1) + ", column " +
                       std::to_string(label_cols + c + 1) + "): " + error);
      }
    }
  }
  if (r < rows.size()) {
    problem(header, "csv-table: " + std::to_string(rows.size()) + " row: lines but " +
                        std::to_string(r) + " table rows");
  }
  return i;
}

// The end of the link destination starting at `open` (the '(' after "]"), with nested
// parentheses; npos if none.
size_t LinkEnd(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
    if (s[i] == ' ') return std::string::npos;
  }
  return std::string::npos;
}

void CheckLinks(const std::string& line, int lineno, Evaluator* ev, NumberCheck* out) {
  for (size_t close = line.find("]("); close != std::string::npos;
       close = line.find("](", close + 2)) {
    const size_t end = LinkEnd(line, close + 1);
    if (end == std::string::npos) continue;
    const std::string target = line.substr(close + 2, end - close - 2);
    const size_t hash = target.find('#');
    if (hash == std::string::npos || hash < 4 || target.compare(hash - 4, 4, ".csv") != 0) {
      continue;
    }
    int depth = 0;
    size_t open = close;
    for (; open-- > 0;) {
      if (line[open] == ']') ++depth;
      if (line[open] == '[' && depth-- == 0) break;
    }
    if (open == std::string::npos) continue;
    CheckLink(line.substr(open + 1, close - open - 1), target, lineno, ev, out);
  }
}

}  // namespace

NumberCheck CheckReportNumbersText(const std::string& text, const fs::path& dir) {
  NumberCheck out;
  Evaluator ev(dir);
  const std::vector<std::string> lines = Split(text, '\n');
  bool fenced = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string t = Trim(lines[i]);
    if (t.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    if (t.rfind("<!-- csv-table", 0) == 0) {
      size_t end = i;
      while (end < lines.size() && lines[end].find("-->") == std::string::npos) ++end;
      if (end == lines.size()) {
        out.problems.push_back({static_cast<int>(i) + 1, "csv-table: the comment never ends"});
        break;
      }
      i = CheckTable(lines, i, end, &ev, &out) - 1;
      continue;
    }
    if (t.rfind('|', 0) == 0 && i + 1 < lines.size() && IsTableRule(lines[i + 1])) {
      const size_t header = i;
      bool has_number = false;
      for (i += 2; i < lines.size() && Trim(lines[i]).rfind('|', 0) == 0; ++i) {
        CheckLinks(lines[i], static_cast<int>(i) + 1, &ev, &out);
        for (const std::string& cell : TableCells(lines[i])) {
          has_number = has_number || std::any_of(cell.begin(), cell.end(), [](char c) {
                         return std::isdigit(static_cast<unsigned char>(c)) != 0;
                       });
        }
      }
      --i;
      if (has_number && !MarkedNotFromCsv(lines, header)) {
        out.uncited_tables.push_back(static_cast<int>(header) + 1);
      }
      continue;
    }
    CheckLinks(lines[i], static_cast<int>(i) + 1, &ev, &out);
  }
  return out;
}

NumberCheck CheckReportNumbers(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!in) {
    NumberCheck out;
    out.problems.push_back({0, "cannot read " + path.string()});
    return out;
  }
  return CheckReportNumbersText(buf.str(), path.parent_path());
}

}  // namespace ukai::docs
