// libFuzzer target: the launcher protocol (src/rt/launch/launch_protocol.h) as `ukai launch`
// and its children read it. Input: byte 0 picks the chunk size in which the rest is fed to
// the launcher's incremental MsgParser; every message it yields is decoded as its type says
// (kHello: u32 rank; kTable: a DescriptorTable; kTables: the tables of byte 1 % 8 ranks).
// The same bytes are also read by the children's blocking ReceiveMsg over a socketpair.
// Bad input must give an error, never a crash, hang or overflow.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rt/launch/launch_protocol.h"
#include "ukai/rt/startpoint.hpp"

using ukai::rt::launch::Message;
using ukai::rt::launch::MsgType;

namespace {

void DecodeBody(const Message& m, int ranks) {
  if (m.type == MsgType::kTable) {
    size_t used = 0;
    auto t = ukai::rt::DescriptorTable::Decode(m.body, &used);
    if (t.ok() && used > m.body.size()) __builtin_trap();
  } else if (m.type == MsgType::kTables) {
    auto tables = ukai::rt::launch::DecodeTables(m.body, ranks);
    if (tables.ok() && static_cast<int>(tables->size()) != ranks) __builtin_trap();
  }
}

void ThroughParser(const uint8_t* data, size_t size, size_t chunk, int ranks) {
  ukai::rt::launch::MsgParser parser;
  for (size_t at = 0; at < size; at += chunk) {
    parser.Append(data + at, std::min(chunk, size - at));
    for (;;) {
      Message m;
      auto more = parser.Next(&m);
      if (!more.ok()) return;  // the launcher drops the connection
      if (!*more) break;
      DecodeBody(m, ranks);
    }
  }
}

void ThroughSocket(const uint8_t* data, size_t size, int ranks) {
  if (size > 65536) return;  // fits the socket buffer: the write never blocks
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return;
  if (size > 0 && write(sv[0], data, size) != static_cast<ssize_t>(size)) size = 0;
  close(sv[0]);
  for (;;) {
    auto m = ukai::rt::launch::ReceiveMsg(sv[1], 0);
    if (!m.ok()) break;
    DecodeBody(*m, ranks);
  }
  close(sv[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t chunk = 1 + data[0] % 64;
  const int ranks = 1 + data[1] % 8;
  ThroughParser(data + 2, size - 2, chunk, ranks);
  ThroughSocket(data + 2, size - 2, ranks);
  return 0;
}
