// The BookSim2 statistics of a flit-level point (docs/booksim.md): the record fields of
// measure.mode = booksim | booksim_throughput and the summary lines printed from them.
#include <span>
#include <string>

#include "sim/experiment/booksim_model.h"
#include "sim/experiment/flit_field_parts.h"
#include "sim/experiment/flit_fields.h"

namespace ukai::sim {
namespace {

using output::Field;
using F = FlitField;
using P = const FlitPointContext&;

Field Text(std::string_view s) { return std::string(s); }

using BF = BooksimFigures;
bool HasBooksim(P p) { return p.result->booksim.present; }
template <int kStat, int kPart>
Field Bs(P p) {
  return p.result->booksim.stat[kStat][kPart];
}
constexpr std::string_view kIfBooksim = "with measure.mode = booksim or booksim_throughput";

// BookSim2's statistics (docs/booksim.md); its summary lines are printed from these fields
// (BooksimSummaryLines()).
constexpr F kBooksimFields[] = {
    {{"router_model", "", "router.model", "", 0, kIfBooksim},
     [](P p) -> Field { return Text(RouterModelName(p.config->router.model)); },
     &HasBooksim},
    {{"packet_latency_avg", "cycles",
      "BookSim2's packet latency: creation to tail arrival: average (of the measured packets)", "",
      0, kIfBooksim},
     &Bs<BF::kPacketLatency, BF::kAvg>,
     &HasBooksim},
    {{"packet_latency_min", "cycles",
      "BookSim2's packet latency: creation to tail arrival: minimum (of the measured packets)", "",
      0, kIfBooksim},
     &Bs<BF::kPacketLatency, BF::kMin>,
     &HasBooksim},
    {{"packet_latency_max", "cycles",
      "BookSim2's packet latency: creation to tail arrival: maximum (of the measured packets)", "",
      0, kIfBooksim},
     &Bs<BF::kPacketLatency, BF::kMax>,
     &HasBooksim},
    {{"network_latency_avg", "cycles",
      "BookSim2's network latency: injection of the head into the injection channel to tail "
      "arrival: average (of the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kNetworkLatency, BF::kAvg>,
     &HasBooksim},
    {{"network_latency_min", "cycles",
      "BookSim2's network latency: injection of the head into the injection channel to tail "
      "arrival: minimum (of the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kNetworkLatency, BF::kMin>,
     &HasBooksim},
    {{"network_latency_max", "cycles",
      "BookSim2's network latency: injection of the head into the injection channel to tail "
      "arrival: maximum (of the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kNetworkLatency, BF::kMax>,
     &HasBooksim},
    {{"flit_latency_avg", "cycles",
      "BookSim2's flit latency: the flit's injection into the injection channel to its "
      "arrival, over every flit of the measured packets: average (of the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kFlitLatency, BF::kAvg>,
     &HasBooksim},
    {{"flit_latency_min", "cycles",
      "flit latency minimum: packet creation to the head's arrival, least over the measured "
      "packets (BookSim2 takes each flit from its own injection: equal where heads leave in "
      "their creation cycle, as at zero load)",
      "", 0, kIfBooksim},
     &Bs<BF::kFlitLatency, BF::kMin>,
     &HasBooksim},
    {{"flit_latency_max", "cycles",
      "flit latency maximum: packet creation to the tail's arrival, most over the measured "
      "packets (an upper bound of BookSim2's, which takes each flit from its own injection)",
      "", 0, kIfBooksim},
     &Bs<BF::kFlitLatency, BF::kMax>,
     &HasBooksim},
    {{"fragmentation_avg", "cycles",
      "BookSim2's fragmentation: tail arrival minus head arrival minus (flits - 1): average (of "
      "the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kFragmentation, BF::kAvg>,
     &HasBooksim},
    {{"fragmentation_min", "cycles",
      "BookSim2's fragmentation: tail arrival minus head arrival minus (flits - 1): minimum (of "
      "the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kFragmentation, BF::kMin>,
     &HasBooksim},
    {{"fragmentation_max", "cycles",
      "BookSim2's fragmentation: tail arrival minus head arrival minus (flits - 1): maximum (of "
      "the measured packets)",
      "", 0, kIfBooksim},
     &Bs<BF::kFragmentation, BF::kMax>,
     &HasBooksim},
    {{"injected_packet_rate_avg", "packets/node/cycle",
      "BookSim2's injected packets per node and cycle: average (mean over nodes)", "", 0,
      kIfBooksim},
     &Bs<BF::kInjectedPacketRate, BF::kAvg>,
     &HasBooksim},
    {{"injected_packet_rate_min", "packets/node/cycle",
      "BookSim2's injected packets per node and cycle: minimum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kInjectedPacketRate, BF::kMin>,
     &HasBooksim},
    {{"injected_packet_rate_max", "packets/node/cycle",
      "BookSim2's injected packets per node and cycle: maximum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kInjectedPacketRate, BF::kMax>,
     &HasBooksim},
    {{"accepted_packet_rate_avg", "packets/node/cycle",
      "BookSim2's accepted packets per node and cycle: average (mean over nodes)", "", 0,
      kIfBooksim},
     &Bs<BF::kAcceptedPacketRate, BF::kAvg>,
     &HasBooksim},
    {{"accepted_packet_rate_min", "packets/node/cycle",
      "BookSim2's accepted packets per node and cycle: minimum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kAcceptedPacketRate, BF::kMin>,
     &HasBooksim},
    {{"accepted_packet_rate_max", "packets/node/cycle",
      "BookSim2's accepted packets per node and cycle: maximum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kAcceptedPacketRate, BF::kMax>,
     &HasBooksim},
    {{"injected_flit_rate_avg", "flits/node/cycle",
      "BookSim2's injected flits per node and cycle: average (mean over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kInjectedFlitRate, BF::kAvg>,
     &HasBooksim},
    {{"injected_flit_rate_min", "flits/node/cycle",
      "BookSim2's injected flits per node and cycle: minimum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kInjectedFlitRate, BF::kMin>,
     &HasBooksim},
    {{"injected_flit_rate_max", "flits/node/cycle",
      "BookSim2's injected flits per node and cycle: maximum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kInjectedFlitRate, BF::kMax>,
     &HasBooksim},
    {{"accepted_flit_rate_avg", "flits/node/cycle",
      "BookSim2's accepted flits per node and cycle: average (mean over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kAcceptedFlitRate, BF::kAvg>,
     &HasBooksim},
    {{"accepted_flit_rate_min", "flits/node/cycle",
      "BookSim2's accepted flits per node and cycle: minimum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kAcceptedFlitRate, BF::kMin>,
     &HasBooksim},
    {{"accepted_flit_rate_max", "flits/node/cycle",
      "BookSim2's accepted flits per node and cycle: maximum (over nodes)", "", 0, kIfBooksim},
     &Bs<BF::kAcceptedFlitRate, BF::kMax>,
     &HasBooksim},
    {{"router_hops_avg", "routers",
      "BookSim2's Hops average: routers a measured packet crossed (avg_hops + 1)", "", 0,
      kIfBooksim},
     [](P p) -> Field { return p.result->booksim.hops; },
     &HasBooksim},
    {{"unstable", "",
      "BookSim2's verdict: true when it would print \"Simulation unstable, ending ...\" (the "
      "latency threshold was exceeded, or measure.max_samples periods did not converge)",
      "", 0, kIfBooksim},
     [](P p) -> Field { return p.result->booksim.unstable; },
     &HasBooksim},
    {{"booksim_log", "",
      "BookSim2's progress lines that say how the run went (\"Warmed up ...\", \"Average "
      "latency for class 0 exceeded ...\"), one per line",
      "", 0, kIfBooksim},
     [](P p) -> Field { return p.result->booksim.log; },
     &HasBooksim},
};

constexpr BooksimLine kBooksimLines[] = {
    {"Packet latency average", "packet_latency"},
    {"Network latency average", "network_latency"},
    {"Flit latency average", "flit_latency"},
    {"Fragmentation average", "fragmentation"},
    {"Injected packet rate average", "injected_packet_rate"},
    {"Accepted packet rate average", "accepted_packet_rate"},
    {"Injected flit rate average", "injected_flit_rate"},
    {"Accepted flit rate average", "accepted_flit_rate"},
};

}  // namespace

std::span<const FlitField> BooksimFieldPart() { return kBooksimFields; }
std::span<const BooksimLine> BooksimSummaryLines() { return kBooksimLines; }

}  // namespace ukai::sim
