// SPDX-License-Identifier: MIT
#include "libneuron/device.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>


namespace neuron {

namespace {

int xioctl(int fd, unsigned long req, void* arg) noexcept {
  if (fd < 0) {  // a moved-from object: never hand -1 (or anything) to the kernel
    errno = EBADF;
    return -1;
  }
  int rc;
  do {
    rc = ::ioctl(fd, req, arg);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

// NEURON_IOC_NQ_EVENTFD on any descriptor of the file that made the queue.
int nq_eventfd_ioctl(int fd, unsigned core, unsigned queue, int efd) noexcept {
  neuron_nq_eventfd a{};
  a.core = core;
  a.queue = queue;
  a.fd = efd;
  return xioctl(fd, NEURON_IOC_NQ_EVENTFD, &a);
}

// NEURON_IOC_NQ_COALESCE on any descriptor of the file that made the queue.
int nq_coalesce_ioctl(int fd, unsigned core, unsigned queue, std::uint32_t threshold,
                      std::uint32_t coalesce_ns) noexcept {
  neuron_nq_coalesce a{};
  a.core = core;
  a.queue = queue;
  a.threshold = threshold;
  a.coalesce_ns = coalesce_ns;
  return xioctl(fd, NEURON_IOC_NQ_COALESCE, &a);
}

std::string nq_eventfd_what(unsigned core, unsigned queue, int efd) {
  return fmt::format("NEURON_IOC_NQ_EVENTFD core={} queue={} fd={}", core, queue, efd);
}

// The UAPI's -EOPNOTSUPP for the feature-flag ioctl means "no such register
// on this generation" (docs/hardware.md#generations); say so next to the errno
// text.
std::string feature_hint(int err) {
  return err == EOPNOTSUPP ? " (generation sunda has no feature-flag register, "
                            "docs/hardware.md#generations)"
                          : "";
}

}  // namespace

// ------------------------------------------------------------------ RAII
void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Result<UniqueFd> UniqueFd::dup() const {
  const int n = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (n < 0) return unexpected(Error::from_errno(errno, fmt::format("dup fd {}", fd_)));
  return UniqueFd(n);
}

Result<Mapping> Mapping::map(int fd, std::size_t len, int prot, std::uint64_t offset, const std::string& what) {
  void* p = ::mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED)
    return unexpected(Error::from_errno(errno, fmt::format("mmap {} len={} offset=0x{:x}", what, len, offset)));
  return Mapping(p, len);
}

void Mapping::reset() noexcept {
  if (addr_) ::munmap(addr_, len_);
  addr_ = nullptr;
  len_ = 0;
}

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

Result<std::size_t> read_events(int fd, std::span<Event> out, std::chrono::milliseconds timeout,
                                const std::string& what, std::size_t record_bytes) {
  if (out.empty()) return std::size_t{0};
  pollfd p{fd, POLLIN, 0};
  // a signal ends a poll early: the wait goes on for what is left of
  // `timeout`, not for all of it again (a profiler's 100 Hz timer would
  // otherwise keep a 1 s call from ever returning)
  using clock = std::chrono::steady_clock;
  const bool forever = timeout.count() < 0;
  const auto deadline = clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
  for (;;) {
    int ms = -1;
    if (!forever) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
      ms = static_cast<int>(std::clamp<std::int64_t>(left, 0, INT32_MAX));
    }
    const int rc = ::poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return unexpected(Error::from_errno(errno, "poll " + what));
    if (rc == 0) return std::size_t{0};
    break;
  }
  // records shorter than Event (an older driver) are read apart, then widened
  std::vector<unsigned char> narrow(record_bytes < sizeof(Event) ? out.size() * record_bytes : 0);
  void* buf = narrow.empty() ? static_cast<void*>(out.data()) : narrow.data();
  const std::size_t len = narrow.empty() ? out.size_bytes() : narrow.size();
  for (;;) {
    const ssize_t n = ::read(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return std::size_t{0};  // another reader was first
    if (n < 0) return unexpected(Error::from_errno(errno, what));
    const std::size_t rec = std::min(record_bytes, sizeof(Event));
    if (static_cast<std::size_t>(n) % rec != 0)
      return unexpected(errc::invalid_argument,
                        fmt::format("{}: {} bytes is not whole events of {} bytes", what, n, rec));
    const std::size_t count = static_cast<std::size_t>(n) / rec;
    for (std::size_t i = 0; !narrow.empty() && i < count; i++) {
      out[i] = Event{};
      std::memcpy(&out[i], narrow.data() + i * rec, rec);
    }
    return count;
  }
}

std::size_t set_event_size(int fd) noexcept {
  neuron_event_size es{};
  es.size = sizeof(Event);
  if (::ioctl(fd, NEURON_IOC_EVENT_SIZE, &es) == 0) return sizeof(Event);
  return NEURON_EVENT_SIZE_VER0;
}

Result<EventStream> EventStream::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return unexpected(Error::from_errno(errno, "open " + path + " (event stream)"));
  const std::size_t bytes = set_event_size(fd);
  return EventStream(UniqueFd(fd), path, bytes);
}

Result<EventStream> EventStream::adopt(UniqueFd fd, const std::string& path) {
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) < 0)
    return unexpected(Error::from_errno(errno, "fcntl O_NONBLOCK " + path + " (event stream)"));
  const std::size_t bytes = set_event_size(fd.get());
  return EventStream(std::move(fd), path, bytes);
}

