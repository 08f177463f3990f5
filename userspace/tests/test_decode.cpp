// SPDX-License-Identifier: MIT
//
// Every record type decoded from HAND-WRITTEN bytes. Each byte below was
// written from the offsets in the hardware reference
// (docs/hardware.md#rec-tpb-error, #rec-error-ids, #rec-dge-metadata) and
// include/uapi/linux/neuron_record.h, never produced by library code.
#include <gtest/gtest.h>

// The views against the UAPI masks, bit by bit (static assertions).
#include "neuron/notification_views_check.hpp"

#include <cstring>
#include <initializer_list>
#include <set>

#include "libneuron/json.hpp"
#include "libneuron/decode.hpp"
#include "libneuron/format.hpp"

using namespace neuron;

namespace {
Record bytes(std::initializer_list<int> b) {
  Record r;
  EXPECT_EQ(b.size(), 16u);
  std::size_t i = 0;
  for (int v : b) r.bytes[i++] = static_cast<std::uint8_t>(v);
  return r;
}
// Returns a copy, so `const auto& x = as<T>(decode(r));` never dangles.
template <class T>
T as(const Decoded& d) {
  EXPECT_TRUE(std::holds_alternative<T>(d)) << "decoded as " << kind_name(d);
  if (const T* p = std::get_if<T>(&d)) return *p;
  return T{};
}
}  // namespace

// docs/hardware.md#rec-tpb-error: error_id @0, metadata_lo @1..2, header @3,
// metadata_hi @4..7, timestamp @8. A DGE content OOB: SEQUENCER_NONFATAL
// (0x09), header 0x9f = phase 1 | TPB_ERROR 0x1f, metadata_hi sequencer arm
// {block_id 2 (POOL), program_counter 0x1a4, info 0x5c}
//   = 0x2 | 0x1a4 << 4 | 0x5c << 16 = 0x005c1a42 -> 42 1a 5c 00,
// metadata_lo {info_kind 5 DGE_BOUNDS, bc_reg 3, direction 2 dst} = 0x0835 -> 35 08,
// timestamp 1234567890123 ps = 0x0000011f71fb04cb -> cb 04 fb 71 1f 01 00 00.
const Record kDgeOob = bytes({0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0x00,
                              0xcb, 0x04, 0xfb, 0x71, 0x1f, 0x01, 0x00, 0x00});

TEST(Decode, TpbErrorSequencerNonfatalDgeOob) {
  const Decoded d = decode(kDgeOob);
  const auto& e = as<TpbError>(d);
  EXPECT_EQ(e.meta.notific_type, 0x1f);
  EXPECT_TRUE(e.meta.header.phase());
  EXPECT_FALSE(e.meta.header.sw_overflow());
  EXPECT_FALSE(e.meta.header.hw_overflow());
  EXPECT_EQ(e.meta.timestamp.ps, 1234567890123ull);
  EXPECT_EQ(e.error_id, 0x09);
  EXPECT_TRUE(e.is_sequencer());
  EXPECT_FALSE(e.is_fatal());
  EXPECT_EQ(e.metadata_lo, 0x0835);
  EXPECT_EQ(e.metadata_hi, 0x005c1a42u);
  EXPECT_EQ(e.metadata, 0x005c1a420835ull);
  EXPECT_EQ(e.sequencer.block_id, 2);
  EXPECT_EQ(e.sequencer.program_counter, 0x1a4);
  EXPECT_EQ(e.sequencer.info, 0x5c);
  EXPECT_EQ(e.sequencer.info_kind, NEURON_ISA_SEQ_INFO_DGE_BOUNDS);
  EXPECT_EQ(e.sequencer.bc_reg, 3);
  EXPECT_EQ(e.sequencer.direction, NEURON_DGE_DIR_DST);
  EXPECT_EQ(tpb_error_name(e.error_id), "SEQUENCER_NONFATAL");
  const std::string text = to_text(d);
  EXPECT_NE(text.find("DGE OOB on POOL at pc 0x1a4: dst"), std::string::npos) << text;
  EXPECT_NE(text.find("$S[3]"), std::string::npos) << text;
  EXPECT_NE(text.find("engine continued"), std::string::npos) << text;
}

