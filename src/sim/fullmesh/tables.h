// The controller's two tables (spec/fullmesh-relay.md, Figs 17-18; claims-004 E3.23-E3.26).
//
// Communication management table: one row per live communication with exactly the
// document's columns (number, type, sender, receiver, communicator, send address, receive
// address, count, precision, ID, state). Rows are appended at the end; a finished row is
// deleted and the rows below move up, so row order = arrival order = priority. Numbers are
// the header's 10-bit field: at most 1024 live rows.
//
// Link management table: one entry per (plane, sender, receiver) link with its usage (the
// communication number, and whether it is used as direct, 1-hop first or 1-hop second hop)
// and the 1-hop via column (the destinations reachable by adding one hop after the link,
// computed, not stored). Memory: 3 bytes per link, N(N-1) links per plane.
//
// Thread safety: none; owned by one Controller.
#ifndef UKAI_SIM_FULLMESH_TABLES_H_
#define UKAI_SIM_FULLMESH_TABLES_H_

#include <cstdint>
#include <vector>

#include "sim/fullmesh/fullmesh_types.h"
#include "sim/fullmesh/plan.h"

namespace ukai::sim::fullmesh {

inline constexpr int kMaxCommunications = 1024;  // 10-bit communication number

enum class RowState { kCommunicating, kWaiting };

struct CommRow {
  // The document's columns (1155-0 .. 1155-10).
  int16_t number = 0;
  OpType type = OpType::kP2p;
  int sender = -1;    // node, or -1 = every member of the communicator
  int receiver = -1;  // node, or -1 = the communicator
  int comm = 0;       // communicator index (0 = WORLD)
  uint64_t send_address = 0;
  uint64_t recv_address = 0;
  int64_t count = 0;  // elements
  int precision = 1;  // bytes per element
  uint32_t id = 0;    // MPI tag / process
  RowState state = RowState::kWaiting;
  // Bookkeeping (not columns): the workload operation and what the row holds.
  int64_t op_index = -1;
  Operation op;
  std::vector<int32_t> links;  // link ids held while communicating
  std::vector<int> relays;     // relay units held
};

class CommTable {
 public:
  CommTable();
  // False when all 1024 numbers are in use.
  bool HasFreeNumber() const { return !free_numbers_.empty(); }
  // Appends `row` with a fresh number; returns its position (the last).
  size_t Append(CommRow row);
  // Deletes the row with `number`, moving the rows below up; frees the number.
  void Remove(int16_t number);
  // Position of the row with `number`, or -1.
  int Find(int16_t number) const;
  std::vector<CommRow>& rows() { return rows_; }
  const std::vector<CommRow>& rows() const { return rows_; }

 private:
  std::vector<CommRow> rows_;
  std::vector<int16_t> free_numbers_;  // a stack; the smallest number on top first
};

class LinkTable {
 public:
  LinkTable(int nodes, int planes);
  int nodes() const { return nodes_; }
  int planes() const { return planes_; }
  int32_t num_links() const { return static_cast<int32_t>(usage_.size()); }
  int32_t LinkId(int from, int to, int plane) const {
    return (plane * nodes_ + from) * (nodes_ - 1) + (to < from ? to : to - 1);
  }
  void Endpoints(int32_t link, int* from, int* to, int* plane) const;
  // Usage column: the communication number, or -1 when idle.
  int16_t usage(int32_t link) const { return usage_[link]; }
  Hop usage_hop(int32_t link) const { return static_cast<Hop>(hop_[link]); }
  // The idle link of (from, to) on the lowest plane, or -1 when every plane's is busy.
  int32_t FreeLink(int from, int to) const;
  void Take(int32_t link, int16_t number, Hop hop);
  void Release(int32_t link);
  // 1-hop via column (1156-4): nodes reachable by one more hop after from -> to.
  std::vector<int> OneHopVia(int from, int to) const;
  int64_t busy_links() const { return busy_; }

 private:
  int nodes_, planes_;
  std::vector<int16_t> usage_;
  std::vector<uint8_t> hop_;
  int64_t busy_ = 0;
};

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_TABLES_H_