Result<EventStream> Device::open_event_stream() const {
  auto fd = fd_.dup();
  if (!fd) return unexpected(fd.error());
  return EventStream::adopt(std::move(*fd), path_);
}

// ------------------------------------------------------------------ Device
Result<Device> Device::open(const std::string& path) { return open_mode(path, O_RDWR); }
Result<Device> Device::open_read_only(const std::string& path) { return open_mode(path, O_RDONLY); }

Result<Device> Device::open_mode(const std::string& path, int mode) {
  UniqueFd fd(::open(path.c_str(), mode | O_CLOEXEC));
  if (!fd) return unexpected(Error::from_errno(errno, std::string(mode == O_RDONLY ? "open (read-only) " : "open ") + path));
  const std::size_t bytes = set_event_size(fd.get());
  // The capabilities once, for the calls that need one (capabilities()):
  // none assumed if the file does not answer DEVICE_INFO.
  DeviceInfo di{};
  const std::uint64_t caps = xioctl(fd.get(), NEURON_IOC_DEVICE_INFO, &di) == 0 ? di.capabilities : 0;
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

// ------------------------------------------------------------------ StatusPage
Result<std::shared_ptr<const StatusPage>> StatusPage::map(int fd) {
  // One page of the kernel's (DEVICE_INFO page_size is this kernel's
  // PAGE_SIZE; NEURON_STATUS_PAGE_SIZE is the 4 KiB case only:
  // docs/decisions/0011-reset-and-recovery.md#page-size).
  const auto page_len = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto m = Mapping::map(fd, page_len, PROT_READ, NEURON_STATUS_PAGE_OFFSET,
                        fmt::format("status page of fd {}", fd));
  if (!m) return unexpected(std::move(m).error());
  const auto* page = static_cast<const neuron_status_page*>(m->data());
  return std::make_shared<const StatusPage>(Key{}, std::move(m).value(), page);
}

std::shared_ptr<const StatusPage> StatusPage::over(const neuron_status_page* page) {
  return std::make_shared<const StatusPage>(Key{}, Mapping(), page);
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

namespace {

int mem_free_ioctl(int fd, std::uint64_t offset) noexcept {
  neuron_mem_free a{};
  a.offset = offset;
  return xioctl(fd, NEURON_IOC_MEM_FREE, &a);
}

}  // namespace

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

// ------------------------------------------------------------------ DeviceMemory
Result<DeviceMemory> DeviceMemory::allocate(const Device& dev, std::uint64_t size,
                                            std::optional<std::uint64_t> fixed_offset) {
  auto fd = dev.dup_fd();
  if (!fd) return unexpected(std::move(fd).error());
  auto off = dev.mem_alloc(size, fixed_offset);
  if (!off) return unexpected(std::move(off).error());
  DeviceMemory m;
  m.fd_ = std::move(fd).value();
  m.offset_ = *off;
  m.size_ = (size + NEURON_MEM_ALIGN - 1) / NEURON_MEM_ALIGN * NEURON_MEM_ALIGN;
  m.live_ = true;
  return m;
}

void DeviceMemory::reset() noexcept {
  if (live_ && fd_) (void)mem_free_ioctl(fd_.get(), offset_);
  live_ = false;
  fd_.reset();
}

std::optional<std::uint32_t> Device::index() const noexcept {
  // the number before "-coreC" of a core node
  // (docs/decisions/0017-core-nodes.md)
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

// ------------------------------------------------------------------ NotificationQueue
Result<NotificationQueue> NotificationQueue::create(const Device& dev, unsigned core, unsigned queue, Options opt) {
  if (!RingView::is_power_of_two(opt.size) || opt.size < NEURON_ISA_NOTIFICATION_NBYTES)
    return unexpected(errc::bad_ring, fmt::format("queue size {} bytes (core {} queue {})", opt.size, core, queue));
  if (opt.eventfd && opt.threshold == 0 && opt.coalesce_ns == 0)
    return unexpected(errc::invalid_argument,
                      fmt::format("queue core {} queue {}: an eventfd needs a threshold > 0 or coalesce_ns > 0 "
                                  "(nothing would signal it)",
                                  core, queue));
  if (opt.coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
    return unexpected(errc::invalid_argument,
                      fmt::format("queue core {} queue {}: coalesce_ns {} is above NEURON_NQ_COALESCE_NS_MAX ({})", core,
                                  queue, opt.coalesce_ns, NEURON_NQ_COALESCE_NS_MAX));
  auto fd = dev.dup_fd();
  if (!fd) return unexpected(std::move(fd).error());
  auto init = dev.nq_init(core, queue, opt.size, opt.flags, opt.threshold, opt.coalesce_ns);
  if (!init) return unexpected(std::move(init).error());

  NotificationQueue q;
  q.fd_ = std::move(fd).value();
  q.core_ = core;
  q.queue_ = queue;
  q.size_ = opt.size;
  q.live_ = true;  // from here on the destructor destroys the queue
  q.coalescing_ = Coalescing{opt.threshold, opt.coalesce_ns};
  q.coalesce_cap_ = (dev.capabilities() & NEURON_CAP_COALESCE) != 0;
  q.device_index_ = dev.index();
  q.status_ = dev.status_page();  // q.fd_ is a dup() of the same open file
  if (dev.capabilities() & NEURON_CAP_ROUTE) {
    // the route the queue's records are routed with: fixed while it lives
    neuron_nq_info ni{};
    ni.core = core;
    ni.queue = queue;
    if (xioctl(q.fd_.get(), NEURON_IOC_NQ_INFO, &ni) < 0)
      return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core, queue)));
    q.route_ = ni.route;
  }

  // Mapping lengths come from the kernel, never from 4 KiB
  // (docs/decisions/0011-reset-and-recovery.md#page-size): the ring rounded up
  // to its page size,
  // the doorbell DEVICE_INFO's doorbell_size; 0 there means doorbells cannot
  // be mapped (pages above the 4 KiB doorbell stride) and HEAD goes by
  // NEURON_IOC_NQ_HEAD. A driver without NEURON_CAP_PAGE_SIZE has 4 KiB.
  DeviceInfo di{};
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t bell_len = page;
  if ((dev.capabilities() & NEURON_CAP_PAGE_SIZE) && xioctl(q.fd_.get(), NEURON_IOC_DEVICE_INFO, &di) == 0) {
    page = di.page_size;
    bell_len = di.doorbell_size;
  }
  const std::size_t ring_len = (opt.size + page - 1) / page * page;
  auto ring = Mapping::map(q.fd_.get(), ring_len, PROT_READ, init->ring_offset,
                           fmt::format("ring core={} queue={}", core, queue));
  if (!ring) return unexpected(std::move(ring).error());
  q.ring_ = std::move(ring).value();
  Doorbell bell_view;
  if (bell_len != 0) {
    auto bell = Mapping::map(q.fd_.get(), bell_len, PROT_READ | PROT_WRITE, init->doorbell_offset,
                             fmt::format("doorbell core={} queue={}", core, queue));
    if (!bell) return unexpected(std::move(bell).error());
    q.doorbell_ = std::move(bell).value();
    bell_view = Doorbell::mmio(static_cast<volatile std::uint32_t*>(q.doorbell_.data()));
  } else {
    // fd, core and queue packed into the context, which must survive moves
    // of the queue: the fd above bit 16, core and queue < 256 below
    const auto ctx = (static_cast<std::uintptr_t>(q.fd_.get()) << 16) | (core << 8) | queue;
    bell_view = Doorbell::callback(
        [](void* c, std::uint32_t head) noexcept {
          const auto v = reinterpret_cast<std::uintptr_t>(c);
          neuron_nq_head h{};
          h.core = static_cast<std::uint32_t>((v >> 8) & 0xff);
          h.queue = static_cast<std::uint32_t>(v & 0xff);
          h.head = head;
          (void)::ioctl(static_cast<int>(v >> 16), NEURON_IOC_NQ_HEAD, &h);
        },
        reinterpret_cast<void*>(ctx));
  }

  // The queue starts enabled with HEAD = TAIL = 0 (docs/device-model.md);
  // NQ_INFO tells the truth if the driver ever hands over a used queue.
  std::uint32_t head = 0;
  if (auto info = q.info()) head = info->head;
  const auto* recs = static_cast<const Record*>(q.ring_.data());
  q.view_ = RingView(std::span<const Record>(recs, opt.size / sizeof(Record)), bell_view, head);
  q.view_.set_lossy((opt.flags & NEURON_NQ_F_IGNORE_FULL) != 0);

  // after the view: bind_eventfd() refuses a queue that holds no ring
  if (opt.eventfd) {
    const int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd < 0)
      return unexpected(Error::from_errno(errno, fmt::format("eventfd for core={} queue={}", core, queue)));
    q.efd_.reset(efd);
    if (auto s = q.bind_eventfd(efd); !s) return unexpected(std::move(s).error());
  }
  return q;
}

