// SPDX-License-Identifier: MIT
//
// neuron-dra-plugin: Neuron cores and whole devices through Dynamic
// Resource Allocation (resource.k8s.io/v1; docs/k8s.md#dra,
// docs/decisions/0043-dra-driver.md).
//  - publishes the node's ResourceSlices to the API server (REST, JSON,
//    libcurl) at start and whenever the inventory scan (inventory.hpp, the
//    device plugin's) changes: new generation first, then the old slices
//    deleted;
//  - serves pluginregistration.Registration on
//    <kubelet-dir>/plugins_registry/<driver>-reg.sock and the kubelet's DRA
//    service v1 (proto/dra_v1.proto) on <kubelet-dir>/plugins/<driver>/dra.sock;
//  - NodePrepareResources reads each claim from the API server, checks its
//    allocation (dra.hpp check_claim), writes the claim's CDI spec and
//    records it in a checkpoint before answering; NodeUnprepareResources
//    removes both. Both are idempotent, across a restart too.
#include <CLI/CLI.hpp>
#include <curl/curl.h>
#include <grpcpp/grpcpp.h>
#include <libneuron/device.hpp>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "dra.hpp"
#include "dra_v1.grpc.pb.h"
#include "inventory.hpp"
#include "pluginregistration_v1.grpc.pb.h"

namespace neuron::k8s::dra {
namespace {
namespace fs = std::filesystem;
namespace drapb = ::k8s::io::kubelet::pkg::apis::dra::v1;
using json = nlohmann::json;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
  Roots roots;
  std::string kubelet_dir = "/var/lib/kubelet";
  std::string driver = "neuron.example";
  std::string node;
  std::string api = "https://kubernetes.default.svc";
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string cdi_dir = "/var/run/cdi";
  std::string state_dir;  ///< default <kubelet-dir>/plugins/<driver>
  int poll_ms = 1000;
  std::string plugin_dir() const { return kubelet_dir + "/plugins/" + driver; }
  std::string reg_sock() const { return kubelet_dir + "/plugins_registry/" + driver + "-reg.sock"; }
  std::string dra_sock() const { return plugin_dir() + "/dra.sock"; }
};

void log(const std::string& s) {
  std::fprintf(stderr, "neuron-dra-plugin: %s\n", s.c_str());
  std::fflush(stderr);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The API server over REST with JSON bodies: a bearer token when the
/// token file exists, the CA file when it exists (https).
class Api {
 public:
  struct Reply {
    long code = 0;  ///< HTTP status, 0 when no answer
    std::string body;
    std::string error;  ///< transport error
  };
  explicit Api(const Options& o) : o_(o) {}

  Reply call(const std::string& method, const std::string& path, const std::string& body = {}) const {
    Reply r;
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> c(curl_easy_init(), curl_easy_cleanup);
    if (!c) return {0, {}, "curl_easy_init failed"};
    const std::string url = o_.api + path;
    curl_slist* h = nullptr;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Accept: application/json");
    std::error_code ec;
    if (fs::exists(o_.token_file, ec)) {
      std::string tok = slurp(o_.token_file);
      while (!tok.empty() && (tok.back() == '\n' || tok.back() == '\r')) tok.pop_back();
      h = curl_slist_append(h, ("Authorization: Bearer " + tok).c_str());
    }
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(h, curl_slist_free_all);
    curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(c.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
    if (fs::exists(o_.ca_file, ec)) curl_easy_setopt(c.get(), CURLOPT_CAINFO, o_.ca_file.c_str());
    if (!body.empty() || method == "POST" || method == "PUT") {
      curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* u) -> size_t {
      static_cast<std::string*>(u)->append(p, s * n);
      return s * n;
    });
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &r.body);
    const CURLcode rc = curl_easy_perform(c.get());
    if (rc != CURLE_OK) {
      r.error = curl_easy_strerror(rc);
      return r;
    }
    curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &r.code);
    return r;
  }

 private:
  const Options& o_;
};

std::string what(const Api::Reply& r) {
  if (!r.error.empty()) return r.error;
  std::string msg = r.body;
  try {
    msg = json::parse(r.body).value("message", r.body);
  } catch (const std::exception&) {
  }
  return "HTTP " + std::to_string(r.code) + ": " + msg.substr(0, 300);
}

constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";

/// The node's ResourceSlices: published from each scan that changes what
/// is offered (docs/k8s.md#dra).
class SlicePublisher {
 public:
  SlicePublisher(const Options& o, const Api& api) : o_(o), api_(api) {}

