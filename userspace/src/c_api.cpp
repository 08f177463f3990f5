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
#include "libneuron/assembler.hpp"
#include "libneuron/execute.hpp"
#include "c_api_fork.hpp"

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

// What the library allocates behind a libneuron_device* / libneuron_queue*:
// the handle and the fork generation it was made in (c_api_fork.cpp,
// docs/decisions/0041-fork-in-libneuron.md), so that a forked child's calls
// on an inherited handle are refused with ECHILD. Derived, so the handles'
// own layouts (in the 1.0 ABI dump, though opaque to callers) stay as
// they were.
struct DeviceHandle final : libneuron_device {
  using libneuron_device::libneuron_device;
  unsigned gen = neuron::capi::fork_generation();
};

struct QueueHandle final : libneuron_queue {
  using libneuron_queue::libneuron_queue;
  unsigned gen = neuron::capi::fork_generation();
};

unsigned generation_of(const libneuron_device* d) { return static_cast<const DeviceHandle*>(d)->gen; }
unsigned generation_of(const libneuron_queue* q) { return static_cast<const QueueHandle*>(q)->gen; }

}  // namespace

struct libneuron_program {
  neuron::Program p;
};

struct libneuron_result {
  neuron::ExecResult r;
  std::string error;                         // libneuron_result_error()
  int callback_error = 0;                    // on_record's nonzero return, or -ECANCELED
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

// A handle made before a fork, used in the child.
template <class H>
bool inherited(const H* h) noexcept {
  return h != nullptr && generation_of(h) != neuron::capi::fork_generation();
}

int refuse_child(const char* fn) {
  return fail(ECHILD, std::string(fn) +
                          ": the handle was made by the parent process before fork(); a child opens the "
                          "device itself (docs/decisions/0041-fork-in-libneuron.md)");
}

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
    neuron::capi::note_device(d->fd());
    *out = std::make_unique<DeviceHandle>(std::move(d).value()).release();  // the C caller's
    return 0;
  });
}

int libneuron_device_open_read_only(const char* path, libneuron_device** out) {
  return guarded("libneuron_device_open_read_only", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_device_open_read_only: out is NULL");
    *out = nullptr;
    auto d = neuron::Device::open_read_only(path ? path : neuron::kDefaultDevicePath);
    if (!d) return fail("libneuron_device_open_read_only", d.error());
    neuron::capi::note_device(d->fd());
    *out = std::make_unique<DeviceHandle>(std::move(d).value()).release();  // the C caller's
    return 0;
  });
}

// In a forked child an inherited handle is leaked, not destroyed: its
// mappings were not inherited (VM_DONTCOPY) and their addresses may hold
// the child's own memory now, which munmap() must not touch.
void libneuron_device_close(libneuron_device* dev) {
  if (inherited(dev)) return;
  std::unique_ptr<DeviceHandle>{static_cast<DeviceHandle*>(dev)};
}

int libneuron_device_submit(libneuron_device* dev, unsigned core, unsigned engine, const neuron_emu_insn* insns,
                            size_t count, uint32_t flags) {
  return guarded("libneuron_device_submit", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_device_submit: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_device_submit");
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
    if (inherited(dev)) return refuse_child("libneuron_device_get_info");
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
  if (inherited(dev)) return refuse_child("libneuron_device_state");
  const auto st = dev->dev.state();
  if (!st) return fail(EOPNOTSUPP, "libneuron_device_state: the driver maps no status page (NEURON_CAP_STATUS_PAGE)");
  return static_cast<int>(*st);
}

int libneuron_core_acquire(libneuron_device* dev, uint64_t cores, uint64_t* owned) {
  return guarded("libneuron_core_acquire", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_acquire: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_core_acquire");
    auto r = dev->dev.acquire_cores(cores);
    if (!r) return fail("libneuron_core_acquire", r.error());
    if (owned) *owned = *r;
    return 0;
  });
}

