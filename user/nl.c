// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic netlink plumbing, see nl.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/netlink.h>

#include "gpuvirtctl.h"
#include "nl.h"

/*
 * The kernel sizes a dump's messages by the largest read the socket has
 * done, capped near 32 KiB; twice that leaves room to spare.
 */
#define NL_RBUF_SIZE	65536
#define NL_REQ_SIZE	8192

static void error_reset(struct nl_error *e)
{
	memset(e, 0, sizeof(*e));
	e->bad_type = -1;
}

static int setsockopt_one(struct nl *nl, int opt)
{
	int one = 1;

	return mnl_socket_setsockopt(nl->sk, opt, &one, sizeof(one));
}

/* Extended ack ------------------------------------------------------------ */

struct extack_ctx {
	struct nl_error *e;
	const struct nlmsghdr *req;
};

static int extack_attr_cb(const struct nlattr *attr, void *data)
{
	struct extack_ctx *x = data;
	struct nl_error *e = x->e;
	const struct nlattr *bad;
	uint32_t offs;

	switch (mnl_attr_get_type(attr)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			break;
		snprintf(e->msg, sizeof(e->msg), "%s", mnl_attr_get_str(attr));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			break;
		offs = mnl_attr_get_u32(attr);
		e->has_offs = true;
		e->offs = offs;
		/* Name the attribute if it is a top-level one of ours. */
		if (x->req && offs >= NLMSG_HDRLEN + GENL_HDRLEN &&
		    offs + sizeof(*bad) <= x->req->nlmsg_len) {
			bad = (const struct nlattr *)((const char *)x->req + offs);
			e->bad_type = bad->nla_type & NLA_TYPE_MASK;
		}
		break;
	case NLMSGERR_ATTR_MISS_TYPE:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
			break;
		e->has_miss = true;
		e->miss_type = mnl_attr_get_u32(attr);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/*
 * Decode the TLVs of an NLMSG_ERROR or NLMSG_DONE message that start
 * @offset bytes into its payload.
 */
static void extack_parse(struct nl_error *e, const struct nlmsghdr *nlh,
			 size_t offset, const struct nlmsghdr *req)
{
	struct extack_ctx x = { .e = e, .req = req };

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (NLMSG_HDRLEN + offset > nlh->nlmsg_len)
		return;
	mnl_attr_parse(nlh, (unsigned int)offset, extack_attr_cb, &x);
}

int nl_error_parse(struct nl_error *e, const struct nlmsghdr *nlh,
		   const struct nlmsghdr *req)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	size_t offset = sizeof(*err);

	error_reset(e);
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*err)) {
		e->err = EBADMSG;
		return -EBADMSG;
	}
	/* Without NETLINK_CAP_ACK the request follows its header. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    err->msg.nlmsg_len > NLMSG_HDRLEN)
		offset += err->msg.nlmsg_len - NLMSG_HDRLEN;
	extack_parse(e, nlh, offset, req);
	if (err->error >= 0)
		return 0;
	e->err = -err->error;
	return err->error;
}

/* Returns the (negative) error of an NLMSG_ERROR message, 0 for an ack. */
static int handle_error_msg(struct nl *nl, const struct nlmsghdr *nlh,
			    const struct nlmsghdr *req)
{
	int ret = nl_error_parse(&nl->error, nlh, req);

	if (!ret) {
		/* An ack, possibly with a warning. */
		if (nl->error.msg[0])
			err_print("warning: %s", nl->error.msg);
		error_reset(&nl->error);
	}
	return ret;
}

static int handle_done_msg(struct nl *nl, const struct nlmsghdr *nlh,
			   const struct nlmsghdr *req)
{
	int err = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(err))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (err >= 0)
		return 0;
	extack_parse(&nl->error, nlh, sizeof(err), req);
	nl->error.err = -err;
	return err;
}

/* Socket and requests ------------------------------------------------------ */

/* Receive one datagram into nl->rbuf: its length, or a negative errno. */
static int nl_recv(struct nl *nl)
{
	ssize_t len;

	do {
		len = mnl_socket_recvfrom(nl->sk, nl->rbuf, NL_RBUF_SIZE);
	} while (len < 0 && errno == EINTR);
	return len < 0 ? -errno : (int)len;
}

