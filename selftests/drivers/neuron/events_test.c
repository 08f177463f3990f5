// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of the neuron driver's interrupt edges and their three
 * delivery channels (issue 5; docs/hardware.md#host-paths, #throttle,
 * #completion, #intr-edge, #evt-sem; docs/decisions/0001-original-architecture.md#arch-driver):
 * every edge provoked on purpose and seen through read()/poll() of /dev/nnq0, through
 * the eventfd bound to a queue (threshold edges) and as a generic netlink
 * multicast on family "neuron", group "events"; the overflow policies (lossless
 * backpressure under a 100,000-record load, lossy ignore-full with the gap
 * detected); two engines synchronising through EVT_SEM; the feature-flag,
 * EVT_SEM, THROTTLE and NQ_EVENTFD ioctls; the netlink family's requests, good
 * and bad; remove() with blocked readers, bound eventfds and netlink listeners.
 *
 * Expected values come from the UAPI header (include/uapi/linux/neuron.h),
 * the register map (include/neuron/regs.h) and the device contract
 * (docs/device-model.md), not from the driver's code. Netlink is spoken
 * over raw sockets (the tests are static binaries, no libmnl).
 *
 * Not covered here: tpb_notific_intr_4 (AXI/DMA write error) and the fault
 * vector need the device's fault-dma-error-queue property, i.e. a VM started
 * with it; intr_3 (input buffer overflow) needs a queue with neither
 * backpressure nor ignore-full, which the driver never programs.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define BIT(n)		(1u << (n))
#define EV_SIZE		sizeof(struct neuron_event)
#define NL_BUFSZ	(64 * 1024)

/* ---- raw generic netlink ------------------------------------------------ */

struct nl {
	int fd;
	uint32_t seq;
	uint16_t family;
	uint32_t events_grp;
	uint32_t version;
	uint32_t op_flags[NEURON_CMD_MAX + 1];	/* CTRL_ATTR_OP_FLAGS by cmd */
};

/* What an error or DONE message said, extended ack included. */
struct nl_result {
	int error;		/* 0 or -errno */
	char msg[256];		/* NLMSGERR_ATTR_MSG */
	int has_offs;
	uint32_t offs;		/* NLMSGERR_ATTR_OFFS: byte offset in the request */
	int has_miss_type;
	uint32_t miss_type;	/* NLMSGERR_ATTR_MISS_TYPE */
};

struct nl_req {
	union {
		struct nlmsghdr nlh;
		char buf[512];
	};
};

static void nl_req_init(struct nl_req *r, uint16_t type, uint16_t flags,
			uint8_t cmd, uint8_t version)
{
	struct genlmsghdr *g;

	memset(r, 0, sizeof(*r));
	r->nlh.nlmsg_type = type;
	r->nlh.nlmsg_flags = NLM_F_REQUEST | flags;
	r->nlh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	g = NLMSG_DATA(&r->nlh);
	g->cmd = cmd;
	g->version = version;
}

/* Appends an attribute; returns its byte offset in the message. */
static uint32_t nl_req_put(struct nl_req *r, uint16_t type, const void *data,
			   uint16_t len)
{
	uint32_t off = NLMSG_ALIGN(r->nlh.nlmsg_len);
	struct nlattr *a = (struct nlattr *)(r->buf + off);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nlh.nlmsg_len = off + NLA_ALIGN(a->nla_len);
	return off;
}

static uint32_t nl_req_put_u32(struct nl_req *r, uint16_t type, uint32_t v)
{
	return nl_req_put(r, type, &v, sizeof(v));
}

static int nl_open(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, rcvbuf = 1 << 20;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one))) {
		int err = -errno;

		close(nl->fd);
		return err;
	}
	setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	nl->seq = (uint32_t)time(NULL);
	return 0;
}

static int nl_send(struct nl *nl, struct nl_req *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	r->nlh.nlmsg_seq = ++nl->seq;
	if (sendto(nl->fd, r->buf, r->nlh.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) != (ssize_t)r->nlh.nlmsg_len)
		return -errno;
	return 0;
}

/* recv() with a timeout; returns bytes, 0 on timeout, -errno. */
static ssize_t nl_recv(int fd, void *buf, size_t len, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		int r = poll(&p, 1, timeout_ms);

		if (r < 0)
			return -errno;
		if (!r)
			return 0;
		n = recv(fd, buf, len, 0);
		if (n < 0 && errno == ENOBUFS)
			continue;	/* multicast overrun: keep reading */
		return n < 0 ? -errno : n;
	}
}

/* Attribute table of a payload; repeated types keep the last one. */
static void nl_parse(const void *data, int len, const struct nlattr **tb,
		     int max)
{
	const struct nlattr *a = data;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type <= max)
			tb[type] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

#define NLA_DATA(a)	((const void *)((const char *)(a) + NLA_HDRLEN))
#define NLA_LEN(a)	((int)(a)->nla_len - NLA_HDRLEN)

static uint32_t nla_u32(const struct nlattr *a)
{
	uint32_t v;

	memcpy(&v, NLA_DATA(a), sizeof(v));
	return v;
}

static uint64_t nla_u64(const struct nlattr *a)
{
	uint64_t v;

	memcpy(&v, NLA_DATA(a), sizeof(v));
	return v;
}

static uint16_t nla_u16(const struct nlattr *a)
{
	uint16_t v;

	memcpy(&v, NLA_DATA(a), sizeof(v));
	return v;
}

/* Extended-ack TLVs of an NLMSG_ERROR or NLMSG_DONE message. */
static void nl_parse_ack(const struct nlmsghdr *h, struct nl_result *res)
{
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const char *p = NLMSG_DATA(h);
	int off;

	memset(res, 0, sizeof(*res));
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		res->error = e->error;
		off = sizeof(*e);
		if (!(h->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(e->msg);
	} else {
		memcpy(&res->error, p, sizeof(int));
		off = sizeof(int);
	}
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	nl_parse(p + off, (int)h->nlmsg_len - NLMSG_HDRLEN - off, tb,
		 NLMSGERR_ATTR_MAX);
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(res->msg, sizeof(res->msg), "%s",
			 (const char *)NLA_DATA(tb[NLMSGERR_ATTR_MSG]));
	if (tb[NLMSGERR_ATTR_OFFS]) {
		res->has_offs = 1;
		res->offs = nla_u32(tb[NLMSGERR_ATTR_OFFS]);
	}
	if (tb[NLMSGERR_ATTR_MISS_TYPE]) {
		res->has_miss_type = 1;
		res->miss_type = nla_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
	}
}

typedef void (*nl_msg_cb)(const struct nlmsghdr *h, void *ctx);

/*
 * Sends @r (NLM_F_ACK is added to non-dump requests) and reads the answer
 * up to its ACK/error (a do) or NLMSG_DONE (a dump), calling @cb for every
 * data message. Returns the final error (0 or -errno), details in @res.
 */
static int nl_transact(struct nl *nl, struct nl_req *r, nl_msg_cb cb,
		       void *ctx, struct nl_result *res)
{
	int dump = r->nlh.nlmsg_flags & NLM_F_DUMP;
	static char buf[NL_BUFSZ];
	struct nl_result dummy;
	ssize_t n;
	int ret;

	if (!res)
		res = &dummy;
	memset(res, 0, sizeof(*res));
	if (!dump)
		r->nlh.nlmsg_flags |= NLM_F_ACK;
	ret = nl_send(nl, r);
	if (ret)
		return ret;
	for (;;) {
		const struct nlmsghdr *h;

		n = nl_recv(nl->fd, buf, sizeof(buf), NEURON_WAIT_MS);
		if (n <= 0)
			return n ? (int)n : -ETIMEDOUT;
		for (h = (void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != nl->seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR ||
			    h->nlmsg_type == NLMSG_DONE) {
				nl_parse_ack(h, res);
				return res->error;
			}
			if (cb)
				cb(h, ctx);
		}
	}
}

/* CTRL_CMD_GETFAMILY "neuron": id, version, ops, the "events" group. */
static void nl_family_cb(const struct nlmsghdr *h, void *ctx)
{
	struct nl *nl = ctx;
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *a;
	int len;

	nl_parse((const char *)g + GENL_HDRLEN,
		 (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, tb, CTRL_ATTR_MAX);
	if (tb[CTRL_ATTR_FAMILY_ID])
		nl->family = nla_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_VERSION])
		nl->version = nla_u32(tb[CTRL_ATTR_VERSION]);
	if (tb[CTRL_ATTR_OPS]) {
		a = NLA_DATA(tb[CTRL_ATTR_OPS]);
		len = NLA_LEN(tb[CTRL_ATTR_OPS]);
		while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
			const struct nlattr *op[CTRL_ATTR_OP_MAX + 1];
			uint32_t id;

			nl_parse(NLA_DATA(a), NLA_LEN(a), op, CTRL_ATTR_OP_MAX);
			id = op[CTRL_ATTR_OP_ID] ? nla_u32(op[CTRL_ATTR_OP_ID]) : ~0u;
			if (id <= NEURON_CMD_MAX && op[CTRL_ATTR_OP_FLAGS])
				nl->op_flags[id] = nla_u32(op[CTRL_ATTR_OP_FLAGS]);
			len -= NLA_ALIGN(a->nla_len);
			a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
		}
	}
	if (tb[CTRL_ATTR_MCAST_GROUPS]) {
		a = NLA_DATA(tb[CTRL_ATTR_MCAST_GROUPS]);
		len = NLA_LEN(tb[CTRL_ATTR_MCAST_GROUPS]);
		while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
			const struct nlattr *grp[CTRL_ATTR_MCAST_GRP_MAX + 1];

			nl_parse(NLA_DATA(a), NLA_LEN(a), grp, CTRL_ATTR_MCAST_GRP_MAX);
			if (grp[CTRL_ATTR_MCAST_GRP_NAME] && grp[CTRL_ATTR_MCAST_GRP_ID] &&
			    !strcmp(NLA_DATA(grp[CTRL_ATTR_MCAST_GRP_NAME]),
				    NEURON_GENL_MCGRP_EVENTS))
				nl->events_grp = nla_u32(grp[CTRL_ATTR_MCAST_GRP_ID]);
			len -= NLA_ALIGN(a->nla_len);
			a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
		}
	}
}

