// SPDX-License-Identifier: MIT
//
// RingView's scan and copy kernels, one set per DrainPath, and the choice of
// path (userspace/README.md#drain-paths; the ordering argument is at the top
// of include/libneuron/ring.hpp). The AVX2 and AVX-512 kernels are compiled
// with per-function target attributes, not a global -m flag, and only called
// when cpuid reports the extension: the library still runs on a CPU without
// them, and builds with a compiler that cannot emit them
// (NEURON_DRAIN_NO_AVX2 / NEURON_DRAIN_NO_AVX512 build as such a compiler
// would). Every kernel returns exactly what the scalar one returns.
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "libneuron/ring.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define NEURON_DRAIN_X86 1
// GCC 12's _mm512_extracti64x4_epi64 / _mm512_inserti64x4 pass an undefined
// vector to their builtins, which -Wuninitialized reports once inlined
// (GCC bug 105593, fixed in 12.3 and 13): quiet in the header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#if !defined(NEURON_DRAIN_NO_AVX2)
#define NEURON_DRAIN_HAVE_AVX2 1
#endif
#if !defined(NEURON_DRAIN_NO_AVX512) && !defined(NEURON_DRAIN_NO_AVX2)
#define NEURON_DRAIN_HAVE_AVX512 1
#endif
#endif

