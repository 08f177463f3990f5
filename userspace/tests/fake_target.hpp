// SPDX-License-Identifier: MIT
//
// A fake device for execute() (an ExecTarget) that "runs" programs into fake
// queues (fake_device.hpp: threshold edges, eventfds, backpressure) the way
// docs/device-model.md says (trace -> queue 0, EXPLICIT -> 1, EVT_SEM -> 2,
// errors -> 3), with the driver's tenancy. Shared by test_execute.cpp and
// the C API's tests (test_c_api_internal.cpp).
#pragma once

#include <endian.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fake_device.hpp"
#include "libneuron/execute.hpp"

namespace neuron::test {

class FakeTarget : public ExecTarget {
 public:
  // Tenancy as the driver keeps it (include/uapi/linux/neuron.h "Tenancy"):
  // a core belongs to one file (implicitly taken by NQ_INIT and SUBMIT), and
  // SUBMIT refuses (EACCES) a DGE_COPY range outside one of this file's
  // allocations.
  unsigned num_cores = 4;
  std::uint64_t mem_alloc_limit = 0x100000;
  /// program areas: 64 KiB per engine at the top, core 0 PE at
  /// 0x400000 - 4 * 5 * 0x10000 = 0x2c0000 (include/uapi/linux/neuron.h)
  std::uint64_t mem_size = 0x400000;
  bool no_tenancy = false;     // a driver without NEURON_CAP_TENANCY: CORE_ACQUIRE is ENOTTY
  std::uint64_t owned = 0;     // cores this file owns
  std::uint64_t others = 0;    // cores another open file owns
  std::string owners_text;     // sysfs core_owners; "" = made from owned/others
  std::map<std::uint64_t, std::uint64_t> mem;  // this file's allocations: offset -> size
  std::vector<MemRange> foreign_mem;           // other files' allocations
  std::vector<std::string> log;                // the tenancy calls, engine resets, queue inits and submits in order

  bool fail_open = false;
  bool stuck = false;  // engines never finish
  bool fail_features = false;
  /// THROTTLE_CTRL armed: each THROTTLE writes an ERROR record of group
  /// throttle to queue 4 (docs/hardware.md#throttle); unarmed, nothing.
  bool throttle_armed = false;
  /// Every core's NOTIFIC ROUTE word: put() and push() take a record class
  /// (enum neuron_notific_class) and write to the queue it names.
  std::uint32_t route_word = NEURON_ROUTE_DEFAULT;
  std::uint64_t now_ps = 1000;
  std::map<std::pair<unsigned, unsigned>, std::uint32_t> state;
  std::vector<std::pair<unsigned, unsigned>> opened;
  std::vector<NotificationQueue::Options> opts;
  std::map<unsigned, std::uint32_t> features;
  std::vector<std::vector<Instruction>> submitted;
  /// Called after a program was "run", e.g. to push an edge.
  std::function<void(FakeTarget&)> after_submit;
  FakeEvents* events = nullptr;  // owned by the Reaper once opened

