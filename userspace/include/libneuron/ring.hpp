// SPDX-License-Identifier: MIT
//
// RingView: the consumer side of one notification queue, over any memory.
//
// The ring is `entries` 16-byte records (a power of two). The producer (the
// device, or a test thread) writes record number c (a free-running count)
// into slot c & (entries - 1) with the header's phase bit set to
// ((c / entries) & 1) ^ 1 — 1 on the first pass, flipping on each wrap
// (docs/device-model.md) — and only then moves TAIL. The consumer keeps its
// own free-running HEAD count; the phase it expects at HEAD follows from HEAD
// by the same formula. A slot is fresh iff its phase equals the expected phase
// for HEAD's pass: a slot not yet rewritten on this pass still carries the
// previous pass's (opposite) phase. So the consumer never reads TAIL: no
// syscall and no MMIO read on the drain path.
//
// Memory ordering. Freshness is decided by ACQUIRE loads of header bytes
// (byte 3); record bodies are read with plain loads only after such an
// acquire load. The consumer looks at the run of slots from HEAD to the
// ring's end (or to its limit):
//   * an acquire load that sees the expected phase in slot c+k proves slots
//     c..c+k fresh, because the producer writes records in order: record c+k
//     is written only after records c..c+k-1, so that load also makes records
//     c..c+k-1 (bodies and headers) visible;
//   * so the length of the fresh run is found with O(log n) acquire loads
//     (fresh_prefix: the run's last slot first, which settles a run that is
//     fresh to its end with one load; else probe the ends of doubling
//     strides, 64, 128, 256, ... slots, then binary-search the stride where
//     a probe looked stale); the run ends at the first slot that looked stale
//     (of those loaded: a slot between two fresh-looking ones is not looked
//     at, as a producer that writes in order cannot leave one stale);
//   * drain() then copies the run and checks the phase of every copied
//     record from the copied bytes (AND/OR of the headers), so a record is
//     never returned with the wrong phase;
//   * for_each() hands the run's records to fn in place, all after those
//     acquire loads, and ORs the headers of the ones fn took (for the
//     overflow flags) 64 records at a time. It needs no per-record phase
//     check: it refuses a lossy view, and a producer that may not overwrite
//     unread slots cannot change any slot between HEAD and the fresh record
//     an acquire load saw until HEAD moves past it. (Nor would such a check
//     help against a producer that broke that rule: it could rewrite the slot
//     while fn reads it. drain() copies and then checks the copy.)
// This is enough because:
//   * the producer makes a record's 16 bytes visible no later than its header
//     and records in order: the device writes bytes 4..15 first and then,
//     after a write barrier, the 32-bit word holding the header (two DMA
//     writes for a host ring, two stores for a ring in device memory:
//     neuron_nq_store() in emulator/qemu/hw/neuron-notific.c,
//     docs/hardware.md#nq-write), all before it moves TAIL and writes the
//     next record (fault-torn-header-first reverses the two writes, as the
//     torn-record negative control); a thread producer
//     stores the body and then the header with RELEASE. An acquire load that
//     observes a new phase therefore also observes that record and every
//     earlier one (release/acquire pairing for threads; DMA write ordering
//     plus the load-load ordering of an acquire load for the device);
//   * a stale slot is never copied, so a torn body is never returned;
//   * a slot is not rewritten until the consumer hands it back: the producer
//     reuses slot s only after HEAD moved past it, and HEAD is written (once
//     per batch, through the doorbell) after the copies, with a release fence
//     (MMIO) or a release store (memory), so the copies cannot be reordered
//     after the hand-back.
// Requirements on the producer (documented for the device model): the header
// byte of a record must not become visible before its other 15 bytes, and
// records must become visible in ring order. Writing each record body first
// and header last (what the device does), one record after the other,
// satisfies both; so would one atomic 16-byte store.
//
// Overflow. With a lossy (ignore-full) queue the producer may overwrite
// unread slots; the records it writes then carry software_queue_overflow,
// and it never moves HEAD (software owns it, docs/hardware.md#head-doorbell).
// Mark such a view with set_lossy(true). Its drain then also checks, after
// the copies, the header of the slot just before the first one copied (the
// "guard", record HEAD - 1): the producer writes in order, so if it has begun
// overwriting any copied slot (record j + entries, j >= HEAD) it has finished
// record HEAD - 1 + entries and the guard shows that record's phase. A drain
// flags lap_suspected when the guard flipped, when it stopped at a
// stale-looking slot that carries software_queue_overflow, or when a copied
// record changed pass. The owner (NotificationQueue) then asks the driver for
// TAIL (NQ_INFO, a syscall only in those cases and when a copied record
// carries software_queue_overflow), drops the copies that may be of a later
// pass and resynchronises (userspace/README.md#lossy-queues); RingView itself
// never reads TAIL. for_each refuses a lossy view (DrainResult::refused): it
// hands out records in place, which a lossy producer may be rewriting.
// A 1-bit phase cannot tell pass p from pass p + 2: only the owner's TAIL
// check catches a consumer lapped twice between two looks.
//
// SIMD paths (DrainPath; userspace/README.md#drain-paths). The scan that
// finds the fresh run and the bulk copy run in one of four kernels chosen
// once per process: scalar (any CPU), SSE2 (x86-64 baseline), AVX2 and
// AVX-512F (chosen at run time from cpuid, never by a global -mavx2; the
// library runs on a CPU without them). NEURON_DRAIN_PATH=scalar|sse2|avx2|
// avx512 forces one (read once; ignored when the CPU lacks it). Every path
// returns the same records, counts and flags bit for bit. The ordering
// argument above holds for each of them as follows:
//   * the scan of a window (at most kFirstStride slots: the first stride,
//     and the last one the gallop narrowed down to) loads the header bytes
//     of several slots at once: SSE2 one record per 16-byte load, AVX2 two
//     per 32-byte load, AVX-512 four per 64-byte load, then packs their
//     phase bits into one mask (bit i = slot i) and takes the first slot
//     whose phase differs. The scalar path does one acquire load per slot,
//     no branch per slot. The vector loads are plain loads; on x86-64 every
//     load is ordered before every later load in hardware (no load-load
//     reordering, TSO), and an acquire fence after the scan (a compiler
//     barrier there) keeps the compiler from moving a body load above it:
//     "load the phase vector, acquire fence, then copy the bodies";
//   * the run is the slots before the first one whose phase looked stale.
//     Each of them had its own header seen fresh by a load ordered before
//     the copy, so its body is visible when copied (the device writes the
//     body first and the header last, or all 16 bytes at once) -- the last
//     record of the run included. A vector load need not be one atomic
//     access: it may see slot j fresh and slot j - 1 stale (read before its
//     write landed); the run then ends at j - 1, shorter, never torn. The
//     bodies that came with the scan's own loads are never used: the copy
//     loads every record again after the fence;
//   * the gallop's probes between the two windows stay single acquire loads
//     (the in-order argument above), so the scan stays O(log n) + 2 windows;
//   * the copy (SSE2 16, AVX2 32, AVX-512 64 bytes a load, aligned to the
//     ring's cache lines first) ANDs and ORs every copied header as before.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "libneuron/record.hpp"
#include "libneuron/result.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// The kernels RingView's scan and copy run on (see the top of this file and
/// userspace/README.md#drain-paths). Every path gives identical results.
enum class DrainPath : std::uint8_t {
  Scalar = 0,  ///< portable C++: one acquire load per header, memcpy per record
  Sse2 = 1,    ///< 16-byte vectors (the x86-64 baseline)
  Avx2 = 2,    ///< 32-byte vectors, if the CPU has AVX2 (cpuid, at run time)
  Avx512 = 3,  ///< 64-byte vectors, if the CPU has AVX-512F
};
/// Every DrainPath, narrowest first.
inline constexpr DrainPath kDrainPaths[] = {DrainPath::Scalar, DrainPath::Sse2, DrainPath::Avx2, DrainPath::Avx512};

