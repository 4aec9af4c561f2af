#include "core/output/writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace ukai::output {
namespace {

bool IsNumber(const Field& f) {
  return std::holds_alternative<int64_t>(f) || std::holds_alternative<double>(f) ||
         std::holds_alternative<NoValue>(f);
}

Status CheckSameColumns(const std::vector<std::string>& names, const Record& r) {
  bool same = names.size() == r.fields().size();
  for (size_t i = 0; same && i < names.size(); ++i) same = names[i] == r.fields()[i].first;
  if (!same) {
    return Status::InvalidArgument("record fields differ from the first record's columns");
  }
  return Status::Ok();
}

class TableWriter : public RecordWriter {
 public:
  TableWriter(std::ostream* out, std::vector<TableColumn> columns)
      : out_(out), columns_(std::move(columns)) {}

  Status Write(const Record& r) override {
    if (widths_.empty()) Start(r);
    std::string line;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const Field* f = r.Find(columns_[i].field);
      std::string text = f ? FieldText(*f, true) : "-";
      bool right = f == nullptr || IsNumber(*f);
      if (i > 0) line += "  ";
      line +=
          right ? fmt::format("{:>{}}", text, widths_[i]) : fmt::format("{:<{}}", text, widths_[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    *out_ << line << '\n' << std::flush;
    return out_->good() ? Status::Ok() : Status::IoError("write failed");
  }

 private:
  // Fixes the columns and their widths from the first record (header or value, whichever
  // is wider, at least 6) so that rows can be printed as they come.
  void Start(const Record& r) {
    if (columns_.empty()) {
      for (const auto& [name, value] : r.fields()) columns_.push_back({name, name});
    }
    std::string header;
    for (size_t i = 0; i < columns_.size(); ++i) {
      TableColumn& c = columns_[i];
      if (c.header.empty()) c.header = c.field;
      const Field* f = r.Find(c.field);
      size_t w =
          std::max<size_t>({6, c.min_width, c.header.size(), f ? FieldText(*f, true).size() : 1});
      widths_.push_back(w);
      bool right = f == nullptr || IsNumber(*f);
      if (i > 0) header += "  ";
      header += right ? fmt::format("{:>{}}", c.header, w) : fmt::format("{:<{}}", c.header, w);
    }
    while (!header.empty() && header.back() == ' ') header.pop_back();
    *out_ << header << '\n';
  }

  std::ostream* out_;
  std::vector<TableColumn> columns_;
  std::vector<size_t> widths_;
};

std::string CsvQuote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

class CsvWriter : public RecordWriter {
 public:
  explicit CsvWriter(std::ostream* out) : out_(out) {}

  Status Write(const Record& r) override {
    if (!started_) {
      started_ = true;
      for (const auto& [name, value] : r.fields()) names_.push_back(name);
      std::vector<std::string> quoted;
      for (const std::string& n : names_) quoted.push_back(CsvQuote(n));
      *out_ << fmt::format("{}", fmt::join(quoted, ",")) << '\n';
    }
    UKAI_RETURN_IF_ERROR(CheckSameColumns(names_, r));
    std::vector<std::string> cells;
    for (const auto& [name, value] : r.fields()) cells.push_back(CsvQuote(FieldText(value, false)));
    *out_ << fmt::format("{}", fmt::join(cells, ",")) << '\n' << std::flush;
    return out_->good() ? Status::Ok() : Status::IoError("write failed");
  }

 private:
  std::ostream* out_;
  bool started_ = false;
  std::vector<std::string> names_;
};

}  // namespace

const Field* Record::Find(std::string_view name) const {
  for (const auto& [n, v] : fields_) {
    if (n == name) return &v;
  }
  return nullptr;
}

Result<Format> ParseFormat(std::string_view name) {
  if (name == "table") return Format::kTable;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  if (name == "booksim") return Format::kBooksim;
  return Status::InvalidArgument(
      fmt::format("unknown output format '{}' (known: table, csv, json, booksim)", name));
}

std::string FieldText(const Field& f, bool for_table) {
  if (std::holds_alternative<NoValue>(f)) return for_table ? "-" : "";
  if (auto* i = std::get_if<int64_t>(&f)) return fmt::format("{}", *i);
  if (auto* b = std::get_if<bool>(&f)) return *b ? "true" : "false";
  if (auto* s = std::get_if<std::string>(&f)) return *s;
  if (auto* l = std::get_if<std::vector<int64_t>>(&f)) return fmt::format("{}", fmt::join(*l, "x"));
  if (auto* l = std::get_if<std::vector<double>>(&f)) return fmt::format("{}", fmt::join(*l, ";"));
  if (auto* j = std::get_if<JsonText>(&f)) return j->text;
  double d = std::get<double>(f);
  if (!for_table || !std::isfinite(d)) return fmt::format("{}", d);
  if (std::fabs(d) >= 1e5) return fmt::format("{:.0f}", d);
  return fmt::format("{:.5g}", d);
}

std::unique_ptr<RecordWriter> MakeTableWriter(std::ostream* out, std::vector<TableColumn> columns) {
  return std::make_unique<TableWriter>(out, std::move(columns));
}

std::unique_ptr<RecordWriter> MakeCsvWriter(std::ostream* out) {
  return std::make_unique<CsvWriter>(out);
}

}  // namespace ukai::output
