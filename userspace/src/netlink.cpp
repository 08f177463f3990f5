// SPDX-License-Identifier: MIT
#include "libneuron/netlink.hpp"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include <fmt/format.h>

namespace neuron {

namespace {

// ------------------------------------------------------------------ attribute types
constexpr const char* kAttrNames[] = {
    "NEURON_A_UNSPEC",        "NEURON_A_PAD",          "NEURON_A_DEVICE",       "NEURON_A_PCI_VENDOR",
    "NEURON_A_PCI_DEVICE",    "NEURON_A_NUM_CORES",    "NEURON_A_GEN",          "NEURON_A_MEM_SIZE",
    "NEURON_A_CORE",          "NEURON_A_QUEUE",        "NEURON_A_HEAD",         "NEURON_A_TAIL",
    "NEURON_A_PHASE",         "NEURON_A_SIZE",         "NEURON_A_FLAGS",        "NEURON_A_OVERFLOW_COUNT",
    "NEURON_A_DROP_COUNT",    "NEURON_A_THRESHOLD_COUNT", "NEURON_A_EDGE",      "NEURON_A_CAUSE",
    "NEURON_A_QUEUES",        "NEURON_A_COUNT",        "NEURON_A_TIMESTAMP",    "NEURON_A_INTR_COUNTS",
    "NEURON_A_THROTTLE_COUNT", "NEURON_A_FAULT_COUNT", "NEURON_A_WRBUF_FULL", "NEURON_A_WRBUF_DROP",
    "NEURON_A_SUPPRESSED",    "NEURON_A_PC",
};
static_assert(sizeof(kAttrNames) / sizeof(kAttrNames[0]) == NEURON_A_MAX + 1, "a name per attribute");

/// The type the UAPI gives each attribute (include/uapi/linux/neuron.h).
mnl_attr_data_type attr_type(unsigned type) noexcept {
  switch (type) {
    case NEURON_A_PHASE: return MNL_TYPE_U8;
    case NEURON_A_PCI_VENDOR:
    case NEURON_A_PCI_DEVICE: return MNL_TYPE_U16;
    case NEURON_A_DEVICE: case NEURON_A_NUM_CORES: case NEURON_A_GEN: case NEURON_A_CORE: case NEURON_A_QUEUE:
    case NEURON_A_HEAD: case NEURON_A_TAIL: case NEURON_A_SIZE: case NEURON_A_FLAGS: case NEURON_A_EDGE:
    case NEURON_A_CAUSE: case NEURON_A_QUEUES: case NEURON_A_WRBUF_FULL: case NEURON_A_WRBUF_DROP:
    case NEURON_A_SUPPRESSED: case NEURON_A_PC:
      return MNL_TYPE_U32;
    case NEURON_A_MEM_SIZE: case NEURON_A_OVERFLOW_COUNT: case NEURON_A_DROP_COUNT: case NEURON_A_THRESHOLD_COUNT:
    case NEURON_A_COUNT: case NEURON_A_TIMESTAMP: case NEURON_A_THROTTLE_COUNT: case NEURON_A_FAULT_COUNT:
      return MNL_TYPE_U64;
    case NEURON_A_INTR_COUNTS: return MNL_TYPE_NESTED;
    default: return MNL_TYPE_UNSPEC;  // PAD, UNSPEC: ignored
  }
}

const char* type_desc(mnl_attr_data_type t) noexcept {
  switch (t) {
    case MNL_TYPE_U8: return "u8 (1 byte)";
    case MNL_TYPE_U16: return "u16 (2 bytes)";
    case MNL_TYPE_U32: return "u32 (4 bytes)";
    case MNL_TYPE_U64: return "u64 (8 bytes)";
    case MNL_TYPE_NESTED: return "nested attributes";
    case MNL_TYPE_NUL_STRING: return "a NUL-terminated string";
    default: return "?";
  }
}

Unexpected bad(const std::string& what, const std::string& why) {
  return unexpected(errc::bad_message, what + ": " + why);
}

/// Walk the attributes in [first, tail): fn(const nlattr*) -> Status for each.
/// A truncated attribute (nla_len < 4 or past the end) or stray bytes after
/// the last one fail.
template <class Fn>
Status walk(const nlattr* first, const void* tail, const std::string& what, Fn&& fn) {
  const auto* p = reinterpret_cast<const char*>(first);
  const auto* end = static_cast<const char*>(tail);
  while (p < end) {
    const auto left = static_cast<int>(end - p);
    const auto* a = reinterpret_cast<const nlattr*>(p);
    if (!mnl_attr_ok(a, left)) {
      const unsigned len = left >= 2 ? a->nla_len : 0;
      return bad(what, fmt::format("truncated attribute at offset {}: nla_len {} with {} bytes left", p - reinterpret_cast<const char*>(first), len, left));
    }
    if (auto s = fn(a); !s) return s;
    p += MNL_ALIGN(a->nla_len);
  }
  return {};
}

/// The end of a message's attributes: nlmsg_len bytes from its start, not
/// rounded up to 4 as mnl_nlmsg_get_payload_tail() does, which for a length
/// that is not a multiple of 4 points past the message (the walk stops at
/// an attribute's padding either way).
const void* payload_end(const nlmsghdr* nlh) noexcept {
  return reinterpret_cast<const char*>(nlh) + nlh->nlmsg_len;
}

/// mnl_attr_validate against the UAPI type, with a message naming the attribute.
Status check(const nlattr* a, mnl_attr_data_type t, const std::string& what, const std::string& name) {
  if (mnl_attr_validate(a, t) < 0)
    return bad(what, fmt::format("{}: payload of {} bytes, expected {}", name, mnl_attr_get_payload_len(a), type_desc(t)));
  return {};
}

/// The attributes of a neuron message by type, each validated; unknown types skipped.
struct Table {
  std::array<const nlattr*, NEURON_A_MAX + 1> a{};
  const nlattr* operator[](unsigned t) const { return a[t]; }
};

Result<Table> parse_attrs(const nlmsghdr* nlh, const std::string& what) {
  Table tb;
  auto s = walk(static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN)),
                payload_end(nlh), what, [&](const nlattr* a) -> Status {
                  const unsigned type = mnl_attr_get_type(a);
                  if (type > NEURON_A_MAX) return {};  // newer than us: skip
                  const auto t = attr_type(type);
                  if (t == MNL_TYPE_UNSPEC) return {};
                  if (auto c = check(a, t, what, kAttrNames[type]); !c) return c;
                  tb.a[type] = a;
                  return {};
                });
  if (!s) return unexpected(std::move(s).error());
  return tb;
}

