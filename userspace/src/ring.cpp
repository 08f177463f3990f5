// SPDX-License-Identifier: MIT
#include "libneuron/ring.hpp"

#include <fmt/format.h>

namespace neuron {

Result<RingView> RingView::make(std::span<const Record> ring, Doorbell doorbell, std::uint32_t head) {
  if (!is_power_of_two(ring.size()) || ring.size() > (std::size_t{1} << 31))
    return unexpected(errc::bad_ring, fmt::format("ring of {} records", ring.size()));
  if (ring.data() == nullptr)
    return unexpected(errc::invalid_argument, "ring memory is null");
  return RingView(ring, doorbell, head);
}

std::string Record::hex() const {
  std::string s;
  s.reserve(16 * 3);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i) s += ' ';
    s += fmt::format("{:02x}", bytes[i]);
  }
  return s;
}

std::string engine_name(unsigned engine) {
  static constexpr const char* names[NEURON_ENGINES_PER_CORE] = {"PE", "ACT", "POOL", "DVE", "SP"};
  if (engine < NEURON_ENGINES_PER_CORE) return names[engine];
  return fmt::format("engine{}", engine);
}

std::string notific_type_name(std::uint8_t t) {
  switch (t) {
    case NEURON_ISA_NOTIFICATION_TYPE_DMA: return "DMA";
    case NEURON_ISA_NOTIFICATION_TYPE_ERROR: return "ERROR";
    case NEURON_ISA_NOTIFICATION_TYPE_AXI_EVT_SEM: return "AXI_EVT_SEM";
    case NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR: return "TPB_ERROR";
    default: break;
  }
  if (t >= NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START && t <= NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM) {
    static constexpr const char* kinds[] = {"INST_START", "INST_END", "EXPLICIT", "EVT_SEM"};
    const unsigned e = NEURON_NOTIFIC_TYPE_ENGINE(t), k = NEURON_NOTIFIC_TYPE_KIND(t);
    return engine_name(e) + "_" + kinds[k];
  }
  return fmt::format("UNKNOWN_0x{:02x}", t);
}

}  // namespace neuron
