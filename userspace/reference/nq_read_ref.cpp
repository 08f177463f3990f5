// SPDX-License-Identifier: MIT
#include "nq_read_ref.hpp"

#include <cstring>

namespace neuron::reference {

std::uint32_t nq_available_count(EnsNq* nq) {
  const std::uint32_t tail = *nq->tail;
  const std::uint32_t avail = tail - nq->head;  // free-running counts
  if (avail > nq->entries) {
    nq->bad_ring = true;
    return 0;
  }
  return avail;
}

std::size_t nq_read_cayman(EnsNq* nq, void* out_buf, std::uint32_t cap_bytes, std::uint32_t* consumed) {
  *consumed = 0;
  if (cap_bytes <= 0xf) return 0;  // need at least one 16-byte record

  const std::uint32_t avail = nq_available_count(nq);
  const std::uint32_t n = avail < (cap_bytes >> 4) ? avail : (cap_bytes >> 4);

  const std::uint8_t* base = nq->base;
  auto* out = static_cast<std::uint8_t*>(out_buf);
  const std::uint32_t mask = nq->entries - 1;
  for (std::uint32_t i = 0; i < n; i++) {
    const std::uint32_t head = nq->head;
    if (nq->needs_flush) nq->flush_cb(nq->flush_ctx);
    std::memcpy(out, base + (static_cast<std::size_t>(head & mask) << 4), 16);
    nq->head = head + 1;  // per-record consumer advance
    out += 16;
  }
  *consumed = n << 4;
  return n;
}

}  // namespace neuron::reference
