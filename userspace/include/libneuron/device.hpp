// SPDX-License-Identifier: MIT
//
// The device layer: /dev/nnqN (include/uapi/linux/neuron.h) as RAII
// objects whose methods return typed errors (Result<T>, errno + what was asked).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libneuron/decode.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"
#include "libneuron/tenancy.hpp"
#include "uapi/linux/neuron.h"
#include "uapi/linux/neuron_isa.h"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// An owned file descriptor (closed on destruction).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept;
  /// A second descriptor of the same open file (F_DUPFD_CLOEXEC).
  [[nodiscard]] Result<UniqueFd> dup() const;

 private:
  int fd_ = -1;
};

/// An owned mmap() region (munmap on destruction).
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* addr, std::size_t len) noexcept : addr_(addr), len_(len) {}
  Mapping(Mapping&& o) noexcept : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept {
    if (this != &o) {
      reset();
      addr_ = std::exchange(o.addr_, nullptr);
      len_ = std::exchange(o.len_, 0);
    }
    return *this;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }
  /// mmap(fd, offset); errors name the request.
  static Result<Mapping> map(int fd, std::size_t len, int prot, std::uint64_t offset, const std::string& what);
  [[nodiscard]] void* data() const noexcept { return addr_; }
  [[nodiscard]] std::size_t size() const noexcept { return len_; }
  explicit operator bool() const noexcept { return addr_ != nullptr; }
  void reset() noexcept;

 private:
  void* addr_ = nullptr;
  std::size_t len_ = 0;
};

using DeviceInfo = neuron_device_info;
using EngineStatus = neuron_engine_status;
using NqInfo = neuron_nq_info;
using Instruction = neuron_emu_insn;
/// One interrupt edge as read() of /dev/nnqN returns it (and as netlink
/// multicasts it): CLOCK_MONOTONIC ns, device, core, edge, cause, queues...
using Event = neuron_event;

/// A queue's interrupt coalescing (docs/device-model.md#coalescing): the
/// threshold interrupt, and the eventfd bound to it, fires when `threshold`
/// records are unread (the count limit) or `coalesce_ns` after the first
/// unread record (the time limit), whichever comes first, once until the next
/// accepted HEAD write; a HEAD write that leaves records unread starts the
/// time limit again.
struct Coalescing {
  /// Unread records that raise the interrupt; 0: no count limit. At most the
  /// ring's entries (size / 16).
  std::uint32_t threshold = 1;
  /// Nanoseconds from the first unread record to the interrupt; 0: no time
  /// limit. At most NEURON_NQ_COALESCE_NS_MAX (10 ms).
  std::uint32_t coalesce_ns = 0;
  friend bool operator==(const Coalescing&, const Coalescing&) = default;
};

/// One NEURON_IOC_TIMESTAMP sample: the device clock read between two
/// CLOCK_MONOTONIC reads, so the read happened somewhere in [sys_before_ns,
/// sys_after_ns]. calibrate_clock() (libneuron/clock.hpp) turns several into
/// an offset.
struct TimestampSample {
  std::uint64_t sys_before_ns = 0;  ///< CLOCK_MONOTONIC ns just before the device read
  std::uint64_t device_ps = 0;      ///< the device timestamp, ps (docs/hardware.md#timestamp)
  std::uint64_t sys_after_ns = 0;   ///< CLOCK_MONOTONIC ns just after the device read
};

/// "IDLE", "RUNNING", "WAITING", "HALTED".
std::string engine_state_name(std::uint32_t state);
/// "NOTIFIC", "THROTTLE", "FAULT", "RESET", "PCI_ERROR", "ENGINE_STOPPED"
/// (enum neuron_edge); "EDGE_N" for a value this library does not know.
std::string edge_name(std::uint32_t edge);
/// Why the driver stopped a program, the `cause` of a NEURON_EDGE_ENGINE_STOPPED
/// event (enum neuron_stop_cause): "ENGINE_RESET", "CORE_RELEASE", "RELEASE";
/// "STOP_N" for another value (docs/decisions/0024-submit-detach.md).
std::string stop_cause_name(std::uint32_t cause);
/// "SEM_READ", "EVENT_SET", ... (enum neuron_evt_sem_op).
std::string evt_sem_op_name(std::uint32_t op);

/// read() of whole struct neuron_event records from a /dev/nnqN file:
/// waits up to `timeout` for the first one (0: do not wait; negative: no
/// limit), then takes what is queued, up to out.size(). 0 means none came.
/// EINTR is retried for what is left of `timeout` (a signal does not
/// restart the wait). `record_bytes` is what the file returns per event
/// (set_event_size()); a shorter record is zero-extended into an Event.
/// Used by Device::read_events and EventStream.
Result<std::size_t> read_events(int fd, std::span<Event> out, std::chrono::milliseconds timeout,
                                const std::string& what, std::size_t record_bytes = sizeof(Event));

/// NEURON_IOC_EVENT_SIZE: ask the file for sizeof(Event) bytes per event.
/// Returns the bytes read() will return per event: sizeof(Event), or
/// NEURON_EVENT_SIZE_VER0 from a driver without the ioctl (no
/// NEURON_CAP_EVENT_SIZE), whose events have no `size` field.
std::size_t set_event_size(int fd) noexcept;

