// SPDX-License-Identifier: MIT
//
// execute(): a program run to its completion records, as a sequence of
// named steps (execute.hpp says what each status means). The program's own
// checks come first and in one place (check_program()); the device is
// touched only after them. Where execute() runs: DeviceTarget
// (exec_target.cpp); the cores and memory it claims: ProgramClaim
// (program_claim.cpp); what it undoes on return: exec_guards.hpp.
#include "libneuron/execute.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <endian.h>

#include <fmt/format.h>

#include "exec_guards.hpp"
#include "exec_timeout.hpp"

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

namespace {

using detail::ArmedNotifications;
using detail::EngineKey;
using detail::StartedEngines;

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

using clock = std::chrono::steady_clock;

// What each engine runs and which record says it completed.
struct Plan {
  EngineKey key;
  std::vector<Instruction> insns;
  std::set<std::uint32_t> stops;
};

// Written on the reaper thread, read on execute()'s after Reaper::stop() (a
// join) or, relaxed, for progress lines.
struct Counters {
  std::atomic<std::uint64_t> records{0}, events{0};
  std::atomic<unsigned> done{0};
};

// Step 1, the program's checks, all of them before the device is touched:
// without tracing, the completion event is free and every stopping
// instruction can carry the completion mark (which it is given here); every
// host write names one of the program's cores. Returns each engine's plan.
Result<std::vector<Plan>> check_program(const Program& program, const ExecOptions& opt) {
  std::vector<Plan> plans;
  for (const auto& e : program.engines) {
    Plan p{{e.core, e.engine}, e.insns, {}};
    for (auto pc : stopping_pcs(p.insns)) p.stops.insert(pc);
    if (!opt.trace) {
      for (std::uint32_t pc = 0; pc < p.insns.size(); ++pc) {
        if (uses_event(p.insns[pc], opt.completion_event))
          return unexpected(
              errc::invalid_argument,
              fmt::format("{}:{}: event {} marks completion when tracing is off; the program must not use it "
                          "(run with tracing, or use another event)",
                          program.name, pc < e.lines.size() ? e.lines[pc] : 0, opt.completion_event));
      }
      for (auto pc : p.stops) {
        auto& ev = p.insns[pc].events;
        if (ev.update_mode != NEURON_EVT_SEM_UPDATE_NONE)
          return unexpected(
              errc::invalid_argument,
              fmt::format("{}:{}: without tracing the last instruction of {} on core {} (and every halt) marks "
                          "completion with an event update, but this one already has an @update; run with "
                          "tracing or free it",
                          program.name, pc < e.lines.size() ? e.lines[pc] : 0, engine_name(e.engine), e.core));
        ev.update_mode = NEURON_EVT_SEM_UPDATE_EVENT_SET;
        ev.update_idx = opt.completion_event;
      }
    }
    plans.push_back(std::move(p));
  }
  // Completion notifications and the host writes (docs/device-model.md#dma-engines,
  // #axi-evt-sem), on the program's own cores only: a host write to a free
  // core would take it.
  const auto cores = program.cores();
  for (const auto& w : opt.sem_writes)
    if (!cores.count(w.core))
      return unexpected(errc::invalid_argument,
                        fmt::format("host EVT_SEM write to core {} index {}: core {} is not one of the program's "
                                    "cores ({})",
                                    w.core, w.index, w.core, fmt::join(cores, ",")));
  return plans;
}

// Routing (docs/decisions/0022-route-programmable.md): set before any queue of
// the core exists, then read back into `routes`; records are decoded with it.
Status read_routes(ExecTarget& target, const std::set<unsigned>& cores, const ExecOptions& opt,
                   std::map<unsigned, std::uint32_t>& routes) {
  for (unsigned core : cores) {
    if (opt.route)
      if (auto r = target.set_route(core, *opt.route); !r) return unexpected(std::move(r).error());
    auto r = target.route(core);
    if (!r) return unexpected(std::move(r).error());
    routes[core] = *r;
  }
  return {};
}

// Queues 0..opt.queues-1 and every queue the route sends a class to, on each
// core; threshold + eventfd each.
Result<std::vector<std::unique_ptr<ReapQueue>>> open_queues(ExecTarget& target, const std::set<unsigned>& cores,
                                                            const ExecOptions& opt,
                                                            const std::map<unsigned, std::uint32_t>& routes) {
  std::vector<std::unique_ptr<ReapQueue>> queues;
  NotificationQueue::Options qo;
  qo.size = opt.queue_size;
  qo.flags = opt.queue_flags;
  qo.threshold = std::max<std::uint32_t>(opt.threshold, 1);
  qo.eventfd = true;
  for (unsigned core : cores) {
    unsigned n_queues = opt.queues;
    for (unsigned c = NEURON_CLASS_TRACE; c <= NEURON_CLASS_DMA; ++c)
      n_queues = std::max(n_queues, NEURON_ROUTE_QUEUE(routes.at(core), c) + 1);
    n_queues = std::min<unsigned>(n_queues, NEURON_NUM_SW_QUEUES);
    for (unsigned q = 0; q < n_queues; ++q) {
      auto rq = target.open_queue(core, q, qo);
      if (!rq) return unexpected(std::move(rq).error());
      queues.push_back(std::move(rq).value());
    }
  }
  return queues;
}

// The reap thread's side: every record decoded with its core's route and
// counted into `res`, every edge kept.
Reaper::Options collect_into(ExecResult& res, const ExecOptions& opt, Counters& n) {
  Reaper::Options ro;
  // ExecOptions::threshold other than 1 is the caller's setting: keep it
  // (userspace/README.md#coalescing); else the Reaper adapts it to the rate.
  if (opt.threshold != 1) ro.moderation = Reaper::Moderation::Fixed;
  ro.on_records = [&res, &opt, &n](unsigned core, unsigned queue, std::span<const Record> recs) {
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
    n.records.fetch_add(recs.size(), std::memory_order_relaxed);
  };
  ro.on_event = [&res, &n](const Event& e) {
    res.events.push_back(e);
    n.events.fetch_add(1, std::memory_order_relaxed);
  };
  return ro;
}

// The waiter's rule, on the reap thread: true once every engine completed
// (its completion record, or with halt_ends_wait its fatal error), or once
// records were lost on the program's queues (a record's overflow flag, or a
// loss edge of one of its cores that their NQ_INFO counts confirm).
struct CompletionRule {
  const std::vector<Plan>& plans;
  const ExecOptions& opt;
  const std::set<unsigned>& cores;
  const std::vector<ReapQueue*>& queues;
  std::set<EngineKey>& remaining;
  bool& overflow;
  ExecResult& res;
  Counters& n;

