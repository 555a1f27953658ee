/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generic netlink plumbing on top of libmnl: the socket, family and multicast
 * group resolution through the nlctrl family, request/reply and dump
 * exchanges, extended ack decoding, optional attributes that an older
 * module may refuse, and the multicast receive loop.
 */
#ifndef GPUVIRTCTL_NL_H
#define GPUVIRTCTL_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#define NL_MAX_GROUPS	8
/* Optional attributes the kernel refused, remembered per process. */
#define NL_MAX_REFUSED	4

struct nl_family {
	uint16_t id;
	uint32_t version;
	unsigned int n_groups;
	struct {
		char name[GENL_NAMSIZ];
		uint32_t id;
	} groups[NL_MAX_GROUPS];
};

/* What the kernel said about the last failed request. */
struct nl_error {
	int err;		/* positive errno */
	char msg[256];		/* extack message, or "" */
	bool has_offs;		/* the kernel pointed at an attribute */
	uint32_t offs;		/* its offset in the request */
	int bad_type;		/* its type, -1 if not a top-level attribute */
	bool has_miss;		/* a required attribute was missing */
	uint32_t miss_type;
};

struct nl {
	struct mnl_socket *sk;
	uint32_t portid;
	uint32_t seq;
	struct nl_family fam;	/* gpuvirt */
	struct nl_error error;
	char *req;		/* the request being built and sent */
	char *rbuf;		/* receive buffer */
	uint16_t opt_type;	/* the optional attribute in req, or 0 */
	unsigned int n_refused;
	struct {
		uint8_t cmd;
		uint16_t type;
	} refused[NL_MAX_REFUSED];	/* by this module: never sent again */
};

/*
 * Attribute names of one attribute set, for error messages: the spec's
 * names[type] for type <= max (generated, see nl-gen.h), unless the
 * optional keywords[type], also of max + 1 entries, gives the word the
 * user typed for it, such as "gpu" for gpu-id. Entries may be NULL.
 */
struct nl_attr_names {
	const char *const *names;
	unsigned int max;
	const char *const *keywords;
};

/* Called for every message that is not a netlink control message. */
typedef int (*nl_msg_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Open the socket with extended and capped acks and resolve the family
 * @name. Returns 0, or a negative errno with nl->error filled: -ENOENT means
 * the family does not exist.
 */
int nl_open(struct nl *nl, const char *name);
void nl_close(struct nl *nl);

/*
 * Start a request for @cmd of the family in nl->req: NLM_F_REQUEST plus
 * @flags (NLM_F_DUMP for a dump; a do request gets NLM_F_ACK).
 */
struct nlmsghdr *nl_msg_start(struct nl *nl, uint8_t cmd, uint16_t flags);

/*
 * Send nl->req and call @cb for each reply until the ack or the end of the
 * dump. Returns 0, a negative errno with nl->error filled when the kernel
 * refused, or the negative value @cb returned. A request that the kernel
 * refused for its optional attribute (nl_put_optional_u32()) is sent once
 * more, without it.
 */
int nl_exchange(struct nl *nl, nl_msg_cb cb, void *data);

/*
 * Put an optional attribute into the request nl_msg_start() began: one
 * that only spares the kernel work, such as vgpu-get's omit, and that a
 * module older than it refuses (an unknown attribute under strict
 * validation). When the kernel refuses the request for it,
 * nl_exchange() sends the request again without it, and from then on
 * this process leaves the attribute out of that command: a module older
 * than the attribute costs one more round trip per process, a newer one
 * none. One optional attribute per request.
 */
void nl_put_optional_u32(struct nl *nl, struct nlmsghdr *nlh, uint16_t type,
			 uint32_t val);

/*
 * Decode an NLMSG_ERROR message @nlh into @e. @req, the request it
 * answers, gives the type of the attribute that the extack offset points
 * at (e->bad_type); it may be NULL. Returns the message's error: 0 for an
 * ack, else a negative errno, also in e->err (positive); -EBADMSG for a
 * message too short to be one.
 */
int nl_error_parse(struct nl_error *e, const struct nlmsghdr *nlh,
		   const struct nlmsghdr *req);

/*
 * Did the kernel refuse @req (@e, as nl_error_parse() left it) for its
 * top-level attribute of @type? That is EINVAL with the extack offset at
 * that attribute, as strict validation answers an attribute the module
 * does not know ("Unknown attribute type" above the command's largest
 * one, "Unsupported attribute" for one without a policy). Then the
 * attribute is taken out of @req, which is otherwise unchanged, and it
 * returns true; otherwise @req is left as it is.
 */
bool nl_req_drop_refused(struct nlmsghdr *req, const struct nl_error *e,
			 uint16_t type);

/* Print nl->error through err_print(), naming attributes with @names. */
void nl_perror(const struct nl *nl, const struct nl_attr_names *names);

/* Join the family's multicast group @group (or nlctrl's when @ctrl). */
int nl_join_group(struct nl *nl, const char *group, bool ctrl);

/*
 * Receive multicast messages until @cb returns non-zero (its value is
 * returned) or receiving fails (negative errno). Lost messages are reported
 * and the loop goes on.
 */
int nl_listen(struct nl *nl, nl_msg_cb cb, void *data);

/*
 * Validate and index the attributes after the genetlink header: tb[type]
 * for types up to @max whose data type (enum mnl_attr_data_type, MNL_TYPE_
 * UNSPEC to skip the check) matches @policy[type]. Unknown types are
 * ignored, for newer kernels. Returns 0 or -EINVAL.
 */
int nl_parse(const struct nlmsghdr *nlh, const uint8_t *policy,
	     unsigned int max, const struct nlattr **tb);

/* The same for the attributes nested in @nest. */
int nl_parse_nested(const struct nlattr *nest, const uint8_t *policy,
		    unsigned int max, const struct nlattr **tb);

/*
 * Copy the string of attribute @a (as nl_parse() checked it, NUL
 * terminated) into @dst of @len bytes, cut to fit; "" when @a is NULL.
 */
void nl_attr_strcpy(char *dst, size_t len, const struct nlattr *a);

/* The genetlink command of a message, or -1. */
int nl_genl_cmd(const struct nlmsghdr *nlh);

#endif /* GPUVIRTCTL_NL_H */
