// SPDX-License-Identifier: MIT
// The C API (include/libneuron/neuron.h) over Device, NotificationQueue and
// decode(). No exception crosses into C: every entry point catches.
#include "libneuron/neuron.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
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
  explicit libneuron_device(neuron::Device d) : dev(std::move(d)) {}
  neuron::Device dev;
};

struct libneuron_queue {
  explicit libneuron_queue(neuron::NotificationQueue nq) : q(std::move(nq)) {}
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
    *out = std::make_unique<libneuron_device>(std::move(d).value()).release();  // the C caller's
    return 0;
  });
}

int libneuron_device_open_read_only(const char* path, libneuron_device** out) {
  return guarded("libneuron_device_open_read_only", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_device_open_read_only: out is NULL");
    *out = nullptr;
    auto d = neuron::Device::open_read_only(path ? path : neuron::kDefaultDevicePath);
    if (!d) return fail("libneuron_device_open_read_only", d.error());
    *out = std::make_unique<libneuron_device>(std::move(d).value()).release();  // the C caller's
    return 0;
  });
}

void libneuron_device_close(libneuron_device* dev) { std::unique_ptr<libneuron_device>{dev}; }

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

int libneuron_device_get_info(libneuron_device* dev, struct libneuron_device_info* out) {
  return guarded("libneuron_device_get_info", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_device_get_info: dev is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_device_get_info: out is NULL");
    auto i = dev->dev.info();
    if (!i) return fail("libneuron_device_get_info", i.error());
    *out = libneuron_device_info{};
    out->num_cores = i->num_cores;
    out->engines_per_core = i->engines_per_core;
    out->queues_per_core = i->queues_per_core;
    out->generation = i->gen;
    out->capabilities = i->capabilities;
    out->mem_size = i->mem_size;
    out->mem_alloc_limit = i->mem_alloc_limit;
    out->nq_size_min = i->nq_size_min;
    out->nq_size_max = i->nq_size_max;
    out->max_program_insns = i->max_program_insns;
    out->timestamp_inc_ps = i->timestamp_inc_ps;
    out->page_size = i->page_size;
    out->doorbell_size = i->doorbell_size;
    return 0;
  });
}

int libneuron_device_state(const libneuron_device* dev) {
  if (dev == nullptr) return fail(EINVAL, "libneuron_device_state: dev is NULL");
  const auto st = dev->dev.state();
  if (!st) return fail(EOPNOTSUPP, "libneuron_device_state: the driver maps no status page (NEURON_CAP_STATUS_PAGE)");
  return static_cast<int>(*st);
}

int libneuron_core_acquire(libneuron_device* dev, uint64_t cores, uint64_t* owned) {
  return guarded("libneuron_core_acquire", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_acquire: dev is NULL");
    auto r = dev->dev.acquire_cores(cores);
    if (!r) return fail("libneuron_core_acquire", r.error());
    if (owned) *owned = *r;
    return 0;
  });
}

int libneuron_core_release(libneuron_device* dev, uint64_t cores, uint64_t* owned) {
  return guarded("libneuron_core_release", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_release: dev is NULL");
    auto r = dev->dev.release_cores(cores);
    if (!r) return fail("libneuron_core_release", r.error());
    if (owned) *owned = *r;
    return 0;
  });
}

namespace {

// @timeout_ns as read_events() wants it: rounded up to whole milliseconds,
// negative for no limit, at most INT_MAX ms (poll()'s int) so that a huge
// value waits long instead of wrapping to "no wait".
std::chrono::milliseconds event_timeout(long long timeout_ns) {
  if (timeout_ns < 0) return std::chrono::milliseconds(-1);
  const long long ms = timeout_ns / 1000000 + (timeout_ns % 1000000 != 0 ? 1 : 0);
  return std::chrono::milliseconds(std::min<long long>(ms, INT_MAX));
}

}  // namespace

long libneuron_device_read_events(libneuron_device* dev, libneuron_event* out, size_t max, long long timeout_ns) {
  return guarded("libneuron_device_read_events", [&]() -> long {
    if (dev == nullptr) return fail(EINVAL, "libneuron_device_read_events: dev is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_device_read_events: out is NULL");
    if (max == 0) return fail(EINVAL, "libneuron_device_read_events: max is 0");
    std::vector<neuron::Event> ev(std::min<std::size_t>(max, 256));
    auto n = dev->dev.read_events(ev, event_timeout(timeout_ns));
    if (!n) return fail("libneuron_device_read_events", n.error());
    for (std::size_t i = 0; i < *n; i++) {
      const neuron::Event& e = ev[i];
      out[i] = libneuron_event{};
      out[i].timestamp_ns = e.timestamp_ns;
      out[i].device = e.device;
      out[i].core = e.core;
      out[i].edge = e.edge;
      out[i].cause = e.cause;
      out[i].queues = e.queues;
      out[i].lost = e.lost;
      out[i].count = e.count;
      out[i].wrbuf_full = e.wrbuf_full;
      out[i].wrbuf_drop = e.wrbuf_drop;
      out[i].suppressed = e.suppressed;
      out[i].pc = e.pc;
    }
    return static_cast<long>(*n);
  });
}

