// SPDX-License-Identifier: MIT
//
// Text for decoded records (their JSON: libneuron/json.hpp). Text is one line a person can act on
// ("DGE OOB on POOL at pc 0x1a4: dst beyond the limit in $S[3]; descriptor
// skipped, engine continued"); JSON carries every field.
#pragma once

#include <cstdint>
#include <string>

#include "libneuron/decode.hpp"
#include "libneuron/program.hpp"

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// One line, no trailing newline, no timestamp (callers put time/core/queue in front).
std::string to_text(const Decoded& d);

/// The sentence for an error record (what happened, where, what to do).
std::string explain(const TpbError& e);
std::string explain(const Interrupt& e);
/// explain() with the program that ran: the source line, and for DGE errors
/// the descriptor itself: which bytes crossed which limit ("dst $S[3]+0x7ff >
/// limit: bytes 0x1000..0x17ff, limit $S[3] = 0x1000 (line 9)", after the
/// firmware's "Failed bounds check. $S[%i]+=%i"), or why a descriptor is
/// structurally invalid. `core` is the core the record came from.
std::string explain(const TpbError& e, const Program& program, unsigned core);

/// "12.345678901" seconds with ps-derived ns precision.
std::string format_time(Timestamp t);

/// Names of the tpb_notific_intr_N bits set in `cause` ("THRESHOLD|AXI_WRITE_ERROR").
std::string notific_cause_names(std::uint32_t cause);

}  // namespace neuron
NEURON_API_END
