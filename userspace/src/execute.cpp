// SPDX-License-Identifier: MIT
#include "libneuron/execute.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <endian.h>

#include <unistd.h>

#include <fmt/format.h>

namespace neuron {

namespace {
// Causes that mean records were lost (docs/device-model.md#intr-cause-table):
// a full software queue (intr_2) or the input buffer's drop (intr_3).
constexpr std::uint32_t kLossCauses =
    (1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW) | (1u << NEURON_NOTIFIC_INTR_HW_OVERFLOW);
}  // namespace

const char* status_name(ExecStatus s) noexcept {
  switch (s) {
    case ExecStatus::Ok: return "OK";
    case ExecStatus::Failure: return "FAILURE";
    case ExecStatus::Timeout: return "TIMEOUT";
    case ExecStatus::CompletedWithError: return "COMPLETED_WITH_ERR";
    case ExecStatus::SwNqOverflow: return "SW_NQ_OVERFLOW";
    case ExecStatus::CompletedThrottled: return "COMPLETED_THROTTLED";
  }
  return "UNKNOWN";
}

void sort_by_timestamp(std::vector<CollectedRecord>& records) {
  std::stable_sort(records.begin(), records.end(), [](const CollectedRecord& a, const CollectedRecord& b) {
    const auto ta = a.raw.timestamp_ps(), tb = b.raw.timestamp_ps();
    if (ta != tb) return ta < tb;
    if (a.core != b.core) return a.core < b.core;
    return a.queue < b.queue;
  });
}

std::vector<std::uint32_t> stopping_pcs(std::span<const Instruction> insns) {
  std::vector<std::uint32_t> pcs;
  for (std::uint32_t pc = 0; pc < insns.size(); ++pc)
    if (insns[pc].opcode == NEURON_OP_HALT || pc + 1 == insns.size()) pcs.push_back(pc);
  return pcs;
}

// ------------------------------------------------------------------ DeviceTarget
Result<std::unique_ptr<ReapQueue>> DeviceTarget::open_queue(unsigned core, unsigned queue,
                                                            const NotificationQueue::Options& opt) {
  auto q = NotificationQueue::create(dev_, core, queue, opt);
  if (!q) return unexpected(std::move(q).error());
  return make_reap_queue(std::move(q).value());
}

Result<std::unique_ptr<EventSource>> DeviceTarget::open_events() {
  auto s = dev_.open_event_stream();
  if (!s) return unexpected(std::move(s).error());
  return make_event_source(std::move(s).value());
}

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

// ------------------------------------------------------------------ ProgramClaim
namespace {

// EBUSY from CORE_ACQUIRE: say which process owns which of the wanted cores.
Error busy_error(ExecTarget& t, std::uint64_t wanted, Error e) {
  if (e.code != std::errc::device_or_resource_busy) return e;
  auto owners = t.core_owners();
  std::string who;
  if (owners)
    for (const auto& o : *owners) {
      if (o.core >= kMaxCores || !(wanted >> o.core & 1) || o.is_free()) continue;
      who += fmt::format("{}core {} is owned by {}: {}", who.empty() ? "" : "; ", o.core,
                         o.pid == static_cast<int>(::getpid()) ? "another open file of this process"
                                                               : "another process",
                         owner_text(o));
    }
  if (who.empty())
    who = owners ? std::string("another open file owns one of them (no longer listed in core_owners)")
                 : "another open file owns one of them (" + owners.error().message() + ")";
  e.what += ": " + who + "; wait for it to finish, or pick other cores (--cores, NEURON_VISIBLE_CORES)";
  return e;
}

// The first DGE_COPY range inside `span`, for messages.
std::string range_in(const MemRange& span, const std::vector<DgeRange>& ranges, const Program& p) {
  for (const auto& r : ranges)
    if (r.range.offset >= span.offset && r.range.end() <= span.end()) return describe(r, p);
  return fmt::format("{}: DGE_COPY", p.name);
}

}  // namespace

Result<ProgramClaim> ProgramClaim::make(ExecTarget& t, const Program& p, const Options& opt) {
  auto info = t.info();
  if (!info) return unexpected(std::move(info).error());
  auto visible = visible_cores(opt.cores, info->num_cores, info->file_cores);
  if (!visible) return unexpected(std::move(visible).error());
  if (auto s = check_program_cores(p, *visible); !s) return unexpected(std::move(s).error());

  ProgramClaim c;
  c.target_ = &t;
  for (const auto& e : p.engines) {
    c.cores_ |= std::uint64_t{1} << e.core;
    c.engines_.emplace_back(e.core, e.engine);
  }
  if (!(info->capabilities & NEURON_CAP_TENANCY))
    return c;  // a driver without core ownership or a memory allocator
  auto before = t.acquire_cores(0);
  if (!before) return unexpected(std::move(before).error());
  if (c.cores_ & ~*before) {
    auto after = t.acquire_cores(c.cores_);
    if (!after) return unexpected(busy_error(t, c.cores_ & ~*before, std::move(after).error()));
    c.acquired_ = c.cores_ & ~*before;
  }

  if (!opt.allocate_memory) return c;
  // A source or index table inside the engine's own image (the image SUBMIT
  // loads at its program area, include/uapi/linux/neuron.h) is the
  // program's own bytes: nothing to allocate (docs/program-syntax.md#data).
  auto ranges = dge_ranges(p);
  std::erase_if(ranges, [&](const DgeRange& r) {
    const auto* e = p.find(r.core, r.engine);
    const std::uint64_t base = program_area_offset(*info, r.core, r.engine);
    return !r.dst && e && r.range.offset >= base &&
           r.range.end() <= base + image_slots(*e) * NEURON_EMU_INSN_BYTES;
  });
  std::vector<MemRange> wanted;
  for (const auto& r : ranges) wanted.push_back(r.range);
  const auto spans = merge_ranges(std::move(wanted), NEURON_MEM_ALIGN);
  for (const auto& r : ranges)
    if (r.range.end() > info->mem_alloc_limit)
      return unexpected(errc::invalid_argument,
                        fmt::format("{} reaches past the device memory programs may use, [0, 0x{:x}) "
                                    "(mem_alloc_limit; above it lie the driver's rings and program areas)",
                                    describe(r, p), info->mem_alloc_limit));
  for (const auto& span : spans) {
    if (auto s = t.mem_alloc_fixed(span.offset, span.size); !s) {
      Error e = std::move(s).error();
      if (e.code == std::errc::device_or_resource_busy)
        e.what = fmt::format("{}: device memory [0x{:x}, 0x{:x}) is allocated already, by another process or "
                             "by this open file ({}; if you allocated it yourself, set "
                             "ExecOptions::allocate_memory = false)",
                             range_in(span, ranges, p), span.offset, span.end(), e.what);
      return unexpected(std::move(e));  // c gives back what it took
    }
    c.memory_.push_back(span);
  }
  return c;
}

ProgramClaim& ProgramClaim::operator=(ProgramClaim&& o) noexcept {
  if (this != &o) {
    reset();
    target_ = std::exchange(o.target_, nullptr);
    engines_ = std::move(o.engines_);
    cores_ = std::exchange(o.cores_, 0);
    acquired_ = std::exchange(o.acquired_, 0);
    memory_ = std::move(o.memory_);
    o.engines_.clear();
    o.memory_.clear();
  }
  return *this;
}

void ProgramClaim::reset() noexcept {
  ExecTarget* t = std::exchange(target_, nullptr);
  if (!t) return;
  try {
    // No engine of the program may still run in memory about to be freed.
    if (!memory_.empty())
      for (const auto& [core, engine] : engines_) {
        auto st = t->engine_status(core, engine);
        if (st && (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING))
          (void)t->engine_reset(core, engine);
      }
    if (acquired_) (void)t->release_cores(acquired_);
    for (const auto& m : memory_) (void)t->mem_free(m.offset);
  } catch (...) {  // an allocation failure while giving back: the file's release frees the rest
  }
  engines_.clear();
  memory_.clear();
  cores_ = acquired_ = 0;
}

// ------------------------------------------------------------------ execute
namespace {

// Raw-byte checks the waiter's predicate makes on the reaper thread (the
// layouts of include/uapi/linux/neuron_record.h; decode() is kept for the sink).
bool is_inst_end_of(const Record& r, unsigned engine) noexcept {
  return r.notific_type() == NEURON_ENGINE_NOTIFIC_TYPE(engine, NEURON_ENGINE_RECORD_INST_END);
}
std::uint32_t pc20(const Record& r) noexcept { return r.u32(0) & 0xfffff; }

bool is_completion_mark_of(const Record& r, unsigned engine, std::uint8_t event) noexcept {
  // EVT_SEM {id @0, update_mode:4 | is_event:1 @1, block_id @2}
  return r.notific_type() == NEURON_ENGINE_NOTIFIC_TYPE(engine, NEURON_ENGINE_RECORD_EVT_SEM) &&
         r.bytes[0] == event && (r.bytes[1] & 0x0f) == NEURON_EVT_SEM_UPDATE_EVENT_SET && (r.bytes[1] & 0x10) != 0;
}

// A fatal TPB_ERROR: error_id @0 SEQUENCER_FATAL, metadata_hi.block_id @4 bits 3:0.
std::optional<unsigned> fatal_engine(const Record& r) noexcept {
  if (r.notific_type() != NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR) return std::nullopt;
  if (r.bytes[0] != NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL) return std::nullopt;
  return r.bytes[4] & 0x0fu;
}

bool uses_event(const Instruction& in, std::uint8_t ev) noexcept {
  if ((in.opcode == NEURON_OP_EVENT_SET || in.opcode == NEURON_OP_EVENT_CLEAR) && le32toh(in.operand.arg.idx) == ev) return true;
  if (in.events.wait_mode == NEURON_WAIT_EVENT_SET && in.events.wait_idx == ev) return true;
  const auto m = in.events.update_mode;
  return (m == NEURON_EVT_SEM_UPDATE_EVENT_SET || m == NEURON_EVT_SEM_UPDATE_EVENT_CLEAR) && in.events.update_idx == ev;
}

struct EngineKey {
  unsigned core, engine;
  friend auto operator<=>(const EngineKey&, const EngineKey&) = default;
};

/// The engines execute() started: when it returns (a TIMEOUT, a failure
/// after the submit), each still RUNNING or WAITING is reset, whoever owns
/// the core and whether or not the program uses device memory, before the
/// queues it writes to are destroyed (declared after the Reaper that owns
/// them, so destroyed first) and before ProgramClaim frees its memory and
/// releases its cores. An engine that stopped (IDLE, HALTED) is left as it is.
class StartedEngines {
 public:
  explicit StartedEngines(ExecTarget& t) : t_(t) {}
  StartedEngines(const StartedEngines&) = delete;
  StartedEngines& operator=(const StartedEngines&) = delete;
  ~StartedEngines() {
    try {
      for (const auto& k : started_) {
        auto st = t_.engine_status(k.core, k.engine);
        if (st && (st->state == NEURON_ENGINE_RUNNING || st->state == NEURON_ENGINE_WAITING))
          (void)t_.engine_reset(k.core, k.engine);
      }
    } catch (...) {  // an allocation failure: ProgramClaim and the file's release still stop what they own
    }
  }
  void add(EngineKey k) { started_.push_back(k); }

