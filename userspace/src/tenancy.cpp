// SPDX-License-Identifier: MIT
#include "libneuron/tenancy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <endian.h>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "libneuron/record.hpp"
#include "text_escape.hpp"
#include "uapi/linux/neuron.h"

namespace neuron {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// A decimal number of at most 9 digits (no sign, no blanks).
std::optional<unsigned> decimal(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

std::string lower_engine_name(unsigned engine) {
  std::string s = engine_name(engine);
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

std::string cores_of(unsigned num_cores) {
  return num_cores == 0 ? "no cores" : num_cores == 1 ? "core 0" : fmt::format("cores 0-{}", num_cores - 1);
}

}  // namespace

Result<std::uint64_t> parse_core_list(std::string_view list, unsigned num_cores) {
  num_cores = std::min(num_cores, kMaxCores);
  if (trim(list).empty()) return unexpected(errc::invalid_argument, "the list is empty: it names no core");
  std::uint64_t mask = 0;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = list.find(',', pos);
    const std::string_view raw = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    const std::string_view entry = trim(raw);
    if (entry.empty())
      return unexpected(errc::invalid_argument,
                        fmt::format("empty entry at character {} (entries are N or A-B, separated by commas)", pos + 1));
    const std::size_t dash = entry.find('-');
    const auto lo = decimal(dash == std::string_view::npos ? entry : entry.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : decimal(entry.substr(dash + 1));
    if (!lo || !hi)
      return unexpected(errc::invalid_argument,
                        fmt::format("'{}' is not a core number N or a range A-B", entry));
    if (*lo > *hi)
      return unexpected(errc::invalid_argument, fmt::format("range '{}' runs backwards (write {}-{})", entry, *hi, *lo));
    if (*hi >= num_cores)
      return unexpected(errc::invalid_argument, fmt::format("'{}': core {} does not exist (the device has {})", entry,
                                                            *hi, cores_of(num_cores)));
    for (unsigned c = *lo; c <= *hi; ++c) mask |= std::uint64_t{1} << c;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return mask;
}

std::string core_list_text(std::uint64_t mask) {
  std::string s;
  unsigned c = 0;
  while (c < kMaxCores) {
    if (!(mask >> c & 1)) {
      ++c;
      continue;
    }
    unsigned end = c;
    while (end + 1 < kMaxCores && (mask >> (end + 1) & 1)) ++end;
    if (!s.empty()) s += ',';
    s += end == c ? fmt::format("{}", c) : fmt::format("{}-{}", c, end);
    c = end + 1;
  }
  return s;
}

Result<VisibleCores> visible_cores(const std::optional<CoreList>& given, unsigned num_cores) {
  std::optional<CoreList> list = given;
  if (!list)
    if (const char* env = std::getenv(kVisibleCoresEnv)) list = CoreList{env, kVisibleCoresEnv};
  if (!list) {
    const unsigned n = std::min(num_cores, kMaxCores);
    return VisibleCores{n == kMaxCores ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1, ""};
  }
  const bool is_env = list->source == kVisibleCoresEnv;
  auto mask = parse_core_list(list->text, num_cores);
  if (!mask)
    return unexpected(mask.error().code, fmt::format("{}{}'{}': {}", list->source, is_env ? "=" : " ", list->text,
                                                     mask.error().what));
  return VisibleCores{*mask, fmt::format("{}{}{}", list->source, is_env ? "=" : " ", list->text)};
}

Result<VisibleCores> visible_cores(const std::optional<CoreList>& given, unsigned num_cores,
                                   std::uint64_t file_cores) {
  const unsigned n = std::min(num_cores, kMaxCores);
  const std::uint64_t all = n == kMaxCores ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  const std::uint64_t node = file_cores & all;
  if (node == 0 || node == all) return visible_cores(given, num_cores);
  std::optional<CoreList> list = given;
  if (!list)
    if (const char* env = std::getenv(kVisibleCoresEnv)) list = CoreList{env, kVisibleCoresEnv};
  if (!list) return VisibleCores{node, "the core node"};
  auto v = visible_cores(list, num_cores);
  if (!v) return v;
  if (!(v->mask & node)) {
    const bool is_env = list->source == kVisibleCoresEnv;
    return unexpected(errc::invalid_argument,
                      fmt::format("{}{}'{}': names none of this core node's cores ({})", list->source,
                                  is_env ? "=" : " ", list->text, core_list_text(node)));
  }
  v->mask &= node;
  return v;
}

Status check_program_cores(const Program& program, const VisibleCores& visible) {
  for (const auto& e : program.engines) {
    if (e.core < kMaxCores && (visible.mask >> e.core & 1)) continue;
    const std::string where = fmt::format("{}:{}", program.name, e.lines.empty() ? 0u : e.lines.front());
    const std::string section = fmt::format("[core{}.{}]", e.core, lower_engine_name(e.engine));
    if (visible.source.empty())
      return unexpected(errc::invalid_argument,
                        fmt::format("{}: {} names core {}, which does not exist (the device has {})", where, section,
                                    e.core, visible.mask ? "cores " + core_list_text(visible.mask) : "no cores"));
    return unexpected(errc::invalid_argument,
                      fmt::format("{}: {} uses core {}, which is not among the visible cores {} ({}); "
                                  "give it cores that include {}",
                                  where, section, e.core, core_list_text(visible.mask), visible.source, e.core));
  }
  return {};
}

std::vector<DgeRange> dge_ranges(const Program& program) {
  std::vector<DgeRange> out;
  for (const auto& e : program.engines)
    for (std::uint32_t pc = 0; pc < e.insns.size(); ++pc) {
      const auto& in = e.insns[pc];
      if (in.opcode != NEURON_OP_DGE_COPY) continue;
      // the instruction's fields are little-endian (include/uapi/linux/neuron_isa.h)
      const std::uint32_t length = le32toh(in.operand.dge.length);
      const std::uint64_t len = std::max<std::uint64_t>(length, 1);
      const unsigned line = pc < e.lines.size() ? e.lines[pc] : 0;
      // a field naming the program's own data is inside its image, not tenant memory
      const auto names_data = [&](DataField f) {
        return std::any_of(e.refs.begin(), e.refs.end(), [&](const DataRef& r) { return r.pc == pc && r.field == f; });
      };
      if (!names_data(DataField::Source))
        out.push_back({{le32toh(in.operand.dge.src), len}, e.core, e.engine, pc, line, false});
      out.push_back({{le32toh(in.operand.dge.dst), len}, e.core, e.engine, pc, line, true});
      if ((in.operand.dge.indirect & NEURON_ISA_INDIRECT_MODE_MASK) && !names_data(DataField::IndexTable)) {
        // the index table: one u32 per element (include/uapi/linux/neuron_isa.h)
        const unsigned shift = (in.flags & NEURON_DGE_F_ELEM_MASK) >> NEURON_DGE_F_ELEM_SHIFT;
        const std::uint64_t n = std::max<std::uint64_t>(length >> shift, 1);
        out.push_back({{le32toh(in.reserved0), n * NEURON_DGE_IDX_ENTRY_BYTES}, e.core, e.engine, pc, line, false});
      }
    }
  return out;
}

std::vector<MemRange> merge_ranges(std::vector<MemRange> ranges, std::uint64_t align) {
  const std::uint64_t m = align ? align - 1 : 0;
  std::erase_if(ranges, [](const MemRange& r) { return r.size == 0; });
  for (auto& r : ranges) {
    const std::uint64_t lo = r.offset & ~m, hi = (r.end() + m) & ~m;
    r = {lo, hi - lo};
  }
  std::sort(ranges.begin(), ranges.end(), [](const MemRange& a, const MemRange& b) { return a.offset < b.offset; });
  std::vector<MemRange> out;
  for (const auto& r : ranges) {
    if (!out.empty() && r.offset <= out.back().end()) {
      out.back().size = std::max(out.back().end(), r.end()) - out.back().offset;
      continue;
    }
    out.push_back(r);
  }
  return out;
}

std::vector<MemRange> program_memory(const Program& program) {
  std::vector<MemRange> ranges;
  for (const auto& r : dge_ranges(program)) ranges.push_back(r.range);
  return merge_ranges(std::move(ranges), NEURON_MEM_ALIGN);
}

std::string describe(const DgeRange& r, const Program& program) {
  return fmt::format("{}:{}: DGE_COPY {} [0x{:x}, +0x{:x}) ({} on core {}, pc {})", program.name, r.line,
                     r.dst ? "destination" : "source", r.range.offset, r.range.size, engine_name(r.engine), r.core,
                     r.pc);
}

Result<std::vector<CoreOwner>> parse_core_owners(std::string_view text) {
  std::vector<CoreOwner> out;
  unsigned lineno = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++lineno;
    if (trim(line).empty()) continue;
    const auto bad = [&] {
      return unexpected(errc::bad_message,
                        fmt::format("core_owners line {}: '{}' is not \"<core> <pid> <comm>\" or \"<core> - -\"",
                                    lineno, detail::text_escape(line)));
    };
    const std::size_t s1 = line.find(' ');
    if (s1 == std::string_view::npos) return bad();
    const std::size_t s2 = line.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) return bad();
    const auto core = decimal(line.substr(0, s1));
    const std::string_view pid = line.substr(s1 + 1, s2 - s1 - 1);
    // the rest: the driver writes blanks, backslashes, control and non-ASCII
    // bytes of the command as \xHH (kernel/neuron_sysfs.c), so a name cannot
    // make a line of its own; an older driver's blanks are taken as they are
    const std::string_view comm = line.substr(s2 + 1);
    if (!core) return bad();
    CoreOwner o;
    o.core = *core;
    if (pid == "-") {
      if (comm != "-") return bad();
    } else {
      const auto p = decimal(pid);
      if (!p) return bad();
      o.pid = static_cast<int>(*p);
      o.comm = detail::kernel_unescape(comm);
    }
    out.push_back(std::move(o));
  }
  return out;
}

Result<std::vector<CoreOwner>> read_core_owners(const std::string& path) {
  std::ifstream f(path);
  if (!f) return unexpected(Error::from_errno(errno ? errno : ENOENT, "read " + path));
  std::ostringstream ss;
  ss << f.rdbuf();
  auto owners = parse_core_owners(ss.str());
  if (!owners) return unexpected(owners.error().code, path + ": " + owners.error().what);
  return owners;
}

std::string owner_text(const CoreOwner& o) {
  if (o.is_free()) return "free";
  // the command is the tenant's: escaped, it cannot forge a line of output
  if (*o.pid == 0) return fmt::format("PID not visible here ({})", detail::text_escape(o.comm));
  return fmt::format("PID {} ({})", *o.pid, detail::text_escape(o.comm));
}

}  // namespace neuron