Result<NotificationQueue> NotificationQueue::over(std::span<const Record> ring, Doorbell doorbell, InfoFn info,
                                                  unsigned core, unsigned queue, std::uint32_t flags,
                                                  UniqueFd wake) {
  return over(ring, doorbell, std::move(info), core, queue, flags, std::move(wake), nullptr);
}

Result<NotificationQueue> NotificationQueue::over(std::span<const Record> ring, Doorbell doorbell, InfoFn info,
                                                  unsigned core, unsigned queue, std::uint32_t flags,
                                                  UniqueFd wake, std::shared_ptr<const StatusPage> status) {
  auto v = RingView::make(ring, doorbell);
  if (!v) return unexpected(std::move(v).error());
  if (!info) return unexpected(errc::invalid_argument, fmt::format("queue core {} queue {}: no NQ_INFO", core, queue));
  NotificationQueue q;
  q.efd_ = std::move(wake);
  q.core_ = core;
  q.queue_ = queue;
  q.size_ = static_cast<std::uint32_t>(ring.size() * sizeof(Record));
  q.info_fn_ = std::move(info);
  q.status_ = std::move(status);
  std::uint32_t head = 0;
  if (auto i = q.info()) head = i->head;
  q.view_ = std::move(v).value();
  q.view_.resync(head);
  q.view_.set_lossy((flags & NEURON_NQ_F_IGNORE_FULL) != 0);
  return q;
}