  bool operator()(const Arrival& a) {
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
          n.done.fetch_add(1, std::memory_order_relaxed);
        }
      }
      return remaining.empty();
    }
    const Event& e = *a.event;
    if (e.edge != NEURON_EDGE_NOTIFIC || !(e.cause & kLossCauses) || !cores.count(e.core)) return false;
    // The cause is per core; our queues' overflow and drop counts say whether it was ours.
    bool known = false, ours = false;
    for (ReapQueue* q : queues) {
      if (q->core() != e.core) continue;
      if (auto c = q->overflow_count()) {
        known = true;
        ours = ours || *c > 0;
      }
      if (auto c = q->drop_count()) {
        known = true;
        ours = ours || *c > 0;
      }
    }
    if (known && !ours) return false;
    res.overflow_event = e;
    return overflow = true;
  }
};

// Each engine's image: its instructions, data references resolved to where
// SUBMIT loads it, then its data (docs/program-syntax.md#data).
Result<std::vector<std::vector<Instruction>>> engine_images(ExecTarget& target, const Program& program,
                                                            const std::vector<Plan>& plans) {
  std::vector<std::vector<Instruction>> images;
  for (const auto& p : plans) {
    const auto* e = program.find(p.key.core, p.key.engine);
    if (e->data.empty()) {
      images.push_back(p.insns);
      continue;
    }
    auto info = target.info();
    if (!info) return unexpected(std::move(info).error());
    EngineProgram ep = *e;
    ep.insns = p.insns;
    auto img = program_image(ep, program_area_offset(*info, p.key.core, p.key.engine));
    if (!img) {
      Error err = std::move(img).error();
      err.what = program.name + ":" + err.what.substr(5);  // "line N: ..." -> "file:N: ..."
      return unexpected(std::move(err));
    }
    images.push_back(std::move(img).value());
  }
  return images;
}

