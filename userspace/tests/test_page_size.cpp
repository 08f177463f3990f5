// SPDX-License-Identifier: GPL-2.0
// No page size in the ABI
// (docs/decisions/0011-reset-and-recovery.md#page-size): the driver's mmap
// offsets and lengths, kernel/neuron_mmap_layout.h, evaluated with the page
// shifts of 4, 16 and 64 KiB kernels. neuron_mmap.c uses the same macros
// with PAGE_SHIFT; there is no 16 KiB machine here, so this is how a 16 KiB
// kernel is checked. Expected values are worked out by hand.
#include <gtest/gtest.h>

#include <sys/ioctl.h>

#include <cstdint>

#include "uapi/linux/neuron.h"
#include "neuron/regs.h"
#include "../../kernel/neuron_mmap_layout.h"

namespace {

// The same checks as neuron_mmap()'s BUILD_BUG_ONs, for each page shift.
constexpr bool status_offset_fits(unsigned shift) {
  return NEURON_STATUS_PAGE_OFFSET % (1ULL << shift) == 0 &&
         NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(shift)) != NEURON_LAYOUT_RING &&
         NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(shift)) != NEURON_LAYOUT_DOORBELL;
}
static_assert(status_offset_fits(12) && status_offset_fits(14) && status_offset_fits(16));

TEST(PageSize, FourKiB) {
  // 0x3000000000 >> 12 = 0x3000000: type 3
  EXPECT_EQ(NEURON_LAYOUT_STATUS_PGOFF(12), 0x3000000ULL);
  EXPECT_EQ(NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(12)), 3ULL);
  EXPECT_EQ(NEURON_LAYOUT_DOORBELL_SIZE(12), 4096UL);
  // ring core 1 queue 2: ((1 << 24) | (1 << 16) | (2 << 8)) << 12
  EXPECT_EQ(NEURON_LAYOUT_COOKIE(1, 1, 2, 12), 0x1010200000ULL);
  EXPECT_EQ(NEURON_LAYOUT_RING_BYTES(64, 12), 4096UL);
  EXPECT_EQ(NEURON_LAYOUT_RING_BYTES(1u << 20, 12), 1UL << 20);
  // 1 MiB = 256 pages: the largest page index, 255, fits the 8-bit field
  EXPECT_EQ((NEURON_LAYOUT_RING_BYTES(NEURON_NQ_SIZE_MAX, 12) >> 12) - 1, 0xffUL);
  // the zap range [1 << 36, 3 << 36) ends where the status page begins
  EXPECT_EQ(NEURON_LAYOUT_COOKIE(1, 0, 0, 12), 1ULL << 36);
  EXPECT_EQ(NEURON_LAYOUT_ZAP_END(12), 3ULL << 36);
  EXPECT_LE(NEURON_LAYOUT_ZAP_END(12), NEURON_STATUS_PAGE_OFFSET);
  // the first release's constant is the 4 KiB value
  EXPECT_EQ(NEURON_STATUS_PAGE_SIZE, 4096);
}

TEST(PageSize, SixteenKiB) {
  // 3 << 36 >> 14 = 3 << 22 = 0xC00000: type 0 (core field 0xC0), neither a
  // ring (1) nor a doorbell (2)
  EXPECT_EQ(NEURON_LAYOUT_STATUS_PGOFF(14), 0xC00000ULL);
  EXPECT_EQ(NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(14)), 0ULL);
  // a 16 KiB page at a doorbell would show 4 doorbells: not mappable
  EXPECT_EQ(NEURON_LAYOUT_DOORBELL_SIZE(14), 0UL);
  // the status page offset is the same bytes, 16 KiB-aligned
  EXPECT_EQ(NEURON_STATUS_PAGE_OFFSET % 16384, 0ULL);
  // ring core 1 queue 2: 0x1010200 << 14
  EXPECT_EQ(NEURON_LAYOUT_COOKIE(1, 1, 2, 14), 0x4040800000ULL);
  EXPECT_EQ(NEURON_LAYOUT_RING_BYTES(64, 14), 16384UL);
  EXPECT_EQ(NEURON_LAYOUT_RING_BYTES(4096, 14), 16384UL);
  // 1 MiB = 64 pages of 16 KiB
  EXPECT_EQ(NEURON_LAYOUT_RING_BYTES(NEURON_NQ_SIZE_MAX, 14) >> 14, 64UL);
  // the zap range [1 << 38, 3 << 38) leaves the status page (3 << 36) out
  EXPECT_EQ(NEURON_LAYOUT_COOKIE(1, 0, 0, 14), 1ULL << 38);
  EXPECT_EQ(NEURON_LAYOUT_ZAP_END(14), 3ULL << 38);
  EXPECT_LT(NEURON_STATUS_PAGE_OFFSET, NEURON_LAYOUT_COOKIE(1, 0, 0, 14));
}

TEST(PageSize, SixtyFourKiB) {
  // 0x3000000000 >> 16 = 0x300000: type 0 (core field 0x30): no ring, no doorbell
  EXPECT_EQ(NEURON_LAYOUT_STATUS_PGOFF(16), 0x300000ULL);
  EXPECT_EQ(NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(16)), 0ULL);
  EXPECT_EQ(NEURON_LAYOUT_DOORBELL_SIZE(16), 0UL);
  EXPECT_EQ(NEURON_LAYOUT_RING_BYTES(NEURON_NQ_SIZE_MAX, 16) >> 16, 16UL);
  EXPECT_LT(NEURON_STATUS_PAGE_OFFSET, NEURON_LAYOUT_COOKIE(1, 0, 0, 16));
}

// The doorbells of one core are NEURON_DOORBELL_SIZE apart from +0x1000:
// a page of 1 << shift at queue q's doorbell holds another register unless
// the page is 4 KiB. Worked for 16 KiB: queue 0's doorbell at core base +
// 0x1000 lies in the page [0x0, 0x4000), which also holds the NOTIFIC
// registers (+0x0) and the doorbells of queues 1 and 2.
TEST(PageSize, DoorbellStride) {
  EXPECT_EQ(NEURON_DOORBELL(0), 0x1000u);
  EXPECT_EQ(NEURON_DOORBELL(1) - NEURON_DOORBELL(0), 0x1000u);
  EXPECT_EQ(NEURON_DOORBELL_SIZE, 0x1000u);
  const unsigned page16 = 16384;
  EXPECT_EQ(NEURON_DOORBELL(0) / page16, NEURON_DOORBELL(2) / page16);  // same 16 KiB page
  EXPECT_EQ(NEURON_DOORBELL(0) / 4096 + 1, NEURON_DOORBELL(1) / 4096);  // own 4 KiB page
}

// What NEURON_IOC_NQ_HEAD carries: 24 bytes, the first release's size.
TEST(PageSize, NqHeadStruct) {
  EXPECT_EQ(sizeof(neuron_nq_head), 24u);
  EXPECT_EQ(NEURON_NQ_HEAD_SIZE_VER0, 24);
  EXPECT_EQ(_IOC_NR(NEURON_IOC_NQ_HEAD), 0x14u);
  EXPECT_EQ(sizeof(neuron_device_info), 80u);  // page_size, doorbell_size took reserved[0]
}

}  // namespace