static int nl_resolve(struct nl *nl)
{
	struct nl_req r;

	nl_req_init(&r, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, 1);
	nl_req_put(&r, CTRL_ATTR_FAMILY_NAME, NEURON_GENL_NAME,
		   sizeof(NEURON_GENL_NAME));
	return nl_transact(nl, &r, nl_family_cb, nl, NULL);
}

/* Opens a socket, resolves the family and (if @join) joins "events". */
static int nl_open_neuron(struct nl *nl, int join)
{
	int ret = nl_open(nl);

	if (ret)
		return ret;
	ret = nl_resolve(nl);
	if (!ret && (!nl->family || !nl->events_grp))
		ret = -ENOENT;
	if (!ret && join &&
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
		       &nl->events_grp, sizeof(nl->events_grp)))
		ret = -errno;
	if (ret)
		close(nl->fd);
	return ret;
}

/* A NEURON_CMD_EVENT multicast, decoded. */
struct nl_event {
	uint32_t device, core, edge, cause, queues;
	uint64_t count, timestamp;
};

/*
 * Waits for the NEURON_CMD_EVENT of (core, edge) with this count (the
 * per-(core, edge) edge number, the same in the read() event).
 */
static int nl_wait_event(struct nl *nl, uint32_t core, uint32_t edge,
			 uint64_t count, struct nl_event *out, int timeout_ms)
{
	uint64_t deadline = neuron_now_ms() + timeout_ms;
	static char buf[NL_BUFSZ];

	for (;;) {
		int64_t left = (int64_t)(deadline - neuron_now_ms());
		const struct nlmsghdr *h;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = nl_recv(nl->fd, buf, sizeof(buf), (int)left);
		if (n < 0)
			return (int)n;
		for (h = (void *)buf; n > 0 && NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			const struct genlmsghdr *g = NLMSG_DATA(h);
			const struct nlattr *tb[NEURON_A_MAX + 1];
			struct nl_event e = { 0 };

			if (h->nlmsg_type != nl->family || g->cmd != NEURON_CMD_EVENT)
				continue;
			nl_parse((const char *)g + GENL_HDRLEN,
				 (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, tb,
				 NEURON_A_MAX);
			if (!tb[NEURON_A_DEVICE] || !tb[NEURON_A_CORE] || !tb[NEURON_A_EDGE] ||
			    !tb[NEURON_A_CAUSE] || !tb[NEURON_A_QUEUES] ||
			    !tb[NEURON_A_COUNT] || !tb[NEURON_A_TIMESTAMP])
				return -EPROTO;
			e.device = nla_u32(tb[NEURON_A_DEVICE]);
			e.core = nla_u32(tb[NEURON_A_CORE]);
			e.edge = nla_u32(tb[NEURON_A_EDGE]);
			e.cause = nla_u32(tb[NEURON_A_CAUSE]);
			e.queues = nla_u32(tb[NEURON_A_QUEUES]);
			e.count = nla_u64(tb[NEURON_A_COUNT]);
			e.timestamp = nla_u64(tb[NEURON_A_TIMESTAMP]);
			if (e.core == core && e.edge == edge && e.count == count) {
				*out = e;
				return 0;
			}
		}
	}
}

/* ---- device helpers ----------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Waits (poll + read) for an event of (core, edge) whose cause has all
 * bits of @cause and whose queues have all bits of @queues.
 */
static int dev_wait_event(int fd, uint32_t core, uint32_t edge, uint32_t cause,
			  uint32_t queues, struct neuron_event *out,
			  int timeout_ms)
{
	uint64_t deadline = neuron_now_ms() + timeout_ms;
	struct neuron_event evs[32];

	for (;;) {
		int64_t left = (int64_t)(deadline - neuron_now_ms());
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0)
			return -errno;
		if (!(p.revents & POLLIN))
			continue;
		n = read(fd, evs, sizeof(evs));
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n % EV_SIZE)
			return -EPROTO;
		for (size_t i = 0; i < n / EV_SIZE; i++) {
			if (evs[i].core == core && evs[i].edge == edge &&
			    (evs[i].cause & cause) == cause &&
			    (evs[i].queues & queues) == queues) {
				*out = evs[i];
				return 0;
			}
		}
	}
}

/* Reads every queued event (O_NONBLOCK file) and throws them away. */
static int dev_drain_events(int fd)
{
	struct neuron_event evs[64];
	int total = 0;
	ssize_t n;

	while ((n = read(fd, evs, sizeof(evs))) > 0)
		total += n / EV_SIZE;
	return total;
}

/* sysfs intr_counts: the nine tpb_notific_intr counters of @core. */
static int sysfs_intr_counts(uint32_t core, uint64_t counts[9])
{
	char buf[4096], key[16];
	char *line;

	if (neuron_sysfs_read("intr_counts", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), "core%u ", core);
	line = strstr(buf, key);
	if (!line)
		return -1;
	line += strlen(key);
	for (int i = 0; i < 9; i++)
		counts[i] = strtoull(line, &line, 10);
	return 0;
}

/* sysfs edge_counts: edges handled of (core, edge), 0 if unreadable. */
static uint64_t sysfs_edge_count(uint32_t core, uint32_t edge)
{
	char buf[4096], key[16];
	char *p;

	if (neuron_sysfs_read("edge_counts", buf, sizeof(buf)) < 0)
		return 0;
	if (edge == NEURON_EDGE_NOTIFIC)
		snprintf(key, sizeof(key), "core%u ", core);
	else
		snprintf(key, sizeof(key), "%s ",
			 edge == NEURON_EDGE_THROTTLE ? "throttle" : "fault");
	p = strstr(buf, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The counters an edge must move, read before provoking it. */
struct snap {
	uint32_t core, edge;
	uint64_t intr[9];	/* intr_counts of the core (NOTIFIC) */
	uint64_t edges;		/* edge_counts of (core, edge) */
};

static int snap_take(uint32_t core, uint32_t edge, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->core = core;
	s->edge = edge;
	s->edges = sysfs_edge_count(core, edge);
	return edge == NEURON_EDGE_NOTIFIC ? sysfs_intr_counts(core, s->intr) : 0;
}

/* sysfs edge_counts: all edges handled (every core, throttle, fault). */
static uint64_t sysfs_edges_total(void)
{
	char buf[4096];
	uint64_t total = 0;
	char *p;

	if (neuron_sysfs_read("edge_counts", buf, sizeof(buf)) < 0)
		return 0;
	for (p = buf; *p; ) {
		p = strchr(p, ' ');
		if (!p)
			break;
		total += strtoull(p, &p, 10);
	}
	return total;
}

static struct neuron_emu_insn notify_insn(uint16_t seq)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_NOTIFY, 0);

	in.operand.arg.debug_hint_extended = htole16(seq);
	return in;
}

static struct neuron_emu_insn sem_insn(uint8_t op, uint32_t idx, uint32_t value)
{
	struct neuron_emu_insn in = neuron_insn(op, 0);

	in.operand.arg.idx = htole32(idx);
	in.operand.arg.value = htole32(value);
	return in;
}

static int engine_reset(int fd, __u32 core, __u32 engine)
{
	struct neuron_engine_id id = { .core = core, .engine = engine };

	return neuron_ioctl(fd, NEURON_IOC_ENGINE_RESET, &id);
}

static int feature_flags(int fd, __u32 core, __u32 op, __u32 *flags)
{
	struct neuron_feature_flags ff = { .core = core, .op = op, .flags = *flags };
	int ret = neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff);

	*flags = ff.flags;
	return ret;
}

static int evt_sem(int fd, __u32 core, __u32 index, __u32 op, __u32 *value)
{
	struct neuron_evt_sem es = {
		.core = core, .index = index, .op = op, .value = *value,
	};
	int ret = neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &es);

	*value = es.value;
	return ret;
}

static int throttle_arm(int fd, __u32 enable)
{
	struct neuron_throttle t = { .enable = enable };

	return neuron_ioctl(fd, NEURON_IOC_THROTTLE, &t);
}

/* ---- edges through all three channels ---------------------------------- */

FIXTURE(edge)
{
	int fd;		/* ioctls, and its event queue */
	struct nl nl;	/* joined to "events" */
};

FIXTURE_SETUP(edge)
{
	self->fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NEURON_DEV, strerror(errno));
	ASSERT_EQ(0, nl_open_neuron(&self->nl, 1))
		TH_LOG("generic netlink family %s not found", NEURON_GENL_NAME);
}

FIXTURE_TEARDOWN(edge)
{
	close(self->nl.fd);
	close(self->fd);
}

/*
 * The edge of the snapshot's (core, edge) with all of @cause / @queues
 * arrives on read() of the fixture's file and as the same edge (count,
 * cause, queues, timestamp) on netlink; its count is a new one (above the
 * snapshot's edge_counts, at most the current one; for THROTTLE, whose
 * count is the core's, the device's edge_counts moved) and the sysfs
 * counter of each cause bit moved.
 */
static void expect_edge(struct __test_metadata *_metadata, FIXTURE_DATA(edge) *self,
			const struct snap *before, uint32_t cause,
			uint32_t queues, struct neuron_event *out)
{
	uint32_t core = before->core, edge = before->edge;
	struct neuron_event ev = { 0 };
	struct nl_event ne = { 0 };
	struct snap after;

	ASSERT_EQ(0, dev_wait_event(self->fd, core, edge, cause, queues, &ev,
				    NEURON_WAIT_MS))
		TH_LOG("no read() event core %u edge %u cause %#x queues %#x",
		       core, edge, cause, queues);
	EXPECT_EQ(0, ev.device);
	EXPECT_EQ(0, ev.lost);
	EXPECT_LT(0, ev.timestamp_ns);
	EXPECT_GE(mono_ns(), ev.timestamp_ns);	/* CLOCK_MONOTONIC, in the past */

	ASSERT_EQ(0, nl_wait_event(&self->nl, core, edge, ev.count, &ne,
				   NEURON_WAIT_MS))
		TH_LOG("no netlink event core %u edge %u count %llu", core, edge,
		       (unsigned long long)ev.count);
	EXPECT_EQ(0, ne.device);
	EXPECT_EQ(ev.cause, ne.cause);
	EXPECT_EQ(ev.queues, ne.queues);
	EXPECT_EQ(ev.timestamp_ns, ne.timestamp);

	ASSERT_EQ(0, snap_take(core, edge, &after));
	if (edge == NEURON_EDGE_THROTTLE) {
		/*
		 * a THROTTLE event counts its core's edges (UAPI), sysfs the
		 * device's: other cores' throttles (another test, another
		 * tenant) may lie between them, so only the device's moved
		 */
		EXPECT_LT(before->edges, after.edges);
	} else {
		EXPECT_LT(before->edges, ev.count);
		EXPECT_GE(after.edges, ev.count);
	}
	for (int bit = 0; bit < 9 && edge == NEURON_EDGE_NOTIFIC; bit++) {
		if (cause & BIT(bit)) {
			EXPECT_LT(before->intr[bit], after.intr[bit]) TH_LOG("intr_%d", bit);
		}
	}
	if (out)
		*out = ev;
}