  /// Bring the API server in line with `devices`; true when it is. A
  /// failure is retried at the next call.
  bool sync(const std::vector<Device>& devices) {
    const std::string key = summary(devices);
    if (published_ && key == key_) return true;
    if (!listed_ && !list()) return false;
    const std::int64_t gen = generation_ + 1;
    auto objs = slices({o_.driver, o_.node}, devices, generations(devices), gen);
    std::vector<std::string> names;
    for (const auto& s : objs) {
      const auto r = api_.call("POST", kSlices, s.dump());
      if (r.code != 201 && r.code != 200) {
        log("publish " + s["metadata"]["name"].get<std::string>() + ": " + what(r));
        // what was created stays listed, so the next try removes it
        for (const auto& n : names) old_.push_back(n);
        generation_ = gen;
        return false;
      }
      names.push_back(s["metadata"]["name"]);
    }
    std::size_t n = 0;
    for (const auto& s : objs) n += s["spec"]["devices"].size();
    log("published " + std::to_string(objs.size()) + " ResourceSlice(s), generation " + std::to_string(gen) + ", " +
        std::to_string(n) + " devices");
    generation_ = gen;
    for (const auto& old : old_) {
      const auto r = api_.call("DELETE", std::string(kSlices) + "/" + old);
      if (r.code != 200 && r.code != 404) log("delete " + old + ": " + what(r));
    }
    old_ = std::move(names);
    key_ = key;
    published_ = true;
    return true;
  }

 private:
  /// The slices an earlier run left: their generation is the floor of ours,
  /// their names the ones to delete once ours are published.
  bool list() {
    const auto r = api_.call("GET", std::string(kSlices) + "?fieldSelector=spec.nodeName%3D" + o_.node +
                                        "%2Cspec.driver%3D" + o_.driver);
    if (r.code != 200) {
      log("list ResourceSlices: " + what(r));
      return false;
    }
    try {
      const json list = json::parse(r.body);  // kept: a range-for over a temporary's member dangles
      for (const auto& s : list.at("items")) {
        if (s.at("spec").at("nodeName") != o_.node || s.at("spec").at("driver") != o_.driver) continue;
        generation_ = std::max(generation_, s.at("spec").at("pool").at("generation").get<std::int64_t>());
        old_.push_back(s.at("metadata").at("name"));
      }
    } catch (const std::exception& e) {
      log(std::string("list ResourceSlices: unreadable answer: ") + e.what());
      return false;
    }
    listed_ = true;
    if (!old_.empty())
      log("found " + std::to_string(old_.size()) + " ResourceSlice(s) of an earlier run, generation " +
          std::to_string(generation_) + ": replaced once the next is published");
    return true;
  }

  /// The hardware generation of each device, from the driver
  /// (NEURON_IOC_INFO through libneuron); "unknown" where it cannot be
  /// opened (a fake tree in the tests).
  std::map<std::string, std::string> generations(const std::vector<Device>& devices) {
    std::map<std::string, std::string> out;
    for (const auto& d : devices) {
      auto dev = neuron::Device::open_read_only(o_.roots.dev + "/" + d.id);
      if (!dev) continue;
      auto info = dev->info();
      if (!info) continue;
      out[d.id] = info->gen == NEURON_GEN_SUNDA ? "sunda" : info->gen == NEURON_GEN_CAYMAN ? "cayman" : "unknown";
    }
    return out;
  }

  static std::string summary(const std::vector<Device>& ds) {
    std::string s;
    for (const auto& d : ds) {
      s += d.id + (d.healthy && d.present ? "+" : "-") + std::to_string(d.numa_node) + ";";
      for (const auto& c : d.cores) s += c.id + (c.healthy ? "+" : "-") + ";";
    }
    return s;
  }

  const Options& o_;
  const Api& api_;
  bool listed_ = false, published_ = false;
  std::int64_t generation_ = 0;
  std::vector<std::string> old_;
  std::string key_;
};

/// The devices as last scanned (merged: a removed one stays, unhealthy).
class Inventory {
 public:
  void set(std::vector<Device> d) {
    std::lock_guard lk(mu_);
    devices_ = merge_seen(devices_, std::move(d));
  }
  std::vector<Device> get() {
    std::lock_guard lk(mu_);
    return devices_;
  }

 private:
  std::mutex mu_;
  std::vector<Device> devices_;
};

class RegistrationService final : public pluginregistration::Registration::Service {
 public:
  explicit RegistrationService(const Options& o) : o_(o) {}
  grpc::Status GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                       pluginregistration::PluginInfo* r) override {
    r->set_type("DRAPlugin");
    r->set_name(o_.driver);
    r->set_endpoint(o_.dra_sock());
    r->add_supported_versions("v1.DRAPlugin");
    return grpc::Status::OK;
  }
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const pluginregistration::RegistrationStatus* q,
                                        pluginregistration::RegistrationStatusResponse*) override {
    log(q->plugin_registered() ? "registered with the kubelet" : "kubelet refused the registration: " + q->error());
    return grpc::Status::OK;
  }

 private:
  const Options& o_;
};

