// SPDX-License-Identifier: MIT
//
// execute(program, timeout): make the notification queues (threshold 1, an
// eventfd bound to each), start a Reaper on them and on the device's event
// stream, register one waiter "every engine has completed", submit every
// engine's program, and sleep on the waiter's eventfd
// (docs/hardware.md#completion: the reap thread drains, the execute thread
// wakes off comp_efd). Status (docs/hardware.md#intr-edge, #timeout):
//   OK                    every engine completed and no error record came
//   TIMEOUT (5)           not every engine completed in time — e.g. an engine
//                         fatally halted: it never completes
//                         (docs/hardware.md#timeout); the fatal record, if one
//                         came, is first_error
//   SW_NQ_OVERFLOW (1204) records were lost, whatever the cause
//                         (docs/device-model.md#intr-cause-table): an edge
//                         with tpb_notific_intr_2 (SW_OVERFLOW: ignore-full
//                         overwrite, full queue with no policy) or intr_3
//                         (HW_OVERFLOW: the input buffer dropped one) on a
//                         core in use whose queues' NQ_INFO overflow or drop
//                         count confirms it, or a record with
//                         software_queue_overflow or hardware_queue_overflow
//                         (the wait ends there); or, at the end, a lossy
//                         drain that skipped records (lost) or nonzero
//                         NQ_INFO overflow/drop counts (device_lost)
//   COMPLETED_WITH_ERR    all completed but an error record arrived (first_error;
//                         is_error(): throttle records are not errors), or an
//                         engine ended HALTED
//   COMPLETED_THROTTLED (2001)
//                         all completed, nothing lost, no error record, and
//                         the only non-OK records were throttle records
//                         (is_throttle(): ERROR, group throttle; the device
//                         writes them while throttle is armed,
//                         docs/hardware.md#throttle). A condition, not an
//                         error: the run did all its work, slowed down.
//                         first_throttle and throttle_records say how much.
//   FAILURE               an ioctl/mmap/thread failed (error)
// When several apply, the first in this order wins: SW_NQ_OVERFLOW, TIMEOUT,
// COMPLETED_WITH_ERR, COMPLETED_THROTTLED, OK.
//
// Tenancy (include/uapi/linux/neuron.h "Tenancy"; ProgramClaim below): before
// it makes a queue, execute() checks the program's cores against the visible
// ones (ExecOptions::cores, else NEURON_VISIBLE_CORES, else all), acquires
// them (NEURON_IOC_CORE_ACQUIRE; EBUSY names the owning process from sysfs
// core_owners) and allocates the device memory every DGE_COPY names
// (NEURON_IOC_MEM_ALLOC, NEURON_MEM_F_FIXED, ranges merged into 4096-byte
// spans). When it returns, every engine it started that is still running or
// waiting (TIMEOUT) is reset, before its queues are destroyed, on a core the
// file owned before too and whether or not the program uses device memory;
// then the cores it acquired are released and the memory is freed. Cores the
// file owned before stay owned.
//
// What "completed" means for an engine: its completion record arrived.
//   * With tracing (the default) that is the INST_END of an instruction after
//     which the engine stops: a HALT, or the last instruction. The engine
//     writes nothing after it (docs/device-model.md), so nothing is missed.
//   * Without tracing there is no such record, so execute() marks the
//     completion the way the real chain does (op done -> EVT_SEM -> NQ record,
//     docs/hardware.md#completion): it sets the EVENTS update of those stopping
//     instructions to `event.set` on ExecOptions::completion_event, which
//     writes an EVT_SEM record {block_id = engine} after the instruction. An
//     instruction that already has an @update cannot carry the mark: execute()
//     then fails (errc::invalid_argument) and says so. Program counters are
//     unchanged.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libneuron/program.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/device.hpp"
#include "libneuron/reaper.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"
#include "libneuron/tenancy.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// NRT status values (docs/hardware.md#timeout: NRT_TIMEOUT 5,
/// NRT_EXEC_SW_NQ_OVERFLOW 1204; the others as in the public Neuron runtime's
/// nrt_status.h), then ours. The values are ABI: new ones are appended,
/// none is renumbered.
enum class ExecStatus : int {
  Ok = 0,
  Failure = 1,
  Timeout = 5,
  CompletedWithError = 1004,
  SwNqOverflow = 1204,
  /// Ours (the runtime has no throttle status; 2001 is outside the ranges
  /// nrt_status.h uses): completed, and the only non-OK records were
  /// throttle records (is_throttle()). docs/cli-json.md#exit-codes.
  CompletedThrottled = 2001,
};
const char* status_name(ExecStatus s) noexcept;

