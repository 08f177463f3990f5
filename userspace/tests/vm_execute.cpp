// SPDX-License-Identifier: MIT
//
// vm_execute: execute() and the event stream on the real driver as an
// unprivileged user (selftests/vm/api-guest.sh runs it with --uid in the
// main lane's boot). Core 1 throughout (the device has 2).
//
//   vm_execute [--uid UID] [DEVICE]
//
//   1. own_overflow_edge: a lossy 4096-byte queue (256 records) of core 1
//      and 600 NOTIFYs: the device overwrites 344 unread records and raises
//      NOTIFIC cause SW_OVERFLOW (bit 2 of the cause,
//      include/uapi/linux/neuron_record.h); the Device's own event stream
//      (open_event_stream(), a dup of its file) gets that edge for core 1
//      without CAP_SYS_ADMIN (docs/decisions/0005-tenancy.md).
//   2. execute_stops_on_overflow: execute() with lossy queues and a program
//      of 600 NOTIFYs that then waits on semaphore 7 forever, timeout 20 s:
//      it returns SW_NQ_OVERFLOW (1204), not TIMEOUT (5), and leaves the
//      engine IDLE (0).
//   3. timeout_on_a_preowned_core: the caller owns core 1 first (the case
//      ProgramClaim never reset), the program waits forever, timeout
//      300 ms: TIMEOUT (5), and the engine is IDLE afterwards.
//   4. routed_execute: execute() with ExecOptions::route 0x03249867 (trace
//      7, EXPLICIT 6, EVT_SEM 8, errors 9, throttle 4, DGE 2, DMA 3) and a
//      POOL program making a trace, EXPLICIT, EVT_SEM, TPB_ERROR and DGE
//      metadata record: every record on the queue of the hand-written
//      table, decoded as the kind the table says (DGE metadata as
//      DGE_METADATA, the NOTIFY as EXPLICIT), and the core's route back to
//      the default after execute() released the core.
//   5. axi_dropped_counted: a 4096-byte backpressured EVT_SEM queue (256
//      records) of core 1 nobody reads, AXI_EVT_SEM records armed, 262 host
//      SEM_SETs: 256 records fill the ring, the 257th waits in the unit's
//      one-record slot, the last 5 are lost (docs/device-model.md#axi-evt-sem).
//      Device::notify_trigger() reads axi_dropped 0 before and 5 after, and
//      `neuron-nq metrics --json` ($NEURON_NQ) shows core 1's axi_dropped 5
//      higher than before (docs/decisions/0025-axi-dropped.md).
//   0. throttle_is_its_own_outcome (as root, before --uid: arming throttle
//      is device-wide and needs CAP_SYS_ADMIN): throttle armed, a program
//      of two THROTTLEs ends COMPLETED_THROTTLED (2001), not
//      COMPLETED_WITH_ERR (1004), with 2 throttle records on queue 4 and no
//      first_error; then disarmed.
// Prints TAP ("ok N execute_vm.NAME"); exits non-zero on a failure.
#include <grp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "libneuron/assembler.hpp"
#include "libneuron/device.hpp"
#include "libneuron/execute.hpp"

using namespace neuron;
using namespace std::chrono_literals;

