// AddressTable: the NIC's address table (gateway patent Fig. 11, ¶96-97): rows of MAC
// address -> node address -> detour (the via nodes from this I/O node to that node). Rows
// come from outgoing packets (the transmit unit's S12-S16), from the management node (the
// setting unit) or are pre-loaded; a node need not have a row.
//
// Thread safety: none; owned by one GatewayNic.
#ifndef UKAI_SIM_NIC_ADDRESS_TABLE_H_
#define UKAI_SIM_NIC_ADDRESS_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ukai::sim {

// A MAC address as its 48 bits (first byte on the wire most significant).
using Mac = uint64_t;

struct AddressRow {
  Mac mac = 0;
  int32_t node = -1;
  std::vector<int32_t> detour;  // via nodes, I/O node -> node; empty: none

  bool operator==(const AddressRow&) const = default;
};

// What the transmit unit's registration (Fig. 10) did with a packet.
enum class LearnStep {
  kEqual,    // S13 yes: the row already held these values
  kUpdated,  // S13 no, S14 yes -> S15: node address and detour overwritten
  kAdded,    // S13 no (no row counts as "not equal"), S14 no -> S16: row added
};

class AddressTable {
 public:
  // S12-S16 for (source MAC, source node, detour external->internal) of an outgoing packet.
  LearnStep Learn(Mac mac, int32_t node, const std::vector<int32_t>& detour);
  // The setting unit: writes (adds or overwrites) a row (management node, pre-loading).
  void Install(const AddressRow& row);
  // S34-S35: the row for `mac`, or nullptr.
  const AddressRow* Find(Mac mac) const;
  size_t size() const { return rows_.size(); }
  // Every row, in MAC order (tests, reports).
  std::vector<AddressRow> Rows() const;

 private:
  std::unordered_map<Mac, AddressRow> rows_;
};

// Reads 6 bytes (network order) as a Mac.
inline Mac ReadMac(const uint8_t* p) {
  Mac m = 0;
  for (int i = 0; i < 6; ++i) m = (m << 8) | p[i];
  return m;
}
inline void WriteMac(Mac m, uint8_t* p) {
  for (int i = 5; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(m);
    m >>= 8;
  }
}

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_ADDRESS_TABLE_H_
