// Output fields declared once: each field of a result record has its name (the CSV header
// and JSON key), unit and meaning, whether the text table shows it (header and width) and
// when it is present, in one list per machine model. The record a model writes, the columns
// of its text table and the field reference of `ukai sim describe` and docs/cli.md are all
// built from that list, so they cannot disagree.
//
// A model declares its fields as a constexpr array of FieldOf<Context> (the spec plus a
// function reading the value out of the model's own context, e.g. a point's config and
// result), in record order:
//
//   constexpr output::FieldOf<PointContext> kFields[] = {
//       {{"point", "", "0-based index of the point in sweep order"},
//        [](const PointContext& p) -> output::Field { return int64_t(p.index); }},
//       {{"avg_hops", "hops", "router-to-router channels per message", "hops", 0},
//        [](const PointContext& p) -> output::Field { return p.result->avg_hops; }},
//   };
//   output::Record rec = output::BuildRecord(std::span(kFields), context);
//
// Thread safety: plain values and free functions.
#ifndef UKAI_CORE_OUTPUT_FIELDS_H_
#define UKAI_CORE_OUTPUT_FIELDS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/output/writer.h"

namespace ukai::output {

// One output field.
struct FieldSpec {
  std::string_view name;         // record name: CSV header, JSON key
  std::string_view unit;         // "cycles", "flits/node/cycle", "us"; "" for counts, names, flags
  std::string_view meaning;      // what the value is (one sentence or two)
  std::string_view column = {};  // header in the text table; "" = not in the table
  size_t column_width = 0;       // the table column's minimum width (TableColumn::min_width)
  std::string_view when = {};    // "" = in every record; else when the field is present
};

// A field of a model whose records are built from a `Context`: the spec, how to read the
// value, and (optional) whether the record has it at all (nullptr: always).
template <typename Context>
struct FieldOf {
  FieldSpec spec;
  Field (*value)(const Context& context);
  bool (*present)(const Context& context) = nullptr;
};

// The specs of a declaration, in order.
template <typename Context>
std::vector<FieldSpec> SpecsOf(std::span<const FieldOf<Context>> fields) {
  std::vector<FieldSpec> out;
  out.reserve(fields.size());
  for (const FieldOf<Context>& f : fields) out.push_back(f.spec);
  return out;
}

// Appends every present field of `context` to `record`, in declaration order.
template <typename Context>
void AppendFields(std::span<const FieldOf<Context>> fields, const Context& context,
                  Record* record) {
  for (const FieldOf<Context>& f : fields) {
    if (f.present == nullptr || f.present(context)) {
      record->Add(std::string(f.spec.name), f.value(context));
    }
  }
}

// The record of `context`: every present field, in declaration order.
template <typename Context>
Record BuildRecord(std::span<const FieldOf<Context>> fields, const Context& context) {
  Record rec;
  AppendFields(fields, context, &rec);
  return rec;
}

// The text table's columns: every field with a column header, in declaration order.
std::vector<TableColumn> TableColumnsOf(std::span<const FieldSpec> fields);

// The field reference: a Markdown table (field | unit | table column | meaning) or plain
// text, one entry per field, with "when" said where a field is not always present.
std::string DescribeFieldsMarkdown(std::span<const FieldSpec> fields);
std::string DescribeFieldsText(std::span<const FieldSpec> fields);

}  // namespace ukai::output

#endif  // UKAI_CORE_OUTPUT_FIELDS_H_
