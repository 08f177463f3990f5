// SPDX-License-Identifier: MIT
//
// Drain throughput on the host: every contender consumes the same ring of
// N records (default 16384, 256 KiB; --entries=N, a power of two from 4 to
// 65536, the NQ maximum) holding one full first pass, N records per
// iteration:
//   BM_Drain           RingView::drain of the whole ring into an N-record buffer
//   BM_DrainBatch/256  RingView::drain in batches of 256 into one 256-record
//                      buffer (a consumer that handles each batch before the next)
//   BM_ForEach         RingView::for_each_span, zero copy; each span goes to a
//                      plain C++ consumer that adds byte 0 of every record to
//                      a sum (four running sums, one byte load per record)
//   BM_ForEachWide     the same with a consumer as wide as the drain path
//                      (span_sum.hpp: four records a 64-byte load on avx512,
//                      two on avx2, one on sse2, plain C++ on scalar), so the
//                      copy and the zero-copy consumer are compared at the
//                      same vector width
//   BM_ForEachRecord   RingView::for_each, the same sum, one call per record
//   BM_Memcpy          memcpy of the same N * 16 bytes into the N-record buffer
//   BM_Reference       the runtime's nq_read_cayman transcribed in reference/
//                      (docs/hardware.md#host-drain), into the N-record buffer
// The ring and the N-record buffer are page-aligned anonymous mappings, as
// the driver's mmap of an NQ is (a std::vector of this size sits 16 bytes
// past a page, which costs a consumer reading every record a quarter of
// its speed: docs/performance.md#drain-hosts). The default N keeps both
// (512 KiB) in one core's L2 (1 MiB or more on the build machines), so the
// figures compare the code, not the memory shared with other jobs: with
// N = 65536 the two fill L2 and every contender slows to what the caches
// behind it deliver (docs/build-environment.md#drain-ceiling). Before any
// benchmark runs, every consumer's sum over the ring is checked against the
// plain one's (exit 1 if one differs).
//
// A shared machine is noisy, so by default every benchmark runs 25
// repetitions of at least 0.15 s each, randomly interleaved with the other
// benchmarks' repetitions (--benchmark_repetitions=25
// --benchmark_min_time=0.15 --benchmark_enable_random_interleaving=true;
// command-line flags override these): many short repetitions give each
// benchmark more chances to run while the host is quiet than a few long
// ones in the same time. The console shows the aggregates,
// with a "max" one beside Google Benchmark's own: its items_per_second is
// the fastest repetition's. Rates are per second of the benchmark thread's
// CPU time (Google Benchmark's default). The targets are judged on each
// benchmark's fastest repetition, the one a neighbour disturbed least: on a
// shared host a neighbour on the same physical core slows the drain and the
// reference for tens of seconds at a time, and memcpy (rep movsb) much less,
// so a median can carry the neighbour more than the code
// (docs/decisions/0034-drain-bench-best.md); the medians' ratios are printed
// too.
//
// Drain paths (userspace/README.md#drain-paths): the benchmarks above run on
// the path RingView chooses by default (NEURON_DRAIN_PATH, else the widest
// this CPU has); BM_Drain/PATH and BM_ForEachWide/PATH run on each other path the
// CPU supports (scalar, sse2, avx2, avx512), interleaved with the rest.
//
// At the end it prints, from each benchmark's fastest repetition:
//   records/s (fastest repetition, ...): ...  the default path's
//   records/s (median): ...                   the same benchmarks' medians
//   ratio for_each/drain   = X  (target >= 1.00) ... (consumer as wide as the path; plain C++ consumer Y)
//   ratio drain/memcpy     = X  (target >= 0.90)   the default path's
//   ratio drain/reference  = X  (target >= 2.00)
//   ratios of the medians: for_each/drain X MET|MISSED, ...
//   path P (default): for_each/drain X MET|MISSED, drain/memcpy ..., drain/reference ...
//   path Q: ...                             one line per supported path
// (scripts/check.sh copies the lines that start with "records/s", "ratio"
// or "path" into the make check log). Figures, not tests: nothing is asserted.
//
// JSON for a report: add --benchmark_out=FILE --benchmark_out_format=json.
// The file holds "context" (with "ring_entries": N) and "benchmarks": for
// each benchmark above ("run_name", e.g. "BM_Drain"), one entry per
// repetition ("run_type": "iteration", "repetition_index") and its aggregates
// ("run_type": "aggregate", "aggregate_name": "mean", "median", "stddev",
// "cv" or "max"; "name" is then e.g. "BM_Drain_median"; the "max" entry's
// items_per_second is the fastest repetition's, its times are the slowest). The context also holds
// "drain_path" (the default path), "drain_paths" (the supported ones, comma
// separated) and "cpu_model" (/proc/cpuinfo's model name). "items_per_second" is records
// per second, "bytes_per_second" 16 bytes per record. The printed ratios are
// the quotients of the "max" items_per_second of BM_ForEachWide / BM_Drain,
// BM_Drain / BM_Memcpy and BM_Drain / BM_Reference (and of the "median"
// ones on the "ratios of the medians" line).
//
// Instruction counts (repeatable whatever the machine does): each contender
// consumes the ring in one call of a pass_* function, so after
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/userspace/bench_drain
//       --benchmark_repetitions=1 --benchmark_min_time=0.01   (one command line)
// a pass_* function's inclusive Ir (callgrind_annotate --inclusive=yes)
// divided by its calls (callgrind_annotate --tree=caller) and by N is the
// instructions per record.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <sys/mman.h>

