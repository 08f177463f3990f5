// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note
//
// The bitfield views of include/neuron/notification.h against the UAPI
// record layout (include/uapi/linux/neuron_record.h), bit by bit. C++20
// only: nothing includes it but scripts/check-headers.sh
// (headers.views_asserts_cxx) and userspace/tests/test_decode.cpp, so a
// view or a mask that moves fails both builds. Kept out of the C header
// because checkpatch (scripts/static-check.sh) cannot parse C++.
#pragma once

#include "notification.h"

/*
 * Bit positions, field by field: each view is filled with distinct values,
 * turned into bytes in a constant expression (std::bit_cast), compared with
 * the bytes worked out by hand from the layouts in
 * include/uapi/linux/neuron_record.h, and read back through its accessors.
 */
#include <array>
#include <bit>

namespace neuron_notification_views {
using rec16 = std::array<uint8_t, 16>;

constexpr bool same(const rec16 &a, const rec16 &b)
{
	for (unsigned int i = 0; i < 16; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* header {type 0x1b, sw 1, hw 0, phase 1} = 1011 1011; {0x05, 0, 1, 0} = 0100 0101 */
constexpr uint8_t hdr_a = std::bit_cast<uint8_t>(neuron_isa_notification_header{0x1b, 1, 0, 1});
constexpr uint8_t hdr_b = std::bit_cast<uint8_t>(neuron_isa_notification_header{0x05, 0, 1, 0});
static_assert(hdr_a == 0xbb && hdr_b == 0x45, "header view bits");
static_assert(NEURON_FIELD_GET(NEURON_ISA_HEADER_TYPE_MASK, NEURON_ISA_HEADER_TYPE_SHIFT, hdr_a) == 0x1b &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_SW_OVF, NEURON_ISA_HEADER_SW_OVF_SHIFT, hdr_a) == 1 &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_HW_OVF, NEURON_ISA_HEADER_HW_OVF_SHIFT, hdr_a) == 0 &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_PHASE, NEURON_ISA_HEADER_PHASE_SHIFT, hdr_a) == 1 &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_TYPE_MASK, NEURON_ISA_HEADER_TYPE_SHIFT, hdr_b) == 0x05 &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_SW_OVF, NEURON_ISA_HEADER_SW_OVF_SHIFT, hdr_b) == 0 &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_HW_OVF, NEURON_ISA_HEADER_HW_OVF_SHIFT, hdr_b) == 1 &&
	      NEURON_FIELD_GET(NEURON_ISA_HEADER_PHASE, NEURON_ISA_HEADER_PHASE_SHIFT, hdr_b) == 0,
	      "UAPI header masks");

/* trace {pc 0xabcde, hint 5, header 0xbb, src 0x1234, crc 0x5678, ts 0x1122334455667788} */
constexpr rec16 trace = std::bit_cast<rec16>(neuron_isa_trace_notification{
	0xabcde, 5, 0xbb, 0x1234, 0x5678, 0x1122334455667788ull});
static_assert(same(trace, rec16{0xde, 0xbc, 0x5a, 0xbb, 0x34, 0x12, 0x78, 0x56,
				0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}), "trace view bytes");
static_assert(NEURON_REC_PC(trace) == 0xabcde && NEURON_REC_DEBUG_HINT(trace) == 5 &&
	      NEURON_REC_HEADER(trace) == 0xbb && NEURON_REC_TYPE(trace) == 0x1b &&
	      NEURON_REC_PHASE(trace) == 1 && NEURON_REC_SW_OVF(trace) == 1 &&
	      NEURON_REC_HW_OVF(trace) == 0 &&
	      NEURON_REC_TRACE_SOFT_RESET_COUNTER(trace) == 0x1234 &&
	      NEURON_REC_TRACE_DATA_CRC(trace) == 0x5678 &&
	      NEURON_REC_TIMESTAMP(trace) == 0x1122334455667788ull, "UAPI trace accessors");

/* explicit {pc 0x00001, hint 0xf, header 0x45, src 0xfffe, dhe 0x9abc, ts 1} */
constexpr rec16 expl = std::bit_cast<rec16>(neuron_isa_explicit_notification{
	0x00001, 0xf, 0x45, 0xfffe, 0x9abc, 1});
static_assert(same(expl, rec16{0x01, 0x00, 0xf0, 0x45, 0xfe, 0xff, 0xbc, 0x9a,
			       0x01, 0, 0, 0, 0, 0, 0, 0}), "explicit view bytes");
static_assert(NEURON_REC_PC(expl) == 1 && NEURON_REC_DEBUG_HINT(expl) == 0xf &&
	      NEURON_REC_HW_OVF(expl) == 1 &&
	      NEURON_REC_EXPLICIT_SOFT_RESET_COUNTER(expl) == 0xfffe &&
	      NEURON_REC_EXPLICIT_DEBUG_HINT_EXT(expl) == 0x9abc &&
	      NEURON_REC_TIMESTAMP(expl) == 1, "UAPI explicit accessors");

/*
 * DGE metadata {pc 0x12345, hint 1, header 0x86, dma_map 0xa55a,
 * num_packets 0xfed, reserved 2, infer_pc 1, dma_group_id 1}:
 * bytes 6..7 = 0xfed | 2 << 12 | 1 << 14 | 1 << 15 = 0xefed
 */
constexpr rec16 dge = std::bit_cast<rec16>(neuron_isa_tpb_dge_metadata_notification{
	0x12345, 1, 0x86, 0xa55a, 0xfed, 2, 1, 1, 0x0102030405060708ull});
