#include "sim/fullmesh/tables.h"

#include <algorithm>

namespace ukai::sim::fullmesh {

CommTable::CommTable() {
  free_numbers_.reserve(kMaxCommunications);
  for (int i = kMaxCommunications - 1; i >= 0; --i)
    free_numbers_.push_back(static_cast<int16_t>(i));
}

size_t CommTable::Append(CommRow row) {
  row.number = free_numbers_.back();
  free_numbers_.pop_back();
  rows_.push_back(std::move(row));
  return rows_.size() - 1;
}

int CommTable::Find(int16_t number) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].number == number) return static_cast<int>(i);
  }
  return -1;
}

void CommTable::Remove(int16_t number) {
  const int at = Find(number);
  if (at < 0) return;
  rows_.erase(rows_.begin() + at);
  free_numbers_.push_back(number);
}

LinkTable::LinkTable(int nodes, int planes)
    : nodes_(nodes),
      planes_(planes),
      usage_(static_cast<size_t>(planes) * nodes * (nodes - 1), -1),
      hop_(usage_.size(), 0) {}

void LinkTable::Endpoints(int32_t link, int* from, int* to, int* plane) const {
  const int per_node = nodes_ - 1;
  const int row = link / per_node;
  *plane = row / nodes_;
  *from = row % nodes_;
  const int col = link % per_node;
  *to = col < *from ? col : col + 1;
}

int32_t LinkTable::FreeLink(int from, int to) const {
  for (int p = 0; p < planes_; ++p) {
    const int32_t id = LinkId(from, to, p);
    if (usage_[id] < 0) return id;
  }
  return -1;
}

void LinkTable::Take(int32_t link, int16_t number, Hop hop) {
  if (usage_[link] < 0) ++busy_;
  usage_[link] = number;
  hop_[link] = static_cast<uint8_t>(hop);
}

void LinkTable::Release(int32_t link) {
  if (usage_[link] >= 0) --busy_;
  usage_[link] = -1;
  hop_[link] = 0;
}

std::vector<int> LinkTable::OneHopVia(int from, int to) const {
  std::vector<int> out;
  for (int n = 0; n < nodes_; ++n) {
    if (n != from && n != to) out.push_back(n);
  }
  return out;
}

}  // namespace ukai::sim::fullmesh