static struct nlmsghdr *msg_start(struct nl *nl, uint16_t type, uint8_t cmd,
				  uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl;

	memset(nl->req, 0, NL_REQ_SIZE);
	nlh = mnl_nlmsg_put_header(nl->req);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	if (!(flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++nl->seq;
	nl->opt_type = 0;

	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = version;
	return nlh;
}

struct nlmsghdr *nl_msg_start(struct nl *nl, uint8_t cmd, uint16_t flags)
{
	return msg_start(nl, nl->fam.id, cmd, (uint8_t)nl->fam.version, flags);
}

/*
 * nl_exchange() of the request as it is; *@replies counts the replies
 * handed to @cb.
 */
static int exchange(struct nl *nl, nl_msg_cb cb, void *data,
		    unsigned int *replies)
{
	const struct nlmsghdr *req = (const struct nlmsghdr *)nl->req;
	const struct nlmsghdr *nlh;
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	int ret = 0, done, left;

	error_reset(&nl->error);
	if (mnl_socket_sendto(nl->sk, req, req->nlmsg_len) < 0) {
		nl->error.err = errno;
		return -errno;
	}

	for (;;) {
		left = nl_recv(nl);
		if (left < 0) {
			nl->error.err = -left;
			return left;
		}
		for (nlh = (const struct nlmsghdr *)nl->rbuf;
		     mnl_nlmsg_ok(nlh, left);
		     nlh = mnl_nlmsg_next(nlh, &left)) {
			/* Skip anything that does not answer this request. */
			if (!mnl_nlmsg_portid_ok(nlh, nl->portid) ||
			    nlh->nlmsg_seq != req->nlmsg_seq)
				continue;

			switch (nlh->nlmsg_type) {
			case NLMSG_NOOP:
				continue;
			case NLMSG_ERROR:
				/* An ack or an error ends the exchange. */
				done = handle_error_msg(nl, nlh, req);
				return ret ? ret : done;
			case NLMSG_DONE:
				done = handle_done_msg(nl, nlh, req);
				return ret ? ret : done;
			case NLMSG_OVERRUN:
				nl->error.err = ENOBUFS;
				return -ENOBUFS;
			default:
				break;
			}
			if (nlh->nlmsg_type != req->nlmsg_type)
				continue;
			/*
			 * After a callback failure keep reading, so that the
			 * dump ends cleanly, but call it no more.
			 */
			if (!ret && cb) {
				(*replies)++;
				ret = cb(nlh, data);
			}
			if (ret && !dump)
				return ret;
		}
		if (ret && !dump)
			return ret;
	}
}

/* Optional attributes ---------------------------------------------------- */

static bool opt_refused(const struct nl *nl, uint8_t cmd, uint16_t type)
{
	unsigned int i;

	for (i = 0; i < nl->n_refused; i++)
		if (nl->refused[i].cmd == cmd && nl->refused[i].type == type)
			return true;
	return false;
}

void nl_put_optional_u32(struct nl *nl, struct nlmsghdr *nlh, uint16_t type,
			 uint32_t val)
{
	int cmd = nl_genl_cmd(nlh);

	if (cmd < 0 || opt_refused(nl, (uint8_t)cmd, type))
		return;
	mnl_attr_put_u32(nlh, type, val);
	nl->opt_type = type;
}

bool nl_req_drop_refused(struct nlmsghdr *req, const struct nl_error *e,
			 uint16_t type)
{
	const struct nlattr *a;

	if (e->err != EINVAL || !e->has_offs)
		return false;
	/* a top-level attribute of the request, whole, at that offset */
	mnl_attr_for_each(a, req, GENL_HDRLEN) {
		uint32_t offs = (uint32_t)((const char *)a - (const char *)req);
		uint32_t len;

		if (offs != e->offs)
			continue;
		if (mnl_attr_get_type(a) != type)
			return false;
		len = MNL_ALIGN(a->nla_len);
		if (len > req->nlmsg_len - offs)
			len = req->nlmsg_len - offs;
		memmove((char *)req + offs, (char *)req + offs + len,
			req->nlmsg_len - offs - len);
		req->nlmsg_len -= len;
		return true;
	}
	return false;
}

int nl_exchange(struct nl *nl, nl_msg_cb cb, void *data)
{
	struct nlmsghdr *req = (struct nlmsghdr *)nl->req;
	uint16_t type = nl->opt_type;
	unsigned int replies = 0;
	int ret, cmd;

	nl->opt_type = 0;
	ret = exchange(nl, cb, data, &replies);
	/* a refusal comes before any reply: none is handed over twice */
	if (!ret || !type || replies ||
	    !nl_req_drop_refused(req, &nl->error, type))
		return ret;
	cmd = nl_genl_cmd(req);
	if (nl->n_refused < NL_MAX_REFUSED) {
		nl->refused[nl->n_refused].cmd = (uint8_t)cmd;
		nl->refused[nl->n_refused].type = type;
		nl->n_refused++;
	}
	req->nlmsg_seq = ++nl->seq;
	return exchange(nl, cb, data, &replies);
}

/* Family resolution ------------------------------------------------------ */

static int family_group_cb(const struct nlattr *grp, struct nl_family *fam)
{
	const struct nlattr *a, *name = NULL, *id = NULL;

	mnl_attr_for_each_nested(a, grp) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_MCAST_GRP_NAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				name = a;
			break;
		case CTRL_ATTR_MCAST_GRP_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				id = a;
			break;
		default:
			break;
		}
	}
	if (!name || !id || fam->n_groups >= NL_MAX_GROUPS)
		return 0;
	snprintf(fam->groups[fam->n_groups].name, GENL_NAMSIZ, "%s",
		 mnl_attr_get_str(name));
	fam->groups[fam->n_groups].id = mnl_attr_get_u32(id);
	fam->n_groups++;
	return 0;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_family *fam = data;
	const struct nlattr *a, *grp;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				fam->id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_VERSION:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				fam->version = mnl_attr_get_u32(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0)
				break;
			mnl_attr_for_each_nested(grp, a)
				family_group_cb(grp, fam);
			break;
		default:
			break;
		}
	}
	return 0;
}