/* intr_0: THRESHOLD reached; the bound eventfd is signalled, re-armed by HEAD. */
TEST_F(edge, threshold_eventfd)
{
	struct neuron_nq_init init = { .core = 0, .queue = 1, .size = 4096, .threshold = 3 };
	struct neuron_emu_insn prog[3] = { notify_insn(1), notify_insn(2), notify_insn(3) };
	union neuron_isa_notification recs[3];
	struct neuron_ring ring = { 0 };
	struct neuron_event ev;
	struct snap before;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(0, neuron_nq_bind_eventfd(self->fd, 0, 1, efd));

	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(0, snap_take(0, NEURON_EDGE_NOTIFIC, &before));
		/* two records stay below the threshold: no edge, no signal */
		ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_PE, prog, 2, 0));
		ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 0,
								 NEURON_ENGINE_PE, NEURON_WAIT_MS));
		EXPECT_EQ(0, neuron_eventfd_wait(efd, 200));
		/* the third reaches it */
		ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_PE, &prog[2], 1, 0));
		expect_edge(_metadata, self, &before,
			    BIT(NEURON_NOTIFIC_INTR_THRESHOLD), BIT(1), &ev);
		EXPECT_EQ(1, neuron_eventfd_wait(efd, NEURON_WAIT_MS)) TH_LOG("round %d", round);
		/* the consumer drains and writes HEAD: that re-arms it */
		ASSERT_EQ(0, neuron_ring_read(&ring, recs, 3, NEURON_WAIT_MS));
		for (int i = 0; i < 3; i++) {
			EXPECT_EQ(i + 1, recs[i].explicit_notif.debug_hint_extended);
		}
	}
	/* unbound: the next threshold edge signals nothing */
	ASSERT_EQ(0, neuron_nq_bind_eventfd(self->fd, 0, 1, -1));
	ASSERT_EQ(0, snap_take(0, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_PE, prog, 3, 0));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_THRESHOLD), BIT(1), NULL);
	EXPECT_EQ(0, neuron_eventfd_wait(efd, 200));
	neuron_ring_unmap(&ring);
	close(efd);
}

/* intr_1 (docs/hardware.md#intr-causes): a disabled queue drops the record */
TEST_F(edge, disabled_queue_intr1)
{
	struct neuron_emu_insn prog[1] = { notify_insn(7) };
	struct snap before;

	/* no queue 1 on core 1: the EXPLICIT record has nowhere to go */
	ASSERT_EQ(0, snap_take(1, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_submit(self->fd, 1, NEURON_ENGINE_ACT, prog, 1, 0));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_ACT,
							 NEURON_WAIT_MS));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_DISABLED_QUEUE), 0, NULL);
}

/* intr_2: ignore-full overwrote an unread record. */
TEST_F(edge, ignore_full_intr2)
{
	struct neuron_nq_init init = {
		.core = 0, .queue = 1, .size = 64, .flags = NEURON_NQ_F_IGNORE_FULL,
	};
	struct neuron_emu_insn prog[6];
	struct neuron_nq_info info = { .core = 0, .queue = 1 };
	struct snap before;

	for (int i = 0; i < 6; i++)
		prog[i] = notify_insn(i);
	ASSERT_EQ(0, snap_take(0, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_DVE, prog, 6, 0));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 0, NEURON_ENGINE_DVE,
							 NEURON_WAIT_MS));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_SW_OVERFLOW), 0, NULL);
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(2, info.overflow_count);
}

/* intr_5: a full backpressured queue stalls the engine; draining frees it. */
TEST_F(edge, backpressure_intr5)
{
	struct neuron_nq_init init = { .core = 0, .queue = 1, .size = 64 };
	struct neuron_emu_insn prog[6];
	union neuron_isa_notification recs[6];
	struct neuron_ring ring = { 0 };
	struct neuron_engine_status st;
	struct snap before;

	for (int i = 0; i < 6; i++)
		prog[i] = notify_insn(100 + i);
	ASSERT_EQ(0, snap_take(0, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_SP, prog, 6, 0));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_BACKPRESSURE), 0, NULL);
	ASSERT_EQ(0, neuron_engine_status(self->fd, 0, NEURON_ENGINE_SP, &st));
	EXPECT_EQ(NEURON_ENGINE_WAITING, st.state);
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, 6, NEURON_WAIT_MS));
	for (int i = 0; i < 6; i++) {
		EXPECT_EQ(100 + i, recs[i].explicit_notif.debug_hint_extended);
	}
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 0, NEURON_ENGINE_SP,
							 NEURON_WAIT_MS));
	neuron_ring_unmap(&ring);
}

/* intr_6: a bad opcode halts the engine with a SEQUENCER_FATAL record. */
TEST_F(edge, bad_opcode_intr6)
{
	struct neuron_nq_init init = { .core = 1, .queue = 3, .size = 4096 };
	struct neuron_emu_insn prog[3] = {
		neuron_insn(NEURON_OP_NOP, 0), neuron_insn(0x7f, 0),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	const struct neuron_isa_tpb_error_notification *err;
	union neuron_isa_notification rec;
	struct neuron_ring ring = { 0 };
	struct neuron_engine_status st;
	struct snap before;

	ASSERT_EQ(0, snap_take(1, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(0, neuron_submit(self->fd, 1, NEURON_ENGINE_POOL, prog, 3, 0));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_ENGINE_FATAL), 0, NULL);

	ASSERT_EQ(NEURON_ENGINE_HALTED, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_POOL,
							   NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_ring_read(&ring, &rec, 1, NEURON_WAIT_MS));
	err = &rec.tpb_error;
	EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR, neuron_rec_type(&rec));
	EXPECT_EQ(NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL, err->error_id);
	EXPECT_EQ(NEURON_ISA_SEQ_INFO_BAD_OPCODE, (int)err->metadata_lo.sequencer.info_kind);
	EXPECT_EQ(0x7f, (int)err->metadata_hi.sequencer.info);
	EXPECT_EQ(NEURON_ENGINE_POOL, (int)err->metadata_hi.sequencer.block_id);
	EXPECT_EQ(1, (int)err->metadata_hi.sequencer.program_counter);
	ASSERT_EQ(0, neuron_engine_status(self->fd, 1, NEURON_ENGINE_POOL, &st));
	EXPECT_EQ(NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL, st.last_error);
	/* halted until reset */
	EXPECT_EQ(-EIO, neuron_submit(self->fd, 1, NEURON_ENGINE_POOL, prog, 1, 0));
	ASSERT_EQ(0, engine_reset(self->fd, 1, NEURON_ENGINE_POOL));
	EXPECT_EQ(0, neuron_submit(self->fd, 1, NEURON_ENGINE_POOL, prog, 1, 0));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_POOL,
							 NEURON_WAIT_MS));
	neuron_ring_unmap(&ring);
}

/* intr_7: a HEAD write through the doorbell past TAIL is rejected. */
TEST_F(edge, bad_head_intr7)
{
	struct neuron_nq_init init = { .core = 0, .queue = 6, .size = 4096 };
	struct neuron_nq_info info = { .core = 0, .queue = 6 };
	struct neuron_ring ring = { 0 };
	struct snap before;

	ASSERT_EQ(0, snap_take(0, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	*ring.doorbell = 5;	/* TAIL is 0 */
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_BAD_HEAD), 0, NULL);
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(0, info.head);
	neuron_ring_unmap(&ring);
}

/*
 * FP_ERROR: a non-fatal TPB_ERROR record on the errors queue (NUM3); a
 * threshold of 1 on that queue makes it an edge with its eventfd signalled.
 */
TEST_F(edge, fp_error_record)
{
	struct neuron_nq_init init = { .core = 1, .queue = 3, .size = 4096, .threshold = 1 };
	struct neuron_emu_insn prog[2] = {
		neuron_insn(NEURON_OP_NOP, 0), sem_insn(NEURON_OP_FP_ERROR, 0x15,
							NEURON_ISA_TPB_ERROR_FP_NAN),
	};
	const struct neuron_isa_tpb_error_notification *err;
	union neuron_isa_notification rec;
	struct neuron_ring ring = { 0 };
	struct neuron_engine_status st;
	struct snap before;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, snap_take(1, NEURON_EDGE_NOTIFIC, &before));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(0, neuron_nq_bind_eventfd(self->fd, 1, 3, efd));
	ASSERT_EQ(0, neuron_submit(self->fd, 1, NEURON_ENGINE_DVE, prog, 2, 0));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_THRESHOLD), BIT(3), NULL);
	EXPECT_EQ(1, neuron_eventfd_wait(efd, NEURON_WAIT_MS));

	ASSERT_EQ(0, neuron_ring_read(&ring, &rec, 1, NEURON_WAIT_MS));
	err = &rec.tpb_error;
	EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR, neuron_rec_type(&rec));
	EXPECT_EQ(NEURON_ISA_TPB_ERROR_FP_NAN, err->error_id);
	EXPECT_EQ(NEURON_ISA_SEQ_INFO_FP, (int)err->metadata_lo.sequencer.info_kind);
	EXPECT_EQ(0x15, (int)err->metadata_hi.sequencer.info);
	EXPECT_EQ(NEURON_ENGINE_DVE, (int)err->metadata_hi.sequencer.block_id);
	EXPECT_EQ(1, (int)err->metadata_hi.sequencer.program_counter);
	/* report and go on: not fatal, LAST_ERROR untouched */
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_DVE,
							 NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_engine_status(self->fd, 1, NEURON_ENGINE_DVE, &st));
	EXPECT_NE(NEURON_ISA_TPB_ERROR_FP_NAN, st.last_error);
	neuron_ring_unmap(&ring);
	close(efd);
}

