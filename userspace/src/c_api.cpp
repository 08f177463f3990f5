// SPDX-License-Identifier: MIT
// The C API (include/libneuron/neuron.h) over Device, NotificationQueue and
// decode(). No exception crosses into C: every entry point catches.
#include "libneuron/neuron.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "libneuron/decode.hpp"
#include "libneuron/device.hpp"
#include "libneuron/format.hpp"

// enum libneuron_kind is the index of the Decoded alternative
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_TRACE, neuron::Decoded>, neuron::Trace>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_EXPLICIT, neuron::Decoded>, neuron::Explicit>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_DGE_METADATA, neuron::Decoded>,
                             neuron::DgeMetadata>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_EVT_SEM, neuron::Decoded>, neuron::EvtSem>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_DMA, neuron::Decoded>, neuron::Dma>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_INTERRUPT, neuron::Decoded>,
                             neuron::Interrupt>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_TPB_ERROR, neuron::Decoded>, neuron::TpbError>);
static_assert(std::is_same_v<std::variant_alternative_t<LIBNEURON_KIND_UNKNOWN, neuron::Decoded>, neuron::Unknown>);
static_assert(std::variant_size_v<neuron::Decoded> == LIBNEURON_KIND_UNKNOWN + 1);

struct libneuron_device {
  neuron::Device dev;
};

struct libneuron_queue {
  neuron::NotificationQueue q;
  std::vector<neuron::Record> buf;  // 16-byte aligned for the drain's SSE copies
};

namespace {

thread_local std::string last_error;

int fail(int err, std::string what) {
  last_error = std::move(what);
  return -err;
}

// errno of an Error: system errors as they are, library codes mapped.
int errno_of(const neuron::Error& e) {
  if (e.code.category() == std::system_category() || e.code.category() == std::generic_category())
    return e.code.value() ? e.code.value() : EIO;
  if (e.code.category() == neuron::category()) {
    switch (static_cast<neuron::errc>(e.code.value())) {
      case neuron::errc::not_supported: return EOPNOTSUPP;
      case neuron::errc::moved_from: return EBADF;
      case neuron::errc::device_gone: return ENODEV;
      case neuron::errc::bad_message: return EBADMSG;
      default: return EINVAL;
    }
  }
  return EIO;
}

int fail(const char* fn, const neuron::Error& e) { return fail(errno_of(e), std::string(fn) + ": " + e.message()); }

template <class F>
auto guarded(const char* fn, F&& f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return static_cast<decltype(f())>(fail(ENOMEM, std::string(fn) + ": out of memory"));
  } catch (const std::exception& e) {
    return static_cast<decltype(f())>(fail(EIO, std::string(fn) + ": " + e.what()));
  }
}

// Copy the drained records out of the aligned buffer.
long copy_out(libneuron_queue* q, libneuron_record* out, std::size_t n) {
  static_assert(sizeof(libneuron_record) == sizeof(neuron::Record));
  std::memcpy(out, q->buf.data(), n * sizeof(neuron::Record));
  return static_cast<long>(n);
}

std::size_t room(libneuron_queue* q, std::size_t max) { return std::min(max, q->buf.size()); }

}  // namespace

extern "C" {

int libneuron_device_open(const char* path, libneuron_device** out) {
  return guarded("libneuron_device_open", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_device_open: out is NULL");
    *out = nullptr;
    auto d = neuron::Device::open(path ? path : neuron::kDefaultDevicePath);
    if (!d) return fail("libneuron_device_open", d.error());
    *out = new libneuron_device{std::move(d).value()};  // NOLINT: owned by the C caller
    return 0;
  });
}

void libneuron_device_close(libneuron_device* dev) { delete dev; }  // NOLINT: the C caller's

int libneuron_device_submit(libneuron_device* dev, unsigned core, unsigned engine, const neuron_emu_insn* insns,
                            size_t count, uint32_t flags) {
  return guarded("libneuron_device_submit", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_device_submit: dev is NULL");
    if (insns == nullptr) return fail(EINVAL, "libneuron_device_submit: insns is NULL");
    if (count == 0) return fail(EINVAL, "libneuron_device_submit: count is 0");
    auto s = dev->dev.submit(core, engine, std::span<const neuron_emu_insn>(insns, count), flags);
    if (!s) return fail("libneuron_device_submit", s.error());
    return 0;
  });
}

int libneuron_queue_create(libneuron_device* dev, unsigned core, unsigned queue, uint32_t size_bytes,
                           uint32_t flags, libneuron_queue** out) {
  return guarded("libneuron_queue_create", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_create: out is NULL");
    *out = nullptr;
    if (dev == nullptr) return fail(EINVAL, "libneuron_queue_create: dev is NULL");
    if (!neuron::RingView::is_power_of_two(size_bytes) || size_bytes < sizeof(neuron::Record))
      return fail(EINVAL, fmt::format("libneuron_queue_create: size {} bytes is not a power of two of "
                                      "16-byte records (core {} queue {})",
                                      size_bytes, core, queue));
    neuron::NotificationQueue::Options o;
    o.size = size_bytes;
    o.flags = flags;
    o.threshold = 1;
    o.eventfd = true;
    auto q = neuron::NotificationQueue::create(dev->dev, core, queue, o);
    if (!q) return fail("libneuron_queue_create", q.error());
    auto* cq = new libneuron_queue{std::move(q).value(), {}};  // NOLINT: owned by the C caller
    cq->buf.resize(size_bytes / sizeof(neuron::Record));
    *out = cq;
    return 0;
  });
}

void libneuron_queue_destroy(libneuron_queue* q) { delete q; }  // NOLINT: the C caller's

