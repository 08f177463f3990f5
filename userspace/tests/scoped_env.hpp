// SPDX-License-Identifier: MIT
//
// An environment variable set (or unset) for one test, then put back as it
// was: the variables libneuron and neuron-nq read (NEURON_RT_EXEC_TIMEOUT).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace neuron::test {

class ScopedEnv {
 public:
  /// `value` nullptr: the variable is unset for the test.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace neuron::test