int libneuron_core_release(libneuron_device* dev, uint64_t cores, uint64_t* owned) {
  return guarded("libneuron_core_release", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_release: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_core_release");
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

libneuron_event to_c_event(const neuron::Event& e) {
  libneuron_event c{};
  c.timestamp_ns = e.timestamp_ns;
  c.device = e.device;
  c.core = e.core;
  c.edge = e.edge;
  c.cause = e.cause;
  c.queues = e.queues;
  c.lost = e.lost;
  c.count = e.count;
  c.wrbuf_full = e.wrbuf_full;
  c.wrbuf_drop = e.wrbuf_drop;
  c.suppressed = e.suppressed;
  c.pc = e.pc;
  return c;
}

}  // namespace

long libneuron_device_read_events(libneuron_device* dev, libneuron_event* out, size_t max, long long timeout_ns) {
  return guarded("libneuron_device_read_events", [&]() -> long {
    if (dev == nullptr) return fail(EINVAL, "libneuron_device_read_events: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_device_read_events");
    if (out == nullptr) return fail(EINVAL, "libneuron_device_read_events: out is NULL");
    if (max == 0) return fail(EINVAL, "libneuron_device_read_events: max is 0");
    std::vector<neuron::Event> ev(std::min<std::size_t>(max, 256));
    auto n = dev->dev.read_events(ev, event_timeout(timeout_ns));
    if (!n) return fail("libneuron_device_read_events", n.error());
    for (std::size_t i = 0; i < *n; i++) out[i] = to_c_event(ev[i]);
    return static_cast<long>(*n);
  });
}

int libneuron_device_event_fd(const libneuron_device* dev) {
  if (dev == nullptr) return fail(EINVAL, "libneuron_device_event_fd: dev is NULL");
  if (inherited(dev)) return refuse_child("libneuron_device_event_fd");
  return dev->dev.fd();
}

int libneuron_engine_get_status(libneuron_device* dev, unsigned core, unsigned engine, struct libneuron_engine_status* out) {
  return guarded("libneuron_engine_get_status", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_engine_get_status: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_engine_get_status");
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
    if (inherited(dev)) return refuse_child("libneuron_engine_reset");
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
    if (inherited(dev)) return refuse_child("libneuron_queue_create");
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
    auto cq = std::make_unique<QueueHandle>(std::move(q).value());
    cq->buf.resize(size_bytes / sizeof(neuron::Record));
    *out = cq.release();  // the C caller's
    return 0;
  });
}

void libneuron_queue_destroy(libneuron_queue* q) {
  if (inherited(q)) return;  // as libneuron_device_close()
  std::unique_ptr<QueueHandle>{static_cast<QueueHandle*>(q)};
}

long libneuron_queue_drain(libneuron_queue* q, libneuron_record* out, size_t max, uint64_t* lost) {
  return guarded("libneuron_queue_drain", [&]() -> long {
    if (lost) *lost = 0;
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_drain: q is NULL");
    if (inherited(q)) return refuse_child("libneuron_queue_drain");
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
    if (inherited(q)) return refuse_child("libneuron_queue_wait");
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
    if (inherited(q)) return refuse_child("libneuron_queue_set_coalescing");
    if (auto s = q->q.set_coalescing(threshold, coalesce_ns); !s)
      return fail("libneuron_queue_set_coalescing", s.error());
    return 0;
  });
}

int libneuron_queue_fd(const libneuron_queue* q) {
  if (q == nullptr) return fail(EINVAL, "libneuron_queue_fd: q is NULL");
  if (inherited(q)) return refuse_child("libneuron_queue_fd");
  return q->q.wake_fd();
}

