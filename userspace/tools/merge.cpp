// SPDX-License-Identifier: MIT
//
// The monitor's merged stream (merge.hpp): the time-ordered merge of ring
// records and interrupt edges, and its text and JSON lines.
#include "merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "output.hpp"

namespace neuron::cli {

void Merger::add_records(std::int64_t arrival_ns, unsigned core, unsigned queue, QueueClass cls,
                         std::span<const Record> recs) {
  for (const auto& r : recs) {
    const std::int64_t dev_ns = static_cast<std::int64_t>(r.timestamp_ps() / 1000);
    const std::int64_t off = arrival_ns - dev_ns;
    if (!offset_ || off < *offset_) offset_ = off;
    Item it;
    it.is_record = true;
    it.core = core;
    it.queue = queue;
    it.cls = cls;
    it.rec = r;
    it.seq = seq_++;
    pending_.push_back(it);
  }
}

void Merger::add_event(const NetlinkEvent& e) {
  Item it;
  it.ev = e;
  it.t_ns = static_cast<std::int64_t>(e.timestamp_ns);
  it.seq = seq_++;
  pending_.push_back(it);
}

std::vector<Item> Merger::take(std::int64_t now_ns, bool all) {
  for (auto& it : pending_)
    if (it.is_record) it.t_ns = static_cast<std::int64_t>(it.rec.timestamp_ps() / 1000) + offset_.value_or(0);
  std::stable_sort(pending_.begin(), pending_.end(), [](const Item& a, const Item& b) {
    return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.seq < b.seq;
  });
  std::vector<Item> out;
  std::size_t n = 0;
  while (n < pending_.size() && (all || pending_[n].t_ns < now_ns - kWindowNs)) ++n;
  out.assign(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

namespace {

void print_record(std::FILE* out, const Item& it, const Program& prog, std::optional<std::int64_t> offset, bool json) {
  const Decoded d = decode(it.rec, it.cls);
  const std::string text = record_sentence(d, prog, it.core);
  if (json) {
    auto line = record_json(it.core, it.queue, d, text);
    line["time_ns"] = it.t_ns;
    line["clock"] = "monotonic";
    line["offset_ns"] = offset.value_or(0);
    fmt::print(out, "{}\n", json_text(line));
  } else {
    fmt::print(out, "{:>18}  rec   c{} q{}  {:<16} {}   [device {}]\n", ns_text(it.t_ns), it.core, it.queue,
               notific_type_name(it.rec.notific_type()), text, format_time(Timestamp{it.rec.timestamp_ps()}));
  }
}

void print_edge(std::FILE* out, const Item& it, bool json) {
  const auto& e = it.ev;
  const std::string causes = e.edge == NEURON_EDGE_NOTIFIC ? notific_cause_names(e.cause) : "";
  if (json) {
    auto f = edge_fields(e);
    f.time_ns = static_cast<std::uint64_t>(it.t_ns);
    auto line = edge_json(f);
    line["clock"] = "monotonic";
    fmt::print(out, "{}\n", json_text(line));
  } else if (e.edge == NEURON_EDGE_ENGINE_STOPPED) {
    // a program the driver stopped (docs/decisions/0024-submit-detach.md)
    fmt::print(out, "{:>18}  edge  c{}     ENGINE_STOPPED {} engines {} (program #{} stopped on this core)\n",
               ns_text(it.t_ns), e.core, stop_cause_name(e.cause), engine_mask_names(e.queues), e.count);
  } else if (e.edge == NEURON_EDGE_HANG) {
    // an engine that retired nothing for its core's hang timeout
    // (docs/decisions/0012-hang-detection.md): cause is the state it was seen
    // in
    fmt::print(out, "{:>18}  edge  c{}     HANG engines {} {} at pc {} (hang #{} on this core)\n", ns_text(it.t_ns),
               e.core, engine_mask_names(e.queues), engine_state_name(e.cause), e.pc, e.count);
  } else {
    std::string what = edge_name(e.edge);
    if (e.edge == NEURON_EDGE_NOTIFIC) what += " " + causes;
    else what += fmt::format(" cause 0x{:x}", e.cause);
    if (e.queues) what += fmt::format(" queues 0x{:x}", e.queues);
    if (e.suppressed) what += fmt::format(" ({} before it suppressed)", e.suppressed);
    fmt::print(out, "{:>18}  edge  c{}     {} (edge #{} of this core and vector)\n", ns_text(it.t_ns), e.core, what,
               e.count);
  }
}

}  // namespace

void print_item(const Item& it, const Program& prog, std::optional<std::int64_t> offset, bool json, std::FILE* out) {
  if (it.is_record) print_record(out, it, prog, offset, json);
  else print_edge(out, it, json);
}

}  // namespace neuron::cli
