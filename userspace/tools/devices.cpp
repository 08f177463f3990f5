// SPDX-License-Identifier: MIT
//
// Device samples for list and metrics (devices.hpp): sysfs, /proc and the
// device node's read-only ioctls.
#include "devices.hpp"

#include "number.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "libneuron/decode.hpp"

namespace neuron::cli {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// A sysfs value: decimal or 0x hex (the CLI's one parser).
std::optional<std::uint64_t> number(std::string_view s) { return detail::parse_number(s); }

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    line = trim(line);
    if (line.empty()) break;
    const auto sp = line.find_first_of(" \t");
    out.push_back(line.substr(0, sp));
    if (sp == std::string_view::npos) break;
    line.remove_prefix(sp);
  }
  return out;
}

/// The whole file, or an Error naming it.
Result<std::string> slurp(const std::string& path) {
  errno = 0;
  std::ifstream f(path);
  if (!f) return unexpected(Error::from_errno(errno ? errno : ENOENT, "read " + path));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return unexpected(Error::from_errno(errno ? errno : EIO, "read " + path));
  return ss.str();
}

/// A counter file of the device, parsed; errors go to s.counter_errors. A
/// file `since_driver` only newer drivers have is unknown, not an error,
/// when it does not exist.
std::optional<std::vector<CounterLine>> counters(DeviceSample& s, const std::string& dir, const char* file,
                                                 unsigned min_values, bool since_driver = false) {
  auto text = slurp(dir + "/" + file);
  if (!text) {
    if (since_driver && text.error().code == std::errc::no_such_file_or_directory) return std::nullopt;
    s.counter_errors.push_back(text.error().message());
    return std::nullopt;
  }
  auto lines = parse_counter_lines(*text, dir + "/" + file, min_values);
  if (!lines) {
    s.counter_errors.push_back(source_error(lines.error()));
    return std::nullopt;
  }
  return std::move(*lines);
}

CoreSample& core_of(DeviceSample& s, unsigned c) {
  for (auto& x : s.cores)
    if (x.core == c) return x;
  s.cores.push_back(CoreSample{});
  s.cores.back().core = c;
  return s.cores.back();
}

/// The value of the line `name`, nullopt when the file has no such line.
std::optional<std::uint64_t> named(const std::vector<CounterLine>& lines, const char* name) {
  for (const auto& l : lines)
    if (!l.core && l.name == name) return l.values.at(0);
  return std::nullopt;
}

}  // namespace

std::string source_error(const Error& e) {
  // a file that does not parse: the parser's words name the file and line
  // (errc::bad_message would add "malformed netlink message")
  return e.code == make_error_code(errc::bad_message) ? e.what : e.message();
}

Result<std::vector<CounterLine>> parse_counter_lines(std::string_view text, const std::string& file,
                                                     unsigned min_values) {
  std::vector<CounterLine> out;
  unsigned lineno = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++lineno;
    const auto w = words(line);
    if (w.empty()) continue;
    const auto bad = [&](std::string_view why) {
      return unexpected(errc::bad_message, fmt::format("{} line {}: '{}': {}", file, lineno, trim(line), why));
    };
    CounterLine cl;
    if (w[0].starts_with("core")) {
      const auto c = number(w[0].substr(4));
      if (!c || *c > 1024) return bad("not core<N>");
      cl.core = static_cast<unsigned>(*c);
    } else {
      cl.name = std::string(w[0]);
    }
    for (std::size_t i = 1; i < w.size(); ++i) {
      const auto v = number(w[i]);
      if (!v) return bad(fmt::format("value {} is not a number", i));
      cl.values.push_back(*v);
    }
    if (cl.values.size() < min_values) return bad(fmt::format("fewer than {} values", min_values));
    out.push_back(std::move(cl));
  }
  return out;
}

std::optional<unsigned> parse_status_uid(std::string_view status) {
  while (!status.empty()) {
    const std::size_t nl = status.find('\n');
    const std::string_view line = status.substr(0, nl);
    status.remove_prefix(nl == std::string_view::npos ? status.size() : nl + 1);
    if (!line.starts_with("Uid:")) continue;
    const auto w = words(line.substr(4));
    if (w.empty()) return std::nullopt;
    const auto v = number(w[0]);
    if (!v || *v > 0xffffffffu) return std::nullopt;
    return static_cast<unsigned>(*v);
  }
  return std::nullopt;
}

unsigned DeviceSample::errors() const {
  return static_cast<unsigned>(!info_error.empty()) + static_cast<unsigned>(!owners_error.empty()) +
         static_cast<unsigned>(counter_errors.size()) + static_cast<unsigned>(!engines_error.empty());
}

