// SPDX-License-Identifier: MIT
#include <cerrno>

#include "libneuron/result.hpp"

namespace neuron {

namespace {
class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "neuron"; }
  std::string message(int ev) const override {
    switch (static_cast<errc>(ev)) {
      case errc::ok: return "success";
      case errc::invalid_argument: return "invalid argument";
      case errc::parse_error: return "program does not assemble";
      case errc::bad_ring: return "ring size is not a power of two";
      case errc::not_supported: return "not supported";
      case errc::bad_message: return "malformed netlink message";
      case errc::device_gone: return "device gone (removed or reset)";
      case errc::moved_from: return "object was moved from (it holds no device, queue or mapping)";
    }
    return "unknown neuron error";
  }
};
}  // namespace

const std::error_category& category() noexcept {
  static const Category c;
  return c;
}

std::string Error::message() const {
  if (!code) return what;
  if (what.empty()) return code.message();
  return what + ": " + code.message();
}

Error Error::from_errno(int err, std::string what) {
  return Error{std::error_code(err, std::system_category()), std::move(what)};
}

BadResultAccess::BadResultAccess(const std::string& what, Error held)
    : std::logic_error(what), held_(std::move(held)) {}
BadResultAccess::~BadResultAccess() = default;

namespace detail {
void throw_value_on_error(const Error& e) {
  throw BadResultAccess("neuron::Result::value() on an error: " + e.message(), e);
}
void throw_error_on_value() { throw BadResultAccess("neuron::Result::error() on a value", Error{}); }
}  // namespace detail

Error Error::make(std::error_code code, std::string what) { return Error{code, std::move(what)}; }

}  // namespace neuron