 private:
  ExecTarget& t_;
  std::vector<EngineKey> started_;
};

/// The completion notifications execute() armed on the program's cores
/// (ExecOptions::dma_queues, axi_evt_sem). disarm() at the end reads the
/// AXI_EVT_SEM records lost; the destructor disarms what an early return
/// left armed (a core the claim releases the driver disarms as well).
/// Declared after ProgramClaim, so destroyed before it releases the cores.
class ArmedNotifications {
 public:
  explicit ArmedNotifications(ExecTarget& t) : t_(t) {}
  ArmedNotifications(const ArmedNotifications&) = delete;
  ArmedNotifications& operator=(const ArmedNotifications&) = delete;
  ~ArmedNotifications() {
    try {
      (void)disarm(nullptr);
    } catch (...) {  // an allocation failure: the claim's release disarms a core it acquired
    }
  }

  /// Arm DMA queues `dma` (bit q) and, with `axi`, AXI_EVT_SEM records on
  /// `core`; what the device reports afterwards goes to `seen`.
  Status arm(unsigned core, std::uint16_t dma, bool axi, std::map<unsigned, Device::NotifyTriggers>& seen) {
    for (unsigned q = 0; q < NEURON_DMA_ENGINES; ++q) {
      if (!(dma & (1u << q))) continue;
      auto r = t_.notify_trigger(core, NEURON_TRIGGER_DMA_QUEUE, q, true);
      if (!r) return unexpected(std::move(r).error());
      armed_.push_back({core, NEURON_TRIGGER_DMA_QUEUE, q});
      seen[core] = *r;
    }
    if (axi) {
      auto r = t_.notify_trigger(core, NEURON_TRIGGER_AXI_EVT_SEM, 0, true);
      if (!r) return unexpected(std::move(r).error());
      armed_.push_back({core, NEURON_TRIGGER_AXI_EVT_SEM, 0});
      seen[core] = *r;
    }
    return {};
  }