/// A non-blocking descriptor used only for an open file's event queue
/// (read()/poll() of struct neuron_event). The driver keeps one event queue
/// per open file: device-wide edges (reset, PCI error, throttle, fault) go
/// to every file, but a core's NOTIFIC and ENGINE_STOPPED edges only to the
/// file that owns the core and to files opened with CAP_SYS_ADMIN
/// (docs/decisions/0005-tenancy.md). So a stream over a Device's own file
/// (Device::open_event_stream()) sees that Device's core edges whoever the
/// caller is; a stream over a new open file (open()) sees its own cores'
/// only, none without CAP_SYS_ADMIN.
class EventStream {
 public:
  EventStream() = default;
  /// A new open file of @p path (O_RDWR | O_NONBLOCK), for events alone.
  static Result<EventStream> open(const std::string& path);
  /// A stream over an existing open file: @p fd is a descriptor of it,
  /// which must already be O_NONBLOCK (a read() must never wait past a
  /// read_events() timeout). Its file status flags are not changed: they
  /// belong to the open file, so to every descriptor of it the caller holds.
  /// Errors: errc::invalid_argument naming the fd and @p path when the file
  /// is not O_NONBLOCK (@p fd is then closed); fcntl F_GETFL's errno.
  /// docs/decisions/0040-event-stream-adopt.md.
  static Result<EventStream> adopt(UniqueFd fd, const std::string& path);
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  /// See neuron::read_events(); never blocks when timeout is 0.
  Result<std::size_t> read(std::span<Event> out, std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
    return read_events(fd_.get(), out, timeout, "read events " + path_, record_bytes_);
  }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  EventStream(UniqueFd fd, std::string path, std::size_t record_bytes)
      : fd_(std::move(fd)), path_(std::move(path)), record_bytes_(record_bytes) {}
  UniqueFd fd_;
  std::string path_;
  std::size_t record_bytes_ = sizeof(Event);
};

/// What a file's status page says (enum neuron_status_state).
enum class DeviceState : std::uint32_t {
  Live = NEURON_STATUS_LIVE,    ///< the file works
  Stale = NEURON_STATUS_STALE,  ///< a reset began: the file's queues and mappings are gone; open again
  Gone = NEURON_STATUS_GONE,    ///< the device's removal began
};

/// The status page of one open file of /dev/nnqN (struct neuron_status_page,
/// NEURON_CAP_STATUS_PAGE; docs/decisions/0027-device-loss.md): the driver
/// turns it from Live to Stale (a reset) or Gone (a removal) at the first step
/// of its disable path, before it revokes any ring or doorbell mapping, and
/// never revokes this mapping. state() is one acquire load, no syscall, so
/// it can be asked before every drain. A Device maps it once per open file
/// and every NotificationQueue made from the Device shares it (they hold
/// descriptors of that same open file); the mapping goes with the last
/// holder. Thread safety: every method may be called from any thread.
class StatusPage {
 private:
  struct Key {
    explicit Key() = default;
  };

 public:
  /// mmap() of the page of `fd`'s open file, read-only
  /// (NEURON_STATUS_PAGE_OFFSET). Errors: the errno of mmap() (EINVAL from a
  /// driver without NEURON_CAP_STATUS_PAGE), what = "mmap status page of fd N".
  static Result<std::shared_ptr<const StatusPage>> map(int fd);
  /// Over a page someone else writes and keeps alive longer than every
  /// holder (a simulator, a test's fake device).
  static std::shared_ptr<const StatusPage> over(const neuron_status_page* page);

  /// The state now: one acquire load of @state (a value this library does
  /// not know is returned as it is; only Live means the file works).
  [[nodiscard]] DeviceState state() const noexcept {
    return static_cast<DeviceState>(load(page_->state, std::memory_order_acquire));
  }
  [[nodiscard]] bool live() const noexcept { return state() == DeviceState::Live; }
  /// enum neuron_reset_cause of the change that ended Live; 0 while live.
  /// Read after state(), which orders it.
  [[nodiscard]] std::uint32_t cause() const noexcept { return load(page_->cause, std::memory_order_relaxed); }
  /// The device's resets so far as the driver last wrote them (at the open,
  /// then at the change that ended Live).
  [[nodiscard]] std::uint32_t generation() const noexcept {
    return load(page_->generation, std::memory_order_relaxed);
  }

  /// Use map() or over().
  StatusPage(Key, Mapping map, const neuron_status_page* page) noexcept : map_(std::move(map)), page_(page) {}

 private:
  static std::uint32_t load(const __u32& word, std::memory_order order) noexcept {
    // the page is read-only: an atomic load through it never writes
    return std::atomic_ref<std::uint32_t>(const_cast<std::uint32_t&>(word)).load(order);
  }
  Mapping map_;  // empty for over()
  const neuron_status_page* page_;
};

/// The node tools open when none is named: /dev/nnq0 (NEURON_DEV_NAME).
inline constexpr const char* kDefaultDevicePath = "/dev/" NEURON_DEV_NAME "0";

/// One open /dev/nnqN. Queues made through it belong to this open file.
///
/// Thread safety: every method is const and makes one ioctl (or read()) on
/// the descriptor; any number of threads may call them at once (the driver
/// serialises what must be). Moving transfers the descriptor; a moved-from
/// Device holds none (fd() is -1): its calls fail with EBADF, naming the
/// ioctl, and reach no other open file. Queues, DeviceMemory and
/// EventStreams made from a Device keep their own descriptor and outlive it.
namespace test {
struct DeviceAccess;  // libneuron's own host tests only (tests/device_access.hpp): not API
}  // namespace test