class DraService final : public drapb::DRAPlugin::Service {
 public:
  DraService(const Options& o, const Api& api, Inventory& inv, Checkpoint cp)
      : o_(o), api_(api), inv_(inv), cp_(std::move(cp)) {}

  grpc::Status NodePrepareResources(grpc::ServerContext*, const drapb::NodePrepareResourcesRequest* q,
                                    drapb::NodePrepareResourcesResponse* r) override {
    std::lock_guard lk(mu_);
    for (int i = 0; i < q->claims_size(); ++i) {
      const auto& c = q->claims(i);
      auto& out = (*r->mutable_claims())[c.uid()];
      if (auto err = prepare(c, i, out)) {
        out.Clear();
        out.set_error(*err);
        log("NodePrepareResources " + c.namespace_() + "/" + c.name() + ": refused: " + *err);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext*, const drapb::NodeUnprepareResourcesRequest* q,
                                      drapb::NodeUnprepareResourcesResponse* r) override {
    std::lock_guard lk(mu_);
    for (int i = 0; i < q->claims_size(); ++i) {
      const auto& c = q->claims(i);
      auto& out = (*r->mutable_claims())[c.uid()];
      if (!valid_uid(c.uid())) {
        out.set_error("claims[" + std::to_string(i) + "].uid: '" + c.uid().substr(0, 80) + "' is not a claim UID");
        log("NodeUnprepareResources: refused: " + out.error());
        continue;
      }
      std::error_code ec;
      const std::string spec = o_.cdi_dir + "/" + claim_cdi_file(o_.driver, c.uid());
      fs::remove(spec, ec);
      if (ec) {
        out.set_error("remove " + spec + ": " + ec.message());
        continue;
      }
      const bool had = cp_.erase(c.uid()) > 0;
      if (auto err = save()) {
        out.set_error(*err);
        continue;
      }
      log("NodeUnprepareResources " + c.namespace_() + "/" + c.name() + " (" + c.uid() + "): " +
          (had ? "unprepared" : "not prepared: nothing to do"));
    }
    return grpc::Status::OK;
  }

 private:
  std::optional<std::string> prepare(const drapb::Claim& c, int i, drapb::NodePrepareResourceResponse& out) {
    const std::string at = "claims[" + std::to_string(i) + "]";
    if (!valid_uid(c.uid())) return at + ".uid: '" + c.uid().substr(0, 80) + "' is not a claim UID";
    if (c.namespace_().empty() || c.name().empty()) return at + ".namespace/name: empty";
    auto held = cp_.find(c.uid());
    std::vector<Prepared> devs;
    if (held != cp_.end()) {
      devs = held->second.devices;  // prepared before (perhaps by an earlier run): the same answer
    } else {
      const auto reply = api_.call("GET", "/apis/resource.k8s.io/v1/namespaces/" + c.namespace_() +
                                              "/resourceclaims/" + c.name());
      if (reply.code != 200) return "get ResourceClaim " + c.namespace_() + "/" + c.name() + ": " + what(reply);
      json claim;
      try {
        claim = json::parse(reply.body);
      } catch (const std::exception& e) {
        return std::string("ResourceClaim: not JSON: ") + e.what();
      }
      auto checked = check_claim(claim, c.uid(), {o_.driver, o_.node}, inv_.get());
      if (checked.error) return checked.error;
      if (auto o = overlap(cp_, c.uid(), checked.devices))
        return "status.allocation.devices.results: shares " + *o + ", prepared and not unprepared";
      devs = std::move(checked.devices);
    }
    // the spec before the checkpoint: a claim recorded is a claim whose spec exists
    if (auto err = write_atomic(o_.cdi_dir, claim_cdi_file(o_.driver, c.uid()),
                                claim_cdi_spec(o_.driver, c.uid(), devs, o_.roots.dev)))
      return "CDI spec: " + *err;
    const bool again = held != cp_.end();
    cp_[c.uid()] = ClaimRecord{c.namespace_(), c.name(), devs};
    if (auto err = save()) return err;
    std::string names;
    for (const auto& d : devs) {
      auto* pd = out.add_devices();
      pd->add_request_names(d.request);
      pd->set_pool_name(d.pool);
      pd->set_device_name(d.device);
      pd->add_cdi_device_ids(claim_cdi_id(o_.driver, c.uid(), d.device));
      names += (names.empty() ? "" : ",") + d.device;
    }
    log("NodePrepareResources " + c.namespace_() + "/" + c.name() + " (" + c.uid() + "): [" + names + "]" +
        (again ? " (from the checkpoint)" : ""));
    return std::nullopt;
  }

  std::optional<std::string> save() {
    if (auto err = write_atomic(o_.state_dir, "checkpoint.json", to_text(cp_))) return "checkpoint: " + *err;
    return std::nullopt;
  }

  const Options& o_;
  const Api& api_;
  Inventory& inv_;
  std::mutex mu_;
  Checkpoint cp_;
};

std::unique_ptr<grpc::Server> serve(grpc::Service* svc, const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  fs::remove(path, ec);
  grpc::ServerBuilder b;
  b.AddListeningPort("unix://" + path, grpc::InsecureServerCredentials());
  b.RegisterService(svc);
  auto s = b.BuildAndStart();
  if (s) log("serving on " + path);
  return s;
}

int run(Options o) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  if (o.state_dir.empty()) o.state_dir = o.plugin_dir();
  std::error_code ec;
  fs::create_directories(o.state_dir, ec);
  fs::create_directories(o.cdi_dir, ec);

  Checkpoint cp;
  const std::string cp_path = o.state_dir + "/checkpoint.json";
  if (fs::exists(cp_path, ec)) {
    std::string err;
    auto got = from_text(slurp(cp_path), err);
    if (!got) {
      // refusing to start would leave every prepared claim stuck; starting
      // empty makes the kubelet's next prepare read the claims again
      log("checkpoint " + cp_path + " unreadable (" + err + "): starting with none");
    } else {
      cp = std::move(*got);
      log("checkpoint: " + std::to_string(cp.size()) + " prepared claim(s)");
    }
  }

  Api api(o);
  Inventory inv;
  inv.set(scan(o.roots));
  SlicePublisher pub(o, api);
  pub.sync(inv.get());

  DraService dra(o, api, inv, std::move(cp));
  RegistrationService reg(o);
  // the DRA service first: the kubelet calls it as soon as it has registered
  auto dra_srv = serve(&dra, o.dra_sock());
  auto reg_srv = dra_srv ? serve(&reg, o.reg_sock()) : nullptr;
  if (!dra_srv || !reg_srv) {
    log("cannot serve on " + o.dra_sock() + " or " + o.reg_sock());
    return 1;
  }
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
    inv.set(scan(o.roots));
    pub.sync(inv.get());
  }
  log("stopping");
  reg_srv->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  dra_srv->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  // the registration socket goes so the kubelet unregisters; the slices
  // and the checkpoint stay for the next run (a restart does not unprepare)
  fs::remove(o.reg_sock(), ec);
  fs::remove(o.dra_sock(), ec);
  return 0;
}

}  // namespace
}  // namespace neuron::k8s::dra