  /// Disarm everything armed. Returns the AXI_EVT_SEM records lost on the
  /// cores where they were armed, summed; nullopt if none was, or if the
  /// driver does not count them (or a disarm failed: the device went).
  std::optional<std::uint64_t> disarm(std::map<unsigned, Device::NotifyTriggers>* seen) {
    std::optional<std::uint64_t> lost;
    bool counted = true;
    for (const auto& a : armed_) {
      auto r = t_.notify_trigger(a.core, a.source, a.index, false);
      if (a.source != NEURON_TRIGGER_AXI_EVT_SEM) continue;
      if (r && r->axi_dropped) lost = lost.value_or(0) + *r->axi_dropped;
      else counted = false;
      if (r && seen) (*seen)[a.core].axi_dropped = r->axi_dropped;
    }
    armed_.clear();
    return counted ? lost : std::nullopt;
  }

 private:
  struct Armed {
    unsigned core;
    neuron_trigger_source source;
    unsigned index;
  };
  ExecTarget& t_;
  std::vector<Armed> armed_;
};

}  // namespace

ExecResult execute(const Device& dev, const Program& program, const ExecOptions& opt) {
  DeviceTarget t(dev);
  return execute(t, program, opt);
}

ExecResult execute(ExecTarget& target, const Program& program, const ExecOptions& opt) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  ExecResult res;
  const auto fail = [&](Error e) {
    res.status = ExecStatus::Failure;
    res.error = std::move(e);
    res.elapsed = clock::now() - start;
    return std::move(res);
  };