/// The nlmsghdr of a complete message whose genl command is `cmd`.
Result<const nlmsghdr*> genl_message(std::span<const std::uint8_t> msg, std::uint8_t cmd, const std::string& what) {
  if (msg.size() < NLMSG_HDRLEN)
    return bad(what, fmt::format("{} bytes, shorter than a netlink header ({})", msg.size(), NLMSG_HDRLEN));
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(msg.data());
  if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > msg.size())
    return bad(what, fmt::format("nlmsg_len {} does not fit the {} bytes received", nlh->nlmsg_len, msg.size()));
  if (nlh->nlmsg_len < mnl_nlmsg_size(GENL_HDRLEN))
    return bad(what, fmt::format("nlmsg_len {} leaves no room for the genetlink header", nlh->nlmsg_len));
  const auto* g = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
  if (g->cmd != cmd) return bad(what, fmt::format("genl command {}, expected {}", g->cmd, cmd));
  return nlh;
}

Status require(const Table& tb, std::initializer_list<unsigned> types, const std::string& what) {
  for (unsigned t : types)
    if (!tb[t]) return bad(what, fmt::format("{} is missing", kAttrNames[t]));
  return {};
}

std::uint32_t u32_or(const Table& tb, unsigned t) { return tb[t] ? mnl_attr_get_u32(tb[t]) : 0; }
std::uint64_t u64_or(const Table& tb, unsigned t) { return tb[t] ? mnl_attr_get_u64(tb[t]) : 0; }

}  // namespace

