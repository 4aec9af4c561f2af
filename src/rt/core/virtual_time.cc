#include "rt/core/virtual_time.h"

namespace ukai::rt::internal {
namespace {

thread_local bool tls_in_simulation = false;

}  // namespace

bool ThreadInSimulation() { return tls_in_simulation; }
void SetThreadInSimulation(bool on) { tls_in_simulation = on; }

}  // namespace ukai::rt::internal
