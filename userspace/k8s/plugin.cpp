// SPDX-License-Identifier: MIT
//
// neuron-device-plugin: the kubelet device-plugin API v1beta1
// (proto/deviceplugin_v1beta1.proto) for Neuron cores and whole devices.
// Serves one socket per resource under <kubelet-dir>/device-plugins/, then
// registers each with the kubelet; registers again when kubelet.sock is
// re-created. Health comes from the inventory scan (inventory.hpp) every
// --poll-ms and from the driver's uevents (NNQ_STATE). Each device is
// offered either as its cores or whole, never both (--partition,
// --device-partition). The CDI specs of what is offered are written under
// --cdi-dir at start and again on every change of the nodes, before the
// kubelet hears of it, and removed on exit. docs/k8s.md.
#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>
#include <libneuron/tenancy.hpp>

#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "deviceplugin_v1beta1.grpc.pb.h"
#include "inventory.hpp"

namespace neuron::k8s {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
  Roots roots;
  std::string kubelet_dir = "/var/lib/kubelet";
  std::string prefix = "neuron.example";
  int poll_ms = 200;
  bool uevents = true;
  double reclaim_grace = 5.0;
  std::string cdi_dir = "/var/run/cdi";  ///< empty: no CDI spec, no CDI names
  PartitionPolicy partition;
  std::string plugin_dir() const { return kubelet_dir + "/device-plugins"; }
};

