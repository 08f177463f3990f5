// SPDX-License-Identifier: MIT
//
// neuron-nq top: a live per-process view of who uses the devices, built
// only from /proc/<pid>/fdinfo (the driver's nnq-* keys,
// docs/metrics.md#fdinfo) and /proc/<pid>/{comm,status}: no ioctl, no
// netlink, so any user may run it (it sees the processes /proc lets it
// read: its own, or every one as root). docs/cli-json.md#top.
#include <CLI/CLI.hpp>
#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "output.hpp"

namespace neuron::cli {
namespace {

/// One open file of /dev/nnqN as its fdinfo shows it (one per client id:
/// two descriptors of a file are one client).
struct Client {
  unsigned pid = 0;
  unsigned uid = 0;
  std::string comm;
  std::string device;  // "/dev/nnq0", the fd's link
  std::uint64_t id = 0;
  std::uint64_t cores = 0;
  std::uint64_t mem_device_kib = 0;
  std::uint64_t mem_rings_kib = 0;
  std::uint64_t insns = 0;    // sum of nnq-insns-c*-*
  std::uint64_t records = 0;  // sum of nnq-queue-*-records
  std::uint64_t lost = 0;     // sum of nnq-queue-*-overflow and -drops
  unsigned queues = 0;
  std::map<std::string, std::uint64_t> busy_ns;  // "c0-pe": nnq-engine-c0-pe
};

/// /proc/PID/comm: the name and the newline the kernel ends it with. The
/// name itself may hold newlines (PR_SET_NAME takes any bytes): all of it
/// is kept, only the last newline goes.
std::string read_comm(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

unsigned uid_of(const std::string& status_path) {
  std::ifstream f(status_path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream in(line.substr(4));
      unsigned real = 0;
      in >> real;
      return real;
    }
  return 0;
}

/// The value of a "key:\tvalue[ unit]" line as a number (hex for nnq-cores).
std::optional<std::uint64_t> value_of(const std::string& v, int base) {
  try {
    std::size_t end = 0;
    const std::uint64_t n = std::stoull(v, &end, base);
    return n;
  } catch (...) {
    return std::nullopt;
  }
}

/// Parse one fdinfo; nullopt if it is not a file of ours (no nnq-driver).
std::optional<Client> parse_fdinfo(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  Client c;
  bool ours = false;
  std::string line;
  while (std::getline(f, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    const auto has = [&](const char* suffix) {
      const std::string s(suffix);
      return key.size() > s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
    };
    if (key == "nnq-driver") ours = v == "nnq";
    else if (key == "nnq-client-id") c.id = value_of(v, 10).value_or(0);
    else if (key == "nnq-cores") c.cores = value_of(v, 16).value_or(0);
    else if (key == "nnq-memory-device") c.mem_device_kib = value_of(v, 10).value_or(0);
    else if (key == "nnq-memory-rings") c.mem_rings_kib = value_of(v, 10).value_or(0);
    else if (key.rfind("nnq-insns-", 0) == 0) c.insns += value_of(v, 10).value_or(0);
    else if (key.rfind("nnq-engine-", 0) == 0) {
      if (const auto ns = value_of(v, 10)) c.busy_ns[key.substr(11)] = *ns;  // "<N> ns"
    }
    else if (key.rfind("nnq-queue-", 0) == 0 && has("-records")) {
      c.records += value_of(v, 10).value_or(0);
      ++c.queues;
    } else if (key.rfind("nnq-queue-", 0) == 0 && (has("-overflow") || has("-drops")))
      c.lost += value_of(v, 10).value_or(0);
  }
  if (!ours) return std::nullopt;
  return c;
}

/// Every client under `proc` (a /proc), sorted by pid then client id.
std::vector<Client> scan(const std::string& proc) {
  std::map<std::pair<unsigned, std::uint64_t>, Client> found;
  DIR* d = ::opendir(proc.c_str());
  if (!d) return {};
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const unsigned long pid = std::strtoul(e->d_name, &end, 10);
    if (!end || *end != '\0' || pid == 0) continue;
    const std::string base = proc + "/" + e->d_name;
    DIR* fds = ::opendir((base + "/fd").c_str());
    if (!fds) continue;  // not ours to read
    while (const dirent* fe = ::readdir(fds)) {
      if (fe->d_name[0] == '.') continue;
      char target[256];
      const ssize_t n = ::readlink((base + "/fd/" + fe->d_name).c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      const std::string dev(target);
      if (dev.rfind("/dev/" NEURON_DEV_NAME, 0) != 0) continue;
      auto c = parse_fdinfo(base + "/fdinfo/" + fe->d_name);
      if (!c) continue;
      c->pid = static_cast<unsigned>(pid);
      c->device = dev;
      c->comm = read_comm(base + "/comm");
      c->uid = uid_of(base + "/status");
      found.emplace(std::make_pair(c->pid, c->id), *c);
    }
    ::closedir(fds);
  }
  ::closedir(d);
  std::vector<Client> out;
  for (auto& [k, c] : found) out.push_back(std::move(c));
  return out;
}

struct TopArgs {
  bool json = false;
  double interval = 1.0;
  std::uint64_t count = 0;  // 0: until Ctrl-C
  std::string root;         // hidden, for tests: /proc under this directory
};

int cmd_top(const TopArgs& a) {
  const std::string proc = a.root.empty() ? "/proc" : a.root + "/proc";
  const bool tty = ::isatty(STDOUT_FILENO) && !a.json;
  std::map<std::pair<unsigned, std::uint64_t>, Client> prev;
  auto last = std::chrono::steady_clock::now();
  for (std::uint64_t report = 0; a.count == 0 || report < a.count; ++report) {
    if (report > 0) std::this_thread::sleep_for(std::chrono::duration<double>(a.interval));
    const auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - last).count();
    last = now;
    const std::vector<Client> clients = scan(proc);
    std::map<std::pair<unsigned, std::uint64_t>, Client> cur;
    // a rate needs the same client in the previous report, and a counter
    // that did not go down (counter_rate: unknown, "-" and null, if it did)
    const auto rate = [&](const Client& c, std::uint64_t Client::*field) -> std::optional<double> {
      const auto it = prev.find({c.pid, c.id});
      if (report == 0 || it == prev.end()) return std::nullopt;
      return counter_rate(it->second.*field, c.*field, secs);
    };
    // the busiest of the client's engines over the interval, in percent:
    // an engine must be in both reports (busy_percent: never negative)
    const auto busiest = [&](const Client& c) -> std::optional<double> {
      const auto it = prev.find({c.pid, c.id});
      if (report == 0 || it == prev.end()) return std::nullopt;
      std::optional<double> top;
      for (const auto& [engine, ns] : c.busy_ns) {
        const auto was = it->second.busy_ns.find(engine);
        if (was == it->second.busy_ns.end()) continue;
        if (const auto p = busy_percent(was->second, ns, secs); p && (!top || *p > *top)) top = p;
      }
      return top;
    };
    if (a.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& c : clients) {
        const auto ips = rate(c, &Client::insns), rps = rate(c, &Client::records);
        const auto busy = busiest(c);
        nlohmann::json cores = nlohmann::json::array();
        for (unsigned i = 0; i < 64; ++i)
          if (c.cores >> i & 1) cores.push_back(i);
        nlohmann::json engines = nlohmann::json::object();
        for (const auto& [engine, ns] : c.busy_ns) engines[engine] = ns;
        list.push_back({{"pid", c.pid}, {"uid", c.uid}, {"comm", c.comm}, {"device", c.device},
                        {"client_id", c.id}, {"cores", cores},
                        {"memory_device_kib", c.mem_device_kib}, {"memory_rings_kib", c.mem_rings_kib},
                        {"queues", c.queues}, {"instructions", c.insns}, {"records", c.records}, {"lost", c.lost},
                        {"instructions_per_s", ips ? nlohmann::json(*ips) : nlohmann::json(nullptr)},
                        {"records_per_s", rps ? nlohmann::json(*rps) : nlohmann::json(nullptr)},
                        {"engine_busy_ns", engines},
                        {"busy_percent", busy ? nlohmann::json(*busy) : nlohmann::json(nullptr)}});
      }
      fmt::print("{}\n", json_text(nlohmann::json{{"schema", kJsonSchemaVersion},
                                                  {"object", "top"},
                                                  {"report", report},
                                                  {"interval_s", report ? nlohmann::json(secs) : nlohmann::json(nullptr)},
                                                  {"clients", list}}));
    } else {
      if (tty) fmt::print("\033[H\033[2J");  // refresh in place: home, clear
      fmt::print("{:>7} {:>6} {:<15} {:<10} {:<8} {:>5} {:>12} {:>12} {:>10} {:>10} {:>9}\n", "PID", "UID",
                 "COMMAND", "DEVICE", "CORES", "BUSY%", "INSNS/S", "RECORDS/S", "LOST", "DEV KiB", "RING KiB");
      for (const auto& c : clients) {
        const auto ips = rate(c, &Client::insns), rps = rate(c, &Client::records);
        const auto num = [](const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); };
        // the name is the tenant's: escaped, so it cannot forge a line
        fmt::print("{:>7} {:>6} {:<15} {:<10} {:<8} {:>5} {:>12} {:>12} {:>10} {:>10} {:>9}\n", c.pid, c.uid,
                   text_escape(c.comm), text_escape(c.device.substr(5)), c.cores ? core_list_text(c.cores) : "-",
                   num(busiest(c)), num(ips), num(rps), c.lost, c.mem_device_kib, c.mem_rings_kib);
      }
      if (clients.empty()) fmt::print("no open " NEURON_DEV_NAME " file this user can see\n");
      if (!tty) fmt::print("\n");
    }
    std::fflush(stdout);
    for (const auto& c : clients) cur.emplace(std::make_pair(c.pid, c.id), c);
    prev = std::move(cur);
  }
  return kExitOk;
}

}  // namespace

void add_top_commands(CLI::App& app, Commands& out) {
  auto ta = std::make_shared<TopArgs>();
  auto* top = app.add_subcommand(
      "top", "Per process: cores, busiest engine's utilisation, instructions/s, records/s, losses and memory of every "
             "open device file, from fdinfo (docs/cli-json.md#top)");
  top->add_flag("--json", ta->json, "JSON Lines: one object per report (docs/cli-json.md)");
  top->add_option("--interval", ta->interval, "Seconds between reports")
      ->capture_default_str()
      ->check(seconds_option(0.01, 3600));
  top->add_option("--count", ta->count, "Stop after this many reports (default: until Ctrl-C)")
      ->transform(number_option(UINT64_MAX));
  top->add_option("--root", ta->root, "Read /proc under this directory (tests)")->group("");
  out.push_back({top, [ta] { return cmd_top(*ta); }});
}

}  // namespace neuron::cli
