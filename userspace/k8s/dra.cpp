// SPDX-License-Identifier: MIT
//
// neuron-dra-plugin's decisions (dra.hpp, docs/k8s.md#dra).
#include "dra.hpp"

#include <algorithm>
#include <set>

namespace neuron::k8s::dra {
namespace {
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

ojson attr_string(const std::string& s) { return ojson{{"string", s}}; }
ojson attr_int(std::int64_t v) { return ojson{{"int", v}}; }

std::string dashed(std::string s) {
  for (auto& c : s)
    if (c == '.') c = '-';
  return s;
}

/// One device's counter set and its device entries (cores, then whole).
struct Group {
  ojson counter_set;
  std::vector<ojson> entries;
};

Group group_of(const Device& d, const std::string& gen) {
  Group g;
  const std::string set = d.id + "-cores";
  ojson counters = ojson::object();
  ojson all = ojson::object();
  std::size_t healthy = 0;
  auto common = [&](ojson& a, const char* kind) {
    a["device"] = attr_string(d.id);
    a["kind"] = attr_string(kind);
    if (d.numa_node >= 0) a["numaNode"] = attr_int(d.numa_node);
    a["generation"] = attr_string(gen);
  };
  for (const auto& c : d.cores) {
    if (!c.healthy) continue;
    const std::string counter = "core" + std::to_string(c.core);
    counters[counter] = ojson{{"value", "1"}};
    all[counter] = ojson{{"value", "1"}};
    ojson a = ojson::object();
    common(a, "core");
    a["core"] = attr_int(c.core);
    ojson e;
    e["name"] = c.id;
    e["attributes"] = std::move(a);
    e["consumesCounters"] = ojson::array({ojson{{"counterSet", set}, {"counters", {{counter, {{"value", "1"}}}}}}});
    g.entries.push_back(std::move(e));
    ++healthy;
  }
  if (healthy == 0) return g;
  g.counter_set = ojson{{"name", set}, {"counters", counters}};
  // the whole device only when every core is there to give
  if (healthy == d.cores.size()) {
    ojson a = ojson::object();
    common(a, "device");
    a["cores"] = attr_int(static_cast<std::int64_t>(healthy));
    ojson e;
    e["name"] = d.id;
    e["attributes"] = std::move(a);
    e["consumesCounters"] = ojson::array({ojson{{"counterSet", set}, {"counters", all}}});
    g.entries.push_back(std::move(e));
  }
  return g;
}

std::string field(std::size_t i, const char* f) {
  return "status.allocation.devices.results[" + std::to_string(i) + "]" + (*f ? "." : "") + f;
}

}  // namespace

std::vector<nlohmann::json> slices(const Publisher& who, const std::vector<Device>& devices,
                                   const std::map<std::string, std::string>& generations,
                                   std::int64_t generation) {
  std::vector<std::vector<Group>> packed(1);
  std::size_t entries = 0;
  for (const auto& d : devices) {
    if (!d.healthy || !d.present) continue;
    auto gi = generations.find(d.id);
    Group g = group_of(d, gi == generations.end() ? "unknown" : gi->second);
    if (g.entries.empty()) continue;
    if (packed.back().size() == kMaxCounterSets || entries + g.entries.size() > kMaxDevicesWithCounters) {
      packed.emplace_back();
      entries = 0;
    }
    entries += g.entries.size();
    packed.back().push_back(std::move(g));
  }
  std::vector<json> out;
  for (std::size_t i = 0; i < packed.size(); ++i) {
    ojson s;
    s["apiVersion"] = "resource.k8s.io/v1";
    s["kind"] = "ResourceSlice";
    s["metadata"]["name"] = who.node + "-" + dashed(who.driver) + "-g" + std::to_string(generation) + "-" +
                            std::to_string(i);
    s["spec"]["driver"] = who.driver;
    s["spec"]["nodeName"] = who.node;
    s["spec"]["pool"] = ojson{{"name", who.node},
                              {"generation", generation},
                              {"resourceSliceCount", static_cast<std::int64_t>(packed.size())}};
    ojson sets = ojson::array(), devs = ojson::array();
    for (auto& g : packed[i]) {
      sets.push_back(std::move(g.counter_set));
      for (auto& e : g.entries) devs.push_back(std::move(e));
    }
    if (!sets.empty()) s["spec"]["sharedCounters"] = std::move(sets);
    s["spec"]["devices"] = std::move(devs);
    out.push_back(json::parse(s.dump()));  // keep the order in the text; json for the caller
  }
  return out;
}

bool valid_uid(const std::string& uid) {
  if (uid.empty() || uid.size() > 63) return false;
  for (char c : uid)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return uid.front() != '-' && uid.back() != '-';
}

ClaimDevices check_claim(const nlohmann::json& claim, const std::string& uid, const Publisher& who,
                         const std::vector<Device>& devices) {
  ClaimDevices out;
  auto fail = [&](std::string why) {
    out.devices.clear();
    out.error = std::move(why);
    return out;
  };
  if (!claim.is_object()) return fail("claim: not a JSON object");
  const json* got_uid = nullptr;
  if (auto m = claim.find("metadata"); m != claim.end() && m->is_object())
    if (auto u = m->find("uid"); u != m->end()) got_uid = &*u;
  if (!got_uid || !got_uid->is_string() || got_uid->get<std::string>() != uid)
    return fail("metadata.uid: " + (got_uid ? got_uid->dump() : std::string("missing")) +
                " is not the claim the kubelet named (uid '" + uid + "')");
  const json* results = nullptr;
  if (auto st = claim.find("status"); st != claim.end() && st->is_object())
    if (auto al = st->find("allocation"); al != st->end() && al->is_object())
      if (auto dv = al->find("devices"); dv != al->end() && dv->is_object())
        if (auto r = dv->find("results"); r != dv->end()) results = &*r;
  if (!results) return fail("status.allocation.devices.results: missing (the claim is not allocated)");
  if (!results->is_array()) return fail("status.allocation.devices.results: not a list");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < results->size(); ++i) {
    const json& r = (*results)[i];
    if (!r.is_object()) return fail(field(i, "") + ": not an object");
    std::map<std::string, std::string> f;
    for (const char* k : {"request", "driver", "pool", "device"}) {
      auto it = r.find(k);
      if (it == r.end() || !it->is_string() || it->get<std::string>().empty())
        return fail(field(i, k) + ": missing or not a non-empty string");
      f[k] = it->get<std::string>();
    }
    if (f["driver"] != who.driver) continue;  // another driver's device in the same claim
    if (f["pool"] != who.node)
      return fail(field(i, "pool") + ": '" + f["pool"] + "' is another node's pool (this node's is '" + who.node +
                  "')");
    const std::string& name = f["device"];
    std::optional<Prepared> p;
    for (const auto& d : devices) {
      if (name == d.id) {
        const bool whole = d.healthy && d.present &&
                           std::all_of(d.cores.begin(), d.cores.end(), [](const Core& c) { return c.healthy; });
        if (!whole) return fail(field(i, "device") + ": '" + name + "' is not healthy (" + d.why + ")");
        p = Prepared{f["request"], f["pool"], name, {d.id}};
      }
      for (const auto& c : d.cores)
        if (name == c.id) {
          if (!c.healthy) return fail(field(i, "device") + ": '" + name + "' is not healthy");
          p = Prepared{f["request"], f["pool"], name, {c.id}};
        }
    }
    if (!p) return fail(field(i, "device") + ": '" + name + "' is no device of pool '" + who.node + "'");
    if (!seen.insert(name).second) return fail(field(i, "device") + ": '" + name + "' given twice in one claim");
    out.devices.push_back(std::move(*p));
  }
  if (out.devices.empty())
    return fail("status.allocation.devices.results: no device of driver '" + who.driver + "'");
  return out;
}