// Submit every engine's image, then make the host writes. A refused submit
// started nothing of ours (the engine may be running the caller's own
// program: EBUSY), so only accepted ones go to `started`.
Status start_engines(ExecTarget& target, const std::vector<Plan>& plans,
                     const std::vector<std::vector<Instruction>>& images, const ExecOptions& opt,
                     StartedEngines& started) {
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    if (auto s = target.submit(p.key.core, p.key.engine, images[i], opt.trace ? NEURON_SUBMIT_F_TRACE : 0u); !s)
      return s;
    started.add(p.key);
  }
  for (const auto& w : opt.sem_writes)
    if (auto v = target.evt_sem(w.core, w.index, w.op, w.value); !v) return unexpected(std::move(v).error());
  return {};
}

// Sleep on the waiter's eventfd (comp_efd) until completion or the deadline,
// `opt.progress` called every progress_interval meanwhile.
WaitStatus wait_for_completion(Waiter& waiter, const ExecOptions& opt, std::chrono::milliseconds budget,
                               clock::time_point start, const Counters& n, unsigned n_engines) {
  // start + budget saturates: a budget past the clock's range is no limit
  const auto deadline =
      budget > std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - start)
          ? clock::time_point::max()
          : start + budget;
  WaitStatus ws = WaitStatus::TimedOut;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) break;
    const auto slice = opt.progress ? std::min(left, opt.progress_interval) : left;
    ws = waiter.wait(slice);
    if (ws != WaitStatus::TimedOut) break;
    if (opt.progress)
      opt.progress(ExecProgress{clock::now() - start, n.records.load(std::memory_order_relaxed),
                                n.events.load(std::memory_order_relaxed), n.done.load(std::memory_order_relaxed),
                                n_engines});
  }
  return ws;
}

// Records lost, however it was seen: by the lossy drain, or (no record flag
// or edge showed it, e.g. the edge went to a full event queue) by NQ_INFO's
// counts of our queues, or by AXI_DROPPED.
void count_losses(ExecResult& res, const std::vector<ReapQueue*>& queues) {
  res.lost = res.reaper.lost;
  if (res.lost) res.overflow_seen = true;
  for (ReapQueue* q : queues) {
    res.device_lost += q->overflow_count().value_or(0) + q->drop_count().value_or(0);
  }
  if (res.device_lost) res.overflow_seen = true;
  if (res.axi_dropped.value_or(0)) res.overflow_seen = true;
}

// A TIMEOUT's error: the runtime's line (docs/hardware.md#exec-timeout)
// naming the engines whose completion record never came.
Error timeout_error(const Program& program, std::chrono::milliseconds budget, const std::set<EngineKey>& remaining) {
  std::string engines;
  for (const auto& k : remaining)
    engines += fmt::format("{}core {} {}", engines.empty() ? "" : ", ", k.core, engine_name(k.engine));
  return Error::make(std::make_error_code(std::errc::timed_out),
                     detail::exec_timeout_line(program.name, budget, engines.empty() ? "no engine" : engines));
}

// The status rule of execute.hpp: the first that applies of SW_NQ_OVERFLOW,
// TIMEOUT, COMPLETED_WITH_ERR, COMPLETED_THROTTLED, OK.
ExecStatus final_status(const ExecResult& res, bool halted) {
  if (res.overflow_seen) return ExecStatus::SwNqOverflow;
  if (!res.completed) return ExecStatus::Timeout;
  if (res.first_error || halted) return ExecStatus::CompletedWithError;
  if (res.throttle_records) return ExecStatus::CompletedThrottled;
  return ExecStatus::Ok;
}

}  // namespace

ExecResult execute(const Device& dev, const Program& program, const ExecOptions& opt) {
  DeviceTarget t(dev);
  return execute(t, program, opt);
}

