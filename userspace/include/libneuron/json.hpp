// SPDX-License-Identifier: MIT
//
// JSON for decoded records (nlohmann::json). Not part of the umbrella
// header libneuron/neuron.hpp: include it explicitly (and have
// nlohmann-json3-dev installed) to use it.
#pragma once

#include <nlohmann/json.hpp>

#include "libneuron/decode.hpp"
#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// Every field, plus "type" (notific_type name) and "kind" (kind_name); the
/// device time is "device_time_ps", a trace record's point "trace"
/// ("INST_START" or "INST_END"); docs/cli-json.md#record.
nlohmann::json to_json(const Decoded& d);

}  // namespace neuron
NEURON_API_END
