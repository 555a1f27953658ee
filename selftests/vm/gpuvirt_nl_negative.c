// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpuvirt netlink family against malformed requests: for every
 * operation (do and dump) and every attribute it takes, wrong lengths,
 * duplicates, a stray NLA_F_NESTED, unknown and foreign attributes, a
 * non-zero reserved header field, truncated and trailing bytes, values out
 * of range, missing required attributes and unknown objects. Each must be
 * refused with an errno and an extack message, and leave the GPU, its
 * vGPUs and its scheduler exactly as they were. The runner fails the run
 * on any kernel report.
 */
#include <dirent.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "gv_nl.h"

#define TYPES	"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define UUID_A	"badc0de0-0000-4000-8000-00000000000a"
#define GV	GV_SIM_BUS "/devices/sim0/gpu/gpuvirt"
#define VG	"/sys/bus/mdev/devices/" UUID_A "/gpuvirt"

enum kind { U32, STR };

struct attr {
	uint16_t type;
	enum kind kind;
	uint32_t u;
	const char *s;
	uint16_t maxlen;	/* STR: longest accepted, without the NUL */
};

struct op {
	const char *name;
	uint8_t cmd;
	bool dump;
	uint16_t maxattr;	/* highest attribute of the op's set */
	uint16_t foreign;	/* in the set, but not taken by this op */
	unsigned int n;
	struct attr a[4];
};

#define A32(t, val)	{ .type = (t), .kind = U32, .u = (val) }
#define ASTR(t, str, max) { .type = (t), .kind = STR, .s = (str), .maxlen = (max) }

static const struct op ops[] = {
	{ "gpu-get", GPUVIRT_CMD_GPU_GET, false, GPUVIRT_A_GPU_MAX,
	  GPUVIRT_A_GPU_ENGINES, 1, { A32(GPUVIRT_A_GPU_ID, 0) } },
	{ "gpu-get dump", GPUVIRT_CMD_GPU_GET, true, GPUVIRT_A_GPU_MAX,
	  GPUVIRT_A_GPU_NAME, 0, { } },
	{ "type-get", GPUVIRT_CMD_TYPE_GET, false, GPUVIRT_A_TYPE_MAX,
	  GPUVIRT_A_TYPE_FB_SIZE, 2, {
		A32(GPUVIRT_A_TYPE_GPU_ID, 0),
		ASTR(GPUVIRT_A_TYPE_NAME, "H200-35C", 23) } },
	{ "type-get dump", GPUVIRT_CMD_TYPE_GET, true, GPUVIRT_A_TYPE_MAX,
	  GPUVIRT_A_TYPE_SERIES, 1, { A32(GPUVIRT_A_TYPE_GPU_ID, 0) } },
	{ "vgpu-get", GPUVIRT_CMD_VGPU_GET, false, GPUVIRT_A_VGPU_MAX,
	  GPUVIRT_A_VGPU_WEIGHT, 2, {
		ASTR(GPUVIRT_A_VGPU_UUID, UUID_A, 36),
		A32(GPUVIRT_A_VGPU_GPU_ID, 0) } },
	{ "vgpu-get dump", GPUVIRT_CMD_VGPU_GET, true, GPUVIRT_A_VGPU_MAX,
	  GPUVIRT_A_VGPU_TYPE, 1, { A32(GPUVIRT_A_VGPU_GPU_ID, 0) } },
	{ "vgpu-set", GPUVIRT_CMD_VGPU_SET, false, GPUVIRT_A_VGPU_MAX,
	  GPUVIRT_A_VGPU_VRAM_SIZE, 4, {
		ASTR(GPUVIRT_A_VGPU_UUID, UUID_A, 36),
		A32(GPUVIRT_A_VGPU_WEIGHT, 5),
		A32(GPUVIRT_A_VGPU_MIN_PCT, 5),
		A32(GPUVIRT_A_VGPU_MAX_PCT, 50) } },
	{ "sched-get", GPUVIRT_CMD_SCHED_GET, false, GPUVIRT_A_SCHED_MAX,
	  GPUVIRT_A_SCHED_BUSY_NS, 1, { A32(GPUVIRT_A_SCHED_GPU_ID, 0) } },
	{ "sched-get dump", GPUVIRT_CMD_SCHED_GET, true, GPUVIRT_A_SCHED_MAX,
	  GPUVIRT_A_SCHED_SWITCHES, 0, { } },
	{ "sched-set", GPUVIRT_CMD_SCHED_SET, false, GPUVIRT_A_SCHED_MAX,
	  GPUVIRT_A_SCHED_VGPUS, 3, {
		A32(GPUVIRT_A_SCHED_GPU_ID, 0),
		A32(GPUVIRT_A_SCHED_POLICY, GPUVIRT_SCHED_POLICY_WEIGHTED),
		A32(GPUVIRT_A_SCHED_TIMESLICE_US, 300) } },
	/*
	 * MIG requests go to GPU 1, in MIG mode; in this order the valid
	 * requests leave it as it was: the GI they create they destroy.
	 */
	{ "gpu-set", GPUVIRT_CMD_GPU_SET, false, GPUVIRT_A_GPU_MAX,
	  GPUVIRT_A_GPU_NAME, 2, {
		A32(GPUVIRT_A_GPU_ID, 1),
		A32(GPUVIRT_A_GPU_MODE, GPUVIRT_GPU_MODE_MIG) } },
	{ "gi-new", GPUVIRT_CMD_GI_NEW, false, GPUVIRT_A_GI_MAX,
	  GPUVIRT_A_GI_ID, 3, {
		A32(GPUVIRT_A_GI_GPU_ID, 1),
		ASTR(GPUVIRT_A_GI_PROFILE, "3g.71gb", 15),
		A32(GPUVIRT_A_GI_START, 0) } },
	{ "gi-get", GPUVIRT_CMD_GI_GET, false, GPUVIRT_A_GI_MAX,
	  GPUVIRT_A_GI_PROFILE, 2, {
		A32(GPUVIRT_A_GI_GPU_ID, 1),
		A32(GPUVIRT_A_GI_ID, 0) } },
	{ "gi-get dump", GPUVIRT_CMD_GI_GET, true, GPUVIRT_A_GI_MAX,
	  GPUVIRT_A_GI_SLOTS, 1, { A32(GPUVIRT_A_GI_GPU_ID, 1) } },
	{ "gi-del", GPUVIRT_CMD_GI_DEL, false, GPUVIRT_A_GI_MAX,
	  GPUVIRT_A_GI_START, 2, {
		A32(GPUVIRT_A_GI_GPU_ID, 1),
		A32(GPUVIRT_A_GI_ID, 0) } },
	{ "pt-get", GPUVIRT_CMD_PT_GET, false, GPUVIRT_A_PT_MAX,
	  GPUVIRT_A_PT_VENDOR, 1, {
		ASTR(GPUVIRT_A_PT_BDF, "0000:00:07.0", 15) } },
};

