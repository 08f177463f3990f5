// SPDX-License-Identifier: MIT
//
// EventMonitor's parsers on HAND-BUILT netlink messages: every byte below is
// laid out here from <linux/netlink.h> (nlmsghdr: len u32, type u16, flags
// u16, seq u32, pid u32), <linux/genetlink.h> (genlmsghdr: cmd u8, version
// u8, reserved u16) and struct nlattr (len u16 = 4 + payload, type u16,
// payload padded to 4), never produced by libmnl or the library. Malformed
// messages must fail with errc::bad_message naming what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>
#include <vector>

#include "libneuron/netlink.hpp"

using namespace neuron;
using ::testing::HasSubstr;

namespace {

class Msg {
 public:
  Msg(std::uint16_t type, std::uint8_t cmd, std::uint16_t flags = 0) {
    put32(0);  // nlmsg_len, patched by bytes()
    put16(type);
    put16(flags);
    put32(7);  // seq
    put32(0);  // pid
    b_.push_back(cmd);
    b_.push_back(1);  // version
    put16(0);
  }
  Msg& attr(std::uint16_t type, std::initializer_list<std::uint8_t> payload) {
    put16(static_cast<std::uint16_t>(4 + payload.size()));
    put16(type);
    b_.insert(b_.end(), payload);
    while (b_.size() % 4) b_.push_back(0);
    return *this;
  }
  Msg& u8(std::uint16_t t, std::uint8_t v) { return attr(t, {v}); }
  Msg& u16(std::uint16_t t, std::uint16_t v) { return attr(t, {std::uint8_t(v), std::uint8_t(v >> 8)}); }
  Msg& u32(std::uint16_t t, std::uint32_t v) {
    return attr(t, {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)});
  }
  Msg& u64(std::uint16_t t, std::uint64_t v) {
    return attr(t, {std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24),
                    std::uint8_t(v >> 32), std::uint8_t(v >> 40), std::uint8_t(v >> 48), std::uint8_t(v >> 56)});
  }
  Msg& str(std::uint16_t t, const char* s) {
    put16(static_cast<std::uint16_t>(4 + std::strlen(s) + 1));
    put16(t);
    for (const char* p = s; *p; ++p) b_.push_back(static_cast<std::uint8_t>(*p));
    b_.push_back(0);
    while (b_.size() % 4) b_.push_back(0);
    return *this;
  }
  /// Start a nest: returns its offset; end_nest() patches its length.
  std::size_t begin_nest(std::uint16_t type) {
    const std::size_t at = b_.size();
    put16(0);
    put16(static_cast<std::uint16_t>(type | NLA_F_NESTED));
    return at;
  }
  Msg& end_nest(std::size_t at) {
    const auto len = static_cast<std::uint16_t>(b_.size() - at);
    b_[at] = static_cast<std::uint8_t>(len);
    b_[at + 1] = static_cast<std::uint8_t>(len >> 8);
    return *this;
  }
  Msg& raw(std::initializer_list<std::uint8_t> bytes) {
    b_.insert(b_.end(), bytes);
    return *this;
  }
  std::vector<std::uint8_t> bytes() const {
    auto b = b_;
    const auto n = static_cast<std::uint32_t>(b.size());
    std::memcpy(b.data(), &n, 4);
    return b;
  }

 private:
  void put16(std::uint16_t v) {
    b_.push_back(static_cast<std::uint8_t>(v));
    b_.push_back(static_cast<std::uint8_t>(v >> 8));
  }
  void put32(std::uint32_t v) {
    put16(static_cast<std::uint16_t>(v));
    put16(static_cast<std::uint16_t>(v >> 16));
  }
  std::vector<std::uint8_t> b_;
};

constexpr std::uint16_t kFamily = 0x1d;

Msg good_event() {
  Msg m(kFamily, NEURON_CMD_EVENT);
  m.u32(NEURON_A_DEVICE, 0)
      .u32(NEURON_A_CORE, 1)
      .u32(NEURON_A_EDGE, NEURON_EDGE_NOTIFIC)
      .u32(NEURON_A_CAUSE, 0x5)
      .u32(NEURON_A_QUEUES, 0x2)
      .attr(NEURON_A_PAD, {})  // nla_put_u64_64bit's alignment pad
      .u64(NEURON_A_COUNT, 42)
      .u64(NEURON_A_TIMESTAMP, 0x0123456789abcdefull);
  return m;
}