NotificationQueue::NotificationQueue(NotificationQueue&& o) noexcept
    : efd_(std::move(o.efd_)),
      fd_(std::move(o.fd_)),
      ring_(std::move(o.ring_)),
      doorbell_(std::move(o.doorbell_)),
      view_(o.view_),
      core_(o.core_),
      queue_(o.queue_),
      size_(o.size_),
      lost_(o.lost_),
      checked_head_(o.checked_head_),
      checked_(o.checked_),
      live_(std::exchange(o.live_, false)),
      gone_(o.gone_),
      info_fn_(std::exchange(o.info_fn_, nullptr)),
      checked_lo_(o.checked_lo_),
      checked_hi_(o.checked_hi_),
      coalescing_(o.coalescing_),
      coalesce_cap_(std::exchange(o.coalesce_cap_, false)),
      device_index_(o.device_index_),
      status_(std::move(o.status_)),
      route_(o.route_) {
  o.view_ = RingView();  // inert: the ring and doorbell now belong to *this
  o.checked_ = false;
}

NotificationQueue& NotificationQueue::operator=(NotificationQueue&& o) noexcept {
  if (this != &o) {
    destroy();
    efd_ = std::move(o.efd_);
    fd_ = std::move(o.fd_);
    ring_ = std::move(o.ring_);
    doorbell_ = std::move(o.doorbell_);
    view_ = o.view_;
    core_ = o.core_;
    queue_ = o.queue_;
    size_ = o.size_;
    lost_ = o.lost_;
    checked_head_ = o.checked_head_;
    checked_ = o.checked_;
    live_ = std::exchange(o.live_, false);
    gone_ = o.gone_;
    info_fn_ = std::exchange(o.info_fn_, nullptr);
    checked_lo_ = o.checked_lo_;
    checked_hi_ = o.checked_hi_;
    coalescing_ = o.coalescing_;
    coalesce_cap_ = std::exchange(o.coalesce_cap_, false);
    device_index_ = o.device_index_;
    status_ = std::move(o.status_);
    route_ = o.route_;
    o.view_ = RingView();  // inert: the ring and doorbell now belong to *this
    o.checked_ = false;
  }
  return *this;
}