/// "scalar", "sse2", "avx2" or "avx512" (the NEURON_DRAIN_PATH spelling).
[[nodiscard]] const char* drain_path_name(DrainPath p) noexcept;

/// The DrainPath spelled `name` ("scalar", "sse2", "avx2", "avx512"); empty
/// for anything else.
[[nodiscard]] std::optional<DrainPath> parse_drain_path(std::string_view name) noexcept;

/// Whether this build and this CPU can run path `p`: scalar always; SSE2 on
/// x86-64; AVX2 / AVX-512 when the compiler could build the kernel (target
/// attributes, no global -m flag) and cpuid reports the extension
/// (__builtin_cpu_supports). No error: false means "not here".
[[nodiscard]] bool drain_path_supported(DrainPath p) noexcept;

/// The path every RingView starts with, decided once per process on the
/// first call: NEURON_DRAIN_PATH (scalar|sse2|avx2|avx512) if it is set to a
/// path this CPU supports; otherwise the widest supported path (scalar in a
/// ThreadSanitizer build, whose race tests need the scalar path's atomic
/// loads). An unknown or unsupported value is ignored (drain_path_env() says
/// what was asked). Thread-safe.
[[nodiscard]] DrainPath default_drain_path() noexcept;

/// NEURON_DRAIN_PATH as the process had it when default_drain_path() first
/// ran (empty if unset): lets a tool report a request that was ignored.
[[nodiscard]] std::string_view drain_path_env() noexcept;

