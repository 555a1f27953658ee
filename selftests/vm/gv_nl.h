/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generic netlink plumbing for the VM tests that talk to the gpuvirt family
 * directly with libmnl: open and resolve the family, build requests, run a
 * request to its ack or the end of its dump, and keep the extack.
 */
#ifndef GPUVIRT_GV_NL_H
#define GPUVIRT_GV_NL_H

#include <errno.h>
#include <libmnl/libmnl.h>
#include <poll.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>

#include <linux/gpuvirt.h>

#define GV_NLBUF	32768

struct nl {
	struct mnl_socket *sk;
	unsigned int seq, portid;
	uint16_t family;
	uint32_t monitor_grp;
	char ext_msg[256];
	uint32_t ext_off;
	uint32_t ext_miss_type;
	/* every read nl_talk() made, and its bytes (bench/netlink counts a dump's) */
	unsigned int reads;
	uint64_t bytes;
	char buf[GV_NLBUF];
};


static inline int family_attr_cb(const struct nlattr *a, void *data)
{
	struct nl *nl = data;

	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
		nl->family = mnl_attr_get_u16(a);
	if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GROUPS) {
		const struct nlattr *grp, *ga;

		mnl_attr_for_each_nested(grp, a) {
			const char *name = NULL;
			uint32_t id = 0;

			mnl_attr_for_each_nested(ga, grp) {
				if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_NAME)
					name = mnl_attr_get_str(ga);
				if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_ID)
					id = mnl_attr_get_u32(ga);
			}
			if (name && !strcmp(name, GPUVIRT_MCGRP_MONITOR))
				nl->monitor_grp = id;
		}
	}
	return MNL_CB_OK;
}

static inline int family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr_cb,
			      data);
}

/* Error callback that keeps the extack message and offset. */
static inline int err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nl *nl = data;
	const struct nlattr *a;
	unsigned int off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		mnl_attr_for_each(a, nlh, off) {
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG)
				snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%s",
					 mnl_attr_get_str(a));
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_OFFS)
				nl->ext_off = mnl_attr_get_u32(a);
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MISS_TYPE)
				nl->ext_miss_type = mnl_attr_get_u32(a);
		}
	}
	errno = -e->error;
	return e->error ? MNL_CB_ERROR : MNL_CB_STOP;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE];

struct nl_ctx {
	struct nl *nl;
	mnl_cb_t cb;
	void *data;
};

static inline int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_ctx *ctx = data;

	return ctx->cb(nlh, ctx->data);
}

static inline int ctl_err_cb(const struct nlmsghdr *nlh, void *data)
{
	return err_cb(nlh, ((struct nl_ctx *)data)->nl);
}

/*
 * The end of a dump; a dump that failed after it started carries its
 * errno here, and its extack after it.
 */
static inline int ctl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *nl = ((struct nl_ctx *)data)->nl;
	const struct nlattr *a;
	int err;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
		return MNL_CB_STOP;
	memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(int));
	if (err >= 0)
		return MNL_CB_STOP;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		mnl_attr_for_each(a, nlh, sizeof(int)) {
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG)
				snprintf(nl->ext_msg, sizeof(nl->ext_msg), "%s",
					 mnl_attr_get_str(a));
		}
	}
	errno = -err;
	return MNL_CB_ERROR;
}

/* Send a request and run callbacks over the replies; 0 or -errno. */
static inline int nl_talk(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	struct nl_ctx ctx = { nl, cb, data };
	int ret;

	ctl_cbs[NLMSG_ERROR] = ctl_err_cb;
	ctl_cbs[NLMSG_DONE] = ctl_done_cb;
	nl->ext_msg[0] = '\0';
	nl->ext_off = 0;
	nl->ext_miss_type = 0;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ret = mnl_socket_recvfrom(nl->sk, nl->buf, sizeof(nl->buf));
		if (ret < 0)
			return -errno;
		nl->reads++;
		nl->bytes += ret;
		errno = 0;
		ret = mnl_cb_run2(nl->buf, ret, nlh->nlmsg_seq, nl->portid,
				  data_cb, &ctx, ctl_cbs, NLMSG_MIN_TYPE);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret == MNL_CB_ERROR ? -errno : 0;
}

static inline struct nlmsghdr *genl_req(struct nl *nl, char *buf, uint16_t type,
				 uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* Open a socket and resolve the family; -ENOENT when it is not there. */
static inline int nl_open(struct nl *nl)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(nl, 0, sizeof(*nl));
	nl->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sk)
		return -errno;
	mnl_socket_setsockopt(nl->sk, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	nl->portid = mnl_socket_get_portid(nl->sk);

	nlh = genl_req(nl, buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, GPUVIRT_FAMILY_NAME);
	ret = nl_talk(nl, nlh, family_cb, nl);
	if (ret)
		return ret;
	return nl->family ? 0 : -ENOENT;
}

static inline void nl_close(struct nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	nl->sk = NULL;
}

/*
 * Wait up to 5 s for one multicast message on @mon and run @cb over it:
 * 0, -ETIMEDOUT, or -errno.
 */
static inline int nl_monitor_next(struct nl *mon, mnl_cb_t cb, void *data)
{
	struct pollfd pfd = { mnl_socket_get_fd(mon->sk), POLLIN, 0 };
	int n;

	if (poll(&pfd, 1, 5000) != 1)
		return -ETIMEDOUT;
	n = mnl_socket_recvfrom(mon->sk, mon->buf, sizeof(mon->buf));
	if (n < 0)
		return -errno;
	return mnl_cb_run(mon->buf, n, 0, 0, cb, data) < 0 ? -errno : 0;
}

#endif /* GPUVIRT_GV_NL_H */
