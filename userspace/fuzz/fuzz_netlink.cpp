// SPDX-License-Identifier: MIT
//
// Fuzz target: the generic netlink parsers of libneuron (src/netlink.cpp):
// parse_event_message, parse_device_message, parse_nq_message,
// parse_family_message, parse_ack_message and parse_done_message, each on
// the same message (libneuron/netlink.hpp: "never a read past the message").
// Input: byte 0 is a mode, the rest one netlink message. Mode bit 0 sets
// nlmsg_len to the message's size; bit 1 sets the genetlink command to one
// of GET_DEVICE, GET_NQ, EVENT, CTRL_CMD_NEWFAMILY (bits 2..3), so the
// mutations get past the header checks quickly. The message sits right
// before an inaccessible page (guarded_buffer.hpp). Invariants, beyond no
// crash and no sanitizer report:
//   - a refused message is errc::bad_message whose text names the command;
//   - a family reply's groups each have a name;
//   - an ACK or a DONE is success, or an error whose text starts with the
//     caller's words; every attribute type has a name.
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "check.hpp"
#include "guarded_buffer.hpp"
#include "libneuron/netlink.hpp"

namespace {

template <class R>
void check_refusal(const R& r, const char* what) {
  if (r) return;
  FUZZ_CHECK(r.error().code == neuron::make_error_code(neuron::errc::bad_message), "{}: {}", what,
             r.error().message());
  FUZZ_CHECK(r.error().what.rfind(what, 0) == 0, "{}: '{}'", what, r.error().what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  GuardedBuffer buf({data + 1, size - 1});
  const auto msg = buf.bytes();
  if ((mode & 1) && msg.size() >= sizeof(nlmsghdr)) {
    const auto len = static_cast<std::uint32_t>(msg.size());
    std::memcpy(msg.data() + offsetof(nlmsghdr, nlmsg_len), &len, sizeof len);
  }
  if ((mode & 2) && msg.size() >= NLMSG_HDRLEN + GENL_HDRLEN) {
    static constexpr std::uint8_t cmds[] = {NEURON_CMD_GET_DEVICE, NEURON_CMD_GET_NQ, NEURON_CMD_EVENT,
                                            CTRL_CMD_NEWFAMILY};
    msg[NLMSG_HDRLEN + offsetof(genlmsghdr, cmd)] = cmds[(mode >> 2) & 3];
  }
  const std::span<const std::uint8_t> m(msg.data(), msg.size());

  check_refusal(neuron::parse_event_message(m), "NEURON_CMD_EVENT");
  check_refusal(neuron::parse_nq_message(m), "NEURON_CMD_GET_NQ reply");
  auto dev = neuron::parse_device_message(m);
  check_refusal(dev, "NEURON_CMD_GET_DEVICE reply");
  auto fam = neuron::parse_family_message(m);
  check_refusal(fam, "CTRL_CMD_NEWFAMILY reply");
  if (fam)
    for (const auto& [name, id] : fam->groups) FUZZ_CHECK(!name.empty(), "a group without a name, id {}", id);

  // an ACK or the end of a dump: success or an errno with the kernel's words
  auto ack = neuron::parse_ack_message(m, "request");
  if (!ack) FUZZ_CHECK(ack.error().what.rfind("request", 0) == 0, "{}", ack.error().what);
  auto done = neuron::parse_done_message(m, "dump");
  if (!done) FUZZ_CHECK(done.error().what.rfind("dump", 0) == 0, "{}", done.error().what);
  for (unsigned t = 0; t < 64; ++t) FUZZ_CHECK(!neuron::genl_attr_name(t).empty(), "attribute {}", t);
  return 0;
}