/// One path's kernels. For the library's RingView; public so that inline
/// code in the header can call them. Preconditions are the caller's.
struct DrainKernels {
  DrainPath path;
  /// Index of the first of p[0, n) (n <= 64) whose header's phase bit differs
  /// from `phase` (NEURON_ISA_HEADER_PHASE or 0), or n: the headers are read
  /// several at a time, the caller puts an acquire fence after it (top).
  std::size_t (*scan)(const Record* p, std::size_t n, std::uint8_t phase) noexcept;
  /// Copy n records src -> dst (src 16-byte aligned); AND and OR of their
  /// header bytes, from the loaded bytes, to all/any.
  void (*copy)(Record* dst, const Record* src, std::size_t n, std::uint8_t& all, std::uint8_t& any) noexcept;
  /// OR of the header bytes of p[0, n) (plain loads).
  std::uint8_t (*or_headers)(const Record* p, std::size_t n) noexcept;
};

/// The kernels of path `p`; the scalar ones if !drain_path_supported(p).
[[nodiscard]] const DrainKernels& drain_kernels(DrainPath p) noexcept;

/// Where the consumer's HEAD count goes after a batch: a device doorbell
/// register (volatile MMIO), an atomic counter (a producer thread in memory),
/// a callback (tests), or nowhere.
class Doorbell {
 public:
  using Fn = void (*)(void* ctx, std::uint32_t head) noexcept;

  Doorbell() = default;
  static Doorbell mmio(volatile std::uint32_t* reg) noexcept {
    Doorbell d;
    d.kind_ = Kind::Mmio;
    d.p_ = const_cast<std::uint32_t*>(reg);
    return d;
  }
  static Doorbell atomic(std::atomic<std::uint32_t>* counter) noexcept {
    Doorbell d;
    d.kind_ = Kind::Atomic;
    d.p_ = counter;
    return d;
  }
  static Doorbell callback(Fn fn, void* ctx) noexcept {
    Doorbell d;
    d.kind_ = Kind::Callback;
    d.fn_ = fn;
    d.p_ = ctx;
    return d;
  }

  void ring(std::uint32_t head) const noexcept {
    switch (kind_) {
      case Kind::Mmio:
        // Order the loads of the drained records before the store that hands
        // their slots back to the device (a compiler barrier on x86, a dmb
        // on weaker CPUs).
#if defined(__SANITIZE_THREAD__)
        std::atomic_signal_fence(std::memory_order_release);  // TSan does not model fences
#else
        std::atomic_thread_fence(std::memory_order_release);
#endif
        *static_cast<volatile std::uint32_t*>(p_) = head;
        break;
      case Kind::Atomic:
        static_cast<std::atomic<std::uint32_t>*>(p_)->store(head, std::memory_order_release);
        break;
      case Kind::Callback:
        fn_(p_, head);
        break;
      case Kind::None:
        break;
    }
  }

 private:
  enum class Kind : std::uint8_t { None, Mmio, Atomic, Callback };
  Kind kind_ = Kind::None;
  void* p_ = nullptr;
  Fn fn_ = nullptr;
};