void expect_bad(const Result<NetlinkEvent>& r, const char* what) {
  ASSERT_FALSE(r) << "accepted a message with " << what;
  EXPECT_EQ(r.error().code, make_error_code(errc::bad_message));
  EXPECT_THAT(r.error().message(), HasSubstr(what));
}

}  // namespace

TEST(Netlink, EventAttributesParse) {
  const auto b = good_event().bytes();
  // hand check of the layout: 16 header + 4 genl + 5 u32 attrs of 8 + pad 4 + 2 u64 attrs of 12
  ASSERT_EQ(b.size(), 16u + 4 + 5 * 8 + 4 + 2 * 12);
  auto e = parse_event_message(b);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->device, 0u);
  EXPECT_EQ(e->core, 1u);
  EXPECT_EQ(e->edge, static_cast<std::uint32_t>(NEURON_EDGE_NOTIFIC));
  EXPECT_EQ(e->cause, 0x5u);
  EXPECT_EQ(e->queues, 0x2u);
  EXPECT_EQ(e->count, 42u);
  EXPECT_EQ(e->timestamp_ns, 0x0123456789abcdefull);
}

// The input buffer's per-queue edges (docs/device-model.md#wrbuf); absent
// from an older driver's events, they read 0 (EventAttributesParse).
TEST(Netlink, EventInputBufferEdgesParse) {
  Msg m(kFamily, NEURON_CMD_EVENT);
  m.u32(NEURON_A_DEVICE, 0)
      .u32(NEURON_A_CORE, 1)
      .u32(NEURON_A_EDGE, NEURON_EDGE_NOTIFIC)
      .u32(NEURON_A_CAUSE, 0x108)
      .u32(NEURON_A_QUEUES, 0)
      .u32(NEURON_A_WRBUF_FULL, 0x2)
      .u32(NEURON_A_WRBUF_DROP, 0x201)
      .attr(NEURON_A_PAD, {})
      .u64(NEURON_A_COUNT, 7)
      .u64(NEURON_A_TIMESTAMP, 1);
  auto e = parse_event_message(m.bytes());
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->cause, 0x108u);
  EXPECT_EQ(e->wrbuf_full, 0x2u);
  EXPECT_EQ(e->wrbuf_drop, 0x201u);
  auto old = parse_event_message(good_event().bytes());
  ASSERT_TRUE(old);
  EXPECT_EQ(old->wrbuf_full, 0u);
  EXPECT_EQ(old->wrbuf_drop, 0u);
}

// A HANG edge carries the engine's pc, a THROTTLE edge the count the rate
// limit kept back (docs/decisions/0012-hang-detection.md,
// docs/decisions/0008-event-ratelimit.md);
// both read 0 from a driver that does not send them.
TEST(Netlink, EventPcAndSuppressedParse) {
  Msg m(kFamily, NEURON_CMD_EVENT);
  m.u32(NEURON_A_DEVICE, 0)
      .u32(NEURON_A_CORE, 3)
      .u32(NEURON_A_EDGE, NEURON_EDGE_HANG)
      .u32(NEURON_A_CAUSE, NEURON_ENGINE_WAITING)
      .u32(NEURON_A_QUEUES, 0x1)
      .u32(NEURON_A_SUPPRESSED, 6)
      .u32(NEURON_A_PC, 0x1234)
      .u64(NEURON_A_COUNT, 2)
      .u64(NEURON_A_TIMESTAMP, 5);
  auto e = parse_event_message(m.bytes());
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->edge, 6u);  // NEURON_EDGE_HANG
  EXPECT_EQ(e->pc, 0x1234u);
  EXPECT_EQ(e->suppressed, 6u);
  auto old = parse_event_message(good_event().bytes());
  ASSERT_TRUE(old);
  EXPECT_EQ(old->pc, 0u);
  EXPECT_EQ(old->suppressed, 0u);
}

TEST(Netlink, UnknownNewerAttributesAreSkipped) {
  auto m = good_event();
  m.u32(200, 1).attr(NEURON_A_MAX + 1, {1, 2, 3});
  EXPECT_TRUE(parse_event_message(m.bytes()));
}