std::string to_text(const Checkpoint& c) {
  ojson claims = ojson::object();
  for (const auto& [uid, r] : c) {
    ojson devs = ojson::array();
    for (const auto& d : r.devices)
      devs.push_back(ojson{{"request", d.request}, {"pool", d.pool}, {"device", d.device}, {"nodes", d.nodes}});
    claims[uid] = ojson{{"namespace", r.ns}, {"name", r.name}, {"devices", std::move(devs)}};
  }
  return ojson{{"version", 1}, {"claims", std::move(claims)}}.dump(2) + "\n";
}

std::optional<Checkpoint> from_text(const std::string& text, std::string& err) {
  try {
    const json j = json::parse(text);
    if (j.at("version").get<int>() != 1) {
      err = "version: not 1";
      return std::nullopt;
    }
    Checkpoint c;
    for (const auto& [uid, r] : j.at("claims").items()) {
      if (!valid_uid(uid)) {
        err = "claims: bad uid '" + uid + "'";
        return std::nullopt;
      }
      ClaimRecord rec{r.at("namespace").get<std::string>(), r.at("name").get<std::string>(), {}};
      for (const auto& d : r.at("devices"))
        rec.devices.push_back({d.at("request").get<std::string>(), d.at("pool").get<std::string>(),
                               d.at("device").get<std::string>(), d.at("nodes").get<std::vector<std::string>>()});
      c.emplace(uid, std::move(rec));
    }
    return c;
  } catch (const std::exception& e) {
    err = e.what();
    return std::nullopt;
  }
}

std::optional<std::string> overlap(const Checkpoint& held, const std::string& uid,
                                   const std::vector<Prepared>& devices) {
  // a core "nnqN-coreC" and its device "nnqN" share the device part
  auto dev_of = [](const std::string& n) { return n.substr(0, n.find('-')); };
  for (const auto& [other, rec] : held) {
    if (other == uid) continue;
    for (const auto& mine : devices)
      for (const auto& theirs : rec.devices)
        if (mine.device == theirs.device ||
            (dev_of(mine.device) == dev_of(theirs.device) &&
             (mine.device.find('-') == std::string::npos || theirs.device.find('-') == std::string::npos)))
          return theirs.device + " (claim " + other + ")";
  }
  return std::nullopt;
}

std::string claim_cdi_kind(const std::string& driver) { return driver + "/claim"; }

std::string claim_cdi_file(const std::string& driver, const std::string& uid) {
  return driver + "-claim_" + uid + ".json";
}

std::string claim_cdi_id(const std::string& driver, const std::string& uid, const std::string& device) {
  return claim_cdi_kind(driver) + "=" + uid + "-" + device;
}

std::string claim_cdi_spec(const std::string& driver, const std::string& uid, const std::vector<Prepared>& devices,
                           const std::string& dev_root) {
  std::vector<CdiEntry> entries;
  for (const auto& d : devices) entries.push_back({uid + "-" + d.device, d.nodes});
  return cdi_spec_of(claim_cdi_kind(driver), entries, dev_root);
}

}  // namespace neuron::k8s::dra
