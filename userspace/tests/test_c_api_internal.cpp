// SPDX-License-Identifier: MIT
//
// The C API's drain on a queue made from memory (NotificationQueue::over),
// which the public C API cannot make: this file compiles src/c_api.cpp
// itself (its own executable, so the copy interposes on no other test) and
// builds a libneuron_queue around such a queue.
//
// Issue 25 item 4: a drain that copies records and then learns the device
// went (a lossy queue's lap check: NQ_INFO fails with ENODEV) returns the
// records first; the next call reports -ENODEV.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "../src/c_api.cpp"  // NOLINT: the unit under test, with its private struct
#include "device_access.hpp"

namespace {

void no_doorbell(void*, std::uint32_t) noexcept {}

}  // namespace

TEST(CApiInternal, RecordsDrainedWithTheDeviceLossComeFirst) {
  // a lossy ring of 8 with records 0..3; record 1 carries
  // software_queue_overflow, which makes the drain read TAIL (NQ_INFO)
  std::vector<neuron::Record> ring(8);
  for (std::uint32_t i = 0; i < 4; ++i) {
    ring[i].bytes[3] = static_cast<std::uint8_t>(0x06 | 0x80 | (i == 1 ? NEURON_ISA_HEADER_SW_OVF : 0));
    ring[i].bytes[8] = static_cast<std::uint8_t>(0x40 + i);
  }
  auto nq = neuron::NotificationQueue::over(
      std::span<const neuron::Record>(ring.data(), ring.size()), neuron::Doorbell::callback(&no_doorbell, nullptr),
      []() -> neuron::Result<neuron::NqInfo> {
        return neuron::unexpected(neuron::Error::from_errno(ENODEV, "NEURON_IOC_NQ_INFO (removed)"));
      },
      0, 1, NEURON_NQ_F_IGNORE_FULL);
  ASSERT_TRUE(nq) << nq.error().message();
  libneuron_queue q{std::move(nq).value()};
  q.buf.resize(8);
  libneuron_record out[8]{};
  std::uint64_t lost = 99;
  EXPECT_EQ(libneuron_queue_drain(&q, out, 8, &lost), 4) << libneuron_last_error();
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(out[0].bytes[8], 0x40);
  EXPECT_EQ(out[3].bytes[8], 0x43);
  EXPECT_EQ(libneuron_queue_drain(&q, out, 8, &lost), -ENODEV);
  EXPECT_EQ(std::string(libneuron_last_error()), "libneuron_queue_drain: device gone (removed or reset)");
}

// The calls' own errors on a libneuron_device over a file that is not a node
// of the driver (libneuron_device_open() refuses /dev/null: test_api.cpp):
// the ring size is checked before any ioctl, NQ_INIT reaches the file and
// its ENOTTY comes back naming the call, a count of 0 is refused.
TEST(CApiInternal, CallsOnAFileThatIsNotANodeSayWhatWasAsked) {
  auto d = neuron::test::DeviceAccess::open_any("/dev/null");
  ASSERT_TRUE(d) << d.error().message();
  libneuron_device* dev = std::make_unique<libneuron_device>(std::move(d).value()).release();  // closed below
  libneuron_queue* q = nullptr;
  EXPECT_EQ(libneuron_queue_create(dev, 0, 1, 1000, 0, &q), -EINVAL);
  EXPECT_NE(std::string(libneuron_last_error()).find("size 1000 bytes is not a power of two"), std::string::npos)
      << libneuron_last_error();
  EXPECT_EQ(libneuron_queue_create(dev, 0, 1, 4096, 0, &q), -ENOTTY);  // NQ_INIT reached /dev/null
  EXPECT_NE(std::string(libneuron_last_error()).find("NEURON_IOC_NQ_INIT core=0 queue=1 size=4096"),
            std::string::npos)
      << libneuron_last_error();
  EXPECT_EQ(q, nullptr);
  neuron_emu_insn insn{};
  EXPECT_EQ(libneuron_device_submit(dev, 0, 0, &insn, 0, 0), -EINVAL);
  EXPECT_STREQ(libneuron_last_error(), "libneuron_device_submit: count is 0");
  libneuron_device_close(dev);
}
