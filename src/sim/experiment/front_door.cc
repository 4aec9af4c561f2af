#include "sim/experiment/front_door.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "core/config/toml_reader.h"
#include "sim/experiment/booksim_reader.h"
#include "sim/experiment/flit_model.h"
#include "sim/experiment/gateway_keys.h"
#include "sim/experiment/nic_job_config.h"

namespace ukai::sim {
namespace {

constexpr std::string_view kTopologyKey = "network.topology";

// network.topology as the front door reads it: any model's topology.
config::KeySpec TopologySpec() {
  std::vector<std::string> names;
  for (const MachineModel& m : MachineModels()) {
    for (const TopologyChoice& t : m.topologies()) names.emplace_back(t.name);
  }
  return config::KeySpec::Make(std::string(kTopologyKey), config::ValueType::kEnum)
      .Allowed(std::move(names))
      .Default(std::string(DefaultTopology()));
}

// The key of a "key=value" argument, as config::ApplySetArgument reads it.
std::string SetKey(std::string_view arg) {
  const size_t eq = arg.find('=');
  std::string key(arg.substr(0, eq == std::string_view::npos ? 0 : eq));
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key;
}

// The network.topology of a config: its last --set, else the file's, else the default.
Result<std::string> ChooseTopology(const config::RawConfig& raw,
                                   const std::vector<std::string>& overrides) {
  const config::KeySpec spec = TopologySpec();
  std::vector<std::string> sets;
  for (const std::string& arg : overrides) {
    if (SetKey(arg) == kTopologyKey) sets.push_back(arg);
  }
  config::ConfigValues chosen;
  if (!sets.empty()) {
    UKAI_RETURN_IF_ERROR(config::ApplySetArguments(sets, config::Schema({spec}), &chosen));
  } else {
    Result<std::optional<config::Value>> in_file = config::CheckedRawValue(raw, spec);
    if (!in_file.ok()) return in_file.status();
    if (!in_file->has_value()) return std::string(DefaultTopology());
    chosen.Set(spec.key, std::move(**in_file));
  }
  return std::get<std::string>(chosen.Find(kTopologyKey)->items[0]);
}

constexpr std::string_view kNotReadByMachine =
    "is not read by a machine for the runtime's sim module (ukai launch --sim): ";

// True for the gateway model's keys (nic/nic_config.h) that a machine reads: all of them but
// nic.internal_traffic (the program's frames are the compute nodes' traffic).
bool IsMachineGatewayKey(std::string_view key) {
  if (key == "nic.internal_traffic") return false;
  for (const ConfigBinding& b : NicBindings()) {
    if (b.spec.key == key) return true;
  }
  for (const config::KeySpec& k : NicJobKeySpecs()) {
    if (k.key == key) return true;
  }
  return false;
}

// Why a machine for the runtime's sim module (ConfigUse::kMachine) on `topology` does not
// read `key`; "" when it does.
std::string WhyNotReadByMachine(std::string_view key, std::string_view topology) {
  const std::string program =
      std::string(kNotReadByMachine) + "the program is the traffic (docs/sim-module.md)";
  for (std::string_view prefix : {"traffic.", "workload."}) {
    if (key.starts_with(prefix)) return program;
  }
  if (key == "nic.internal_traffic") {
    return std::string(kNotReadByMachine) +
           "the program's frames are the compute nodes' traffic beside the gateway's "
           "(docs/sim-module.md)";
  }
  if (key.starts_with("nic.") && !IsMachineGatewayKey(key)) {
    return std::string(kNotReadByMachine) +
           "it is a key of the SSS-CORE NIC model, which the sim module does not use (the "
           "runtime has the NIC's functions; docs/sim-module.md)";
  }
  if (key.starts_with("nic.") && topology != "group") {
    return std::string(kNotReadByMachine) +
           "the gateway NIC runs under the sim module on network.topology = \"group\" "
           "(docs/sim-module.md)";
  }
  if (key.starts_with("measure.") && key != "measure.watchdog_cycles") return program;
  if (key == "run.threads" || key == "run.partition" || key == "run.partition_min_nodes") {
    return std::string(kNotReadByMachine) + "the machine steps on one thread of the launcher";
  }
  return "";
}

// `schema` without the keys a machine on `topology` does not read, each refused with the
// reason.
config::Schema MachineSchema(const config::Schema& schema, std::string_view topology) {
  std::vector<config::KeySpec> keys;
  std::vector<std::pair<std::string, std::string>> refused;
  for (const config::KeySpec& k : schema.keys()) {
    std::string why = WhyNotReadByMachine(k.key, topology);
    if (!why.empty()) {
      refused.emplace_back(k.key, std::move(why));
    } else {
      keys.push_back(k);
    }
  }
  config::Schema machine(std::move(keys));
  for (const auto& [key, why] : schema.refusals()) machine.Refuse(key, why);
  for (auto& [key, why] : refused) machine.Refuse(std::move(key), std::move(why));
  return machine;
}

// The Markdown block `name` with its markers.
std::string Block(std::string_view name, std::string_view markdown) {
  return fmt::format(
      "<!-- generated by ukai sim describe --markdown: {} -->\n{}<!-- end of {} -->\n", name,
      markdown, name);
}

std::string ModelsMarkdown() {
  std::string out = "| network.topology | model | description |\n|---|---|---|\n";
  for (const MachineModel& m : MachineModels()) {
    for (const TopologyChoice& t : m.topologies()) {
      out += fmt::format("| `{}` | {} | {} |\n", t.name, m.name, t.doc);
    }
  }
  return out;
}

std::string KeysMarkdown(const MachineModel& m) {
  std::string out = config::DescribeMarkdown(m.schema());
  if (m.describe_more != nullptr) {
    out += '\n';
    out += m.describe_more(true);
  }
  return out;
}

std::string DescribeText() {
  std::string out =
      "Keys of a `ukai sim run` config. network.topology chooses the machine model (default "
      "torus);\neach model takes its own keys, and a key of another model is an error. "
      "Override any key\nwith --set key=value.\n\nConfig readers (tried in this order, "
      "recognised by content):\n";
  for (const ConfigReader& r : ConfigReaders()) out += fmt::format("  {:<10} {}\n", r.name, r.doc);
  out += "\nMachine models (network.topology):\n";
  for (const MachineModel& m : MachineModels()) {
    for (const TopologyChoice& t : m.topologies()) {
      out += fmt::format("  {:<10} {:<9} {}\n", t.name, m.name, t.doc);
    }
  }
  for (const MachineModel& m : MachineModels()) {
    out += fmt::format("\n=== {}: {} ===\n{}\n\nKeys:\n\n", m.name, m.title, m.doc);
    out += config::DescribeText(m.schema());
    if (m.describe_more != nullptr) out += m.describe_more(false);
    const std::vector<output::FieldSpec> fields = m.fields();
    out +=
        fmt::format("\nResult fields of {} (CSV header / JSON keys, in record order):\n\n", m.name);
    out += output::DescribeFieldsText(fields);
  }
  return out;
}

}  // namespace

config::Schema FrontDoorSchema(const MachineModel& model, std::string_view topology,
                               ConfigUse use) {
  // network.topology takes any model's value here: a file's value that a --set replaced
  // chose nothing (the --set did), so it is not the model's to refuse.
  std::vector<config::KeySpec> keys = model.schema().keys();
  for (config::KeySpec& k : keys) {
    if (k.key == kTopologyKey) k.allowed = TopologySpec().allowed;
  }
  config::Schema schema(std::move(keys));
  for (const MachineModel& other : MachineModels()) {
    if (&other == &model) continue;
    const std::vector<TopologyChoice> topologies = other.topologies();
    std::vector<std::string_view> names;
    for (const TopologyChoice& t : topologies) names.push_back(t.name);
    const std::string why =
        names.size() == 1
            ? fmt::format("needs network.topology = \"{}\"", names[0])
            : fmt::format(
                  "is not used by network.topology = \"{}\" (a key of network.topology "
                  "= {})",
                  topology, fmt::join(names, ", "));
    const config::Schema other_schema = other.schema();
    for (const config::KeySpec& k : other_schema.keys()) {
      if (schema.Find(k.key) == nullptr && schema.RefusalOf(k.key) == nullptr) {
        schema.Refuse(k.key, why);
      }
    }
  }
  return use == ConfigUse::kMachine ? MachineSchema(schema, topology) : schema;
}

Result<config::ConfigValues> ReadConfigValues(std::string_view text, const std::string& source_name,
                                              const std::vector<std::string>& overrides,
                                              const MachineModel** model, ConfigUse use) {
  const ConfigReader& reader = FindConfigReader(text);
  Result<config::RawConfig> raw = reader.read(text, source_name);
  if (!raw.ok()) return raw.status();
  Result<std::string> topology = ChooseTopology(*raw, overrides);
  if (!topology.ok()) return topology.status();
  Result<const MachineModel*> found = FindMachineModel(*topology);
  if (!found.ok()) return found.status();
  const config::Schema schema = FrontDoorSchema(**found, *topology, use);
  Result<config::ConfigValues> values = config::CheckRawConfig(*raw, schema);
  if (!values.ok()) return values.status();
  UKAI_RETURN_IF_ERROR(config::ApplySetArguments(overrides, schema, &*values));
  *model = *found;
  return values;
}

Result<LoadedConfig> LoadConfigFromString(std::string_view text, const std::string& source_name,
                                          const std::vector<std::string>& overrides,
                                          ConfigUse use) {
  LoadedConfig loaded;
  Result<config::ConfigValues> values =
      ReadConfigValues(text, source_name, overrides, &loaded.model, use);
  if (!values.ok()) return values.status();
  loaded.reader = &FindConfigReader(text);
  const config::Value* topology = values->Find(kTopologyKey);
  loaded.topology = topology == nullptr ? std::string(DefaultTopology())
                                        : std::get<std::string>(topology->items[0]);
  Result<std::unique_ptr<Experiment>> experiment = loaded.model->prepare(*values);
  if (!experiment.ok()) return experiment.status();
  loaded.experiment = std::move(*experiment);
  return loaded;
}

Result<LoadedConfig> LoadConfig(const std::string& path, const std::vector<std::string>& overrides,
                                ConfigUse use) {
  Result<std::string> text = config::ReadConfigText(path);
  if (!text.ok()) return text.status();
  return LoadConfigFromString(*text, path, overrides, use);
}

Result<std::vector<SimConfig>> LoadSimConfigsFromString(std::string_view text,
                                                        const std::string& source_name,
                                                        const std::vector<std::string>& overrides,
                                                        ConfigUse use) {
  Result<LoadedConfig> loaded = LoadConfigFromString(text, source_name, overrides, use);
  if (!loaded.ok()) return loaded.status();
  const std::vector<SimConfig>* points = FlitPoints(*loaded->experiment);
  if (points == nullptr) {
    return Status::InvalidArgument(
               fmt::format("network.topology: \"{}\" is not a flit-level network (mesh, torus, "
                           "group), which this tool needs",
                           loaded->topology))
        .WithKey(std::string(kTopologyKey));
  }
  return *points;
}

Result<std::vector<SimConfig>> LoadSimConfigs(const std::string& path,
                                              const std::vector<std::string>& overrides,
                                              ConfigUse use) {
  Result<std::string> text = config::ReadConfigText(path);
  if (!text.ok()) return text.status();
  return LoadSimConfigsFromString(*text, path, overrides, use);
}

std::vector<ReferenceBlock> ReferenceBlocks() {
  std::vector<ReferenceBlock> out = {{"models", ModelsMarkdown()}};
  for (const MachineModel& m : MachineModels()) {
    out.push_back({fmt::format("keys of {}", m.name), KeysMarkdown(m)});
  }
  for (const MachineModel& m : MachineModels()) {
    const std::vector<output::FieldSpec> fields = m.fields();
    out.push_back({fmt::format("fields of {}", m.name), output::DescribeFieldsMarkdown(fields)});
  }
  out.push_back({"booksim keys", DescribeBooksimKeysMarkdown()});  // docs/booksim.md
  return out;
}

std::string DescribeModels(bool markdown) {
  if (!markdown) return DescribeText();
  std::string out;
  for (const ReferenceBlock& b : ReferenceBlocks()) {
    if (!out.empty()) out += "\n";
    out += Block(b.name, b.markdown);
  }
  return out;
}

}  // namespace ukai::sim
