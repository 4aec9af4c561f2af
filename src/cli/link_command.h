// `ukai link`: the link calculator and the 8b/10b code table (src/wire/link_rate.h,
// src/wire/code_8b10b.h).
//   ukai link [--raw-gbps G] [--code 8b10b|none] [--payload-bytes B] [--switches S]
//             [--format text|json]
//   ukai link 8b10b --table
// Defaults are the paper's example: 1.0625 Gb/s, 8b10b, a 4-byte remote write, one switch.
#ifndef UKAI_CLI_LINK_COMMAND_H_
#define UKAI_CLI_LINK_COMMAND_H_

#include <ostream>

#include "cli/commands.h"

namespace ukai::cli {

void RegisterLinkCommand(CLI::App* link, CommandContext* context);

// Writes every 8b/10b code group, both running disparities, one a line: "RD-before name byte
// bits RD-after" (e.g. "- K.28.5 188 0011111010 +"): the 256 data groups then the 12 K groups.
void WriteCodeTable(std::ostream& out);

}  // namespace ukai::cli

#endif  // UKAI_CLI_LINK_COMMAND_H_