#include "libneuron/ring.hpp"
#include "nq_read_ref.hpp"
#include "span_sum.hpp"

namespace {

constexpr std::uint32_t kDefaultEntries = 16 * 1024;
constexpr std::size_t kBatch = 256;

/// Page-aligned anonymous memory, as the driver's mmap of an NQ ring is.
class PageBuffer {
 public:
  explicit PageBuffer(std::size_t len) : len_(len) {
    p_ = ::mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) {
      std::perror("bench_drain: mmap");
      std::exit(1);
    }
  }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  ~PageBuffer() { ::munmap(p_, len_); }
  [[nodiscard]] std::span<neuron::Record> records() const {
    return {static_cast<neuron::Record*>(p_), len_ / sizeof(neuron::Record)};
  }

 private:
  void* p_;
  std::size_t len_;
};

/// One full first pass (phase 1 in every slot), the destination buffers.
struct Fixture {
  std::uint32_t entries;
  PageBuffer ring_mem, out_mem;
  std::span<neuron::Record> ring, out;
  std::vector<neuron::Record> batch;
  explicit Fixture(std::uint32_t n)
      : entries(n),
        ring_mem(std::size_t{n} * sizeof(neuron::Record)),
        out_mem(std::size_t{n} * sizeof(neuron::Record)),
        ring(ring_mem.records()),
        out(out_mem.records()),
        batch(kBatch) {
    for (std::uint32_t i = 0; i < n; ++i) {
      auto& r = ring[i];
      for (int b = 0; b < 16; ++b) r.bytes[b] = static_cast<std::uint8_t>(i * 7 + b);
      r.bytes[3] = NEURON_ISA_HEADER_PHASE | NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START;
    }
  }
  [[nodiscard]] std::span<const neuron::Record> view() const { return {ring.data(), ring.size()}; }
};

std::atomic<std::uint32_t> g_head{0};  // the doorbell: HEAD is published as with a producer thread

// One pass over the whole ring each; the number of records consumed.
using neuron::DrainPath;

[[gnu::noinline]] std::size_t pass_drain(Fixture& f, DrainPath path) {
  // A fresh view at HEAD 0 each pass: the ring holds one full pass (phase 1).
  neuron::RingView v(f.view(), neuron::Doorbell::atomic(&g_head), 0);
  v.set_drain_path(path);
  const auto r = v.drain(f.out);
  benchmark::DoNotOptimize(r);
  benchmark::DoNotOptimize(f.out.data());
  benchmark::ClobberMemory();
  return r.count;
}