class Device {
 public:
  /// Open `path` read-write (O_RDWR | O_CLOEXEC | O_NONBLOCK: the
  /// file's events are read after a poll(), docs/decisions/0040-event-stream-adopt.md):
  /// every method works. Only a node of this driver opens: a character
  /// device whose file answers NEURON_IOC_DEVICE_INFO.
  /// Errors: open()'s errno (ENOENT no such node, EACCES no write access:
  /// README.md#device-permissions), what = "open PATH"; ENOTTY for a file
  /// that is not a character device (a regular file) and DEVICE_INFO's
  /// errno (ENOTTY from /dev/null or
  /// another driver's node), what = "open PATH: not a nnq device node (...)";
  /// or mmap()'s for the status page (what names the page and PATH).
  static Result<Device> open(const std::string& path);
  /// Open `path` read-only (O_RDONLY | O_CLOEXEC | O_NONBLOCK), for a caller that only
  /// looks (neuron-nq list, info, metrics; an operator in group neuron
  /// without write access): info(), engine_status() and timestamp() work
  /// (the driver's read-only ioctls, include/uapi/linux/neuron.h), and the
  /// status page is mapped as by open(); every other ioctl fails with EBADF
  /// and no queue can be made. Errors: as open(). Since LIBNEURON_0.1
  /// (userspace/README.md#versions).
  static Result<Device> open_read_only(const std::string& path);
  /// /dev/nnq0, /dev/nnq1, ... that exist, sorted by number.
  static std::vector<std::string> list(const std::string& dir = "/dev");

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }

  [[nodiscard]] Result<DeviceInfo> info() const;
  /// The NEURON_CAP_* bits NEURON_IOC_DEVICE_INFO reported when open() made
  /// this object (no ioctl now; 0 from a driver older than the
  /// capabilities). Calls that need a capability check it here first.
  [[nodiscard]] std::uint64_t capabilities() const noexcept { return caps_; }
  /// NEURON_IOC_NQ_INIT: returns the mmap offsets (ring_offset, doorbell_offset).
  [[nodiscard]] Result<neuron_nq_init> nq_init(unsigned core, unsigned queue, std::uint32_t size,
                                               std::uint32_t flags = 0, std::uint32_t threshold = 0) const;
  /// NEURON_IOC_NQ_INIT with an interrupt-coalescing time limit `coalesce_ns`
  /// (nanoseconds after the first unread record, 0 none, at most
  /// NEURON_NQ_COALESCE_NS_MAX; docs/device-model.md#coalescing). A nonzero
  /// `coalesce_ns` needs NEURON_CAP_COALESCE: without it errc::not_supported
  /// and no ioctl (an older driver would refuse the field with EINVAL).
  /// Errors otherwise as for nq_init(): the driver's EINVAL (a field out of
  /// range), EBUSY, EPERM, ENOMEM.
  [[nodiscard]] Result<neuron_nq_init> nq_init(unsigned core, unsigned queue, std::uint32_t size,
                                               std::uint32_t flags, std::uint32_t threshold,
                                               std::uint32_t coalesce_ns) const;
  /// NEURON_IOC_NQ_COALESCE: change a live queue's interrupt coalescing
  /// (`threshold` records, `coalesce_ns` ns; see Coalescing) without stopping
  /// it; records already unread count toward the new limits at once. Needs
  /// NEURON_CAP_COALESCE (else errc::not_supported, no ioctl). The driver's
  /// errors: EINVAL (core, queue, threshold > entries, coalesce_ns >
  /// NEURON_NQ_COALESCE_NS_MAX), ENOENT (this file made no such queue), EIO /
  /// ENODEV (the device was reset / removed). NotificationQueue::set_coalescing
  /// checks the values first and keeps them.
  [[nodiscard]] Status nq_coalesce(unsigned core, unsigned queue, std::uint32_t threshold,
                                   std::uint32_t coalesce_ns) const;
  /// NEURON_IOC_TIMESTAMP: one sample of core `core`'s NOTIFIC timestamp (the
  /// clock that stamps records, ps) between two CLOCK_MONOTONIC reads in the
  /// kernel. Needs NEURON_CAP_TIMESTAMP (else errc::not_supported, no
  /// ioctl). The driver's errors: EINVAL (core out of range), EIO / ENODEV.
  /// Any open file may call it (read-only too). See calibrate_clock().
  [[nodiscard]] Result<TimestampSample> timestamp(unsigned core) const;
  [[nodiscard]] Status nq_destroy(unsigned core, unsigned queue) const;
  [[nodiscard]] Result<NqInfo> nq_info(unsigned core, unsigned queue) const;
  /// NEURON_IOC_SUBMIT: copy `insns` (1..NEURON_MAX_PROGRAM_INSNS) to the
  /// engine's program area and start it; returns once it is started.
  /// `flags`: NEURON_SUBMIT_F_TRACE (INST_START/INST_END records),
  /// NEURON_SUBMIT_F_DETACH (the program belongs to the core's owner: from
  /// a file that does not own the core, allowed when the owner granted this
  /// file's uid the core with grant_cores(); its records go to the owner's
  /// queues, its DGE_COPY ranges must be the owner's device memory, and this
  /// file's close does not stop it; docs/decisions/0024-submit-detach.md; needs
  /// NEURON_CAP_SUBMIT_GRANT). Errors: EPERM (another file owns the core and,
  /// for DETACH, granted it to no uid of this file), EACCES (a DGE_COPY
  /// outside the program owner's memory), EBUSY (the engine runs), EIO
  /// (HALTED: reset it), EINVAL (a field out of range, an unknown flag).
  [[nodiscard]] Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns,
                              std::uint32_t flags = NEURON_SUBMIT_F_TRACE) const;
  [[nodiscard]] Result<EngineStatus> engine_status(unsigned core, unsigned engine) const;
  [[nodiscard]] Status engine_reset(unsigned core, unsigned engine) const;

  /// NEURON_IOC_FEATURE_FLAGS GET: NEURON_FEATURE_FLAGS (local register 38,
  /// docs/hardware.md#dge-feature-flags) of the core, as its PE engine holds
  /// it. ENOTSUP on sunda.
  [[nodiscard]] Result<std::uint32_t> feature_flags(unsigned core) const;
  /// NEURON_IOC_FEATURE_FLAGS SET: write NEURON_FEATURE_* bits to every engine
  /// of the core (bit 1 gates every DGE packet notification,
  /// docs/hardware.md#dge-gating). EINVAL for unknown bits, ENOTSUP on sunda
  /// (no feature-flag register).
  [[nodiscard]] Status set_feature_flags(unsigned core, std::uint32_t flags) const;
  /// NEURON_IOC_NQ_EVENTFD: signal eventfd `efd` on every threshold interrupt
  /// of a queue this file made (-1 unbinds). NotificationQueue::Options::eventfd
  /// does this for you.
  [[nodiscard]] Status nq_eventfd(unsigned core, unsigned queue, int efd) const;
  /// NEURON_IOC_EVT_SEM: host access to the core's EVT_SEM unit; returns the
  /// value after the operation (docs/hardware.md#evt-sem).
  [[nodiscard]] Result<std::uint32_t> evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op,
                                              std::uint32_t value = 0) const;
  /// NEURON_IOC_THROTTLE: arm (true) or disarm throttle notifications
  /// (records to NUM4, docs/hardware.md#throttle). The throttle edge is counted
  /// either way.
  [[nodiscard]] Status throttle(bool enable) const;
  /// NEURON_IOC_NQ_ROUTE GET: the core's ROUTE word, one 4-bit software
  /// queue number per enum neuron_notific_class (NEURON_ROUTE_QUEUE(),
  /// docs/hardware.md#nq-routing, docs/decisions/0022-route-programmable.md);
  /// needs no ownership. From a driver without NEURON_CAP_ROUTE:
  /// NEURON_ROUTE_DEFAULT, the only route such a driver leaves (no ioctl).
  /// Errors: the driver's errno (EINVAL: core out of range; EIO, ENODEV),
  /// what = "NEURON_IOC_NQ_ROUTE core=C op=GET".
  [[nodiscard]] Result<std::uint32_t> route(unsigned core) const;
  /// NEURON_IOC_NQ_ROUTE SET: program the core's ROUTE word (each class's
  /// queue below queues_per_core, bits 31..28 zero); returns the word read
  /// back. Needs ownership (a free core becomes this file's); refused while
  /// this file has a queue on the core, so make queues after it. The route
  /// is NEURON_ROUTE_DEFAULT again once the owner gives the core up.
  /// Errors: errc::not_supported (no NEURON_CAP_ROUTE and `route` is not
  /// the default; no ioctl); the driver's errno: EINVAL (core or route; the
  /// message names the route in hex), EPERM (another file owns the core),
  /// EBUSY (this file has a queue on the core), EIO, ENODEV; what =
  /// "NEURON_IOC_NQ_ROUTE core=C op=SET route=0x...".
  [[nodiscard]] Result<std::uint32_t> set_route(unsigned core, std::uint32_t route) const;
  /// What NEURON_IOC_NOTIFY_TRIGGER reports after the change.
  struct NotifyTriggers {
    std::uint32_t dma_armed = 0;  ///< bit q: DMA queue q writes DMA records
    bool axi_armed = false;       ///< host EVT_SEM writes make AXI_EVT_SEM records
    /// AXI_EVT_SEM records the core lost since this file took it (a host
    /// write that found its backpressured queue full and the unit's slot
    /// taken; docs/decisions/0025-axi-dropped.md). nullopt: the driver does not
    /// count them (no NEURON_CAP_AXI_DROPPED).
    std::optional<std::uint32_t> axi_dropped;
  };
  /// NEURON_IOC_NOTIFY_TRIGGER: arm (true) or disarm one completion
  /// notification of a core: DMA queue `index` (0..15) for
  /// NEURON_TRIGGER_DMA_QUEUE, or the AXI_EVT_SEM records of host EVT_SEM
  /// writes (`index` 0) for NEURON_TRIGGER_AXI_EVT_SEM
  /// (docs/device-model.md#dma-engines, #axi-evt-sem). Takes a free core;
  /// EPERM if another file owns it, EINVAL for a field out of range. A call
  /// that changes nothing (arming what is armed) reads axi_dropped.
  [[nodiscard]] Result<NotifyTriggers> notify_trigger(unsigned core, neuron_trigger_source source,
                                                      unsigned index, bool enable) const;
  /// NEURON_IOC_CORE_ACQUIRE: take every core of `cores` (bit c = core c) for
  /// this open file, or none; cores it owns already are fine, 0 only asks.
  /// Returns the cores the file owns afterwards. EBUSY: another open file
  /// owns one of them (core_owners() says which process). Ownership is also
  /// taken implicitly by the first NQ_INIT, SUBMIT, ENGINE_RESET, feature
  /// flag or EVT_SEM write on a free core, and ends with the file.
  [[nodiscard]] Result<std::uint64_t> acquire_cores(std::uint64_t cores) const;
  /// NEURON_IOC_CORE_RELEASE: give `cores` up (the driver resets the engines
  /// this file started there); returns the cores still owned. EPERM: a core
  /// is not this file's; EBUSY: this file still has a queue on one.
  [[nodiscard]] Result<std::uint64_t> release_cores(std::uint64_t cores) const;
  /// NEURON_IOC_CORE_GRANT (GRANT): let the files of user `uid` (as this
  /// process's user namespace names it) submit detached programs
  /// (NEURON_SUBMIT_F_DETACH) to `cores` (bit c = core c), which this file
  /// must own; it replaces the uid of an earlier grant. Such programs belong
  /// to this file: their records reach its queues and its close stops them
  /// (docs/decisions/0024-submit-detach.md). 0 only asks. Returns the cores of
  /// this file that carry a grant afterwards. EPERM: a core is not this
  /// file's (nothing changed); EINVAL: a core out of range, `uid` not a
  /// user here; ENOTTY: a driver without NEURON_CAP_SUBMIT_GRANT.
  [[nodiscard]] Result<std::uint64_t> grant_cores(std::uint64_t cores, std::uint32_t uid) const;
  /// NEURON_IOC_CORE_GRANT (REVOKE): end the grants of `cores` (programs
  /// already started keep running). Returns the cores still granted.
  /// EPERM: a core is not this file's.
  [[nodiscard]] Result<std::uint64_t> revoke_grants(std::uint64_t cores) const;
  /// NEURON_IOC_MEM_ALLOC: `size` bytes of device memory (rounded up to
  /// NEURON_MEM_ALIGN) for this file; with `fixed_offset`
  /// (NEURON_MEM_F_FIXED) exactly there or not at all (EBUSY: part of it is
  /// allocated). Returns the BAR4 offset. DeviceMemory frees it for you.
  [[nodiscard]] Result<std::uint64_t> mem_alloc(std::uint64_t size,
                                                std::optional<std::uint64_t> fixed_offset = std::nullopt) const;
  /// NEURON_IOC_MEM_FREE of an allocation mem_alloc() returned. ENOENT: none
  /// of this file starts there.
  [[nodiscard]] Status mem_free(std::uint64_t offset) const;
  /// sysfs `<sysfs_class>/nnqN/core_owners` of this device: who owns
  /// each core (errc::invalid_argument when the path has no index N).
  [[nodiscard]] Result<std::vector<CoreOwner>> core_owners(const std::string& sysfs_class = "/sys/class/nnq") const;
  /// read() events queued on this open file (see neuron::read_events). The
  /// file has one event queue: its EventStreams (open_event_stream()) read
  /// the same events, so read them in one place.
  [[nodiscard]] Result<std::size_t> read_events(std::span<Event> out, std::chrono::milliseconds timeout) const {
    return neuron::read_events(fd(), out, timeout, "read events " + path_, event_bytes_);
  }
  /// The events of this open file, through a second descriptor of it: the
  /// edges of the cores this Device owns (the driver routes them to the
  /// owning file, also for an unprivileged caller) and every device-wide
  /// edge. The Device and its streams share one event queue: an event is
  /// read by one of them.
  [[nodiscard]] Result<EventStream> open_event_stream() const;
  /// N of /dev/nnqN (the NEURON_A_DEVICE of netlink), if the path ends in
  /// it, or in "nnqN-coreC" (a core node, docs/decisions/0017-core-nodes.md).
  [[nodiscard]] std::optional<std::uint32_t> index() const noexcept;

  [[nodiscard]] Result<UniqueFd> dup_fd() const { return fd_.dup(); }

  /// This open file's status page, mapped by open() when the driver has
  /// NEURON_CAP_STATUS_PAGE; null otherwise. NotificationQueues made from
  /// this Device share it.
  [[nodiscard]] const std::shared_ptr<const StatusPage>& status_page() const noexcept { return status_; }
  /// What the status page says now (one load, no syscall); nullopt from a
  /// driver without one.
  [[nodiscard]] std::optional<DeviceState> state() const noexcept {
    if (!status_) return std::nullopt;
    return status_->state();
  }
  /// The status page says the file no longer works (Stale or Gone:
  /// userspace/README.md#device-loss); false without a page.
  [[nodiscard]] bool device_gone() const noexcept { return status_ && !status_->live(); }

 private:
  /// open() and open_read_only(), `mode` O_RDWR or O_RDONLY (not exported).
  [[gnu::visibility("hidden")]] static Result<Device> open_mode(const std::string& path, int mode);
  friend struct test::DeviceAccess;
  Device(UniqueFd fd, std::string path, std::size_t event_bytes, std::uint64_t caps,
         std::shared_ptr<const StatusPage> status)
      : fd_(std::move(fd)), path_(std::move(path)), event_bytes_(event_bytes), caps_(caps), status_(std::move(status)) {}
  UniqueFd fd_;
  std::string path_;
  std::size_t event_bytes_ = sizeof(Event);
  std::uint64_t caps_ = 0;
  std::shared_ptr<const StatusPage> status_;
};

