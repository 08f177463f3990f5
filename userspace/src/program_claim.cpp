// SPDX-License-Identifier: MIT
//
// ProgramClaim: what a program needs of the device besides its engines, its
// cores and the device memory its DGE_COPY instructions name, held while
// the claim lives (execute.hpp; docs/decisions/0005-tenancy.md). The pure parts,
// core lists and memory spans, are tenancy.cpp's.
#include "libneuron/execute.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace neuron {

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

}  // namespace neuron