namespace {

constexpr unsigned kCore = 1;
int test_no = 0, failures = 0;

void tap(bool ok, const char* name) {
  std::printf("%s %d execute_vm.%s\n", ok ? "ok" : "not ok", ++test_no, name);
  std::fflush(stdout);
  if (!ok) ++failures;
}

// [core1.pe], `notifies` NOTIFYs, then `tail` lines, then halt.
Program program(unsigned notifies, const std::string& tail) {
  std::string text = "[core1.pe]\n";
  for (unsigned i = 0; i < notifies; i++) text += "notify hint=5 ext=" + std::to_string(i) + "\n";
  text += tail + "halt\n";
  auto p = assemble(text, "vm_execute");
  if (!p) {
    std::printf("Bail out! %s\n", p.error().message().c_str());
    std::exit(2);
  }
  return std::move(p).value();
}

std::uint32_t pe_state(const Device& d) {
  auto st = d.engine_status(kCore, NEURON_ENGINE_PE);
  return st ? st->state : 0xffffffffu;
}

void own_overflow_edge(const std::string& path) {
  auto d = Device::open(path);
  if (!d) return tap(false, "own_overflow_edge");
  auto es = d->open_event_stream();
  NotificationQueue::Options o;
  o.size = 4096;
  o.flags = NEURON_NQ_F_IGNORE_FULL;
  auto q = NotificationQueue::create(*d, kCore, 1, o);
  const Program p = program(600, "");
  bool submitted = es && q && d->submit(kCore, NEURON_ENGINE_PE, p.engines.front().insns, 0);
  bool edge = false;
  const auto end = std::chrono::steady_clock::now() + 5s;  // a hang guard, not a timing
  while (submitted && !edge && std::chrono::steady_clock::now() < end) {
    Event ev[8];
    auto n = es->read(ev, 500ms);
    for (std::size_t i = 0; n && i < *n; i++) {
      std::printf("# event edge %u core %u cause 0x%x\n", ev[i].edge, ev[i].core, ev[i].cause);
      if (ev[i].edge == 0 && ev[i].core == kCore && (ev[i].cause & (1u << 2))) edge = true;
    }
  }
  tap(submitted && edge, "own_overflow_edge");
}

void execute_stops_on_overflow(const std::string& path) {
  auto d = Device::open(path);
  if (!d) return tap(false, "execute_stops_on_overflow");
  ExecOptions opt;
  opt.timeout = 20s;
  opt.trace = false;
  opt.queue_flags = NEURON_NQ_F_IGNORE_FULL;
  opt.keep_records = false;
  const auto t0 = std::chrono::steady_clock::now();
  const ExecResult r = execute(*d, program(600, "wait.ge 7 1\n"), opt);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  std::printf("# status %d (%s) after %lld ms, edge %s, lost %llu\n", static_cast<int>(r.status),
              status_name(r.status), static_cast<long long>(ms.count()), r.overflow_event ? "seen" : "not seen",
              static_cast<unsigned long long>(r.lost + r.device_lost));
  tap(static_cast<int>(r.status) == 1204, "execute_stops_on_overflow");
  tap(pe_state(*d) == 0, "overflow_stop_leaves_the_engine_idle");
}

void timeout_on_a_preowned_core(const std::string& path) {
  auto d = Device::open(path);
  if (!d) return tap(false, "timeout_on_a_preowned_core");
  auto owned = d->acquire_cores(1u << kCore);
  ExecOptions opt;
  opt.timeout = 300ms;
  opt.trace = false;
  const ExecResult r = execute(*d, program(1, "wait.ge 7 1\n"), opt);
  std::printf("# status %d (%s)\n", static_cast<int>(r.status), status_name(r.status));
  tap(owned && static_cast<int>(r.status) == 5, "timeout_on_a_preowned_core");
  tap(pe_state(*d) == 0, "timed_out_engine_left_idle");
}

// Run as root: throttle arming needs CAP_SYS_ADMIN (docs/hardware.md#throttle).
void throttle_is_its_own_outcome(const std::string& path) {
  auto d = Device::open(path);
  if (!d) return tap(false, "throttle_is_its_own_outcome");
  const bool armed = static_cast<bool>(d->throttle(true));
  auto p = assemble("[core1.pool]\nthrottle 5\nthrottle 6\nhalt\n", "vm_execute");
  ExecOptions opt;
  opt.timeout = 20s;
  ExecResult r;
  if (armed && p) r = execute(*d, *p, opt);
  (void)d->throttle(false);
  std::printf("# armed %d, status %d (%s), throttle records %llu, first throttle on queue %d, first error %s\n",
              armed, static_cast<int>(r.status), status_name(r.status),
              static_cast<unsigned long long>(r.throttle_records),
              r.first_throttle ? static_cast<int>(r.first_throttle->queue) : -1, r.first_error ? "yes" : "none");
  tap(armed && static_cast<int>(r.status) == 2001 && r.throttle_records == 2 && r.first_throttle &&
          r.first_throttle->queue == 4 && !r.first_error,
      "throttle_is_its_own_outcome");
}

void routed_execute(const std::string& path) {
  auto d = Device::open(path);
  if (!d) return tap(false, "routed_execute");
  auto p = assemble(
      "features 0x2\n[core1.pool]\nnotify hint=3 ext=0x55\nnop @update=sem.set:5 @value=9\nfp_error FP_NAN\n"
      "dge src=0x400000 dst=0x400800 len=64\nhalt\n",
      "vm_execute");
  if (!p) return tap(false, "routed_execute");
  ExecOptions opt;
  opt.timeout = 20s;
  opt.route = 0x03249867u;
  const ExecResult r = execute(*d, *p, opt);
  // (queue, kind) of every record, hand-written from the route and the program
  struct Want {
    unsigned queue;
    const char* kind;
    unsigned n;
  };
  static const Want wants[] = {{7, "TRACE", 10},  {6, "EXPLICIT", 1},     {8, "EVT_SEM", 1},
                               {9, "TPB_ERROR", 1}, {2, "DGE_METADATA", 1}};
  bool ok = r.routes.count(kCore) && r.routes.at(kCore) == 0x03249867u;
  std::size_t expected = 0;
  for (const auto& w : wants) {
    unsigned n = 0;
    for (const auto& c : r.records)
      if (c.queue == w.queue && std::strcmp(kind_name(c.decoded), w.kind) == 0) ++n;
    std::printf("# queue %u: %u %s (want %u)\n", w.queue, n, w.kind, w.n);
    ok = ok && n == w.n;
    expected += w.n;
  }
  std::printf("# status %d (%s), %zu records (want %zu)\n", static_cast<int>(r.status), status_name(r.status),
              r.records.size(), expected);
  // FP_NAN is an error record: COMPLETED_WITH_ERR
  tap(ok && r.records.size() == expected && static_cast<int>(r.status) == 1004, "routed_execute");
  auto back = d->route(kCore);
  tap(back && *back == NEURON_ROUTE_DEFAULT, "route_default_after_release");
}

// core 1's "axi_dropped" in `neuron-nq metrics --json` (keys sorted: it comes
// just before "core"), or -1
/// Whether neuron-nq metrics --json names a counter file it may not read.
bool metrics_denied() {
  const char* nq = std::getenv("NEURON_NQ");
  if (!nq) return false;
  const std::string cmd = std::string(nq) + " metrics --count 1 --interval 0.01 --json 2>/dev/null";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return false;
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  ::pclose(f);
  return out.find("counter_errors") != std::string::npos && out.find("Permission denied") != std::string::npos;
}

long long metrics_axi_dropped() {
  const char* nq = std::getenv("NEURON_NQ");
  if (!nq) return -1;
  const std::string cmd = std::string(nq) + " metrics --count 1 --interval 0.01 --json 2>/dev/null";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return -1;
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  ::pclose(f);
  const std::string key = "\"axi_dropped\":";
  for (std::size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1)) {
    char* end = nullptr;
    const long long v = std::strtoll(out.c_str() + at + key.size(), &end, 10);
    if (end && std::strncmp(end, ",\"core\":1,", 10) == 0) return v;
  }
  return -1;
}