/// One device-memory allocation, from NEURON_IOC_MEM_ALLOC to
/// NEURON_IOC_MEM_FREE (in the destructor). DGE_COPY instructions that this
/// open file submits may read and write it. It keeps its own descriptor of the
/// device's open file, so it may outlive the Device object it was made from.
/// Free it only once no program of the file still runs there (reset engines).
class DeviceMemory {
 public:
  DeviceMemory() = default;
  /// See Device::mem_alloc().
  static Result<DeviceMemory> allocate(const Device& dev, std::uint64_t size,
                                       std::optional<std::uint64_t> fixed_offset = std::nullopt);
  DeviceMemory(DeviceMemory&& o) noexcept
      : fd_(std::move(o.fd_)), offset_(o.offset_), size_(o.size_), live_(std::exchange(o.live_, false)) {}
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::move(o.fd_);
      offset_ = o.offset_;
      size_ = o.size_;
      live_ = std::exchange(o.live_, false);
    }
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() { reset(); }
  /// BAR4 offset of the allocation.
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  /// Bytes, rounded up to NEURON_MEM_ALIGN as the driver allocates them.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return live_; }
  /// NEURON_IOC_MEM_FREE now (errors ignored: the file's release frees it anyway).
  void reset() noexcept;

 private:
  UniqueFd fd_;
  std::uint64_t offset_ = 0, size_ = 0;
  bool live_ = false;
};