static int resolve_family(struct nl *nl, const char *name,
			  struct nl_family *fam)
{
	struct nlmsghdr *nlh;
	int ret;

	memset(fam, 0, sizeof(*fam));
	nlh = msg_start(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	ret = nl_exchange(nl, family_cb, fam);
	if (ret)
		return ret;
	if (!fam->id) {
		nl->error.err = EBADMSG;
		return -EBADMSG;
	}
	return 0;
}

int nl_open(struct nl *nl, const char *name)
{
	memset(nl, 0, sizeof(*nl));
	error_reset(&nl->error);

	nl->req = calloc(1, NL_REQ_SIZE);
	nl->rbuf = malloc(NL_RBUF_SIZE);
	if (!nl->req || !nl->rbuf) {
		nl->error.err = ENOMEM;
		return -ENOMEM;
	}

	nl->sk = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl->sk || mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		nl->error.err = errno;
		return -errno;
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	nl->seq = (uint32_t)time(NULL);

	/* Error messages and offsets, without the request echoed back. */
	if (setsockopt_one(nl, NETLINK_EXT_ACK) < 0 ||
	    setsockopt_one(nl, NETLINK_CAP_ACK) < 0) {
		nl->error.err = errno;
		return -errno;
	}

	return resolve_family(nl, name, &nl->fam);
}

void nl_close(struct nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	free(nl->req);
	free(nl->rbuf);
	memset(nl, 0, sizeof(*nl));
}

int nl_join_group(struct nl *nl, const char *group, bool ctrl)
{
	struct nl_family ctrl_fam;
	const struct nl_family *fam = &nl->fam;
	unsigned int i;
	uint32_t id;
	int ret;

	if (ctrl) {
		ret = resolve_family(nl, "nlctrl", &ctrl_fam);
		if (ret)
			return ret;
		fam = &ctrl_fam;
	}
	for (i = 0; i < fam->n_groups; i++) {
		if (strcmp(fam->groups[i].name, group))
			continue;
		id = fam->groups[i].id;
		ret = mnl_socket_setsockopt(nl->sk, NETLINK_ADD_MEMBERSHIP,
					    &id, sizeof(id));
		if (ret < 0) {
			nl->error.err = errno;
			return -errno;
		}
		return 0;
	}
	error_reset(&nl->error);
	nl->error.err = ENOENT;
	snprintf(nl->error.msg, sizeof(nl->error.msg),
		 "no multicast group \"%s\"", group);
	return -ENOENT;
}

int nl_listen(struct nl *nl, nl_msg_cb cb, void *data)
{
	const struct nlmsghdr *nlh;
	int ret, left;

	error_reset(&nl->error);
	for (;;) {
		left = nl_recv(nl);
		if (left == -ENOBUFS) {
			err_print("events were lost (receive buffer overrun)");
			continue;
		}
		if (left < 0) {
			nl->error.err = -left;
			return left;
		}
		for (nlh = (const struct nlmsghdr *)nl->rbuf;
		     mnl_nlmsg_ok(nlh, left);
		     nlh = mnl_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_type < NLMSG_MIN_TYPE)
				continue;
			ret = cb(nlh, data);
			if (ret)
				return ret;
		}
	}
}

