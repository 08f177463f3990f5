// SPDX-License-Identifier: MIT
//
// neuron-nq's shared output: exit statuses, error messages, the names and
// number formats every command prints, and the progress line on stderr.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "libneuron/assembler.hpp"  // not in the umbrella header
#include "libneuron/json.hpp"
#include "libneuron/neuron.hpp"
#include "libneuron/perfetto.hpp"
#include "text_escape.hpp"

namespace neuron::cli {

/// Strings other people chose (a tenant's process name, a path) leave
/// neuron-nq through one helper per sink (src/text_escape.hpp): every JSON
/// document through json_text() (invalid UTF-8 as U+FFFD: dump() would
/// throw), text through text_escape() (control bytes and invalid UTF-8 as
/// \xHH, so a name cannot forge a line), Prometheus label values through
/// prom_label() (report.hpp).
using detail::json_text;
using detail::text_escape;

/// The JSON schema version every JSON object neuron-nq prints carries as
/// "schema" (docs/cli-json.md#schema).
inline constexpr int kJsonSchemaVersion = 2;

/// Exit statuses (docs/cli-json.md#exit-codes; the README's table):
/// 0 success (run: status OK); 1 usage or input error (bad options, a
/// program that does not assemble, a bad value); 2 device or system error
/// (open, ioctl, mmap, netlink failed; status FAILURE); then one code per
/// non-OK runtime status: 3 TIMEOUT, 4 COMPLETED_WITH_ERR, 5 SW_NQ_OVERFLOW,
/// 6 any other status libneuron reports, 7 COMPLETED_THROTTLED (appended:
/// the codes before it keep their meaning).
inline constexpr int kExitOk = 0, kExitUsage = 1, kExitDevice = 2, kExitTimeout = 3, kExitCompletedWithErr = 4,
                     kExitSwNqOverflow = 5, kExitOtherStatus = 6, kExitThrottled = 7;
/// The older name of kExitUsage.
inline constexpr int kExitError = kExitUsage;

/// The exit status for a run's status (OK 0, FAILURE 2, TIMEOUT 3,
/// COMPLETED_WITH_ERR 4, SW_NQ_OVERFLOW 5, COMPLETED_THROTTLED 7, anything
/// else 6). libneuron's values (5, 1004, 1204, 2001) do not fit an exit
/// status; this is the mapping.
int exit_code(ExecStatus s);

/// Print "neuron-nq: MESSAGE" on stderr. Returns kExitUsage for an
/// invalid_argument or parse_error (the caller's input), else kExitDevice.
int fail(const Error& e);

/// A program file that did not load: a parse error as the assembler wrote
/// it (FILE:LINE: ..., one per line), else "neuron-nq: MESSAGE". Returns
/// kExitUsage (the input is at fault).
int print_program_error(const Error& e);

/// A parse error as the assembler wrote it (returns kExitUsage); anything
/// else through fail().
int print_parse_or_device_error(const Error& e);

/// "sunda", "cayman" or "unknown" for a NEURON_GEN_* value.
const char* gen_name(std::uint32_t gen);

/// Feature flags as "0x2 (DGE packet notification)"; bare hex when no bit is named.
std::string features_text(std::uint32_t f);

/// `s` in ASCII lower case.
std::string lower(std::string s);

/// Signed nanoseconds as seconds with nine decimals, e.g. "-1.000000005".
std::string ns_text(std::int64_t ns);

/// The engines of a bit mask (bit e = enum neuron_engine e) as "PE,ACT"; "" for 0.
std::string engine_mask_names(std::uint32_t mask);

/// An interrupt edge as one JSON object (docs/cli-json.md#edge): {"schema",
/// "object": "edge", "time_ns" (CLOCK_MONOTONIC), "device" (when known),
/// "core", "edge" (NOTIFIC, THROTTLE, ..., ENGINE_STOPPED), "cause",
/// "causes" (NOTIFIC: the cause bits' names; ENGINE_STOPPED: the stop
/// cause's name; else ""), "queues", "count"}; an ENGINE_STOPPED edge adds
/// "engines" (the names of the engines in `queues`), a THROTTLE or FAULT edge
/// "suppressed" (edges the rate limit kept back before it), a HANG edge "pc"
/// and "engines".
struct EdgeFields {
  std::optional<std::uint32_t> device;
  std::uint32_t core = 0, edge = 0, cause = 0, queues = 0;
  std::uint64_t count = 0, time_ns = 0;
  std::uint32_t suppressed = 0, pc = 0;
};
nlohmann::json edge_json(const EdgeFields& e);
/// The fields of an event read from the device file (device left out).
EdgeFields edge_fields(const Event& e);
/// The fields of an event multicast on netlink.
EdgeFields edge_fields(const NetlinkEvent& e);

/// A record as one JSON object (docs/cli-json.md#record): {"schema",
/// "object": "record", "core", "queue", "record" (to_json: every field, the
/// device time as "device_time_ps"), "text"}; callers may add "time_ns".
nlohmann::json record_json(unsigned core, unsigned queue, const Decoded& d, const std::string& text);

/// The sentence for a record: TPB_ERROR explained against `prog` when it
/// has engines, else to_text().
std::string record_sentence(const Decoded& d, const Program& prog, unsigned core);

/// VmHWM of this process from /proc/self/status, in kB (0 if unreadable).
std::uint64_t peak_rss_kb();

/// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();

/// SIGINT and SIGTERM blocked in the calling thread (and so in the threads
/// it starts afterwards) and delivered to the returned signalfd
/// (non-blocking), which a long-running command (monitor, monitor
/// --passive) polls to stop cleanly. Errors: sigprocmask's, signalfd's.
Result<UniqueFd> stop_signal_fd();

/// The rate per second of a counter that read `before`, then `now` `secs`
/// seconds later: (now - before) / secs. nullopt (top prints "-", JSON
/// null) when secs is not above 0, and when the counter went down (now <
/// before: it was reset, a queue or core it summed went away, a 32-bit
/// counter wrapped): the difference says nothing then, and an unsigned one
/// would be near 1.8e19. Never negative.
std::optional<double> counter_rate(std::uint64_t before, std::uint64_t now, double secs);

/// An engine's utilisation in percent from its busy-time counter (fdinfo's
/// nnq-engine-c<C>-<engine>, ns; docs/metrics.md#fdinfo) read `before`,
/// then `now` `secs` seconds later: counter_rate() / 1e9 * 100, at most
/// 100 (the driver ends a busy interval at its next sample, so one
/// interval may lend a few ms to the next). nullopt when counter_rate() is
/// (secs not above 0, the counter went down). Never negative.
std::optional<double> busy_percent(std::uint64_t before_ns, std::uint64_t now_ns, double secs);

/// A one-line status on stderr, only when stderr is a terminal (quiet when
/// piped or redirected), at most 10 updates a second. The destructor clears it.
class Progress {
 public:
  explicit Progress(bool wanted) : on_(wanted && ::isatty(STDERR_FILENO)) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Replace the line with fmt::format(f, args...), unless updated < 100 ms ago.
  template <class... Args>
  void update(fmt::format_string<Args...> f, Args&&... args) {
    if (!on_) return;
    const auto now = monotonic_ns();
    if (now - last_ < 100'000'000) return;
    last_ = now;
    fmt::print(stderr, "\r\033[K{}", fmt::format(f, std::forward<Args>(args)...));
    std::fflush(stderr);
    shown_ = true;
  }
  /// Erase the line, if one is shown.
  void clear() {
    if (on_ && shown_) fmt::print(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
  std::int64_t last_ = 0;
};

}  // namespace neuron::cli
