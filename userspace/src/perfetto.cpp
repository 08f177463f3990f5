// SPDX-License-Identifier: MIT
#include "libneuron/json.hpp"
#include "libneuron/perfetto.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "libneuron/format.hpp"

namespace neuron {

namespace {

double us(std::uint64_t ps) { return static_cast<double>(ps) / 1e6; }

struct Open {
  std::uint64_t ts_ps;
  std::uint32_t pc;
  std::uint8_t hint;
  std::uint16_t run;
};

}  // namespace

nlohmann::json chrome_trace(std::span<const CollectedRecord> records, TraceStats* stats) {
  TraceStats st;
  // Order by time; ties keep arrival order (INST_START before INST_END).
  std::vector<const CollectedRecord*> order;
  order.reserve(records.size());
  for (const auto& r : records) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const CollectedRecord* a, const CollectedRecord* b) {
    return a->raw.timestamp_ps() < b->raw.timestamp_ps();
  });

  nlohmann::json events = nlohmann::json::array();
  std::set<std::pair<unsigned, unsigned>> tracks;  // (core, engine)
  std::map<std::pair<unsigned, unsigned>, std::vector<Open>> open;

  const auto instant = [&](unsigned core, unsigned engine, std::uint64_t ts, std::string name, nlohmann::json args) {
    tracks.emplace(core, engine);
    events.push_back({{"name", std::move(name)}, {"ph", "i"}, {"s", "t"}, {"ts", us(ts)},
                      {"pid", core}, {"tid", engine}, {"args", std::move(args)}});
    ++st.instants;
  };

  for (const CollectedRecord* c : order) {
    const std::uint64_t ts = c->raw.timestamp_ps();
    if (const auto* t = std::get_if<Trace>(&c->decoded)) {
      const unsigned eng = static_cast<unsigned>(t->engine);
      tracks.emplace(c->core, eng);
      auto& stack = open[{c->core, eng}];
      if (t->start) {
        stack.push_back(Open{ts, t->program_counter, t->debug_hint, t->soft_reset_counter});
        continue;
      }
      // match the most recent open start with the same pc and run
      auto it = std::find_if(stack.rbegin(), stack.rend(), [&](const Open& o) {
        return o.pc == t->program_counter && o.run == t->soft_reset_counter;
      });
      if (it == stack.rend()) {
        ++st.unmatched_ends;
        continue;
      }
      const Open o = *it;
      stack.erase(std::next(it).base());
      events.push_back({{"name", fmt::format("pc {}", o.pc)},
                        {"cat", "instruction"},
                        {"ph", "X"},
                        {"ts", us(o.ts_ps)},
                        {"dur", us(ts >= o.ts_ps ? ts - o.ts_ps : 0)},
                        {"pid", c->core},
                        {"tid", eng},
                        {"args", {{"pc", o.pc}, {"debug_hint", o.hint}, {"run", o.run},
                                  {"data_crc_end", t->data_crc}}}});
      ++st.slices;
    } else if (const auto* e = std::get_if<Explicit>(&c->decoded)) {
      instant(c->core, static_cast<unsigned>(e->engine), ts, fmt::format("notify hint={} ext=0x{:x}", e->debug_hint,
                                                                        e->debug_hint_extended),
              to_json(c->decoded));
    } else if (const auto* d = std::get_if<DgeMetadata>(&c->decoded)) {
      instant(c->core, static_cast<unsigned>(d->engine), ts, "DGE packets", to_json(c->decoded));
    } else if (const auto* s = std::get_if<EvtSem>(&c->decoded)) {
      instant(c->core, s->engine ? static_cast<unsigned>(*s->engine) : kEnginesPerCore, ts,
              fmt::format("{} {} {}", s->is_event ? "event" : "sem", s->id, update_mode_name(s->update_mode)),
              to_json(c->decoded));
    } else if (const auto* te = std::get_if<TpbError>(&c->decoded)) {
      const unsigned eng = te->sequencer.block_id < kEnginesPerCore ? te->sequencer.block_id : kEnginesPerCore;
      instant(c->core, eng, ts, tpb_error_name(te->error_id), to_json(c->decoded));
    } else {
      instant(c->core, kEnginesPerCore, ts, kind_name(c->decoded), to_json(c->decoded));
    }
  }
  for (const auto& [k, v] : open) st.unmatched_starts += v.size();

  std::set<unsigned> cores;
  for (const auto& [core, eng] : tracks) {
    cores.insert(core);
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", core}, {"tid", eng},
                      {"args", {{"name", eng < kEnginesPerCore ? engine_name(eng) : std::string("other")}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", core}, {"tid", eng},
                      {"args", {{"sort_index", eng}}}});
  }
  for (unsigned core : cores)
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", core}, {"args", {{"name", fmt::format("core {}", core)}}}});

  if (stats) *stats = st;
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

}  // namespace neuron
