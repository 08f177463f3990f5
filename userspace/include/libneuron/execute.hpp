// SPDX-License-Identifier: MIT
//
// execute(program, timeout): make the notification queues, submit every
// engine's program, wait, drain, and return a status (seed 001 §6, §6.1):
//   OK                    every engine finished (IDLE) and no error record came
//   TIMEOUT (5)           not every engine finished in time — e.g. an engine
//                         fatally halted: it never completes (seed 001 §6.1)
//   SW_NQ_OVERFLOW (1204) a queue overflowed (the overflow cause was seen:
//                         software_queue_overflow in a record, or records lost)
//   COMPLETED_WITH_ERR    all finished but an error record arrived (first_error)
//   FAILURE               an ioctl/mmap failed (error)
// This version waits by polling engine status and draining; a Reaper thread
// sleeping on the queues' eventfds replaces the polling once the driver can
// bind eventfds (DESIGN.md §5, seed 001 §5.1).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "libneuron/assembler.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/device.hpp"
#include "libneuron/result.hpp"
#include "libneuron/ring.hpp"

namespace neuron {

/// NRT status values (seed 001 §6: NRT_TIMEOUT 5, NRT_EXEC_SW_NQ_OVERFLOW
/// 1204; the others as in the public Neuron runtime's nrt_status.h).
enum class ExecStatus : int {
  Ok = 0,
  Failure = 1,
  Timeout = 5,
  CompletedWithError = 1004,
  SwNqOverflow = 1204,
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

struct ExecOptions {
  std::chrono::milliseconds timeout{5000};
  bool trace = true;                 ///< NEURON_SUBMIT_F_TRACE
  std::uint32_t queue_size = 4096;   ///< bytes per queue
  unsigned queues = 6;               ///< queues 0..queues-1 per core used (default routing uses 0..5)
  std::uint32_t queue_flags = 0;     ///< NEURON_NQ_F_* (default: backpressure, lossless)
  bool halt_ends_wait = false;       ///< stop waiting once every engine is IDLE or HALTED
  std::chrono::microseconds poll_interval{200};
};

struct ExecResult {
  ExecStatus status = ExecStatus::Ok;
  std::optional<CollectedRecord> first_error;  ///< first TPB_ERROR / ERROR record
  std::vector<CollectedRecord> records;         ///< in drain order
  std::vector<EngineStatus> engines;            ///< final status of each engine used
  std::optional<Error> error;                   ///< why, for FAILURE
  std::uint64_t lost = 0;                       ///< records lost to overflow
  bool overflow_seen = false;
  std::chrono::nanoseconds elapsed{0};
};

/// What execute() needs from a device; DeviceTarget is the real one, tests
/// use a fake over memory rings.
class ExecTarget {
 public:
  virtual ~ExecTarget() = default;
  virtual Status open_queue(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t flags) = 0;
  virtual DrainResult drain(unsigned core, unsigned queue, std::span<Record> out) = 0;
  virtual Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) = 0;
  virtual Result<EngineStatus> engine_status(unsigned core, unsigned engine) = 0;
  /// Unmap and destroy every queue opened.
  virtual void close_queues() = 0;
};

/// ExecTarget over a Device: NotificationQueues with RAII.
class DeviceTarget final : public ExecTarget {
 public:
  explicit DeviceTarget(const Device& dev) : dev_(dev) {}
  Status open_queue(unsigned core, unsigned queue, std::uint32_t size, std::uint32_t flags) override;
  DrainResult drain(unsigned core, unsigned queue, std::span<Record> out) override;
  Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) override;
  Result<EngineStatus> engine_status(unsigned core, unsigned engine) override;
  void close_queues() override { queues_.clear(); }

 private:
  const Device& dev_;
  std::vector<NotificationQueue> queues_;
};

ExecResult execute(ExecTarget& target, const Program& program, const ExecOptions& opt = {});
ExecResult execute(const Device& dev, const Program& program, const ExecOptions& opt = {});

}  // namespace neuron