  // What each engine runs and which record says it completed.
  struct Plan {
    EngineKey key;
    std::vector<Instruction> insns;
    std::set<std::uint32_t> stops;
  };
  std::vector<Plan> plans;
  for (const auto& e : program.engines) {
    Plan p{{e.core, e.engine}, e.insns, {}};
    for (auto pc : stopping_pcs(p.insns)) p.stops.insert(pc);
    if (!opt.trace) {
      for (std::uint32_t pc = 0; pc < p.insns.size(); ++pc) {
        if (uses_event(p.insns[pc], opt.completion_event))
          return fail(Error::make(
              errc::invalid_argument,
              fmt::format("{}:{}: event {} marks completion when tracing is off; the program must not use it "
                          "(run with tracing, or use another event)",
                          program.name, pc < e.lines.size() ? e.lines[pc] : 0, opt.completion_event)));
      }
      for (auto pc : p.stops) {
        auto& ev = p.insns[pc].events;
        if (ev.update_mode != NEURON_EVT_SEM_UPDATE_NONE)
          return fail(Error::make(
              errc::invalid_argument,
              fmt::format("{}:{}: without tracing the last instruction of {} on core {} (and every halt) marks "
                          "completion with an event update, but this one already has an @update; run with "
                          "tracing or free it",
                          program.name, pc < e.lines.size() ? e.lines[pc] : 0, engine_name(e.engine), e.core)));
        ev.update_mode = NEURON_EVT_SEM_UPDATE_EVENT_SET;
        ev.update_idx = opt.completion_event;
      }
    }
    plans.push_back(std::move(p));
  }
  const auto cores = program.cores();

