// The sub-functions the deadlock-freedom checker (cdg_check.h) builds its dependency graph
// of, one per routing entry (the table in cdg_check.cc says which is used for which):
//   DorEscape     dimension order with dateline classes on every VC (`dor`, with its
//                 routing.dor_dateline and routing.dor_tie);
//   UpDownEscape  up*/down* on a set of VCs (`updown`);
//   RoutedEscape  a RoutingFunction's own Route() split into escape VCs and adaptive VCs
//                 (`duato`, `detour-nf`, and `detour-ud`'s UD-VC): the checker then checks the
//                 code as it routes, with its options and fault tables.
// Ownership: every function keeps references to the topology / routing / tables it is given,
// which must outlive it. Thread safety: const methods only.
#ifndef UKAI_SIM_ROUTING_ESCAPE_FUNCTIONS_H_
#define UKAI_SIM_ROUTING_ESCAPE_FUNCTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/experiment/sim_config.h"
#include "sim/routing/cdg_check.h"
#include "sim/routing/routing.h"
#include "sim/routing/updown.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

// Dimension order with dateline classes on every VC of its class. The shared dateline's
// mask depends on the input VC; with a tie rule other than "plus" both ways round a tie are
// next channels (the union of every message's choice).
class DorEscape final : public EscapeFunction {
 public:
  DorEscape(const KaryNCube& t, int vcs, DorDateline dateline, DorTieRule tie)
      : t_(t), vcs_(vcs), dateline_(dateline), tie_(tie) {}
  std::string Describe() const override;
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override;

 private:
  void Add(int port, int dim, int cls, int node, int in_port, int in_vc, int dst,
           std::vector<EscapeHop>* out) const;

  const KaryNCube& t_;
  int vcs_;
  DorDateline dateline_;
  DorTieRule tie_;
};

// up*/down* on the VCs of `mask`.
class UpDownEscape final : public EscapeFunction {
 public:
  UpDownEscape(const Topology& t, const UpDownTables& tables, uint32_t mask, std::string what)
      : t_(t), tables_(tables), mask_(mask), what_(std::move(what)) {}
  std::string Describe() const override { return what_; }
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override;

 private:
  const Topology& t_;
  const UpDownTables& tables_;
  uint32_t mask_;
  std::string what_;
};

// How RoutedEscape reads a RoutingFunction.
struct RoutedEscapeSpec {
  std::string describe;         // Describe()
  std::string rationale;        // Rationale()
  uint32_t escape_vcs = 0;      // bit v: VC v belongs to the escape / recovery sub-function
  bool recovery = false;        // Recovery()
  uint32_t escape_state = 0;    // routing state word of a message on an escape VC
  int64_t entry_blocked = 0;    // blocked_cycles of a message entering (detour-ud: timeout)
  bool atomic_adaptive = true;  // AtomicAdaptiveVcs()
};

// A RoutingFunction's Route() as an escape function: the candidates' VCs inside
// spec.escape_vcs are the escape hops, the ports with VCs outside it the adaptive ones. A
// head is routed with a fresh state word (spec.escape_state on an escape VC, else 0) and
// blocked_cycles 0 on an escape VC, else spec.entry_blocked: valid for routings whose
// state is a function of the current channel (the dateline class, the Negative-First
// phase and the up*/down* phase are re-derived from the input channel by Route(); the
// statistics bits do not route).
class RoutedEscape final : public EscapeFunction {
 public:
  RoutedEscape(const Topology& t, const RoutingFunction& routing, int vcs, RoutedEscapeSpec spec);
  std::string Describe() const override { return spec_.describe; }
  std::string Rationale() const override { return spec_.rationale; }
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override;
  uint32_t AdaptivePorts(int node, int in_port, int in_vc, int dst) const override;
  int AdaptiveVc() const override { return adaptive_vc_; }
  bool Recovery() const override { return spec_.recovery; }
  bool AtomicAdaptiveVcs() const override { return spec_.atomic_adaptive; }

 private:
  void Route(int node, int in_port, int in_vc, int dst, RouteResult* out) const;

  const Topology& t_;
  const RoutingFunction& routing_;
  RoutedEscapeSpec spec_;
  int adaptive_vc_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_ESCAPE_FUNCTIONS_H_
