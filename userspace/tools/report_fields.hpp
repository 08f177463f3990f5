// SPDX-License-Identifier: MIT
//
// What the list/metrics reports (report.cpp) and the Prometheus exposition
// (prometheus.cpp) both say of a device sample: the engine states listed,
// a cause's name, a halted engine's last error, the number of cores.
#pragma once

#include <cstdint>
#include <string>

#include "devices.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"

namespace neuron::cli {

inline constexpr std::uint32_t kStates[] = {NEURON_ENGINE_IDLE, NEURON_ENGINE_RUNNING, NEURON_ENGINE_WAITING,
                                            NEURON_ENGINE_HALTED};

inline std::string cause_name(unsigned bit) { return notific_cause_names(1u << bit); }

inline std::string last_error_name(std::uint32_t e) {
  return e == 0xff ? "none" : tpb_error_name(static_cast<std::uint8_t>(e));
}

inline unsigned num_cores(const DeviceSample& d) {
  return d.info ? d.info->num_cores : static_cast<unsigned>(d.cores.size());
}

}  // namespace neuron::cli
