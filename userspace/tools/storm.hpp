// SPDX-License-Identifier: MIT
//
// Error storms (docs/cli-json.md#storms): what `run` and `monitor` do with
// a flood of records so that the terminal, the memory and the engines all
// survive it.
//
//  * Every record is counted (per notific type) and every error record
//    (TPB_ERROR, ERROR) is aggregated into a group keyed by (error type,
//    core, engine, program counter), with its count and the device times of
//    its first and last record, both for the whole run and for the current
//    interval. The counting runs on the thread that drains the rings (the
//    Reaper's) and never waits for the output.
//  * What is printed record by record goes through a bounded buffer: with
//    --verbose every record, otherwise the non-error records, at most
//    Options::record_lines of them per interval (the rest counted). When the
//    printer falls behind and the buffer is full, display lines are dropped
//    and counted (`dropped_lines`) instead of holding up the drain: the
//    engines never stall on the CLI's output, and memory stays bounded by
//    the buffer plus one group per distinct (type, core, engine, pc).
//  * Every interval the printer shows one line per group that grew in it
//    (at most Options::group_lines, the biggest first) and, at the end, a
//    summary with the totals.
//
// Storm is thread-safe: add() on the drain thread, the take/print calls on
// the printing thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "libneuron/neuron.hpp"
#include "output.hpp"

namespace neuron::cli {

/// The JSON schema version every neuron-nq JSON object carries as "schema"
/// (docs/cli-json.md#schema).
inline constexpr int kJsonSchema = kJsonSchemaVersion;

/// What identifies an error group: (error type, core, engine, program counter).
struct GroupKey {
  std::string error;   // "FP_UNDERFLOW", ..., or "INTERRUPT group N" for ERROR records
  unsigned core = 0;
  std::string engine;  // "PE", ..., or "block N"
  std::optional<std::uint32_t> pc;  // none for ERROR (interrupt-form) records
  auto operator<=>(const GroupKey&) const = default;
};

/// A group's counts, over the run or over one interval.
struct GroupCount {
  std::uint64_t count = 0;
  std::uint64_t first_ps = 0, last_ps = 0;  // device time of the first and last record
  std::string text;                         // the first record's sentence
};

/// A record to print on its own line.
struct Shown {
  std::int64_t arrival_ns = 0;  // CLOCK_MONOTONIC when drained
  unsigned core = 0, queue = 0;
  Record rec;
  Decoded decoded;  // as the drainer decoded it: with its queue's route
};

class Storm {
 public:
  struct Options {
    bool verbose = false;            // every record on its own line
    unsigned record_lines = 40;      // without verbose: non-error record lines per interval
    bool record_lines_total = false; // record_lines is for the whole run, not per interval (run)
    unsigned group_lines = 10;       // group lines per interval (biggest first)
    std::size_t max_buffered = 1 << 16;  // display lines held for the printer; more are dropped
  };
  /// `program` (may be empty) explains TPB_ERROR records; it must outlive the Storm.
  Storm(Options o, const Program& program) : opt_(o), prog_(program) {}

  /// Drain thread: count one record; queue it for display when it is shown.
  void add(unsigned core, unsigned queue, const Record& r, const Decoded& d, std::int64_t arrival_ns);

  /// Printer: the records queued for display since the last call.
  std::vector<Shown> take_shown();

  /// Printer: the interval's groups (biggest first, then by key) and how
  /// many non-error records it hid; resets the interval.
  struct Interval {
    std::vector<std::pair<GroupKey, GroupCount>> groups;
    std::uint64_t hidden_records = 0;
  };
  Interval take_interval();

  /// Totals (printer, or after the drain stopped).
  struct Totals {
    std::uint64_t records = 0, errors = 0, dropped_lines = 0, hidden_records = 0;
    std::map<std::string, std::uint64_t> per_type;       // notific type name -> records
    std::map<std::string, std::uint64_t> per_error;      // error type -> records
    std::vector<std::pair<GroupKey, GroupCount>> groups;  // biggest first
  };
  Totals totals() const;

  [[nodiscard]] const Options& options() const { return opt_; }

 private:
  Options opt_;
  const Program& prog_;
  mutable std::mutex mu_;
  std::deque<Shown> shown_;
  std::map<GroupKey, GroupCount> groups_, interval_;
  std::map<std::string, std::uint64_t> per_type_, per_error_;
  std::uint64_t records_ = 0, errors_ = 0, dropped_ = 0, hidden_ = 0, hidden_total_ = 0, interval_records_ = 0;
};

/// The group key and sentence of an error record; nullopt for other records.
std::optional<std::pair<GroupKey, std::string>> error_group(const Decoded& d, unsigned core, const Program& program);

/// Groups sorted biggest first (ties: by key).
std::vector<std::pair<GroupKey, GroupCount>> biggest_first(const std::map<GroupKey, GroupCount>& m);

/// One group as JSON (docs/cli-json.md#group): {"schema", "object": "group",
/// "scope": `scope` ("interval" or "total"), "error", "core", "engine",
/// "program_counter" (null for ERROR records), "count", "first_device_time_ps",
/// "last_device_time_ps", "text"}.
nlohmann::json group_json(const GroupKey& k, const GroupCount& g, const char* scope);

/// One group as a text line, e.g. "  50000 x FP_UNDERFLOW  core 0 PE   pc 0x5
/// (device 0.000001000..0.900000000 s): FP_UNDERFLOW on PE at pc 0x5 ...".
std::string group_text(const GroupKey& k, const GroupCount& g);

/// Groups of one (error type, core, engine) at several program counters,
/// as one line.
struct PcRange {
  GroupKey key;  // pc unset
  GroupCount group;  // summed; text: the earliest group's
  std::uint32_t pc_first = 0, pc_last = 0;
  std::size_t pcs = 0;  // groups (program counters) merged
};

/// `groups` merged by (error type, core, engine), biggest first.
std::vector<PcRange> collapse(const std::vector<std::pair<GroupKey, GroupCount>>& groups);

/// A PcRange as group_json with "program_counter" null and
/// "program_counter_first", "program_counter_last", "program_counters" (how many).
nlohmann::json range_json(const PcRange& r, const char* scope);

/// A PcRange as a text line ("... pc 0x0..0x7cf (2000 pcs) ...").
std::string range_text(const PcRange& r);

/// Print an interval on `out`: one line per group, or, when it has more
/// groups than `group_lines`, one line per (error type, core, engine) with
/// the range of program counters (at most `group_lines`, then "... N more
/// groups"); and how many records it hid.
/// `label` starts each text line (e.g. "[  1.0 s]"); JSON lines carry
/// "interval" = `index`.
void print_interval(std::FILE* out, const Storm::Interval& iv, unsigned group_lines, bool json,
                    const std::string& label, unsigned index);

/// The JSON of the totals: {"records", "per_type", "errors", "per_error",
/// "groups" (the biggest Options::group_lines as group_json "total"),
/// "groups_total", "dropped_lines", "hidden_records"}; the caller adds its own
/// fields and "schema"/"object".
nlohmann::json totals_json(const Storm::Totals& t, unsigned group_lines);

/// The summary object run and monitor print last (docs/cli-json.md#summary):
/// totals_json() plus "schema", "object": "summary" and "command".
nlohmann::json summary_json(const char* command, const Storm::Totals& t, unsigned group_lines);

/// The text of the totals: "summary: N records, ..." with the per-type
/// counts, "errors: N by type: ...", the biggest groups and what was not shown.
void print_totals_text(std::FILE* out, const Storm::Totals& t, unsigned group_lines);

}  // namespace neuron::cli
