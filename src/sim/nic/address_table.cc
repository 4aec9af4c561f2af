#include "sim/nic/address_table.h"

#include <algorithm>

namespace ukai::sim {

LearnStep AddressTable::Learn(Mac mac, int32_t node, const std::vector<int32_t>& detour) {
  auto it = rows_.find(mac);  // S12
  if (it != rows_.end() && it->second.node == node && it->second.detour == detour) {
    return LearnStep::kEqual;  // S13: all three equal
  }
  if (it != rows_.end()) {  // S14 yes -> S15
    it->second.node = node;
    it->second.detour = detour;
    return LearnStep::kUpdated;
  }
  rows_.emplace(mac, AddressRow{mac, node, detour});  // S16
  return LearnStep::kAdded;
}

void AddressTable::Install(const AddressRow& row) { rows_[row.mac] = row; }

const AddressRow* AddressTable::Find(Mac mac) const {
  auto it = rows_.find(mac);
  return it == rows_.end() ? nullptr : &it->second;
}

std::vector<AddressRow> AddressTable::Rows() const {
  std::vector<AddressRow> out;
  out.reserve(rows_.size());
  for (const auto& [mac, row] : rows_) out.push_back(row);
  std::sort(out.begin(), out.end(),
            [](const AddressRow& a, const AddressRow& b) { return a.mac < b.mac; });
  return out;
}

}  // namespace ukai::sim