class NotificationQueue;

/// What NotificationQueue::wait() and wait_any() did.
struct WaitResult {
  /// Why it returned.
  enum class Status {
    Records,   ///< records were drained into `out` (drain.count > 0)
    TimedOut,  ///< the timeout passed with the queue(s) empty (drain.count == 0)
  };
  Status status = Status::TimedOut;
  /// The drain that returned the records (lost/overwritten/resyncs as for
  /// NotificationQueue::drain()); for a time-out, the counters of the last
  /// empty drain.
  DrainResult drain;
  /// wait_any(): the index in `queues` of the queue the records are from
  /// (the first one for a time-out); wait(): 0.
  std::size_t index = 0;
};
/// "records", "timed out".
const char* wait_result_name(WaitResult::Status s) noexcept;

/// One notification queue, from NQ_INIT to NQ_DESTROY: the ring mapped
/// read-only (MAP_SHARED at ring_offset), the HEAD doorbell page mapped
/// read/write (HEAD at +0), and a RingView over them. The destructor unmaps
/// both, then destroys the queue (the driver refuses to destroy a mapped
/// ring). It keeps its own descriptor of the device's open file, so it may
/// outlive the Device object it was made from.
///
/// Moving transfers the ring, the doorbell, the descriptors and the
/// consumer's HEAD; the moved-from object is inert: valid() is false,
/// drain()/for_each() return DrainResult::error = errc::moved_from, wait()
/// and info() return errc::moved_from, and none of them touches the memory
/// or the queue it used to hold. Thread safety: one consumer thread at a
/// time per queue (drain, for_each and wait are not synchronised); distinct
/// queues may be drained concurrently from different threads.
class NotificationQueue {
 public:
  struct Options {
    std::uint32_t size = 4096;  ///< bytes, a power of two within the device limits
    std::uint32_t flags = 0;    ///< NEURON_NQ_F_*
    std::uint32_t threshold = 0;  ///< unread records that raise the threshold interrupt; 0 none
    /// Make an eventfd (non-blocking) and bind it to the queue's threshold
    /// interrupt (NEURON_IOC_NQ_EVENTFD): wake_fd() becomes readable when
    /// `threshold` records are unread (or `coalesce_ns` after the first).
    /// Needs threshold > 0 or coalesce_ns > 0.
    bool eventfd = false;
    /// Interrupt-coalescing time limit, ns after the first unread record
    /// (docs/device-model.md#coalescing); 0: none, the first release's
    /// behaviour. At most NEURON_NQ_COALESCE_NS_MAX. Nonzero needs a driver
    /// with NEURON_CAP_COALESCE: create() returns errc::not_supported
    /// otherwise (with 0 any driver will do).
    std::uint32_t coalesce_ns = 0;
  };

