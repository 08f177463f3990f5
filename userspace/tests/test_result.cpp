// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cerrno>

#include "libneuron/result.hpp"

using namespace neuron;

TEST(Result, ValueAndError) {
  Result<int> ok = 5;
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 5);
  Result<int> bad = unexpected(Error::from_errno(EBUSY, "NEURON_IOC_NQ_INIT core=0 queue=3"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, std::errc::device_or_resource_busy);
  EXPECT_EQ(bad.error().message().rfind("NEURON_IOC_NQ_INIT core=0 queue=3: ", 0), 0u) << bad.error().message();
}

TEST(Result, VoidStatus) {
  Status s;
  EXPECT_TRUE(s);
  Status f = unexpected(errc::parse_error, "x.nq:1: bad");
  EXPECT_FALSE(f);
  EXPECT_EQ(f.error().code, make_error_code(errc::parse_error));
  EXPECT_EQ(f.error().code.category().name(), std::string("neuron"));
}

TEST(Result, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(3);
  ASSERT_TRUE(r);
  auto p = std::move(r).value();
  EXPECT_EQ(*p, 3);
}

// errc's values are ABI (userspace/README.md#versions): abidiff does not see
// them (no exported function takes an errc), so they are pinned here; a
// renumbering is a SONAME bump.
static_assert(static_cast<int>(errc::invalid_argument) == 1 && static_cast<int>(errc::parse_error) == 2 &&
                  static_cast<int>(errc::bad_ring) == 3 && static_cast<int>(errc::not_supported) == 4 &&
                  static_cast<int>(errc::bad_message) == 5 && static_cast<int>(errc::device_gone) == 6 &&
                  static_cast<int>(errc::moved_from) == 7,
              "errc renumbered: an ABI break (userspace/README.md#versions)");