  // Tenancy: the visible cores, then the cores and device memory the program needs.
  auto claim = ProgramClaim::make(target, program, {opt.cores, opt.allocate_memory});
  if (!claim) return fail(std::move(claim).error());
  res.cores_acquired = claim->acquired();
  res.memory = claim->memory();

  // Queues (threshold + eventfd each) and the device's event stream.
  std::vector<std::unique_ptr<ReapQueue>> queues;
  NotificationQueue::Options qo;
  qo.size = opt.queue_size;
  qo.flags = opt.queue_flags;
  qo.threshold = std::max<std::uint32_t>(opt.threshold, 1);
  qo.eventfd = true;
  // Routing (docs/decisions/0022-route-programmable.md): set before any queue
  // of the core exists, then read back; records are decoded with it.
  for (unsigned core : cores) {
    if (opt.route)
      if (auto r = target.set_route(core, *opt.route); !r) return fail(std::move(r).error());
    auto r = target.route(core);
    if (!r) return fail(std::move(r).error());
    res.routes[core] = *r;
  }
  for (unsigned core : cores) {
    unsigned n_queues = opt.queues;
    for (unsigned c = NEURON_CLASS_TRACE; c <= NEURON_CLASS_DMA; ++c)
      n_queues = std::max(n_queues, NEURON_ROUTE_QUEUE(res.routes[core], c) + 1);
    n_queues = std::min<unsigned>(n_queues, NEURON_NUM_SW_QUEUES);
    for (unsigned q = 0; q < n_queues; ++q) {
      auto rq = target.open_queue(core, q, qo);
      if (!rq) return fail(std::move(rq).error());
      queues.push_back(std::move(rq).value());
    }
  }
  std::vector<ReapQueue*> queue_ptrs;
  for (auto& q : queues) queue_ptrs.push_back(q.get());
  auto events = target.open_events();
  if (!events) return fail(std::move(events).error());

  const std::uint32_t features = opt.features ? *opt.features : program.features.value_or(0);
  if (opt.features || program.features) {
    for (unsigned core : cores)
      if (auto s = target.set_feature_flags(core, features); !s) return fail(std::move(s).error());
    res.features = features;
  }
  // Completion notifications (docs/device-model.md#dma-engines, #axi-evt-sem)
  // and the host writes, on the program's own cores only: a host write to
  // a free core would take it.
  for (const auto& w : opt.sem_writes)
    if (!cores.count(w.core))
      return fail(Error::make(errc::invalid_argument,
                              fmt::format("host EVT_SEM write to core {} index {}: core {} is not one of the program's "
                                          "cores ({})",
                                          w.core, w.index, w.core, fmt::join(cores, ","))));
  ArmedNotifications notifications(target);
  if (opt.dma_queues || opt.axi_evt_sem)
    for (unsigned core : cores)
      if (auto s = notifications.arm(core, opt.dma_queues, opt.axi_evt_sem, res.triggers); !s)
        return fail(std::move(s).error());