std::string genl_attr_name(unsigned type) {
  return type <= NEURON_A_MAX ? kAttrNames[type] : fmt::format("attribute {}", type);
}

// ------------------------------------------------------------------ parsers
Result<NetlinkEvent> parse_event_message(std::span<const std::uint8_t> msg) {
  const std::string what = "NEURON_CMD_EVENT";
  auto nlh = genl_message(msg, NEURON_CMD_EVENT, what);
  if (!nlh) return unexpected(std::move(nlh).error());
  auto tb = parse_attrs(*nlh, what);
  if (!tb) return unexpected(std::move(tb).error());
  if (auto s = require(*tb, {NEURON_A_DEVICE, NEURON_A_CORE, NEURON_A_EDGE, NEURON_A_CAUSE, NEURON_A_QUEUES,
                             NEURON_A_COUNT, NEURON_A_TIMESTAMP},
                       what);
      !s)
    return unexpected(std::move(s).error());
  NetlinkEvent e;
  e.device = u32_or(*tb, NEURON_A_DEVICE);
  e.core = u32_or(*tb, NEURON_A_CORE);
  e.edge = u32_or(*tb, NEURON_A_EDGE);
  e.cause = u32_or(*tb, NEURON_A_CAUSE);
  e.queues = u32_or(*tb, NEURON_A_QUEUES);
  e.wrbuf_full = u32_or(*tb, NEURON_A_WRBUF_FULL);  // absent from older drivers: 0
  e.wrbuf_drop = u32_or(*tb, NEURON_A_WRBUF_DROP);
  e.suppressed = u32_or(*tb, NEURON_A_SUPPRESSED);
  e.pc = u32_or(*tb, NEURON_A_PC);
  e.count = u64_or(*tb, NEURON_A_COUNT);
  e.timestamp_ns = u64_or(*tb, NEURON_A_TIMESTAMP);
  return e;
}