/* THROTTLE: the throttle edge always; the NUM4 record only when armed. */
TEST_F(edge, throttle_edge_and_record)
{
	struct neuron_nq_init init = { .core = 0, .queue = 4, .size = 4096 };
	struct neuron_emu_insn prog[1] = { sem_insn(NEURON_OP_THROTTLE, 0, 3) };
	union neuron_isa_notification rec;
	struct neuron_ring ring = { 0 };
	struct neuron_event ev1, ev2;
	struct snap before;

	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));

	/* disarmed: the edge, no record */
	ASSERT_EQ(0, throttle_arm(self->fd, 0));
	ASSERT_EQ(0, snap_take(0, NEURON_EDGE_THROTTLE, &before));
	ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_ACT, prog, 1, 0));
	expect_edge(_metadata, self, &before, BIT(0), 0, &ev1);
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 0, NEURON_ENGINE_ACT,
							 NEURON_WAIT_MS));
	usleep(100 * 1000);
	EXPECT_EQ(0, neuron_ring_pop(&ring, &rec));

	/* armed: the edge and an ERROR interrupt-form record of group THROTTLE */
	ASSERT_EQ(0, throttle_arm(self->fd, 1));
	prog[0].operand.arg.value = htole32(7);
	ASSERT_EQ(0, snap_take(0, NEURON_EDGE_THROTTLE, &before));
	ASSERT_EQ(0, neuron_submit(self->fd, 0, NEURON_ENGINE_DVE, prog, 1, 0));
	expect_edge(_metadata, self, &before, BIT(0), 0, &ev2);
	EXPECT_LT(ev1.count, ev2.count);
	ASSERT_EQ(0, neuron_ring_read(&ring, &rec, 1, NEURON_WAIT_MS));
	EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_ERROR, neuron_rec_type(&rec));
	EXPECT_EQ(NEURON_ISA_INTERRUPT_GROUP_THROTTLE, (int)rec.interrupt.group);
	EXPECT_EQ(NEURON_ENGINE_DVE, (int)rec.interrupt.block_id);
	EXPECT_EQ(7, rec.interrupt.cause_bits);
	EXPECT_EQ(0, throttle_arm(self->fd, 0));
	neuron_ring_unmap(&ring);
}

/* ---- read() and poll() semantics ---------------------------------------- */

static void *bad_head_later(void *arg)
{
	volatile uint32_t *doorbell = arg;

	usleep(300 * 1000);
	*doorbell = 1000;	/* TAIL is 0: intr_7 */
	return NULL;
}

TEST(read_poll_semantics)
{
	struct neuron_nq_init init = { .core = 0, .queue = 7, .size = 4096 };
	struct neuron_event evs[4];
	struct neuron_ring ring = { 0 };
	struct pollfd p;
	pthread_t thr;
	uint64_t t0, e0;
	char small[EV_SIZE - 1];
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC), nb;
	ssize_t n;

	ASSERT_LE(0, fd);
	nb = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, nb);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));

	/* nothing queued: O_NONBLOCK gives EAGAIN, poll() times out */
	dev_drain_events(nb);
	EXPECT_EQ(-1, read(nb, evs, sizeof(evs)));
	EXPECT_EQ(EAGAIN, errno);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&p, 1, 100));
	/* a buffer smaller than one event */
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(nb, small, 0));
	EXPECT_EQ(EINVAL, errno);

	/* a blocking read() sleeps until an edge comes */
	ASSERT_EQ(0, pthread_create(&thr, NULL, bad_head_later, (void *)ring.doorbell));
	t0 = neuron_now_ms();
	n = read(fd, evs, sizeof(evs));
	EXPECT_LE(200, neuron_now_ms() - t0) TH_LOG("read() did not block");
	pthread_join(thr, NULL);
	ASSERT_LE((ssize_t)EV_SIZE, n);
	EXPECT_EQ(0, n % EV_SIZE);
	EXPECT_EQ(NEURON_EDGE_NOTIFIC, evs[0].edge);
	EXPECT_EQ(0, evs[0].core);
	EXPECT_TRUE(evs[0].cause & BIT(NEURON_NOTIFIC_INTR_BAD_HEAD));

	/* every open file gets its own copy: poll() on the other one */
	p = (struct pollfd){ .fd = nb, .events = POLLIN };
	EXPECT_EQ(1, poll(&p, 1, NEURON_WAIT_MS));
	EXPECT_TRUE(p.revents & POLLIN);
	n = read(nb, evs, sizeof(evs));
	ASSERT_LE((ssize_t)EV_SIZE, n);
	EXPECT_TRUE(evs[0].cause & BIT(NEURON_NOTIFIC_INTR_BAD_HEAD));

	/* several edges, then one read() returns several whole events */
	dev_drain_events(nb);
	e0 = sysfs_edges_total();
	for (int i = 0; i < 3; i++) {
		*ring.doorbell = 2000 + i;
		usleep(100 * 1000);	/* let each be its own edge */
	}
	for (int i = 0; i < 200 && sysfs_edges_total() < e0 + 2; i++)
		usleep(10 * 1000);
	n = read(nb, evs, sizeof(evs));
	ASSERT_LE((ssize_t)(2 * EV_SIZE), n) TH_LOG("got %zd bytes", n);
	EXPECT_EQ(0, n % EV_SIZE);
	for (size_t i = 1; i < n / EV_SIZE; i++) {
		if (evs[i].core == evs[i - 1].core && evs[i].edge == evs[i - 1].edge) {
			EXPECT_LT(evs[i - 1].count, evs[i].count);
		}
	}

	neuron_ring_unmap(&ring);
	close(nb);
	close(fd);
}

/*
 * A file that does not read keeps its NEURON_EVENT_QUEUE_LEN oldest events;
 * the next event queued after room appears reports how many were dropped.
 */
TEST(event_queue_overflow_reports_lost)
{
	struct neuron_nq_init init = { .core = 1, .queue = 8, .size = 4096 };
	struct neuron_event evs[64];
	struct neuron_ring ring = { 0 };
	uint64_t e0, e1, total = 0, lost = 0, first_lost = 0;
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);
	uint32_t got = 0;
	ssize_t n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));
	dev_drain_events(fd);
	e0 = sysfs_edges_total();
	/* bad HEAD writes until well over a queue's worth of edges */
	for (uint32_t i = 0; sysfs_edges_total() - e0 < NEURON_EVENT_QUEUE_LEN + 100; i++) {
		*ring.doorbell = 100 + (i & 0xff);
		usleep(2000);
		ASSERT_GT(20000, i) TH_LOG("edges do not come");
	}
	/* wait for the handlers to settle */
	do {
		e1 = sysfs_edges_total();
		usleep(300 * 1000);
	} while (sysfs_edges_total() != e1);

	/* the oldest NEURON_EVENT_QUEUE_LEN were kept, none reporting a loss */
	while ((n = read(fd, evs, sizeof(evs))) > 0) {
		for (size_t i = 0; i < n / EV_SIZE; i++) {
			EXPECT_EQ(0, evs[i].lost);
		}
		got += n / EV_SIZE;
	}
	EXPECT_EQ(NEURON_EVENT_QUEUE_LEN, got);

	/* one more edge: the next event carries the count of those dropped */
	*ring.doorbell = 9999;
	do {
		e1 = sysfs_edges_total();
		usleep(300 * 1000);
	} while (sysfs_edges_total() != e1);
	while ((n = read(fd, evs, sizeof(evs))) > 0) {
		for (size_t i = 0; i < n / EV_SIZE; i++) {
			if (!total)
				first_lost = evs[i].lost;
			lost += evs[i].lost;
			total++;
		}
	}
	ASSERT_LE(1, total);
	EXPECT_LE(100, first_lost);
	/* every edge was either read or counted as lost */
	EXPECT_EQ(e1 - e0, got + total + lost)
		TH_LOG("edges %llu, read %u + %llu, lost %llu",
		       (unsigned long long)(e1 - e0), got,
		       (unsigned long long)total, (unsigned long long)lost);
	neuron_ring_unmap(&ring);
	close(fd);
}

/* ---- overflow policies under load --------------------------------------- */

#define BP_RECORDS	100000u
#define BP_RING_BYTES	1024u		/* 64 entries */

/*
 * A producer far faster than the consumer: 100,000 EXPLICIT records
 * (debug_hint_extended = sequence number mod 2^16) into a 64-entry ring
 * with backpressure; the consumer drains in batches and naps between them.
 * Nothing may be lost, duplicated or reordered, and the engine must have
 * stalled on the full ring (intr_5) along the way.
 */