TEST(Netlink, WrongAttributeSizesAreRejectedByName) {
  Msg a(kFamily, NEURON_CMD_EVENT);
  a.u64(NEURON_A_CORE, 1);  // u32 attribute with 8 bytes
  expect_bad(parse_event_message(a.bytes()), "NEURON_A_CORE: payload of 8 bytes, expected u32");
  Msg b(kFamily, NEURON_CMD_EVENT);
  b.u32(NEURON_A_TIMESTAMP, 1);  // u64 attribute with 4 bytes
  expect_bad(parse_event_message(b.bytes()), "NEURON_A_TIMESTAMP: payload of 4 bytes, expected u64");
  Msg c(kFamily, NEURON_CMD_EVENT);
  c.attr(NEURON_A_EDGE, {1, 0});  // 2 bytes
  expect_bad(parse_event_message(c.bytes()), "NEURON_A_EDGE");
}

TEST(Netlink, MissingRequiredAttributeIsNamed) {
  Msg m(kFamily, NEURON_CMD_EVENT);
  m.u32(NEURON_A_DEVICE, 0).u32(NEURON_A_CORE, 0).u32(NEURON_A_EDGE, 0).u32(NEURON_A_CAUSE, 1).u32(NEURON_A_QUEUES, 0);
  m.u64(NEURON_A_COUNT, 1);
  expect_bad(parse_event_message(m.bytes()), "NEURON_A_TIMESTAMP is missing");
}

TEST(Netlink, TruncatedAndShortMessagesAreRejected) {
  auto b = good_event().bytes();
  // an attribute claiming more bytes than are left
  auto t = b;
  t[16 + 4] = 0xff;  // first attribute's nla_len low byte
  expect_bad(parse_event_message(t), "truncated attribute");
  // nla_len below the 4-byte header
  t = b;
  t[16 + 4] = 2;
  expect_bad(parse_event_message(t), "truncated attribute");
  // nlmsg_len beyond what was received
  t = b;
  t.resize(b.size() - 4);
  expect_bad(parse_event_message(t), "does not fit");
  // shorter than a netlink header
  expect_bad(parse_event_message(std::span<const std::uint8_t>(b.data(), 10)), "shorter than a netlink header");
  // room for the netlink header only
  Msg h(kFamily, NEURON_CMD_EVENT);
  auto hb = h.bytes();
  hb.resize(16);
  hb[0] = 16;
  expect_bad(parse_event_message(hb), "no room for the genetlink header");
  // stray 2 bytes at the end
  auto m = good_event();
  m.raw({1, 2});
  expect_bad(parse_event_message(m.bytes()), "truncated attribute");
}

TEST(Netlink, WrongCommandIsRejected) {
  Msg m(kFamily, NEURON_CMD_GET_NQ);
  expect_bad(parse_event_message(m.bytes()), "genl command 2, expected 3");
}

TEST(Netlink, DeviceWithPerCoreIntrCountNests) {
  Msg m(kFamily, NEURON_CMD_GET_DEVICE);
  m.u32(NEURON_A_DEVICE, 0).u16(NEURON_A_PCI_VENDOR, 0x1d0f).u16(NEURON_A_PCI_DEVICE, 0x7f00);
  m.u32(NEURON_A_NUM_CORES, 2).u32(NEURON_A_GEN, NEURON_GEN_CAYMAN).u64(NEURON_A_MEM_SIZE, 64ull << 20);
  for (std::uint32_t core = 0; core < 2; ++core) {
    const auto at = m.begin_nest(NEURON_A_INTR_COUNTS);
    m.u32(NEURON_A_CORE, core);
    for (std::uint64_t i = 0; i < 9; ++i) m.u64(NEURON_A_COUNT, core * 100 + i);
    m.end_nest(at);
  }
  m.u64(NEURON_A_THROTTLE_COUNT, 3).u64(NEURON_A_FAULT_COUNT, 4);
  auto d = parse_device_message(m.bytes());
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->pci_vendor, 0x1d0f);
  EXPECT_EQ(d->pci_device, 0x7f00);
  EXPECT_EQ(d->num_cores, 2u);
  EXPECT_EQ(d->mem_size, 64ull << 20);
  ASSERT_EQ(d->cores.size(), 2u);
  EXPECT_EQ(d->cores[1].core, 1u);
  EXPECT_EQ(d->cores[1].counts[8], 108u);
  EXPECT_EQ(d->cores[0].counts[0], 0u);
  EXPECT_EQ(d->throttle_count, 3u);
  EXPECT_EQ(d->fault_count, 4u);
}