/* Everything the requests could have changed, as the kernel shows it. */
struct state {
	char policy[32], slice[16], weight[16], min[16], max[16], avail[16];
	char mig0[4], mig1[4];
	unsigned long long vgpus;
	int gis;
};

#define MIG0	GV_SIM_BUS "/devices/sim0/gpu/gpuvirt/mig_mode"
#define MIG1	GV_SIM_BUS "/devices/sim1/gpu/gpuvirt/mig_mode"

/* GIs on the host, all GPUs. */
static int count_gis(void)
{
	DIR *d = opendir("/sys/class/gpuvirt_gi");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void snapshot(struct state *st)
{
	memset(st, 0, sizeof(*st));
	gv_read(GV "/sched_policy", st->policy, sizeof(st->policy));
	gv_read(GV "/sched_slice_us", st->slice, sizeof(st->slice));
	gv_read(VG "/weight", st->weight, sizeof(st->weight));
	gv_read(VG "/min_pct", st->min, sizeof(st->min));
	gv_read(VG "/max_pct", st->max, sizeof(st->max));
	gv_read(TYPES "/gpuvirt_sim-H200-35C/available_instances", st->avail,
		sizeof(st->avail));
	st->vgpus = gv_kv_u64(GV_DEBUGFS "/gpus/sim0/sched", "vgpus");
	gv_read(MIG0, st->mig0, sizeof(st->mig0));
	gv_read(MIG1, st->mig1, sizeof(st->mig1));
	st->gis = count_gis();
}

/* How a case breaks the op's otherwise valid request. */
enum how {
	LEN,		/* attribute @idx with payload length @arg */
	NOTERM,		/* string attribute @idx without its NUL */
	TOOLONG,	/* string attribute @idx longer than allowed */
	DUP,		/* attribute @idx twice */
	NESTFLAG,	/* attribute @idx with NLA_F_NESTED */
	VALUE,		/* attribute @idx with value @arg */
	STRVAL,		/* string attribute @idx with @str */
	DROP,		/* attribute @idx left out */
	EXTRA,		/* one more attribute of type @arg */
	RESERVED,	/* genetlink reserved field @arg */
	TRUNC,		/* the last attribute claims more than is there */
	SHORTATTR,	/* an attribute header shorter than a header */
	TRAILING,	/* two stray bytes after the attributes */
};

struct negcase {
	enum how how;
	unsigned int idx;
	uint32_t arg;
	const char *str;
};

static void put_attr(struct nlmsghdr *nlh, const struct attr *a,
		     const struct negcase *c, bool self)
{
	uint8_t junk[16] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char longstr[80];
	uint16_t type = a->type;

	if (self && c->how == NESTFLAG)
		type |= NLA_F_NESTED;
	if (self && c->how == LEN) {
		mnl_attr_put(nlh, type, c->arg, junk);
	} else if (self && c->how == VALUE) {
		mnl_attr_put_u32(nlh, type, c->arg);
	} else if (self && c->how == STRVAL) {
		mnl_attr_put_strz(nlh, type, c->str);
	} else if (self && c->how == NOTERM) {
		mnl_attr_put(nlh, type, strlen(a->s), a->s);
	} else if (self && c->how == TOOLONG) {
		memset(longstr, 'x', a->maxlen + 4);
		longstr[a->maxlen + 4] = '\0';
		mnl_attr_put_strz(nlh, type, longstr);
	} else if (a->kind == U32) {
		mnl_attr_put_u32(nlh, type, a->u);
	} else {
		mnl_attr_put_strz(nlh, type, a->s);
	}
	if (self && c->how == DUP)
		put_attr(nlh, a, c, false);
}

static int discard_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_OK;
}

