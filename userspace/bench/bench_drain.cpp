// SPDX-License-Identifier: MIT
//
// Drain throughput over a 64K-entry ring (1 MiB of records), in one run:
//   BM_Drain       RingView::drain of the whole ring into a buffer
//   BM_DrainBatch  RingView::drain in batches of 256 records
//   BM_ForEach     RingView::for_each, zero copy (sums one byte per record)
//   BM_Memcpy      a plain memcpy of the same 1 MiB
//   BM_Reference   the runtime's nq_read_cayman transcribed in reference/
//                  (docs/hardware.md#host-drain)
// Each iteration consumes the full ring (65536 records; items = records).
// At the end the ratios drain/memcpy and drain/reference are printed with the
// targets (issue 3: drain >= 1/3 of memcpy, >= 2x the reference).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "libneuron/ring.hpp"
#include "nq_read_ref.hpp"

namespace {

constexpr std::uint32_t kEntries = 64 * 1024;

/// A full first pass: every slot fresh with phase 1.
struct Fixture {
  std::vector<neuron::Record> ring = std::vector<neuron::Record>(kEntries);
  std::vector<neuron::Record> out = std::vector<neuron::Record>(kEntries);
  Fixture() {
    for (std::uint32_t i = 0; i < kEntries; ++i) {
      auto& r = ring[i];
      for (int b = 0; b < 16; ++b) r.bytes[b] = static_cast<std::uint8_t>(i * 7 + b);
      r.bytes[3] = NEURON_ISA_HEADER_PHASE | NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START;
    }
  }
};

Fixture& fx() {
  static Fixture f;
  return f;
}

std::atomic<std::uint32_t> g_head{0};

void BM_Drain(benchmark::State& st) {
  auto& f = fx();
  for (auto _ : st) {
    // A fresh view at HEAD 0 each pass: the ring holds one full pass (phase 1).
    neuron::RingView v(std::span<const neuron::Record>(f.ring.data(), f.ring.size()),
                       neuron::Doorbell::atomic(&g_head), 0);
    const auto r = v.drain(f.out);
    benchmark::DoNotOptimize(r.count);
    benchmark::DoNotOptimize(f.out.data());
    benchmark::ClobberMemory();
    if (r.count != kEntries) st.SkipWithError("drain returned a short count");
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries * 16);
}

void BM_DrainBatch(benchmark::State& st) {
  auto& f = fx();
  const auto batch = static_cast<std::size_t>(st.range(0));
  for (auto _ : st) {
    neuron::RingView v(std::span<const neuron::Record>(f.ring.data(), f.ring.size()),
                       neuron::Doorbell::atomic(&g_head), 0);
    std::size_t total = 0;
    for (;;) {
      const auto r = v.drain(std::span<neuron::Record>(f.out.data() + total % kEntries, batch));
      if (r.count == 0) break;
      total += r.count;
    }
    benchmark::DoNotOptimize(total);
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries * 16);
}

void BM_ForEach(benchmark::State& st) {
  auto& f = fx();
  for (auto _ : st) {
    neuron::RingView v(std::span<const neuron::Record>(f.ring.data(), f.ring.size()),
                       neuron::Doorbell::atomic(&g_head), 0);
    std::uint64_t sum = 0;
    const auto r = v.for_each([&](const neuron::Record& rec) { sum += rec.bytes[0]; });
    benchmark::DoNotOptimize(sum);
    if (r.count != kEntries) st.SkipWithError("for_each returned a short count");
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries * 16);
}

void BM_Memcpy(benchmark::State& st) {
  auto& f = fx();
  for (auto _ : st) {
    std::memcpy(f.out.data(), f.ring.data(), kEntries * sizeof(neuron::Record));
    benchmark::DoNotOptimize(f.out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries * 16);
}

void BM_Reference(benchmark::State& st) {
  auto& f = fx();
  volatile std::uint32_t tail = kEntries;  // the producer's TAIL: one full pass
  neuron::reference::EnsNq nq;
  nq.entries = kEntries;
  nq.base = f.ring[0].bytes.data();
  nq.tail = &tail;
  for (auto _ : st) {
    nq.head = 0;
    std::uint32_t consumed = 0;
    const auto n = neuron::reference::nq_read_cayman(&nq, f.out.data(), kEntries * 16, &consumed);
    g_head.store(nq.head, std::memory_order_release);  // the ACK, once, like drain's doorbell
    benchmark::DoNotOptimize(n);
    benchmark::ClobberMemory();
    if (n != kEntries) st.SkipWithError("reference returned a short count");
  }
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries);
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * kEntries * 16);
}

BENCHMARK(BM_Drain);
BENCHMARK(BM_DrainBatch)->Arg(256);
BENCHMARK(BM_ForEach);
BENCHMARK(BM_Memcpy);
BENCHMARK(BM_Reference);

/// Console output as usual, and remember items/s per benchmark for the ratios.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate;
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred) continue;
      const auto it = r.counters.find("items_per_second");
      if (it == r.counters.end()) continue;
      // With repetitions prefer the median aggregate; otherwise the single run.
      const std::string name = r.run_name.function_name;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      if (r.run_type == Run::RT_Aggregate || !rate.count(name)) rate[name] = it->second;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();

  const auto get = [&](const char* n) { return rep.rate.count(n) ? rep.rate[n] : 0.0; };
  const double drain = get("BM_Drain"), memcpy_rate = get("BM_Memcpy"), ref = get("BM_Reference"),
               each = get("BM_ForEach");
  if (drain > 0 && memcpy_rate > 0 && ref > 0) {
    const double r_mem = drain / memcpy_rate, r_ref = drain / ref;
    std::printf("\nrecords/s: drain %.3g, for_each %.3g, memcpy %.3g, reference %.3g\n", drain, each, memcpy_rate,
                ref);
    std::printf("ratio drain/memcpy    = %.2f  (target >= 0.33) %s\n", r_mem, r_mem >= 1.0 / 3 ? "MET" : "MISSED");
    std::printf("ratio drain/reference = %.2f  (target >= 2.00) %s\n", r_ref, r_ref >= 2.0 ? "MET" : "MISSED");
  }
  return 0;
}