long libneuron_queue_drain(libneuron_queue* q, libneuron_record* out, size_t max, uint64_t* lost) {
  return guarded("libneuron_queue_drain", [&]() -> long {
    if (lost) *lost = 0;
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_drain: q is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_drain: out is NULL");
    if (max == 0) return fail(EINVAL, "libneuron_queue_drain: max is 0");
    const neuron::DrainResult r = q->q.drain(std::span<neuron::Record>(q->buf.data(), room(q, max)));
    if (r.error)
      return fail(errno_of(neuron::Error::make(r.error, "")), "libneuron_queue_drain: " + r.error.message());
    // records first: a drain that took records and then saw the device go
    // returns them; the queue is marked gone, so the next call says -ENODEV
    if (r.device_gone && r.count == 0)
      return fail(ENODEV, "libneuron_queue_drain: device gone (removed or reset)");
    if (lost) *lost = r.lost;
    return copy_out(q, out, r.count);
  });
}

long libneuron_queue_wait(libneuron_queue* q, libneuron_record* out, size_t max, long long timeout_ns,
                          uint64_t* lost) {
  return guarded("libneuron_queue_wait", [&]() -> long {
    if (lost) *lost = 0;
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_wait: q is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_wait: out is NULL");
    if (max == 0) return fail(EINVAL, "libneuron_queue_wait: max is 0");
    auto w = q->q.wait(std::span<neuron::Record>(q->buf.data(), room(q, max)),
                       std::chrono::nanoseconds(timeout_ns < 0 ? -1 : timeout_ns));
    if (!w) return fail("libneuron_queue_wait", w.error());
    if (lost) *lost = w->drain.lost;
    return copy_out(q, out, w->drain.count);
  });
}

int libneuron_queue_set_coalescing(libneuron_queue* q, uint32_t threshold, uint32_t coalesce_ns) {
  return guarded("libneuron_queue_set_coalescing", [&]() -> int {
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_set_coalescing: q is NULL");
    if (auto s = q->q.set_coalescing(threshold, coalesce_ns); !s)
      return fail("libneuron_queue_set_coalescing", s.error());
    return 0;
  });
}

int libneuron_queue_fd(const libneuron_queue* q) {
  if (q == nullptr) return fail(EINVAL, "libneuron_queue_fd: q is NULL");
  return q->q.wake_fd();
}

namespace {

// Fills @out from @rec decoded with the queue class @cls; @unsure: the caller
// named no queue, so an EXPLICIT with debug_hint 1 may be DGE_METADATA
// (docs/decisions.md#dge-metadata-route), and the text says so.
void decode_into(const libneuron_record* rec, neuron::QueueClass cls, bool unsure, libneuron_decoded* out) {
  {
    neuron::Record r;
    std::memcpy(r.bytes.data(), rec->bytes, sizeof rec->bytes);
    const neuron::Decoded d = neuron::decode(r, cls);
    *out = libneuron_decoded{};
    out->kind = static_cast<std::uint32_t>(d.index());
    const neuron::Meta& m = neuron::meta_of(d);
    out->notific_type = m.notific_type;
    out->sw_overflow = m.header.sw_overflow() ? 1 : 0;
    out->hw_overflow = m.header.hw_overflow() ? 1 : 0;
    out->phase = m.header.phase() ? 1 : 0;
    out->timestamp_ps = m.timestamp.ps;
    out->engine = -1;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, neuron::Trace> || std::is_same_v<T, neuron::Explicit> ||
                        std::is_same_v<T, neuron::DgeMetadata>) {
            out->engine = static_cast<int32_t>(v.engine);
            out->program_counter = v.program_counter;
            out->debug_hint = v.debug_hint;
          }
          if constexpr (std::is_same_v<T, neuron::Explicit>) out->debug_hint_extended = v.debug_hint_extended;
          if constexpr (std::is_same_v<T, neuron::EvtSem>) {
            if (v.engine) out->engine = static_cast<int32_t>(*v.engine);
            out->value = v.value;
          }
          if constexpr (std::is_same_v<T, neuron::TpbError>) {
            out->error_id = v.error_id;
            if (v.is_sequencer()) out->program_counter = v.sequencer.program_counter;
          }
        },
        d);
    std::string text = neuron::to_text(d);
    const auto* x = std::get_if<neuron::Explicit>(&d);
    if (unsure && x && x->debug_hint == NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE)
      text += " (or DGE_METADATA: the queue decides)";
    const std::size_t n = std::min(text.size(), sizeof out->text - 1);
    std::memcpy(out->text, text.data(), n);
    out->text[n] = '\0';
  }
}

}  // namespace

int libneuron_record_decode(const libneuron_record* rec, int queue, libneuron_decoded* out) {
  return guarded("libneuron_record_decode", [&]() -> int {
    if (rec == nullptr) return fail(EINVAL, "libneuron_record_decode: rec is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_record_decode: out is NULL");
    decode_into(rec, queue < 0 ? neuron::QueueClass::Any : neuron::queue_class(static_cast<unsigned>(queue)),
                queue < 0, out);
    return 0;
  });
}

int libneuron_record_decode_route(const libneuron_record* rec, int queue, uint32_t route, libneuron_decoded* out) {
  return guarded("libneuron_record_decode_route", [&]() -> int {
    if (rec == nullptr) return fail(EINVAL, "libneuron_record_decode_route: rec is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_record_decode_route: out is NULL");
    if (queue < 0 || queue >= NEURON_NUM_SW_QUEUES)
      return fail(EINVAL, fmt::format("libneuron_record_decode_route: queue {} is not 0..{}", queue,
                                      NEURON_NUM_SW_QUEUES - 1));
    decode_into(rec, neuron::queue_class(static_cast<unsigned>(queue), route), false, out);
    return 0;
  });
}

const char* libneuron_last_error(void) { return last_error.c_str(); }

}  // extern "C"