  static Result<NotificationQueue> create(const Device& dev, unsigned core, unsigned queue, Options opt);
  static Result<NotificationQueue> create(const Device& dev, unsigned core, unsigned queue) {
    return create(dev, core, queue, Options{});
  }

  /// What NQ_INFO returns for this queue (head, tail, counters).
  using InfoFn = std::function<Result<NqInfo>()>;
  /// A queue whose ring, doorbell and NQ_INFO someone else provides (a
  /// simulator, or a test's fake device): `ring` (a power of two of records,
  /// else errc::bad_ring), `doorbell` for HEAD, `info` for TAIL and the
  /// counters, `flags` NEURON_NQ_F_* (IGNORE_FULL makes it lossy), `wake` an
  /// eventfd the provider signals on its threshold (optional). drain(),
  /// for_each() and the lap recovery behave exactly as for a device queue;
  /// nothing is destroyed at the end (no device).
  static Result<NotificationQueue> over(std::span<const Record> ring, Doorbell doorbell, InfoFn info,
                                        unsigned core, unsigned queue, std::uint32_t flags,
                                        UniqueFd wake = UniqueFd());
  /// The same with the provider's status page (StatusPage::over()):
  /// drain(), for_each(), device_gone() and check_device() read it as they
  /// read a device queue's.
  static Result<NotificationQueue> over(std::span<const Record> ring, Doorbell doorbell, InfoFn info,
                                        unsigned core, unsigned queue, std::uint32_t flags, UniqueFd wake,
                                        std::shared_ptr<const StatusPage> status);

  NotificationQueue(NotificationQueue&& o) noexcept;
  NotificationQueue& operator=(NotificationQueue&& o) noexcept;
  NotificationQueue(const NotificationQueue&) = delete;
  NotificationQueue& operator=(const NotificationQueue&) = delete;
  ~NotificationQueue();