// SEQUENCER_FATAL (0x0a), header 0x1f (phase 0), metadata_lo info_kind 1 BAD_OPCODE -> 01 00,
// metadata_hi {block 0 PE, pc 7, info 0x3f} = 0x003f0070 -> 70 00 3f 00, timestamp 0.
TEST(Decode, TpbErrorSequencerFatalBadOpcode) {
  const Record r = bytes({0x0a, 0x01, 0x00, 0x1f, 0x70, 0x00, 0x3f, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& e = as<TpbError>(d);
  EXPECT_EQ(e.error_id, NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL);
  EXPECT_TRUE(e.is_fatal());
  EXPECT_FALSE(e.meta.header.phase());
  EXPECT_EQ(e.sequencer.block_id, 0);
  EXPECT_EQ(e.sequencer.program_counter, 7);
  EXPECT_EQ(e.sequencer.info, 0x3f);
  EXPECT_EQ(e.sequencer.info_kind, NEURON_ISA_SEQ_INFO_BAD_OPCODE);
  const std::string text = to_text(d);
  EXPECT_NE(text.find("bad opcode 0x3f on PE at pc 0x7"), std::string::npos) << text;
  EXPECT_NE(text.find("engine halted"), std::string::npos) << text;
  EXPECT_NE(text.find("reset"), std::string::npos) << text;
}

// Generic 48-bit arm: FP_NAN (0x01), metadata 0xabcdef012345: lo 0x2345 -> 45 23,
// hi 0xabcdef01 -> 01 ef cd ab; header 0xff = phase | hw ovf | sw ovf | 0x1f.
TEST(Decode, TpbErrorGenericArmAndBothOverflowFlags) {
  const Record r = bytes({0x01, 0x45, 0x23, 0xff, 0x01, 0xef, 0xcd, 0xab, 1, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& e = as<TpbError>(d);
  EXPECT_EQ(e.error_id, NEURON_ISA_TPB_ERROR_FP_NAN);
  EXPECT_FALSE(e.is_sequencer());
  EXPECT_EQ(e.metadata, 0xabcdef012345ull);
  EXPECT_TRUE(e.meta.header.sw_overflow());
  EXPECT_TRUE(e.meta.header.hw_overflow());
  EXPECT_TRUE(e.meta.header.phase());
  EXPECT_EQ(e.meta.timestamp.ps, 1u);
  const std::string text = to_text(d);
  EXPECT_NE(text.find("FP_NAN"), std::string::npos);
  EXPECT_NE(text.find("0xabcdef012345"), std::string::npos) << text;
  EXPECT_NE(text.find("SW OVERFLOW"), std::string::npos);
  EXPECT_NE(text.find("HW OVERFLOW"), std::string::npos);
  // the mark means either loss: an input-buffer drop or a failed ring write
  EXPECT_NE(text.find("input buffer dropped them or a ring write failed"), std::string::npos) << text;
}

TEST(Decode, TpbErrorIdNamesAreTheSeedEnum) {
  const char* names[] = {"FP_UNDERFLOW", "FP_NAN", "FP_INF", "FP_OVERFLOW", "MEMORY_ERROR", "FAKE_ERROR",
                         "SEMAPHORE_ERROR", "EVENT_ERROR", "PSUM_COLLISION", "SEQUENCER_NONFATAL",
                         "SEQUENCER_FATAL"};
  for (int id = 0; id <= 0x0a; ++id) EXPECT_EQ(tpb_error_name(static_cast<std::uint8_t>(id)), names[id]);
  EXPECT_EQ(tpb_error_name(0x2a), "ERROR_0x2a");
}

// docs/hardware.md#rec-dge-metadata DGE_METADATA on POOL (EXPLICIT 0x0e, header
// 0x8e): word0 = pc 0x12345 | debug_hint 1 << 20 | 0x8e << 24 = 0x8e112345 ->
// 45 23 11 8e, dma_map 0x8001 -> 01 80, {num_packets 0 (=4096), reserved 0,
// infer_pc 1, dma_group_id 1} = 0xc000 -> 00 c0, timestamp 1000 ps -> e8 03 00
// ...
const Record kDge = bytes({0x45, 0x23, 0x11, 0x8e, 0x01, 0x80, 0x00, 0xc0,
                           0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00});

TEST(Decode, DgeMetadataOnTheDgeQueue) {
  const Decoded d = decode(kDge, QueueClass::Dge);
  const auto& m = as<DgeMetadata>(d);
  EXPECT_EQ(m.engine, Engine::POOL);
  EXPECT_EQ(m.program_counter, 0x12345u);
  EXPECT_EQ(m.debug_hint, NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE);
  EXPECT_EQ(m.dma_map, 0x8001);
  EXPECT_EQ(m.num_packets_raw, 0);
  EXPECT_EQ(m.num_packets, 4096u);
  EXPECT_TRUE(m.infer_program_counter);
  EXPECT_EQ(m.dma_group_id, 1);
  EXPECT_EQ(m.meta.timestamp.ps, 1000u);
  EXPECT_NE(to_text(d).find("4096 packets per DMA engine on engines {0,15}"), std::string::npos) << to_text(d);
}

// docs/decisions/0019-dge-metadata-route.md: the route decides which queue is
// the DGE's. 0x01743210 is the default with the DGE class (5) on queue 7.
TEST(Decode, DgeMetadataFollowsTheRoute) {
  constexpr std::uint32_t route = 0x01743210u;
  EXPECT_EQ(queue_class(7, route), QueueClass::Dge);
  EXPECT_EQ(queue_class(5, route), QueueClass::Any);
  EXPECT_TRUE(std::holds_alternative<DgeMetadata>(decode(kDge, queue_class(7, route))));
  EXPECT_TRUE(std::holds_alternative<Explicit>(decode(kDge, queue_class(5, route))));
  // DGE sharing queue 1 with EXPLICIT (0x01143210): the lower class names the
  // queue, so the bytes are EXPLICIT there; only a queue of its own is the DGE's
  EXPECT_EQ(queue_class(1, 0x01143210u), QueueClass::Explicit);
}

TEST(Decode, DgeMetadataExplicitlyAndAsPlainExplicitElsewhere) {
  auto m = decode_dge_metadata(kDge);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->dma_map, 0x8001);
  // without the queue hint the same bytes are an EXPLICIT record
  const auto& e = as<Explicit>(decode(kDge));
  EXPECT_EQ(e.engine, Engine::POOL);
  EXPECT_EQ(e.debug_hint, 1);
  EXPECT_EQ(e.soft_reset_counter, 0x8001);
  EXPECT_EQ(e.debug_hint_extended, 0xc000);
  // num_packets 0x123, no flags: 23 01
  Record r = kDge;
  r.bytes[6] = 0x23;
  r.bytes[7] = 0x01;
  m = decode_dge_metadata(r);
  EXPECT_EQ(m->num_packets, 0x123u);
  EXPECT_FALSE(m->infer_program_counter);
  EXPECT_EQ(m->dma_group_id, 0);
  // not an EXPLICIT type -> nullopt
  EXPECT_FALSE(decode_dge_metadata(kDgeOob).has_value());
  // EXPLICIT with debug_hint 3 on the DGE queue stays EXPLICIT
  r.bytes[2] = 0x30;  // debug_hint 3
  EXPECT_TRUE(std::holds_alternative<Explicit>(decode(r, QueueClass::Dge)));
}

// INST_START on ACT (0x08, header 0x88): pc 0x42, debug_hint 0xa -> 42 00 a0 88,
// soft_reset_counter 0x0102 -> 02 01, data_crc 0xbeef -> ef be, ts 5,000,000 ps = 0x4c4b40.
TEST(Decode, TraceInstStart) {
  const Record r = bytes({0x42, 0x00, 0xa0, 0x88, 0x02, 0x01, 0xef, 0xbe,
                          0x40, 0x4b, 0x4c, 0x00, 0x00, 0x00, 0x00, 0x00});
  const auto& t = as<Trace>(decode(r));
  EXPECT_EQ(t.engine, Engine::ACT);
  EXPECT_TRUE(t.start);
  EXPECT_EQ(t.program_counter, 0x42u);
  EXPECT_EQ(t.debug_hint, 0xa);
  EXPECT_EQ(t.soft_reset_counter, 0x0102);
  EXPECT_EQ(t.data_crc, 0xbeef);
  EXPECT_EQ(t.meta.timestamp.ps, 5000000u);
  EXPECT_EQ(t.meta.timestamp.ns().count(), 5000);
  EXPECT_EQ(format_time(t.meta.timestamp), "0.000005000");
}

// INST_END on SP (0x15, header 0x95): pc 0xfffff and debug_hint 0xf (all ones) -> ff ff ff 95.
TEST(Decode, TraceInstEndAllOnes) {
  const Record r = bytes({0xff, 0xff, 0xff, 0x95, 0xff, 0xff, 0x00, 0x00,
                          0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  const auto& t = as<Trace>(decode(r));
  EXPECT_EQ(t.engine, Engine::SP);
  EXPECT_FALSE(t.start);
  EXPECT_EQ(t.program_counter, 0xfffffu);
  EXPECT_EQ(t.debug_hint, 0xf);
  EXPECT_EQ(t.soft_reset_counter, 0xffff);
  EXPECT_EQ(t.meta.timestamp.ps, ~0ull);
}

// EXPLICIT on PE (0x06, header 0x86): pc 2, hint 3 -> 02 00 30 86, run 1 -> 01 00, ext 0x1234 -> 34 12.
TEST(Decode, Explicit) {
  const Record r = bytes({0x02, 0x00, 0x30, 0x86, 0x01, 0x00, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& e = as<Explicit>(d);
  EXPECT_EQ(e.engine, Engine::PE);
  EXPECT_EQ(e.program_counter, 2u);
  EXPECT_EQ(e.debug_hint, 3);
  EXPECT_EQ(e.soft_reset_counter, 1);
  EXPECT_EQ(e.debug_hint_extended, 0x1234);
  EXPECT_EQ(to_text(d), "PE EXPLICIT pc=0x00002 hint=3 ext=0x1234 run=1");
}

// EVT_SEM on DVE (0x13, header 0x93): id 7, {update_mode 2 SEM_INC, is_event 0} = 0x02,
// block_id 3, value 0xdeadbeef -> ef be ad de.
TEST(Decode, EvtSem) {
  const Record r = bytes({0x07, 0x02, 0x03, 0x93, 0xef, 0xbe, 0xad, 0xde, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& e = as<EvtSem>(d);
  ASSERT_TRUE(e.engine.has_value());
  EXPECT_EQ(*e.engine, Engine::DVE);
  EXPECT_FALSE(e.axi);
  EXPECT_EQ(e.id, 7);
  EXPECT_EQ(e.update_mode, NEURON_EVT_SEM_UPDATE_SEM_INC);
  EXPECT_FALSE(e.is_event);
  EXPECT_EQ(e.block_id, 3);
  EXPECT_EQ(e.value, 0xdeadbeefu);
  EXPECT_NE(to_text(d).find("semaphore 7 SEM_INC -> 3735928559"), std::string::npos) << to_text(d);
}

// AXI_EVT_SEM (0x1b, header 0x9b): id 0xff, {mode 4 EVENT_SET, is_event 1} = 0x14, block 0x10, value 1.
TEST(Decode, AxiEvtSem) {
  const Record r = bytes({0xff, 0x14, 0x10, 0x9b, 0x01, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const auto& e = as<EvtSem>(decode(r));
  EXPECT_FALSE(e.engine.has_value());
  EXPECT_TRUE(e.axi);
  EXPECT_EQ(e.id, 0xff);
  EXPECT_EQ(e.update_mode, NEURON_EVT_SEM_UPDATE_EVENT_SET);
  EXPECT_TRUE(e.is_event);
  EXPECT_EQ(e.block_id, 0x10);
  EXPECT_EQ(e.value, 1u);
  EXPECT_EQ(to_text(decode(r)).find("AXI_EVT_SEM event 255 EVENT_SET -> 1 (a host write, block_id 0x10)"),
            0u)
      << to_text(decode(r));
}

// DMA (0x02, header 0x82): engine 5, queue 9, count 0x100 -> 00 01 00 00.
TEST(Decode, Dma) {
  const Record r = bytes({0x05, 0x09, 0x00, 0x82, 0x00, 0x01, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& x = as<Dma>(d);
  EXPECT_EQ(x.dma_engine, 5);
  EXPECT_EQ(x.dma_queue, 9);
  EXPECT_EQ(x.descriptor_count, 0x100u);
  EXPECT_EQ(to_text(d), "DMA engine 5 queue 9: 256 descriptors completed");
}

// ERROR 0x03, interrupt form (header 0x83): {group 2 DEVICE, block_id 0x55} = 2 | 0x55 << 3 = 0x2aa -> aa 02,
// cause 0x10 -> 10 00 00 00.
TEST(Decode, ErrorInterruptForm) {
  const Record r = bytes({0xaa, 0x02, 0x00, 0x83, 0x10, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const auto& x = as<Interrupt>(decode(r));
  EXPECT_EQ(x.group, NEURON_ISA_INTERRUPT_GROUP_DEVICE);
  EXPECT_EQ(x.block_id, 0x55);
  EXPECT_EQ(x.cause_bits, 0x10u);
  // group 0 NOTIFIC, block 1: 0x08 -> 08 00; cause bits 2 and 4 = 0x14
  const Record r2 = bytes({0x08, 0x00, 0x00, 0x03, 0x14, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d2 = decode(r2);
  const auto& y = as<Interrupt>(d2);
  EXPECT_EQ(y.group, NEURON_ISA_INTERRUPT_GROUP_NOTIFIC);
  EXPECT_EQ(y.block_id, 1);
  EXPECT_NE(to_text(d2).find("SW_OVERFLOW|AXI_WRITE_ERROR"), std::string::npos) << to_text(d2);
  EXPECT_TRUE(is_error(d2));
  EXPECT_FALSE(is_throttle(d2));
  EXPECT_TRUE(is_error(decode(r)));  // group 2, device faults
  EXPECT_FALSE(is_throttle(decode(r)));
}

// Throttle is a condition, not an error (docs/hardware.md#throttle): group 1,
// block 4 (SP): 1 | 4 << 3 = 0x21 -> 21 00; header 0x83; level 7 -> 07 00 00 00.
// No queue hint is needed: the group field says it.
TEST(Decode, ThrottleRecordIsNotAnError) {
  const Record r = bytes({0x21, 0x00, 0x00, 0x83, 0x07, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& x = as<Interrupt>(d);
  EXPECT_EQ(x.group, NEURON_ISA_INTERRUPT_GROUP_THROTTLE);
  EXPECT_EQ(x.block_id, 4);
  EXPECT_EQ(x.cause_bits, 7u);
  EXPECT_TRUE(is_throttle(d));
  EXPECT_FALSE(is_error(d));
  EXPECT_TRUE(is_throttle(decode(r, QueueClass::Throttle)));
  // a TPB_ERROR is an error and no throttle
  EXPECT_TRUE(is_error(decode(kDgeOob)));
  EXPECT_FALSE(is_throttle(decode(kDgeOob)));
}

TEST(Decode, AllThirtyTwoTypeCodes) {
  // hand-written table of the 24 known values (docs/hardware.md#rec-types)
  const std::set<int> known = {0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
                               0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x1b, 0x1f};
  ASSERT_EQ(known.size(), 24u);
  for (int t = 0; t < 32; ++t) {
    Record r;
    for (int i = 0; i < 16; ++i) r.bytes[i] = static_cast<std::uint8_t>(0xa0 + i);
    r.bytes[3] = static_cast<std::uint8_t>(0x80 | t);
    const Decoded d = decode(r);
    EXPECT_EQ(meta_of(d).notific_type, t);
    EXPECT_EQ(is_known_notific_type(static_cast<std::uint8_t>(t)), known.count(t) == 1) << t;
    if (known.count(t)) {
      EXPECT_FALSE(std::holds_alternative<Unknown>(d)) << t;
    } else {
      const auto& u = as<Unknown>(d);
      EXPECT_EQ(u.bytes, r.bytes);
      EXPECT_NE(to_text(d).find("UNKNOWN"), std::string::npos);
      EXPECT_FALSE(to_json(d).dump().empty());
    }
  }
}

TEST(Decode, EngineTypeNames) {
  const char* expected[] = {"PE_INST_START",   "PE_INST_END",   "PE_EXPLICIT",   "PE_EVT_SEM",
                            "ACT_INST_START",  "ACT_INST_END",  "ACT_EXPLICIT",  "ACT_EVT_SEM",
                            "POOL_INST_START", "POOL_INST_END", "POOL_EXPLICIT", "POOL_EVT_SEM",
                            "DVE_INST_START",  "DVE_INST_END",  "DVE_EXPLICIT",  "DVE_EVT_SEM",
                            "SP_INST_START",   "SP_INST_END",   "SP_EXPLICIT",   "SP_EVT_SEM"};
  for (int t = 0x04; t <= 0x17; ++t) EXPECT_EQ(notific_type_name(static_cast<std::uint8_t>(t)), expected[t - 4]);
  EXPECT_EQ(notific_type_name(0x02), "DMA");
  EXPECT_EQ(notific_type_name(0x03), "ERROR");
  EXPECT_EQ(notific_type_name(0x1b), "AXI_EVT_SEM");
  EXPECT_EQ(notific_type_name(0x1f), "TPB_ERROR");
  EXPECT_EQ(notific_type_name(0x19), "UNKNOWN_0x19");
}

TEST(Decode, HeaderFlagsOnAnyType) {
  // header 0xe6: phase 1, hw 1, sw 1, type 0x06 (PE_EXPLICIT)
  const Record r = bytes({0, 0, 0, 0xe6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Decoded d = decode(r);
  const auto& m = meta_of(d);
  EXPECT_EQ(m.notific_type, 0x06);
  EXPECT_TRUE(m.header.phase());
  EXPECT_TRUE(m.header.sw_overflow());
  EXPECT_TRUE(m.header.hw_overflow());
  EXPECT_TRUE(r.phase() && r.sw_overflow() && r.hw_overflow());
}

// The decoder uses the UAPI masks; the test views use bitfields. They must agree.
TEST(Decode, AgreesWithTheSharedHeaderBitfields) {
  union neuron_isa_notification n;
  std::memcpy(&n, kDgeOob.bytes.data(), 16);
  const TpbError e = std::get<TpbError>(decode(kDgeOob));
  EXPECT_EQ(n.tpb_error.error_id, e.error_id);
  EXPECT_EQ(n.tpb_error.header.notific_type, 0x1f);
  EXPECT_EQ(n.tpb_error.header.phase, 1);
  EXPECT_EQ(n.tpb_error.metadata_hi.sequencer.block_id, e.sequencer.block_id);
  EXPECT_EQ(n.tpb_error.metadata_hi.sequencer.program_counter, e.sequencer.program_counter);
  EXPECT_EQ(n.tpb_error.metadata_hi.sequencer.info, e.sequencer.info);
  EXPECT_EQ(n.tpb_error.metadata_lo.sequencer.info_kind, e.sequencer.info_kind);
  EXPECT_EQ(n.tpb_error.metadata_lo.sequencer.bc_reg, e.sequencer.bc_reg);
  EXPECT_EQ(n.tpb_error.metadata_lo.sequencer.direction, e.sequencer.direction);
  EXPECT_EQ(n.tpb_error.timestamp, e.meta.timestamp.ps);

  std::memcpy(&n, kDge.bytes.data(), 16);
  const auto m = *decode_dge_metadata(kDge);
  EXPECT_EQ(n.dge_metadata.program_counter, m.program_counter);
  EXPECT_EQ(n.dge_metadata.debug_hint, m.debug_hint);
  EXPECT_EQ(n.dge_metadata.header, 0x8e);
  EXPECT_EQ(n.dge_metadata.dma_map, m.dma_map);
  EXPECT_EQ(n.dge_metadata.num_packets, m.num_packets_raw);
  EXPECT_EQ(n.dge_metadata.infer_program_counter, m.infer_program_counter ? 1 : 0);
  EXPECT_EQ(n.dge_metadata.dma_group_id, m.dma_group_id);
  EXPECT_EQ(n.generic.header.notific_type, 0x0e);
}

TEST(Decode, QueueClassFromDefaultRoute) {
  EXPECT_EQ(queue_class(0), QueueClass::Trace);
  EXPECT_EQ(queue_class(1), QueueClass::Explicit);
  EXPECT_EQ(queue_class(2), QueueClass::EvtSem);
  EXPECT_EQ(queue_class(3), QueueClass::Error);
  EXPECT_EQ(queue_class(4), QueueClass::Throttle);
  EXPECT_EQ(queue_class(5), QueueClass::Dge);
  EXPECT_EQ(queue_class(6), QueueClass::Any);
}

// Round trips through the two encoders: the UAPI writers the device model
// uses (neuron_rec_put_field()/neuron_rec_put_le() of
// include/uapi/linux/neuron_record.h, emulator/qemu/hw/neuron-engine.c) and
// the bitfield views of include/neuron/notification.h the kselftests and
// devtest read with. Encoding the same fields either way must give exactly
// the hand-written bytes above (docs/hardware.md#rec-tpb-error,
// #rec-dge-metadata offsets), and decoding those bytes must give the fields
// back.
TEST(Decode, UapiWritersGiveTheHandWrittenTpbErrorBytes) {
  Record enc;
  std::uint8_t* b = enc.bytes.data();
  const unsigned lo = NEURON_ISA_TPB_ERROR_METADATA_LO_OFFSET, hi = NEURON_ISA_TPB_ERROR_METADATA_HI_OFFSET;
  neuron_rec_put_le(b, NEURON_ISA_TPB_ERROR_ID_OFFSET, 1, NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL);
  neuron_rec_put_field(b, lo, 2, NEURON_ISA_SEQ_LO_INFO_KIND_MASK, NEURON_ISA_SEQ_LO_INFO_KIND_SHIFT,
                       NEURON_ISA_SEQ_INFO_DGE_BOUNDS);
  neuron_rec_put_field(b, lo, 2, NEURON_ISA_SEQ_LO_BC_REG_MASK, NEURON_ISA_SEQ_LO_BC_REG_SHIFT, 3);
  neuron_rec_put_field(b, lo, 2, NEURON_ISA_SEQ_LO_DIRECTION_MASK, NEURON_ISA_SEQ_LO_DIRECTION_SHIFT,
                       NEURON_DGE_DIR_DST);
  neuron_rec_put_le(b, NEURON_ISA_HEADER_OFFSET, 1,
                    NEURON_ISA_HEADER_PHASE | NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR);
  neuron_rec_put_field(b, hi, 4, NEURON_ISA_SEQ_HI_BLOCK_ID_MASK, NEURON_ISA_SEQ_HI_BLOCK_ID_SHIFT,
                       NEURON_ENGINE_POOL);
  neuron_rec_put_field(b, hi, 4, NEURON_ISA_SEQ_HI_PC_MASK, NEURON_ISA_SEQ_HI_PC_SHIFT, 0x1a4);
  neuron_rec_put_field(b, hi, 4, NEURON_ISA_SEQ_HI_INFO_MASK, NEURON_ISA_SEQ_HI_INFO_SHIFT, 0x5c);
  neuron_rec_put_le(b, NEURON_ISA_TIMESTAMP_OFFSET, 8, 1234567890123ull);
  EXPECT_EQ(enc, kDgeOob) << enc.hex() << " vs " << kDgeOob.hex();
}

TEST(Decode, DeviceEncoderGivesTheHandWrittenTpbErrorBytes) {
  union neuron_isa_notification n;
  std::memset(&n, 0, sizeof n);
  n.tpb_error.error_id = NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL;
  n.tpb_error.metadata_lo.sequencer.info_kind = NEURON_ISA_SEQ_INFO_DGE_BOUNDS;
  n.tpb_error.metadata_lo.sequencer.bc_reg = 3;
  n.tpb_error.metadata_lo.sequencer.direction = NEURON_DGE_DIR_DST;
  n.tpb_error.header.notific_type = NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR;
  n.tpb_error.header.phase = 1;
  n.tpb_error.metadata_hi.sequencer.block_id = NEURON_ENGINE_POOL;
  n.tpb_error.metadata_hi.sequencer.program_counter = 0x1a4;
  n.tpb_error.metadata_hi.sequencer.info = 0x5c;
  n.tpb_error.timestamp = 1234567890123ull;
  Record enc;
  std::memcpy(enc.bytes.data(), &n, 16);
  EXPECT_EQ(enc.hex(), kDgeOob.hex());
  EXPECT_EQ(enc, kDgeOob);
  const auto e = std::get<TpbError>(decode(enc));
  EXPECT_EQ(e.sequencer.bc_reg, 3);
  EXPECT_EQ(e.sequencer.program_counter, 0x1a4);
}

// The generic 48-bit arm: metadata 0xabcdef012345 split lo @1 (0x2345) / hi @4
// (0xabcdef01) around the header byte @3 (docs/hardware.md#rec-tpb-error).
TEST(Decode, DeviceEncoderGivesTheHandWrittenGenericArmBytes) {
  const Record want = bytes({0x01, 0x45, 0x23, 0xff, 0x01, 0xef, 0xcd, 0xab, 1, 0, 0, 0, 0, 0, 0, 0});
  union neuron_isa_notification n;
  std::memset(&n, 0, sizeof n);
  n.tpb_error.error_id = NEURON_ISA_TPB_ERROR_FP_NAN;
  n.tpb_error.metadata_lo.raw = 0x2345;
  n.tpb_error.metadata_hi.raw = 0xabcdef01u;
  n.tpb_error.header.notific_type = 0x1f;
  n.tpb_error.header.software_queue_overflow = 1;
  n.tpb_error.header.hardware_queue_overflow = 1;
  n.tpb_error.header.phase = 1;
  n.tpb_error.timestamp = 1;
  Record enc;
  std::memcpy(enc.bytes.data(), &n, 16);
  EXPECT_EQ(enc, want) << enc.hex() << " vs " << want.hex();
  EXPECT_EQ(std::get<TpbError>(decode(enc)).metadata, 0xabcdef012345ull);
}

// A DGE structural error as HandleIllegalInstr writes it (docs/device-model.md
// "DGE copy" step 1): SEQUENCER_FATAL, info_kind DGE_INVALID (6), bc_reg 0,
// direction 1 (src); block POOL, pc 0, info 1 (src).
// metadata_lo = 6 | 0 << 4 | 1 << 10 = 0x0406 -> 06 04; header 0x9f;
// metadata_hi = 2 | 0 << 4 | 1 << 16 = 0x00010002 -> 02 00 01 00.
TEST(Decode, DgeStructuralErrorBytesBothWays) {
  const Record want = bytes({0x0a, 0x06, 0x04, 0x9f, 0x02, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  union neuron_isa_notification n;
  std::memset(&n, 0, sizeof n);
  n.tpb_error.error_id = NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL;
  n.tpb_error.metadata_lo.sequencer.info_kind = NEURON_ISA_SEQ_INFO_DGE_INVALID;
  n.tpb_error.metadata_lo.sequencer.direction = NEURON_DGE_DIR_SRC;
  n.tpb_error.header.notific_type = 0x1f;
  n.tpb_error.header.phase = 1;
  n.tpb_error.metadata_hi.sequencer.block_id = NEURON_ENGINE_POOL;
  n.tpb_error.metadata_hi.sequencer.info = 1;
  Record enc;
  std::memcpy(enc.bytes.data(), &n, 16);
  EXPECT_EQ(enc, want) << enc.hex();
  const auto e = std::get<TpbError>(decode(want));
  EXPECT_TRUE(e.is_fatal());
  EXPECT_EQ(e.sequencer.info_kind, NEURON_ISA_SEQ_INFO_DGE_INVALID);
  EXPECT_EQ(e.sequencer.direction, NEURON_DGE_DIR_SRC);
  EXPECT_EQ(e.sequencer.block_id, NEURON_ENGINE_POOL);
  EXPECT_NE(to_text(decode(want)).find("bad src bound check"), std::string::npos) << to_text(decode(want));
}

TEST(Decode, DeviceEncoderGivesTheHandWrittenDgeMetadataBytes) {
  union neuron_isa_notification n;
  std::memset(&n, 0, sizeof n);
  n.dge_metadata.program_counter = 0x12345;
  n.dge_metadata.debug_hint = NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE;
  n.dge_metadata.header = 0x80 | NEURON_ISA_NOTIFICATION_TYPE_POOL_EXPLICIT;
  n.dge_metadata.dma_map = 0x8001;
  n.dge_metadata.num_packets = 0;  // means 4096
  n.dge_metadata.infer_program_counter = 1;
  n.dge_metadata.dma_group_id = 1;
  n.dge_metadata.timestamp = 1000;
  Record enc;
  std::memcpy(enc.bytes.data(), &n, 16);
  EXPECT_EQ(enc, kDge) << enc.hex() << " vs " << kDge.hex();
  const auto m = std::get<DgeMetadata>(decode(enc, QueueClass::Dge));
  EXPECT_EQ(m.num_packets, 4096u);
  EXPECT_EQ(m.dma_map, 0x8001);
  // what the emulated device writes for a copy of at most 64 bytes: dma_map 0x1, num_packets 1, pc 4 on POOL:
  // word0 = 4 | 1 << 20 | 0x8e << 24 -> 04 00 10 8e; dma_map 01 00; 0x001 -> 01 00
  const Record dev = bytes({0x04, 0x00, 0x10, 0x8e, 0x01, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
  std::memset(&n, 0, sizeof n);
  n.dge_metadata.program_counter = 4;
  n.dge_metadata.debug_hint = 1;
  n.dge_metadata.header = 0x8e;
  n.dge_metadata.dma_map = 1;
  n.dge_metadata.num_packets = 1;
  std::memcpy(enc.bytes.data(), &n, 16);
  EXPECT_EQ(enc, dev);
  EXPECT_EQ(std::get<DgeMetadata>(decode(dev, QueueClass::Dge)).num_packets, 1u);
}

// A programmed route (docs/hardware.md#nq-routing,
// docs/decisions/0022-route-programmable.md):
// 0x03249867 sends trace to 7, EXPLICIT to 6, EVT_SEM to 8, errors to 9,
// throttle to 4, DGE to 2, DMA to 3. Each queue's class, hand-written.
TEST(Decode, QueueClassUnderAProgrammedRoute) {
  constexpr std::uint32_t route = 0x03249867u;
  const QueueClass want[10] = {QueueClass::Any,      QueueClass::Any,      QueueClass::Dge, QueueClass::Dma,
                               QueueClass::Throttle, QueueClass::Any,      QueueClass::Explicit,
                               QueueClass::Trace,    QueueClass::EvtSem,   QueueClass::Error};
  for (unsigned q = 0; q < 10; ++q) EXPECT_EQ(queue_class(q, route), want[q]) << "queue " << q;
  // the lowest class routed to a queue names it: trace and DGE both on 5
  EXPECT_EQ(queue_class(5, 0x01553215u), QueueClass::Trace);
  EXPECT_EQ(queue_class(1, 0x01553215u), QueueClass::Explicit);
}

// The same EXPLICIT-with-debug_hint-1 bytes are DGE metadata on the queue
// the route gives the DGE class and EXPLICIT anywhere else
// (docs/decisions/0019-dge-metadata-route.md): POOL EXPLICIT 0x0e, pc 7, hint
// 1, dma_map 0x0003 (bytes 4..5), num_packets 2 (bytes 6..7).
TEST(Decode, DgeMetadataUnderAProgrammedRoute) {
  Record r;
  r.bytes = {0x07, 0x00, 0x10, 0x0e | NEURON_ISA_HEADER_PHASE, 0x03, 0x00, 0x02, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
  constexpr std::uint32_t route = 0x03249867u;
  const Decoded on_dge = decode(r, queue_class(2, route));
  ASSERT_TRUE(std::holds_alternative<DgeMetadata>(on_dge));
  EXPECT_EQ(std::get<DgeMetadata>(on_dge).dma_map, 0x0003);
  EXPECT_EQ(std::get<DgeMetadata>(on_dge).num_packets, 2u);
  EXPECT_TRUE(std::holds_alternative<Explicit>(decode(r, queue_class(6, route))));
  // queue 5 is the DGE queue of the default route only
  EXPECT_TRUE(std::holds_alternative<Explicit>(decode(r, queue_class(5, route))));
  EXPECT_TRUE(std::holds_alternative<DgeMetadata>(decode(r, queue_class(5))));
}