TEST_F_TIMEOUT(edge, backpressure_100k_lossless, 180)
{
	struct neuron_nq_init init = { .core = 1, .queue = 1, .size = BP_RING_BYTES };
	struct neuron_nq_info info = { .core = 1, .queue = 1 };
	static struct neuron_emu_insn prog[NEURON_MAX_PROGRAM_INSNS];
	const uint8_t want_type = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_PE,
							     NEURON_ENGINE_RECORD_EXPLICIT);
	struct neuron_engine_status st;
	struct neuron_ring ring = { 0 };
	uint64_t before[9], after[9], t0, t1, deadline;
	uint32_t submitted = 0, seen = 0, batches = 0, stalls = 0;
	double secs;

	ASSERT_EQ(0, sysfs_intr_counts(1, before));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(64, ring.entries);

	t0 = neuron_now_ms();
	deadline = t0 + 150 * 1000;
	while (seen < BP_RECORDS) {
		uint32_t batch = 0;

		if (submitted < BP_RECORDS) {
			ASSERT_EQ(0, neuron_engine_status(self->fd, 1, NEURON_ENGINE_PE, &st));
			if (st.state == NEURON_ENGINE_WAITING)
				stalls++;
			if (st.state == NEURON_ENGINE_IDLE) {
				uint32_t n = BP_RECORDS - submitted;

				if (n > NEURON_MAX_PROGRAM_INSNS)
					n = NEURON_MAX_PROGRAM_INSNS;
				for (uint32_t i = 0; i < n; i++)
					prog[i] = notify_insn((uint16_t)(submitted + i));
				ASSERT_EQ(0, neuron_submit(self->fd, 1, NEURON_ENGINE_PE,
							   prog, n, 0));
				submitted += n;
			}
		}
		/* drain what is there, acknowledge the batch with one HEAD write */
		for (;;) {
			const union neuron_isa_notification *slot =
				&ring.slots[ring.head & (ring.entries - 1)];
			uint8_t hdr = __atomic_load_n(&slot->bytes[NEURON_ISA_HEADER_OFFSET],
						      __ATOMIC_ACQUIRE);

			if (!!(hdr & NEURON_ISA_HEADER_PHASE) !=
			    neuron_expected_phase(ring.head, ring.entries))
				break;
			ASSERT_EQ(want_type, hdr & NEURON_ISA_HEADER_TYPE_MASK);
			ASSERT_EQ(0, hdr & (NEURON_ISA_HEADER_SW_OVF | NEURON_ISA_HEADER_HW_OVF));
			ASSERT_EQ((uint16_t)seen, slot->explicit_notif.debug_hint_extended)
				TH_LOG("record %u out of order", seen);
			ring.head++;
			seen++;
			batch++;
		}
		if (batch) {
			*ring.doorbell = ring.head;
			batches++;
		}
		usleep(50);	/* the slow consumer */
		ASSERT_GT(deadline, neuron_now_ms())
			TH_LOG("only %u of %u records after 150 s", seen, BP_RECORDS);
	}
	t1 = neuron_now_ms();
	secs = (t1 - t0) / 1000.0;

	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(BP_RECORDS, info.tail);
	EXPECT_EQ(BP_RECORDS, info.head);
	EXPECT_EQ(0, info.overflow_count);
	EXPECT_EQ(0, info.drop_count);
	ASSERT_EQ(0, sysfs_intr_counts(1, after));
	EXPECT_LT(before[NEURON_NOTIFIC_INTR_BACKPRESSURE], after[NEURON_NOTIFIC_INTR_BACKPRESSURE])
		TH_LOG("the producer never stalled: not a backpressure test");
	ksft_print_msg("backpressure: %u records through a %u-entry ring in %.2f s: "
		       "%.0f records/s, %u batches (%.1f records each), %u stalls seen, "
		       "%llu intr_5 edges\n",
		       seen, ring.entries, secs, seen / secs, batches,
		       (double)seen / batches, stalls,
		       (unsigned long long)(after[NEURON_NOTIFIC_INTR_BACKPRESSURE] -
					    before[NEURON_NOTIFIC_INTR_BACKPRESSURE]));
	neuron_ring_unmap(&ring);
}

/*
 * Ignore-full: 10 records into a 4-entry ring nobody reads. The 6 written
 * over unread ones carry software_queue_overflow and are counted. HEAD is
 * software's (docs/hardware.md#head-doorbell): the device leaves it at 0,
 * and the consumer's HEAD writes after the lap (7, 8, 9, 10: past the
 * overwritten records) are accepted without a BAD_HEAD edge.
 */
TEST_F(edge, ignore_full_overwrite_detected)
{
	struct neuron_nq_init init = {
		.core = 1, .queue = 1, .size = 64, .flags = NEURON_NQ_F_IGNORE_FULL,
	};
	struct neuron_nq_info info = { .core = 1, .queue = 1 };
	struct neuron_emu_insn prog[10];
	union neuron_isa_notification rec, recs[4];
	struct neuron_ring ring = { 0 };
	uint64_t bad_head0;
	struct snap before, after;

	for (int i = 0; i < 10; i++)
		prog[i] = notify_insn(500 + i);
	ASSERT_EQ(0, snap_take(1, NEURON_EDGE_NOTIFIC, &before));
	bad_head0 = before.intr[NEURON_NOTIFIC_INTR_BAD_HEAD];
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(0, neuron_submit(self->fd, 1, NEURON_ENGINE_ACT, prog, 10, 0));
	/* lossy: the engine never stalls */
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_ACT,
							 NEURON_WAIT_MS));
	expect_edge(_metadata, self, &before,
		    BIT(NEURON_NOTIFIC_INTR_SW_OVERFLOW), 0, NULL);

	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(10, info.tail);
	EXPECT_EQ(0, info.head);	/* the device never moves HEAD */
	EXPECT_EQ(6, info.overflow_count);
	EXPECT_EQ(0, info.drop_count);

	/*
	 * The consumer (at 0) finds a fresh-looking record that is not #0:
	 * slot 0 holds record 8, two passes on, so its phase matches again;
	 * only software_queue_overflow tells.
	 */
	ASSERT_EQ(1, neuron_ring_pop(&ring, &rec));
	EXPECT_EQ(508, rec.explicit_notif.debug_hint_extended);
	EXPECT_TRUE(rec.bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_SW_OVF);
	/* gap detected: resynchronise to the oldest record in the ring, TAIL - 4 */
	ring.head = 6;
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, 4, NEURON_WAIT_MS));
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(506 + i, recs[i].explicit_notif.debug_hint_extended);
		EXPECT_TRUE(recs[i].bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_SW_OVF);
	}
	/* lost = first sequence seen - next expected = the overflow count */
	EXPECT_EQ(info.overflow_count, recs[0].explicit_notif.debug_hint_extended - 500);
	/* HEAD writes 1 (the pop), then 7..10: all accepted, no BAD_HEAD */
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(10, info.head);
	ASSERT_EQ(0, snap_take(1, NEURON_EDGE_NOTIFIC, &after));
	EXPECT_EQ(bad_head0, after.intr[NEURON_NOTIFIC_INTR_BAD_HEAD]);
	neuron_ring_unmap(&ring);
}

/* ---- EVT_SEM ------------------------------------------------------------ */

#define SEM_A	10
#define SEM_B	11
#define SEM_C	12
#define ROUNDS	20

/*
 * Two engines hand work to each other (docs/hardware.md#evt-sem, #completion):
 * ACT counts C and posts A; PE waits for A (WAIT_GE_AND_DEC), counts C and
 * posts B; ACT waits for B, and so on. The EVT_SEM records on queue 2 must show
 * C going 1, 2, 3, ... alternately from ACT and PE, each followed by the post.
 */
TEST(evt_sem_two_engines_in_order)
{
	struct neuron_nq_init init = { .core = 0, .queue = 2, .size = 4096 };
	struct neuron_emu_insn act[3 * ROUNDS], pe[3 * ROUNDS];
	union neuron_isa_notification recs[4 * ROUNDS];
	struct neuron_ring ring = { 0 };
	int fd = neuron_open();
	__u32 v;

	ASSERT_LE(0, fd);
	for (__u32 sem = SEM_A; sem <= SEM_C; sem++) {
		v = 0;
		ASSERT_EQ(0, evt_sem(fd, 0, sem, NEURON_SEM_SET, &v));
	}
	for (int i = 0; i < ROUNDS; i++) {
		act[3 * i] = sem_insn(NEURON_OP_SEM_INC, SEM_C, 1);
		act[3 * i + 1] = sem_insn(NEURON_OP_SEM_INC, SEM_A, 1);
		act[3 * i + 2] = sem_insn(NEURON_OP_WAIT_GE_AND_DEC, SEM_B, 1);
		pe[3 * i] = sem_insn(NEURON_OP_WAIT_GE_AND_DEC, SEM_A, 1);
		pe[3 * i + 1] = sem_insn(NEURON_OP_SEM_INC, SEM_C, 1);
		pe[3 * i + 2] = sem_insn(NEURON_OP_SEM_INC, SEM_B, 1);
	}
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));
	/* the waiter first: it blocks until ACT posts */
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, pe, 3 * ROUNDS, 0));
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_ACT, act, 3 * ROUNDS, 0));
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, 4 * ROUNDS, NEURON_WAIT_MS));

	for (int i = 0; i < 4 * ROUNDS; i++) {
		const struct neuron_isa_evt_sem_notification *r = &recs[i].evt_sem;
		int step = i / 2;		/* C's increment number - 1 */
		int by_act = !(step & 1);
		__u32 engine = by_act ? NEURON_ENGINE_ACT : NEURON_ENGINE_PE;

		EXPECT_EQ(NEURON_ENGINE_NOTIFIC_TYPE(engine, NEURON_ENGINE_RECORD_EVT_SEM),
			  neuron_rec_type(&recs[i])) TH_LOG("record %d", i);
		EXPECT_EQ(engine, r->block_id) TH_LOG("record %d", i);
		EXPECT_EQ(NEURON_EVT_SEM_UPDATE_SEM_INC, (int)r->update_mode);
		EXPECT_EQ(0, (int)r->is_event);
		if (i % 2 == 0) {
			EXPECT_EQ(SEM_C, r->event_semaphore_id) TH_LOG("record %d", i);
			EXPECT_EQ(step + 1, (int)r->event_semaphore_value) TH_LOG("record %d", i);
		} else {
			EXPECT_EQ(by_act ? SEM_A : SEM_B, r->event_semaphore_id)
				TH_LOG("record %d", i);
			EXPECT_EQ(1, r->event_semaphore_value) TH_LOG("record %d", i);
		}
		if (i) {
			EXPECT_LE(recs[i - 1].evt_sem.timestamp, r->timestamp);
		}
	}
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_ACT, NEURON_WAIT_MS));
	/* the waits consumed every post; C counted every step */
	ASSERT_EQ(0, evt_sem(fd, 0, SEM_C, NEURON_SEM_READ, &v));
	EXPECT_EQ(2 * ROUNDS, v);
	ASSERT_EQ(0, evt_sem(fd, 0, SEM_A, NEURON_SEM_READ, &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, evt_sem(fd, 0, SEM_B, NEURON_SEM_READ, &v));
	EXPECT_EQ(0, v);
	neuron_ring_unmap(&ring);
	close(fd);
}

