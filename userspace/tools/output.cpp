// SPDX-License-Identifier: MIT
//
// neuron-nq's shared output helpers (output.hpp).
#include "output.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace neuron::cli {

int exit_code(ExecStatus s) {
  switch (s) {
    case ExecStatus::Ok: return kExitOk;
    case ExecStatus::Failure: return kExitDevice;
    case ExecStatus::Timeout: return kExitTimeout;
    case ExecStatus::CompletedWithError: return kExitCompletedWithErr;
    case ExecStatus::SwNqOverflow: return kExitSwNqOverflow;
    case ExecStatus::CompletedThrottled: return kExitThrottled;
  }
  return kExitOtherStatus;
}

int fail(const Error& e) {
  fmt::print(stderr, "neuron-nq: {}\n", e.message());
  if (e.code == make_error_code(errc::invalid_argument) || e.code == make_error_code(errc::parse_error) ||
      e.code == std::errc::invalid_argument)
    return kExitUsage;
  return kExitDevice;
}

int print_program_error(const Error& e) {
  if (e.code == make_error_code(errc::parse_error)) fmt::print(stderr, "{}\n", e.what);
  else fmt::print(stderr, "neuron-nq: {}\n", e.message());
  return kExitUsage;
}

int print_parse_or_device_error(const Error& e) {
  if (e.code == make_error_code(errc::parse_error)) {
    fmt::print(stderr, "{}\n", e.what);
    return kExitUsage;
  }
  return fail(e);
}

const char* gen_name(std::uint32_t gen) {
  switch (gen) {
    case NEURON_GEN_SUNDA: return "sunda";
    case NEURON_GEN_CAYMAN: return "cayman";
    default: return "unknown";
  }
}

std::string features_text(std::uint32_t f) {
  std::string s = fmt::format("0x{:x}", f);
  std::string names;
  const auto add = [&names](const char* n) { names += (names.empty() ? "" : ", ") + std::string(n); };
  if (f & NEURON_FEATURE_DVE_PERF_MODE) add("DVE perf mode");
  if (f & NEURON_FEATURE_DGE_PACKET_NOTIF) add("DGE packet notification");
  if (f & NEURON_FEATURE_EVT_ACCEL_ADDR) add("EVT accel address");
  return names.empty() ? s : s + " (" + names + ")";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string ns_text(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:09}", neg ? "-" : "", a / 1'000'000'000ull, a % 1'000'000'000ull);
}

std::string engine_mask_names(std::uint32_t mask) {
  std::string s;
  for (unsigned e = 0; e < 32; ++e)
    if (mask >> e & 1) s += (s.empty() ? "" : ",") + engine_name(e);
  return s;
}

nlohmann::json edge_json(const EdgeFields& f) {
  std::string causes;
  if (f.edge == NEURON_EDGE_NOTIFIC) causes = notific_cause_names(f.cause);
  else if (f.edge == NEURON_EDGE_ENGINE_STOPPED) causes = stop_cause_name(f.cause);
  nlohmann::json j = {{"schema", kJsonSchemaVersion},
                      {"object", "edge"},
                      {"time_ns", f.time_ns},
                      {"core", f.core},
                      {"edge", edge_name(f.edge)},
                      {"cause", f.cause},
                      {"causes", causes},
                      {"queues", f.queues},
                      {"count", f.count}};
  if (f.device) j["device"] = *f.device;
  if (f.edge == NEURON_EDGE_ENGINE_STOPPED || f.edge == NEURON_EDGE_HANG) {
    j["engines"] = nlohmann::json::array();
    for (unsigned e = 0; e < 32; ++e)
      if (f.queues >> e & 1) j["engines"].push_back(engine_name(e));
  }
  if (f.edge == NEURON_EDGE_THROTTLE || f.edge == NEURON_EDGE_FAULT) j["suppressed"] = f.suppressed;
  if (f.edge == NEURON_EDGE_HANG) j["pc"] = f.pc;
  return j;
}

EdgeFields edge_fields(const Event& e) {
  return {std::nullopt, e.core, e.edge, e.cause, e.queues, e.count, e.timestamp_ns, e.suppressed, e.pc};
}

EdgeFields edge_fields(const NetlinkEvent& e) {
  return {e.device, e.core, e.edge, e.cause, e.queues, e.count, e.timestamp_ns, e.suppressed, e.pc};
}

nlohmann::json record_json(unsigned core, unsigned queue, const Decoded& d, const std::string& text) {
  return {{"schema", kJsonSchemaVersion}, {"object", "record"}, {"core", core},
          {"queue", queue},               {"record", to_json(d)}, {"text", text}};
}

std::string record_sentence(const Decoded& d, const Program& prog, unsigned core) {
  if (const auto* e = std::get_if<TpbError>(&d); e && !prog.engines.empty()) {
    std::string s = "TPB_ERROR " + explain(*e, prog, core);
    if (e->meta.header.sw_overflow()) s += " [SW OVERFLOW]";
    return s;
  }
  return to_text(d);
}

std::uint64_t peak_rss_kb() {
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) break;
  std::fclose(f);
  return kb;
}

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Result<UniqueFd> stop_signal_fd() {
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  if (::pthread_sigmask(SIG_BLOCK, &sigs, nullptr) != 0) return unexpected(Error::from_errno(errno, "sigprocmask"));
  UniqueFd fd(::signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd) return unexpected(Error::from_errno(errno, "signalfd"));
  return fd;
}

std::optional<double> counter_rate(std::uint64_t before, std::uint64_t now, double secs) {
  if (!(secs > 0) || now < before) return std::nullopt;
  return static_cast<double>(now - before) / secs;
}

std::optional<double> busy_percent(std::uint64_t before_ns, std::uint64_t now_ns, double secs) {
  const auto ns_per_s = counter_rate(before_ns, now_ns, secs);
  if (!ns_per_s) return std::nullopt;
  return std::min(100.0, *ns_per_s / 1e7);
}

}  // namespace neuron::cli