TEST(Netlink, MalformedIntrCountNestsAreRejected) {
  const auto base = [] {
    Msg m(kFamily, NEURON_CMD_GET_DEVICE);
    m.u32(NEURON_A_DEVICE, 0).u32(NEURON_A_NUM_CORES, 1).u32(NEURON_A_GEN, 1);
    return m;
  };
  {  // ten counts for nine causes
    auto m = base();
    const auto at = m.begin_nest(NEURON_A_INTR_COUNTS);
    m.u32(NEURON_A_CORE, 0);
    for (int i = 0; i < 10; ++i) m.u64(NEURON_A_COUNT, 1);
    m.end_nest(at);
    auto d = parse_device_message(m.bytes());
    ASSERT_FALSE(d);
    EXPECT_THAT(d.error().message(), HasSubstr("more than 9 NEURON_A_COUNT"));
  }
  {  // a count of the wrong size inside the nest
    auto m = base();
    const auto at = m.begin_nest(NEURON_A_INTR_COUNTS);
    m.u32(NEURON_A_CORE, 0).u32(NEURON_A_COUNT, 1);
    m.end_nest(at);
    auto d = parse_device_message(m.bytes());
    ASSERT_FALSE(d);
    EXPECT_THAT(d.error().message(), HasSubstr("NEURON_A_INTR_COUNTS: NEURON_A_COUNT: payload of 4 bytes"));
  }
  {  // no core in the nest
    auto m = base();
    const auto at = m.begin_nest(NEURON_A_INTR_COUNTS);
    m.u64(NEURON_A_COUNT, 1);
    m.end_nest(at);
    EXPECT_FALSE(parse_device_message(m.bytes()));
  }
  {  // a nest whose inner attribute overruns it
    auto m = base();
    const auto at = m.begin_nest(NEURON_A_INTR_COUNTS);
    m.raw({0x20, 0x00, NEURON_A_CORE, 0x00, 0, 0, 0, 0});  // nla_len 32 in an 8-byte space
    m.end_nest(at);
    auto d = parse_device_message(m.bytes());
    ASSERT_FALSE(d);
    EXPECT_THAT(d.error().message(), HasSubstr("truncated attribute"));
  }
  {  // INTR_COUNTS not nested-shaped (2 bytes)
    auto m = base();
    m.attr(NEURON_A_INTR_COUNTS, {1, 2});
    EXPECT_FALSE(parse_device_message(m.bytes()));
  }
}

TEST(Netlink, NqEntryWithItsU8Phase) {
  Msg m(kFamily, NEURON_CMD_GET_NQ, NLM_F_MULTI);
  m.u32(NEURON_A_DEVICE, 0).u32(NEURON_A_CORE, 1).u32(NEURON_A_QUEUE, 3).u32(NEURON_A_HEAD, 100);
  m.u32(NEURON_A_TAIL, 164).u8(NEURON_A_PHASE, 1).u32(NEURON_A_SIZE, 1024).u32(NEURON_A_FLAGS, NEURON_NQ_F_IGNORE_FULL);
  m.u64(NEURON_A_OVERFLOW_COUNT, 5).u64(NEURON_A_DROP_COUNT, 6).u64(NEURON_A_THRESHOLD_COUNT, 7);
  auto q = parse_nq_message(m.bytes());
  ASSERT_TRUE(q) << q.error().message();
  EXPECT_EQ(q->core, 1u);
  EXPECT_EQ(q->queue, 3u);
  EXPECT_EQ(q->tail - q->head, 64u);
  EXPECT_EQ(q->phase, 1);
  EXPECT_EQ(q->size, 1024u);
  EXPECT_EQ(q->flags, static_cast<std::uint32_t>(NEURON_NQ_F_IGNORE_FULL));
  EXPECT_EQ(q->overflow_count, 5u);
  EXPECT_EQ(q->drop_count, 6u);
  EXPECT_EQ(q->threshold_count, 7u);

  Msg bad(kFamily, NEURON_CMD_GET_NQ);
  bad.u32(NEURON_A_PHASE, 1);  // phase is a u8
  auto r = parse_nq_message(bad.bytes());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("NEURON_A_PHASE: payload of 4 bytes, expected u8"));
}