/// What one drain or for_each did.
struct DrainResult {
  std::size_t count = 0;       ///< records consumed (delivered into `out` / to fn)
  bool sw_overflow = false;    ///< a consumed record had software_queue_overflow
  bool hw_overflow = false;    ///< a consumed record had hardware_queue_overflow
  bool lap_suspected = false;  ///< the producer may have lapped the consumer (see top)
  bool refused = false;        ///< for_each on a lossy view: nothing done (use drain)
  /// Records skipped, never delivered: overwritten by an ignore-full producer,
  /// or dropped by NotificationQueue's lap recovery (copies that may be of a
  /// later pass, and the margin it keeps from the producer). Exact: with the
  /// count of every earlier call, the records delivered plus `lost` are every
  /// record the producer wrote up to the consumer's HEAD
  /// (userspace/README.md#lossy-queues).
  std::uint64_t lost = 0;
  /// Of `lost`, the records the producer had already overwritten when the
  /// recovery read TAIL (TAIL - entries - HEAD); the rest were skipped.
  std::uint64_t overwritten = 0;
  std::uint32_t resyncs = 0;   ///< lap recoveries in this call (NotificationQueue)
  /// DEVICE_GONE (errc::device_gone): the owner (NotificationQueue) has seen
  /// the device go; the ring mapping was not touched
  /// (userspace/README.md#device-loss).
  bool device_gone = false;
  /// Set when the drain could not look at a ring at all: errc::moved_from
  /// for a moved-from or default NotificationQueue (count is then 0 and no
  /// memory was touched). Empty (false) for every drain that ran.
  std::error_code error{};
};

class RingView {
 public:
  RingView() = default;

  /// A view over `ring` (entries = ring.size(), a power of two, >= 1) whose
  /// consumer starts at free-running count `head`. Fails with errc::bad_ring.
  static Result<RingView> make(std::span<const Record> ring, Doorbell doorbell = {},
                               std::uint32_t head = 0);

  /// Same without the check (the caller guarantees a power-of-two size).
  RingView(std::span<const Record> ring, Doorbell doorbell, std::uint32_t head = 0) noexcept
      : ring_(ring.data()),
        entries_(static_cast<std::uint32_t>(ring.size())),
        mask_(static_cast<std::uint32_t>(ring.size()) - 1),
        shift_(log2(static_cast<std::uint32_t>(ring.size()))),
        doorbell_(doorbell),
        kern_(&drain_kernels(default_drain_path())) {
    resync(head);
  }

  /// Run this view's scan and copy on path `p` (default: default_drain_path()).
  /// Returns false and changes nothing when !drain_path_supported(p).
  /// Results do not depend on the path, only speed does.
  bool set_drain_path(DrainPath p) noexcept {
    if (!drain_path_supported(p)) return false;
    kern_ = &drain_kernels(p);
    return true;
  }
  /// The path this view's drain, for_each and available run on.
  [[nodiscard]] DrainPath drain_path() const noexcept { return kern_->path; }

  /// Copy up to out.size() fresh records into `out`, oldest first, in one
  /// pass; then, if any were taken, write HEAD once through the doorbell.
  DrainResult drain(std::span<Record> out) noexcept;

  /// Call fn(const Record&) on up to `max` fresh records in place (zero copy),
  /// then write HEAD once. The reference points into the ring and is valid
  /// only during that call of fn: the slot goes back to the producer when
  /// for_each returns. One consumer thread per view. fn may return bool: false stops after that record.
  /// fn must not throw (this function is noexcept). A lossy view refuses
  /// (returns refused = true, consumes nothing): its producer may rewrite a
  /// slot while fn reads it; drain() copies and checks instead.
  template <class Fn>
  DrainResult for_each(Fn&& fn, std::size_t max = std::numeric_limits<std::size_t>::max()) noexcept;

  /// Like for_each, but fn(std::span<const Record>) gets the fresh records
  /// in place a run at a time (up to kSpanRun records, 4 KiB, oldest first,
  /// never across the ring's end), so it can loop or vectorise over them
  /// without a call per record. Same rules: the span is valid only during
  /// that call, one consumer thread, fn must not throw, up to `max` records
  /// in all, a lossy view refuses. fn may return bool: false stops after
  /// that span (all of it counts as consumed). Then HEAD is written once.
  template <class Fn>
  DrainResult for_each_span(Fn&& fn, std::size_t max = std::numeric_limits<std::size_t>::max()) noexcept;