/// A drained record and where it came from.
struct CollectedRecord {
  unsigned core = 0;
  unsigned queue = 0;
  Record raw;
  Decoded decoded;
};

/// Stable sort by device timestamp (then core, queue, arrival).
void sort_by_timestamp(std::vector<CollectedRecord>& records);

/// A host write to a core's EVT_SEM unit that execute() makes after
/// submitting (ExecOptions::sem_writes): how a host signals a program that
/// waits on a semaphore or event (Device::evt_sem()).
struct SemWrite {
  unsigned core = 0;
  unsigned index = 0;                    ///< semaphore or event index, < NEURON_EVT_SEM_COUNT
  neuron_evt_sem_op op = NEURON_SEM_SET;  ///< SET, INC, DEC, EVENT_SET or EVENT_CLEAR
  std::uint32_t value = 0;
};

/// Progress while execute() waits (ExecOptions::progress).
struct ExecProgress {
  std::chrono::nanoseconds elapsed{0};
  std::uint64_t records = 0;
  std::uint64_t events = 0;
  unsigned engines_done = 0;
  unsigned engines = 0;
};

/// The environment variable with the execution budget, in whole seconds
/// (0: no limit), read when ExecOptions::timeout is kExecTimeoutFromEnv
/// (docs/hardware.md#exec-timeout, docs/decisions/0037-exec-timeout.md).
inline constexpr const char* kExecTimeoutEnv = "NEURON_RT_EXEC_TIMEOUT";
/// ExecOptions::timeout's default: take the budget from NEURON_RT_EXEC_TIMEOUT
/// if it is set, else kExecTimeoutDefault. An invalid value makes execute()
/// return FAILURE (errc::invalid_argument, the text naming the variable).
inline constexpr std::chrono::milliseconds kExecTimeoutFromEnv{-1};
/// The budget when ExecOptions::timeout is kExecTimeoutFromEnv and the
/// variable is unset.
inline constexpr std::chrono::milliseconds kExecTimeoutDefault{5000};