TEST(evt_sem_ioctl)
{
	struct neuron_evt_sem es;
	struct neuron_emu_insn prog[2] = {
		sem_insn(NEURON_OP_WAIT_GE, 200, 3), neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_engine_status st;
	int fd = neuron_open();
	__u32 v;

	ASSERT_LE(0, fd);
	v = 7;
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_SET, &v));
	EXPECT_EQ(7, v);
	v = 5;
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_INC, &v));
	EXPECT_EQ(12, v);
	v = 2;
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_DEC, &v));
	EXPECT_EQ(10, v);
	v = 0xdead;	/* READ ignores the operand */
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_READ, &v));
	EXPECT_EQ(10, v);
	v = 11;		/* modulo 2^32 */
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_DEC, &v));
	EXPECT_EQ(0xffffffffu, v);
	/* another core's semaphore of the same index is another semaphore */
	ASSERT_EQ(0, evt_sem(fd, 0, 200, NEURON_SEM_SET, &(__u32){ 1 }));
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_READ, &v));
	EXPECT_EQ(0xffffffffu, v);

	/* events are 0 or 1 */
	v = 0;
	ASSERT_EQ(0, evt_sem(fd, 1, 255, NEURON_EVENT_CLEAR, &v));
	EXPECT_EQ(0, v);
	v = 42;
	ASSERT_EQ(0, evt_sem(fd, 1, 255, NEURON_EVENT_SET, &v));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, evt_sem(fd, 1, 255, NEURON_EVENT_READ, &v));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, evt_sem(fd, 1, 255, NEURON_EVENT_CLEAR, &v));
	EXPECT_EQ(0, v);

	/* a host increment wakes an engine blocked in WAIT_GE */
	v = 0;
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_SET, &v));
	ASSERT_EQ(0, neuron_submit(fd, 1, NEURON_ENGINE_SP, prog, 2, 0));
	for (int i = 0; i < 500; i++) {
		ASSERT_EQ(0, neuron_engine_status(fd, 1, NEURON_ENGINE_SP, &st));
		if (st.state == NEURON_ENGINE_WAITING)
			break;
		usleep(10 * 1000);
	}
	EXPECT_EQ(NEURON_ENGINE_WAITING, st.state);
	usleep(50 * 1000);	/* and it stays there */
	ASSERT_EQ(0, neuron_engine_status(fd, 1, NEURON_ENGINE_SP, &st));
	EXPECT_EQ(NEURON_ENGINE_WAITING, st.state);
	v = 3;
	ASSERT_EQ(0, evt_sem(fd, 1, 200, NEURON_SEM_INC, &v));
	EXPECT_EQ(3, v);	/* WAIT_GE does not consume */
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 1, NEURON_ENGINE_SP, NEURON_WAIT_MS));

	/* bad inputs */
	es = (struct neuron_evt_sem){ .core = 2, .index = 0, .op = NEURON_SEM_READ };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &es));
	es = (struct neuron_evt_sem){ .core = 0, .index = 256, .op = NEURON_SEM_READ };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &es));
	es = (struct neuron_evt_sem){ .core = 0, .index = 0, .op = NEURON_EVENT_CLEAR + 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &es));
	es = (struct neuron_evt_sem){ .core = 0, .index = 0, .op = NEURON_SEM_READ, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &es));
	close(fd);
}

/* ---- the other new ioctls ------------------------------------------------ */

TEST(feature_flags_get_set)
{
	struct neuron_feature_flags ff;
	__u32 saved[2], v;
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	for (__u32 c = 0; c < 2; c++) {
		ASSERT_EQ(0, feature_flags(fd, c, NEURON_FEATURE_OP_GET, &saved[c]));
	}

	for (__u32 flags = 0; flags <= NEURON_FEATURE_MASK; flags++) {
		v = flags;
		ASSERT_EQ(0, feature_flags(fd, 1, NEURON_FEATURE_OP_SET, &v));
		v = 0xffff;
		ASSERT_EQ(0, feature_flags(fd, 1, NEURON_FEATURE_OP_GET, &v));
		EXPECT_EQ(flags, v);
	}
	/* per core */
	v = NEURON_FEATURE_DGE_PACKET_NOTIF;
	ASSERT_EQ(0, feature_flags(fd, 0, NEURON_FEATURE_OP_SET, &v));
	v = 0;
	ASSERT_EQ(0, feature_flags(fd, 1, NEURON_FEATURE_OP_SET, &v));
	ASSERT_EQ(0, feature_flags(fd, 0, NEURON_FEATURE_OP_GET, &v));
	EXPECT_EQ(NEURON_FEATURE_DGE_PACKET_NOTIF, v);

	/* unknown bits, bad core, bad op, reserved fields */
	v = NEURON_FEATURE_MASK + 1;
	EXPECT_EQ(-EINVAL, feature_flags(fd, 0, NEURON_FEATURE_OP_SET, &v));
	v = 1u << 31;
	EXPECT_EQ(-EINVAL, feature_flags(fd, 0, NEURON_FEATURE_OP_SET, &v));
	v = 0;
	EXPECT_EQ(-EINVAL, feature_flags(fd, 2, NEURON_FEATURE_OP_GET, &v));
	EXPECT_EQ(-EINVAL, feature_flags(fd, 0, 2, &v));
	ff = (struct neuron_feature_flags){ .op = NEURON_FEATURE_OP_GET, .reserved0 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	ff = (struct neuron_feature_flags){ .op = NEURON_FEATURE_OP_GET, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	/* a rejected SET changed nothing */
	ASSERT_EQ(0, feature_flags(fd, 0, NEURON_FEATURE_OP_GET, &v));
	EXPECT_EQ(NEURON_FEATURE_DGE_PACKET_NOTIF, v);

	for (__u32 c = 0; c < 2; c++) {
		ASSERT_EQ(0, feature_flags(fd, c, NEURON_FEATURE_OP_SET, &saved[c]));
	}
	close(fd);
}

TEST(throttle_ioctl_bad_inputs)
{
	struct neuron_throttle t;
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	t = (struct neuron_throttle){ .enable = 2 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_THROTTLE, &t));
	t = (struct neuron_throttle){ .reserved0 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_THROTTLE, &t));
	t = (struct neuron_throttle){ .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_THROTTLE, &t));
	EXPECT_EQ(0, throttle_arm(fd, 1));
	EXPECT_EQ(0, throttle_arm(fd, 0));
	close(fd);
}

TEST(nq_eventfd_ioctl)
{
	struct neuron_nq_init init = { .core = 0, .queue = 1, .size = 4096, .threshold = 1 };
	struct neuron_emu_insn prog[1] = { notify_insn(1) };
	struct neuron_nq_eventfd b;
	int fd = neuron_open(), other = neuron_open();
	int efd1 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int efd3 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int pipefd[2];

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	ASSERT_LE(0, efd1);
	ASSERT_LE(0, efd2);
	ASSERT_LE(0, efd3);
	ASSERT_EQ(0, pipe(pipefd));

	/* no such queue, or another file's */
	EXPECT_EQ(-ENOENT, neuron_nq_bind_eventfd(fd, 0, 1, efd1));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	EXPECT_EQ(-ENOENT, neuron_nq_bind_eventfd(other, 0, 1, efd1));
	/* range, reserved, not an open fd, not an eventfd */
	EXPECT_EQ(-EINVAL, neuron_nq_bind_eventfd(fd, 2, 1, efd1));
	EXPECT_EQ(-EINVAL, neuron_nq_bind_eventfd(fd, 0, 10, efd1));
	b = (struct neuron_nq_eventfd){ .core = 0, .queue = 1, .fd = efd1, .reserved0 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_NQ_EVENTFD, &b));
	b = (struct neuron_nq_eventfd){ .core = 0, .queue = 1, .fd = efd1, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_NQ_EVENTFD, &b));
	EXPECT_EQ(-EBADF, neuron_nq_bind_eventfd(fd, 0, 1, 1000));
	EXPECT_EQ(-EBADF, neuron_nq_bind_eventfd(fd, 0, 1, -2));
	EXPECT_EQ(-EINVAL, neuron_nq_bind_eventfd(fd, 0, 1, pipefd[0]));
	EXPECT_EQ(-EINVAL, neuron_nq_bind_eventfd(fd, 0, 1, fd));
	/* unbinding an unbound queue is fine */
	EXPECT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, -1));

	/* rebinding replaces: only the second one is signalled */
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, efd1));
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, efd2));
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 1, 0));
	EXPECT_EQ(1, neuron_eventfd_wait(efd2, NEURON_WAIT_MS));
	EXPECT_EQ(0, neuron_eventfd_wait(efd1, 200));

	/* the binding holds its own reference: closing the fd is harmless */
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, efd3));
	close(efd3);
	ASSERT_EQ(0, neuron_nq_destroy(fd, 0, 1));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 1, 0));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));

	/* the binding ended with the queue: the new queue 1 signals nobody */
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, efd2));
	ASSERT_EQ(0, neuron_nq_destroy(fd, 0, 1));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 1, 0));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));
	EXPECT_EQ(0, neuron_eventfd_wait(efd2, 300));
	EXPECT_EQ(0, neuron_eventfd_wait(efd1, 0));

	/* and a bound queue torn down by close() leaves nothing behind */
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, efd1));
	close(pipefd[0]);
	close(pipefd[1]);
	close(other);
	close(fd);
	close(efd1);
	close(efd2);
}

/* ---- generic netlink family -------------------------------------------- */

TEST(netlink_family_registered)
{
	struct nl nl;

	ASSERT_EQ(0, nl_open_neuron(&nl, 0)) TH_LOG("CTRL_CMD_GETFAMILY %s", NEURON_GENL_NAME);
	EXPECT_NE(0, nl.family);
	EXPECT_EQ(NEURON_GENL_VERSION, nl.version);
	EXPECT_NE(0, nl.events_grp);
	/* GET_DEVICE: do and dump; GET_NQ: dump only; both with a policy */
	EXPECT_EQ(GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP | GENL_CMD_CAP_HASPOL,
		  nl.op_flags[NEURON_CMD_GET_DEVICE] &
		  (GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP | GENL_CMD_CAP_HASPOL));
	EXPECT_EQ(GENL_CMD_CAP_DUMP | GENL_CMD_CAP_HASPOL,
		  nl.op_flags[NEURON_CMD_GET_NQ] &
		  (GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP | GENL_CMD_CAP_HASPOL));
	/* the events group is open to anyone: joining works */
	EXPECT_EQ(0, setsockopt(nl.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				&nl.events_grp, sizeof(nl.events_grp)));
	close(nl.fd);
}

/* Everything one GET_DEVICE message said. */
struct nl_device {
	int msgs;
	uint32_t device, num_cores, gen;
	uint16_t vendor, pci_device;
	uint64_t mem_size, throttle, faults;
	int have_throttle, have_faults;
	int nests;
	uint64_t intr[2][9];
	int intr_n[2];
	int unknown_attrs;
};