/* Build and send one malformed request; its errno, 0 if it was accepted. */
static int send_case(struct nl *nl, const struct op *op,
		     const struct negcase *c)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlattr *last;
	unsigned int i;

	nlh = genl_req(nl, buf, nl->family, op->cmd, op->dump ? NLM_F_DUMP : 0);
	g = mnl_nlmsg_get_payload(nlh);
	if (c->how == RESERVED)
		g->reserved = c->arg;
	for (i = 0; i < op->n; i++) {
		if (c->how == DROP && i == c->idx)
			continue;
		put_attr(nlh, &op->a[i], c, i == c->idx);
	}
	if (c->how == EXTRA)
		mnl_attr_put_u32(nlh, c->arg, 1);
	if (c->how == TRUNC) {
		last = mnl_nlmsg_get_payload_tail(nlh);
		mnl_attr_put_u32(nlh, op->n ? op->a[0].type : 1, 0);
		last->nla_len += 8;
	}
	if (c->how == SHORTATTR) {
		last = mnl_nlmsg_get_payload_tail(nlh);
		mnl_attr_put_u32(nlh, 1, 0);
		last->nla_len = 2;
	}
	if (c->how == TRAILING)
		nlh->nlmsg_len += 2;
	return nl_talk(nl, nlh, discard_cb, NULL);
}

FIXTURE(neg) {
	struct nl nl;
	struct state before;
	unsigned int cases;
};

FIXTURE_SETUP(neg)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_setup_h200());
	ASSERT_EQ(0, gv_write(TYPES "/gpuvirt_sim-H200-35C/create", UUID_A));
	ASSERT_EQ(0, gv_write(VG "/weight", "33"));
	ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", "1 h200-141gb"));
	ASSERT_EQ(0, gv_write(MIG1, "1"));
	ASSERT_EQ(0, count_gis());
	ASSERT_EQ(0, nl_open(&self->nl));
	snapshot(&self->before);
	self->cases = 0;
}

FIXTURE_TEARDOWN(neg)
{
	nl_close(&self->nl);
	gv_write(GV_SIM_BUS "/del_device", "1");
	gv_write("/sys/bus/mdev/devices/" UUID_A "/remove", "1");
	gv_unload_all();
}

/*
 * Run one case: it must fail with an errno and an extack message, and the
 * valid request it was made from must still succeed (the family is fine).
 */
#define CHECK_CASE(op, c, desc) do {					\
	int _e = send_case(&self->nl, (op), (c));			\
	self->cases++;							\
	if (!_e || !self->nl.ext_msg[0])				\
		TH_LOG("%s: %s: err %d, extack \"%s\"", (op)->name,	\
		       (desc), _e, self->nl.ext_msg);			\
	EXPECT_GT(0, _e);						\
	EXPECT_NE(0, self->nl.ext_msg[0]);				\
} while (0)

