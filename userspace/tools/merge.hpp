// SPDX-License-Identifier: MIT
//
// The monitor's merged stream: ring records and interrupt edges put on one
// CLOCK_MONOTONIC axis, held briefly and handed out in time order (Merger),
// and each line of it printed as text or JSON (print_item).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <vector>

#include "libneuron/neuron.hpp"

namespace neuron::cli {

/// One line of the merged stream, on the CLOCK_MONOTONIC axis.
struct Item {
  std::int64_t t_ns = 0;       // CLOCK_MONOTONIC (records: mapped from device time)
  std::uint64_t seq = 0;       // arrival order, the tie-break
  bool is_record = false;
  unsigned core = 0, queue = 0;
  Record rec;
  QueueClass cls = QueueClass::Any;  // the queue's class under its core's route
  NetlinkEvent ev;
};

/*
 * Putting two clocks on one axis. Records carry device time: picoseconds of
 * the emulated device's clock (QEMU_CLOCK_VIRTUAL, docs/hardware.md#timestamp:
 * 1 ps units). Edge events carry the guest kernel's CLOCK_MONOTONIC in ns,
 * taken when the interrupt handler ran. There is no register that samples both
 * at once, so the monitor estimates the offset from the records themselves:
 * when the reaper drains a record it reads CLOCK_MONOTONIC; that arrival time
 * is never earlier than the record's true time, so
 *     offset = min over records (arrival_ns - device_ps / 1000)
 * is an upper bound on the true offset that tightens to within one
 * wake-up latency (the fastest record's interrupt + reaper wake-up) as
 * records arrive. Record times are mapped as device_ns + offset. The error
 * is therefore one-sided: a record can appear up to that latency LATE
 * relative to the edges around it, never early; and if the two clocks drift
 * (TCG), the estimate follows the fastest recent record only as far as the
 * min allows. To keep the output in order while the offset settles, lines
 * are held for a short window (150 ms) and sorted before printing. Each
 * line also shows the raw device time, and the JSON carries both clocks and
 * the offset used.
 */
class Merger {
 public:
  static constexpr std::int64_t kWindowNs = 150'000'000;

  /// Records drained from one queue at `arrival_ns` (CLOCK_MONOTONIC); each
  /// tightens the offset estimate.
  /// `cls`: the queue's class under its core's route (queue_class(queue, route)).
  void add_records(std::int64_t arrival_ns, unsigned core, unsigned queue, QueueClass cls,
                   std::span<const Record> recs);
  /// An interrupt edge; its timestamp_ns is already CLOCK_MONOTONIC.
  void add_event(const NetlinkEvent& e);
  /// Items older than the window before `now_ns` (all of them with `all`),
  /// in time order (arrival order among equal times); they leave the merger.
  std::vector<Item> take(std::int64_t now_ns, bool all);
  /// The device->monotonic offset in ns; nullopt until a record arrived.
  [[nodiscard]] std::optional<std::int64_t> offset() const { return offset_; }

 private:
  std::vector<Item> pending_;
  std::optional<std::int64_t> offset_;
  std::uint64_t seq_ = 0;
};

/// Print one merged item on `out`: a text line, or with `json` one JSON
/// object per line. A record's TPB_ERROR is explained against `prog` when it
/// has engines (monitor --run); `offset` is Merger::offset(), shown in JSON.
/// An ENGINE_STOPPED edge names its stop cause and engines
/// (docs/cli-json.md#edge).
void print_item(const Item& it, const Program& prog, std::optional<std::int64_t> offset, bool json,
                std::FILE* out = stdout);

}  // namespace neuron::cli