static void nl_device_cb(const struct nlmsghdr *h, void *ctx)
{
	struct nl_device *d = ctx;
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *a = (const void *)((const char *)g + GENL_HDRLEN);
	int len = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	if (g->cmd != NEURON_CMD_GET_DEVICE)
		return;
	d->msgs++;
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		switch (a->nla_type & NLA_TYPE_MASK) {
		case NEURON_A_DEVICE:
			d->device = nla_u32(a);
			break;
		case NEURON_A_PCI_VENDOR:
			d->vendor = nla_u16(a);
			break;
		case NEURON_A_PCI_DEVICE:
			d->pci_device = nla_u16(a);
			break;
		case NEURON_A_NUM_CORES:
			d->num_cores = nla_u32(a);
			break;
		case NEURON_A_GEN:
			d->gen = nla_u32(a);
			break;
		case NEURON_A_MEM_SIZE:
			d->mem_size = nla_u64(a);
			break;
		case NEURON_A_THROTTLE_COUNT:
			d->throttle = nla_u64(a);
			d->have_throttle = 1;
			break;
		case NEURON_A_FAULT_COUNT:
			d->faults = nla_u64(a);
			d->have_faults = 1;
			break;
		case NEURON_A_PAD:
			break;
		case NEURON_A_INTR_COUNTS: {
			const struct nlattr *n = NLA_DATA(a);
			int nlen = NLA_LEN(a), core = -1, k = 0;

			d->nests++;
			while (nlen >= NLA_HDRLEN && n->nla_len >= NLA_HDRLEN &&
			       n->nla_len <= nlen) {
				if (n->nla_type == NEURON_A_CORE)
					core = (int)nla_u32(n);
				else if (n->nla_type == NEURON_A_COUNT && core >= 0 &&
					 core < 2 && k < 9)
					d->intr[core][k++] = nla_u64(n);
				nlen -= NLA_ALIGN(n->nla_len);
				n = (const void *)((const char *)n + NLA_ALIGN(n->nla_len));
			}
			if (core >= 0 && core < 2)
				d->intr_n[core] = k;
			break;
		}
		default:
			d->unknown_attrs++;
			break;
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

TEST(netlink_get_device)
{
	struct nl_device d = { 0 };
	struct nl_req r;
	struct nl nl;
	uint64_t sysfs[9];

	ASSERT_EQ(0, nl_open_neuron(&nl, 0));
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	ASSERT_EQ(0, nl_transact(&nl, &r, nl_device_cb, &d, NULL));
	ASSERT_EQ(1, d.msgs);
	EXPECT_EQ(0, d.device);
	EXPECT_EQ(NEURON_PCI_VENDOR_ID, d.vendor);
	EXPECT_EQ(NEURON_PCI_DEVICE_ID, d.pci_device);
	EXPECT_EQ(2, d.num_cores);
	EXPECT_EQ(NEURON_GEN_CAYMAN, d.gen);
	EXPECT_EQ(64ull << 20, d.mem_size);
	EXPECT_TRUE(d.have_throttle);
	EXPECT_TRUE(d.have_faults);
	EXPECT_EQ(0, d.unknown_attrs);	/* in particular, no address */
	/* one nest per core with its nine cause counters, as sysfs has them */
	EXPECT_EQ(2, d.nests);
	for (uint32_t c = 0; c < 2; c++) {
		EXPECT_EQ(9, d.intr_n[c]);
		ASSERT_EQ(0, sysfs_intr_counts(c, sysfs));
		for (int i = 0; i < 9; i++) {
			EXPECT_EQ(sysfs[i], d.intr[c][i]) TH_LOG("core %u intr_%d", c, i);
		}
	}

	/* the dump lists every device: the VM has one */
	memset(&d, 0, sizeof(d));
	nl_req_init(&r, nl.family, NLM_F_DUMP, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	ASSERT_EQ(0, nl_transact(&nl, &r, nl_device_cb, &d, NULL));
	EXPECT_EQ(1, d.msgs);
	EXPECT_EQ(0, d.device);
	EXPECT_EQ(2, d.nests);
	close(nl.fd);
}

/* A bad request fails with @err and an extended ack; returns the ack. */
static struct nl_result nl_bad(struct __test_metadata *_metadata, struct nl *nl,
			       struct nl_req *r, int err)
{
	struct nl_result res;

	EXPECT_EQ(err, nl_transact(nl, r, NULL, NULL, &res)) TH_LOG("ack: \"%s\"", res.msg);
	return res;
}

TEST(netlink_bad_requests)
{
	struct nl_device d = { 0 };
	struct nl_result res;
	struct nl_req r;
	struct nl nl;
	uint64_t u64 = 0;
	uint16_t u16 = 0;
	uint32_t off;

	ASSERT_EQ(0, nl_open_neuron(&nl, 0));

	/* GET_DEVICE without NEURON_A_DEVICE: the ack names the missing type */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	res = nl_bad(_metadata, &nl, &r, -EINVAL);
	EXPECT_TRUE(res.has_miss_type);
	EXPECT_EQ(NEURON_A_DEVICE, res.miss_type);
	EXPECT_NE(0, res.msg[0]);

	/* an unknown device: -ENODEV pointing at the attribute */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	off = nl_req_put_u32(&r, NEURON_A_DEVICE, 7);
	res = nl_bad(_metadata, &nl, &r, -ENODEV);
	EXPECT_NE(0, res.msg[0]);
	EXPECT_TRUE(res.has_offs);
	EXPECT_EQ(off, res.offs);

	/* oversized and undersized NEURON_A_DEVICE (a u32) */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	off = nl_req_put(&r, NEURON_A_DEVICE, &u64, sizeof(u64));
	res = nl_bad(_metadata, &nl, &r, -EINVAL);
	EXPECT_TRUE(res.has_offs);
	EXPECT_EQ(off, res.offs);
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	off = nl_req_put(&r, NEURON_A_DEVICE, &u16, sizeof(u16));
	res = nl_bad(_metadata, &nl, &r, -EINVAL);
	EXPECT_TRUE(res.has_offs);
	EXPECT_EQ(off, res.offs);

	/* the right type with the nested flag */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	off = nl_req_put_u32(&r, NEURON_A_DEVICE | NLA_F_NESTED, 0);
	res = nl_bad(_metadata, &nl, &r, -EINVAL);
	EXPECT_TRUE(res.has_offs);

	/* attributes a request may not carry: a reply attribute, an unknown type */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	off = nl_req_put_u32(&r, NEURON_A_HEAD, 0);
	res = nl_bad(_metadata, &nl, &r, -EINVAL);
	EXPECT_TRUE(res.has_offs);
	EXPECT_EQ(off, res.offs);
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	off = nl_req_put_u32(&r, 200, 0);
	res = nl_bad(_metadata, &nl, &r, -EINVAL);
	EXPECT_TRUE(res.has_offs);
	EXPECT_EQ(off, res.offs);

	/* dumps are validated as strictly */
	nl_req_init(&r, nl.family, NLM_F_DUMP, NEURON_CMD_GET_NQ, NEURON_GENL_VERSION);
	nl_req_put(&r, NEURON_A_DEVICE, &u64, sizeof(u64));
	nl_bad(_metadata, &nl, &r, -EINVAL);
	nl_req_init(&r, nl.family, NLM_F_DUMP, NEURON_CMD_GET_NQ, NEURON_GENL_VERSION);
	off = nl_req_put_u32(&r, NEURON_A_DEVICE, 9);
	res = nl_bad(_metadata, &nl, &r, -ENODEV);
	EXPECT_NE(0, res.msg[0]);

	/* operations that do not exist */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_NQ, NEURON_GENL_VERSION);
	nl_bad(_metadata, &nl, &r, -EOPNOTSUPP);
	nl_req_init(&r, nl.family, 0, NEURON_CMD_EVENT, NEURON_GENL_VERSION);
	nl_bad(_metadata, &nl, &r, -EOPNOTSUPP);
	nl_req_init(&r, nl.family, 0, 99, NEURON_GENL_VERSION);
	nl_bad(_metadata, &nl, &r, -EOPNOTSUPP);

	/* and after all that, a good request still works */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	EXPECT_EQ(0, nl_transact(&nl, &r, nl_device_cb, &d, NULL));
	EXPECT_EQ(1, d.msgs);
	close(nl.fd);
}

/* GET_NQ dump messages, decoded. */
struct nl_nq {
	uint32_t device, core, queue, head, tail, size, flags;
	uint8_t phase;
	uint64_t overflow, drops, thresholds;
	int have;	/* bit per attribute type seen */
};

struct nl_nq_list {
	int n;
	struct nl_nq q[32];
};

static void nl_nq_cb(const struct nlmsghdr *h, void *ctx)
{
	struct nl_nq_list *l = ctx;
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *tb[NEURON_A_MAX + 1];
	struct nl_nq *q;

	if (g->cmd != NEURON_CMD_GET_NQ || l->n >= 32)
		return;
	q = &l->q[l->n++];
	nl_parse((const char *)g + GENL_HDRLEN,
		 (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, tb, NEURON_A_MAX);
	for (int t = 0; t <= NEURON_A_MAX; t++)
		if (tb[t])
			q->have |= 1 << t;
#define GET(field, attr, fn) do { if (tb[attr]) q->field = fn(tb[attr]); } while (0)
	GET(device, NEURON_A_DEVICE, nla_u32);
	GET(core, NEURON_A_CORE, nla_u32);
	GET(queue, NEURON_A_QUEUE, nla_u32);
	GET(head, NEURON_A_HEAD, nla_u32);
	GET(tail, NEURON_A_TAIL, nla_u32);
	GET(size, NEURON_A_SIZE, nla_u32);
	GET(flags, NEURON_A_FLAGS, nla_u32);
	GET(overflow, NEURON_A_OVERFLOW_COUNT, nla_u64);
	GET(drops, NEURON_A_DROP_COUNT, nla_u64);
	GET(thresholds, NEURON_A_THRESHOLD_COUNT, nla_u64);
#undef GET
	if (tb[NEURON_A_PHASE])
		q->phase = *(const uint8_t *)NLA_DATA(tb[NEURON_A_PHASE]);
}

static const struct nl_nq *nl_nq_find(const struct nl_nq_list *l, uint32_t core,
				      uint32_t queue)
{
	for (int i = 0; i < l->n; i++)
		if (l->q[i].core == core && l->q[i].queue == queue)
			return &l->q[i];
	return NULL;
}

TEST(netlink_get_nq_dump)
{
	struct neuron_nq_init a = { .core = 1, .queue = 2, .size = 4096, .threshold = 2 };
	struct neuron_nq_init b = {
		.core = 0, .queue = 9, .size = 64,
		.flags = NEURON_NQ_F_DEVICE_MEM | NEURON_NQ_F_IGNORE_FULL,
	};
	struct neuron_emu_insn prog[3] = {
		sem_insn(NEURON_OP_SEM_INC, 3, 1), sem_insn(NEURON_OP_SEM_INC, 3, 1),
		sem_insn(NEURON_OP_SEM_INC, 3, 1),
	};
	const int want = (1 << NEURON_A_DEVICE) | (1 << NEURON_A_CORE) |
		(1 << NEURON_A_QUEUE) | (1 << NEURON_A_HEAD) | (1 << NEURON_A_TAIL) |
		(1 << NEURON_A_PHASE) | (1 << NEURON_A_SIZE) | (1 << NEURON_A_FLAGS) |
		(1 << NEURON_A_OVERFLOW_COUNT) | (1 << NEURON_A_DROP_COUNT) |
		(1 << NEURON_A_THRESHOLD_COUNT);
	union neuron_isa_notification rec;
	struct neuron_ring ring = { 0 };
	struct neuron_event ev;
	struct nl_nq_list l;
	const struct nl_nq *q;
	struct nl_req r;
	struct nl nl;
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, nl_open_neuron(&nl, 0));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &a));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &b));
	ASSERT_EQ(0, neuron_ring_map(fd, &a, &ring));
	/* three EVT_SEM records to core 1 queue 2, one of them consumed */
	ASSERT_EQ(0, neuron_submit(fd, 1, NEURON_ENGINE_ACT, prog, 3, 0));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 1, NEURON_ENGINE_ACT,
							 NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_ring_read(&ring, &rec, 1, NEURON_WAIT_MS));
	/*
	 * The interrupt thread counts the threshold hit before it queues the
	 * edge's event, and with several CPUs it may run after the engine went
	 * idle: wait for the event, then the count is in place.
	 */
	ASSERT_EQ(0, dev_wait_event(fd, 1, NEURON_EDGE_NOTIFIC,
				    1u << NEURON_NOTIFIC_INTR_THRESHOLD, 1u << 2,
				    &ev, NEURON_WAIT_MS));

	for (int filtered = 0; filtered < 2; filtered++) {
		memset(&l, 0, sizeof(l));
		nl_req_init(&r, nl.family, NLM_F_DUMP, NEURON_CMD_GET_NQ, NEURON_GENL_VERSION);
		if (filtered)
			nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
		ASSERT_EQ(0, nl_transact(&nl, &r, nl_nq_cb, &l, NULL));
		EXPECT_EQ(2, l.n) TH_LOG("live queues listed (filtered %d)", filtered);

		q = nl_nq_find(&l, 1, 2);
		ASSERT_NE(NULL, q);
		EXPECT_EQ(want, q->have & ~(1 << NEURON_A_PAD));
		EXPECT_EQ(0, q->device);
		EXPECT_EQ(1, q->head);
		EXPECT_EQ(3, q->tail);
		EXPECT_EQ(1, q->phase);
		EXPECT_EQ(4096, q->size);
		EXPECT_EQ(0, q->flags);
		EXPECT_EQ(0, q->overflow);
		EXPECT_EQ(0, q->drops);
		EXPECT_LE(1, q->thresholds);	/* 2 unread reached THRESHOLD 2 */

		q = nl_nq_find(&l, 0, 9);
		ASSERT_NE(NULL, q);
		EXPECT_EQ(0, q->head);
		EXPECT_EQ(0, q->tail);
		EXPECT_EQ(1, q->phase);
		EXPECT_EQ(64, q->size);
		EXPECT_EQ(NEURON_NQ_F_DEVICE_MEM | NEURON_NQ_F_IGNORE_FULL, q->flags);
	}

	/* a destroyed queue is gone from the list */
	ASSERT_EQ(0, neuron_nq_destroy(fd, 0, 9));
	memset(&l, 0, sizeof(l));
	nl_req_init(&r, nl.family, NLM_F_DUMP, NEURON_CMD_GET_NQ, NEURON_GENL_VERSION);
	ASSERT_EQ(0, nl_transact(&nl, &r, nl_nq_cb, &l, NULL));
	EXPECT_EQ(1, l.n);
	EXPECT_EQ(NULL, nl_nq_find(&l, 0, 9));
	neuron_ring_unmap(&ring);
	close(nl.fd);
	close(fd);
}

