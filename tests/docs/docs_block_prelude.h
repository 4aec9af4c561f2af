// Compiled before every C++ fragment of docs/ (docs_code_itest.cc): the names the prose
// around a fragment says exist (a runtime, a context, a startpoint of a server, ...),
// declared, never defined (the blocks are only compiled). Whole programs (with main) are
// compiled without it.
#ifndef UKAI_TESTS_DOCS_DOCS_BLOCK_PRELUDE_H_
#define UKAI_TESTS_DOCS_DOCS_BLOCK_PRELUDE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/launch_command.h"
#include "cli/sim_command.h"
#include "ukai/ukai.hpp"

namespace rt = ukai::rt;  // the docs' convention (docs/runtime.md, API tour)

namespace doc_prelude {
extern rt::Runtime& runtime;                           // a started runtime
extern rt::Context* ctx;                               // a context of it
extern rt::Endpoint* ep;                               // an endpoint of that context
extern rt::Startpoint server;                          // a startpoint of a server's endpoint
extern rt::Buffer buf;                                 // a request's payload
extern std::string value;                              // where a reply's string goes
extern std::map<std::string, std::string> table;       // a server's key-value table
extern uint8_t* memory;                                // memory to expose (RMA)
extern size_t bytes;                                   // its size
extern std::vector<uint8_t> data;                      // bytes to send or put
extern std::vector<rt::Startpoint> group_startpoints;  // a multicast group
extern rt::Multicaster* sender_mc;                     // the sender's multicaster
template <typename... A>
void use(A&&...);  // the program's own use of received data
template <typename... A>
void report(A&&...);
}  // namespace doc_prelude

using namespace doc_prelude;  // NOLINT: the fragments use the names unqualified
using namespace ukai::cli;    // NOLINT: docs/cli.md's command table

#endif  // UKAI_TESTS_DOCS_DOCS_BLOCK_PRELUDE_H_