void log(const std::string& s) {
  std::fprintf(stderr, "neuron-device-plugin: %s\n", s.c_str());
  std::fflush(stderr);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

/// An fd closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

/// The devices as last scanned, the uevent states, and a version that
/// ListAndWatch streams wait on.
class State {
 public:
  /// Apply a scan (and the uevent states) and wake the streams if any
  /// health or membership changed.
  void update(std::vector<Device> fresh) {
    std::lock_guard lk(mu_);
    for (auto& d : fresh) {
      auto it = uevent_.find(d.id);
      if (d.healthy && it != uevent_.end() && it->second != "online") {
        d.healthy = false;
        d.why = "uevent NNQ_STATE=" + it->second;
        for (auto& c : d.cores) c.healthy = false;
      }
    }
    auto merged = merge_seen(devices_, std::move(fresh));
    if (summary(merged) != summary(devices_)) {
      for (const auto& d : merged) {
        auto old = std::find_if(devices_.begin(), devices_.end(), [&](const Device& o) { return o.id == d.id; });
        if (old == devices_.end() || old->healthy != d.healthy)
          log(d.id + (d.healthy ? " Healthy" : " Unhealthy: " + d.why));
      }
      devices_ = std::move(merged);
      ++version_;
      cv_.notify_all();
    }
  }
  void set_uevent(const std::string& dev, const std::string& state) {
    std::lock_guard lk(mu_);
    uevent_[dev] = state;
  }
  /// The node came or went (ACTION=add/remove): its last NNQ_STATE was the
  /// old device's, and a device probed again sends no "online" of its own.
  void forget_uevent(const std::string& dev) {
    std::lock_guard lk(mu_);
    uevent_.erase(dev);
  }
  void stop() {
    std::lock_guard lk(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  /// Wait up to `ms` for a version other than `seen`; the devices and the
  /// version, or nullopt on a timeout or a stop.
  std::optional<std::pair<std::uint64_t, std::vector<Device>>> wait(std::uint64_t seen, int ms) {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(ms), [&] { return stopping_ || version_ != seen; });
    if (stopping_ || version_ == seen) return std::nullopt;
    return std::pair{version_, devices_};
  }
  std::vector<Device> devices() {
    std::lock_guard lk(mu_);
    return devices_;
  }
  bool stopping() {
    std::lock_guard lk(mu_);
    return stopping_;
  }

 private:
  static std::string summary(const std::vector<Device>& ds) {
    std::string s;
    for (const auto& d : ds) {
      s += d.id + (d.healthy ? "+" : "-") + std::to_string(d.numa_node) + ";";
      for (const auto& c : d.cores) s += c.id + (c.healthy ? "+" : "-") + ";";
    }
    return s;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Device> devices_;
  std::map<std::string, std::string> uevent_;
  std::uint64_t version_ = 0;
  bool stopping_ = false;
};

/// The plugin's CDI specs under --cdi-dir, one file per kind, of the nodes
/// offered now (docs/k8s.md#cdi). Only the main loop calls start, sync and
/// remove_all; the services read current().
class CdiSpecs {
 public:
  explicit CdiSpecs(const Options& o) : o_(o) {}

  /// "<prefix>-core_device-plugin.cdi-0.5.0.json": vendor-class first, as
  /// CDI names its spec files, then who wrote it and the spec's cdiVersion.
  std::string file_name(Kind k) const {
    return stem(k) + kCdiVersion + ".json";
  }

  /// Make the directory and remove what a plugin that did not exit (a
  /// SIGKILL, a crash) or one of another cdiVersion left of ours: a second
  /// spec of the same devices in one directory is a conflict to a runtime,
  /// which then resolves neither.
  void start() {
    if (o_.cdi_dir.empty()) {
      log("CDI: no --cdi-dir: no spec written, Allocate returns no CDI names");
      return;
    }
    std::error_code ec;
    fs::create_directories(o_.cdi_dir, ec);
    if (ec) log("CDI: cannot make " + o_.cdi_dir + ": " + ec.message());
    for (const auto& e : fs::directory_iterator(o_.cdi_dir, ec)) {
      const std::string n = e.path().filename().string();
      for (Kind k : {Kind::core, Kind::device}) {
        const bool spec = n.starts_with(stem(k)) && n.ends_with(".json");
        const bool tmp = n.starts_with("." + stem(k));
        std::error_code ec2;
        if ((spec || tmp) && fs::remove(e.path(), ec2))
          log("CDI: removed " + e.path().string() + ", left by an earlier run");
      }
    }
  }

  /// Bring the specs in line with `scanned`: a kind's spec is rewritten
  /// when its text changes, removed when nothing of that kind is offered.
  /// A failure is logged once and retried at the next call; meanwhile
  /// Allocate returns no CDI names of that kind.
  void sync(const std::vector<Device>& scanned) {
    if (o_.cdi_dir.empty()) return;
    for (Kind k : {Kind::core, Kind::device}) {
      const auto i = static_cast<std::size_t>(k);
      std::size_t n = 0;
      std::string text = cdi_spec(o_.prefix, k, offered(scanned, k, o_.partition), o_.roots.dev, &n);
      if (n == 0) text.clear();
      if (current_[i] && text == written_[i]) continue;
      const std::string path = o_.cdi_dir + "/" + file_name(k);
      std::optional<std::string> err;
      if (text.empty()) {
        std::error_code ec;
        const bool was = fs::remove(path, ec);
        if (ec) err = "remove " + path + ": " + ec.message();
        else if (was) log("CDI: removed " + path + ": no " + resource_name(o_.prefix, k) + " offered");
      } else {
        err = write_atomic(o_.cdi_dir, file_name(k), text);
        if (!err)
          log("CDI: wrote " + path + ": kind " + resource_name(o_.prefix, k) + ", " + std::to_string(n) +
              " CDI devices");
      }
      if (err) {
        if (*err != error_[i])
          log("CDI: " + *err + "; Allocate returns no CDI names of " + resource_name(o_.prefix, k) +
              " until the spec is written");
        error_[i] = *err;
        current_[i] = false;
        continue;
      }
      error_[i].clear();
      written_[i] = std::move(text);
      current_[i] = true;
    }
  }

  /// On exit: the specs removed (the devices are no longer handed out).
  void remove_all() {
    if (o_.cdi_dir.empty()) return;
    for (Kind k : {Kind::core, Kind::device}) {
      current_[static_cast<std::size_t>(k)] = false;
      std::error_code ec;
      const std::string path = o_.cdi_dir + "/" + file_name(k);
      if (fs::remove(path, ec)) log("CDI: removed " + path);
      if (ec) log("CDI: remove " + path + ": " + ec.message());
    }
  }

  /// Whether the kind's spec on disk is that of the nodes offered now.
  bool current(Kind k) const { return current_[static_cast<std::size_t>(k)]; }

 private:
  std::string stem(Kind k) const {
    return o_.prefix + (k == Kind::core ? "-core" : "-device") + "_device-plugin.cdi-";
  }
  const Options& o_;
  std::array<std::string, 2> written_;
  std::array<std::string, 2> error_;
  std::array<std::atomic<bool>, 2> current_{};
};

grpc::Status refuse(const std::string& rpc, const std::string& why) {
  log(rpc + ": refused: " + why);
  return {grpc::StatusCode::INVALID_ARGUMENT, why};
}

/// The processes whose open files are the node `/dev/<id>` (read through
/// <proc>/PID/fd links), for a refusal's message.
std::vector<std::string> holders(const Options& o, const std::string& dev_id, const std::string& core_id) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& p : fs::directory_iterator(o.roots.proc, ec)) {
    const std::string pid = p.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(p.path() / "fd", ec2)) {
      std::error_code ec3;
      const auto t = fs::read_symlink(f.path(), ec3).string();
      if (t == "/dev/" + dev_id || t == "/dev/" + core_id) {
        out.push_back(pid);
        break;
      }
    }
    if (out.size() >= 8) break;
  }
  return out;
}