  // Written on the reaper thread, read here after Reaper::stop() (a join).
  std::atomic<std::uint64_t> n_records{0}, n_events{0};
  std::atomic<unsigned> n_done{0};
  Reaper::Options ro;
  // ExecOptions::threshold other than 1 is the caller's setting: keep it
  // (userspace/README.md#coalescing); else the Reaper adapts it to the rate.
  if (opt.threshold != 1) ro.moderation = Reaper::Moderation::Fixed;
  ro.on_records = [&](unsigned core, unsigned queue, std::span<const Record> recs) {
    const auto rt = res.routes.find(core);
    const QueueClass cls = queue_class(queue, rt != res.routes.end() ? rt->second : NEURON_ROUTE_DEFAULT);
    for (const Record& r : recs) {
      CollectedRecord c{core, queue, r, decode(r, cls)};
      if (r.sw_overflow() || r.hw_overflow()) res.overflow_seen = true;
      if (!res.first_error && is_error(c.decoded)) res.first_error = c;
      if (is_throttle(c.decoded)) {
        if (!res.first_throttle) res.first_throttle = c;
        ++res.throttle_records;
      }
      if (opt.on_record) opt.on_record(c);
      if (opt.keep_records) res.records.push_back(std::move(c));
    }
    n_records.fetch_add(recs.size(), std::memory_order_relaxed);
  };
  ro.on_event = [&](const Event& e) {
    res.events.push_back(e);
    n_events.fetch_add(1, std::memory_order_relaxed);
  };
  auto reaper = Reaper::start(std::move(queues), std::move(events).value(), std::move(ro));
  if (!reaper) return fail(std::move(reaper).error());

  // One waiter: every engine completed, or the overflow cause was seen.
  std::set<EngineKey> remaining;
  for (const auto& p : plans) remaining.insert(p.key);
  const unsigned n_engines = static_cast<unsigned>(remaining.size());
  bool overflow = false;
  auto waiter = (*reaper)->expect([&](const Arrival& a) {
    if (a.record) {
      const Record& r = *a.record;
      if (r.sw_overflow() || r.hw_overflow()) return overflow = true;
      for (const auto& p : plans) {
        if (p.key.core != a.core || !remaining.count(p.key)) continue;
        const bool done = opt.trace ? is_inst_end_of(r, p.key.engine) && p.stops.count(pc20(r))
                                    : is_completion_mark_of(r, p.key.engine, opt.completion_event);
        const auto fatal = opt.halt_ends_wait ? fatal_engine(r) : std::nullopt;
        if (done || (fatal && *fatal == p.key.engine)) {
          remaining.erase(p.key);
          n_done.fetch_add(1, std::memory_order_relaxed);
        }
      }
      return remaining.empty();
    }
    const Event& e = *a.event;
    if (e.edge != NEURON_EDGE_NOTIFIC || !(e.cause & kLossCauses) || !cores.count(e.core)) return false;
    // The cause is per core; our queues' overflow and drop counts say whether it was ours.
    bool known = false, ours = false;
    for (ReapQueue* q : queue_ptrs) {
      if (q->core() != e.core) continue;
      if (auto n = q->overflow_count()) {
        known = true;
        ours = ours || *n > 0;
      }
      if (auto n = q->drop_count()) {
        known = true;
        ours = ours || *n > 0;
      }
    }
    if (known && !ours) return false;
    res.overflow_event = e;
    return overflow = true;
  });
  if (!waiter) {
    (*reaper)->stop();
    return fail(std::move(waiter).error());
  }