int libneuron_queue_get_info(const libneuron_queue* q, struct libneuron_queue_info* out) {
  return guarded("libneuron_queue_get_info", [&]() -> int {
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_get_info: q is NULL");
    if (inherited(q)) return refuse_child("libneuron_queue_get_info");
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
void fill_decoded(const neuron::Decoded& d, bool unsure, libneuron_decoded* out) {
  {
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

void decode_into(const libneuron_record* rec, neuron::QueueClass cls, bool unsure, libneuron_decoded* out) {
  neuron::Record r;
  std::memcpy(r.bytes.data(), rec->bytes, sizeof rec->bytes);
  fill_decoded(neuron::decode(r, cls), unsure, out);
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
    if (inherited(q)) return refuse_child("libneuron_queue_decode");
    if (rec == nullptr) return fail(EINVAL, "libneuron_queue_decode: rec is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_decode: out is NULL");
    decode_into(rec, q->q.queue_class(), false, out);
    return 0;
  });
}

int libneuron_core_get_route(libneuron_device* dev, unsigned core, uint32_t* route) {
  return guarded("libneuron_core_get_route", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_core_get_route: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_core_get_route");
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
    if (inherited(dev)) return refuse_child("libneuron_core_set_route");
    auto r = dev->dev.set_route(core, route);
    if (!r) return fail("libneuron_core_set_route", r.error());
    if (out) *out = *r;
    return 0;
  });
}

// ---- Since 1.1 (LIBNEURON_1.1) ----

}  // extern "C"

namespace {

// A caller's sized struct (neuron.h "Sized structs"): the bytes its size
// covers, our defaults past them; bytes past ours must be zero.
template <class T>
int read_sized(const char* fn, const char* what, const T* in, T& out) {
  out = T{};
  if (in->size < sizeof(std::size_t))
    return fail(EINVAL, fmt::format("{}: {}->size {} is below sizeof(size_t) (set it to sizeof(struct {}))", fn,
                                    what, in->size, what));
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (std::size_t i = sizeof(T); i < in->size; ++i)
    if (bytes[i] != 0)
      return fail(E2BIG, fmt::format("{}: {} byte {} is set, past the {} bytes this libneuron knows", fn, what, i,
                                     sizeof(T)));
  std::memcpy(&out, in, std::min(in->size, sizeof(T)));
  out.size = sizeof(T);
  return 0;
}

// Writes `v` into a caller's sized struct: the bytes its size covers (bytes
// past ours zeroed); size then says how many bytes are ours.
template <class T>
int write_sized(const char* fn, const char* what, T* out, const T& v) {
  if (out->size < sizeof(std::size_t))
    return fail(EINVAL, fmt::format("{}: {}->size {} is below sizeof(size_t) (set it to sizeof(struct {}))", fn,
                                    what, out->size, what));
  const std::size_t caller = out->size, n = std::min(caller, sizeof(T));
  auto* bytes = reinterpret_cast<unsigned char*>(out);
  std::memcpy(bytes, &v, n);
  if (caller > sizeof(T)) std::memset(bytes + sizeof(T), 0, caller - sizeof(T));
  out->size = n;
  return 0;
}

libneuron_exec_record to_c_record(const neuron::CollectedRecord& c) {
  libneuron_exec_record r{};
  r.core = c.core;
  r.queue = c.queue;
  std::memcpy(r.raw.bytes, c.raw.bytes.data(), sizeof r.raw.bytes);
  return r;
}

constexpr std::uint32_t kExecFlags = LIBNEURON_EXEC_NO_TRACE | LIBNEURON_EXEC_HALT_ENDS_WAIT | LIBNEURON_EXEC_DROP_RECORDS;

}  // namespace

namespace neuron::capi {

// libneuron_execute() on any ExecTarget (the C API's host tests run it on a
// fake device, tests/fake_target.hpp).
int execute_on(const char* fn, ExecTarget& target, const libneuron_program* prog, const libneuron_exec_options* opt,
               libneuron_result** out) {
  libneuron_exec_options o{};
  o.size = sizeof o;
  if (opt != nullptr)
    if (int rc = read_sized(fn, "libneuron_exec_options", opt, o); rc) return rc;
  if (o.flags & ~kExecFlags)
    return fail(EINVAL, fmt::format("{}: libneuron_exec_options.flags {:#x} has unknown bits {:#x}", fn, o.flags,
                                    o.flags & ~kExecFlags));
  ExecOptions eo;
  if (o.timeout_ms < 0)
    eo.timeout = std::chrono::milliseconds::max();
  else if (o.timeout_ms > 0)
    eo.timeout = std::chrono::milliseconds(o.timeout_ms);
  eo.trace = !(o.flags & LIBNEURON_EXEC_NO_TRACE);
  eo.halt_ends_wait = (o.flags & LIBNEURON_EXEC_HALT_ENDS_WAIT) != 0;
  eo.keep_records = !(o.flags & LIBNEURON_EXEC_DROP_RECORDS);
  if (o.queue_size) eo.queue_size = o.queue_size;
  eo.queue_flags = o.queue_flags;
  if (o.cores) eo.cores = CoreList{o.cores, "libneuron_exec_options.cores"};
  auto res = std::make_unique<libneuron_result>();
  if (o.on_record) {
    libneuron_result* rp = res.get();
    eo.on_record = [cb = o.on_record, arg = o.arg, rp](const CollectedRecord& c) {
      if (rp->callback_error != 0) return;  // it asked to stop, or threw
      const libneuron_exec_record r = to_c_record(c);
      try {
        if (const int rc = cb(arg, &r); rc != 0) rp->callback_error = rc;
      } catch (...) {  // a C++ caller's callback: never through the reap thread
        rp->callback_error = -ECANCELED;
      }
    };
  }
  res->r = execute(target, prog->p, eo);
  if (res->r.error) res->error = res->r.error->message();
  *out = res.release();  // the C caller's
  return 0;
}

}  // namespace neuron::capi

extern "C" {

int libneuron_mem_alloc(libneuron_device* dev, uint64_t size, uint64_t fixed_offset, uint32_t flags,
                        uint64_t* offset) {
  return guarded("libneuron_mem_alloc", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_mem_alloc: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_mem_alloc");
    if (offset == nullptr) return fail(EINVAL, "libneuron_mem_alloc: offset is NULL");
    if (size == 0) return fail(EINVAL, "libneuron_mem_alloc: size is 0");
    if (flags & ~LIBNEURON_MEM_FIXED)
      return fail(EINVAL, fmt::format("libneuron_mem_alloc: flags {:#x} has unknown bits", flags));
    std::optional<std::uint64_t> fixed;
    if (flags & LIBNEURON_MEM_FIXED) fixed = fixed_offset;
    auto r = dev->dev.mem_alloc(size, fixed);
    if (!r) return fail("libneuron_mem_alloc", r.error());
    *offset = *r;
    return 0;
  });
}

int libneuron_mem_free(libneuron_device* dev, uint64_t offset) {
  return guarded("libneuron_mem_free", [&]() -> int {
    if (dev == nullptr) return fail(EINVAL, "libneuron_mem_free: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_mem_free");
    if (auto s = dev->dev.mem_free(offset); !s) return fail("libneuron_mem_free", s.error());
    return 0;
  });
}

int libneuron_program_assemble(const char* text, size_t len, const char* name, libneuron_program** out) {
  return guarded("libneuron_program_assemble", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_program_assemble: out is NULL");
    *out = nullptr;
    if (text == nullptr) return fail(EINVAL, "libneuron_program_assemble: text is NULL");
    auto p = neuron::assemble(std::string_view(text, len), name ? name : "<input>");
    if (!p) return fail("libneuron_program_assemble", p.error());
    *out = std::make_unique<libneuron_program>(libneuron_program{std::move(p).value()}).release();  // the caller's
    return 0;
  });
}