  Result<std::unique_ptr<ReapQueue>> open_queue(unsigned core, unsigned queue,
                                                const NotificationQueue::Options& o) override {
    if (fail_open && queue == 2) return unexpected(Error::from_errno(EBUSY, "NEURON_IOC_NQ_INIT core=0 queue=2"));
    if (auto s = own(core); !s) return unexpected(std::move(s).error());
    log.push_back(fmt::format("nq_init {}.{}", core, queue));
    auto q = std::make_unique<FakeQueue>(core, queue, o.size / 16, o.threshold);
    queues_[{core, queue}] = q.get();
    opened.emplace_back(core, queue);
    opts.push_back(o);
    return std::unique_ptr<ReapQueue>(std::move(q));
  }
  Result<std::uint32_t> route(unsigned) override { return route_word; }
  Result<std::uint32_t> set_route(unsigned core, std::uint32_t r) override {
    if (auto s = own(core); !s) return unexpected(std::move(s).error());
    for (const auto& entry : queues_)
      if (entry.first.first == core) return unexpected(Error::from_errno(EBUSY, "NEURON_IOC_NQ_ROUTE"));
    log.push_back(fmt::format("route {} {:#010x}", core, r));
    route_word = r;
    return r;
  }
  Result<std::unique_ptr<EventSource>> open_events() override {
    auto e = std::make_unique<FakeEvents>();
    events = e.get();
    return std::unique_ptr<EventSource>(std::move(e));
  }
  Status set_feature_flags(unsigned core, std::uint32_t flags) override {
    if (fail_features)
      return unexpected(Error::from_errno(EOPNOTSUPP, fmt::format("NEURON_IOC_FEATURE_FLAGS SET core={}", core)));
    features[core] = flags;
    return {};
  }
  Status submit(unsigned core, unsigned engine, std::span<const Instruction> insns, std::uint32_t flags) override {
    if (auto s = own(core); !s) return s;
    for (std::uint32_t pc = 0; pc < insns.size(); ++pc) {
      const auto& d = insns[pc].operand.dge;
      const std::uint64_t len = std::max<std::uint32_t>(d.length, 1);
      // a source may lie in the submitted program itself (the driver's check)
      const std::uint64_t area = 0x2c0000 + (core * 5 + engine) * 0x10000, end = area + insns.size() * 32;
      const bool src_in_program = d.src >= area && d.src + len <= end;
      if (insns[pc].opcode == NEURON_OP_DGE_COPY &&
          ((!allocated(d.src, len) && !src_in_program) || !allocated(d.dst, len)))
        return unexpected(Error::from_errno(EACCES, fmt::format("NEURON_IOC_SUBMIT core={} engine={} (pc {})", core,
                                                                engine, pc)));
    }
    log.push_back(fmt::format("submit {}.{}", core, engine));
    submitted.emplace_back(insns.begin(), insns.end());
    const bool trace = flags & NEURON_SUBMIT_F_TRACE;
    std::uint32_t st = stuck ? NEURON_ENGINE_RUNNING : NEURON_ENGINE_IDLE;
    for (std::uint32_t pc = 0; pc < insns.size() && !stuck; ++pc) {
      const auto& in = insns[pc];
      if (trace) push(core, 0, word0(pc, le16toh(in.debug_hint), 0x04 + 4 * engine), 1, 0);
      if (in.opcode == NEURON_OP_NOTIFY) push(core, 1, word0(pc, le16toh(in.debug_hint), 0x06 + 4 * engine), 1, le16toh(in.operand.arg.debug_hint_extended));
      // DGE metadata (docs/hardware.md#rec-dge-metadata): the engine's
      // EXPLICIT type, debug_hint 1, dma_map 0x0001, num_packets 1; class DGE
      if (in.opcode == NEURON_OP_DGE_COPY && (features[core] & NEURON_FEATURE_DGE_PACKET_NOTIF))
        push(core, NEURON_CLASS_DGE, word0(pc, 1, 0x06 + 4 * engine), 0x0001, 1);
      bool halt = false;
      if (in.opcode == NEURON_OP_THROTTLE && throttle_armed) {
        // interrupt form: le16 {group:3 = 1 throttle, block_id:7 = engine} @0,
        // header 0x03 @3, cause_bits = level @4 (docs/hardware.md#rec-interrupt)
        Record r;
        const std::uint32_t w = NEURON_ISA_INTERRUPT_GROUP_THROTTLE | (engine << 3);
        r.bytes[0] = static_cast<std::uint8_t>(w);
        r.bytes[1] = static_cast<std::uint8_t>(w >> 8);
        r.bytes[3] = NEURON_ISA_NOTIFICATION_TYPE_ERROR;
        for (int b = 0; b < 4; ++b) r.bytes[4 + b] = static_cast<std::uint8_t>(le32toh(in.operand.arg.value) >> (8 * b));
        put(core, 4, r, 0);
      }
      if (in.opcode == NEURON_OP_FP_ERROR) {
        // TPB_ERROR: error_id @0, metadata_lo @1, header @3, metadata_hi {block, pc} @4
        Record r;
        r.bytes[0] = static_cast<std::uint8_t>(le32toh(in.operand.arg.value));
        r.bytes[3] = 0x1f;
        const std::uint32_t hi = engine | (pc << 4);
        for (int b = 0; b < 4; ++b) r.bytes[4 + b] = static_cast<std::uint8_t>(hi >> (8 * b));
        // 0xee: the record carries software_queue_overflow, 0xef hardware_queue_overflow
        put(core, 3, r,
            le32toh(in.operand.arg.value) == 0xee   ? NEURON_ISA_HEADER_SW_OVF
            : le32toh(in.operand.arg.value) == 0xef ? NEURON_ISA_HEADER_HW_OVF
                                           : 0);
        if (le32toh(in.operand.arg.value) == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL) halt = true;
      }
      if (halt) {
        st = NEURON_ENGINE_HALTED;
        break;
      }
      if (in.events.update_mode == NEURON_EVT_SEM_UPDATE_EVENT_SET) {
        // EVT_SEM {id @0, update_mode | is_event << 4 @1, block_id @2}
        Record r;
        r.bytes[0] = in.events.update_idx;
        r.bytes[1] = static_cast<std::uint8_t>(in.events.update_mode | 0x10);
        r.bytes[2] = static_cast<std::uint8_t>(engine);
        r.bytes[3] = static_cast<std::uint8_t>(0x07 + 4 * engine);
        r.bytes[4] = 1;
        put(core, 2, r, 0);
      }
      if (trace) push(core, 0, word0(pc, le16toh(in.debug_hint), 0x05 + 4 * engine), 1, 0);
      if (in.opcode == NEURON_OP_HALT) break;
    }
    state[{core, engine}] = st;
    if (after_submit) after_submit(*this);
    return {};
  }
  Result<EngineStatus> engine_status(unsigned core, unsigned engine) override {
    EngineStatus s{};
    s.core = core;
    s.engine = engine;
    const auto it = state.find({core, engine});
    s.state = it == state.end() ? std::uint32_t{NEURON_ENGINE_IDLE} : it->second;
    return s;
  }
  Status engine_reset(unsigned core, unsigned engine) override {
    log.push_back(fmt::format("reset {}.{}", core, engine));
    state[{core, engine}] = NEURON_ENGINE_IDLE;
    return {};
  }
  Result<DeviceInfo> info() override {
    DeviceInfo i{};
    i.num_cores = num_cores;
    i.engines_per_core = 5;
    i.mem_size = mem_size;
    i.mem_alloc_limit = no_tenancy ? 0 : mem_alloc_limit;
    i.capabilities = no_tenancy ? 0 : NEURON_CAP_TENANCY;
    return i;
  }
  Result<std::uint64_t> acquire_cores(std::uint64_t cores) override {
    if (no_tenancy) return unexpected(Error::from_errno(ENOTTY, "NEURON_IOC_CORE_ACQUIRE"));
    if (cores & others)
      return unexpected(Error::from_errno(EBUSY, fmt::format("NEURON_IOC_CORE_ACQUIRE cores=0x{:x}", cores)));
    if (cores) log.push_back(fmt::format("acquire 0x{:x}", cores));
    return owned |= cores;
  }
  Result<std::uint64_t> release_cores(std::uint64_t cores) override {
    if (cores & ~owned)
      return unexpected(Error::from_errno(EPERM, fmt::format("NEURON_IOC_CORE_RELEASE cores=0x{:x}", cores)));
    log.push_back(fmt::format("release 0x{:x}", cores));
    for (auto& [key, st] : state)
      if (cores >> key.first & 1) st = NEURON_ENGINE_IDLE;  // the driver resets the engines
    return owned &= ~cores;
  }
  Result<std::vector<CoreOwner>> core_owners() override {
    std::string text = owners_text;
    for (unsigned c = 0; text.empty() && c < num_cores; ++c) {
      if (owned >> c & 1) text += fmt::format("{} {} neuron_tests\n", c, ::getpid());
      else if (others >> c & 1) text += fmt::format("{} 4242 other\n", c);
      else text += fmt::format("{} - -\n", c);
    }
    return parse_core_owners(text);
  }
  Status mem_alloc_fixed(std::uint64_t offset, std::uint64_t size) override {
    const std::string what = fmt::format("NEURON_IOC_MEM_ALLOC size=0x{:x} offset=0x{:x} flags=FIXED", size, offset);
    if (offset % NEURON_MEM_ALIGN || offset + size > mem_alloc_limit) return unexpected(Error::from_errno(EINVAL, what));
    const auto overlaps = [&](std::uint64_t o, std::uint64_t n) { return offset < o + n && o < offset + size; };
    for (const auto& [o, n] : mem)
      if (overlaps(o, n)) return unexpected(Error::from_errno(EBUSY, what));
    for (const auto& r : foreign_mem)
      if (overlaps(r.offset, r.size)) return unexpected(Error::from_errno(EBUSY, what));
    mem[offset] = size;
    log.push_back(fmt::format("alloc 0x{:x}+0x{:x}", offset, size));
    return {};
  }
  Status mem_free(std::uint64_t offset) override {
    if (!mem.erase(offset))
      return unexpected(Error::from_errno(ENOENT, fmt::format("NEURON_IOC_MEM_FREE offset=0x{:x}", offset)));
    log.push_back(fmt::format("free 0x{:x}", offset));
    return {};
  }
  /// Per core: M2S_TRIGGER bits, AXI_NOTIFY, and AXI_DROPPED since the claim
  /// (docs/device-model.md#dma-engines, #axi-evt-sem).
  std::map<unsigned, std::uint32_t> dma_armed;
  std::map<unsigned, bool> axi_armed;
  std::map<unsigned, std::uint32_t> axi_dropped;
  Result<Device::NotifyTriggers> notify_trigger(unsigned core, neuron_trigger_source source, unsigned index,
                                                bool enable) override {
    if (auto s = own(core); !s) return unexpected(std::move(s).error());
    if (source == NEURON_TRIGGER_DMA_QUEUE) {
      dma_armed[core] = enable ? dma_armed[core] | 1u << index : dma_armed[core] & ~(1u << index);
      log.push_back(fmt::format("trigger {} dma {} {}", core, index, enable ? "on" : "off"));
    } else {
      axi_armed[core] = enable;
      log.push_back(fmt::format("trigger {} axi {}", core, enable ? "on" : "off"));
    }
    return Device::NotifyTriggers{dma_armed[core], axi_armed[core], axi_dropped[core]};
  }
  /// A host SET: with AXI_NOTIFY on, one AXI_EVT_SEM record, class EVT_SEM:
  /// {id @0, update_mode SEM_SET 1 @1, block_id 0xff @2, header 0x1b @3,
  /// value @4..7} (docs/hardware.md#rec-classes).
  Result<std::uint32_t> evt_sem(unsigned core, unsigned index, neuron_evt_sem_op op, std::uint32_t value) override {
    if (auto s = own(core); !s) return unexpected(std::move(s).error());
    log.push_back(fmt::format("sem {}.{} op {} value {}", core, index, static_cast<unsigned>(op), value));
    if (axi_armed[core] && op == NEURON_SEM_SET) {
      Record r;
      r.bytes[0] = static_cast<std::uint8_t>(index);
      r.bytes[1] = 1;
      r.bytes[2] = 0xff;
      r.bytes[3] = 0x1b;
      for (int b = 0; b < 4; ++b) r.bytes[4 + b] = static_cast<std::uint8_t>(value >> (8 * b));
      put(core, NEURON_CLASS_EVT_SEM, r, 0);
    }
    return value;
  }
  /// Index of the first log entry starting with `prefix`, or log.size().
  std::size_t first(std::string_view prefix) const {
    for (std::size_t i = 0; i < log.size(); ++i)
      if (log[i].rfind(prefix, 0) == 0) return i;
    return log.size();
  }
  FakeQueue& queue(unsigned core, unsigned q) { return *queues_.at({core, q}); }