namespace neuron {
namespace {

static_assert(std::endian::native == std::endian::little, "header is byte 3 of the first little-endian word");
constexpr unsigned kHeaderShift = 8 * NEURON_ISA_HEADER_OFFSET;

std::uint8_t acquire_header(const Record& r) noexcept {
  // The ring may be a read-only mapping; an atomic load does not write.
  return std::atomic_ref<std::uint8_t>(const_cast<std::uint8_t&>(r.bytes[NEURON_ISA_HEADER_OFFSET]))
      .load(std::memory_order_acquire);
}

/// Bits 0..n-1 set (n <= 64).
constexpr std::uint64_t low_bits(std::size_t n) noexcept {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

/// From a mask of phase bits (bit i: slot i's header has the phase bit) of
/// n slots, the first slot whose phase is not `phase`, or n.
std::size_t first_stale(std::uint64_t phase_bits, std::size_t n, std::uint8_t phase) noexcept {
  const std::uint64_t stale = (phase ? ~phase_bits : phase_bits) & low_bits(n);
  return stale ? static_cast<std::size_t>(std::countr_zero(stale)) : n;
}

/// Phase bits of p[i, n) into `bits` at their index, one acquire load each,
/// no branch per slot (the tail of every vector scan, and the scalar scan).
std::uint64_t phase_bits_tail(const Record* p, std::size_t i, std::size_t n, std::uint64_t bits) noexcept {
  for (; i < n; ++i)
    bits |= std::uint64_t{(acquire_header(p[i]) & NEURON_ISA_HEADER_PHASE) != 0} << i;
  return bits;
}

// ---------------------------------------------------------------- scalar
std::size_t scan_scalar(const Record* p, std::size_t n, std::uint8_t phase) noexcept {
  return first_stale(phase_bits_tail(p, 0, n, 0), n, phase);
}

void copy_scalar(Record* dst, const Record* src, std::size_t n, std::uint8_t& all, std::uint8_t& any) noexcept {
  std::uint32_t a = ~std::uint32_t{0}, o = 0;
  for (std::size_t i = 0; i < n; ++i) {
#if defined(__SANITIZE_THREAD__)
    // Under ThreadSanitizer a lossy test producer may rewrite a slot while it
    // is copied (the copy is then discarded): copy with relaxed atomic loads
    // so the tool sees no plain data race. Same bytes, same checks.
    auto* s64 = reinterpret_cast<const std::uint64_t*>(src[i].bytes.data());
    const std::uint64_t lo = __atomic_load_n(s64, __ATOMIC_RELAXED);
    const std::uint64_t hi = __atomic_load_n(s64 + 1, __ATOMIC_RELAXED);
    std::memcpy(dst[i].bytes.data(), &lo, 8);
    std::memcpy(dst[i].bytes.data() + 8, &hi, 8);
    const auto w0 = static_cast<std::uint32_t>(lo);
#else
    std::uint32_t w0;
    std::memcpy(&w0, src[i].bytes.data(), 4);
    std::memcpy(&dst[i], &src[i], sizeof(Record));
#endif
    a &= w0;
    o |= w0;
  }
  all = static_cast<std::uint8_t>(a >> kHeaderShift);
  any = static_cast<std::uint8_t>(o >> kHeaderShift);
}

std::uint8_t or_headers_scalar(const Record* p, std::size_t n) noexcept {
  std::uint8_t any = 0;
  for (std::size_t i = 0; i < n; ++i) any |= p[i].header();
  return any;
}

constexpr DrainKernels kScalar{DrainPath::Scalar, &scan_scalar, &copy_scalar, &or_headers_scalar};

#if defined(NEURON_DRAIN_X86)
// ---------------------------------------------------------------- SSE2
// Byte 3 of a 128-bit AND/OR accumulator (the header of the records folded in).
std::uint8_t header_of(__m128i v) noexcept {
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(_mm_cvtsi128_si32(v)) >> kHeaderShift);
}

/// Phase bits of 4 records (each 16-byte aligned): dword 0 of each, sign bits.
inline int phase4_sse2(__m128i r0, __m128i r1, __m128i r2, __m128i r3) noexcept {
  const __m128i d0 = _mm_unpacklo_epi64(_mm_unpacklo_epi32(r0, r1), _mm_unpacklo_epi32(r2, r3));
  return _mm_movemask_ps(_mm_castsi128_ps(d0));  // bit k: bit 31 of dword 0 = phase of record k
}

std::size_t scan_sse2(const Record* p, std::size_t n, std::uint8_t phase) noexcept {
  const auto at = [p](std::size_t j) { return _mm_load_si128(reinterpret_cast<const __m128i*>(p + j)); };
  std::uint64_t bits = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    bits |= static_cast<std::uint64_t>(phase4_sse2(at(i), at(i + 1), at(i + 2), at(i + 3))) << i;
  return first_stale(phase_bits_tail(p, i, n, bits), n, phase);
}

void copy_sse2(Record* dst, const Record* src, std::size_t n, std::uint8_t& all, std::uint8_t& any) noexcept {
  __m128i va = _mm_set1_epi32(-1), vo = _mm_setzero_si128();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128i r0 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i r1 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i + 1));
    const __m128i r2 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i + 2));
    const __m128i r3 = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i + 3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 1), r1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 2), r2);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 3), r3);
    va = _mm_and_si128(va, _mm_and_si128(_mm_and_si128(r0, r1), _mm_and_si128(r2, r3)));
    vo = _mm_or_si128(vo, _mm_or_si128(_mm_or_si128(r0, r1), _mm_or_si128(r2, r3)));
  }
  for (; i < n; ++i) {
    const __m128i r = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r);
    va = _mm_and_si128(va, r);
    vo = _mm_or_si128(vo, r);
  }
  all = header_of(va);
  any = header_of(vo);
}

std::uint8_t or_headers_sse2(const Record* p, std::size_t n) noexcept {
  const auto at = [p](std::size_t j) { return _mm_load_si128(reinterpret_cast<const __m128i*>(p + j)); };
  __m128i vo = _mm_setzero_si128();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i r03 = _mm_or_si128(_mm_or_si128(at(i), at(i + 1)), _mm_or_si128(at(i + 2), at(i + 3)));
    const __m128i r47 = _mm_or_si128(_mm_or_si128(at(i + 4), at(i + 5)), _mm_or_si128(at(i + 6), at(i + 7)));
    vo = _mm_or_si128(vo, _mm_or_si128(r03, r47));
  }
  for (; i < n; ++i) vo = _mm_or_si128(vo, at(i));
  return header_of(vo);
}

