// SPDX-License-Identifier: MIT
//
// Counting, grouping and bounded display of records for run and monitor
// (storm.hpp, docs/cli-json.md#storms).
#include "storm.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "text_escape.hpp"

namespace neuron::cli {

std::optional<std::pair<GroupKey, std::string>> error_group(const Decoded& d, unsigned core, const Program& program) {
  if (const auto* e = std::get_if<TpbError>(&d)) {
    const auto& q = e->sequencer;
    GroupKey k{tpb_error_name(e->error_id), core,
               q.block_id < kEnginesPerCore ? engine_name(q.block_id) : fmt::format("block {}", q.block_id),
               q.program_counter};
    return std::pair{std::move(k), program.engines.empty() ? explain(*e) : explain(*e, program, core)};
  }
  if (const auto* i = std::get_if<Interrupt>(&d)) {
    GroupKey k{fmt::format("INTERRUPT group {}", i->group), core, fmt::format("block {}", i->block_id), std::nullopt};
    return std::pair{std::move(k), explain(*i)};
  }
  return std::nullopt;
}

namespace {
void count_into(std::map<GroupKey, GroupCount>& m, const GroupKey& k, const std::string* text, std::uint64_t ps) {
  auto [it, fresh] = m.try_emplace(k);
  auto& g = it->second;
  if (fresh) {
    g.first_ps = ps;
    if (text) g.text = *text;
  }
  ++g.count;
  g.first_ps = std::min(g.first_ps, ps);
  g.last_ps = std::max(g.last_ps, ps);
}
}  // namespace

void Storm::add(unsigned core, unsigned queue, const Record& r, const Decoded& d, std::int64_t arrival_ns) {
  const bool err = is_error(d);
  std::optional<std::pair<GroupKey, std::string>> grp;
  const std::uint64_t ps = r.timestamp_ps();
  std::lock_guard lk(mu_);
  ++records_;
  ++per_type_[notific_type_name(r.notific_type())];
  if (err) {
    ++errors_;
    // the sentence is made once per new group (it is the costly part)
    if (const auto* e = std::get_if<TpbError>(&d)) {
      const auto& q = e->sequencer;
      GroupKey k{tpb_error_name(e->error_id), core,
                 q.block_id < kEnginesPerCore ? engine_name(q.block_id) : fmt::format("block {}", q.block_id),
                 q.program_counter};
      const bool known = groups_.count(k) != 0;
      grp = std::pair{std::move(k), std::string()};
      if (!known) grp = error_group(d, core, prog_);
    } else {
      grp = error_group(d, core, prog_);
    }
    ++per_error_[grp->first.error];
    const auto total = groups_.find(grp->first);
    const std::string* text = total == groups_.end() ? &grp->second : &total->second.text;
    count_into(interval_, grp->first, text, ps);
    count_into(groups_, grp->first, text, ps);
  }
  bool show = opt_.verbose;
  if (!show && !err) {
    show = interval_records_ < opt_.record_lines;
    ++interval_records_;  // never reset with record_lines_total
    if (!show) {
      ++hidden_;
      ++hidden_total_;
    }
  }
  if (!show) return;
  if (shown_.size() >= opt_.max_buffered) {
    ++dropped_;
    return;
  }
  shown_.push_back(Shown{arrival_ns, core, queue, r, d});
}

std::vector<Shown> Storm::take_shown() {
  std::lock_guard lk(mu_);
  std::vector<Shown> v(shown_.begin(), shown_.end());
  shown_.clear();
  return v;
}

std::vector<std::pair<GroupKey, GroupCount>> biggest_first(const std::map<GroupKey, GroupCount>& m) {
  std::vector<std::pair<GroupKey, GroupCount>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  return v;
}

Storm::Interval Storm::take_interval() {
  std::map<GroupKey, GroupCount> m;
  Interval iv;
  {
    std::lock_guard lk(mu_);
    m.swap(interval_);
    iv.hidden_records = hidden_;
    hidden_ = 0;
    if (!opt_.record_lines_total) interval_records_ = 0;
  }
  iv.groups = biggest_first(m);
  return iv;
}

Storm::Totals Storm::totals() const {
  std::lock_guard lk(mu_);
  Totals t;
  t.records = records_;
  t.errors = errors_;
  t.dropped_lines = dropped_;
  t.hidden_records = hidden_total_;
  t.per_type = per_type_;
  t.per_error = per_error_;
  t.groups = biggest_first(groups_);
  return t;
}

nlohmann::json group_json(const GroupKey& k, const GroupCount& g, const char* scope) {
  return {{"schema", kJsonSchema},
          {"object", "group"},
          {"scope", scope},
          {"error", k.error},
          {"core", k.core},
          {"engine", k.engine},
          {"program_counter", k.pc ? nlohmann::json(*k.pc) : nlohmann::json(nullptr)},
          {"count", g.count},
          {"first_device_time_ps", g.first_ps},
          {"last_device_time_ps", g.last_ps},
          {"text", g.text}};
}

std::string group_text(const GroupKey& k, const GroupCount& g) {
  return fmt::format("{:>8} x {:<18} core {} {:<4} {:<9} (device {}..{} s): {}", g.count, k.error, k.core, k.engine,
                     k.pc ? fmt::format("pc 0x{:x}", *k.pc) : std::string("-"), format_time(Timestamp{g.first_ps}),
                     format_time(Timestamp{g.last_ps}), g.text);
}

std::vector<PcRange> collapse(const std::vector<std::pair<GroupKey, GroupCount>>& groups) {
  std::map<std::tuple<std::string, unsigned, std::string>, PcRange> m;
  for (const auto& [k, g] : groups) {
    auto& r = m[{k.error, k.core, k.engine}];
    if (r.pcs == 0 || g.first_ps < r.group.first_ps) {
      r.group.first_ps = g.first_ps;
      r.group.text = g.text;
    }
    if (r.pcs == 0) {
      r.key = k;
      r.key.pc.reset();
      r.group.last_ps = g.last_ps;
    }
    r.group.count += g.count;
    r.group.last_ps = std::max(r.group.last_ps, g.last_ps);
    if (k.pc) {
      r.pc_first = r.pcs == 0 ? *k.pc : std::min(r.pc_first, *k.pc);
      r.pc_last = r.pcs == 0 ? *k.pc : std::max(r.pc_last, *k.pc);
    }
    ++r.pcs;
  }
  std::vector<PcRange> v;
  for (auto& [_, r] : m) v.push_back(std::move(r));
  std::stable_sort(v.begin(), v.end(), [](const PcRange& a, const PcRange& b) { return a.group.count > b.group.count; });
  return v;
}

nlohmann::json range_json(const PcRange& r, const char* scope) {
  auto j = group_json(r.key, r.group, scope);
  j["program_counter_first"] = r.pc_first;
  j["program_counter_last"] = r.pc_last;
  j["program_counters"] = r.pcs;
  return j;
}

std::string range_text(const PcRange& r) {
  return fmt::format("{:>8} x {:<18} core {} {:<4} pc 0x{:x}..0x{:x} ({} pcs) (device {}..{} s): first: {}", r.group.count,
                     r.key.error, r.key.core, r.key.engine, r.pc_first, r.pc_last, r.pcs,
                     format_time(Timestamp{r.group.first_ps}), format_time(Timestamp{r.group.last_ps}), r.group.text);
}

void print_interval(std::FILE* out, const Storm::Interval& iv, unsigned group_lines, bool json,
                    const std::string& label, unsigned index) {
  std::size_t n = 0;
  std::uint64_t rest_records = 0;
  std::size_t rest = 0;
  if (iv.groups.size() > group_lines) {
    // more groups than lines: one line per (type, core, engine) with its pc range
    const auto ranges = collapse(iv.groups);
    for (const auto& r : ranges) {
      if (n++ >= group_lines) {
        rest_records += r.group.count;
        rest += r.pcs;
        continue;
      }
      if (json) {
        auto j = range_json(r, "interval");
        j["interval"] = index;
        fmt::print(out, "{}\n", detail::json_text(j));
      } else {
        fmt::print(out, "{} {}\n", label, range_text(r));
      }
    }
  } else {
    for (const auto& [k, g] : iv.groups) {
      if (json) {
        auto j = group_json(k, g, "interval");
        j["interval"] = index;
        fmt::print(out, "{}\n", detail::json_text(j));
      } else {
        fmt::print(out, "{} {}\n", label, group_text(k, g));
      }
    }
  }
  if (json) {
    if (rest || iv.hidden_records)
      fmt::print(out, "{}\n",
                 detail::json_text(nlohmann::json{{"schema", kJsonSchema},
                                                  {"object", "interval"},
                                                  {"interval", index},
                                                  {"groups_not_shown", rest},
                                                  {"errors_not_shown", rest_records},
                                                  {"records_not_shown", iv.hidden_records}}));
    return;
  }
  if (rest) fmt::print(out, "{} ... {} more error groups ({} records)\n", label, rest, rest_records);
  if (iv.hidden_records)
    fmt::print(out, "{} ... {} more records not shown (--verbose shows every record)\n", label, iv.hidden_records);
}

nlohmann::json totals_json(const Storm::Totals& t, unsigned group_lines) {
  nlohmann::json groups = nlohmann::json::array();
  for (std::size_t i = 0; i < t.groups.size() && i < group_lines; ++i)
    groups.push_back(group_json(t.groups[i].first, t.groups[i].second, "total"));
  return {{"records", t.records},
          {"per_type", t.per_type},
          {"errors", t.errors},
          {"per_error", t.per_error},
          {"groups", groups},
          {"groups_total", t.groups.size()},
          {"dropped_lines", t.dropped_lines},
          {"hidden_records", t.hidden_records}};
}

void print_totals_text(std::FILE* out, const Storm::Totals& t, unsigned group_lines) {
  fmt::print(out, "summary: {} records", t.records);
  for (const auto& [type, count] : t.per_type) fmt::print(out, ", {} {}", count, type);
  fmt::print(out, "\n");
  fmt::print(out, "errors: {}", t.errors);
  if (!t.per_error.empty()) {
    fmt::print(out, " by type:");
    bool first = true;
    for (const auto& [type, count] : t.per_error) {
      fmt::print(out, "{} {} {}", first ? "" : ",", type, count);
      first = false;
    }
    fmt::print(out, "; {} groups by (type, core, engine, pc)", t.groups.size());
  }
  fmt::print(out, "\n");
  for (std::size_t i = 0; i < t.groups.size() && i < group_lines; ++i)
    fmt::print(out, "  {}\n", group_text(t.groups[i].first, t.groups[i].second));
  if (t.groups.size() > group_lines) fmt::print(out, "  ... {} more groups\n", t.groups.size() - group_lines);
  if (t.hidden_records || t.dropped_lines)
    fmt::print(out, "not shown: {} records over the per-interval line limit, {} lines dropped (output too slow)\n",
               t.hidden_records, t.dropped_lines);
}

nlohmann::json summary_json(const char* command, const Storm::Totals& t, unsigned group_lines) {
  nlohmann::json j = totals_json(t, group_lines);
  j["schema"] = kJsonSchema;
  j["object"] = "summary";
  j["command"] = command;
  return j;
}

}  // namespace neuron::cli
