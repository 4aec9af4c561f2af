// The config keys of the group topology, the via-node detours and the gateway NIC model
// (docs/gateway.md): their schema rows (ConfigBinding, for config_schema.cc's table) and
// the config names of their enums.
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_GATEWAY_KEYS_H_
#define UKAI_SIM_EXPERIMENT_GATEWAY_KEYS_H_

#include <string_view>
#include <vector>

#include "sim/experiment/config_binding.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// Rows of network.groups, network.group_size and routing.detour_switch.
std::vector<ConfigBinding> GatewayBindings();

// Rows of the gateway model's nic.* keys (nic/nic_config.h).
std::vector<ConfigBinding> NicBindings();

// The config name of a detour policy (nic.detours: "none", "learned", ...).
std::string_view DetourPolicyName(DetourPolicy d);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_GATEWAY_KEYS_H_
