// SPDX-License-Identifier: MIT
//
// Strings other people chose, made safe for each sink (text_escape.hpp).
#include "text_escape.hpp"

#include <cstddef>
#include <cstdint>

namespace neuron::detail {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD in UTF-8

/// The length (1..4) of the well-formed UTF-8 sequence that starts at s[i]
/// (Unicode 15, table 3-7: no overlong form, no surrogate, nothing past
/// U+10FFFF), 0 when s[i] does not start one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  const std::uint8_t b = at(i);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  std::uint8_t lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (b >= 0xc2 && b <= 0xdf) n = 2;
  else if (b == 0xe0) n = 3, lo = 0xa0;
  else if (b == 0xed) n = 3, hi = 0x9f;
  else if (b >= 0xe1 && b <= 0xef) n = 3;
  else if (b == 0xf0) n = 4, lo = 0x90;
  else if (b == 0xf4) n = 4, hi = 0x8f;
  else if (b >= 0xf1 && b <= 0xf3) n = 4;
  else return 0;
  if (s.size() - i < n) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  return n;
}

void hex_byte(std::string& out, char c) {
  const auto b = static_cast<std::uint8_t>(c);
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string text_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto b = static_cast<std::uint8_t>(c);
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (b < 0x20 || b == 0x7f) hex_byte(out, c);
    else if (b < 0x80) out += c;
    else if (const std::size_t n = utf8_length(s, i); n == 0) {
      hex_byte(out, c);  // not UTF-8: the byte itself
    } else {
      // C1 controls (U+0080..U+009F: c2 80..c2 9f) as their two bytes
      const bool c1 = b == 0xc2 && static_cast<std::uint8_t>(s[i + 1]) <= 0x9f;
      for (std::size_t k = 0; k < n; ++k) {
        if (c1) hex_byte(out, s[i + k]);
        else out += s[i + k];
      }
      i += n;
      continue;
    }
    ++i;
  }
  return out;
}

std::string utf8_valid(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string prom_label_value(std::string_view s) {
  std::string out;
  for (char c : utf8_valid(s)) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

/// `j` with every string, object keys included, through utf8_valid().
nlohmann::json utf8_copy(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::string:
      return utf8_valid(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::object: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& [k, v] : j.items()) o[utf8_valid(k)] = utf8_copy(v);
      return o;
    }
    case nlohmann::json::value_t::array: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& v : j) a.push_back(utf8_copy(v));
      return a;
    }
    default:
      return j;
  }
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
  try {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::type_error&) {
    // a string that is not UTF-8 (type_error.316): each bad byte as one
    // U+FFFD, as utf8_valid() and the Prometheus label do (nlohmann's
    // error_handler_t::replace writes one for a whole bad sequence)
    return utf8_copy(j).dump(indent, ' ', false, nlohmann::json::error_handler_t::strict);
  }
}

std::string kernel_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && s.size() - i >= 4 && s[i + 1] == 'x') {
      const int hi = hex_digit(s[i + 2]), lo = hex_digit(s[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi << 4 | lo);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace neuron::detail