  /// Records for_each_span hands to fn at most at once (4 KiB: fits in L1
  /// while the flags are OR-ed after fn).
  static constexpr std::size_t kSpanRun = 256;

  /// Fresh records visible now, without consuming them.
  [[nodiscard]] std::size_t available() const noexcept;

  /// Move the consumer to free-running count `head` (after an overflow or
  /// when attaching to a queue that already has a HEAD); no doorbell write.
  void resync(std::uint32_t head) noexcept {
    head_ = head;
    phase_ = expected_phase_bit(head);
  }

  /// Whether the producer may overwrite unread slots (an ignore-full queue):
  /// drain() then checks the guard slot (see top) and for_each() refuses.
  void set_lossy(bool lossy) noexcept { lossy_ = lossy; }
  [[nodiscard]] bool lossy() const noexcept { return lossy_; }

  /// Whether the slot of record `count` still holds a record of that pass
  /// or an earlier one (an acquire load of its header): false once the
  /// producer has written record `count + entries` there (or a later pass of
  /// the other parity). drain() uses it on the guard slot.
  [[nodiscard]] bool not_overtaken(std::uint32_t count) const noexcept {
    const std::uint8_t h = load_header(ring_[count & mask_]);
    return (h & NEURON_ISA_HEADER_PHASE) == expected_phase_bit(count);
  }

  /// The 16 bytes of the slot of record `count` as two relaxed 64-bit loads
  /// (a fingerprint: NotificationQueue compares it to tell an idle lossy
  /// queue from one lapped since it last asked for TAIL).
  void slot_words(std::uint32_t count, std::uint64_t& lo, std::uint64_t& hi) const noexcept {
    auto* p = reinterpret_cast<const std::uint64_t*>(ring_[count & mask_].bytes.data());
    lo = __atomic_load_n(p, __ATOMIC_RELAXED);
    hi = __atomic_load_n(p + 1, __ATOMIC_RELAXED);
  }

  /// Write HEAD through the doorbell now (after resync(): re-arms the
  /// device's threshold interrupt and tells it where the consumer is).
  void publish_head() const noexcept { doorbell_.ring(head_); }

  [[nodiscard]] std::uint32_t head() const noexcept { return head_; }
  [[nodiscard]] std::uint32_t entries() const noexcept { return entries_; }
  /// Phase bit (0/1) a fresh record at HEAD carries.
  [[nodiscard]] bool expected_phase() const noexcept { return phase_ != 0; }
  [[nodiscard]] const Record* data() const noexcept { return ring_; }

  /// Phase written with record number `count` in a ring of 2^shift entries.
  static constexpr bool phase_of(std::uint32_t count, unsigned shift) noexcept {
    return (((count >> shift) & 1u) ^ 1u) != 0;
  }

  static constexpr bool is_power_of_two(std::size_t n) noexcept { return n != 0 && (n & (n - 1)) == 0; }

 private:
  static constexpr std::uint8_t log2(std::uint32_t n) noexcept {
    std::uint8_t s = 0;
    while ((1u << s) < n) ++s;
    return s;
  }
  [[nodiscard]] std::uint8_t expected_phase_bit(std::uint32_t count) const noexcept {
    return phase_of(count, shift_) ? NEURON_ISA_HEADER_PHASE : 0;
  }
  static std::uint8_t load_header(const Record& r) noexcept {
    // The ring may be a read-only mapping; an atomic load does not write.
    return std::atomic_ref<std::uint8_t>(const_cast<std::uint8_t&>(r.bytes[NEURON_ISA_HEADER_OFFSET]))
        .load(std::memory_order_acquire);
  }