struct ExecOptions {
  /// How long to wait for every engine's completion record; then the status
  /// is TIMEOUT. kExecTimeoutFromEnv (the default): NEURON_RT_EXEC_TIMEOUT's
  /// seconds if set, else kExecTimeoutDefault. A budget past the clock's
  /// range is no limit.
  std::chrono::milliseconds timeout{kExecTimeoutFromEnv};
  bool trace = true;                 ///< NEURON_SUBMIT_F_TRACE
  std::uint32_t queue_size = 4096;   ///< bytes per queue
  unsigned queues = 6;               ///< queues 0..queues-1 per core used (default routing uses 0..5)
  std::uint32_t queue_flags = 0;     ///< NEURON_NQ_F_* (default: backpressure, lossless)
  /// Per queue: unread records that wake the reaper. 1 (the default) lets
  /// the Reaper adapt it to the record rate, with a 500 us time limit
  /// (Reaper::Moderation::Adaptive, userspace/README.md#coalescing); any
  /// other value is kept as it is (Moderation::Fixed).
  std::uint32_t threshold = 1;
  /// A fatal error record (SEQUENCER_FATAL naming the engine) ends that
  /// engine's wait: status COMPLETED_WITH_ERR instead of waiting for the
  /// TIMEOUT the real runtime reports (docs/hardware.md#timeout).
  bool halt_ends_wait = false;
  /// NEURON_FEATURE_FLAGS to set on every core used before submitting;
  /// overrides the program's `features` directive. nullopt: the program's, if any.
  std::optional<std::uint32_t> features;
  /// Event index execute() sets to mark completion when trace is off.
  std::uint8_t completion_event = 255;
  /// Called every progress_interval while waiting (on the calling thread).
  std::function<void(const ExecProgress&)> progress;
  std::chrono::milliseconds progress_interval{250};
  /// Cores the program may use, in NEURON_VISIBLE_CORES syntax, which it
  /// overrides ({"0-1,3", "--cores"}: the source names it in errors).
  /// nullopt: the variable's value if set, else every core.
  std::optional<CoreList> cores;
  /// Allocate the device memory the program's DGE_COPY instructions name
  /// (NEURON_MEM_F_FIXED). false if the caller allocated it on this file.
  bool allocate_memory = true;
  /// Called for each record as it is drained, on the reap thread (keep it
  /// short: the rings wait for it). nullptr: none.
  std::function<void(const CollectedRecord&)> on_record;
  /// The NOTIFIC ROUTE word (docs/hardware.md#nq-routing) to program on
  /// every core the program uses before its queues are made
  /// (Device::set_route(): the file must not have a queue there; a core
  /// execute() acquires goes back to NEURON_ROUTE_DEFAULT when it releases
  /// it). nullopt: each core keeps the route it has. Either way the queues
  /// made are 0..queues-1 and every queue the route sends a class to, and
  /// each record is decoded with its core's route as read back
  /// (ExecResult::routes).
  std::optional<std::uint32_t> route;
  /// Keep every record in ExecResult::records. false: records are only
  /// handed to on_record (and first_error kept), so memory does not grow
  /// with the number of records (`neuron-nq run` in an error storm).
  bool keep_records = true;
  /// Completion notifications to arm on every core the program uses before
  /// submitting, and to disarm when it ends (Device::notify_trigger();
  /// docs/device-model.md#dma-engines, #axi-evt-sem): bit q arms DMA
  /// queue q (a DMA record per engine of each DGE copy's split, class DMA).
  std::uint16_t dma_queues = 0;
  /// Host EVT_SEM writes make AXI_EVT_SEM records (class EVT_SEM); the
  /// records the device lost meanwhile are ExecResult::axi_dropped.
  bool axi_evt_sem = false;
  /// Host writes made, in order, once every engine is submitted.
  std::vector<SemWrite> sem_writes;
};

struct ExecResult {
  ExecStatus status = ExecStatus::Ok;
  bool completed = false;                       ///< every engine's completion record arrived
  std::optional<CollectedRecord> first_error;   ///< first error record (is_error(): not a throttle record)
  std::vector<CollectedRecord> records;         ///< in drain order
  std::vector<Event> events;                    ///< interrupt edges seen meanwhile (device event stream)
  std::vector<EngineStatus> engines;            ///< final status of each engine used
  /// Why, for FAILURE. For TIMEOUT: std::errc::timed_out and the line the
  /// runtime logs for it (docs/hardware.md#exec-timeout), e.g.
  /// "(FATAL-RT-UNDEFINED-STATE) t.nq: execution timeout (5000 ms) on core 0
  /// PE: waiting for execution completion notification".
  std::optional<Error> error;
  std::uint64_t lost = 0;                       ///< records lost to overflow
  /// Records the device lost on the program's queues, from NQ_INFO at the
  /// end: overwritten (ignore-full) plus dropped (input buffer, no policy,
  /// ring write error). Nonzero makes the status SW_NQ_OVERFLOW.
  std::uint64_t device_lost = 0;
  bool overflow_seen = false;                   ///< records were lost, however (status 1204)
  std::optional<Event> overflow_event;          ///< the SW_OVERFLOW or HW_OVERFLOW edge, if that is how it was seen
  std::optional<std::uint32_t> features;        ///< feature flags execute() set, if it did
  std::uint64_t cores_acquired = 0;             ///< cores execute() acquired (and released at the end)
  std::vector<MemRange> memory;                 ///< device memory it allocated for the program (and freed)
  Reaper::Stats reaper;                         ///< what the reap thread did
  std::chrono::nanoseconds elapsed{0};
  /// The first throttle record (is_throttle()), which is not an error.
  std::optional<CollectedRecord> first_throttle;
  /// Throttle records drained (whatever keep_records says). Nonzero, with
  /// nothing worse, makes the status COMPLETED_THROTTLED.
  std::uint64_t throttle_records = 0;
  /// Each used core's ROUTE word, read back before its queues were made:
  /// the route its records were decoded with.
  std::map<unsigned, std::uint32_t> routes;
  /// With ExecOptions::axi_evt_sem: AXI_EVT_SEM records the program's cores
  /// lost while armed (docs/decisions/0025-axi-dropped.md), read as execute()
  /// disarms them; nonzero makes the status SW_NQ_OVERFLOW. nullopt: not
  /// armed, or a driver that does not count them.
  std::optional<std::uint64_t> axi_dropped;
  /// Per core, what the last arm or disarm read back (bit q: DMA queue q;
  /// AXI_EVT_SEM on): the notifications the program ran with.
  std::map<unsigned, Device::NotifyTriggers> triggers;
};