int libneuron_device_event_fd(const libneuron_device* dev) {
  if (dev == nullptr) return fail(EINVAL, "libneuron_device_event_fd: dev is NULL");
  return dev->dev.fd();
}

int libneuron_engine_get_status(libneuron_device* dev, unsigned core, unsigned engine, struct libneuron_engine_status* out) {
  return guarded("libneuron_engine_get_status", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_engine_get_status: dev is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_engine_get_status: out is NULL");
    auto st = dev->dev.engine_status(core, engine);
    if (!st) return fail("libneuron_engine_get_status", st.error());
    *out = libneuron_engine_status{};
    out->core = st->core;
    out->engine = st->engine;
    out->state = st->state;
    out->pc = st->pc;
    out->soft_reset_counter = st->soft_reset_counter;
    out->last_error = st->last_error;
    out->exec_count = st->exec_count;
    out->programs_stopped = st->programs_stopped;
    return 0;
  });
}

int libneuron_engine_reset(libneuron_device* dev, unsigned core, unsigned engine) {
  return guarded("libneuron_engine_reset", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_engine_reset: dev is NULL");
    if (auto s = dev->dev.engine_reset(core, engine); !s) return fail("libneuron_engine_reset", s.error());
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
    auto cq = std::make_unique<libneuron_queue>(std::move(q).value());
    cq->buf.resize(size_bytes / sizeof(neuron::Record));
    *out = cq.release();  // the C caller's
    return 0;
  });
}

void libneuron_queue_destroy(libneuron_queue* q) { std::unique_ptr<libneuron_queue>{q}; }

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

int libneuron_queue_get_info(const libneuron_queue* q, struct libneuron_queue_info* out) {
  return guarded("libneuron_queue_get_info", [&]() -> int {
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_get_info: q is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_get_info: out is NULL");
    auto i = q->q.info();
    if (!i) return fail("libneuron_queue_get_info", i.error());
    *out = libneuron_queue_info{};
    out->core = i->core;
    out->queue = i->queue;
    out->head = i->head;
    out->tail = i->tail;
    out->phase = i->phase;
    out->size = i->size;
    out->flags = i->flags;
    out->threshold = i->threshold;
    out->coalesce_ns = i->coalesce_ns;
    out->route = q->q.route();
    out->overflow_count = i->overflow_count;
    out->drop_count = i->drop_count;
    return 0;
  });
}

namespace {

// Fills @out from @rec decoded with the queue class @cls; @unsure: the caller
// named no queue, so an EXPLICIT with debug_hint 1 may be DGE_METADATA
// (docs/decisions/0019-dge-metadata-route.md), and the text says so.
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

int libneuron_queue_decode(const libneuron_queue* q, const libneuron_record* rec, libneuron_decoded* out) {
  return guarded("libneuron_queue_decode", [&]() -> int {
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_decode: q is NULL");
    if (rec == nullptr) return fail(EINVAL, "libneuron_queue_decode: rec is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_decode: out is NULL");
    decode_into(rec, q->q.queue_class(), false, out);
    return 0;
  });
}

int libneuron_core_get_route(libneuron_device* dev, unsigned core, uint32_t* route) {
  return guarded("libneuron_core_get_route", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_get_route: dev is NULL");
    if (route == nullptr) return fail(EINVAL, "libneuron_core_get_route: route is NULL");
    auto r = dev->dev.route(core);
    if (!r) return fail("libneuron_core_get_route", r.error());
    *route = *r;
    return 0;
  });
}

int libneuron_core_set_route(libneuron_device* dev, unsigned core, uint32_t route, uint32_t* out) {
  return guarded("libneuron_core_set_route", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_set_route: dev is NULL");
    auto r = dev->dev.set_route(core, route);
    if (!r) return fail("libneuron_core_set_route", r.error());
    if (out) *out = *r;
    return 0;
  });
}

const char* libneuron_last_error(void) { return last_error.c_str(); }

}  // extern "C"
