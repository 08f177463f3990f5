// SPDX-License-Identifier: MIT
//
// bench_drain's span consumers (span_sum.hpp). The vector ones mask each
// record to its byte 0 (the low byte of its first 64-bit word) and add the
// words into 64-bit lanes: no record is skipped, none is read twice. Like
// the library's kernels they use per-function target attributes, so the
// benchmark still runs on a CPU without AVX2 or AVX-512.
#include "span_sum.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's _mm512_reduce_add_epi64 passes an undefined vector to a builtin,
// which -Wuninitialized reports once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define NEURON_SPAN_SUM_X86 1
#endif

namespace neuron::bench {

std::uint64_t span_sum_plain(std::span<const Record> s) noexcept {
  // Four running sums: each add waits only on its own chain.
  std::uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= s.size(); i += 4) {
    t0 += s[i].bytes[0];
    t1 += s[i + 1].bytes[0];
    t2 += s[i + 2].bytes[0];
    t3 += s[i + 3].bytes[0];
  }
  for (; i < s.size(); ++i) t0 += s[i].bytes[0];
  return t0 + t1 + t2 + t3;
}

#if defined(NEURON_SPAN_SUM_X86)
namespace {

std::uint64_t span_sum_sse2(std::span<const Record> s) noexcept {
  const __m128i byte0 = _mm_set_epi64x(0, 0xff);
  __m128i a0 = _mm_setzero_si128(), a1 = a0;
  const Record* p = s.data();
  std::size_t i = 0;
  for (; i + 2 <= s.size(); i += 2) {
    a0 = _mm_add_epi64(a0, _mm_and_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(p + i)), byte0));
    a1 = _mm_add_epi64(a1, _mm_and_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 1)), byte0));
  }
  const __m128i a = _mm_add_epi64(a0, a1);
  std::uint64_t sum = static_cast<std::uint64_t>(_mm_cvtsi128_si64(a));
  for (; i < s.size(); ++i) sum += p[i].bytes[0];
  return sum;
}

__attribute__((target("avx2"))) std::uint64_t span_sum_avx2(std::span<const Record> s) noexcept {
  const __m256i byte0 = _mm256_set_epi64x(0, 0xff, 0, 0xff);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  const Record* p = s.data();
  std::size_t i = 0;
  for (; i + 4 <= s.size(); i += 4) {
    a0 = _mm256_add_epi64(a0, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), byte0));
    a1 = _mm256_add_epi64(a1,
                          _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 2)), byte0));
  }
  const __m256i a = _mm256_add_epi64(a0, a1);
  const __m128i b = _mm_add_epi64(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  std::uint64_t sum = static_cast<std::uint64_t>(_mm_cvtsi128_si64(b));
  for (; i < s.size(); ++i) sum += p[i].bytes[0];
  return sum;
}

__attribute__((target("avx512f"))) std::uint64_t span_sum_avx512(std::span<const Record> s) noexcept {
  const __m512i byte0 = _mm512_set_epi64(0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff);
  __m512i a0 = _mm512_setzero_si512(), a1 = a0;
  const Record* p = s.data();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    a0 = _mm512_add_epi64(a0, _mm512_and_si512(_mm512_loadu_si512(p + i), byte0));
    a1 = _mm512_add_epi64(a1, _mm512_and_si512(_mm512_loadu_si512(p + i + 4), byte0));
  }
  std::uint64_t sum = static_cast<std::uint64_t>(_mm512_reduce_add_epi64(_mm512_add_epi64(a0, a1)));
  for (; i < s.size(); ++i) sum += p[i].bytes[0];
  return sum;
}

}  // namespace
#endif

SpanSum span_sum(DrainPath path) noexcept {
  switch (path) {
#if defined(NEURON_SPAN_SUM_X86)
    case DrainPath::Sse2: return &span_sum_sse2;
    case DrainPath::Avx2: return &span_sum_avx2;
    case DrainPath::Avx512: return &span_sum_avx512;
#endif
    default: return &span_sum_plain;
  }
}

}  // namespace neuron::bench
