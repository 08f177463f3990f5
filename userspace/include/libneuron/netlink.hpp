// SPDX-License-Identifier: MIT
//
// EventMonitor: the generic netlink family "neuron" (include/uapi/linux/
// neuron.h) through libmnl. It resolves the family by name
// (CTRL_CMD_GETFAMILY), joins the "events" multicast group, parses
// NEURON_CMD_EVENT messages, and asks for NEURON_CMD_GET_DEVICE and
// NEURON_CMD_GET_NQ dumps.
//
// Every attribute is validated before it is read (mnl_attr_validate against
// the type the UAPI gives it): a wrong size, a truncated attribute, a
// message shorter than its headers, a missing required attribute or a wrong
// command is an errc::bad_message Error naming the attribute — never a read
// past the message. Attribute types this library does not know (a newer
// driver) are skipped. NEURON_A_PAD (the u64 alignment pad) is ignored.
//
// Two sockets, both RAII: one joined to "events" (non-blocking, for poll/epoll),
// one for requests, so dump replies and multicast events never interleave.
// Requests ask for extended acks: an error reply's message ("NEURON_A_DEVICE
// is required") ends up in Error::what.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libneuron/result.hpp"
#include "uapi/linux/neuron_record.h"
#include "uapi/linux/neuron.h"

struct mnl_socket;

#include "libneuron/export.hpp"

NEURON_API_BEGIN
namespace neuron {

/// NEURON_CMD_EVENT: one interrupt edge (the fields of struct neuron_event).
struct NetlinkEvent {
  std::uint32_t device = 0;
  std::uint32_t core = 0;
  std::uint32_t edge = 0;    ///< enum neuron_edge
  std::uint32_t cause = 0;   ///< NOTIFIC: tpb_notific_intr bits
  std::uint32_t queues = 0;  ///< NOTIFIC: bit per queue whose THRESHOLD was reached
  std::uint32_t wrbuf_full = 0;  ///< NOTIFIC: bit N per wr_buffer_full_N edge (docs/device-model.md#wrbuf)
  std::uint32_t wrbuf_drop = 0;  ///< NOTIFIC: bit N per wr_buffer_drop_N edge
  std::uint32_t suppressed = 0;  ///< THROTTLE, FAULT: edges the rate limit kept back before this one
  std::uint32_t pc = 0;          ///< HANG: the hung engine's program counter
  std::uint64_t count = 0;   ///< edges of this (core, edge) since probe
  std::uint64_t timestamp_ns = 0;  ///< CLOCK_MONOTONIC
};

/// One NEURON_A_INTR_COUNTS nest: a core's edge count per tpb_notific_intr bit.
struct CoreIntrCounts {
  std::uint32_t core = 0;
  std::array<std::uint64_t, NEURON_NOTIFIC_INTR_BITS> counts{};
};

/// NEURON_CMD_GET_DEVICE reply.
struct GenlDevice {
  std::uint32_t device = 0;
  std::uint16_t pci_vendor = 0;
  std::uint16_t pci_device = 0;
  std::uint32_t num_cores = 0;
  std::uint32_t gen = 0;
  std::uint64_t mem_size = 0;
  std::vector<CoreIntrCounts> cores;
  std::uint64_t throttle_count = 0;
  std::uint64_t fault_count = 0;
};

/// NEURON_CMD_GET_NQ dump entry: one live queue.
struct GenlNq {
  std::uint32_t device = 0;
  std::uint32_t core = 0;
  std::uint32_t queue = 0;
  std::uint32_t head = 0;  ///< free-running record counts
  std::uint32_t tail = 0;
  std::uint8_t phase = 0;
  std::uint32_t size = 0;
  std::uint32_t flags = 0;
  std::uint64_t overflow_count = 0;
  std::uint64_t drop_count = 0;
  std::uint64_t threshold_count = 0;  ///< threshold interrupts of the queue
};

/// CTRL_CMD_GETFAMILY reply: the family's id, version and multicast groups.
struct GenlFamily {
  std::uint16_t id = 0;
  std::string name;
  std::uint32_t version = 0;
  std::map<std::string, std::uint32_t> groups;
};

/// "NEURON_A_CORE" etc.; "attribute 42" beyond the UAPI.
std::string genl_attr_name(unsigned type);

// Parsers of one complete netlink message (nlmsghdr, genlmsghdr, attributes),
// public for tests. They check the lengths, the genl command, every
// attribute's size, and the required attributes.
Result<NetlinkEvent> parse_event_message(std::span<const std::uint8_t> msg);
Result<GenlDevice> parse_device_message(std::span<const std::uint8_t> msg);
Result<GenlNq> parse_nq_message(std::span<const std::uint8_t> msg);
Result<GenlFamily> parse_family_message(std::span<const std::uint8_t> msg);
/// An NLMSG_ERROR message: success for an ACK (error 0), otherwise the errno
/// with the extended ack's message and offending attribute offset, if sent.
Status parse_ack_message(std::span<const std::uint8_t> msg, const std::string& what);
/// NLMSG_DONE: success, or the error a failed dump put in it (with extended
/// ack). A message shorter than a netlink header, or than its nlmsg_len
/// says, is errc::bad_message.
Status parse_done_message(std::span<const std::uint8_t> msg, const std::string& what);

class EventMonitor {
 public:
  /// Resolve "neuron"; with join_events, also join its "events" group.
  /// ENOENT (with a hint) when the family is not registered (module not loaded).
  static Result<EventMonitor> open(bool join_events = true);

  EventMonitor(EventMonitor&&) noexcept;
  EventMonitor& operator=(EventMonitor&&) noexcept;
  ~EventMonitor();

  /// The events socket (non-blocking), for poll/epoll; -1 if not joined.
  [[nodiscard]] int fd() const noexcept;
  /// Wait up to `timeout` (0: do not wait; negative: no limit) for events,
  /// then append everything pending to `out`. Returns how many were added.
  /// Malformed messages are skipped and counted (malformed()); a socket
  /// overrun (ENOBUFS: events were lost) is counted in overruns().
  Result<std::size_t> receive(std::vector<NetlinkEvent>& out, std::chrono::milliseconds timeout);

  /// NEURON_CMD_GET_DEVICE: `do` for one device, dump of all without one.
  Result<std::vector<GenlDevice>> get_device(std::optional<std::uint32_t> device = std::nullopt);
  /// NEURON_CMD_GET_NQ dump, optionally for one device.
  Result<std::vector<GenlNq>> get_nq(std::optional<std::uint32_t> device = std::nullopt);

  [[nodiscard]] const GenlFamily& family() const noexcept { return family_; }
  [[nodiscard]] std::uint64_t malformed() const noexcept { return malformed_; }
  [[nodiscard]] std::uint64_t overruns() const noexcept { return overruns_; }
  /// The last malformed message's error, for diagnostics.
  [[nodiscard]] const std::optional<Error>& last_malformed() const noexcept { return last_malformed_; }

 private:
  struct SocketCloser {
    void operator()(mnl_socket* s) const noexcept;
  };
  using Socket = std::unique_ptr<mnl_socket, SocketCloser>;
  EventMonitor() = default;
  template <class T>
  Result<std::vector<T>> request(std::uint8_t cmd, std::optional<std::uint32_t> device, bool dump,
                                 Result<T> (*parse)(std::span<const std::uint8_t>), const std::string& what);

  Socket req_;
  Socket ev_;
  GenlFamily family_;
  std::uint32_t seq_ = 0;
  std::uint64_t malformed_ = 0;
  std::uint64_t overruns_ = 0;
  std::optional<Error> last_malformed_;
};

}  // namespace neuron
NEURON_API_END