  // Each engine's image: its instructions, data references resolved to
  // where SUBMIT loads it, then its data (docs/program-syntax.md#data).
  std::vector<std::vector<Instruction>> images;
  for (const auto& p : plans) {
    const auto* e = program.find(p.key.core, p.key.engine);
    if (e->data.empty()) {
      images.push_back(p.insns);
      continue;
    }
    auto info = target.info();
    if (!info) {
      (*reaper)->stop();
      return fail(std::move(info).error());
    }
    EngineProgram ep = *e;
    ep.insns = p.insns;
    auto img = program_image(ep, program_area_offset(*info, p.key.core, p.key.engine));
    if (!img) {
      (*reaper)->stop();
      Error err = std::move(img).error();
      err.what = program.name + ":" + err.what.substr(5);  // "line N: ..." -> "file:N: ..."
      return fail(std::move(err));
    }
    images.push_back(std::move(img).value());
  }

  StartedEngines started(target);  // destroyed before the reaper and its queues
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    // a refused submit started nothing of ours (the engine may be running
    // the caller's own program: EBUSY), so only accepted ones are added
    if (auto s = target.submit(p.key.core, p.key.engine, images[i], opt.trace ? NEURON_SUBMIT_F_TRACE : 0u); !s) {
      (*reaper)->stop();
      return fail(std::move(s).error());
    }
    started.add(p.key);
  }
  for (const auto& w : opt.sem_writes) {
    if (auto v = target.evt_sem(w.core, w.index, w.op, w.value); !v) {
      (*reaper)->stop();
      return fail(std::move(v).error());
    }
  }

  // Sleep on the waiter's eventfd (comp_efd) until completion or the deadline.
  // start + timeout saturates: a timeout past the clock's range is no limit
  const auto deadline =
      opt.timeout > std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - start)
          ? clock::time_point::max()
          : start + opt.timeout;
  WaitStatus ws = WaitStatus::TimedOut;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) break;
    const auto slice = opt.progress ? std::min(left, opt.progress_interval) : left;
    ws = waiter->wait(slice);
    if (ws != WaitStatus::TimedOut) break;
    if (opt.progress)
      opt.progress(ExecProgress{clock::now() - start, n_records.load(std::memory_order_relaxed),
                                n_events.load(std::memory_order_relaxed), n_done.load(std::memory_order_relaxed),
                                n_engines});
  }
  // before the final drain: no record is made after it, and AXI_DROPPED is
  // read (nullopt unless AXI_EVT_SEM records were armed)
  res.axi_dropped = notifications.disarm(&res.triggers);
  (*reaper)->stop();  // final drain, join: the results above are now ours to read
  res.completed = ws == WaitStatus::Completed && remaining.empty();
  if (overflow) res.overflow_seen = true;
  res.reaper = (*reaper)->stats();
  res.lost = res.reaper.lost;
  if (res.lost) res.overflow_seen = true;
  // Records the device lost on our queues that no record flag or edge
  // showed (e.g. the edge went to a full event queue): NQ_INFO's counts.
  for (ReapQueue* q : queue_ptrs) {
    res.device_lost += q->overflow_count().value_or(0) + q->drop_count().value_or(0);
  }
  if (res.device_lost) res.overflow_seen = true;
  if (res.axi_dropped.value_or(0)) res.overflow_seen = true;
  if (auto f = (*reaper)->failure()) return fail(*f);
  if (ws == WaitStatus::DeviceGone)  // userspace/README.md#device-loss
    return fail(Error::make(errc::device_gone, "execute: the device was removed or reset while the program ran"));

  res.engines.clear();
  bool halted = false;
  for (const auto& p : plans) {
    auto st = target.engine_status(p.key.core, p.key.engine);
    if (!st) return fail(std::move(st).error());
    if (st->state == NEURON_ENGINE_HALTED) halted = true;
    res.engines.push_back(*st);
  }

  if (res.overflow_seen) res.status = ExecStatus::SwNqOverflow;
  else if (!res.completed) res.status = ExecStatus::Timeout;
  else if (res.first_error || halted) res.status = ExecStatus::CompletedWithError;
  else if (res.throttle_records) res.status = ExecStatus::CompletedThrottled;
  else res.status = ExecStatus::Ok;
  res.elapsed = clock::now() - start;
  return res;
}

}  // namespace neuron