[[gnu::noinline]] std::size_t pass_drain_batch(Fixture& f, DrainPath path) {
  neuron::RingView v(f.view(), neuron::Doorbell::atomic(&g_head), 0);
  v.set_drain_path(path);
  std::size_t total = 0;
  for (;;) {
    const auto r = v.drain(f.batch);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();  // the batch is used before the next drain
    if (r.count == 0) break;
    total += r.count;
  }
  return total;
}

// for_each_span handing each span to `sum` (span_sum.hpp).
std::size_t for_each_into(Fixture& f, DrainPath path, neuron::bench::SpanSum sum_of) {
  neuron::RingView v(f.view(), neuron::Doorbell::atomic(&g_head), 0);
  v.set_drain_path(path);
  std::uint64_t sum = 0;
  const auto r = v.for_each_span([&](std::span<const neuron::Record> s) { sum += sum_of(s); });
  benchmark::DoNotOptimize(sum);
  benchmark::DoNotOptimize(r);  // the overflow flags are computed, as for a real caller
  return r.count;
}

[[gnu::noinline]] std::size_t pass_for_each(Fixture& f, DrainPath path) {
  return for_each_into(f, path, neuron::bench::span_sum(path));
}

[[gnu::noinline]] std::size_t pass_for_each_plain(Fixture& f, DrainPath path) {
  return for_each_into(f, path, &neuron::bench::span_sum_plain);
}

[[gnu::noinline]] std::size_t pass_for_each_record(Fixture& f, DrainPath path) {
  neuron::RingView v(f.view(), neuron::Doorbell::atomic(&g_head), 0);
  v.set_drain_path(path);
  std::uint64_t sum = 0;
  const auto r = v.for_each([&](const neuron::Record& rec) { sum += rec.bytes[0]; });
  benchmark::DoNotOptimize(sum);
  benchmark::DoNotOptimize(r);  // the overflow flags are computed, as for a real caller
  return r.count;
}

[[gnu::noinline]] std::size_t pass_memcpy(Fixture& f, DrainPath) {
  std::memcpy(f.out.data(), f.ring.data(), std::size_t{f.entries} * sizeof(neuron::Record));
  benchmark::DoNotOptimize(f.out.data());
  benchmark::ClobberMemory();
  return f.entries;
}

[[gnu::noinline]] std::size_t pass_reference(Fixture& f, DrainPath) {
  volatile std::uint32_t tail = f.entries;  // the producer's TAIL: one full pass
  neuron::reference::EnsNq nq;
  nq.entries = f.entries;
  nq.base = f.ring[0].bytes.data();
  nq.tail = &tail;
  std::uint32_t consumed = 0;
  const auto n = neuron::reference::nq_read_cayman(&nq, f.out.data(), f.entries * 16, &consumed);
  g_head.store(nq.head, std::memory_order_release);  // the ACK, once, like drain's doorbell
  benchmark::DoNotOptimize(n);
  benchmark::ClobberMemory();
  return n;
}

using Pass = std::size_t (*)(Fixture&, DrainPath);

void run(benchmark::State& st, Fixture& f, Pass pass, DrainPath path) {
  for (auto _ : st) {
    if (pass(f, path) != f.entries) {
      st.SkipWithError("a pass consumed a short count");
      break;
    }
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * f.entries);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * f.entries * 16);
}

/// Console output as usual, and per benchmark the records/s of its fastest
/// repetition (the "max" statistic; the single run's without repetitions),
/// of its median one, and the repetitions' coefficient of variation.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate, median, cv;
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred) continue;
      const auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) continue;
      const std::string name = r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args);
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "max") rate[name] = it->second;
        if (r.aggregate_name == "median") median[name] = it->second;
        if (r.aggregate_name == "cv") cv[name] = it->second;
      } else if (!rate.count(name)) {
        rate[name] = median[name] = it->second;
      }
    }
  }
};