/* Attributes -------------------------------------------------------------- */

struct parse_ctx {
	const uint8_t *policy;
	unsigned int max;
	const struct nlattr **tb;
};

static int parse_attr_cb(const struct nlattr *attr, void *data)
{
	const struct parse_ctx *p = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type > p->max)
		return MNL_CB_OK;
	if (p->policy[type] != MNL_TYPE_UNSPEC &&
	    mnl_attr_validate(attr, (enum mnl_attr_data_type)p->policy[type]) < 0)
		return MNL_CB_ERROR;
	p->tb[type] = attr;
	return MNL_CB_OK;
}

int nl_parse(const struct nlmsghdr *nlh, const uint8_t *policy,
	     unsigned int max, const struct nlattr **tb)
{
	struct parse_ctx p = { .policy = policy, .max = max, .tb = tb };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		return -EINVAL;
	if (mnl_attr_parse(nlh, GENL_HDRLEN, parse_attr_cb, &p) < 0)
		return -EINVAL;
	return 0;
}

int nl_parse_nested(const struct nlattr *nest, const uint8_t *policy,
		    unsigned int max, const struct nlattr **tb)
{
	struct parse_ctx p = { .policy = policy, .max = max, .tb = tb };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	if (mnl_attr_parse_nested(nest, parse_attr_cb, &p) < 0)
		return -EINVAL;
	return 0;
}

void nl_attr_strcpy(char *dst, size_t len, const struct nlattr *a)
{
	snprintf(dst, len, "%s", a ? mnl_attr_get_str(a) : "");
}

int nl_genl_cmd(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *genl;

	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		return -1;
	genl = mnl_nlmsg_get_payload(nlh);
	return genl->cmd;
}

/* Errors ------------------------------------------------------------------ */

static const char *attr_name(const struct nl_attr_names *names, uint32_t type)
{
	if (!names || type > names->max)
		return NULL;
	if (names->keywords && names->keywords[type])
		return names->keywords[type];
	return names->names[type];
}

void nl_perror(const struct nl *nl, const struct nl_attr_names *names)
{
	const struct nl_error *e = &nl->error;
	char where[128] = "";
	const char *name;

	if (e->has_miss) {
		name = attr_name(names, e->miss_type);
		if (name)
			snprintf(where, sizeof(where),
				 " (missing attribute \"%s\")", name);
		else
			snprintf(where, sizeof(where),
				 " (missing attribute %u)", e->miss_type);
	} else if (e->has_offs) {
		name = e->bad_type >= 0 ?
		       attr_name(names, (uint32_t)e->bad_type) : NULL;
		if (name)
			snprintf(where, sizeof(where),
				 " (attribute \"%s\" at offset %u)", name,
				 e->offs);
		else
			snprintf(where, sizeof(where),
				 " (attribute at offset %u)", e->offs);
	}

	if (e->msg[0])
		err_print("%s: %s%s", strerror(e->err), e->msg, where);
	else
		err_print("%s%s", strerror(e->err), where);
}