Result<GenlDevice> parse_device_message(std::span<const std::uint8_t> msg) {
  const std::string what = "NEURON_CMD_GET_DEVICE reply";
  auto nlh = genl_message(msg, NEURON_CMD_GET_DEVICE, what);
  if (!nlh) return unexpected(std::move(nlh).error());
  GenlDevice d;
  Table tb;
  // INTR_COUNTS repeats (one per core), so this walk keeps every one.
  auto s = walk(static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(*nlh, GENL_HDRLEN)),
                payload_end(*nlh), what, [&](const nlattr* a) -> Status {
                  const unsigned type = mnl_attr_get_type(a);
                  if (type > NEURON_A_MAX) return {};
                  const auto t = attr_type(type);
                  if (t == MNL_TYPE_UNSPEC) return {};
                  if (auto c = check(a, t, what, kAttrNames[type]); !c) return c;
                  tb.a[type] = a;
                  if (type != NEURON_A_INTR_COUNTS) return {};
                  // nest: NEURON_A_CORE first, then one NEURON_A_COUNT per intr bit 0..8
                  CoreIntrCounts cc;
                  bool have_core = false;
                  unsigned n = 0;
                  const std::string in = what + " NEURON_A_INTR_COUNTS";
                  auto ns = walk(static_cast<const nlattr*>(mnl_attr_get_payload(a)),
                                 static_cast<const char*>(mnl_attr_get_payload(a)) + mnl_attr_get_payload_len(a), in,
                                 [&](const nlattr* b) -> Status {
                                   const unsigned bt = mnl_attr_get_type(b);
                                   if (bt == NEURON_A_CORE) {
                                     if (auto c = check(b, MNL_TYPE_U32, in, "NEURON_A_CORE"); !c) return c;
                                     cc.core = mnl_attr_get_u32(b);
                                     have_core = true;
                                   } else if (bt == NEURON_A_COUNT) {
                                     if (auto c = check(b, MNL_TYPE_U64, in, "NEURON_A_COUNT"); !c) return c;
                                     if (n >= cc.counts.size())
                                       return bad(in, fmt::format("more than {} NEURON_A_COUNT", cc.counts.size()));
                                     cc.counts[n++] = mnl_attr_get_u64(b);
                                   } else if (bt != NEURON_A_PAD) {
                                     return bad(in, fmt::format("unexpected {}", genl_attr_name(bt)));
                                   }
                                   return {};
                                 });
                  if (!ns) return ns;
                  if (!have_core) return bad(in, "NEURON_A_CORE is missing");
                  d.cores.push_back(cc);
                  return {};
                });
  if (!s) return unexpected(std::move(s).error());
  if (auto r = require(tb, {NEURON_A_DEVICE, NEURON_A_NUM_CORES, NEURON_A_GEN}, what); !r)
    return unexpected(std::move(r).error());
  d.device = u32_or(tb, NEURON_A_DEVICE);
  d.pci_vendor = tb[NEURON_A_PCI_VENDOR] ? mnl_attr_get_u16(tb[NEURON_A_PCI_VENDOR]) : 0;
  d.pci_device = tb[NEURON_A_PCI_DEVICE] ? mnl_attr_get_u16(tb[NEURON_A_PCI_DEVICE]) : 0;
  d.num_cores = u32_or(tb, NEURON_A_NUM_CORES);
  d.gen = u32_or(tb, NEURON_A_GEN);
  d.mem_size = u64_or(tb, NEURON_A_MEM_SIZE);
  d.throttle_count = u64_or(tb, NEURON_A_THROTTLE_COUNT);
  d.fault_count = u64_or(tb, NEURON_A_FAULT_COUNT);
  return d;
}

Result<GenlNq> parse_nq_message(std::span<const std::uint8_t> msg) {
  const std::string what = "NEURON_CMD_GET_NQ reply";
  auto nlh = genl_message(msg, NEURON_CMD_GET_NQ, what);
  if (!nlh) return unexpected(std::move(nlh).error());
  auto tb = parse_attrs(*nlh, what);
  if (!tb) return unexpected(std::move(tb).error());
  if (auto s = require(*tb, {NEURON_A_DEVICE, NEURON_A_CORE, NEURON_A_QUEUE, NEURON_A_HEAD, NEURON_A_TAIL}, what); !s)
    return unexpected(std::move(s).error());
  GenlNq q;
  q.device = u32_or(*tb, NEURON_A_DEVICE);
  q.core = u32_or(*tb, NEURON_A_CORE);
  q.queue = u32_or(*tb, NEURON_A_QUEUE);
  q.head = u32_or(*tb, NEURON_A_HEAD);
  q.tail = u32_or(*tb, NEURON_A_TAIL);
  q.phase = (*tb)[NEURON_A_PHASE] ? mnl_attr_get_u8((*tb)[NEURON_A_PHASE]) : 0;
  q.size = u32_or(*tb, NEURON_A_SIZE);
  q.flags = u32_or(*tb, NEURON_A_FLAGS);
  q.overflow_count = u64_or(*tb, NEURON_A_OVERFLOW_COUNT);
  q.drop_count = u64_or(*tb, NEURON_A_DROP_COUNT);
  q.threshold_count = u64_or(*tb, NEURON_A_THRESHOLD_COUNT);
  return q;
}