  /// Records in the first stride of fresh_prefix (1 KiB).
  static constexpr std::size_t kFirstStride = 64;
  /// Records for_each hands to fn before it ORs their headers (1 KiB: still
  /// in L1 then).
  static constexpr std::size_t kSpan = 64;
  /// How far ahead (records, 1 KiB) for_each prefetches fresh slots.
  static constexpr std::size_t kAhead = 64;
  /// Length of the fresh prefix of p[0, n) (the slots from HEAD to the ring's
  /// end or the caller's limit). The producer writes records in order, so if
  /// the slot at some offset is fresh every earlier one is too, and the
  /// acquire load of its header makes all of them visible: a run longer than
  /// kFirstStride whose last slot is fresh is fresh whole (one load; a
  /// consumer that fell behind). Otherwise the path's scan
  /// kernel reads the first kFirstStride headers several at a time; if all
  /// are fresh it probes the last slot of strides that double from there
  /// (slots 191, 447, ...; at most up to p[n - 1]) until one looks stale,
  /// binary-searches that stride down to kFirstStride slots and scans those
  /// with the kernel: O(log n) acquire loads and at most two windows. The
  /// header of the first stale-looking slot goes to `stop`. Ends with an
  /// acquire fence: every body load after it comes after those header loads.
  static std::size_t fresh_prefix(const DrainKernels& k, const Record* p, std::size_t n, std::uint8_t phase,
                                  std::uint8_t& stop) noexcept;

  /// fn(p[0]), ..., fn(p[n - 1]) four at a time, prefetching kAhead
  /// records ahead while that stays below p[fresh] (fresh >= n: the records
  /// from p that are known fresh).
  template <class Fn>
  static void call_each(Fn& fn, const Record* p, std::size_t n, std::size_t fresh) noexcept;

  void commit(std::size_t n) noexcept {
    head_ += static_cast<std::uint32_t>(n);
    phase_ = expected_phase_bit(head_);
    doorbell_.ring(head_);
  }

  const Record* ring_ = nullptr;
  std::uint32_t entries_ = 0;
  std::uint32_t mask_ = 0;
  std::uint8_t shift_ = 0;
  std::uint8_t phase_ = NEURON_ISA_HEADER_PHASE;  // header bit expected at HEAD
  std::uint32_t head_ = 0;
  bool lossy_ = false;
  Doorbell doorbell_{};
  const DrainKernels* kern_ = &drain_kernels(DrainPath::Scalar);
};

inline std::size_t RingView::fresh_prefix(const DrainKernels& k, const Record* p, std::size_t n,
                                          std::uint8_t phase, std::uint8_t& stop) noexcept {
  const auto fence = [] {
#if defined(__SANITIZE_THREAD__)
    std::atomic_signal_fence(std::memory_order_acquire);  // TSan does not model fences
#else
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
  };
  const auto fresh = [phase](std::uint8_t h) { return (h & NEURON_ISA_HEADER_PHASE) == phase; };
  // A consumer that fell behind finds the whole run fresh: one acquire load
  // of its last slot proves every slot before it (records are written in
  // order), so the scan below is needed only when the run ends early.
  if (n > kFirstStride && fresh(load_header(p[n - 1]))) {
    fence();
    return n;
  }
  // The first window, several headers at a time.
  const std::size_t w = std::min(n, kFirstStride);
  const std::size_t f = k.scan(p, w, phase);
  if (f < w || w == n) {
    fence();
    if (f < w) stop = load_header(p[f]);
    return f;
  }
  // Gallop: `lo` records are known fresh (a load saw slot lo - 1 fresh);
  // probe the end of the next stride, twice as long as the last.
  std::size_t lo = w, hi = n, step = 2 * kFirstStride;
  std::uint8_t h = 0;
  while (lo < n) {
    const std::size_t probe = (n - lo > step ? lo + step : n) - 1;
    h = load_header(p[probe]);
    if (!fresh(h)) {
      hi = probe;
      break;
    }
    lo = probe + 1;
    step *= 2;
  }
  if (lo == n) {
    fence();
    return n;
  }
  // Slot hi looked stale (its header is h), every slot below lo is fresh:
  // binary search in [lo, hi] until at most kFirstStride slots are left,
  // then the kernel scans them for the first stale-looking slot.
  while (hi - lo > kFirstStride) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::uint8_t m = load_header(p[mid]);
    if (fresh(m)) {
      lo = mid + 1;
    } else {
      hi = mid;
      h = m;
    }
  }
  const std::size_t g = lo + k.scan(p + lo, hi - lo, phase);
  fence();
  stop = g < hi ? load_header(p[g]) : h;
  return g;
}