/// Takes --entries=N out of argv (Google Benchmark rejects flags it does not
/// know); 0 when it is not a power of two in [4, 65536].
std::uint32_t take_entries(int& argc, char** argv) {
  std::uint32_t n = kDefaultEntries;
  int w = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--entries=")) {
      const unsigned long v = std::strtoul(argv[i] + 10, nullptr, 0);
      n = (v >= 4 && v <= 65536 && neuron::RingView::is_power_of_two(v)) ? static_cast<std::uint32_t>(v) : 0;
    } else {
      argv[w++] = argv[i];
    }
  }
  argc = w;
  return n;
}

void print_ratio(const char* what, double num, double den, double target, const char* note = "") {
  const double r = num / den;
  std::printf("ratio %-18s = %.2f  (target >= %.2f) %s%s\n", what, r, target, r >= target ? "MET" : "MISSED", note);
}

/// "for_each/drain 1.23 MET" (or n/a when a median is missing).
std::string short_ratio(const char* what, double num, double den, double target) {
  char buf[96];
  if (num <= 0 || den <= 0) {
    std::snprintf(buf, sizeof buf, "%s n/a", what);
  } else {
    const double r = num / den;
    std::snprintf(buf, sizeof buf, "%s %.2f %s", what, r, r >= target ? "MET" : "MISSED");
  }
  return buf;
}