  /// A moved-from or default queue returns DrainResult::error =
  /// errc::moved_from with count 0, touching no memory.
  /// RingView::drain into `out` (oldest first). On an ignore-full queue
  /// (userspace/README.md#lossy-queues) it also reads TAIL with NQ_INFO
  /// whenever the drain saw a sign of a lap (a copied record with
  /// software_queue_overflow, a stale-looking slot with it at HEAD, the guard
  /// slot overtaken, a record that changed pass): copies the producer may have
  /// overwritten meanwhile (records < TAIL - entries + 1) are dropped, and if
  /// nothing safe is left the consumer resynchronises to TAIL - entries +
  /// entries / 4 (a margin from the producer, at least 1), writes that HEAD
  /// through the doorbell (accepted by the device, re-arming its threshold)
  /// and goes on draining in the same call, up to 8 recoveries. Every record
  /// skipped is counted in DrainResult::lost (exact), those already
  /// overwritten in ::overwritten. A backpressured queue never takes this path.
  DrainResult drain(std::span<Record> out) noexcept;
  /// RingView::for_each (zero copy) on a backpressured queue; refuses an
  /// ignore-full queue (DrainResult::refused, nothing consumed): use drain().
  /// `fn` gets `const Record&` pointing INTO the mapped ring: valid only
  /// during that call (the slot is handed back to the device when for_each
  /// returns); copy what must outlive it. A moved-from queue returns
  /// DrainResult::error = errc::moved_from and calls nothing.
  template <class Fn>
  DrainResult for_each(Fn&& fn, std::size_t max = std::numeric_limits<std::size_t>::max()) noexcept {
    if (gone_ || status_gone()) return gone_now();
    if (!valid()) return moved_from_result();
    DrainResult r = view_.for_each(std::forward<Fn>(fn), max);
    if (r.count == 0 && r.lap_suspected && !view_.lossy()) recover(r);
    r.device_gone = gone_;
    return r;
  }
  /// Block until records arrive, then return them: the drain-then-sleep
  /// rule of the threshold interrupt (docs/hardware.md#completion,
  /// userspace/README.md#api-contract) done for the caller. It resets the
  /// queue's eventfd, drains into `out` (oldest first) and returns at once if
  /// that took records; only after an empty drain, which followed the last
  /// HEAD write and so left the device's threshold interrupt armed, does it
  /// sleep in ppoll() on wake_fd(), and then drains again. A record that
  /// arrives at any point either is taken by a drain or raises the interrupt
  /// that ends the sleep; the library never sleeps past one.
  ///
  /// `timeout`: how long to sleep in total (any std::chrono duration;
  /// nanosecond resolution); zero drains once and never sleeps; negative
  /// means no limit. EINTR is retried with the time left.
  ///
  /// Returns WaitResult::Status::Records (drain.count > 0) or ::TimedOut
  /// (nothing arrived in time), or an Error:
  ///  * errc::moved_from: a moved-from or default queue (nothing touched);
  ///  * errc::device_gone: the device was removed or reset (seen before each
  ///    drain with check_device(): the status page, or poll() from an older
  ///    driver, which sees only a removal; a removal ends the sleep; the
  ///    ring is not touched; userspace/README.md#device-loss);
  ///  * errc::invalid_argument: the queue has no eventfd to sleep on (make it
  ///    with Options::eventfd and a threshold, e.g. 1; or over() with `wake`);
  ///    a zero timeout needs none;
  ///  * an errno from ppoll() (EBADF, ENOMEM), what = "ppoll eventfd of
  ///    core C queue Q".
  /// On a lossy queue the records lost to a lap are in drain.lost as for
  /// drain(). Thread safety: like drain(), one thread at a time per queue.
  Result<WaitResult> wait(std::span<Record> out, std::chrono::nanoseconds timeout);
  /// The same for a set of queues: sleeps on all their eventfds at once and
  /// returns the records of ONE queue (WaitResult::index; up to out.size()).
  /// Queues are drained in order starting at `start % queues.size()`, so a
  /// caller that passes the previous index + 1 serves them round-robin; a
  /// queue with records waiting wins over a sleep. Errors as for wait(), plus
  /// errc::invalid_argument for an empty set or a null pointer; the Error
  /// names the queue (core, queue, index) at fault. Every queue must have an
  /// eventfd unless `timeout` is zero.
  static Result<WaitResult> wait_any(std::span<NotificationQueue* const> queues, std::span<Record> out,
                                     std::chrono::nanoseconds timeout, std::size_t start = 0);
  /// Whether this object holds a queue (false once moved from, or default).
  [[nodiscard]] bool valid() const noexcept { return view_.data() != nullptr; }
  explicit operator bool() const noexcept { return valid(); }

  /// Whether the queue was made with NEURON_NQ_F_IGNORE_FULL.
  [[nodiscard]] bool lossy() const noexcept { return view_.lossy(); }

  /// NEURON_IOC_NQ_INFO now (a syscall): head, tail, counters, and the
  /// queue's threshold and coalesce_ns as the driver holds them (coalesce_ns
  /// is 0 from a driver without NEURON_CAP_COALESCE).
  [[nodiscard]] Result<NqInfo> info() const;

  /// NEURON_IOC_NQ_COALESCE: change this live queue's interrupt coalescing
  /// (docs/device-model.md#coalescing; Coalescing says what the two limits
  /// mean): `threshold` records (0: no count limit; at most size() / 16) or
  /// `coalesce_ns` nanoseconds after the first unread record (0: no time
  /// limit; at most NEURON_NQ_COALESCE_NS_MAX), whichever comes first. The
  /// queue keeps running and records already unread count at once, so none
  /// is left without an interrupt by the change. On success coalescing()
  /// returns the new values. One ioctl; not for the per-record path.
  /// Errors (nothing changed), in the order they are checked:
  ///  * errc::device_gone, errc::moved_from (nothing touched);
  ///  * errc::invalid_argument: threshold > entries, coalesce_ns > the
  ///    maximum, or both 0 on a queue with an eventfd (nothing would signal
  ///    it again; make a busy-polled queue without Options::eventfd); the
  ///    message names the field; no ioctl;
  ///  * errc::not_supported: the driver lacks NEURON_CAP_COALESCE (an older
  ///    nnq.ko), or a queue made with over() (no device); no ioctl;
  ///  * the driver's errno (EINVAL, ENOENT, EIO, ENODEV; the last two also
  ///    mark the queue gone, as for NQ_INFO), what =
  ///    "NEURON_IOC_NQ_COALESCE core=C queue=Q threshold=T coalesce_ns=N".
  /// Thread safety: like drain(), one thread at a time per queue.
  [[nodiscard]] Status set_coalescing(std::uint32_t threshold, std::uint32_t coalesce_ns);
  /// The queue's interrupt coalescing as this object last set it (NQ_INIT,
  /// then set_coalescing()); no syscall. info() asks the driver.
  [[nodiscard]] Coalescing coalescing() const noexcept { return coalescing_; }
  /// Whether set_coalescing() can work: the queue was made by create() on a
  /// driver with NEURON_CAP_COALESCE.
  [[nodiscard]] bool coalescing_supported() const noexcept { return coalesce_cap_; }
  /// N of the /dev/nnqN the queue was made on (Device::index()), if the
  /// device's path ends in it; nullopt for over() and other paths.
  [[nodiscard]] std::optional<std::uint32_t> device_index() const noexcept { return device_index_; }
  /// The eventfd bound with Options::eventfd, -1 if none. Readable (count >
  /// 0) after a threshold interrupt; read it (8 bytes) to reset it. The
  /// threshold re-arms on the next HEAD write, i.e. the next drain that takes
  /// records: drain until a drain returns 0 before sleeping again. (A Reaper
  /// registers it edge-triggered and never reads it, so a queue is either
  /// the Reaper's or the caller's to wait() on, not both.)
  [[nodiscard]] int wake_fd() const noexcept { return efd_.get(); }
  /// Bind another eventfd (or -1 to unbind) to this queue's threshold interrupt.
  [[nodiscard]] Status bind_eventfd(int efd) const;
  [[nodiscard]] RingView& view() noexcept { return view_; }
  [[nodiscard]] unsigned core() const noexcept { return core_; }
  [[nodiscard]] unsigned queue() const noexcept { return queue_; }
  [[nodiscard]] std::uint32_t size() const noexcept { return size_; }
  /// The core's ROUTE word the queue's records were routed with: NQ_INFO's
  /// `route`, read once at create() (the driver refuses a route change
  /// while the queue lives, docs/decisions/0022-route-programmable.md);
  /// NEURON_ROUTE_DEFAULT for over() and from a driver without
  /// NEURON_CAP_ROUTE.
  [[nodiscard]] std::uint32_t route() const noexcept { return route_; }
  /// The class of record this queue gets under route() (the lowest class
  /// routed to it; QueueClass::Any if none is).
  [[nodiscard]] QueueClass queue_class() const noexcept { return neuron::queue_class(queue_, route_); }
  /// decode(r, queue_class()): every kind right, DGE metadata included,
  /// with no queue or route from the caller
  /// (docs/decisions/0019-dge-metadata-route.md).
  [[nodiscard]] Decoded decode(const Record& r) const noexcept { return neuron::decode(r, queue_class()); }
  /// Records known lost to overwrites so far.
  [[nodiscard]] std::uint64_t lost() const noexcept { return lost_; }

