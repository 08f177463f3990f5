// SPDX-License-Identifier: MIT
//
// Device: one open file of /dev/nnqN, one method per ioctl, the capabilities
// read at open and the file's status page mapped at open (device.hpp). The
// queues, memory, events and status page made from it have files of their
// own (docs/architecture.md#files-userspace).
#include "libneuron/device.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "ioctl.hpp"

namespace neuron {

namespace {

using detail::mem_free_ioctl;
using detail::nq_coalesce_ioctl;
using detail::nq_eventfd_ioctl;
using detail::nq_eventfd_what;
using detail::xioctl;

// The UAPI's -EOPNOTSUPP for the feature-flag ioctl means "no such register
// on this generation" (docs/hardware.md#generations); say so next to the errno
// text.
std::string feature_hint(int err) {
  return err == EOPNOTSUPP ? " (generation sunda has no feature-flag register, "
                            "docs/hardware.md#generations)"
                          : "";
}

}  // namespace

Result<Device> Device::open(const std::string& path) { return open_mode(path, O_RDWR); }
Result<Device> Device::open_read_only(const std::string& path) { return open_mode(path, O_RDONLY); }

Result<Device> Device::open_mode(const std::string& path, int mode) {
  const std::string what = std::string(mode == O_RDONLY ? "open (read-only) " : "open ") + path;
  // O_NONBLOCK: the file's events are read after a poll(), and a read()
  // must not wait past its timeout when another reader was first; the
  // driver looks at the flag for read() alone (its EventStreams share it,
  // docs/decisions/0040-event-stream-adopt.md)
  UniqueFd fd(::open(path.c_str(), mode | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return unexpected(Error::from_errno(errno, what));
  // Only a node of this driver: a character device whose file answers
  // NEURON_IOC_DEVICE_INFO (/dev/null, a regular file, another driver's
  // node do not); nothing else is sent to a file that fails either test.
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return unexpected(Error::from_errno(errno, "fstat " + path));
  if (!S_ISCHR(st.st_mode))
    return unexpected(Error::from_errno(
        ENOTTY, fmt::format("{}: not a {} device node (not a character device)", what, NEURON_DEV_NAME)));
  // The capabilities once, for the calls that need one (capabilities()).
  DeviceInfo di{};
  if (xioctl(fd.get(), NEURON_IOC_DEVICE_INFO, &di) != 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("{}: not a {} device node (NEURON_IOC_DEVICE_INFO failed)", what, NEURON_DEV_NAME)));
  const std::uint64_t caps = di.capabilities;
  const std::size_t bytes = set_event_size(fd.get());
  // The file's status page, once, for every queue made from it
  // (docs/decisions/0027-device-loss.md); a driver that announces it maps it.
  std::shared_ptr<const StatusPage> status;
  if (caps & NEURON_CAP_STATUS_PAGE) {
    auto sp = StatusPage::map(fd.get());
    if (!sp) return unexpected(Error::make(sp.error().code, sp.error().what + " (" + path + ")"));
    status = std::move(sp).value();
  }
  return Device(std::move(fd), path, bytes, caps, std::move(status));
}

Result<EventStream> Device::open_event_stream() const {
  auto fd = fd_.dup();
  if (!fd) return unexpected(fd.error());
  return EventStream::adopt(std::move(*fd), path_);
}

std::vector<std::string> Device::list(const std::string& dir) {
  std::vector<std::pair<unsigned long, std::string>> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const char* n = e->d_name;
      // only our nodes: not AWS's /dev/neuronN (docs/decisions/0015-names.md)
      constexpr std::size_t prefix = sizeof(NEURON_DEV_NAME) - 1;
      if (std::strncmp(n, NEURON_DEV_NAME, prefix) != 0 || n[prefix] == '\0') continue;
      char* end = nullptr;
      const unsigned long idx = std::strtoul(n + prefix, &end, 10);
      if (*end != '\0') continue;
      found.emplace_back(idx, dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

Result<DeviceInfo> Device::info() const {
  DeviceInfo di{};
  if (xioctl(fd(), NEURON_IOC_DEVICE_INFO, &di) < 0)
    return unexpected(Error::from_errno(errno, "NEURON_IOC_DEVICE_INFO " + path_));
  return di;
}

Result<neuron_nq_init> Device::nq_init(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t flags,
                                       std::uint32_t threshold) const {
  return nq_init(core, queue, size, flags, threshold, 0);
}

Result<neuron_nq_init> Device::nq_init(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t flags,
                                       std::uint32_t threshold, std::uint32_t coalesce_ns) const {
  const std::string coalesce = coalesce_ns ? fmt::format(" coalesce_ns={}", coalesce_ns) : "";
  if (coalesce_ns && !(caps_ & NEURON_CAP_COALESCE))
    return unexpected(errc::not_supported,
                      fmt::format("NEURON_IOC_NQ_INIT core={} queue={}{}: {} has no interrupt coalescing "
                                  "(NEURON_CAP_COALESCE; an older driver)",
                                  core, queue, coalesce, path_));
  neuron_nq_init a{};
  a.core = core;
  a.queue = queue;
  a.size = size;
  a.flags = flags;
  a.threshold = threshold;
  a.coalesce_ns = coalesce_ns;
  if (xioctl(fd(), NEURON_IOC_NQ_INIT, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_NQ_INIT core={} queue={} size={} flags=0x{:x} threshold={}{}", core, queue,
                           size, flags, threshold, coalesce)));
  return a;
}

Status Device::nq_coalesce(unsigned core, unsigned queue, std::uint32_t threshold, std::uint32_t coalesce_ns) const {
  const auto what = fmt::format("NEURON_IOC_NQ_COALESCE core={} queue={} threshold={} coalesce_ns={}", core, queue,
                                threshold, coalesce_ns);
  if (!(caps_ & NEURON_CAP_COALESCE))
    return unexpected(errc::not_supported,
                      fmt::format("{}: {} has no interrupt coalescing (NEURON_CAP_COALESCE; an older driver)", what,
                                  path_));
  if (nq_coalesce_ioctl(fd(), core, queue, threshold, coalesce_ns) < 0)
    return unexpected(Error::from_errno(errno, what));
  return {};
}

Result<TimestampSample> Device::timestamp(unsigned core) const {
  if (!(caps_ & NEURON_CAP_TIMESTAMP))
    return unexpected(errc::not_supported,
                      fmt::format("NEURON_IOC_TIMESTAMP core={}: {} cannot sample its clock (NEURON_CAP_TIMESTAMP; "
                                  "an older driver)",
                                  core, path_));
  neuron_timestamp a{};
  a.core = core;
  if (xioctl(fd(), NEURON_IOC_TIMESTAMP, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_TIMESTAMP core={}", core)));
  return TimestampSample{a.sys_before_ns, a.device_ps, a.sys_after_ns};
}

Status Device::nq_destroy(unsigned core, unsigned queue) const {
  neuron_nq_id a{};
  a.core = core;
  a.queue = queue;
  if (xioctl(fd(), NEURON_IOC_NQ_DESTROY, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_DESTROY core={} queue={}", core, queue)));
  return {};
}

Result<NqInfo> Device::nq_info(unsigned core, unsigned queue) const {
  NqInfo a{};
  a.core = core;
  a.queue = queue;
  if (xioctl(fd(), NEURON_IOC_NQ_INFO, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core, queue)));
  return a;
}

Status Device::submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) const {
  neuron_submit a{};
  a.core = core;
  a.engine = engine;
  a.count = static_cast<std::uint32_t>(insns.size());
  a.flags = flags;
  a.insns = reinterpret_cast<std::uintptr_t>(insns.data());
  if (xioctl(fd(), NEURON_IOC_SUBMIT, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_SUBMIT core={} engine={} ({}) count={} flags=0x{:x}",
                                                           core, engine, engine_name(engine), insns.size(), flags)));
  return {};
}

Result<EngineStatus> Device::engine_status(unsigned core, unsigned engine) const {
  EngineStatus a{};
  a.core = core;
  a.engine = engine;
  if (xioctl(fd(), NEURON_IOC_ENGINE_STATUS, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_ENGINE_STATUS core={} engine={} ({})", core, engine, engine_name(engine))));
  return a;
}

Status Device::engine_reset(unsigned core, unsigned engine) const {
  neuron_engine_id a{};
  a.core = core;
  a.engine = engine;
  if (xioctl(fd(), NEURON_IOC_ENGINE_RESET, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_ENGINE_RESET core={} engine={} ({})", core, engine, engine_name(engine))));
  return {};
}

Result<std::uint32_t> Device::feature_flags(unsigned core) const {
  neuron_feature_flags a{};
  a.core = core;
  a.op = NEURON_FEATURE_OP_GET;
  if (xioctl(fd(), NEURON_IOC_FEATURE_FLAGS, &a) < 0) {
    const int err = errno;
    return unexpected(Error::from_errno(err, fmt::format("NEURON_IOC_FEATURE_FLAGS GET core={}{}", core, feature_hint(err))));
  }
  return a.flags;
}

Status Device::set_feature_flags(unsigned core, std::uint32_t flags) const {
  neuron_feature_flags a{};
  a.core = core;
  a.op = NEURON_FEATURE_OP_SET;
  a.flags = flags;
  if (xioctl(fd(), NEURON_IOC_FEATURE_FLAGS, &a) < 0) {
    const int err = errno;
    std::string hint = feature_hint(err);
    if (err == EINVAL && (flags & ~NEURON_FEATURE_MASK))
      hint = fmt::format(" (known bits are 0x{:x})", NEURON_FEATURE_MASK);
    return unexpected(Error::from_errno(err, fmt::format("NEURON_IOC_FEATURE_FLAGS SET core={} flags=0x{:x}{}", core,
                                                         flags, hint)));
  }
  return {};
}

Status Device::nq_eventfd(unsigned core, unsigned queue, int efd) const {
  if (nq_eventfd_ioctl(fd(), core, queue, efd) < 0)
    return unexpected(Error::from_errno(errno, nq_eventfd_what(core, queue, efd)));
  return {};
}

Result<std::uint32_t> Device::evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op, std::uint32_t value) const {
  neuron_evt_sem a{};
  a.core = core;
  a.index = index;
  a.op = static_cast<std::uint32_t>(op);
  a.value = value;
  if (xioctl(fd(), NEURON_IOC_EVT_SEM, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_EVT_SEM core={} index={} op={} value={}", core,
                                                           index, evt_sem_op_name(a.op), value)));
  return a.value;
}

Status Device::throttle(bool enable) const {
  neuron_throttle a{};
  a.enable = enable ? 1 : 0;
  if (xioctl(fd(), NEURON_IOC_THROTTLE, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_THROTTLE enable={}", a.enable)));
  return {};
}

Result<std::uint32_t> Device::route(unsigned core) const {
  if (!(capabilities() & NEURON_CAP_ROUTE)) return NEURON_ROUTE_DEFAULT;
  neuron_nq_route a{};
  a.core = core;
  a.op = NEURON_ROUTE_OP_GET;
  if (xioctl(fd(), NEURON_IOC_NQ_ROUTE, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_ROUTE core={} op=GET", core)));
  return a.route;
}

Result<std::uint32_t> Device::set_route(unsigned core, std::uint32_t route) const {
  if (!(capabilities() & NEURON_CAP_ROUTE)) {
    if (route == NEURON_ROUTE_DEFAULT) return route;
    return unexpected(errc::not_supported,
                      fmt::format("NEURON_IOC_NQ_ROUTE core={} op=SET route={:#010x}: the driver has no "
                                  "NEURON_CAP_ROUTE (an older nnq.ko)",
                                  core, route));
  }
  neuron_nq_route a{};
  a.core = core;
  a.op = NEURON_ROUTE_OP_SET;
  a.route = route;
  if (xioctl(fd(), NEURON_IOC_NQ_ROUTE, &a) < 0)
    return unexpected(
        Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_ROUTE core={} op=SET route={:#010x}", core, route)));
  return a.route;
}

Result<Device::NotifyTriggers> Device::notify_trigger(unsigned core, neuron_trigger_source source,
                                                      unsigned index, bool enable) const {
  neuron_notify_trigger a{};
  a.core = core;
  a.source = static_cast<std::uint32_t>(source);
  a.index = index;
  a.enable = enable ? 1 : 0;
  if (xioctl(fd(), NEURON_IOC_NOTIFY_TRIGGER, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fmt::format("NEURON_IOC_NOTIFY_TRIGGER core={} source={} index={} enable={}", core,
                           source == NEURON_TRIGGER_AXI_EVT_SEM ? "AXI_EVT_SEM" : "DMA_QUEUE", index, a.enable)));
  NotifyTriggers t{a.dma_armed, a.axi_armed != 0, std::nullopt};
  if (caps_ & NEURON_CAP_AXI_DROPPED) t.axi_dropped = a.axi_dropped;
  return t;
}

Result<std::uint64_t> Device::acquire_cores(std::uint64_t cores) const {
  neuron_cores a{};
  a.cores = cores;
  if (xioctl(fd(), NEURON_IOC_CORE_ACQUIRE, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_CORE_ACQUIRE cores=0x{:x} ({})", cores,
                                                           cores ? core_list_text(cores) : "none: query")));
  return a.owned;
}

Result<std::uint64_t> Device::release_cores(std::uint64_t cores) const {
  neuron_cores a{};
  a.cores = cores;
  if (xioctl(fd(), NEURON_IOC_CORE_RELEASE, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_CORE_RELEASE cores=0x{:x} ({})", cores,
                                                           cores ? core_list_text(cores) : "none")));
  return a.owned;
}

Result<std::uint64_t> Device::grant_cores(std::uint64_t cores, std::uint32_t uid) const {
  neuron_core_grant a{};
  a.cores = cores;
  a.op = NEURON_GRANT_OP_GRANT;
  a.uid = uid;
  if (xioctl(fd(), NEURON_IOC_CORE_GRANT, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_CORE_GRANT GRANT cores=0x{:x} ({}) uid={}", cores,
                                                           cores ? core_list_text(cores) : "none: query", uid)));
  return a.granted;
}

Result<std::uint64_t> Device::revoke_grants(std::uint64_t cores) const {
  neuron_core_grant a{};
  a.cores = cores;
  a.op = NEURON_GRANT_OP_REVOKE;
  if (xioctl(fd(), NEURON_IOC_CORE_GRANT, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_CORE_GRANT REVOKE cores=0x{:x} ({})", cores,
                                                           cores ? core_list_text(cores) : "none")));
  return a.granted;
}

Result<std::uint64_t> Device::mem_alloc(std::uint64_t size, std::optional<std::uint64_t> fixed_offset) const {
  neuron_mem_alloc a{};
  a.size = size;
  if (fixed_offset) {
    a.flags = NEURON_MEM_F_FIXED;
    a.offset = *fixed_offset;
  }
  if (xioctl(fd(), NEURON_IOC_MEM_ALLOC, &a) < 0)
    return unexpected(Error::from_errno(
        errno, fixed_offset ? fmt::format("NEURON_IOC_MEM_ALLOC size=0x{:x} offset=0x{:x} flags=FIXED", size, *fixed_offset)
                            : fmt::format("NEURON_IOC_MEM_ALLOC size=0x{:x}", size)));
  return a.offset;
}

Status Device::mem_free(std::uint64_t offset) const {
  if (mem_free_ioctl(fd(), offset) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_MEM_FREE offset=0x{:x}", offset)));
  return {};
}

Result<std::vector<CoreOwner>> Device::core_owners(const std::string& sysfs_class) const {
  const auto idx = index();
  if (!idx)
    return unexpected(errc::invalid_argument,
                      fmt::format("core owners of {}: the path does not end in the device number", path_));
  return read_core_owners(fmt::format("{}/" NEURON_DEV_NAME "{}/core_owners", sysfs_class, *idx));
}

std::optional<std::uint32_t> Device::index() const noexcept {
  // the number before "-coreC" of a core node (docs/decisions/0017-core-nodes.md)
  constexpr std::string_view core_suffix = "-core";
  std::size_t end = path_.size();
  std::size_t i = end;
  while (i > 0 && path_[i - 1] >= '0' && path_[i - 1] <= '9') --i;
  if (i < end && i >= core_suffix.size() &&
      std::string_view(path_).substr(i - core_suffix.size(), core_suffix.size()) == core_suffix) {
    end = i - core_suffix.size();
    i = end;
    while (i > 0 && path_[i - 1] >= '0' && path_[i - 1] <= '9') --i;
  }
  if (i == end || end - i > 9) return std::nullopt;
  return static_cast<std::uint32_t>(std::strtoul(path_.c_str() + i, nullptr, 10));
}

}  // namespace neuron
