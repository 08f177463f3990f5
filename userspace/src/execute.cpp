// SPDX-License-Identifier: MIT
#include "libneuron/execute.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace neuron {

const char* status_name(ExecStatus s) noexcept {
  switch (s) {
    case ExecStatus::Ok: return "OK";
    case ExecStatus::Failure: return "FAILURE";
    case ExecStatus::Timeout: return "TIMEOUT";
    case ExecStatus::CompletedWithError: return "COMPLETED_WITH_ERR";
    case ExecStatus::SwNqOverflow: return "SW_NQ_OVERFLOW";
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

// ------------------------------------------------------------------ DeviceTarget
Status DeviceTarget::open_queue(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t flags) {
  NotificationQueue::Options o;
  o.size = size;
  o.flags = flags;
  auto q = NotificationQueue::create(dev_, core, queue, o);
  if (!q) return unexpected(std::move(q).error());
  queues_.push_back(std::move(q).value());
  return {};
}

DrainResult DeviceTarget::drain(unsigned core, unsigned queue, std::span<Record> out) {
  for (auto& q : queues_)
    if (q.core() == core && q.queue() == queue) return q.drain(out);
  return {};
}

Status DeviceTarget::submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) {
  return dev_.submit(core, engine, insns, flags);
}

Result<EngineStatus> DeviceTarget::engine_status(unsigned core, unsigned engine) {
  return dev_.engine_status(core, engine);
}

// ------------------------------------------------------------------ execute
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
    target.close_queues();
    res.elapsed = clock::now() - start;
    return std::move(res);
  };

  const auto cores = program.cores();
  for (unsigned core : cores)
    for (unsigned q = 0; q < opt.queues; ++q)
      if (auto s = target.open_queue(core, q, opt.queue_size, opt.queue_flags); !s) return fail(std::move(s).error());

  for (const auto& e : program.engines)
    if (auto s = target.submit(e.core, e.engine, e.insns, opt.trace ? NEURON_SUBMIT_F_TRACE : 0u); !s)
      return fail(std::move(s).error());

  std::vector<Record> buf(std::max<std::uint32_t>(opt.queue_size / sizeof(Record), 16));
  const auto drain_all = [&]() -> std::size_t {
    std::size_t total = 0;
    for (unsigned core : cores)
      for (unsigned q = 0; q < opt.queues; ++q) {
        for (;;) {
          const DrainResult r = target.drain(core, q, buf);
          if (r.sw_overflow || r.lost) res.overflow_seen = true;
          res.lost += r.lost;
          const QueueClass cls = queue_class(q);
          for (std::size_t i = 0; i < r.count; ++i) {
            CollectedRecord c{core, q, buf[i], decode(buf[i], cls)};
            if (c.raw.sw_overflow()) res.overflow_seen = true;
            if (!res.first_error && is_error(c.decoded)) res.first_error = c;
            res.records.push_back(std::move(c));
          }
          total += r.count;
          if (r.count < buf.size()) break;
        }
      }
    return total;
  };

  const auto deadline = start + opt.timeout;
  bool finished = false;
  for (;;) {
    const std::size_t got = drain_all();
    // engine status after the drain: records written before an engine went
    // idle are already in the rings (written before TAIL moves)
    bool all_done = true;
    res.engines.clear();
    for (const auto& e : program.engines) {
      auto st = target.engine_status(e.core, e.engine);
      if (!st) return fail(std::move(st).error());
      res.engines.push_back(*st);
      const bool done = st->state == NEURON_ENGINE_IDLE || (opt.halt_ends_wait && st->state == NEURON_ENGINE_HALTED);
      if (!done) all_done = false;
    }
    if (all_done) {
      drain_all();  // whatever arrived between the drain and the status reads
      finished = true;
      break;
    }
    if (clock::now() >= deadline) {
      drain_all();
      break;
    }
    if (got == 0) std::this_thread::sleep_for(opt.poll_interval);
  }

  bool halted = false;
  for (const auto& st : res.engines)
    if (st.state == NEURON_ENGINE_HALTED) halted = true;

  if (res.overflow_seen) res.status = ExecStatus::SwNqOverflow;
  else if (!finished) res.status = ExecStatus::Timeout;
  else if (res.first_error || halted) res.status = ExecStatus::CompletedWithError;
  else res.status = ExecStatus::Ok;

  target.close_queues();
  res.elapsed = clock::now() - start;
  return res;
}

}  // namespace neuron