static_assert(same(dge, rec16{0x45, 0x23, 0x11, 0x86, 0x5a, 0xa5, 0xed, 0xef,
			      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}), "dge view bytes");
static_assert(NEURON_REC_PC(dge) == 0x12345 &&
	      NEURON_REC_DEBUG_HINT(dge) == NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE &&
	      NEURON_REC_DGE_DMA_MAP(dge) == 0xa55a && NEURON_REC_DGE_NUM_PACKETS(dge) == 0xfed &&
	      NEURON_REC_DGE_RESERVED(dge) == 2 && NEURON_REC_DGE_INFER_PC(dge) == 1 &&
	      NEURON_REC_DGE_DMA_GROUP_ID(dge) == 1, "UAPI dge accessors");

/* EVT_SEM {id 0xc7, mode 5, is_event 1, block 3, header 0x8b, value 0xdeadbeef} */
constexpr rec16 evt = std::bit_cast<rec16>(neuron_isa_evt_sem_notification{
	0xc7, 5, 1, 0, 3, {0x0b, 0, 0, 1}, 0xdeadbeef, 0});
static_assert(same(evt, rec16{0xc7, 0x15, 0x03, 0x8b, 0xef, 0xbe, 0xad, 0xde,
			      0, 0, 0, 0, 0, 0, 0, 0}), "evt_sem view bytes");
static_assert(NEURON_REC_EVT_SEM_ID(evt) == 0xc7 && NEURON_REC_EVT_SEM_UPDATE_MODE(evt) == 5 &&
	      NEURON_REC_EVT_SEM_IS_EVENT(evt) == 1 && NEURON_REC_EVT_SEM_BLOCK_ID(evt) == 3 &&
	      NEURON_REC_TYPE(evt) == 0x0b && NEURON_REC_EVT_SEM_VALUE(evt) == 0xdeadbeefu,
	      "UAPI evt_sem accessors");

/* DMA {engine 0x21, queue 0x43, header 0x02, count 0x01020304} */
constexpr rec16 dma = std::bit_cast<rec16>(neuron_isa_dma_notification{
	0x21, 0x43, 0, {0x02, 0, 0, 0}, 0x01020304, 0});
static_assert(same(dma, rec16{0x21, 0x43, 0x00, 0x02, 0x04, 0x03, 0x02, 0x01,
			      0, 0, 0, 0, 0, 0, 0, 0}), "dma view bytes");
static_assert(NEURON_REC_DMA_ENGINE(dma) == 0x21 && NEURON_REC_DMA_QUEUE(dma) == 0x43 &&
	      NEURON_REC_DMA_DESC_COUNT(dma) == 0x01020304, "UAPI dma accessors");

/* interrupt {group 5, block_id 0x55, header 0xc3, cause 0x1ff}: 5 | 0x55 << 3 = 0x02ad */
constexpr rec16 intr = std::bit_cast<rec16>(neuron_isa_interrupt_notification{
	5, 0x55, 0, 0, {0x03, 0, 1, 1}, 0x1ff, 0});
static_assert(same(intr, rec16{0xad, 0x02, 0x00, 0xc3, 0xff, 0x01, 0x00, 0x00,
			       0, 0, 0, 0, 0, 0, 0, 0}), "interrupt view bytes");
static_assert(NEURON_REC_INTR_GROUP(intr) == 5 && NEURON_REC_INTR_BLOCK_ID(intr) == 0x55 &&
	      NEURON_REC_INTR_CAUSE(intr) == 0x1ff && NEURON_REC_TYPE(intr) == 0x03,
	      "UAPI interrupt accessors");

/*
 * TPB_ERROR sequencer arms (a struct holding unions cannot be bit_cast in a
 * constant expression: the arms are checked alone, the offsets above).
 * metadata_lo {info_kind 0xa, bc_reg 0x2b, direction 2} = 0xa | 0x2b << 4 | 2 << 10 = 0x0aba;
 * metadata_hi {block_id 9, pc 0x876, info 0xe1} = 9 | 0x876 << 4 | 0xe1 << 16 = 0x00e18769
 */
constexpr uint16_t seq_lo = std::bit_cast<uint16_t>(
	decltype(neuron_isa_tpb_error_metadata_lo::sequencer){0xa, 0x2b, 2, 0});
constexpr uint32_t seq_hi = std::bit_cast<uint32_t>(
	decltype(neuron_isa_tpb_error_metadata_hi::sequencer){9, 0x876, 0xe1, 0});
static_assert(seq_lo == 0x0aba && seq_hi == 0x00e18769u, "sequencer view bits");
constexpr rec16 tpb{0x0a, 0xba, 0x0a, 0x9f, 0x69, 0x87, 0xe1, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
static_assert(NEURON_REC_TPB_ERROR_ID(tpb) == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL &&
	      NEURON_REC_TPB_METADATA_LO(tpb) == seq_lo && NEURON_REC_TPB_METADATA_HI(tpb) == seq_hi &&
	      NEURON_REC_SEQ_INFO_KIND(tpb) == 0xa && NEURON_REC_SEQ_BC_REG(tpb) == 0x2b &&
	      NEURON_REC_SEQ_DIRECTION(tpb) == 2 && NEURON_REC_SEQ_BLOCK_ID(tpb) == 9 &&
	      NEURON_REC_SEQ_PC(tpb) == 0x876 && NEURON_REC_SEQ_INFO(tpb) == 0xe1 &&
	      NEURON_REC_TYPE(tpb) == NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR &&
	      NEURON_REC_PHASE(tpb) == 1, "UAPI tpb_error accessors");
} /* namespace neuron_notification_views */