constexpr DrainKernels kSse2{DrainPath::Sse2, &scan_sse2, &copy_sse2, &or_headers_sse2};

/// Records before src reaches a 64-byte boundary (at most 3, at most n):
/// copied 16 bytes at a time so the wide loads after them stay in one line.
inline std::size_t to_line(const Record* src, std::size_t n) noexcept {
  const std::size_t r = ((64 - (reinterpret_cast<std::uintptr_t>(src) & 63)) & 63) / sizeof(Record);
  return r < n ? r : n;
}
#endif

#if defined(NEURON_DRAIN_HAVE_AVX2)
// ---------------------------------------------------------------- AVX2
#define NEURON_AVX2 __attribute__((target("avx2")))

// (Helpers, not lambdas: a lambda does not inherit its function's target.)
NEURON_AVX2 inline __m256i load2(const Record* p) noexcept {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

NEURON_AVX2 std::size_t scan_avx2(const Record* p, std::size_t n, std::uint8_t phase) noexcept {
  // Two records per 32-byte load; dword 0 of records i..i+7 gathered in
  // order (unpacks put them as i, i+2, i+4, i+6 | i+1, i+3, i+5, i+7; one
  // permute restores the order), their sign bits are the phases.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  std::uint64_t bits = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i d0 = _mm256_unpacklo_epi64(_mm256_unpacklo_epi32(load2(p + i), load2(p + i + 2)),
                                             _mm256_unpacklo_epi32(load2(p + i + 4), load2(p + i + 6)));
    const int m = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(d0, order)));
    bits |= static_cast<std::uint64_t>(static_cast<unsigned>(m)) << i;
  }
  return first_stale(phase_bits_tail(p, i, n, bits), n, phase);
}

NEURON_AVX2 void copy_avx2(Record* dst, const Record* src, std::size_t n, std::uint8_t& all,
                           std::uint8_t& any) noexcept {
  __m128i va = _mm_set1_epi32(-1), vo = _mm_setzero_si128();
  std::size_t i = 0;
  for (const std::size_t head = to_line(src, n); i < head; ++i) {
    const __m128i r = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r);
    va = _mm_and_si128(va, r);
    vo = _mm_or_si128(vo, r);
  }
  __m256i wa = _mm256_set1_epi32(-1), wo = _mm256_setzero_si256();
  for (; i + 8 <= n; i += 8) {
    const __m256i r0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i r1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + 2));
    const __m256i r2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + 4));
    const __m256i r3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i + 6));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), r0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 2), r1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 4), r2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 6), r3);
    wa = _mm256_and_si256(wa, _mm256_and_si256(_mm256_and_si256(r0, r1), _mm256_and_si256(r2, r3)));
    wo = _mm256_or_si256(wo, _mm256_or_si256(_mm256_or_si256(r0, r1), _mm256_or_si256(r2, r3)));
  }
  for (; i < n; ++i) {
    const __m128i r = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r);
    va = _mm_and_si128(va, r);
    vo = _mm_or_si128(vo, r);
  }
  va = _mm_and_si128(va, _mm_and_si128(_mm256_castsi256_si128(wa), _mm256_extracti128_si256(wa, 1)));
  vo = _mm_or_si128(vo, _mm_or_si128(_mm256_castsi256_si128(wo), _mm256_extracti128_si256(wo, 1)));
  all = header_of(va);
  any = header_of(vo);
}

NEURON_AVX2 std::uint8_t or_headers_avx2(const Record* p, std::size_t n) noexcept {
  __m256i wo = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    wo = _mm256_or_si256(wo, _mm256_or_si256(_mm256_or_si256(load2(p + i), load2(p + i + 2)),
                                             _mm256_or_si256(load2(p + i + 4), load2(p + i + 6))));
  __m128i vo = _mm_or_si128(_mm256_castsi256_si128(wo), _mm256_extracti128_si256(wo, 1));
  for (; i < n; ++i) vo = _mm_or_si128(vo, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i)));
  return header_of(vo);
}