class PluginService final : public v1beta1::DevicePlugin::Service {
 public:
  PluginService(State& st, const CdiSpecs& cdi, const Options& o, Kind kind)
      : st_(st), cdi_(cdi), o_(o), kind_(kind) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* r) override {
    r->set_pre_start_required(true);
    r->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* w) override {
    std::uint64_t seen = ~std::uint64_t{0};
    while (!ctx->IsCancelled()) {
      auto next = st_.wait(seen, 200);
      if (st_.stopping()) break;
      if (!next) continue;
      seen = next->first;
      v1beta1::ListAndWatchResponse r;
      for (const auto& d : offered(next->second, kind_, o_.partition)) {
        auto add = [&](const std::string& id, bool healthy) {
          auto* dev = r.add_devices();
          dev->set_id(id);
          dev->set_health(healthy ? "Healthy" : "Unhealthy");
          if (d.numa_node >= 0) dev->mutable_topology()->add_nodes()->set_id(d.numa_node);
        };
        if (kind_ == Kind::device)
          add(d.id, d.healthy);
        else
          for (const auto& c : d.cores) add(c.id, c.healthy);
      }
      if (!w->Write(r)) break;
    }
    return grpc::Status::OK;
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* q,
                                      v1beta1::PreferredAllocationResponse* r) override {
    const auto known = units_now();
    for (const auto& c : q->container_requests()) {
      std::vector<std::string> avail(c.available_deviceids().begin(), c.available_deviceids().end());
      std::vector<std::string> must(c.must_include_deviceids().begin(), c.must_include_deviceids().end());
      auto p = preferred_allocation(known, avail, must, c.allocation_size());
      if (p.refused) return refuse("GetPreferredAllocation", p.refused->message);
      auto* out = r->add_container_responses();
      for (const auto& id : p.ids) out->add_deviceids(id);
      log("GetPreferredAllocation " + std::to_string(c.allocation_size()) + " of [" + join(avail) +
          "] must [" + join(must) + "] -> [" + join(p.ids) + "]");
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* q,
                        v1beta1::AllocateResponse* r) override {
    const auto known = units_now();
    const bool cdi = cdi_.current(kind_);
    std::map<std::string, int> given;  // ID -> the container request that asked for it
    for (int i = 0; i < q->container_requests_size(); ++i) {
      const auto& c = q->container_requests(i);
      std::vector<std::string> ids(c.devices_ids().begin(), c.devices_ids().end());
      if (ids.empty()) return refuse("Allocate", "devices_ids: empty");
      if (auto bad = check_ids(known, ids, "devices_ids")) return refuse("Allocate", bad->message);
      for (const auto& id : ids)
        if (auto [it, fresh] = given.emplace(id, i); !fresh)
          return refuse("Allocate", "devices_ids: ID '" + id + "' asked for two containers (container_requests " +
                                        std::to_string(it->second) + " and " + std::to_string(i) + ")");
      auto* out = r->add_container_responses();
      std::set<unsigned> devs;
      std::uint64_t mask = 0;
      std::vector<std::string> nodes;
      for (const auto& id : ids) {
        const Unit& u = known.at(id);
        devs.insert(u.device);
        if (kind_ == Kind::core && u.pos < kMaxCores) mask |= std::uint64_t{1} << u.pos;
        auto* spec = out->add_devices();
        spec->set_container_path("/dev/" + id);
        spec->set_host_path(o_.roots.dev + "/" + id);
        spec->set_permissions("rw");
        if (cdi) out->add_cdi_devices()->set_name(cdi_name(o_.prefix, kind_, id));
        nodes.push_back("/dev/" + id);
      }
      (*out->mutable_envs())["NEURON_DEVICE_NODES"] = join(nodes);
      // libneuron's core list is per device: only when every core is on one
      if (kind_ == Kind::core && devs.size() == 1)
        (*out->mutable_envs())["NEURON_VISIBLE_CORES"] = core_list_text(mask);
      log("Allocate [" + join(ids) + "] -> " + join(nodes));
    }
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest* q,
                                 v1beta1::PreStartContainerResponse*) override {
    const auto known = units_now();
    std::vector<std::string> ids(q->devices_ids().begin(), q->devices_ids().end());
    if (auto bad = check_ids(known, ids, "devices_ids")) return refuse("PreStartContainer", bad->message);
    // The cores to find free: a core ID's own, every core of a whole device
    // (a device's cores are as much in use by a past owner either way).
    struct Want {
      std::string dev, id;
      unsigned core;
    };
    std::vector<Want> want;
    const auto devices = st_.devices();
    for (const auto& id : ids) {
      const Unit& u = known.at(id);
      const std::string dev = "nnq" + std::to_string(u.device);
      if (kind_ == Kind::core) {
        want.push_back({dev, id, u.pos});
        continue;
      }
      for (const auto& d : devices)
        if (d.id == dev)
          for (const auto& c : d.cores) want.push_back({dev, c.id, c.core});
    }
    for (const auto& [dev, id, core] : want) {
      const auto start = Clock::now();
      const auto end = start + std::chrono::milliseconds(static_cast<long>(o_.reclaim_grace * 1000));
      bool was_held = false;
      std::optional<CoreOwner> last;
      for (;;) {
        auto owners = read_core_owners(o_.roots.sys + "/class/nnq/" + dev + "/core_owners");
        last.reset();
        if (owners)
          for (const auto& ow : *owners)
            if (ow.core == core && !ow.is_free()) last = ow;
        if (!last) break;
        if (!was_held)
          log("PreStartContainer: " + id + " still owned by " + owner_text(*last) +
              "; waiting for the driver to free it when that file closes");
        was_held = true;
        if (Clock::now() >= end || g_stop) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
      if (!last) {
        if (was_held) log("PreStartContainer: " + id + " reclaimed: free after " + std::to_string(ms) + " ms");
        continue;
      }
      std::string why = id + ": core still owned by " + owner_text(*last);
      if (*last->pid > 0 && fs::exists(o_.roots.proc + "/" + std::to_string(*last->pid)))
        why += ", a live process; the plugin does not end processes";
      else if (*last->pid == 0)
        why += " outside the plugin's PID namespace (run it with hostPID)";
      else
        why += ", which has exited; its file is still open";
      const auto h = holders(o_, dev, id);
      if (!h.empty()) why += " (held open by PID " + join(h) + ")";
      log("PreStartContainer: refused: " + why);
      return {grpc::StatusCode::FAILED_PRECONDITION, why};
    }
    return grpc::Status::OK;
  }

 private:
  /// The units of this resource now: those of the devices offered as it.
  std::map<std::string, Unit> units_now() {
    return units(offered(st_.devices(), kind_, o_.partition), kind_);
  }

  State& st_;
  const CdiSpecs& cdi_;
  const Options& o_;
  Kind kind_;
};

/// One resource: its service, socket and server.
struct Endpoint {
  Kind kind;
  std::string sock;  // file name under the device-plugins directory
  std::unique_ptr<PluginService> svc;
  std::unique_ptr<grpc::Server> server;
};

bool serve(Endpoint& ep, const Options& o) {
  const std::string path = o.plugin_dir() + "/" + ep.sock;
  std::error_code ec;
  fs::remove(path, ec);
  grpc::ServerBuilder b;
  b.AddListeningPort("unix://" + path, grpc::InsecureServerCredentials());
  b.RegisterService(ep.svc.get());
  ep.server = b.BuildAndStart();
  if (!ep.server) {
    log("cannot serve on " + path);
    return false;
  }
  log("serving " + resource_name(o.prefix, ep.kind) + " on " + path);
  return true;
}

void unserve(Endpoint& ep, const Options& o) {
  if (!ep.server) return;
  ep.server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  ep.server.reset();
  std::error_code ec;
  fs::remove(o.plugin_dir() + "/" + ep.sock, ec);
}

/// --probe (the DaemonSet's liveness probe): each of the plugin's sockets
/// answers GetDevicePluginOptions within 2 s. A socket file whose server is
/// gone, or a server that no longer answers, fails it. 0 if both answer.
int probe(const Options& o) {
  int bad = 0;
  for (const char* sock : {"neuron-core.sock", "neuron-device.sock"}) {
    const std::string path = o.plugin_dir() + "/" + sock;
    auto stub = v1beta1::DevicePlugin::NewStub(
        grpc::CreateChannel("unix://" + path, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    v1beta1::Empty req;
    v1beta1::DevicePluginOptions resp;
    const auto st = stub->GetDevicePluginOptions(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "neuron-device-plugin --probe: %s: no answer (%s)\n", path.c_str(),
                   st.error_message().c_str());
      bad = 1;
    }
  }
  return bad;
}

bool register_with_kubelet(const Endpoint& ep, const Options& o) {
  auto ch = grpc::CreateChannel("unix://" + o.plugin_dir() + "/kubelet.sock", grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(ch);
  v1beta1::RegisterRequest q;
  q.set_version("v1beta1");
  q.set_endpoint(ep.sock);
  q.set_resource_name(resource_name(o.prefix, ep.kind));
  q.mutable_options()->set_pre_start_required(true);
  q.mutable_options()->set_get_preferred_allocation_available(true);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1beta1::Empty e;
  const auto s = stub->Register(&ctx, q, &e);
  if (!s.ok()) {
    log("Register " + q.resource_name() + ": " + s.error_message());
    return false;
  }
  log("registered " + q.resource_name() + " (endpoint " + ep.sock + ")");
  return true;
}

/// The driver's KOBJ_CHANGE uevents of class nnq (NNQ_STATE=offline|online|removing),
/// and the add and remove of its nodes, which end a removed device's state.
void uevent_loop(State& st) {
  Fd s(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  sa.nl_groups = 1;
  if (s.fd < 0 || bind(s.fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    log("no uevents (socket/bind failed): health from the sysfs scan only");
    return;
  }
  char buf[8192];
  while (!st.stopping() && !g_stop) {
    pollfd p{s.fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = recv(s.fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) continue;
    buf[n] = 0;
    std::string action, devname, state, subsystem;
    for (ssize_t i = 0; i < n; i += static_cast<ssize_t>(std::strlen(buf + i)) + 1) {
      std::string_view kv(buf + i);
      if (kv.starts_with("ACTION=")) action = kv.substr(7);
      if (kv.starts_with("DEVNAME=")) devname = kv.substr(8);
      if (kv.starts_with("NNQ_STATE=")) state = kv.substr(10);
      if (kv.starts_with("SUBSYSTEM=")) subsystem = kv.substr(10);
    }
    if (subsystem != "nnq" || devname.empty()) continue;
    if (action == "add" || action == "remove") {
      log("uevent " + devname + " " + action);
      st.forget_uevent(devname);
    } else if (!state.empty()) {
      log("uevent " + devname + " NNQ_STATE=" + state);
      st.set_uevent(devname, state);
    }
  }
}

struct SockId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const SockId&) const = default;
};

std::optional<SockId> sock_id(const std::string& path) {
  struct stat sb {};
  if (stat(path.c_str(), &sb) != 0) return std::nullopt;
  return SockId{sb.st_dev, sb.st_ino};
}

int run(const Options& o) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  {
    std::string m = std::string("partition: every device offered ") +
                    (o.partition.node == Partition::cores ? "as cores" : "whole");
    for (const auto& [id, p] : o.partition.per_device)
      m += std::string(", ") + id + (p == Partition::cores ? " as cores" : " whole");
    log(m);
  }
  State st;
  CdiSpecs cdi(o);
  cdi.start();
  {
    // the spec of a node is on disk before the kubelet can hear of it
    auto fresh = scan(o.roots);
    cdi.sync(fresh);
    st.update(std::move(fresh));
  }
  std::vector<Endpoint> eps;
  eps.push_back({Kind::core, "neuron-core.sock", std::make_unique<PluginService>(st, cdi, o, Kind::core), nullptr});
  eps.push_back(
      {Kind::device, "neuron-device.sock", std::make_unique<PluginService>(st, cdi, o, Kind::device), nullptr});
  std::thread uev;
  if (o.uevents) uev = std::thread(uevent_loop, std::ref(st));

  std::optional<SockId> registered;  // the kubelet.sock we registered with
  auto next_try = Clock::now();
  while (!g_stop) {
    {
      auto fresh = scan(o.roots);
      cdi.sync(fresh);
      st.update(std::move(fresh));
    }
    const auto kid = sock_id(o.plugin_dir() + "/kubelet.sock");
    bool ours_gone = false;
    for (const auto& ep : eps)
      ours_gone = ours_gone || !ep.server || !fs::exists(o.plugin_dir() + "/" + ep.sock);
    if (kid && (registered != kid || ours_gone) && Clock::now() >= next_try) {
      // serve before register; a new kubelet has removed our sockets
      if (registered) log("kubelet.sock re-created or our socket removed: serving and registering again");
      bool ok = true;
      for (auto& ep : eps) {
        unserve(ep, o);
        ok = ok && serve(ep, o);
      }
      for (auto& ep : eps) ok = ok && register_with_kubelet(ep, o);
      if (ok)
        registered = kid;
      else
        next_try = Clock::now() + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
  }
  log("stopping");
  st.stop();
  for (auto& ep : eps) unserve(ep, o);
  cdi.remove_all();
  if (uev.joinable()) uev.join();
  return 0;
}

}  // namespace
}  // namespace neuron::k8s

namespace {
/// The longest --reclaim-grace: below the kubelet's 30 s PreStartContainer
/// deadline with room for the call itself (docs/k8s.md#prestart).
constexpr double kMaxReclaimGrace = 25.0;
}  // namespace

int main(int argc, char** argv) {
  neuron::k8s::Options o;
  CLI::App app{"neuron-device-plugin: Neuron cores and devices for the kubelet (docs/k8s.md)"};
  app.add_option("--dev-root", o.roots.dev, "directory of the device nodes")->capture_default_str();
  app.add_option("--sys-root", o.roots.sys, "sysfs mount point")->capture_default_str();
  app.add_option("--proc-root", o.roots.proc, "procfs mount point")->capture_default_str();
  app.add_option("--kubelet-dir", o.kubelet_dir, "the kubelet's directory (device-plugins/ under it)")
      ->capture_default_str();
  app.add_option("--resource-prefix", o.prefix, "resource and CDI vendor prefix")->capture_default_str();
  app.add_option("--poll-ms", o.poll_ms, "sysfs scan interval, milliseconds")
      ->check(CLI::Range(10, 1000))->capture_default_str();
  // The kubelet gives PreStartContainer 30 s (its device-plugin client's
  // deadline); a wait as long would be cut off and the container retried
  // with no reason given, so the wait stays well below it.
  app.add_option("--reclaim-grace", o.reclaim_grace, "PreStartContainer: seconds to wait for a held core")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            double v = 0;
            std::size_t used = 0;
            try {
              v = std::stod(s, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used != s.size() || !(v >= 0.0 && v <= kMaxReclaimGrace))
              return "'" + s + "': want seconds in [0, " + std::to_string(int(kMaxReclaimGrace)) +
                     "], below the kubelet's 30 s PreStartContainer deadline";
            return {};
          },
          "SECONDS in [0, 25]"))
      ->capture_default_str();
  app.add_option("--cdi-dir", o.cdi_dir,
                 "directory of the CDI specs the plugin writes and keeps current (empty: none, and no CDI "
                 "names from Allocate)")
      ->capture_default_str();
  std::string partition = "cores";
  app.add_option("--partition", partition,
                 "how every device is offered: cores (resource <prefix>/core) or whole (<prefix>/device), "
                 "never both")
      ->check(CLI::IsMember({"cores", "whole"}))
      ->capture_default_str();
  std::vector<std::string> per_device;
  app.add_option("--device-partition", per_device,
                 "one device offered otherwise than --partition says: nnqN=cores or nnqN=whole "
                 "(repeat it, or separate with commas)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            const auto eq = s.find('=');
            const std::string dev = s.substr(0, eq);
            const bool named = dev.size() > 3 && dev.starts_with("nnq") &&
                               dev.find_first_not_of("0123456789", 3) == std::string::npos &&
                               (dev[3] != '0' || dev.size() == 4);
            if (eq == std::string::npos || !named || !neuron::k8s::parse_partition(s.substr(eq + 1)))
              return "'" + s + "': want nnqN=cores or nnqN=whole";
            return {};
          },
          "nnqN=cores|whole"));
  bool no_uevents = false;
  app.add_flag("--no-uevents", no_uevents, "do not listen to the driver's uevents");
  bool probe = false;
  app.add_flag("--probe", probe,
               "liveness probe: exit 0 if the plugin serving under --kubelet-dir answers on both sockets, "
               "else 1");
  app.set_version_flag("--version", std::string("neuron-device-plugin ") + NEURON_VERSION);
  CLI11_PARSE(app, argc, argv);
  if (probe) return neuron::k8s::probe(o);
  o.uevents = !no_uevents;
  o.partition.node = *neuron::k8s::parse_partition(partition);
  for (const auto& s : per_device) {
    const auto eq = s.find('=');
    o.partition.per_device[s.substr(0, eq)] = *neuron::k8s::parse_partition(s.substr(eq + 1));
  }
  return neuron::k8s::run(o);
}