Result<GenlFamily> parse_family_message(std::span<const std::uint8_t> msg) {
  const std::string what = "CTRL_CMD_NEWFAMILY reply";
  auto nlh = genl_message(msg, CTRL_CMD_NEWFAMILY, what);
  if (!nlh) return unexpected(std::move(nlh).error());
  GenlFamily f;
  bool have_id = false;
  auto s = walk(static_cast<const nlattr*>(mnl_nlmsg_get_payload_offset(*nlh, GENL_HDRLEN)),
                payload_end(*nlh), what, [&](const nlattr* a) -> Status {
                  switch (mnl_attr_get_type(a)) {
                    case CTRL_ATTR_FAMILY_ID:
                      if (auto c = check(a, MNL_TYPE_U16, what, "CTRL_ATTR_FAMILY_ID"); !c) return c;
                      f.id = mnl_attr_get_u16(a);
                      have_id = true;
                      return {};
                    case CTRL_ATTR_FAMILY_NAME:
                      if (auto c = check(a, MNL_TYPE_NUL_STRING, what, "CTRL_ATTR_FAMILY_NAME"); !c) return c;
                      f.name = mnl_attr_get_str(a);
                      return {};
                    case CTRL_ATTR_VERSION:
                      if (auto c = check(a, MNL_TYPE_U32, what, "CTRL_ATTR_VERSION"); !c) return c;
                      f.version = mnl_attr_get_u32(a);
                      return {};
                    case CTRL_ATTR_MCAST_GROUPS: {
                      if (auto c = check(a, MNL_TYPE_NESTED, what, "CTRL_ATTR_MCAST_GROUPS"); !c) return c;
                      const std::string in = what + " CTRL_ATTR_MCAST_GROUPS";
                      const auto* p = static_cast<const char*>(mnl_attr_get_payload(a));
                      return walk(reinterpret_cast<const nlattr*>(p), p + mnl_attr_get_payload_len(a), in,
                                  [&](const nlattr* g) -> Status {
                                    if (auto c = check(g, MNL_TYPE_NESTED, in, "group entry"); !c) return c;
                                    std::string name;
                                    std::optional<std::uint32_t> id;
                                    const auto* q = static_cast<const char*>(mnl_attr_get_payload(g));
                                    auto gs = walk(reinterpret_cast<const nlattr*>(q), q + mnl_attr_get_payload_len(g),
                                                   in, [&](const nlattr* x) -> Status {
                                                     if (mnl_attr_get_type(x) == CTRL_ATTR_MCAST_GRP_NAME) {
                                                       if (auto c = check(x, MNL_TYPE_NUL_STRING, in,
                                                                          "CTRL_ATTR_MCAST_GRP_NAME");
                                                           !c)
                                                         return c;
                                                       name = mnl_attr_get_str(x);
                                                     } else if (mnl_attr_get_type(x) == CTRL_ATTR_MCAST_GRP_ID) {
                                                       if (auto c = check(x, MNL_TYPE_U32, in, "CTRL_ATTR_MCAST_GRP_ID");
                                                           !c)
                                                         return c;
                                                       id = mnl_attr_get_u32(x);
                                                     }
                                                     return {};
                                                   });
                                    if (!gs) return gs;
                                    if (name.empty() || !id) return bad(in, "a group without name or id");
                                    f.groups[name] = *id;
                                    return {};
                                  });
                    }
                    default:
                      return {};
                  }
                });
  if (!s) return unexpected(std::move(s).error());
  if (!have_id) return bad(what, "CTRL_ATTR_FAMILY_ID is missing");
  return f;
}

namespace {

/// " (kernel: MSG) (offending attribute at byte N)" from extended-ack TLVs
/// at payload offset `off` of an NLMSG_ERROR / NLMSG_DONE message.
std::string ext_ack_text(const nlmsghdr* nlh, std::size_t off, const std::string& what) {
  std::string ext;
  if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS)) return ext;
  const std::size_t payload = nlh->nlmsg_len - NLMSG_HDRLEN;
  off = MNL_ALIGN(off);
  if (off >= payload) return ext;
  const auto* base = static_cast<const char*>(mnl_nlmsg_get_payload(nlh));
  (void)walk(reinterpret_cast<const nlattr*>(base + off), base + payload, what, [&](const nlattr* a) -> Status {
    if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
      ext += fmt::format(" (kernel: {})", mnl_attr_get_str(a));
    else if (mnl_attr_get_type(a) == NLMSGERR_ATTR_OFFS && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
      ext += fmt::format(" (offending attribute at byte {})", mnl_attr_get_u32(a));
    return {};
  });
  return ext;
}