ExecResult execute(ExecTarget& target, const Program& program, const ExecOptions& opt) {
  const auto start = clock::now();
  ExecResult res;
  const auto fail = [&](Error e) {
    res.status = ExecStatus::Failure;
    res.error = std::move(e);
    res.elapsed = clock::now() - start;
    return std::move(res);
  };

  // The budget first: a bad NEURON_RT_EXEC_TIMEOUT is the caller's input
  // error, reported before anything else is looked at.
  const auto budget = detail::resolve_exec_timeout(opt.timeout);
  if (!budget) return fail(std::move(budget).error());
  auto plans = check_program(program, opt);
  if (!plans) return fail(std::move(plans).error());
  const auto cores = program.cores();

  // Tenancy: the visible cores, then the cores and device memory the program needs.
  auto claim = ProgramClaim::make(target, program, {opt.cores, opt.allocate_memory});
  if (!claim) return fail(std::move(claim).error());
  res.cores_acquired = claim->acquired();
  res.memory = claim->memory();

  if (auto s = read_routes(target, cores, opt, res.routes); !s) return fail(std::move(s).error());
  auto queues = open_queues(target, cores, opt, res.routes);
  if (!queues) return fail(std::move(queues).error());
  std::vector<ReapQueue*> queue_ptrs;
  for (auto& q : *queues) queue_ptrs.push_back(q.get());
  auto events = target.open_events();
  if (!events) return fail(std::move(events).error());

  const std::uint32_t features = opt.features ? *opt.features : program.features.value_or(0);
  if (opt.features || program.features) {
    for (unsigned core : cores)
      if (auto s = target.set_feature_flags(core, features); !s) return fail(std::move(s).error());
    res.features = features;
  }
  ArmedNotifications notifications(target);
  if (opt.dma_queues || opt.axi_evt_sem)
    for (unsigned core : cores)
      if (auto s = notifications.arm(core, opt.dma_queues, opt.axi_evt_sem, res.triggers); !s)
        return fail(std::move(s).error());

  Counters n;
  auto reaper = Reaper::start(std::move(queues).value(), std::move(events).value(), collect_into(res, opt, n));
  if (!reaper) return fail(std::move(reaper).error());
  // From here on every early return stops the reaper first.
  const auto stop_and_fail = [&](Error e) {
    (*reaper)->stop();
    return fail(std::move(e));
  };

  // One waiter: every engine completed, or the overflow cause was seen.
  std::set<EngineKey> remaining;
  for (const auto& p : *plans) remaining.insert(p.key);
  const unsigned n_engines = static_cast<unsigned>(remaining.size());
  bool overflow = false;
  auto waiter = (*reaper)->expect(CompletionRule{*plans, opt, cores, queue_ptrs, remaining, overflow, res, n});
  if (!waiter) return stop_and_fail(std::move(waiter).error());

  auto images = engine_images(target, program, *plans);
  if (!images) return stop_and_fail(std::move(images).error());
  StartedEngines started(target);  // destroyed before the reaper and its queues
  if (auto s = start_engines(target, *plans, *images, opt, started); !s) return stop_and_fail(std::move(s).error());

  const WaitStatus ws = wait_for_completion(*waiter, opt, *budget, start, n, n_engines);
  // before the final drain: no record is made after it, and AXI_DROPPED is
  // read (nullopt unless AXI_EVT_SEM records were armed)
  res.axi_dropped = notifications.disarm(&res.triggers);
  (*reaper)->stop();  // final drain, join: the results above are now ours to read
  res.completed = ws == WaitStatus::Completed && remaining.empty();
  if (overflow) res.overflow_seen = true;
  res.reaper = (*reaper)->stats();
  count_losses(res, queue_ptrs);
  if (auto f = (*reaper)->failure()) return fail(*f);
  if (ws == WaitStatus::DeviceGone)  // userspace/README.md#device-loss
    return fail(Error::make(errc::device_gone, "execute: the device was removed or reset while the program ran"));

  res.engines.clear();
  bool halted = false;
  for (const auto& p : *plans) {
    auto st = target.engine_status(p.key.core, p.key.engine);
    if (!st) return fail(std::move(st).error());
    if (st->state == NEURON_ENGINE_HALTED) halted = true;
    res.engines.push_back(*st);
  }
  res.status = final_status(res, halted);
  if (res.status == ExecStatus::Timeout) res.error = timeout_error(program, *budget, remaining);
  res.elapsed = clock::now() - start;
  return res;
}

}  // namespace neuron