int main(int argc, char** argv) {
  neuron::k8s::dra::Options o;
  CLI::App app{"neuron-dra-plugin: Neuron cores and devices through Dynamic Resource Allocation (docs/k8s.md#dra)"};
  app.add_option("--node-name", o.node, "this node's name (the pool's name; the DaemonSet sets it from spec.nodeName)")
      ->required()
      ->envname("NODE_NAME");
  app.add_option("--driver", o.driver, "driver name: the resource prefix, a DNS subdomain")->capture_default_str();
  app.add_option("--api-server", o.api, "the API server's URL")->capture_default_str();
  app.add_option("--token-file", o.token_file, "bearer token (used when the file exists)")->capture_default_str();
  app.add_option("--ca-file", o.ca_file, "the API server's CA (used when the file exists)")->capture_default_str();
  app.add_option("--kubelet-dir", o.kubelet_dir, "the kubelet's directory (plugins/, plugins_registry/)")
      ->capture_default_str();
  app.add_option("--state-dir", o.state_dir, "where the checkpoint is kept (default <kubelet-dir>/plugins/<driver>)");
  app.add_option("--cdi-dir", o.cdi_dir, "directory of the per-claim CDI specs")->capture_default_str();
  app.add_option("--dev-root", o.roots.dev, "directory of the device nodes")->capture_default_str();
  app.add_option("--sys-root", o.roots.sys, "sysfs mount point")->capture_default_str();
  app.add_option("--poll-ms", o.poll_ms, "inventory scan interval, milliseconds")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  app.set_version_flag("--version", std::string("neuron-dra-plugin ") + NEURON_VERSION);
  CLI11_PARSE(app, argc, argv);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const int rc = neuron::k8s::dra::run(o);
  curl_global_cleanup();
  return rc;
}