int libneuron_program_assemble_file(const char* path, libneuron_program** out) {
  return guarded("libneuron_program_assemble_file", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_program_assemble_file: out is NULL");
    *out = nullptr;
    if (path == nullptr) return fail(EINVAL, "libneuron_program_assemble_file: path is NULL");
    auto p = neuron::assemble_file(path);
    if (!p) return fail("libneuron_program_assemble_file", p.error());
    *out = std::make_unique<libneuron_program>(libneuron_program{std::move(p).value()}).release();  // the caller's
    return 0;
  });
}

int libneuron_program_create(libneuron_program** out) {
  return guarded("libneuron_program_create", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_program_create: out is NULL");
    *out = std::make_unique<libneuron_program>().release();  // the caller's
    (*out)->p.name = "<program>";
    return 0;
  });
}

int libneuron_program_add(libneuron_program* prog, unsigned core, unsigned engine, const neuron_emu_insn* insns,
                          size_t count) {
  return guarded("libneuron_program_add", [&]() -> int {
    if (prog == nullptr) return fail(EINVAL, "libneuron_program_add: prog is NULL");
    if (insns == nullptr) return fail(EINVAL, "libneuron_program_add: insns is NULL");
    if (count == 0) return fail(EINVAL, "libneuron_program_add: count is 0");
    if (count > NEURON_MAX_PROGRAM_INSNS)
      return fail(EINVAL, fmt::format("libneuron_program_add: count {} is above NEURON_MAX_PROGRAM_INSNS ({})", count,
                                      NEURON_MAX_PROGRAM_INSNS));
    if (prog->p.find(core, engine) != nullptr)
      return fail(EEXIST, fmt::format("libneuron_program_add: core {} engine {} has a program already", core, engine));
    neuron::EngineProgram e;
    e.core = core;
    e.engine = engine;
    e.insns.assign(insns, insns + count);
    e.lines.assign(count, 0);
    prog->p.engines.push_back(std::move(e));
    return 0;
  });
}