/// The errno of a netlink error field (negative as the kernel sends it; a
/// positive one as it is). Values no errno has (below -4095, INT_MIN
/// among them, which has no positive int) are EBADMSG.
int errno_of(int v) noexcept {
  if (v < -4095) return EBADMSG;
  return v < 0 ? -v : v;
}

}  // namespace

Status parse_ack_message(std::span<const std::uint8_t> msg, const std::string& what) {
  if (msg.size() < NLMSG_HDRLEN) return bad(what, "short netlink error message");
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(msg.data());
  if (nlh->nlmsg_len > msg.size() || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(nlmsgerr)))
    return bad(what, fmt::format("netlink error message of {} bytes", nlh->nlmsg_len));
  const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(nlh));
  if (err->error == 0) return {};
  // The TLVs follow the echoed request (just its header if NLM_F_CAPPED).
  std::size_t off = sizeof(nlmsgerr);
  if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && err->msg.nlmsg_len > sizeof(nlmsghdr))
    off += err->msg.nlmsg_len - sizeof(nlmsghdr);
  return unexpected(Error::from_errno(errno_of(err->error), what + ext_ack_text(nlh, off, what)));
}

/// NLMSG_DONE ends a dump; a dump that failed carries the error (an int) and
/// extended-ack TLVs after it.
Status parse_done_message(std::span<const std::uint8_t> msg, const std::string& what) {
  if (msg.size() < NLMSG_HDRLEN) return bad(what, "short netlink done message");
  const auto* nlh = reinterpret_cast<const nlmsghdr*>(msg.data());
  if (nlh->nlmsg_len > msg.size())
    return bad(what, fmt::format("netlink done message of {} bytes in {}", nlh->nlmsg_len, msg.size()));
  if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(int))) return {};
  int err;
  std::memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof err);
  if (err >= 0) return {};
  return unexpected(Error::from_errno(errno_of(err), what + ext_ack_text(nlh, sizeof(int), what)));
}

// ------------------------------------------------------------------ EventMonitor
void EventMonitor::SocketCloser::operator()(mnl_socket* s) const noexcept {
  if (s) mnl_socket_close(s);
}

EventMonitor::EventMonitor(EventMonitor&&) noexcept = default;
EventMonitor& EventMonitor::operator=(EventMonitor&&) noexcept = default;
EventMonitor::~EventMonitor() = default;

int EventMonitor::fd() const noexcept { return ev_ ? mnl_socket_get_fd(ev_.get()) : -1; }

namespace {

Result<mnl_socket*> open_socket(int flags, const char* what) {
  mnl_socket* s = mnl_socket_open2(NETLINK_GENERIC, flags | SOCK_CLOEXEC);
  if (!s) return unexpected(Error::from_errno(errno, fmt::format("netlink socket ({})", what)));
  if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
    const int e = errno;
    mnl_socket_close(s);
    return unexpected(Error::from_errno(e, fmt::format("bind netlink socket ({})", what)));
  }
  return s;
}

