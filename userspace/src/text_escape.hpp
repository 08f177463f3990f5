// SPDX-License-Identifier: MIT
//
// The one place a string somebody else chose (a tenant's process name from
// sysfs core_owners or /proc/PID/comm, a path) is made safe for the sink it
// goes to: a terminal or log line, a Prometheus label value, a JSON document;
// and the decoder of the kernel's escaping of core_owners. Private: compiled
// into libneuron (core_owners, owner_text) and into neuron-nq's neuron_cli,
// not exported (docs/metrics.md#sources, docs/cli-json.md#strings).
//
// None of these throws for any input bytes (only std::bad_alloc); each
// returns a new string and keeps `s` as it is.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace neuron::detail {

/// `s` for text output (a terminal, a log line, an error message): printable
/// ASCII and well-formed UTF-8 as they are; a backslash as `\\`; newline,
/// tab and carriage return as `\n`, `\t`, `\r`; every other ASCII control
/// byte, DEL, each byte of a C1 control (U+0080..U+009F) and every byte
/// that is not part of well-formed UTF-8 (a stray or truncated sequence, an
/// overlong form, a surrogate, past U+10FFFF) as `\xHH` (lower-case hex).
/// The result holds no control character and no newline, so a name cannot
/// forge a line, and two different inputs never give the same text.
/// Example: the bytes ff fe 22 78 0a 30 20 31 20 39 give `\xff\xfe"x\n0 1 9`.
std::string text_escape(std::string_view s);

/// `s` with every byte that is not part of well-formed UTF-8 replaced by
/// U+FFFD (one each); the rest as it is.
std::string utf8_valid(std::string_view s);

/// `s` as a Prometheus label value (text exposition format 0.0.4, between
/// the double quotes): a backslash as `\\`, a double quote as `\"`, a
/// newline as `\n`, every byte not part of well-formed UTF-8 as U+FFFD (the
/// format's values are UTF-8; node_exporter refuses a file with one that
/// is not). Other characters as they are.
std::string prom_label_value(std::string_view s);

/// `j` as JSON text, as j.dump(indent) would write it (indent -1: one line;
/// UTF-8, not \u-escaped), except that a string (or an object key) holding
/// bytes that are not well-formed UTF-8 is written with U+FFFD in their
/// place, one per byte as utf8_valid() does, where dump() throws nlohmann's
/// type_error.316. The output is always valid UTF-8 JSON.
std::string json_text(const nlohmann::json& j, int indent = -1);

/// A field the driver escaped in sysfs core_owners (kernel/neuron_sysfs.c:
/// string_escape_mem() with ESCAPE_NAP | ESCAPE_APPEND | ESCAPE_HEX and
/// " \\", i.e. blank, backslash, control and non-ASCII bytes as `\xHH`)
/// back to its bytes: each `\x` followed by two hex digits (either case)
/// is that byte; anything else, a backslash that does not start one
/// included (a driver from before the escaping), is taken as it is.
std::string kernel_unescape(std::string_view s);

}  // namespace neuron::detail