void libneuron_program_free(libneuron_program* prog) { std::unique_ptr<libneuron_program>{prog}; }

int libneuron_execute(libneuron_device* dev, const libneuron_program* prog, const libneuron_exec_options* opt,
                      libneuron_result** out) {
  return guarded("libneuron_execute", [&]() -> int {
    if (out == nullptr) return fail(EINVAL, "libneuron_execute: out is NULL");
    *out = nullptr;
    if (dev == nullptr) return fail(EINVAL, "libneuron_execute: dev is NULL");
    if (inherited(dev)) return refuse_child("libneuron_execute");
    if (prog == nullptr) return fail(EINVAL, "libneuron_execute: prog is NULL");
    neuron::DeviceTarget target(dev->dev);
    return neuron::capi::execute_on("libneuron_execute", target, prog, opt, out);
  });
}

int libneuron_result_summary(const libneuron_result* res, libneuron_exec_summary* out) {
  return guarded("libneuron_result_summary", [&]() -> int {
    if (res == nullptr) return fail(EINVAL, "libneuron_result_summary: res is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_result_summary: out is NULL");
    const neuron::ExecResult& r = res->r;
    libneuron_exec_summary v{};
    v.size = sizeof v;
    v.status = static_cast<int32_t>(r.status);
    v.completed = r.completed ? 1 : 0;
    v.error = r.error ? errno_of(*r.error) : 0;
    v.callback_error = res->callback_error;
    v.has_first_error = r.first_error ? 1 : 0;
    if (r.first_error) v.first_error = to_c_record(*r.first_error);
    v.records = r.records.size();
    v.events = r.events.size();
    v.lost = r.lost;
    v.device_lost = r.device_lost;
    v.throttle_records = r.throttle_records;
    v.cores_acquired = r.cores_acquired;
    v.elapsed_ns = static_cast<uint64_t>(r.elapsed.count());
    return write_sized("libneuron_result_summary", "libneuron_exec_summary", out, v);
  });
}

long libneuron_result_records(const libneuron_result* res, size_t first, libneuron_exec_record* out, size_t max) {
  return guarded("libneuron_result_records", [&]() -> long {
    if (res == nullptr) return fail(EINVAL, "libneuron_result_records: res is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_result_records: out is NULL");
    const auto& recs = res->r.records;
    if (first > recs.size())
      return fail(EINVAL, fmt::format("libneuron_result_records: first {} is past the {} records", first, recs.size()));
    const std::size_t n = std::min(max, recs.size() - first);
    for (std::size_t i = 0; i < n; ++i) out[i] = to_c_record(recs[first + i]);
    return static_cast<long>(n);
  });
}

int libneuron_result_decode(const libneuron_result* res, size_t index, libneuron_decoded* out) {
  return guarded("libneuron_result_decode", [&]() -> int {
    if (res == nullptr) return fail(EINVAL, "libneuron_result_decode: res is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_result_decode: out is NULL");
    if (index >= res->r.records.size())
      return fail(EINVAL, fmt::format("libneuron_result_decode: index {} is not below the {} records", index,
                                      res->r.records.size()));
    fill_decoded(res->r.records[index].decoded, false, out);
    return 0;
  });
}

long libneuron_result_events(const libneuron_result* res, size_t first, libneuron_event* out, size_t max) {
  return guarded("libneuron_result_events", [&]() -> long {
    if (res == nullptr) return fail(EINVAL, "libneuron_result_events: res is NULL");
    if (out == nullptr) return fail(EINVAL, "libneuron_result_events: out is NULL");
    const auto& ev = res->r.events;
    if (first > ev.size())
      return fail(EINVAL, fmt::format("libneuron_result_events: first {} is past the {} events", first, ev.size()));
    const std::size_t n = std::min(max, ev.size() - first);
    for (std::size_t i = 0; i < n; ++i) out[i] = to_c_event(ev[first + i]);
    return static_cast<long>(n);
  });
}