std::vector<unsigned> device_indices(const std::string& sysfs_class) {
  std::vector<unsigned> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(sysfs_class, ec)) {
    const std::string n = e.path().filename().string();
    if (!n.starts_with(NEURON_DEV_NAME)) continue;
    const auto v = number(std::string_view(n).substr(sizeof(NEURON_DEV_NAME) - 1));
    if (v && *v < 1u << 20) out.push_back(static_cast<unsigned>(*v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

DeviceSample sample_device(unsigned index, const Sources& src) {
  namespace fs = std::filesystem;
  DeviceSample s;
  s.index = index;
  s.name = fmt::format(NEURON_DEV_NAME "{}", index);
  s.path = src.dev_dir + "/" + s.name;
  const std::string dir = src.sysfs_class + "/" + s.name;

  // The PCI function: the class device's "device" link names it, and its
  // directory has numa_node and local_cpulist (the PCI core's attributes).
  std::error_code ec;
  const fs::path pci = fs::canonical(dir + "/device", ec);
  if (!ec) s.pci_address = pci.filename().string();
  if (auto t = slurp(dir + "/device/numa_node")) {
    const auto v = trim(*t);
    int n = 0;
    const auto [p, e] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (e == std::errc() && p == v.data() + v.size()) s.numa_node = n;
  }
  if (auto t = slurp(dir + "/device/local_cpulist")) s.local_cpulist = std::string(trim(*t));

  // DEVICE_INFO, and ENGINE_STATUS of every engine (read-only ioctls: they
  // claim no core, docs/decisions/0005-tenancy.md).
  // read-only is enough (and all a member of group neuron without write
  // access gets): DEVICE_INFO and ENGINE_STATUS are read-only ioctls
  if (auto dev = Device::open_read_only(s.path)) {
    if (auto info = dev->info()) {
      s.info = *info;
      if (src.engines) {
        for (unsigned c = 0; c < info->num_cores && s.engines_error.empty(); ++c)
          for (unsigned e = 0; e < info->engines_per_core; ++e) {
            auto st = dev->engine_status(c, e);
            if (!st) {
              s.engines_error = st.error().message();
              s.engines.clear();
              break;
            }
            s.engines.push_back({c, e, st->state, st->pc, st->soft_reset_counter, st->last_error, st->exec_count});
          }
      }
    } else {
      s.info_error = info.error().message();
    }
  } else {
    s.info_error = dev.error().message();
  }
  if (!s.info && src.engines) s.engines_error = "no device information: " + s.info_error;

  // Owners, and each owner's real uid from /proc (the PID is as this
  // process's PID namespace sees it; 0 means invisible here).
  if (auto owners = read_core_owners(dir + "/core_owners")) {
    for (const auto& o : *owners) {
      CoreSample& c = core_of(s, o.core);
      c.owner = o;
      if (!o.is_free() && *o.pid > 0)
        if (auto st = slurp(fmt::format("{}/{}/status", src.proc, *o.pid))) c.uid = parse_status_uid(*st);
    }
  } else {
    s.owners_error = source_error(owners.error());
  }

  if (auto l = counters(s, dir, "intr_counts", 1)) {
    s.intr_known = true;
    for (const auto& x : *l) {
      if (!x.core) continue;
      auto& c = core_of(s, *x.core);
      for (std::size_t i = 0; i < c.intr.size() && i < x.values.size(); ++i) c.intr[i] = x.values[i];
    }
    s.throttle_edges = named(*l, "throttle");
    s.spurious = named(*l, "spurious");
  }
  if (auto l = counters(s, dir, "threshold_counts", 1)) {
    s.threshold_known = true;
    for (const auto& x : *l) {
      if (!x.core) continue;
      auto& c = core_of(s, *x.core);
      for (std::size_t i = 0; i < c.threshold.size() && i < x.values.size(); ++i) c.threshold[i] = x.values[i];
    }
  }
  if (auto l = counters(s, dir, "edge_counts", 1)) {
    s.edges_known = true;
    for (const auto& x : *l)
      if (x.core) core_of(s, *x.core).notific_edges = x.values[0];
    s.fault_edges = named(*l, "fault");
  }
  if (auto l = counters(s, dir, "intr_storms", 2)) {
    s.storms_known = true;
    for (const auto& x : *l)
      if (x.core) {
        auto& c = core_of(s, *x.core);
        c.storms = x.values[0];
        c.storm_masked = static_cast<std::uint32_t>(x.values[1]);
      }
  }
  if (auto l = counters(s, dir, "axi_dropped", 1, true)) {
    s.axi_known = true;
    for (const auto& x : *l)
      if (x.core) core_of(s, *x.core).axi_dropped = x.values[0];
  }
  if (auto l = counters(s, dir, "fault_counts", 1)) {
    s.faults.emplace();
    for (const auto& x : *l)
      if (!x.core) (*s.faults)[x.name] = x.values[0];
  }
  if (auto l = counters(s, dir, "reset_counts", 1)) {
    s.resets.emplace();
    for (const auto& x : *l) {
      if (x.core) continue;
      if (x.name == "records_lost") s.records_lost = x.values[0];
      else (*s.resets)[x.name] = x.values[0];
    }
  }
  if (auto l = counters(s, dir, "event_fanout", 1)) {
    s.fanout_edges = named(*l, "edges");
    s.fanout_copies = named(*l, "copies");
  }
  std::sort(s.cores.begin(), s.cores.end(), [](const CoreSample& a, const CoreSample& b) { return a.core < b.core; });
  return s;
}

std::vector<DeviceSample> sample_devices(const Sources& src) {
  std::vector<DeviceSample> out;
  for (unsigned n : device_indices(src.sysfs_class)) out.push_back(sample_device(n, src));
  return out;
}

std::string core_owner_text(const CoreSample& c) {
  if (!c.owner) return "unknown";
  if (c.owner->is_free()) return "free";
  if (c.uid) return fmt::format("uid {} {}", *c.uid, owner_text(*c.owner));
  return owner_text(*c.owner);
}

}  // namespace neuron::cli