void axi_dropped_counted(const std::string& path) {
  auto d = Device::open(path);
  if (!d) return tap(false, "axi_dropped_counted");
  NotificationQueue::Options o;
  o.size = 4096;  // backpressure: the default flags
  auto q = NotificationQueue::create(*d, kCore, 2, o);
  auto before = d->notify_trigger(kCore, NEURON_TRIGGER_AXI_EVT_SEM, 0, true);
  const long long cli_before = metrics_axi_dropped();
  bool writes = q && before;
  for (std::uint32_t k = 0; writes && k < 262; k++) writes = static_cast<bool>(d->evt_sem(kCore, 9, NEURON_SEM_SET, 1000 + k));
  auto after = d->notify_trigger(kCore, NEURON_TRIGGER_AXI_EVT_SEM, 0, true);  // changes nothing, reads the count
  const long long cli_after = metrics_axi_dropped();
  std::printf("# axi_dropped %d -> %d (want 0 -> 5); neuron-nq metrics core 1: %lld -> %lld\n",
              before && before->axi_dropped ? static_cast<int>(*before->axi_dropped) : -1,
              after && after->axi_dropped ? static_cast<int>(*after->axi_dropped) : -1, cli_before, cli_after);
  tap(writes && before->axi_dropped == 0u && after && after->axi_dropped == 5u, "axi_dropped_counted");
  // the per-core counters are root's (docs/decisions/0005-tenancy.md#per-core-counters):
  // run as a tenant, neuron-nq metrics has none, and says why (counter_errors)
  if (::getuid() == 0)
    tap(cli_before >= 0 && cli_after == cli_before + 5, "axi_dropped_in_neuron_nq_metrics");
  else
    tap(cli_before == -1 && cli_after == -1 && metrics_denied(), "axi_dropped_root_only_in_neuron_nq_metrics");
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("TAP version 13\n");
  if (argc > 2 && std::strcmp(argv[1], "--uid") == 0) {
    throttle_is_its_own_outcome(argc > 3 ? argv[3] : "/dev/nnq0");
    const auto uid = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
    const gid_t g = uid;
    if (setgroups(1, &g) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
      std::printf("Bail out! cannot become uid %u\n", uid);
      return 2;
    }
    argc -= 2;
    argv += 2;
  }
  const std::string path = argc > 1 ? argv[1] : "/dev/nnq0";
  std::printf("# uid %u, %s\n", getuid(), path.c_str());
  own_overflow_edge(path);
  execute_stops_on_overflow(path);
  timeout_on_a_preowned_core(path);
  routed_execute(path);
  axi_dropped_counted(path);
  std::printf("# execute_vm: %d of %d checks failed\n", failures, test_no);
  return failures != 0;
}