inline std::size_t RingView::available() const noexcept {
  std::uint32_t idx = head_ & mask_;
  std::uint8_t phase = phase_;
  std::size_t n = 0;
  while (n < entries_) {
    const std::size_t run = std::min(static_cast<std::size_t>(entries_) - n, static_cast<std::size_t>(entries_ - idx));
    std::uint8_t stop = 0;
    const std::size_t k = fresh_prefix(*kern_, ring_ + idx, run, phase, stop);
    n += k;
    if (k < run) break;
    idx = (idx + static_cast<std::uint32_t>(run)) & mask_;
    if (idx == 0) phase ^= NEURON_ISA_HEADER_PHASE;
  }
  return n;
}

inline DrainResult RingView::drain(std::span<Record> out) noexcept {
  DrainResult r;
  if (out.empty() || ring_ == nullptr) return r;
  // Locals, not members, in the loop: the copies are byte stores, which the
  // compiler must otherwise assume may change *this.
  const Record* const ring = ring_;
  const DrainKernels& kern = *kern_;
  const std::uint32_t entries = entries_, mask = mask_;
  const std::size_t max = std::min(out.size(), static_cast<std::size_t>(entries));
  Record* const dst = out.data();
  std::uint32_t idx = head_ & mask;
  std::uint8_t phase = phase_;
  std::uint8_t seen = 0;
  std::size_t n = 0;
  while (n < max) {
    // The fresh run from idx to the ring's end (or max), then one copy of it.
    const std::size_t run = std::min(max - n, static_cast<std::size_t>(entries - idx));
    std::uint8_t stop = 0;
    const std::size_t k = fresh_prefix(kern, ring + idx, run, phase, stop);
    if (k) {
      // One bulk copy of the run, its headers AND-ed and OR-ed as copied.
      std::uint8_t all = 0, any = 0;
      kern.copy(dst + n, ring + idx, k, all, any);
      const bool same_pass = phase ? (all & NEURON_ISA_HEADER_PHASE) != 0 : (any & NEURON_ISA_HEADER_PHASE) == 0;
      if (!same_pass) {
        // A slot changed pass under us: a lossy producer lapped the consumer.
        // Keep the records before it; the owner resyncs from TAIL.
        std::size_t j = 0;
        any = 0;
        while ((dst[n + j].header() & NEURON_ISA_HEADER_PHASE) == phase) any |= dst[n + j++].header();
        seen |= any;
        n += j;
        r.lap_suspected = true;
        break;
      }
      seen |= any;
      n += k;
    }
    if (k < run) {
      if (stop & NEURON_ISA_HEADER_SW_OVF) r.lap_suspected = true;
      break;
    }
    idx = (idx + static_cast<std::uint32_t>(k)) & mask;
    if (idx == 0) phase ^= NEURON_ISA_HEADER_PHASE;
  }
  if (lossy_ && n && !r.lap_suspected) {
    // The copies above happen before the guard's load (acquire fence: no
    // earlier load moves after a later one). See the top of this file.
#if defined(__SANITIZE_THREAD__)
    std::atomic_signal_fence(std::memory_order_acquire);  // TSan does not model fences
#else
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
    if (!not_overtaken(head_ - 1)) r.lap_suspected = true;
  }
  r.sw_overflow = (seen & NEURON_ISA_HEADER_SW_OVF) != 0;
  r.hw_overflow = (seen & NEURON_ISA_HEADER_HW_OVF) != 0;
  r.count = n;
  if (n) commit(n);
  return r;
}

template <class Fn>
void RingView::call_each(Fn& fn, const Record* p, std::size_t n, std::size_t fresh) noexcept {
  // Unrolled here, where fn is inlined: fn usually waits on its own last
  // result, so without the prefetch the loads of the next lines would start
  // late. Only fresh slots are prefetched, never a line the producer may
  // still be writing.
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    if (i + kAhead < fresh) __builtin_prefetch(p + i + kAhead);
    fn(p[i]);
    fn(p[i + 1]);
    fn(p[i + 2]);
    fn(p[i + 3]);
  }
  for (; i < n; ++i) fn(p[i]);
}