/// Send one request and feed every reply message to `on_msg` until DONE/ACK
/// (or the single reply of a `do` with ACK). Errors carry the extended ack.
Status transact(mnl_socket* s, std::vector<char>& req, std::uint32_t seq, const std::string& what,
                const std::function<Status(std::span<const std::uint8_t>)>& on_msg) {
  auto* nlh = reinterpret_cast<nlmsghdr*>(req.data());
  if (mnl_socket_sendto(s, nlh, nlh->nlmsg_len) < 0) return unexpected(Error::from_errno(errno, "send " + what));
  const unsigned portid = mnl_socket_get_portid(s);
  std::vector<std::uint8_t> buf(MNL_SOCKET_BUFFER_SIZE > 32768 ? MNL_SOCKET_BUFFER_SIZE : 32768);
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(s, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return unexpected(Error::from_errno(errno, "receive " + what));
    }
    int left = static_cast<int>(n);
    const auto* m = reinterpret_cast<const nlmsghdr*>(buf.data());
    while (mnl_nlmsg_ok(m, left)) {
      if (m->nlmsg_seq != seq || m->nlmsg_pid != portid) {  // not ours: skip
        m = mnl_nlmsg_next(m, &left);
        continue;
      }
      const std::span<const std::uint8_t> one(reinterpret_cast<const std::uint8_t*>(m), m->nlmsg_len);
      if (m->nlmsg_type == NLMSG_ERROR) return parse_ack_message(one, what);  // ACK: done
      if (m->nlmsg_type == NLMSG_DONE) return parse_done_message(one, what);
      if (m->nlmsg_type >= NLMSG_MIN_TYPE)
        if (auto st = on_msg(one); !st) return st;
      m = mnl_nlmsg_next(m, &left);
    }
  }
}

std::vector<char> genl_request(std::uint16_t family, std::uint16_t flags, std::uint32_t seq, std::uint8_t cmd,
                               std::uint8_t version) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = family;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = seq;
  auto* g = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  g->cmd = cmd;
  g->version = version;
  return buf;
}

}  // namespace

Result<EventMonitor> EventMonitor::open(bool join_events) {
  EventMonitor m;
  auto req = open_socket(0, "requests");
  if (!req) return unexpected(std::move(req).error());
  m.req_.reset(*req);
  int one = 1;
  // Extended acks (messages naming the bad attribute), capped echoes, strict checks.
  (void)mnl_socket_setsockopt(m.req_.get(), NETLINK_EXT_ACK, &one, sizeof one);
  (void)mnl_socket_setsockopt(m.req_.get(), NETLINK_CAP_ACK, &one, sizeof one);
  (void)mnl_socket_setsockopt(m.req_.get(), NETLINK_GET_STRICT_CHK, &one, sizeof one);

  // CTRL_CMD_GETFAMILY name=neuron
  const std::uint32_t seq = ++m.seq_;
  auto buf = genl_request(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, seq, CTRL_CMD_GETFAMILY, 1);
  mnl_attr_put_strz(reinterpret_cast<nlmsghdr*>(buf.data()), CTRL_ATTR_FAMILY_NAME, NEURON_GENL_NAME);
  std::optional<GenlFamily> fam;
  auto st = transact(m.req_.get(), buf, seq, "CTRL_CMD_GETFAMILY " NEURON_GENL_NAME,
                     [&](std::span<const std::uint8_t> msg) -> Status {
                       auto f = parse_family_message(msg);
                       if (!f) return unexpected(std::move(f).error());
                       fam = std::move(f).value();
                       return {};
                     });
  if (!st) {
    Error e = std::move(st).error();
    if (e.code == std::errc::no_such_file_or_directory)
      e.what += " (the generic netlink family is registered by nnq.ko: is the module loaded?)";
    return unexpected(std::move(e));
  }
  if (!fam) return unexpected(errc::bad_message, "CTRL_CMD_GETFAMILY " NEURON_GENL_NAME ": no reply");
  m.family_ = std::move(*fam);

  if (join_events) {
    const auto g = m.family_.groups.find(NEURON_GENL_MCGRP_EVENTS);
    if (g == m.family_.groups.end())
      return unexpected(errc::not_supported,
                        "generic netlink family " NEURON_GENL_NAME " has no \"" NEURON_GENL_MCGRP_EVENTS "\" group");
    auto ev = open_socket(SOCK_NONBLOCK, "events");
    if (!ev) return unexpected(std::move(ev).error());
    m.ev_.reset(*ev);
    int grp = static_cast<int>(g->second);
    if (mnl_socket_setsockopt(m.ev_.get(), NETLINK_ADD_MEMBERSHIP, &grp, sizeof grp) < 0)
      return unexpected(Error::from_errno(errno, fmt::format("join multicast group " NEURON_GENL_MCGRP_EVENTS " ({})", grp)));
  }
  return m;
}

