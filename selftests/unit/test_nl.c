// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of gpuvirtctl's optional attributes (user/nl.c): a request
 * with vgpu-get's omit, the kernel's refusal of it as Linux's strict
 * validation writes it (an NLMSG_ERROR, capped, with its extended ack),
 * how that refusal is decoded, and when the request is taken to be sent
 * again without the attribute: then it must be byte for byte the request
 * built without it. The exchange itself, against a module older than omit
 * and the current one, is the VM test selftests/vm/gpuvirtctl_skew.sh.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "kselftest_harness.h"

#include <uapi/linux/gpuvirt.h>

#include "nl.h"

#define FAMILY_ID	0x1d
#define SEQ		4711
#define UUID		"5a3c0001-0000-4000-8000-000000000001"
#define BUF_SIZE	1024

/* nl.c reports an ack's warning through gpuvirtctl's error printer. */
void err_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A vgpu-get request into @buf with the attributes @layout names in
 * order: 'u' uuid, 'g' gpu-id, 'o' omit (stats and migration). The offset
 * of the attribute @at (0 for none) goes to *@offs.
 */
static struct nlmsghdr *request(char *buf, const char *layout, char at,
				uint32_t *offs)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *genl;
	const char *c;

	memset(buf, 0, BUF_SIZE);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = FAMILY_ID;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = SEQ;
	genl = mnl_nlmsg_put_extra_header(nlh, sizeof(*genl));
	genl->cmd = GPUVIRT_CMD_VGPU_GET;
	genl->version = 1;
	for (c = layout; *c; c++) {
		if (*c == at && offs)
			*offs = nlh->nlmsg_len;
		if (*c == 'u')
			mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, UUID);
		else if (*c == 'g')
			mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_GPU_ID, 3);
		else if (*c == 'o')
			mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_OMIT,
					 GPUVIRT_VGPU_OMIT_STATS |
					 GPUVIRT_VGPU_OMIT_MIGRATION);
	}
	return nlh;
}

/*
 * The kernel's answer to @req into @buf, as netlink_ack() writes it for a
 * socket with NETLINK_EXT_ACK and NETLINK_CAP_ACK: the error, the
 * request's header alone, then the message and the offset (if @has_offs).
 */
static struct nlmsghdr *kernel_error(char *buf, const struct nlmsghdr *req,
				     int err, const char *msg, bool has_offs,
				     uint32_t offs)
{
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;

	memset(buf, 0, BUF_SIZE);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED | (msg || has_offs ? NLM_F_ACK_TLVS : 0);
	nlh->nlmsg_seq = req->nlmsg_seq;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -err;
	e->msg = *req;
	if (msg)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, msg);
	if (has_offs)
		mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, offs);
	return nlh;
}

/* The kernel's refusal, decoded, and what becomes of the request ---------- */

FIXTURE(refusal) {
	char req[BUF_SIZE];
	char want[BUF_SIZE];
	char ack[BUF_SIZE];
};

FIXTURE_VARIANT(refusal) {
	const char *layout;	/* the request's attributes, see request() */
	int err;		/* positive errno */
	const char *msg;	/* the extack message, or NULL */
	/*
	 * Where the offset points: an attribute of @layout; 'i' inside
	 * omit's payload; 'x' past the request's end; 0 for no offset.
	 */
	char at;
	const char *after;	/* the request afterwards, or NULL: unchanged */
};

/* A module older than omit: the command's largest attribute is gpu-id. */
FIXTURE_VARIANT_ADD(refusal, unknown_attribute) {
	.layout = "go", .err = EINVAL, .msg = "Unknown attribute type",
	.at = 'o', .after = "g",
};

/* The same for a get by UUID, omit between two attributes. */
FIXTURE_VARIANT_ADD(refusal, unknown_attribute_inside) {
	.layout = "uog", .err = EINVAL, .msg = "Unknown attribute type",
	.at = 'o', .after = "ug",
};

/* A policy that lists the type without a policy for it. */
FIXTURE_VARIANT_ADD(refusal, unsupported_attribute) {
	.layout = "o", .err = EINVAL, .msg = "Unsupported attribute",
	.at = 'o', .after = "",
};

/*
 * A module that knows omit and not a bit of it: asked again without it,
 * the replies carry everything, which is still right.
 */
FIXTURE_VARIANT_ADD(refusal, reserved_bit) {
	.layout = "go", .err = EINVAL, .msg = "reserved bit set",
	.at = 'o', .after = "g",
};

/* Refusals that are not about omit: the request stays as it is. */
FIXTURE_VARIANT_ADD(refusal, other_attribute) {
	.layout = "go", .err = EINVAL, .msg = "Unknown attribute type",
	.at = 'g',
};

FIXTURE_VARIANT_ADD(refusal, not_einval) {
	.layout = "go", .err = EPERM, .at = 'o',
};

FIXTURE_VARIANT_ADD(refusal, no_offset) {
	.layout = "go", .err = EINVAL, .msg = "Unknown attribute type",
};

FIXTURE_VARIANT_ADD(refusal, offset_inside_attribute) {
	.layout = "go", .err = EINVAL, .msg = "Unknown attribute type",
	.at = 'i',
};

FIXTURE_VARIANT_ADD(refusal, offset_past_end) {
	.layout = "go", .err = EINVAL, .msg = "Unknown attribute type",
	.at = 'x',
};

FIXTURE_VARIANT_ADD(refusal, no_omit) {
	.layout = "g", .err = EINVAL, .msg = "Unknown attribute type",
	.at = 'g',
};

