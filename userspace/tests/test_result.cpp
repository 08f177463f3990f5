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