Result<std::size_t> EventMonitor::receive(std::vector<NetlinkEvent>& out, std::chrono::milliseconds timeout) {
  if (!ev_) return unexpected(errc::invalid_argument, "EventMonitor::receive: not joined to the events group");
  const int fd = mnl_socket_get_fd(ev_.get());
  pollfd p{fd, POLLIN, 0};
  const int ms = timeout.count() < 0 ? -1 : static_cast<int>(std::min<std::int64_t>(timeout.count(), INT32_MAX));
  for (;;) {
    const int rc = ::poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return unexpected(Error::from_errno(errno, "poll netlink events"));
    if (rc == 0) return std::size_t{0};
    break;
  }
  std::vector<std::uint8_t> buf(MNL_SOCKET_BUFFER_SIZE);
  std::size_t added = 0;
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(ev_.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return added;
      if (errno == ENOBUFS) {  // the socket overflowed: events were lost
        ++overruns_;
        continue;
      }
      return unexpected(Error::from_errno(errno, "receive netlink events"));
    }
    int left = static_cast<int>(n);
    const auto* m = reinterpret_cast<const nlmsghdr*>(buf.data());
    while (mnl_nlmsg_ok(m, left)) {
      if (m->nlmsg_type == family_.id) {
        auto e = parse_event_message({reinterpret_cast<const std::uint8_t*>(m), m->nlmsg_len});
        if (e) {
          out.push_back(*e);
          ++added;
        } else {
          ++malformed_;
          last_malformed_ = e.error();
        }
      }
      m = mnl_nlmsg_next(m, &left);
    }
    if (left > 0) {  // trailing bytes that are not a whole message
      ++malformed_;
      last_malformed_ = Error::make(errc::bad_message, fmt::format("{} stray bytes after the last message", left));
    }
  }
}

template <class T>
Result<std::vector<T>> EventMonitor::request(std::uint8_t cmd, std::optional<std::uint32_t> device, bool dump,
                                             Result<T> (*parse)(std::span<const std::uint8_t>),
                                             const std::string& what) {
  const std::uint32_t seq = ++seq_;
  auto buf = genl_request(family_.id, static_cast<std::uint16_t>(NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK)), seq,
                          cmd, NEURON_GENL_VERSION);
  if (device) mnl_attr_put_u32(reinterpret_cast<nlmsghdr*>(buf.data()), NEURON_A_DEVICE, *device);
  std::vector<T> out;
  auto st = transact(req_.get(), buf, seq, what, [&](std::span<const std::uint8_t> msg) -> Status {
    auto v = parse(msg);
    if (!v) return unexpected(std::move(v).error());
    out.push_back(std::move(v).value());
    return {};
  });
  if (!st) return unexpected(std::move(st).error());
  return out;
}

Result<std::vector<GenlDevice>> EventMonitor::get_device(std::optional<std::uint32_t> device) {
  return request<GenlDevice>(NEURON_CMD_GET_DEVICE, device, !device, &parse_device_message,
                             device ? fmt::format("NEURON_CMD_GET_DEVICE device={}", *device)
                                    : std::string("NEURON_CMD_GET_DEVICE dump"));
}

Result<std::vector<GenlNq>> EventMonitor::get_nq(std::optional<std::uint32_t> device) {
  return request<GenlNq>(NEURON_CMD_GET_NQ, device, true, &parse_nq_message,
                         device ? fmt::format("NEURON_CMD_GET_NQ dump device={}", *device)
                                : std::string("NEURON_CMD_GET_NQ dump"));
}

}  // namespace neuron