/// What execute() needs from a device; DeviceTarget is the real one, tests
/// use a fake over memory rings.
class ExecTarget {
 public:
  virtual ~ExecTarget() = default;
  /// A queue with an eventfd bound to its threshold interrupt.
  virtual Result<std::unique_ptr<ReapQueue>> open_queue(unsigned core, unsigned queue,
                                                        const NotificationQueue::Options& opt) = 0;
  /// The device's interrupt edges; nullptr when there is no such stream.
  virtual Result<std::unique_ptr<EventSource>> open_events() = 0;
  virtual Status set_feature_flags(unsigned core, std::uint32_t flags) = 0;
  virtual Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) = 0;
  virtual Result<EngineStatus> engine_status(unsigned core, unsigned engine) = 0;
  virtual Status engine_reset(unsigned core, unsigned engine) = 0;
  virtual Result<DeviceInfo> info() = 0;
  /// NEURON_IOC_CORE_ACQUIRE: the cores owned afterwards (0 asks only).
  /// Called only when info() reports NEURON_CAP_TENANCY.
  virtual Result<std::uint64_t> acquire_cores(std::uint64_t cores) = 0;
  /// NEURON_IOC_CORE_RELEASE: the cores still owned.
  virtual Result<std::uint64_t> release_cores(std::uint64_t cores) = 0;
  /// sysfs core_owners, to name who holds a busy core.
  virtual Result<std::vector<CoreOwner>> core_owners() = 0;
  /// NEURON_IOC_MEM_ALLOC with NEURON_MEM_F_FIXED at `offset`.
  virtual Status mem_alloc_fixed(std::uint64_t offset, std::uint64_t size) = 0;
  /// NEURON_IOC_MEM_FREE.
  virtual Status mem_free(std::uint64_t offset) = 0;
  /// NEURON_IOC_NQ_ROUTE GET (Device::route()). The default is a target
  /// whose cores keep NEURON_ROUTE_DEFAULT.
  virtual Result<std::uint32_t> route(unsigned core) {
    (void)core;
    return NEURON_ROUTE_DEFAULT;
  }
  /// NEURON_IOC_NQ_ROUTE SET (Device::set_route()): the route read back.
  /// The default takes only NEURON_ROUTE_DEFAULT (errc::not_supported else).
  virtual Result<std::uint32_t> set_route(unsigned core, std::uint32_t route) {
    if (route == NEURON_ROUTE_DEFAULT) return route;
    return unexpected(errc::not_supported, fmt_route_unsupported(core, route));
  }

  /// NEURON_IOC_NOTIFY_TRIGGER (Device::notify_trigger()). The default is
  /// a target without completion notifications (errc::not_supported).
  virtual Result<Device::NotifyTriggers> notify_trigger(unsigned core, neuron_trigger_source source, unsigned index,
                                                        bool enable);
  /// NEURON_IOC_EVT_SEM (Device::evt_sem()): the value after the write.
  /// The default is a target without a host EVT_SEM path (errc::not_supported).
  virtual Result<std::uint32_t> evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op, std::uint32_t value);

 protected:
  static std::string fmt_route_unsupported(unsigned core, std::uint32_t route);
};

