// SPDX-License-Identifier: MIT
//
// utf8::valid(): whether bytes are well-formed UTF-8 (Unicode 15, table 3-7:
// no overlong form, no surrogate, nothing past U+10FFFF). Written apart from
// src/text_escape.cpp on purpose: the fuzz targets judge that code with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace utf8 {

/// True when every byte of `s` belongs to a well-formed UTF-8 sequence.
inline bool valid(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<std::uint8_t>(s[i]);
    std::uint32_t cp;
    std::size_t n;
    if (b0 < 0x80) {
      ++i;
      continue;
    } else if ((b0 & 0xe0) == 0xc0) {
      n = 2, cp = b0 & 0x1fu;
    } else if ((b0 & 0xf0) == 0xe0) {
      n = 3, cp = b0 & 0x0fu;
    } else if ((b0 & 0xf8) == 0xf0) {
      n = 4, cp = b0 & 0x07u;
    } else {
      return false;
    }
    if (s.size() - i < n) return false;
    for (std::size_t k = 1; k < n; ++k) {
      const auto b = static_cast<std::uint8_t>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = cp << 6 | (b & 0x3fu);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

}  // namespace utf8