static void check_unchanged(struct __test_metadata *_metadata,
			    const struct state *before)
{
	struct state now;

	snapshot(&now);
	EXPECT_STREQ(before->policy, now.policy);
	EXPECT_STREQ(before->slice, now.slice);
	EXPECT_STREQ(before->weight, now.weight);
	EXPECT_STREQ(before->min, now.min);
	EXPECT_STREQ(before->max, now.max);
	EXPECT_STREQ(before->avail, now.avail);
	EXPECT_EQ(before->vgpus, now.vgpus);
	EXPECT_STREQ(before->mig0, now.mig0);
	EXPECT_STREQ(before->mig1, now.mig1);
	EXPECT_EQ(before->gis, now.gis);
}

static const uint32_t bad_lens[] = { 0, 1, 2, 3, 5, 6, 7, 8 };

TEST_F(neg, every_attribute_malformed)
{
	const struct op *op;
	struct negcase c;
	unsigned int i, l;
	char desc[64];

	for (op = ops; op < ops + ARRAY_SIZE(ops); op++) {
		for (i = 0; i < op->n; i++) {
			const struct attr *a = &op->a[i];

			memset(&c, 0, sizeof(c));
			c.idx = i;
			if (a->kind == U32) {
				c.how = LEN;
				for (l = 0; l < ARRAY_SIZE(bad_lens); l++) {
					c.arg = bad_lens[l];
					snprintf(desc, sizeof(desc),
						 "attr %u with %u bytes", a->type, c.arg);
					CHECK_CASE(op, &c, desc);
				}
			} else {
				c.how = NOTERM;
				CHECK_CASE(op, &c, "string without NUL");
				c.how = TOOLONG;
				CHECK_CASE(op, &c, "string too long");
			}
			c.how = DUP;
			snprintf(desc, sizeof(desc), "attr %u twice", a->type);
			CHECK_CASE(op, &c, desc);
			c.how = NESTFLAG;
			snprintf(desc, sizeof(desc), "attr %u flagged nested",
				 a->type);
			CHECK_CASE(op, &c, desc);
		}
	}
	check_unchanged(_metadata, &self->before);
	TH_LOG("%u cases", self->cases);
	EXPECT_LE(130, self->cases);
}

TEST_F(neg, every_request_malformed)
{
	const struct op *op;
	struct negcase c;

	for (op = ops; op < ops + ARRAY_SIZE(ops); op++) {
		memset(&c, 0, sizeof(c));
		c.idx = ~0u;
		c.how = EXTRA;
		c.arg = op->maxattr + 1;
		CHECK_CASE(op, &c, "attribute past the set");
		c.arg = 63;
		CHECK_CASE(op, &c, "attribute 63");
		c.arg = 0;
		CHECK_CASE(op, &c, "attribute 0 (unspec)");
		c.arg = op->foreign;
		CHECK_CASE(op, &c, "attribute the op does not take");
		c.how = RESERVED;
		c.arg = 1;
		CHECK_CASE(op, &c, "reserved header field 1");
		c.arg = 0x8000;
		CHECK_CASE(op, &c, "reserved header field 0x8000");
		c.how = TRUNC;
		CHECK_CASE(op, &c, "truncated attribute");
		c.how = SHORTATTR;
		CHECK_CASE(op, &c, "attribute shorter than its header");
		c.how = TRAILING;
		CHECK_CASE(op, &c, "stray trailing bytes");
	}
	check_unchanged(_metadata, &self->before);
	TH_LOG("%u cases", self->cases);
	EXPECT_EQ(9 * ARRAY_SIZE(ops), self->cases);
}

static const struct op *op_named(const char *name)
{
	const struct op *op;

	for (op = ops; op < ops + ARRAY_SIZE(ops); op++)
		if (!strcmp(op->name, name))
			return op;
	return NULL;
}

