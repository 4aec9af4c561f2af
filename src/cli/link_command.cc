// The CLI11 side of `ukai link`; the arithmetic is in src/wire/link_rate.cc.
#include "cli/link_command.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "wire/code_8b10b.h"
#include "wire/link_rate.h"

namespace ukai::cli {
namespace {

struct LinkOptions {
  wire::LinkParams params;
  std::string code = "8b10b";
  std::string format = "text";
};

void WriteText(const wire::LinkParams& p, const wire::LinkRates& r, std::ostream& out) {
  out << fmt::format("raw rate         {:.6g} Mb/s\n", p.raw_gbps * 1e3)
      << fmt::format("code             {}\n", wire::LineCodeName(p.code))
      << fmt::format("data rate        {:.6g} Mb/s\n", r.data_rate_bps / 1e6)
      << fmt::format("payload          {} B\n", p.payload_bytes)
      << fmt::format("header+trailer   {} B (30 B + 2 B x {} switch(es))\n", r.overhead_bytes,
                     p.switches)
      << fmt::format("bytes per packet {} B\n", r.wire_bytes)
      << fmt::format("efficiency       {:.6g} ({}/{})\n", r.efficiency, p.payload_bytes,
                     r.wire_bytes)
      << fmt::format("payload rate     {:.6g} Mb/s\n", r.payload_rate_bps / 1e6)
      << fmt::format("packet rate      {:.0f} packets/s ({:.3g} M)\n", r.packets_per_second,
                     r.packets_per_second / 1e6);
}

void WriteJson(const wire::LinkParams& p, const wire::LinkRates& r, std::ostream& out) {
  nlohmann::ordered_json j;
  j["raw_gbps"] = p.raw_gbps;
  j["code"] = std::string(wire::LineCodeName(p.code));
  j["payload_bytes"] = p.payload_bytes;
  j["switches"] = p.switches;
  j["overhead_bytes"] = r.overhead_bytes;
  j["wire_bytes"] = r.wire_bytes;
  j["data_rate_mbps"] = r.data_rate_bps / 1e6;
  j["efficiency"] = r.efficiency;
  j["payload_rate_mbps"] = r.payload_rate_bps / 1e6;
  j["packets_per_second"] = r.packets_per_second;
  out << j.dump() << "\n";
}

int RunLink(const LinkOptions& o, const CliIo& io) {
  wire::LinkParams p = o.params;
  Result<wire::LineCode> code = wire::ParseLineCode(o.code);
  if (!code.ok()) {
    *io.err << "ukai link: " << code.status().message() << "\n";
    return kExitUsage;
  }
  p.code = *code;
  if (o.format != "text" && o.format != "json") {
    *io.err << "ukai link: --format: unknown format '" << o.format << "' (known: text, json)\n";
    return kExitUsage;
  }
  Result<wire::LinkRates> rates = wire::ComputeLinkRates(p);
  if (!rates.ok()) {
    *io.err << "ukai link: " << rates.status().message() << "\n";
    return kExitUsage;
  }
  (o.format == "json" ? WriteJson : WriteText)(p, *rates, *io.out);
  return kExitOk;
}

void WriteGroup(uint8_t value, bool control, wire::Disparity rd, std::ostream& out) {
  const wire::CodeGroup g = *wire::Encode8b10b(value, control, rd);
  auto sign = [](wire::Disparity d) { return d == wire::Disparity::kPlus ? '+' : '-'; };
  out << sign(rd) << ' ' << wire::CodeGroupName(value, control) << ' ' << int{value} << ' '
      << wire::CodeGroupBitString(g.bits) << ' ' << sign(g.rd_after) << '\n';
}

}  // namespace

void WriteCodeTable(std::ostream& out) {
  for (int v = 0; v < 256; ++v) {
    for (wire::Disparity rd : {wire::Disparity::kMinus, wire::Disparity::kPlus}) {
      WriteGroup(static_cast<uint8_t>(v), false, rd, out);
    }
  }
  for (uint8_t k : wire::kControlValues) {
    for (wire::Disparity rd : {wire::Disparity::kMinus, wire::Disparity::kPlus}) {
      WriteGroup(k, true, rd, out);
    }
  }
}

void RegisterLinkCommand(CLI::App* link, CommandContext* context) {
  auto o = std::make_shared<LinkOptions>();
  link->require_subcommand(0, 1);
  link->add_option("--raw-gbps", o->params.raw_gbps, "raw line rate in Gb/s, code bits included")
      ->capture_default_str();
  link->add_option("--code", o->code, "line code: 8b10b or none")->capture_default_str();
  link->add_option("--payload-bytes", o->params.payload_bytes, "payload of one packet (<= 4096)")
      ->capture_default_str();
  link->add_option("--switches", o->params.switches,
                   "switches on the route (header+trailer = 30 B + 2 B per switch)")
      ->capture_default_str();
  link->add_option("--format", o->format, "output format: text or json")->capture_default_str();
  CLI::App* table_cmd = link->add_subcommand("8b10b", "the 8b/10b code");
  auto table = std::make_shared<bool>(false);
  table_cmd->add_flag("--table", *table,
                      "print every code group: RD-before name byte abcdeifghj RD-after");
  table_cmd->callback([table, context] {
    if (!*table) {
      *context->io.err << "ukai link 8b10b: nothing to do (use --table)\n";
      context->exit_code = kExitUsage;
      return;
    }
    WriteCodeTable(*context->io.out);
  });
  link->callback([table_cmd, o, context] {
    if (table_cmd->parsed()) return;
    context->exit_code = RunLink(*o, context->io);
  });
}

}  // namespace ukai::cli