FIXTURE_SETUP(refusal)
{
}

FIXTURE_TEARDOWN(refusal)
{
}

TEST_F(refusal, decoded_and_dropped)
{
	struct nlmsghdr *req, *ack, *want;
	struct nl_error e;
	uint32_t offs = 0, len;
	bool dropped;
	char at = variant->at;

	req = request(self->req, variant->layout,
		      at == 'i' ? 'o' : at, &offs);
	if (at == 'i')
		offs += sizeof(struct nlattr);
	else if (at == 'x')
		offs = req->nlmsg_len;
	len = req->nlmsg_len;
	memcpy(self->want, self->req, len);

	ack = kernel_error(self->ack, req, variant->err, variant->msg,
			   at != 0, offs);
	ASSERT_EQ(-variant->err, nl_error_parse(&e, ack, req));
	EXPECT_EQ(variant->err, e.err);
	EXPECT_STREQ(variant->msg ? variant->msg : "", e.msg);
	EXPECT_EQ(at != 0, e.has_offs);
	if (at == 'o')
		EXPECT_EQ(GPUVIRT_A_VGPU_OMIT, e.bad_type);
	if (at == 'g')
		EXPECT_EQ(GPUVIRT_A_VGPU_GPU_ID, e.bad_type);

	dropped = nl_req_drop_refused(req, &e, GPUVIRT_A_VGPU_OMIT);
	if (!variant->after) {
		EXPECT_FALSE(dropped);
		EXPECT_EQ(len, req->nlmsg_len);
		EXPECT_EQ(0, memcmp(self->want, self->req, len));
		return;
	}
	ASSERT_TRUE(dropped);
	want = request(self->want, variant->after, 0, NULL);
	ASSERT_EQ(want->nlmsg_len, req->nlmsg_len);
	EXPECT_EQ(len - MNL_ALIGN(sizeof(struct nlattr) + sizeof(uint32_t)),
		  req->nlmsg_len);
	EXPECT_EQ(0, memcmp(want, req, req->nlmsg_len));
}

/* An ack is no refusal, and clears what an earlier answer left. */
TEST(ack_is_no_refusal)
{
	char req_buf[BUF_SIZE], ack_buf[BUF_SIZE];
	struct nl_error e = { .err = EINVAL, .has_offs = true, .offs = 20 };
	struct nlmsghdr *req, *ack;

	req = request(req_buf, "go", 0, NULL);
	ack = kernel_error(ack_buf, req, 0, NULL, false, 0);
	EXPECT_EQ(0, nl_error_parse(&e, ack, req));
	EXPECT_EQ(0, e.err);
	EXPECT_FALSE(e.has_offs);
	EXPECT_FALSE(nl_req_drop_refused(req, &e, GPUVIRT_A_VGPU_OMIT));
}

/* A message shorter than an error is not taken for one. */
TEST(short_error)
{
	char req_buf[BUF_SIZE], ack_buf[BUF_SIZE];
	struct nlmsghdr *req, *ack;
	struct nl_error e;

	req = request(req_buf, "go", 0, NULL);
	ack = kernel_error(ack_buf, req, EINVAL, NULL, false, 0);
	ack->nlmsg_len = NLMSG_HDRLEN + sizeof(int);
	EXPECT_EQ(-EBADMSG, nl_error_parse(&e, ack, req));
	EXPECT_FALSE(nl_req_drop_refused(req, &e, GPUVIRT_A_VGPU_OMIT));
}

/* What the process learnt: a refused attribute is not put again --------- */

TEST(refused_is_left_out)
{
	char buf[BUF_SIZE];
	struct nl nl = { .req = buf };
	struct nlmsghdr *nlh;
	uint32_t len;

	/* not refused: put, and marked as the request's optional one */
	nlh = request(buf, "g", 0, NULL);
	len = nlh->nlmsg_len;
	nl_put_optional_u32(&nl, nlh, GPUVIRT_A_VGPU_OMIT,
			    GPUVIRT_VGPU_OMIT_STATS);
	EXPECT_EQ(len + MNL_ALIGN(sizeof(struct nlattr) + sizeof(uint32_t)),
		  nlh->nlmsg_len);
	EXPECT_EQ(GPUVIRT_A_VGPU_OMIT, nl.opt_type);

	/* refused by this module for vgpu-get: left out */
	nl.opt_type = 0;
	nl.refused[0].cmd = GPUVIRT_CMD_VGPU_GET;
	nl.refused[0].type = GPUVIRT_A_VGPU_OMIT;
	nl.n_refused = 1;
	nlh = request(buf, "g", 0, NULL);
	nl_put_optional_u32(&nl, nlh, GPUVIRT_A_VGPU_OMIT,
			    GPUVIRT_VGPU_OMIT_STATS);
	EXPECT_EQ(len, nlh->nlmsg_len);
	EXPECT_EQ(0, nl.opt_type);

	/* the same type of another command is another attribute */
	nl.refused[0].cmd = GPUVIRT_CMD_VGPU_SET;
	nlh = request(buf, "g", 0, NULL);
	nl_put_optional_u32(&nl, nlh, GPUVIRT_A_VGPU_OMIT,
			    GPUVIRT_VGPU_OMIT_STATS);
	EXPECT_EQ(len + MNL_ALIGN(sizeof(struct nlattr) + sizeof(uint32_t)),
		  nlh->nlmsg_len);
}

TEST_HARNESS_MAIN