/// ExecTarget over a Device: NotificationQueues and the file's events, with
/// RAII. open_events() subscribes to the Device's open file: every
/// DeviceTarget (every execute()) running on it at the same time sees every
/// event, where one EventStream's read() would take it from the others
/// (issue 41). It costs one poll() per Reaper pass (its descriptor is an
/// epoll of the file, which no status page stands for).
class DeviceTarget final : public ExecTarget {
 public:
  explicit DeviceTarget(const Device& dev) : dev_(dev) {}
  Result<std::unique_ptr<ReapQueue>> open_queue(unsigned core, unsigned queue,
                                                const NotificationQueue::Options& opt) override;
  Result<std::unique_ptr<EventSource>> open_events() override;
  Status set_feature_flags(unsigned core, std::uint32_t flags) override;
  Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) override;
  Result<EngineStatus> engine_status(unsigned core, unsigned engine) override;
  Status engine_reset(unsigned core, unsigned engine) override;
  Result<DeviceInfo> info() override;
  Result<std::uint64_t> acquire_cores(std::uint64_t cores) override;
  Result<std::uint64_t> release_cores(std::uint64_t cores) override;
  Result<std::vector<CoreOwner>> core_owners() override;
  Status mem_alloc_fixed(std::uint64_t offset, std::uint64_t size) override;
  Status mem_free(std::uint64_t offset) override;
  Result<std::uint32_t> route(unsigned core) override;
  Result<std::uint32_t> set_route(unsigned core, std::uint32_t route) override;
  Result<Device::NotifyTriggers> notify_trigger(unsigned core, neuron_trigger_source source, unsigned index,
                                                bool enable) override;
  Result<std::uint32_t> evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op, std::uint32_t value) override;

 private:
  const Device& dev_;
};

/// What a program needs from the device besides its engines, held for as long
/// as the claim lives: its cores (acquired if this file did not own them) and
/// the device memory its DGE_COPY instructions name (allocated with
/// NEURON_MEM_F_FIXED at the spans program_memory() gives). make() checks
/// the program's cores against the visible ones first. The destructor resets
/// the program's engines still RUNNING or WAITING if it holds memory (so none
/// touches freed memory), releases the cores it acquired (the driver resets
/// their engines), then frees the memory. The target must outlive the claim.
/// A driver without tenancy (no NEURON_CAP_TENANCY in DEVICE_INFO) gets the
/// visibility check only.
class ProgramClaim {
 public:
  struct Options {
    std::optional<CoreList> cores;  ///< as ExecOptions::cores
    bool allocate_memory = true;    ///< as ExecOptions::allocate_memory
  };
  ProgramClaim() = default;
  static Result<ProgramClaim> make(ExecTarget& target, const Program& program, const Options& opt);
  ProgramClaim(ProgramClaim&& o) noexcept { *this = std::move(o); }
  ProgramClaim& operator=(ProgramClaim&& o) noexcept;
  ProgramClaim(const ProgramClaim&) = delete;
  ProgramClaim& operator=(const ProgramClaim&) = delete;
  ~ProgramClaim() { reset(); }

  /// The program's cores (a mask).
  [[nodiscard]] std::uint64_t cores() const noexcept { return cores_; }
  /// The cores this claim acquired (and will release).
  [[nodiscard]] std::uint64_t acquired() const noexcept { return acquired_; }
  /// The device memory it allocated.
  [[nodiscard]] const std::vector<MemRange>& memory() const noexcept { return memory_; }
  /// Give everything back now (see the class comment).
  void reset() noexcept;

 private:
  ExecTarget* target_ = nullptr;
  std::vector<std::pair<unsigned, unsigned>> engines_;  // (core, engine)
  std::uint64_t cores_ = 0, acquired_ = 0;
  std::vector<MemRange> memory_;
};

/// The instructions after which an engine stops: every HALT and the last one.
std::vector<std::uint32_t> stopping_pcs(std::span<const Instruction> insns);

ExecResult execute(ExecTarget& target, const Program& program, const ExecOptions& opt = {});
ExecResult execute(const Device& dev, const Program& program, const ExecOptions& opt = {});

}  // namespace neuron
NEURON_API_END