template <class Fn>
DrainResult RingView::for_each(Fn&& fn, std::size_t max) noexcept {
  DrainResult r;
  if (lossy_) {
    r.refused = true;
    return r;
  }
  if (ring_ == nullptr || max == 0) return r;
  const Record* const ring = ring_;  // locals: fn's stores cannot change them
  const DrainKernels& kern = *kern_;
  const std::uint32_t entries = entries_, mask = mask_;
  if (max > entries) max = entries;
  std::uint32_t idx = head_ & mask;
  std::uint8_t phase = phase_;
  std::uint8_t seen = 0;
  std::size_t n = 0;
  bool stopped = false;
  while (n < max && !stopped) {
    const std::size_t run = std::min(max - n, static_cast<std::size_t>(entries - idx));
    std::uint8_t stop = 0;
    const std::size_t k = fresh_prefix(kern, ring + idx, run, phase, stop);
    // Every record of the run is visible: ordered after the acquire load
    // that saw it fresh (see top). Its slots stay ours until commit(). It is
    // handed out in spans of kSpan records, each OR-ed after fn while in L1.
    for (std::size_t off = 0; off < k && !stopped;) {
      const Record* const p = ring + idx + off;
      const std::size_t len = std::min(k - off, kSpan);
      std::size_t used = len;
      if constexpr (std::is_same_v<std::invoke_result_t<Fn&, const Record&>, bool>) {
        for (std::size_t i = 0; i < len; ++i) {
          if (!fn(p[i])) {
            used = i + 1;
            stopped = true;
            break;
          }
        }
      } else {
        call_each(fn, p, len, k - off);
      }
      seen |= kern.or_headers(p, used);
      n += used;
      off += used;
    }
    if (stopped) break;
    if (k < run) {
      if (stop & NEURON_ISA_HEADER_SW_OVF) r.lap_suspected = true;
      break;
    }
    idx = (idx + static_cast<std::uint32_t>(run)) & mask;
    if (idx == 0) phase ^= NEURON_ISA_HEADER_PHASE;
  }
  r.sw_overflow = (seen & NEURON_ISA_HEADER_SW_OVF) != 0;
  r.hw_overflow = (seen & NEURON_ISA_HEADER_HW_OVF) != 0;
  r.count = n;
  if (n) commit(n);
  return r;
}

template <class Fn>
DrainResult RingView::for_each_span(Fn&& fn, std::size_t max) noexcept {
  DrainResult r;
  if (lossy_) {
    r.refused = true;
    return r;
  }
  if (ring_ == nullptr || max == 0) return r;
  const Record* const ring = ring_;  // locals: fn's stores cannot change them
  const DrainKernels& kern = *kern_;
  const std::uint32_t entries = entries_, mask = mask_;
  if (max > entries) max = entries;
  std::uint32_t idx = head_ & mask;
  std::uint8_t phase = phase_;
  std::uint8_t seen = 0;
  std::size_t n = 0;
  bool stopped = false;
  while (n < max && !stopped) {
    const std::size_t run = std::min(max - n, static_cast<std::size_t>(entries - idx));
    std::uint8_t stop = 0;
    const std::size_t k = fresh_prefix(kern, ring + idx, run, phase, stop);
    // As in for_each: the run is visible and ours until commit(); it goes to
    // fn kSpanRun records at a time, each span's headers OR-ed after fn.
    for (std::size_t off = 0; off < k && !stopped;) {
      const std::size_t len = std::min(k - off, kSpanRun);
      const std::span<const Record> sp(ring + idx + off, len);
      if constexpr (std::is_same_v<std::invoke_result_t<Fn&, std::span<const Record>>, bool>) {
        stopped = !fn(sp);
      } else {
        fn(sp);
      }
      seen |= kern.or_headers(sp.data(), len);
      n += len;
      off += len;
    }
    if (stopped) break;
    if (k < run) {
      if (stop & NEURON_ISA_HEADER_SW_OVF) r.lap_suspected = true;
      break;
    }
    idx = (idx + static_cast<std::uint32_t>(run)) & mask;
    if (idx == 0) phase ^= NEURON_ISA_HEADER_PHASE;
  }
  r.sw_overflow = (seen & NEURON_ISA_HEADER_SW_OVF) != 0;
  r.hw_overflow = (seen & NEURON_ISA_HEADER_HW_OVF) != 0;
  r.count = n;
  if (n) commit(n);
  return r;
}

}  // namespace neuron
NEURON_API_END
