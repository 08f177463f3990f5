// SPDX-License-Identifier: MIT
//
// FUZZ_CHECK(cond, what...): an invariant of a fuzz target. When it does not
// hold, print the condition, where, and `what` (fmt arguments), then abort(),
// which libFuzzer reports as a crash and saves the input that caused it.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, ...)                                                                        \
  do {                                                                                               \
    if (!(cond)) {                                                                                   \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d: %s\n", #cond, __FILE__, __LINE__,      \
                   fmt::format(__VA_ARGS__).c_str());                                                \
      std::abort();                                                                                  \
    }                                                                                                \
  } while (0)
