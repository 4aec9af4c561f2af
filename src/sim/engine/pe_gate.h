// PeGate: a model of what stands between a PE's send buffer and its router (the SSS NIC's
// SRAM buffer rate, nic/sss_nic.h). The Network asks it before the PE pushes a flit.
//
// Thread safety: called by the thread that steps the Network.
#ifndef UKAI_SIM_ENGINE_PE_GATE_H_
#define UKAI_SIM_ENGINE_PE_GATE_H_

#include <cstdint>

namespace ukai::sim {

class PeGate {
 public:
  virtual ~PeGate() = default;
  // Whether the PE of `node` may push one flit into its router at cycle `now` (`head`: the
  // first flit of a message); true takes what the flit costs (the PE then pushes it). A
  // gate that refuses only heads never stops a message midway.
  virtual bool TryInject(int32_t node, int64_t now, bool head) = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_PE_GATE_H_
