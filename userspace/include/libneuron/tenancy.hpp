// SPDX-License-Identifier: MIT
//
// Tenancy without a device (include/uapi/linux/neuron.h "Tenancy"): a core
// belongs to one open file, and a program may only name device memory its
// file allocated. The pure parts libneuron's execute path (execute.hpp,
// ProgramClaim) and neuron-nq build on:
//   * core lists "0-1,3" (NEURON_VISIBLE_CORES, neuron-nq --cores) <-> masks;
//   * the device memory a program's DGE_COPY instructions name, as the driver
//     checks it at NEURON_IOC_SUBMIT, merged into NEURON_MEM_ALIGN spans that
//     NEURON_IOC_MEM_ALLOC (NEURON_MEM_F_FIXED) can place;
//   * sysfs core_owners ("<core> <pid> <comm>" or "<core> - -") parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libneuron/program.hpp"
#include "libneuron/result.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// The environment variable naming the cores programs may use, e.g. "0-1,3".
inline constexpr const char* kVisibleCoresEnv = "NEURON_VISIBLE_CORES";
/// A core mask has one bit per core: at most 64 cores
/// (struct neuron_cores).
inline constexpr unsigned kMaxCores = 64;

/// Parse a core list: comma-separated entries, each a core number N or an
/// inclusive range A-B (A <= B), decimal; blanks around an entry are
/// ignored; repeats are fine. Returns the mask (bit c = core c). Errors
/// (errc::invalid_argument) name the bad entry: an empty list or entry, a
/// non-number, a backwards range, a core >= num_cores.
Result<std::uint64_t> parse_core_list(std::string_view list, unsigned num_cores);

/// A mask back to list syntax, ranges collapsed: 0b1011 -> "0-1,3"; 0 -> "".
std::string core_list_text(std::uint64_t mask);

/// A core list and where it came from, for messages: {"0-1", "--cores"}.
struct CoreList {
  std::string text;
  std::string source;
};

/// The cores programs may use, and why (for messages).
struct VisibleCores {
  std::uint64_t mask = 0;
  /// "--cores 0-1", "NEURON_VISIBLE_CORES=0-1", or "" (every core of the device).
  std::string source;
};

/// `given` if set (it overrides the variable), else NEURON_VISIBLE_CORES if
/// set, else every core 0..num_cores-1. Errors name the source:
/// "NEURON_VISIBLE_CORES='0-9': core 9 does not exist (the device has cores 0-3)".
Result<VisibleCores> visible_cores(const std::optional<CoreList>& given, unsigned num_cores);

/// visible_cores() for a file that may name only `file_cores` (struct
/// neuron_device_info file_cores, NEURON_CAP_CORE_NODES;
/// docs/decisions/0017-core-nodes.md). 0 (a driver without core nodes, where
/// the word was reserved and zero), or every core of the device: a file of
/// /dev/nnqN, and this is the two-argument form. Otherwise the file is one of
/// a core node /dev/nnqN-coreC: with no list the visible set is its core(s),
/// source "the core node"; a list (`given` or NEURON_VISIBLE_CORES, which may
/// name the cores of several nodes a container was given) is parsed as above
/// and narrowed to the node's core, and must include it: errc::invalid_argument
/// "NEURON_VISIBLE_CORES='0': names none of this core node's cores (1)".
Result<VisibleCores> visible_cores(const std::optional<CoreList>& given, unsigned num_cores,
                                   std::uint64_t file_cores);

/// Every core the program uses must be visible; the error names the core,
/// the program line of its first instruction and the visible set.
Status check_program_cores(const Program& program, const VisibleCores& visible);

/// A byte range of device memory (BAR4 offsets): [offset, offset + size).
struct MemRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  [[nodiscard]] std::uint64_t end() const noexcept { return offset + size; }
  friend bool operator==(const MemRange&, const MemRange&) = default;
};

/// A DGE_COPY's source or destination range as the driver checks it at
/// NEURON_IOC_SUBMIT: [addr, addr + length), a length of 0 counted as 1 byte.
struct DgeRange {
  MemRange range;
  unsigned core = 0;
  unsigned engine = 0;
  std::uint32_t pc = 0;
  unsigned line = 0;  ///< source line, 0 if unknown
  bool dst = false;   ///< destination (else source)
};

/// Every DGE_COPY's source and destination range (and index table), in
/// program order; a source or index table naming the program's own data
/// (`src=@NAME`, `idx=@NAME`, EngineProgram::refs) is not listed: it lies in
/// the engine's image, which needs no allocation (docs/program-syntax.md#data).
std::vector<DgeRange> dge_ranges(const Program& program);

/// Each range widened to `align` (a power of two: offset rounded down, end
/// up), then overlapping or touching ones merged; sorted by offset. Every
/// input range lies inside exactly one output span (the driver wants each
/// DGE_COPY range inside one allocation). Empty ranges are dropped.
std::vector<MemRange> merge_ranges(std::vector<MemRange> ranges, std::uint64_t align);

/// The spans to allocate for a program: merge_ranges(dge_ranges(), NEURON_MEM_ALIGN).
std::vector<MemRange> program_memory(const Program& program);

/// "t.nq:5: DGE_COPY destination [0x1000, +0x800) (POOL on core 0, pc 2)".
std::string describe(const DgeRange& r, const Program& program);

/// One line of sysfs core_owners.
struct CoreOwner {
  unsigned core = 0;
  /// nullopt: the core is free. 0: the owner's PID is not visible in this
  /// PID namespace.
  std::optional<int> pid;
  std::string comm;  ///< the owner's command (may hold blanks); "" when free
  [[nodiscard]] bool is_free() const noexcept { return !pid.has_value(); }
};

/// Parse /sys/class/nnq/nnqN/core_owners: one line per core,
/// "<core> <pid> <comm>" or "<core> - -". errc::bad_message names the bad line.
Result<std::vector<CoreOwner>> parse_core_owners(std::string_view text);

/// Read and parse a core_owners file (errors name the path).
Result<std::vector<CoreOwner>> read_core_owners(const std::string& path);

/// "free", "PID 1234 (python3)", "PID not visible here (python3)".
std::string owner_text(const CoreOwner& o);

}  // namespace neuron
NEURON_API_END
