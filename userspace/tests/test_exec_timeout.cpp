// SPDX-License-Identifier: MIT
//
// NEURON_RT_EXEC_TIMEOUT read into the execution budget, and the line a
// TIMEOUT is reported with (src/exec_timeout.hpp; docs/hardware.md#exec-timeout,
// docs/decisions/0037-exec-timeout.md). Expected values are worked out by hand:
// seconds x 1000, and the runtime's line with our program and engines in
// its gaps. execute() applying the budget is in test_execute.cpp.
#include <gtest/gtest.h>

#include <chrono>

#include "exec_timeout.hpp"
#include "libneuron/execute.hpp"
#include "scoped_env.hpp"

using namespace std::chrono_literals;
using neuron::detail::exec_timeout_line;
using neuron::detail::parse_exec_timeout;
using neuron::detail::resolve_exec_timeout;
using neuron::test::ScopedEnv;

TEST(ExecTimeout, WholeSecondsBecomeMilliseconds) {
  EXPECT_EQ(parse_exec_timeout("1").value(), 1000ms);
  EXPECT_EQ(parse_exec_timeout("30").value(), 30000ms);
  EXPECT_EQ(parse_exec_timeout("007").value(), 7000ms);  // decimal, as every number we read
  EXPECT_EQ(parse_exec_timeout("2147483647").value(), std::chrono::milliseconds(2147483647000));
}

TEST(ExecTimeout, ZeroIsNoLimit) {
  EXPECT_EQ(parse_exec_timeout("0").value(), std::chrono::milliseconds::max());
}

TEST(ExecTimeout, AnythingButWholeSecondsIsRefusedNamingTheVariable) {
  for (const char* bad : {"", "-1", "+5", "1.5", "5s", " 5", "5 ", "0x10", "2147483648", "99999999999"}) {
    auto r = parse_exec_timeout(bad);
    ASSERT_FALSE(r) << "'" << bad << "'";
    EXPECT_EQ(r.error().code, neuron::errc::invalid_argument);
  }
  EXPECT_EQ(parse_exec_timeout("1.5").error().what,
            "NEURON_RT_EXEC_TIMEOUT='1.5': not a whole number of seconds from 0 to 2147483647 (0: no limit)");
  EXPECT_EQ(parse_exec_timeout("").error().what,
            "NEURON_RT_EXEC_TIMEOUT='': not a whole number of seconds from 0 to 2147483647 (0: no limit)");
}

TEST(ExecTimeout, UnsetIsFiveSeconds) {
  ScopedEnv env("NEURON_RT_EXEC_TIMEOUT", nullptr);
  EXPECT_EQ(resolve_exec_timeout(neuron::kExecTimeoutFromEnv).value(), 5000ms);
}

TEST(ExecTimeout, TheVariableIsReadWhenNoBudgetIsGiven) {
  ScopedEnv env("NEURON_RT_EXEC_TIMEOUT", "12");
  EXPECT_EQ(resolve_exec_timeout(neuron::kExecTimeoutFromEnv).value(), 12000ms);
}

TEST(ExecTimeout, AnInvalidVariableIsAnErrorNamingIt) {
  ScopedEnv env("NEURON_RT_EXEC_TIMEOUT", "ten");
  auto r = resolve_exec_timeout(neuron::kExecTimeoutFromEnv);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().what,
            "NEURON_RT_EXEC_TIMEOUT='ten': not a whole number of seconds from 0 to 2147483647 (0: no limit)");
}

TEST(ExecTimeout, AGivenBudgetWinsAndTheVariableIsNotRead) {
  ScopedEnv env("NEURON_RT_EXEC_TIMEOUT", "ten");  // would be an error if read
  EXPECT_EQ(resolve_exec_timeout(250ms).value(), 250ms);
}

TEST(ExecTimeout, TheLineHasTheRuntimesShape) {
  EXPECT_EQ(exec_timeout_line("hang.nq", 30000ms, "core 0 PE, core 1 ACT"),
            "(FATAL-RT-UNDEFINED-STATE) hang.nq: execution timeout (30000 ms) on core 0 PE, core 1 ACT: waiting for "
            "execution completion notification");
}