constexpr DrainKernels kAvx2{DrainPath::Avx2, &scan_avx2, &copy_avx2, &or_headers_avx2};
#endif

#if defined(NEURON_DRAIN_HAVE_AVX512)
// ---------------------------------------------------------------- AVX-512F
#define NEURON_AVX512 __attribute__((target("avx512f")))

NEURON_AVX512 inline __m512i load4(const Record* p) noexcept {
  return _mm512_loadu_si512(reinterpret_cast<const void*>(p));
}

NEURON_AVX512 std::size_t scan_avx512(const Record* p, std::size_t n, std::uint8_t phase) noexcept {
  // Four records per 64-byte load; dword 0 of records i..i+15 gathered in
  // order by two two-source permutes and one 256-bit insert, then their
  // sign bits are the phases (a compare with zero).
  const __m512i first = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  const __m512i zero = _mm512_setzero_si512();
  std::uint64_t bits = 0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i lo = _mm512_permutex2var_epi32(load4(p + i), first, load4(p + i + 4));       // records i..i+7
    const __m512i hi = _mm512_permutex2var_epi32(load4(p + i + 8), first, load4(p + i + 12));  // i+8..i+15
    const __m512i d0 = _mm512_inserti64x4(lo, _mm512_castsi512_si256(hi), 1);
    const __mmask16 m = _mm512_cmplt_epi32_mask(d0, zero);
    bits |= static_cast<std::uint64_t>(m) << i;
  }
  return first_stale(phase_bits_tail(p, i, n, bits), n, phase);
}

NEURON_AVX512 void copy_avx512(Record* dst, const Record* src, std::size_t n, std::uint8_t& all,
                               std::uint8_t& any) noexcept {
  __m128i va = _mm_set1_epi32(-1), vo = _mm_setzero_si128();
  std::size_t i = 0;
  for (const std::size_t head = to_line(src, n); i < head; ++i) {
    const __m128i r = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r);
    va = _mm_and_si128(va, r);
    vo = _mm_or_si128(vo, r);
  }
  __m512i za = _mm512_set1_epi32(-1), zo = _mm512_setzero_si512();
  for (; i + 16 <= n; i += 16) {
    const __m512i r0 = _mm512_load_si512(reinterpret_cast<const void*>(src + i));
    const __m512i r1 = _mm512_load_si512(reinterpret_cast<const void*>(src + i + 4));
    const __m512i r2 = _mm512_load_si512(reinterpret_cast<const void*>(src + i + 8));
    const __m512i r3 = _mm512_load_si512(reinterpret_cast<const void*>(src + i + 12));
    _mm512_storeu_si512(reinterpret_cast<void*>(dst + i), r0);
    _mm512_storeu_si512(reinterpret_cast<void*>(dst + i + 4), r1);
    _mm512_storeu_si512(reinterpret_cast<void*>(dst + i + 8), r2);
    _mm512_storeu_si512(reinterpret_cast<void*>(dst + i + 12), r3);
    za = _mm512_and_si512(za, _mm512_and_si512(_mm512_and_si512(r0, r1), _mm512_and_si512(r2, r3)));
    zo = _mm512_or_si512(zo, _mm512_or_si512(_mm512_or_si512(r0, r1), _mm512_or_si512(r2, r3)));
  }
  for (; i < n; ++i) {
    const __m128i r = _mm_load_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r);
    va = _mm_and_si128(va, r);
    vo = _mm_or_si128(vo, r);
  }
  const __m256i ya = _mm256_and_si256(_mm512_castsi512_si256(za), _mm512_extracti64x4_epi64(za, 1));
  const __m256i yo = _mm256_or_si256(_mm512_castsi512_si256(zo), _mm512_extracti64x4_epi64(zo, 1));
  va = _mm_and_si128(va, _mm_and_si128(_mm256_castsi256_si128(ya), _mm256_extracti128_si256(ya, 1)));
  vo = _mm_or_si128(vo, _mm_or_si128(_mm256_castsi256_si128(yo), _mm256_extracti128_si256(yo, 1)));
  all = header_of(va);
  any = header_of(vo);
}