  /// Device loss (userspace/README.md#device-loss). Once the library has
  /// seen the device go, drain() and for_each() return at once with
  /// DrainResult::device_gone (DEVICE_GONE, errc::device_gone) and never
  /// touch the ring or doorbell mapping again (after a removal or reset
  /// they fill no more; the driver raises no signal on them,
  /// docs/decisions/0011-reset-and-recovery.md#mapping-after-reset); view()
  /// is then an empty view. The queue learns it from its file's status page
  /// (status_page(): drain() and for_each() look at it first, one load each),
  /// mark_device_gone() (a Reaper calls it when it sees the device go),
  /// check_device(), or NQ_INFO failing with ENODEV (removed) or EIO (stale
  /// after a reset). device_gone() also looks at the status page (one load, no
  /// syscall). Not thread-safe: call it on the thread that drains.
  [[nodiscard]] bool device_gone() const noexcept { return gone_ || status_gone(); }
  void mark_device_gone() noexcept;
  /// Whether the device went, asked now: the status page (one load) if the
  /// driver has one, else one non-blocking poll() of the queue's file of
  /// /dev/nnqN (a syscall; EPOLLHUP or EPOLLERR: removed). Either marks the
  /// queue gone. Returns device_gone(). A queue made with over() and no
  /// status page has no file: false unless marked.
  bool check_device() noexcept;
  /// The queue's open file of /dev/nnqN (poll() reports EPOLLHUP|EPOLLERR
  /// once the device is removed), -1 for a queue made with over().
  [[nodiscard]] int device_fd() const noexcept { return fd_.get(); }
  /// The status page of the queue's open file (Device::status_page(), or
  /// over()'s `status`); null from a driver without NEURON_CAP_STATUS_PAGE.
  [[nodiscard]] const std::shared_ptr<const StatusPage>& status_page() const noexcept { return status_; }

 private:
  NotificationQueue() = default;
  static DrainResult moved_from_result() noexcept {
    DrainResult r;
    r.error = make_error_code(errc::moved_from);
    return r;
  }
  void recover(DrainResult& r) noexcept;
  static DrainResult gone_result() noexcept {
    DrainResult r;
    r.device_gone = true;
    return r;
  }
  [[nodiscard]] bool status_gone() const noexcept { return status_ && !status_->live(); }
  /// The device went (seen now or before): never touch the mappings again.
  DrainResult gone_now() noexcept {
    if (!gone_) mark_device_gone();
    return gone_result();
  }
  void note_info_error(const Error& e) noexcept;
  DrainResult drain_lossy(std::span<Record> out) noexcept;
  void destroy() noexcept;

  UniqueFd efd_;  // closed after the queue is destroyed (which unbinds it)
  UniqueFd fd_;
  Mapping ring_;
  Mapping doorbell_;
  RingView view_;
  unsigned core_ = 0, queue_ = 0;
  std::uint32_t size_ = 0;
  std::uint64_t lost_ = 0;
  std::uint32_t checked_head_ = 0;
  bool checked_ = false;
  bool live_ = false;
  bool gone_ = false;  // the device went: never touch the mappings again
  InfoFn info_fn_;  // over(): the provider's NQ_INFO
  std::uint64_t checked_lo_ = 0, checked_hi_ = 0;  // slot at checked_head_ when checked (lossy)
  Coalescing coalescing_{0, 0};                    // as last set (NQ_INIT, NQ_COALESCE)
  bool coalesce_cap_ = false;                      // the driver has NEURON_CAP_COALESCE
  std::optional<std::uint32_t> device_index_;      // N of /dev/nnqN
  std::shared_ptr<const StatusPage> status_;       // the open file's status page, if the driver has one
  std::uint32_t route_ = NEURON_ROUTE_DEFAULT;     // the core's route (NQ_INFO at create)
};

}  // namespace neuron
NEURON_API_END
