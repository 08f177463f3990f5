// SPDX-License-Identifier: MIT
//
// The real runtime's drain, aws_hal_notific_nq_read_cayman
// (docs/hardware.md#host-drain), kept as a reference implementation for tests
// and the benchmark only (not installed, not used by the library): clear
// *consumed; fail if the cap is under one 16-byte record; clamp the count by
// the records available (head/tail math) and by cap / 16; then per record:
// optional flush callback, copy 16 bytes from base + slot * 16, store head + 1
// back into the SW mirror.
//
// Written from the reverse-engineered algorithm; the mirror keeps only the
// fields that algorithm touches (the runtime's offsets are noted, not
// reproduced).
#pragma once

#include <cstddef>
#include <cstdint>

namespace neuron::reference {

struct EnsNq {
  std::uint32_t entries = 0;                    // ring size in records (runtime: SIZE +0x00)
  std::uint32_t head = 0;                       // consumer count (runtime: HEAD +0x04)
  const std::uint8_t* base = nullptr;           // ring memory (runtime: BASE +0x28)
  const volatile std::uint32_t* tail = nullptr; // producer count (the device's TAIL)
  bool needs_flush = false;                     // runtime: +0x140
  void (*flush_cb)(void* ctx) = nullptr;        // runtime: +0x148, cache invalidate
  void* flush_ctx = nullptr;
  bool bad_ring = false;                        // where the runtime calls al_abort_program
};

/// Records available between head and tail; 0 (and bad_ring) if inconsistent.
std::uint32_t nq_available_count(EnsNq* nq);

/// Copies up to min(available, cap_bytes / 16) records to out_buf; returns the
/// number of records and stores the bytes consumed in *consumed. Returns 0
/// with *consumed = 0 when cap_bytes < 16 (the runtime's fail path).
std::size_t nq_read_cayman(EnsNq* nq, void* out_buf, std::uint32_t cap_bytes, std::uint32_t* consumed);

}  // namespace neuron::reference