NotificationQueue::~NotificationQueue() { destroy(); }

void NotificationQueue::destroy() noexcept {
  // munmap first: the driver refuses NQ_DESTROY (-EBUSY) while the ring is mapped.
  ring_.reset();
  doorbell_.reset();
  view_ = RingView();
  if (live_ && fd_) {
    neuron_nq_id a{};
    a.core = core_;
    a.queue = queue_;
    (void)xioctl(fd_.get(), NEURON_IOC_NQ_DESTROY, &a);
  }
  live_ = false;
  fd_.reset();
  efd_.reset();  // NQ_DESTROY unbound it
}

Status NotificationQueue::bind_eventfd(int efd) const {
  if (!fd_ && !info_fn_ && !valid())  // moved from (create() and over() call it early)
    return unexpected(errc::moved_from, nq_eventfd_what(core_, queue_, efd));
  if (nq_eventfd_ioctl(fd_.get(), core_, queue_, efd) < 0)
    return unexpected(Error::from_errno(errno, nq_eventfd_what(core_, queue_, efd)));
  return {};
}

Result<NqInfo> NotificationQueue::info() const {
  if (!fd_ && !info_fn_ && !valid())  // moved from (create() and over() call it early)
    return unexpected(errc::moved_from, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core_, queue_));
  if (info_fn_) return info_fn_();
  NqInfo a{};
  a.core = core_;
  a.queue = queue_;
  if (xioctl(fd_.get(), NEURON_IOC_NQ_INFO, &a) < 0)
    return unexpected(Error::from_errno(errno, fmt::format("NEURON_IOC_NQ_INFO core={} queue={}", core_, queue_)));
  return a;
}