NEURON_AVX512 std::uint8_t or_headers_avx512(const Record* p, std::size_t n) noexcept {
  __m512i zo = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    zo = _mm512_or_si512(zo, _mm512_or_si512(_mm512_or_si512(load4(p + i), load4(p + i + 4)),
                                             _mm512_or_si512(load4(p + i + 8), load4(p + i + 12))));
  const __m256i yo = _mm256_or_si256(_mm512_castsi512_si256(zo), _mm512_extracti64x4_epi64(zo, 1));
  __m128i vo = _mm_or_si128(_mm256_castsi256_si128(yo), _mm256_extracti128_si256(yo, 1));
  for (; i < n; ++i) vo = _mm_or_si128(vo, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i)));
  return header_of(vo);
}

constexpr DrainKernels kAvx512{DrainPath::Avx512, &scan_avx512, &copy_avx512, &or_headers_avx512};
#endif

struct Choice {
  DrainPath path;
  std::string_view env;
};

Choice choose() noexcept {
  const char* e = std::getenv("NEURON_DRAIN_PATH");
  Choice c{DrainPath::Scalar, e ? std::string_view(e) : std::string_view()};
  if (e) {
    if (const auto p = parse_drain_path(c.env); p && drain_path_supported(*p)) {
      c.path = *p;
      return c;
    }
  }
#if !defined(__SANITIZE_THREAD__)
  for (const DrainPath p : kDrainPaths)
    if (drain_path_supported(p)) c.path = p;
#endif
  return c;
}

const Choice& choice() noexcept {
  static const Choice c = choose();  // once per process, thread-safe
  return c;
}

}  // namespace

const char* drain_path_name(DrainPath p) noexcept {
  switch (p) {
    case DrainPath::Scalar: return "scalar";
    case DrainPath::Sse2: return "sse2";
    case DrainPath::Avx2: return "avx2";
    case DrainPath::Avx512: return "avx512";
  }
  return "?";
}

std::optional<DrainPath> parse_drain_path(std::string_view name) noexcept {
  for (const DrainPath p : kDrainPaths)
    if (name == drain_path_name(p)) return p;
  return std::nullopt;
}

bool drain_path_supported(DrainPath p) noexcept {
#if defined(NEURON_DRAIN_X86)
  __builtin_cpu_init();  // idempotent; needed if called before constructors ran
#endif
  switch (p) {
    case DrainPath::Scalar: return true;
#if defined(NEURON_DRAIN_X86)
    case DrainPath::Sse2: return true;  // the x86-64 baseline
#endif
#if defined(NEURON_DRAIN_HAVE_AVX2)
    case DrainPath::Avx2: return __builtin_cpu_supports("avx2");
#endif
#if defined(NEURON_DRAIN_HAVE_AVX512)
    case DrainPath::Avx512: return __builtin_cpu_supports("avx512f");
#endif
    default: return false;
  }
}

DrainPath default_drain_path() noexcept { return choice().path; }

std::string_view drain_path_env() noexcept { return choice().env; }

const DrainKernels& drain_kernels(DrainPath p) noexcept {
  if (!drain_path_supported(p)) return kScalar;
  switch (p) {
#if defined(NEURON_DRAIN_X86)
    case DrainPath::Sse2: return kSse2;
#endif
#if defined(NEURON_DRAIN_HAVE_AVX2)
    case DrainPath::Avx2: return kAvx2;
#endif
#if defined(NEURON_DRAIN_HAVE_AVX512)
    case DrainPath::Avx512: return kAvx512;
#endif
    default: return kScalar;
  }
}

}  // namespace neuron