TEST_F(neg, values_out_of_range_and_unknown_objects)
{
	static const struct {
		const char *op;
		unsigned int idx;
		enum how how;
		uint32_t v;
		const char *s;
	} t[] = {
#define V(o, i, val)	{ .op = (o), .idx = (i), .how = VALUE, .v = (val) }
#define S(o, i, str)	{ .op = (o), .idx = (i), .how = STRVAL, .s = (str) }
#define D(o, i)		{ .op = (o), .idx = (i), .how = DROP }
		V("vgpu-set", 1, 0),
		V("vgpu-set", 1, 10001),
		V("vgpu-set", 1, UINT32_MAX),
		V("vgpu-set", 2, 101),
		V("vgpu-set", 2, UINT32_MAX),
		V("vgpu-set", 3, 0),
		V("vgpu-set", 3, 101),
		V("vgpu-set", 2, 60),		/* min above max */
		S("vgpu-set", 0, "badc0de0-0000-4000-8000-0000000000ff"),
		S("vgpu-set", 0, ""),
		S("vgpu-get", 0, "not-a-uuid"),
		V("sched-set", 1, 4),
		V("sched-set", 1, UINT32_MAX),
		V("sched-set", 2, 100001),
		V("sched-set", 2, 99),
		V("sched-set", 2, 1),
		V("sched-set", 2, UINT32_MAX),
		V("sched-set", 0, 7),		/* no such GPU */
		V("sched-get", 0, 7),
		V("gpu-get", 0, 7),
		V("type-get", 0, 7),
		S("type-get", 1, "H200-36C"),
		S("type-get", 1, ""),
		/* required attributes left out */
		D("gpu-get", 0),
		D("type-get", 0),
		D("type-get", 1),
		D("vgpu-get", 0),
		D("vgpu-set", 0),
		D("sched-get", 0),
		D("sched-set", 0),
		/* MIG: out of range, illegal, unknown, missing */
		V("gpu-set", 1, 2),		/* no such mode */
		V("gpu-set", 0, 7),		/* no such GPU */
		V("gpu-set", 0, 0),		/* GPU 0 has a vGPU */
		D("gpu-set", 1),
		S("gi-new", 1, "5g.99gb"),
		S("gi-new", 1, "H200-35C"),
		S("gi-new", 1, ""),
		V("gi-new", 2, 8),		/* past the memory axis */
		V("gi-new", 2, 2),		/* not a start of 3g */
		V("gi-new", 2, UINT32_MAX),
		V("gi-new", 0, 0),		/* GPU 0 is time-sliced */
		V("gi-new", 0, 7),
		D("gi-new", 1),
		D("gi-new", 0),
		V("gi-get", 1, 7),
		V("gi-get", 1, 3),		/* no such GI */
		V("gi-get", 0, 0),		/* GPU 0 has no GIs */
		D("gi-get", 1),
		V("gi-del", 1, 3),
		V("gi-del", 1, 7),
		V("gi-del", 0, 0),
		D("gi-del", 1),
		D("gi-del", 0),
		S("pt-get", 0, "zz:00.0"),
		S("pt-get", 0, "0000:00:07.8"),
		S("pt-get", 0, "0000:00:1f.7"),	/* no such device */
		S("pt-get", 0, "sim0"),
		D("pt-get", 0),
	};
	struct negcase c;
	unsigned int i;
	char desc[64];

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		const struct op *op = op_named(t[i].op);

		ASSERT_NE(NULL, op);
		c = (struct negcase){ .how = t[i].how, .idx = t[i].idx,
				      .arg = t[i].v, .str = t[i].s };
		snprintf(desc, sizeof(desc), "case %u", i);
		CHECK_CASE(op, &c, desc);
	}
	/* sched-set with only a gpu-id: nothing to set */
	{
		const struct op *op = op_named("sched-set");

		c = (struct negcase){ .how = DROP, .idx = 1 };
		ASSERT_NE(NULL, op);
		{
			struct op only_id = *op;

			only_id.n = 1;
			CHECK_CASE(&only_id, &c, "nothing to set");
		}
	}
	check_unchanged(_metadata, &self->before);
	TH_LOG("%u cases", self->cases);
}

/* The valid requests the cases were made from do work. */
TEST_F(neg, the_valid_requests_succeed)
{
	char buf[GV_NLBUF];
	const struct op *op;
	struct nlmsghdr *nlh;
	unsigned int i;

	for (op = ops; op < ops + ARRAY_SIZE(ops); op++) {
		nlh = genl_req(&self->nl, buf, self->nl.family, op->cmd,
			       op->dump ? NLM_F_DUMP : 0);
		for (i = 0; i < op->n; i++) {
			if (op->a[i].kind == U32)
				mnl_attr_put_u32(nlh, op->a[i].type, op->a[i].u);
			else
				mnl_attr_put_strz(nlh, op->a[i].type, op->a[i].s);
		}
		EXPECT_EQ(0, nl_talk(&self->nl, nlh, discard_cb, NULL)) {
			TH_LOG("%s: %s", op->name, self->nl.ext_msg);
		}
	}
	/* and the two set requests did what they say */
	EXPECT_EQ(5, gv_kv_u64(GV_DEBUGFS "/gpus/sim0/vgpus/" UUID_A "/sched",
			       "weight"));
	EXPECT_EQ(300000, gv_kv_u64(GV_DEBUGFS "/gpus/sim0/sched", "slice_ns"));
	/* the GI they made, they destroyed */
	EXPECT_EQ(0, count_gis());
}

TEST_HARNESS_MAIN