 private:
  // The implicit acquisition of NQ_INIT and SUBMIT.
  Status own(unsigned core) {
    if (others >> core & 1) return unexpected(Error::from_errno(EPERM, fmt::format("core {} is not ours", core)));
    if (!no_tenancy) owned |= std::uint64_t{1} << core;
    return {};
  }
  // Inside one allocation of this file (the driver's SUBMIT check).
  bool allocated(std::uint64_t addr, std::uint64_t len) const {
    if (no_tenancy) return true;
    for (const auto& [o, n] : mem)
      if (addr >= o && addr + len <= o + n) return true;
    return false;
  }
  static std::uint32_t word0(std::uint32_t pc, std::uint32_t hint, std::uint32_t type) {
    return pc | ((hint & 0xf) << 20) | (type << 24);
  }
  void push(unsigned core, unsigned q, std::uint32_t w0, std::uint16_t run, std::uint16_t ext) {  // q: a class
    Record r;
    for (int b = 0; b < 4; ++b) r.bytes[b] = static_cast<std::uint8_t>(w0 >> (8 * b));
    r.bytes[4] = static_cast<std::uint8_t>(run);
    r.bytes[6] = static_cast<std::uint8_t>(ext);
    r.bytes[7] = static_cast<std::uint8_t>(ext >> 8);
    put(core, q, r, 0);
  }
  // `cls`: enum neuron_notific_class (under the default route, the queue)
  void put(unsigned core, unsigned cls, Record r, std::uint8_t flags) {
    now_ps += 1000;
    for (int b = 0; b < 8; ++b) r.bytes[8 + b] = static_cast<std::uint8_t>(now_ps >> (8 * b));
    queues_.at({core, NEURON_ROUTE_QUEUE(route_word, cls)})->push(r, flags);
  }
  std::map<std::pair<unsigned, unsigned>, FakeQueue*> queues_;  // owned by the Reaper during execute()
};

}  // namespace neuron::test