const char* libneuron_result_error(const libneuron_result* res) {
  if (res == nullptr) {
    fail(EINVAL, "libneuron_result_error: res is NULL");
    return "";
  }
  return res->error.c_str();
}

void libneuron_result_free(libneuron_result* res) { std::unique_ptr<libneuron_result>{res}; }

const char* libneuron_exec_status_name(int status) {
  switch (status) {
    case 0: case 1: case 5: case 1004: case 1204: case 2001:
      return neuron::status_name(static_cast<neuron::ExecStatus>(status));
    default:
      return "UNKNOWN";
  }
}

long libneuron_queue_for_each(libneuron_queue* q, int (*fn)(void*, const libneuron_record*), void* arg, size_t max) {
  return guarded("libneuron_queue_for_each", [&]() -> long {
    if (q == nullptr) return fail(EINVAL, "libneuron_queue_for_each: q is NULL");
    if (inherited(q)) return refuse_child("libneuron_queue_for_each");
    if (fn == nullptr) return fail(EINVAL, "libneuron_queue_for_each: fn is NULL");
    if (max == 0) return fail(EINVAL, "libneuron_queue_for_each: max is 0");
    static_assert(sizeof(libneuron_record) == sizeof(neuron::Record) && alignof(libneuron_record) == 1);
    bool threw = false;
    const neuron::DrainResult r = q->q.for_each(
        [&](const neuron::Record& rec) -> bool {
          try {
            return fn(arg, reinterpret_cast<const libneuron_record*>(&rec)) == 0;
          } catch (...) {  // a C++ caller's fn: the record counts as handed over
            threw = true;
            return false;
          }
        },
        max);
    if (r.refused)
      return fail(EOPNOTSUPP, "libneuron_queue_for_each: a lossy queue (NEURON_NQ_F_IGNORE_FULL): use "
                              "libneuron_queue_drain()");
    if (r.error)
      return fail(errno_of(neuron::Error::make(r.error, "")), "libneuron_queue_for_each: " + r.error.message());
    if (threw)
      return fail(ECANCELED, fmt::format("libneuron_queue_for_each: fn threw at record {}; the {} records "
                                         "handed to it are consumed",
                                         r.count, r.count));
    if (r.device_gone && r.count == 0)
      return fail(ENODEV, "libneuron_queue_for_each: device gone (removed or reset)");
    return static_cast<long>(r.count);
  });
}

long libneuron_queue_wait_any(libneuron_queue* const* queues, size_t n, size_t start, libneuron_record* out,
                              size_t max, long long timeout_ns, size_t* index, uint64_t* lost) {
  return guarded("libneuron_queue_wait_any", [&]() -> long {
    if (lost) *lost = 0;
    if (queues == nullptr) return fail(EINVAL, "libneuron_queue_wait_any: queues is NULL");
    if (n == 0) return fail(EINVAL, "libneuron_queue_wait_any: n is 0");
    if (out == nullptr) return fail(EINVAL, "libneuron_queue_wait_any: out is NULL");
    if (max == 0) return fail(EINVAL, "libneuron_queue_wait_any: max is 0");
    std::vector<neuron::NotificationQueue*> qs(n);
    std::size_t room_max = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (queues[i] == nullptr) return fail(EINVAL, fmt::format("libneuron_queue_wait_any: queues[{}] is NULL", i));
      if (inherited(queues[i])) return refuse_child("libneuron_queue_wait_any");
      qs[i] = &queues[i]->q;
      room_max = std::max(room_max, queues[i]->buf.size());
    }
    std::vector<neuron::Record> buf(std::min(max, room_max));
    auto w = neuron::NotificationQueue::wait_any(qs, buf, std::chrono::nanoseconds(timeout_ns < 0 ? -1 : timeout_ns),
                                                 start);
    if (!w) return fail("libneuron_queue_wait_any", w.error());
    if (index) *index = w->index;
    if (lost) *lost = w->drain.lost;
    std::memcpy(out, buf.data(), w->drain.count * sizeof(neuron::Record));
    return static_cast<long>(w->drain.count);
  });
}

const char* libneuron_last_error(void) { return last_error.c_str(); }

}  // extern "C"
