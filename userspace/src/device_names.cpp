// SPDX-License-Identifier: MIT
//
// Names of the device values a consumer prints: engine states, interrupt
// edges, the causes of a stopped program, EVT_SEM operations (device.hpp).
#include "libneuron/device.hpp"

#include <fmt/format.h>

namespace neuron {

std::string engine_state_name(std::uint32_t state) {
  switch (state) {
    case NEURON_ENGINE_IDLE: return "IDLE";
    case NEURON_ENGINE_RUNNING: return "RUNNING";
    case NEURON_ENGINE_WAITING: return "WAITING";
    case NEURON_ENGINE_HALTED: return "HALTED";
    default: return fmt::format("STATE_{}", state);
  }
}

std::string edge_name(std::uint32_t edge) {
  switch (edge) {
    case NEURON_EDGE_NOTIFIC: return "NOTIFIC";
    case NEURON_EDGE_THROTTLE: return "THROTTLE";
    case NEURON_EDGE_FAULT: return "FAULT";
    case NEURON_EDGE_RESET: return "RESET";
    case NEURON_EDGE_PCI_ERROR: return "PCI_ERROR";
    case NEURON_EDGE_ENGINE_STOPPED: return "ENGINE_STOPPED";
    case NEURON_EDGE_HANG: return "HANG";
    default: return fmt::format("EDGE_{}", edge);
  }
}

std::string stop_cause_name(std::uint32_t cause) {
  switch (cause) {
    case NEURON_STOP_ENGINE_RESET: return "ENGINE_RESET";
    case NEURON_STOP_CORE_RELEASE: return "CORE_RELEASE";
    case NEURON_STOP_RELEASE: return "RELEASE";
    case NEURON_STOP_HANG: return "HANG";
    default: return fmt::format("STOP_{}", cause);
  }
}

std::string evt_sem_op_name(std::uint32_t op) {
  static constexpr const char* names[] = {"SEM_READ",   "SEM_SET",   "SEM_INC",    "SEM_DEC",
                                          "EVENT_READ", "EVENT_SET", "EVENT_CLEAR"};
  return op < 7 ? names[op] : fmt::format("OP_{}", op);
}

}  // namespace neuron
