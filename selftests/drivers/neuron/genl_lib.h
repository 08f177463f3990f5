/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw generic netlink client for the family "neuron" (the kselftests are
 * static binaries: no libmnl): resolve the family and its "events" group,
 * send a request, read its answer up to ACK/DONE. Shared by robust_test.c
 * and tenancy_test.c. Include after neuron_lib.h.
 */
#ifndef NEURON_GENL_LIB_H
#define NEURON_GENL_LIB_H

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#define NL_BUF	(64 * 1024)

struct nlc {
	int fd;
	uint32_t seq;
	uint16_t family;
	uint32_t events_grp;
};

#define NLA_DATA(a)	((void *)((char *)(a) + NLA_HDRLEN))
#define NLA_PLEN(a)	((int)(a)->nla_len - NLA_HDRLEN)

static inline int nlc_send(struct nlc *nl, uint16_t type, uint16_t flags,
			   uint8_t cmd, const struct nlattr *attrs, size_t alen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[512];
	struct nlmsghdr *h = (void *)buf;
	struct genlmsghdr *g = NLMSG_DATA(h);

	memset(buf, 0, sizeof(buf));
	h->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + alen;
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++nl->seq;
	g->cmd = cmd;
	g->version = 1;
	if (alen)
		memcpy((char *)g + GENL_HDRLEN, attrs, alen);
	return sendto(nl->fd, buf, h->nlmsg_len, 0, (void *)&sa, sizeof(sa)) ==
	       (ssize_t)h->nlmsg_len ? 0 : -errno;
}

typedef void (*nlc_cb)(const struct nlattr *attrs, int len, void *ctx);

/* Reads the answer to the last request up to ACK/DONE; -errno or 0. */
static inline int nlc_answer(struct nlc *nl, nlc_cb cb, void *ctx)
{
	static char buf[NL_BUF];
	struct pollfd p = { .fd = nl->fd, .events = POLLIN };

	for (;;) {
		struct nlmsghdr *h;
		ssize_t n;

		if (poll(&p, 1, NEURON_WAIT_MS) != 1)
			return -ETIMEDOUT;
		n = recv(nl->fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (h = (void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != nl->seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb)
				cb((void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN),
				   (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, ctx);
		}
	}
}

static inline void nlc_family_cb(const struct nlattr *a, int len, void *ctx)
{
	struct nlc *nl = ctx;

	for (; len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len;
	     len -= NLA_ALIGN(a->nla_len),
	     a = (void *)((char *)a + NLA_ALIGN(a->nla_len))) {
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
			memcpy(&nl->family, NLA_DATA(a), 2);
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GROUPS) {
			const struct nlattr *g = NLA_DATA(a);
			int glen = NLA_PLEN(a);

			for (; glen >= NLA_HDRLEN && g->nla_len >= NLA_HDRLEN &&
			       g->nla_len <= glen;
			     glen -= NLA_ALIGN(g->nla_len),
			     g = (void *)((char *)g + NLA_ALIGN(g->nla_len))) {
				const struct nlattr *f = NLA_DATA(g);
				int flen = NLA_PLEN(g);
				uint32_t id = 0;
				bool events = false;

				for (; flen >= NLA_HDRLEN && f->nla_len >= NLA_HDRLEN &&
				       f->nla_len <= flen;
				     flen -= NLA_ALIGN(f->nla_len),
				     f = (void *)((char *)f + NLA_ALIGN(f->nla_len))) {
					if (f->nla_type == CTRL_ATTR_MCAST_GRP_ID)
						memcpy(&id, NLA_DATA(f), 4);
					if (f->nla_type == CTRL_ATTR_MCAST_GRP_NAME &&
					    !strcmp(NLA_DATA(f), NEURON_GENL_MCGRP_EVENTS))
						events = true;
				}
				if (events)
					nl->events_grp = id;
			}
		}
	}
}

/* Opens a generic netlink socket and resolves family "neuron". */
static inline int nlc_open(struct nlc *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char abuf[64];
	struct nlattr *a = (void *)abuf;
	int ret;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -errno;
	if (bind(nl->fd, (void *)&sa, sizeof(sa))) {
		ret = -errno;
		close(nl->fd);
		return ret;
	}
	nl->seq = (uint32_t)getpid() << 8;
	memset(abuf, 0, sizeof(abuf));
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(NEURON_GENL_NAME);
	memcpy(NLA_DATA(a), NEURON_GENL_NAME, sizeof(NEURON_GENL_NAME));
	ret = nlc_send(nl, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY, a,
		       NLA_ALIGN(a->nla_len));
	if (!ret)
		ret = nlc_answer(nl, nlc_family_cb, nl);
	if (!ret && !nl->family)
		ret = -ENOENT;
	if (ret)
		close(nl->fd);
	return ret;
}

#endif /* NEURON_GENL_LIB_H */
