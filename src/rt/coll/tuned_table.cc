// The selection table (select.h). Placeholder until the benchmark's first tuning run: empty,
// so the built-in rules decide.
#include "rt/coll/select.h"

namespace ukai::rt::coll {

std::span<const TableRow> TunedTable() { return {}; }

}  // namespace ukai::rt::coll