Status NotificationQueue::set_coalescing(std::uint32_t threshold, std::uint32_t coalesce_ns) {
  const auto what = fmt::format("NEURON_IOC_NQ_COALESCE core={} queue={} threshold={} coalesce_ns={}", core_, queue_,
                                threshold, coalesce_ns);
  if (gone_) return unexpected(errc::device_gone, what);
  if (!valid()) return unexpected(errc::moved_from, what);
  const std::uint32_t entries = view_.entries();
  if (threshold > entries)
    return unexpected(errc::invalid_argument,
                      fmt::format("{}: threshold is above the ring's {} entries", what, entries));
  if (coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
    return unexpected(errc::invalid_argument, fmt::format("{}: coalesce_ns is above NEURON_NQ_COALESCE_NS_MAX ({})",
                                                          what, NEURON_NQ_COALESCE_NS_MAX));
  if (threshold == 0 && coalesce_ns == 0 && efd_)
    return unexpected(errc::invalid_argument,
                      what + ": threshold and coalesce_ns both 0 on a queue with an eventfd (nothing would signal it)");
  if (!fd_ || !coalesce_cap_)
    return unexpected(errc::not_supported,
                      what + (fd_ ? ": the driver has no interrupt coalescing (NEURON_CAP_COALESCE; an older nnq.ko)"
                                  : ": a queue made with over() has no device to program"));
  if (nq_coalesce_ioctl(fd_.get(), core_, queue_, threshold, coalesce_ns) < 0) {
    const int err = errno;
    if (err == ENODEV || err == EIO) mark_device_gone();  // userspace/README.md#device-loss
    return unexpected(Error::from_errno(err, what));
  }
  coalescing_ = Coalescing{threshold, coalesce_ns};
  return {};
}

DrainResult NotificationQueue::drain(std::span<Record> out) noexcept {
  if (gone_ || status_gone()) return gone_now();  // userspace/README.md#device-loss
  if (!valid()) return moved_from_result();
  if (view_.lossy()) return drain_lossy(out);
  DrainResult r = view_.drain(out);
  if (r.count == 0 && r.lap_suspected) recover(r);
  if (gone_) r.device_gone = true;
  return r;
}

// userspace/README.md#device-loss: from here on nothing reads the ring or
// writes the doorbell; the mappings stay until the destructor unmaps them.
void NotificationQueue::mark_device_gone() noexcept {
  gone_ = true;
  const bool lossy = view_.lossy();
  view_ = RingView();  // an empty view: even view().drain() touches nothing
  view_.set_lossy(lossy);
}

bool NotificationQueue::check_device() noexcept {
  if (gone_) return true;
  if (status_) {  // no syscall: the driver's status page
    if (!status_->live()) mark_device_gone();
    return gone_;
  }
  if (!fd_) return false;
  pollfd p{fd_.get(), 0, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  if (rc > 0 && (p.revents & (POLLHUP | POLLERR))) mark_device_gone();
  return gone_;
}

// NQ_INFO failed: ENODEV (removed) and EIO (stale after a reset, or the
// device offline) mean the driver has revoked the mappings
// (docs/decisions/0011-reset-and-recovery.md).
void NotificationQueue::note_info_error(const Error& e) noexcept {
  if (e.code == std::errc::no_such_device || e.code == std::errc::io_error) mark_device_gone();
}

// userspace/README.md#lossy-queues. A copy of record j is sound iff the
// producer had not begun writing record j + entries when the copy was made.
// The device writes a record and moves TAIL past it in one step as far as a
// register read is concerned (docs/device-model.md#lossy-tail: in the model
// both happen under QEMU's BQL, as NQ_INFO's MMIO read of TAIL does), so a
// TAIL read never falls inside a record write: if the producer had begun
// record j + entries before the copy ended, TAIL read afterwards is
// >= j + entries + 1. Records below TAIL - entries may be torn or of a later
// pass; the others are sound, record TAIL - entries included (a full ring
// whose producer is idle, or has not begun the next record, loses nothing).
DrainResult NotificationQueue::drain_lossy(std::span<Record> out) noexcept {
  constexpr unsigned kMaxResyncs = 8;
  DrainResult total;
  const std::uint32_t entries = view_.entries();
  const std::uint32_t margin = std::max<std::uint32_t>(1, entries / 4);
  std::size_t filled = 0;
  while (filled < out.size()) {
    const std::uint32_t h0 = view_.head();
    DrainResult r = view_.drain(out.subspan(filled));
    total.hw_overflow |= r.hw_overflow;
    total.sw_overflow |= r.sw_overflow;
    const bool suspect = r.lap_suspected || r.sw_overflow;
    if (!suspect) {
      filled += r.count;
      if (r.count == 0 || filled == out.size()) break;
      continue;
    }
    // An idle queue whose last record was an overwrite: one NQ_INFO per HEAD
    // and slot content (a slot lapped since then looks the same stale way
    // but holds another record).
    if (r.count == 0 && checked_ && checked_head_ == h0) {
      std::uint64_t lo, hi;
      view_.slot_words(h0, lo, hi);
      if (lo == checked_lo_ && hi == checked_hi_) break;
    }
    auto info = this->info();
    if (!info) {  // cannot tell: keep what was copied, as a backpressured drain would
      filled += r.count;
      note_info_error(info.error());
      break;
    }
    // The copies (and the slot loads above) happen before TAIL is read.
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::uint32_t d = info->tail - h0;  // records written from h0 on
    if (d <= entries) {  // the producer had not begun record h0 + entries: all sound
      filled += r.count;
      if (r.count == 0) {
        checked_ = true;
        checked_head_ = h0;
        view_.slot_words(h0, checked_lo_, checked_hi_);
        break;
      }
      continue;
    }
    checked_ = false;
    total.lap_suspected = true;
    const std::uint32_t unsound = d - entries;  // records h0 .. h0 + unsound - 1: overwritten or being so
    total.overwritten += d - entries;
    if (unsound < r.count) {
      // Keep the sound tail of the copies; the view is already past them.
      Record* dst = out.data() + filled;
      std::memmove(dst, dst + unsound, (r.count - unsound) * sizeof(Record));
      filled += r.count - unsound;
      total.lost += unsound;
      continue;
    }
    // Nothing sound: skip to the oldest record, plus a margin.
    const std::uint32_t p = info->tail - entries + margin;
    total.lost += p - h0;
    view_.resync(p);
    view_.publish_head();
    if (++total.resyncs >= kMaxResyncs) break;
  }
  total.count = filled;
  total.device_gone = gone_;
  lost_ += total.lost;
  return total;
}

// ------------------------------------------------------------------ wait
const char* wait_result_name(WaitResult::Status s) noexcept {
  switch (s) {
    case WaitResult::Status::Records: return "records";
    case WaitResult::Status::TimedOut: return "timed out";
  }
  return "?";
}

namespace {

std::string queue_what(const NotificationQueue& q, std::size_t index, bool many) {
  return many ? fmt::format("core {} queue {} (index {})", q.core(), q.queue(), index)
              : fmt::format("core {} queue {}", q.core(), q.queue());
}

// Reset an eventfd (non-blocking); its count only says "look again".
void efd_reset(int fd) noexcept {
  std::uint64_t v;
  ssize_t n;
  do {
    n = ::read(fd, &v, sizeof v);
  } while (n < 0 && errno == EINTR);
}

}  // namespace

Result<WaitResult> NotificationQueue::wait(std::span<Record> out, std::chrono::nanoseconds timeout) {
  NotificationQueue* self = this;
  return wait_any(std::span<NotificationQueue* const>(&self, 1), out, timeout, 0);
}

// The drain-then-sleep rule (docs/hardware.md#completion): the device raises
// the threshold interrupt once and re-arms it on the next HEAD write. Reset
// the eventfds, then drain: a drain that takes records writes HEAD and we
// return them; an empty drain after the last HEAD write means the threshold
// is armed, so any record from then on signals an eventfd we poll.
Result<WaitResult> NotificationQueue::wait_any(std::span<NotificationQueue* const> queues, std::span<Record> out,
                                               std::chrono::nanoseconds timeout, std::size_t start) {
  using clock = std::chrono::steady_clock;
  if (queues.empty()) return unexpected(errc::invalid_argument, "wait on an empty set of queues");
  if (out.empty()) return unexpected(errc::invalid_argument, "wait with no room for records (out is empty)");
  const bool many = queues.size() > 1;
  std::vector<pollfd> fds;
  fds.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i) {
    NotificationQueue* q = queues[i];
    if (q == nullptr) return unexpected(errc::invalid_argument, fmt::format("wait: queue pointer {} is null", i));
    if (q->device_gone()) return unexpected(errc::device_gone, "wait on " + queue_what(*q, i, many));
    if (!q->valid())
      return unexpected(errc::moved_from, "wait on " + queue_what(*q, i, many));
    if (q->wake_fd() < 0 && timeout.count() != 0)
      return unexpected(errc::invalid_argument,
                        "wait on " + queue_what(*q, i, many) +
                            ": no eventfd to sleep on (make it with Options::eventfd and a threshold > 0)");
    fds.push_back(pollfd{q->wake_fd(), POLLIN, 0});
  }
  // each queue's file of /dev/nnqN too, for EPOLLHUP/EPOLLERR only: a removal
  // ends the sleep (userspace/README.md#device-loss)
  for (std::size_t i = 0; i < queues.size(); ++i) fds.push_back(pollfd{queues[i]->device_fd(), 0, 0});
  // now + timeout saturates: a timeout that reaches past the clock's range
  // (LLONG_MAX ns from libneuron_queue_wait, nanoseconds::max()) is no limit,
  // not an overflow into the past
  const auto now0 = clock::now();
  const bool forever = timeout.count() < 0 || timeout > clock::time_point::max() - now0;
  const auto deadline = forever ? clock::time_point::max() : now0 + timeout;
  const std::size_t n = queues.size();
  WaitResult res;
  res.index = start % n;
  for (;;) {
    for (std::size_t i = 0; i < n; ++i)
      if (fds[i].fd >= 0) efd_reset(fds[i].fd);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (start + k) % n;
      // the driver revokes the mappings before it wakes anybody: look first
      if (queues[i]->check_device())
        return unexpected(errc::device_gone, "wait on " + queue_what(*queues[i], i, many));
      DrainResult r = queues[i]->drain(out);
      if (r.count > 0) {
        res.status = WaitResult::Status::Records;
        res.drain = r;
        res.index = i;
        return res;
      }
      if (k == 0) res.drain = r;
    }
    // Every queue empty after its last HEAD write: the thresholds are armed.
    timespec ts{};
    timespec* tsp = nullptr;
    if (!forever) {
      const auto left = deadline - clock::now();
      if (left.count() <= 0) {
        res.status = WaitResult::Status::TimedOut;
        return res;
      }
      const auto sec = std::chrono::duration_cast<std::chrono::seconds>(left);
      ts.tv_sec = static_cast<time_t>(sec.count());
      ts.tv_nsec = static_cast<long>((left - sec).count());
      tsp = &ts;
    }
    const int rc = ::ppoll(fds.data(), static_cast<nfds_t>(fds.size()), tsp, nullptr);
    if (rc < 0 && errno != EINTR)
      return unexpected(Error::from_errno(errno, "ppoll eventfd of " + (many ? std::to_string(n) + " queues"
                                                                              : queue_what(*queues[0], 0, false))));
    // woken, interrupted or timed out: drain again (the loop checks the time)
  }
}

void NotificationQueue::recover(DrainResult& r) noexcept {
  // Backpressured queues only (drain_lossy handles ignore-full ones): only
  // when the slot at HEAD is stale but marked overflow; one syscall per HEAD
  // value at most, so an idle queue whose last record was an overwrite does
  // not cost a syscall per poll.
  if (checked_ && checked_head_ == view_.head()) return;
  auto a = info();
  if (!a) {
    note_info_error(a.error());
    return;
  }
  checked_ = true;
  checked_head_ = view_.head();
  const std::uint32_t entries = view_.entries();
  if (a->tail - view_.head() > entries) {
    const std::uint32_t oldest = a->tail - entries;
    const std::uint32_t skipped = oldest - view_.head();
    lost_ += skipped;
    r.lost += skipped;
    r.overwritten += skipped;
    r.sw_overflow = true;
    view_.resync(oldest);
    view_.publish_head();
    checked_ = false;
  }
}

}  // namespace neuron