/* ---- remove() with readers, bound eventfds and listeners ------------------ */

static void *blocked_read(void *arg)
{
	int fd = *(int *)arg;
	struct neuron_event ev;
	ssize_t n;

	do {
		n = read(fd, &ev, sizeof(ev));
	} while (n > 0);	/* events queued before the removal come first */
	return (void *)(intptr_t)(n < 0 ? -errno : 0);
}

static int write_sysfs(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Last, in a fixture of their own: these take the device away and back. */
FIXTURE(removal)
{
	int unused;
};

FIXTURE_SETUP(removal)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(removal)
{
}

/*
 * Unbinding the PCI function while a reader is blocked in read(), a queue
 * has a bound eventfd and a mapped ring, and a netlink socket listens: the
 * reader wakes with -ENODEV, poll() reports a hang-up, calls fail with
 * -ENODEV, netlink no longer finds the device, nothing oopses (the runner
 * checks dmesg). Binding again brings /dev/nnq0 back.
 */
TEST_F(removal, unbind_with_readers_eventfds_listeners)
{
	struct neuron_nq_init init = { .core = 0, .queue = 1, .size = 4096, .threshold = 1 };
	struct neuron_nq_info info = { .core = 0, .queue = 1 };
	struct neuron_device_info dinfo;
	struct neuron_ring ring = { 0 };
	struct nl_device d = { 0 };
	struct pollfd p;
	struct nl_req r;
	struct nl nl;
	char link[256], *bdf;
	pthread_t thr;
	void *thr_ret;
	ssize_t n;
	int reader, fd, efd, again = -1;

	n = readlink("/sys/class/nnq/nnq0/device", link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = '\0';
	bdf = strrchr(link, '/');
	bdf = bdf ? bdf + 1 : link;

	reader = neuron_open();
	fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, reader);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, nl_open_neuron(&nl, 1));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 0, 1, efd));
	ASSERT_EQ(0, pthread_create(&thr, NULL, blocked_read, &reader));
	usleep(200 * 1000);

	ASSERT_EQ(0, write_sysfs("/sys/bus/pci/drivers/nnq/unbind", bdf))
		TH_LOG("unbind %s", bdf);

	ASSERT_EQ(0, pthread_join(thr, &thr_ret));
	EXPECT_EQ(-ENODEV, (int)(intptr_t)thr_ret);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	EXPECT_EQ(1, poll(&p, 1, 1000));
	EXPECT_TRUE(p.revents & (POLLHUP | POLLERR));
	dev_drain_events(fd);
	EXPECT_EQ(-1, read(fd, &dinfo, EV_SIZE));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-ENODEV, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(-ENODEV, neuron_nq_bind_eventfd(fd, 0, 1, -1));
	EXPECT_EQ(-ENODEV, neuron_ioctl(reader, NEURON_IOC_DEVICE_INFO, &dinfo));
	/* the eventfd is still ours and fine */
	EXPECT_EQ(0, neuron_eventfd_wait(efd, 0));
	/* netlink: the device is gone, the family is still there */
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	EXPECT_EQ(-ENODEV, nl_transact(&nl, &r, NULL, NULL, NULL));
	nl_req_init(&r, nl.family, NLM_F_DUMP, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	EXPECT_EQ(0, nl_transact(&nl, &r, nl_device_cb, &d, NULL));
	EXPECT_EQ(0, d.msgs);
	EXPECT_GT(0, neuron_open());

	neuron_ring_unmap(&ring);
	close(efd);
	close(fd);
	close(reader);

	/* bind again: the device comes back as neuron0 */
	ASSERT_EQ(0, write_sysfs("/sys/bus/pci/drivers/nnq/bind", bdf));
	for (int i = 0; i < 100 && again < 0; i++) {
		again = neuron_open();
		if (again < 0)
			usleep(50 * 1000);
	}
	ASSERT_LE(0, again);
	EXPECT_EQ(0, neuron_ioctl(again, NEURON_IOC_DEVICE_INFO, &dinfo));
	nl_req_init(&r, nl.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	memset(&d, 0, sizeof(d));
	EXPECT_EQ(0, nl_transact(&nl, &r, nl_device_cb, &d, NULL));
	EXPECT_EQ(1, d.msgs);
	close(again);
	close(nl.fd);
}

static int wait_for_device(void)
{
	for (int i = 0; i < 200; i++) {
		int fd = neuron_open();

		if (fd >= 0)
			return fd;
		usleep(50 * 1000);
	}
	return -1;
}

/*
 * Unloading the module while a netlink socket listens on "events" and an
 * eventfd that was bound to a queue is still open: the family goes away,
 * the socket and the eventfd stay usable, nothing oopses; loading it again
 * brings the family and the device back.
 */
TEST_F(removal, module_reload_with_listener)
{
	static const char ko[] = "/lib/neuron/nnq.ko";
	struct neuron_nq_init init = { .core = 1, .queue = 1, .size = 4096, .threshold = 1 };
	struct nl listener, probe;
	struct nl_device d = { 0 };
	struct nl_req r;
	int fd, efd;

	if (access(ko, R_OK))
		SKIP(return, "%s not found", ko);
	ASSERT_EQ(0, nl_open_neuron(&listener, 1));
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	fd = neuron_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_nq_bind_eventfd(fd, 1, 1, efd));
	close(fd);	/* an open file would keep the module loaded */

	ASSERT_EQ(0, system("rmmod nnq"));
	ASSERT_EQ(0, nl_open(&probe));
	EXPECT_EQ(-ENOENT, nl_resolve(&probe));
	close(probe.fd);
	EXPECT_EQ(0, neuron_eventfd_wait(efd, 0));

	ASSERT_EQ(0, system("insmod /lib/neuron/nnq.ko"));
	fd = wait_for_device();
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, nl_open_neuron(&probe, 1));
	nl_req_init(&r, probe.family, 0, NEURON_CMD_GET_DEVICE, NEURON_GENL_VERSION);
	nl_req_put_u32(&r, NEURON_A_DEVICE, 0);
	EXPECT_EQ(0, nl_transact(&probe, &r, nl_device_cb, &d, NULL));
	EXPECT_EQ(1, d.msgs);
	close(probe.fd);
	close(listener.fd);
	close(efd);
}

TEST_HARNESS_MAIN
