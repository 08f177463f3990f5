// SPDX-License-Identifier: MIT
//
// Errors as values. g++ 12's C++20 has no std::expected, so libneuron uses a
// small Result<T>: either a T or an Error. Nothing on the drain path throws;
// functions that can fail return Result<T> (or Status = Result<void>).
//
// Misuse is reported in every build type, not only under assert():
// value() (and *, ->) of a Result that holds an Error, and error() of one
// that holds a value, throw neuron::BadResultAccess (userspace/README.md#api-contract).
#pragma once

#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// What went wrong (an errno-style std::error_code) and what was asked
/// ("NEURON_IOC_NQ_INIT core=0 queue=3 size=4096").
struct Error {
  std::error_code code;
  std::string what;

  /// "NEURON_IOC_NQ_INIT core=0 queue=3 size=4096: Device or resource busy"
  [[nodiscard]] std::string message() const;

  /// An Error from errno (captured by the caller right after the failing call).
  static Error from_errno(int err, std::string what);
  /// An Error with a library error code (see errc below).
  static Error make(std::error_code code, std::string what);
};

/// Library error codes that are not an errno.
enum class errc {
  ok = 0,
  invalid_argument = 1,  // a bad value passed to the library
  parse_error = 2,       // the assembler rejected a program
  bad_ring = 3,          // ring memory is not a power-of-two number of records
  not_supported = 4,     // the device or driver lacks a feature
  bad_message = 5,       // a netlink message failed validation
  device_gone = 6,       // DEVICE_GONE: the device was removed or reset under the
                         // library; its queues and mappings are gone
                         // (docs/decisions/0027-device-loss.md)
  moved_from = 7,        // a call on a moved-from (or default) object: it holds nothing
};
const std::error_category& category() noexcept;
inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// Thrown by Result<T>::value() (and operator*, operator->) when the Result
/// holds an Error, and by error() when it holds a value: a programming error
/// (check has_value() first), reported in release builds too. what() is
/// "neuron::Result::value() on an error: " followed by Error::message(), or
/// "neuron::Result::error() on a value"; error() is the Error the Result held
/// (an empty Error for the second case).
class BadResultAccess : public std::logic_error {
 public:
  BadResultAccess(const std::string& what, Error held);
  ~BadResultAccess() override;
  [[nodiscard]] const Error& error() const noexcept { return held_; }

 private:
  Error held_;
};

namespace detail {
[[noreturn]] void throw_value_on_error(const Error& e);
[[noreturn]] void throw_error_on_value();
}  // namespace detail

/// Marks an error when constructing a Result (like std::unexpected).
struct Unexpected {
  Error error;
};
inline Unexpected unexpected(Error e) { return Unexpected{std::move(e)}; }
inline Unexpected unexpected(std::error_code code, std::string what) {
  return Unexpected{Error::make(code, std::move(what))};
}

template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  template <class U = T, class = std::enable_if_t<std::is_constructible_v<T, U&&>>>
  Result(U&& value) : v_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.error)) {}    // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; throws BadResultAccess if the Result holds an Error.
  T& value() & { check(); return *std::get_if<0>(&v_); }
  const T& value() const& { check(); return *std::get_if<0>(&v_); }
  T&& value() && { check(); return std::move(*std::get_if<0>(&v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  /// The Error; throws BadResultAccess if the Result holds a value.
  [[nodiscard]] const Error& error() const& {
    if (has_value()) detail::throw_error_on_value();
    return *std::get_if<1>(&v_);
  }
  [[nodiscard]] Error&& error() && {
    if (has_value()) detail::throw_error_on_value();
    return std::move(*std::get_if<1>(&v_));
  }

 private:
  void check() const {
    if (!has_value()) detail::throw_value_on_error(*std::get_if<1>(&v_));
  }
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected u) : err_(std::move(u.error)), ok_(false) {}  // NOLINT
  [[nodiscard]] bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  /// Throws BadResultAccess if the Result holds an Error (there is no value).
  void value() const {
    if (!ok_) detail::throw_value_on_error(err_);
  }
  /// The Error; throws BadResultAccess if the Status is OK.
  [[nodiscard]] const Error& error() const& {
    if (ok_) detail::throw_error_on_value();
    return err_;
  }
  [[nodiscard]] Error&& error() && {
    if (ok_) detail::throw_error_on_value();
    return std::move(err_);
  }

 private:
  Error err_{};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace neuron
NEURON_API_END

template <>
struct std::is_error_code_enum<neuron::errc> : std::true_type {};