TEST(Netlink, FamilyReplyGivesIdAndGroups) {
  Msg m(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
  m.u16(CTRL_ATTR_FAMILY_ID, kFamily).str(CTRL_ATTR_FAMILY_NAME, "neuron").u32(CTRL_ATTR_VERSION, 1);
  const auto groups = m.begin_nest(CTRL_ATTR_MCAST_GROUPS);
  const auto g1 = m.begin_nest(1);
  m.str(CTRL_ATTR_MCAST_GRP_NAME, "events").u32(CTRL_ATTR_MCAST_GRP_ID, 9);
  m.end_nest(g1);
  m.end_nest(groups);
  auto f = parse_family_message(m.bytes());
  ASSERT_TRUE(f) << f.error().message();
  EXPECT_EQ(f->id, kFamily);
  EXPECT_EQ(f->name, "neuron");
  EXPECT_EQ(f->version, 1u);
  ASSERT_EQ(f->groups.count("events"), 1u);
  EXPECT_EQ(f->groups.at("events"), 9u);

  Msg noid(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
  noid.str(CTRL_ATTR_FAMILY_NAME, "neuron");
  EXPECT_FALSE(parse_family_message(noid.bytes()));
  Msg badname(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
  badname.u16(CTRL_ATTR_FAMILY_ID, 3).attr(CTRL_ATTR_FAMILY_NAME, {'n', 'e'});  // no NUL
  EXPECT_FALSE(parse_family_message(badname.bytes()));
}

// NLMSG_ERROR with an extended ack, as the driver sends for a bad request
// ("Bad requests get -EINVAL/-ENODEV with an extended ack naming the attribute").
TEST(Netlink, ErrorReplyCarriesTheExtendedAck) {
  std::vector<std::uint8_t> b;
  const auto put16 = [&](std::uint16_t v) { b.push_back(std::uint8_t(v)); b.push_back(std::uint8_t(v >> 8)); };
  const auto put32 = [&](std::uint32_t v) { put16(std::uint16_t(v)); put16(std::uint16_t(v >> 16)); };
  put32(0);  // len, patched
  put16(NLMSG_ERROR);
  put16(NLM_F_CAPPED | NLM_F_ACK_TLVS);
  put32(7);
  put32(0);
  put32(static_cast<std::uint32_t>(-ENODEV));  // nlmsgerr.error
  put32(20); put16(kFamily); put16(NLM_F_REQUEST); put32(7); put32(0);  // the echoed request header (capped)
  const char msg[] = "no such device";
  put16(static_cast<std::uint16_t>(4 + sizeof msg));
  put16(NLMSGERR_ATTR_MSG);
  for (char c : msg) b.push_back(static_cast<std::uint8_t>(c));
  while (b.size() % 4) b.push_back(0);
  const auto n = static_cast<std::uint32_t>(b.size());
  std::memcpy(b.data(), &n, 4);
  auto s = parse_ack_message(b, "NEURON_CMD_GET_DEVICE device=7");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, std::errc::no_such_device);
  EXPECT_THAT(s.error().message(), HasSubstr("NEURON_CMD_GET_DEVICE device=7 (kernel: no such device)"));
  // an ACK (error 0) is success
  std::memset(b.data() + 16, 0, 4);
  EXPECT_TRUE(parse_ack_message(b, "x"));
}

// Found by the fuzz target userspace/fuzz (netlink, corpus
// crash-done-len-past-message): parse_done_message read as far as
// nlmsg_len said, past the message it was given; and -INT_MIN overflowed.
TEST(Netlink, DoneMessageIsReadOnlyWithinItself) {
  std::vector<std::uint8_t> b(20, 0);
  const std::uint32_t len = 76;  // more than the 20 bytes given
  std::memcpy(b.data(), &len, 4);
  b[4] = NLMSG_DONE;
  const std::int32_t err = -EIO;
  std::memcpy(b.data() + 16, &err, 4);
  auto s = parse_done_message(b, "dump");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, make_error_code(errc::bad_message));
  EXPECT_THAT(s.error().message(), HasSubstr("netlink done message of 76 bytes in 20"));
  EXPECT_FALSE(parse_done_message(std::span<const std::uint8_t>(b.data(), 10), "dump"));
  // the right length: the dump's error
  b[0] = 20;
  s = parse_done_message(b, "dump");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, std::errc::io_error);
  // an error no errno has
  const std::int32_t min = INT32_MIN;
  std::memcpy(b.data() + 16, &min, 4);
  s = parse_done_message(b, "dump");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, std::errc::bad_message);
}

TEST(Netlink, AttributeNames) {
  EXPECT_EQ(genl_attr_name(NEURON_A_TIMESTAMP), "NEURON_A_TIMESTAMP");
  EXPECT_EQ(genl_attr_name(NEURON_A_FAULT_COUNT), "NEURON_A_FAULT_COUNT");
  EXPECT_EQ(genl_attr_name(99), "attribute 99");
}