/// /proc/cpuinfo's first "model name" (empty elsewhere).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t entries = take_entries(argc, argv);
  if (entries == 0) {
    std::fprintf(stderr, "bench_drain: --entries must be a power of two from 4 to 65536\n");
    return 2;
  }
  // Defaults first, so that the same flags on the command line win.
  std::vector<char*> args{argv[0]};
  std::string reps = "--benchmark_repetitions=25", min_time = "--benchmark_min_time=0.15",
              inter = "--benchmark_enable_random_interleaving=true",
              aggr = "--benchmark_display_aggregates_only=true";
  args.push_back(reps.data());
  args.push_back(min_time.data());
  args.push_back(inter.data());
  args.push_back(aggr.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int n_args = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n_args, args.data());
  if (benchmark::ReportUnrecognizedArguments(n_args, args.data())) return 1;
  benchmark::AddCustomContext("ring_entries", std::to_string(entries));
  const DrainPath def = neuron::default_drain_path();
  std::vector<DrainPath> paths;
  std::string path_list;
  for (const DrainPath p : neuron::kDrainPaths) {
    if (!neuron::drain_path_supported(p)) continue;
    paths.push_back(p);
    path_list += (path_list.empty() ? "" : ",") + std::string(neuron::drain_path_name(p));
  }
  benchmark::AddCustomContext("drain_path", neuron::drain_path_name(def));
  benchmark::AddCustomContext("drain_paths", path_list);
  benchmark::AddCustomContext("cpu_model", cpu_model());

  Fixture f(entries);  // one ring and one buffer for every contender
  const std::uint64_t plain_sum = neuron::bench::span_sum_plain(f.view());
  for (const DrainPath p : paths) {
    const std::uint64_t s = neuron::bench::span_sum(p)(f.view());
    if (s != plain_sum) {
      std::fprintf(stderr, "bench_drain: the %s consumer sums %llu, the plain one %llu\n", neuron::drain_path_name(p),
                   static_cast<unsigned long long>(s), static_cast<unsigned long long>(plain_sum));
      return 1;
    }
  }
  const auto add = [&f](const std::string& name, Pass pass, DrainPath path) {
    benchmark::RegisterBenchmark(name.c_str(), [&f, pass, path](benchmark::State& st) { run(st, f, pass, path); })
        ->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
  };
  add("BM_Drain", &pass_drain, def);
  add("BM_DrainBatch/256", &pass_drain_batch, def);
  add("BM_ForEach", &pass_for_each_plain, def);
  add("BM_ForEachWide", &pass_for_each, def);
  add("BM_ForEachRecord", &pass_for_each_record, def);
  add("BM_Memcpy", &pass_memcpy, def);
  add("BM_Reference", &pass_reference, def);
  for (const DrainPath p : paths) {
    if (p == def) continue;
    add(std::string("BM_Drain/") + neuron::drain_path_name(p), &pass_drain, p);
    add(std::string("BM_ForEachWide/") + neuron::drain_path_name(p), &pass_for_each, p);
  }

  RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();

  const auto in = [](const std::map<std::string, double>& m, const char* n) {
    const auto it = m.find(n);
    return it == m.end() ? 0.0 : it->second;
  };
  const auto get = [&](const char* n) { return in(rep.rate, n); };
  const auto med = [&](const char* n) { return in(rep.median, n); };
  // One line of records/s of the default path's benchmarks, from `at`.
  const auto rates_line = [&](const char* what, auto at) {
    std::printf("records/s (%s): drain %.3g, drain/256 %.3g, for_each %.3g, for_each with a plain consumer %.3g, "
                "for_each per record %.3g, memcpy %.3g, reference %.3g\n",
                what, at("BM_Drain"), at("BM_DrainBatch/256"), at("BM_ForEachWide"), at("BM_ForEach"),
                at("BM_ForEachRecord"), at("BM_Memcpy"), at("BM_Reference"));
  };
  const double drain = get("BM_Drain"), each = get("BM_ForEachWide"), each_plain = get("BM_ForEach"),
               memcpy_rate = get("BM_Memcpy"), ref = get("BM_Reference");
  if (drain > 0 && memcpy_rate > 0 && ref > 0 && each > 0) {
    const std::string fastest = "fastest repetition, ring of " + std::to_string(entries) + " records, path " +
                                std::string(neuron::drain_path_name(def));
    std::printf("\n");
    rates_line(fastest.c_str(), get);
    rates_line("median", med);
    if (!rep.cv.empty()) {
      std::printf("spread (cv of the repetitions):");
      for (const auto& [name, v] : rep.cv) std::printf(" %s %.1f%%", name.c_str(), 100 * v);
      std::printf("\n");
    }
    char plain[96];
    std::snprintf(plain, sizeof plain, " (consumer as wide as the path; plain C++ consumer %.2f)", each_plain / drain);
    print_ratio("for_each/drain", each, drain, 1.0, plain);
    print_ratio("drain/memcpy", drain, memcpy_rate, 0.9);
    print_ratio("drain/reference", drain, ref, 2.0);
    std::printf("ratios of the medians: %s, %s, %s\n",
                short_ratio("for_each/drain", med("BM_ForEachWide"), med("BM_Drain"), 1.0).c_str(),
                short_ratio("drain/memcpy", med("BM_Drain"), med("BM_Memcpy"), 0.9).c_str(),
                short_ratio("drain/reference", med("BM_Drain"), med("BM_Reference"), 2.0).c_str());
    // The same three for every path (the default one's are those above).
    for (const DrainPath p : paths) {
      const std::string sfx = p == def ? "" : std::string("/") + neuron::drain_path_name(p);
      const double d = get(("BM_Drain" + sfx).c_str()), e = get(("BM_ForEachWide" + sfx).c_str());
      std::string note;
      if (p == def) {
        const auto env = neuron::drain_path_env();
        const bool forced = !env.empty() && neuron::parse_drain_path(env) == p;
        note = env.empty() ? " (default)"
               : forced    ? " (default: NEURON_DRAIN_PATH=" + std::string(env) + ")"
                           : " (default; NEURON_DRAIN_PATH=" + std::string(env) + " ignored: unknown or unsupported)";
      }
      std::printf("path %-6s: %s, %s, %s%s\n", neuron::drain_path_name(p), short_ratio("for_each/drain", e, d, 1.0).c_str(),
                  short_ratio("drain/memcpy", d, memcpy_rate, 0.9).c_str(), short_ratio("drain/reference", d, ref, 2.0).c_str(),
                  note.c_str());
    }
  }
  return 0;
}
