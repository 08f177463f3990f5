// SPDX-License-Identifier: MIT
//
// The node's Neuron devices for the Kubernetes side (inventory.hpp).
#include "inventory.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace neuron::k8s {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> slurp(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<long> number(std::string_view s) {
  long v = 0;
  auto [p, e] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (e != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

/// "nnq12" -> 12; "nnq1-core3" -> {1, 3}.
std::optional<unsigned> device_name(std::string_view n) {
  if (!n.starts_with("nnq")) return std::nullopt;
  auto v = number(n.substr(3));
  if (!v || *v < 0) return std::nullopt;
  return static_cast<unsigned>(*v);
}

std::optional<std::pair<unsigned, unsigned>> core_name(std::string_view n) {
  const auto dash = n.find("-core");
  if (dash == std::string_view::npos) return std::nullopt;
  auto d = device_name(n.substr(0, dash));
  auto c = number(n.substr(dash + 5));
  if (!d || !c || *c < 0) return std::nullopt;
  return std::pair{*d, static_cast<unsigned>(*c)};
}

}  // namespace

std::vector<Device> scan(const Roots& roots) {
  const fs::path cls = fs::path(roots.sys) / "class/nnq";
  std::map<unsigned, Device> devs;
  std::vector<std::pair<unsigned, Core>> cores;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cls, ec)) {
    const std::string n = e.path().filename().string();
    if (auto d = device_name(n)) {
      Device dv;
      dv.index = *d;
      dv.id = n;
      if (auto s = slurp(e.path() / "device/numa_node"))
        if (auto v = number(*s)) dv.numa_node = static_cast<int>(*v);
      const bool node = present(fs::path(roots.dev) / n);
      const auto state = slurp(e.path() / "state");
      if (!node) {
        dv.why = "removed (no " + roots.dev + "/" + n + ")";
      } else if (state && *state != "online") {
        dv.why = "state " + *state;
      } else {
        dv.healthy = true;
      }
      dv.present = node;
      devs[dv.index] = std::move(dv);
    } else if (auto c = core_name(n)) {
      Core core;
      core.core = c->second;
      if (auto s = slurp(e.path() / "core"))
        if (auto v = number(*s); v && *v >= 0) core.core = static_cast<unsigned>(*v);
      core.id = "nnq" + std::to_string(c->first) + "-core" + std::to_string(core.core);
      core.present = present(fs::path(roots.dev) / core.id);
      core.healthy = core.present;
      cores.emplace_back(c->first, std::move(core));
    }
  }
  for (auto& [d, c] : cores) {
    auto it = devs.find(d);
    if (it == devs.end()) continue;  // a core node without its device: being removed
    c.healthy = c.healthy && it->second.healthy;
    it->second.cores.push_back(std::move(c));
  }
  std::vector<Device> out;
  for (auto& [i, d] : devs) {
    std::sort(d.cores.begin(), d.cores.end(),
              [](const Core& a, const Core& b) { return a.core < b.core; });
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Device> merge_seen(const std::vector<Device>& before, std::vector<Device> now) {
  for (const auto& old : before) {
    auto it = std::find_if(now.begin(), now.end(), [&](const Device& d) { return d.id == old.id; });
    if (it == now.end()) {
      Device gone = old;
      gone.healthy = false;
      gone.present = false;
      gone.why = "removed";
      for (auto& c : gone.cores) c.healthy = c.present = false;
      now.push_back(std::move(gone));
      continue;
    }
    for (const auto& oc : old.cores) {
      if (std::none_of(it->cores.begin(), it->cores.end(), [&](const Core& c) { return c.id == oc.id; })) {
        Core gone = oc;
        gone.healthy = gone.present = false;
        it->cores.push_back(std::move(gone));
      }
    }
    std::sort(it->cores.begin(), it->cores.end(),
              [](const Core& a, const Core& b) { return a.core < b.core; });
  }
  std::sort(now.begin(), now.end(), [](const Device& a, const Device& b) { return a.index < b.index; });
  return now;
}

Partition PartitionPolicy::of(const std::string& device_id) const {
  auto it = per_device.find(device_id);
  return it == per_device.end() ? node : it->second;
}

std::optional<Partition> parse_partition(std::string_view s) {
  if (s == "cores") return Partition::cores;
  if (s == "whole") return Partition::whole;
  return std::nullopt;
}

std::vector<Device> offered(const std::vector<Device>& devices, Kind kind, const PartitionPolicy& p) {
  const Partition want = kind == Kind::core ? Partition::cores : Partition::whole;
  std::vector<Device> out;
  for (const auto& d : devices)
    if (p.of(d.id) == want) out.push_back(d);
  return out;
}

std::map<std::string, Unit> units(const std::vector<Device>& devices, Kind kind) {
  std::map<std::string, Unit> out;
  for (const auto& d : devices) {
    if (kind == Kind::device) {
      out[d.id] = Unit{d.id, d.index, d.index, d.numa_node};
      continue;
    }
    for (const auto& c : d.cores) out[c.id] = Unit{c.id, d.index, c.core, d.numa_node};
  }
  return out;
}

std::optional<Refusal> check_ids(const std::map<std::string, Unit>& known,
                                 const std::vector<std::string>& ids, const std::string& field) {
  if (ids.size() > known.size())
    return Refusal{field + ": " + std::to_string(ids.size()) + " IDs asked, only " +
                   std::to_string(known.size()) + " exist"};
  std::set<std::string> seen;
  for (const auto& id : ids) {
    if (!known.count(id)) return Refusal{field + ": unknown ID '" + id.substr(0, 64) + "'"};
    if (!seen.insert(id).second) return Refusal{field + ": ID '" + id + "' given twice"};
  }
  return std::nullopt;
}

namespace {

/// From `free` positions (sorted) pick `n` to add to `have` (sorted
/// positions already chosen on this device): the lowest-starting run of
/// consecutive positions of length |have|+n inside have+free that holds
/// every position of `have`; else `have` plus the lowest free positions.
std::vector<unsigned> pick_on_device(const std::vector<unsigned>& have, const std::vector<unsigned>& free,
                                     std::size_t n) {
  std::set<unsigned> pool(have.begin(), have.end());
  pool.insert(free.begin(), free.end());
  const std::size_t len = have.size() + n;
  for (unsigned start : pool) {
    bool ok = true;
    for (std::size_t k = 0; k < len && ok; ++k) ok = pool.count(start + static_cast<unsigned>(k)) > 0;
    for (unsigned h : have) ok = ok && h >= start && h < start + len;
    if (ok) {
      std::vector<unsigned> out;
      for (std::size_t k = 0; k < len; ++k) {
        const unsigned p = start + static_cast<unsigned>(k);
        if (std::find(have.begin(), have.end(), p) == have.end()) out.push_back(p);
      }
      return out;
    }
  }
  return std::vector<unsigned>(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

Preferred preferred_allocation(const std::map<std::string, Unit>& known,
                               const std::vector<std::string>& available,
                               const std::vector<std::string>& must_include, int size) {
  Preferred r;
  if (auto bad = check_ids(known, available, "available_deviceIDs")) {
    r.refused = bad;
    return r;
  }
  if (auto bad = check_ids(known, must_include, "must_include_deviceIDs")) {
    r.refused = bad;
    return r;
  }
  for (const auto& m : must_include)
    if (std::find(available.begin(), available.end(), m) == available.end()) {
      r.refused = Refusal{"must_include_deviceIDs: '" + m + "' is not in available_deviceIDs"};
      return r;
    }
  if (size < 1 || static_cast<std::size_t>(size) > available.size() ||
      static_cast<std::size_t>(size) < must_include.size()) {
    r.refused = Refusal{"allocation_size " + std::to_string(size) + ": must be at least " +
                        std::to_string(std::max<std::size_t>(1, must_include.size())) + " and at most " +
                        std::to_string(available.size()) + " (the available IDs)"};
    return r;
  }
  // per device: positions already chosen (must) and free (available - must)
  struct Dev {
    std::vector<unsigned> have, free;
    int numa = -1;
  };
  std::map<unsigned, Dev> devs;
  std::set<std::string> must(must_include.begin(), must_include.end());
  for (const auto& id : available) {
    const Unit& u = known.at(id);
    Dev& d = devs[u.device];
    d.numa = u.numa_node;
    (must.count(id) ? d.have : d.free).push_back(u.pos);
  }
  for (auto& [i, d] : devs) {
    std::sort(d.have.begin(), d.have.end());
    std::sort(d.free.begin(), d.free.end());
  }
  std::size_t need = static_cast<std::size_t>(size) - must.size();
  std::set<int> must_numa;
  for (const auto& m : must) must_numa.insert(known.at(m).numa_node);

  std::map<unsigned, std::vector<unsigned>> chosen;  // device -> added positions
  if (need > 0) {
    // 1. one device: holding must_include first, then on its NUMA node, then fewest free, then lowest N
    std::optional<unsigned> best;
    auto key = [&](unsigned i) {
      const Dev& d = devs.at(i);
      return std::tuple(d.have.empty() ? 1 : 0, must_numa.empty() || must_numa.count(d.numa) ? 0 : 1,
                        d.free.size(), i);
    };
    for (const auto& [i, d] : devs)
      if (d.free.size() >= need && (!best || key(i) < key(*best))) best = i;
    if (best && (must.empty() || !devs.at(*best).have.empty() ||
                 (must_numa.size() == 1 && must_numa.count(devs.at(*best).numa)))) {
      chosen[*best] = pick_on_device(devs.at(*best).have, devs.at(*best).free, need);
    } else {
      // 2. one NUMA node (that of must_include, if they share one), else 3. anywhere;
      //    devices with the most free first (fewest devices), then lowest N
      std::map<int, std::size_t> per_numa;
      for (const auto& [i, d] : devs) per_numa[d.numa] += d.free.size();
      std::optional<int> numa;
      for (const auto& [n, cnt] : per_numa) {
        if (n < 0 || cnt < need) continue;
        if (!must_numa.empty() && !(must_numa.size() == 1 && must_numa.count(n))) continue;
        if (!numa) numa = n;
      }
      std::vector<unsigned> order;
      for (const auto& [i, d] : devs)
        if (!numa || d.numa == *numa) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
        const Dev &x = devs.at(a), &y = devs.at(b);
        if (x.have.empty() != y.have.empty()) return !x.have.empty();
        return x.free.size() > y.free.size();
      });
      for (unsigned i : order) {
        if (need == 0) break;
        const std::size_t take = std::min(need, devs.at(i).free.size());
        if (take == 0) continue;
        chosen[i] = pick_on_device(devs.at(i).have, devs.at(i).free, take);
        need -= take;
      }
    }
  }
  // the answer: must_include plus the chosen, sorted by device then position
  std::vector<std::pair<std::pair<unsigned, unsigned>, std::string>> out;
  for (const auto& m : must) out.push_back({{known.at(m).device, known.at(m).pos}, m});
  for (const auto& [i, ps] : chosen)
    for (unsigned p : ps)
      for (const auto& id : available) {
        const Unit& u = known.at(id);
        if (u.device == i && u.pos == p && !must.count(id)) out.push_back({{i, p}, id});
      }
  std::sort(out.begin(), out.end());
  for (auto& [k, id] : out) r.ids.push_back(id);
  return r;
}

std::string resource_name(const std::string& prefix, Kind kind) {
  return prefix + (kind == Kind::core ? "/core" : "/device");
}

std::string cdi_name(const std::string& prefix, Kind kind, const std::string& id) {
  return resource_name(prefix, kind) + "=" + id;
}

std::string cdi_spec_of(const std::string& kind, const std::vector<CdiEntry>& entries,
                        const std::string& dev_root) {
  nlohmann::ordered_json spec;
  spec["cdiVersion"] = kCdiVersion;
  spec["kind"] = kind;
  auto list = nlohmann::ordered_json::array();
  for (const auto& e : entries) {
    auto nodes = nlohmann::ordered_json::array();
    for (const auto& id : e.nodes) {
      nlohmann::ordered_json n;
      n["path"] = "/dev/" + id;
      if (dev_root != "/dev") n["hostPath"] = dev_root + "/" + id;
      n["type"] = "c";
      n["permissions"] = "rw";
      nodes.push_back(std::move(n));
    }
    nlohmann::ordered_json d;
    d["name"] = e.name;
    d["containerEdits"]["deviceNodes"] = std::move(nodes);
    list.push_back(std::move(d));
  }
  spec["devices"] = std::move(list);
  return spec.dump(2) + "\n";
}

std::string cdi_spec(const std::string& prefix, Kind kind, const std::vector<Device>& devices,
                     const std::string& dev_root, std::size_t* count) {
  std::vector<CdiEntry> entries;
  for (const auto& d : devices) {
    if (!d.present) continue;
    if (kind == Kind::device) {
      entries.push_back({d.id, {d.id}});
      continue;
    }
    for (const auto& c : d.cores)
      if (c.present) entries.push_back({c.id, {c.id}});
  }
  if (count) *count = entries.size();
  return cdi_spec_of(resource_name(prefix, kind), entries, dev_root);
}

std::optional<std::string> write_atomic(const std::string& dir, const std::string& name,
                                        const std::string& text) {
  auto failed = [](const std::string& what) { return what + ": " + std::strerror(errno); };
  std::string tmp = dir + "/." + name + ".XXXXXX";
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return failed("create " + tmp);
  std::optional<std::string> err;
  for (std::size_t off = 0; !err && off < text.size();) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno != EINTR) err = failed("write " + tmp);
    if (n > 0) off += static_cast<std::size_t>(n);
  }
  if (!err && fchmod(fd, 0644) != 0) err = failed("chmod " + tmp);
  if (!err && fsync(fd) != 0) err = failed("fsync " + tmp);
  if (close(fd) != 0 && !err) err = failed("close " + tmp);
  const std::string path = dir + "/" + name;
  if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = failed("rename " + tmp + " to " + path);
  if (err) {
    unlink(tmp.c_str());
    return err;
  }
  // the rename itself is durable once the directory is
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return std::nullopt;
}

}  // namespace neuron::k8s
