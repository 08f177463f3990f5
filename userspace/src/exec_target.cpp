// SPDX-License-Identifier: MIT
//
// DeviceTarget, execute()'s ExecTarget over a Device (one call each), and
// the defaults of an ExecTarget without routing, completion notifications
// or a host EVT_SEM path (execute.hpp).
#include "libneuron/execute.hpp"

#include <fmt/format.h>

#include "event_fanout.hpp"

namespace neuron {

Result<std::unique_ptr<ReapQueue>> DeviceTarget::open_queue(unsigned core, unsigned queue,
                                                            const NotificationQueue::Options& opt) {
  auto q = NotificationQueue::create(dev_, core, queue, opt);
  if (!q) return unexpected(std::move(q).error());
  return make_reap_queue(std::move(q).value());
}

// The file's events through its fan-out: every execute() running on the
// Device at the same time sees every event (src/event_fanout.hpp)
Result<std::unique_ptr<EventSource>> DeviceTarget::open_events() { return detail::subscribe_events(dev_); }

Status DeviceTarget::set_feature_flags(unsigned core, std::uint32_t flags) {
  return dev_.set_feature_flags(core, flags);
}

Status DeviceTarget::submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) {
  return dev_.submit(core, engine, insns, flags);
}

Result<EngineStatus> DeviceTarget::engine_status(unsigned core, unsigned engine) {
  return dev_.engine_status(core, engine);
}

Status DeviceTarget::engine_reset(unsigned core, unsigned engine) { return dev_.engine_reset(core, engine); }

Result<DeviceInfo> DeviceTarget::info() { return dev_.info(); }

Result<std::uint64_t> DeviceTarget::acquire_cores(std::uint64_t cores) { return dev_.acquire_cores(cores); }

Result<std::uint64_t> DeviceTarget::release_cores(std::uint64_t cores) { return dev_.release_cores(cores); }

Result<std::vector<CoreOwner>> DeviceTarget::core_owners() { return dev_.core_owners(); }

Result<std::uint32_t> DeviceTarget::route(unsigned core) { return dev_.route(core); }

Result<std::uint32_t> DeviceTarget::set_route(unsigned core, std::uint32_t route) {
  return dev_.set_route(core, route);
}

Result<Device::NotifyTriggers> DeviceTarget::notify_trigger(unsigned core, neuron_trigger_source source,
                                                            unsigned index, bool enable) {
  return dev_.notify_trigger(core, source, index, enable);
}

Result<std::uint32_t> DeviceTarget::evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op, std::uint32_t value) {
  return dev_.evt_sem(core, index, op, value);
}

Result<Device::NotifyTriggers> ExecTarget::notify_trigger(unsigned core, neuron_trigger_source source,
                                                          unsigned index, bool enable) {
  return unexpected(errc::not_supported,
                    fmt::format("NEURON_IOC_NOTIFY_TRIGGER core={} source={} index={} enable={}: this target has no "
                                "completion notifications",
                                core, static_cast<unsigned>(source), index, enable ? 1 : 0));
}

Result<std::uint32_t> ExecTarget::evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op, std::uint32_t value) {
  return unexpected(errc::not_supported,
                    fmt::format("NEURON_IOC_EVT_SEM core={} index={} op={} value={}: this target has no host EVT_SEM "
                                "path",
                                core, index, static_cast<unsigned>(op), value));
}

std::string ExecTarget::fmt_route_unsupported(unsigned core, std::uint32_t route) {
  return fmt::format("NEURON_IOC_NQ_ROUTE core={} op=SET route={:#010x}: this target has only the default route",
                     core, route);
}

Status DeviceTarget::mem_alloc_fixed(std::uint64_t offset, std::uint64_t size) {
  auto r = dev_.mem_alloc(size, offset);
  if (!r) return unexpected(std::move(r).error());
  return {};
}

Status DeviceTarget::mem_free(std::uint64_t offset) { return dev_.mem_free(offset); }

}  // namespace neuron
