// SPDX-License-Identifier: GPL-2.0-only
/*
 * The type, vgpu and sched objects of the gpuvirt netlink family: what they
 * report matches sysfs and the scheduler's debugfs, changes made over
 * netlink land there too and are announced on the monitor group, every
 * refusal carries an extack and changes nothing, the mutating and tenant
 * revealing commands are root's alone, and a dump that spans a change is
 * flagged NLM_F_DUMP_INTR.
 */
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "gv_nl.h"

#define NEW	GV_SIM_BUS "/new_device"
#define TYPES	"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define T35	TYPES "/gpuvirt_sim-H200-35C"
#define UUID_A	"c0de0000-0000-4000-8000-00000000000a"
#define UUID_B	"c0de0000-0000-4000-8000-00000000000b"
#define SCHED	GV_DEBUGFS "/gpus/sim0/sched"

/* What one reply or notification said, for the attributes tests look at. */
struct obj {
	int cmd;
	uint16_t flags;
	uint32_t gpu_id, weight, min_pct, max_pct, policy, slice_us;
	uint32_t avail, max_inst, ctx;
	uint64_t fb_size, vram_size, run_ns;
	bool has_stats;
	char name[64];
};

struct objs {
	struct obj o[256];
	unsigned int n;
};

static int obj_attr_cb(const struct nlattr *a, void *data)
{
	struct obj *o = data;
	const struct nlattr *n;

	/* attribute numbers overlap between sets: decode by command */
	switch (o->cmd) {
	case GPUVIRT_CMD_TYPE_GET:
		if (mnl_attr_get_type(a) == GPUVIRT_A_TYPE_NAME)
			snprintf(o->name, sizeof(o->name), "%s", mnl_attr_get_str(a));
		if (mnl_attr_get_type(a) == GPUVIRT_A_TYPE_AVAILABLE_INSTANCES)
			o->avail = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == GPUVIRT_A_TYPE_MAX_INSTANCES)
			o->max_inst = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == GPUVIRT_A_TYPE_FB_SIZE)
			o->fb_size = mnl_attr_get_u64(a);
		if (mnl_attr_get_type(a) == GPUVIRT_A_TYPE_GPU_ID)
			o->gpu_id = mnl_attr_get_u32(a);
		break;
	case GPUVIRT_CMD_VGPU_GET:
	case GPUVIRT_CMD_VGPU_ADD_NTF:
	case GPUVIRT_CMD_VGPU_DEL_NTF:
	case GPUVIRT_CMD_VGPU_CHANGE_NTF:
		switch (mnl_attr_get_type(a)) {
		case GPUVIRT_A_VGPU_UUID:
			snprintf(o->name, sizeof(o->name), "%s", mnl_attr_get_str(a));
			break;
		case GPUVIRT_A_VGPU_GPU_ID:
			o->gpu_id = mnl_attr_get_u32(a);
			break;
		case GPUVIRT_A_VGPU_WEIGHT:
			o->weight = mnl_attr_get_u32(a);
			break;
		case GPUVIRT_A_VGPU_MIN_PCT:
			o->min_pct = mnl_attr_get_u32(a);
			break;
		case GPUVIRT_A_VGPU_MAX_PCT:
			o->max_pct = mnl_attr_get_u32(a);
			break;
		case GPUVIRT_A_VGPU_VRAM_SIZE:
			o->vram_size = mnl_attr_get_u64(a);
			break;
		case GPUVIRT_A_VGPU_CTX:
			o->ctx = mnl_attr_get_u32(a);
			break;
		case GPUVIRT_A_VGPU_STATS:
			o->has_stats = true;
			mnl_attr_for_each_nested(n, a)
				if (mnl_attr_get_type(n) == GPUVIRT_A_VGPU_STATS_RUN_NS)
					o->run_ns = mnl_attr_get_u64(n);
			break;
		}
		break;
	case GPUVIRT_CMD_SCHED_GET:
	case GPUVIRT_CMD_SCHED_CHANGE_NTF:
		if (mnl_attr_get_type(a) == GPUVIRT_A_SCHED_GPU_ID)
			o->gpu_id = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == GPUVIRT_A_SCHED_POLICY)
			o->policy = mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == GPUVIRT_A_SCHED_TIMESLICE_US)
			o->slice_us = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

static int objs_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct objs *l = data;
	struct obj *o;

	if (l->n >= ARRAY_SIZE(l->o))
		return MNL_CB_ERROR;
	o = &l->o[l->n++];
	memset(o, 0, sizeof(*o));
	o->cmd = g->cmd;
	o->flags = nlh->nlmsg_flags;
	mnl_attr_parse(nlh, sizeof(*g), obj_attr_cb, o);
	return MNL_CB_OK;
}

static struct nlmsghdr *req(struct nl *nl, char *buf, uint8_t cmd,
			    uint16_t flags)
{
	return genl_req(nl, buf, nl->family, cmd, flags);
}

static int run(struct nl *nl, struct nlmsghdr *nlh, struct objs *l)
{
	l->n = 0;
	return nl_talk(nl, nlh, objs_cb, l);
}

static int vgpu_get(struct nl *nl, const char *uuid, struct objs *l)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_VGPU_GET, 0);

	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	return run(nl, nlh, l);
}

/* vgpu-set with the given fields; U32_MAX leaves one out. */
static int vgpu_set(struct nl *nl, const char *uuid, uint32_t weight,
		    uint32_t min, uint32_t max)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_VGPU_SET, 0);
	struct objs l;

	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	if (weight != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_WEIGHT, weight);
	if (min != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MIN_PCT, min);
	if (max != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MAX_PCT, max);
	return run(nl, nlh, &l);
}

static int sched_set(struct nl *nl, uint32_t gpu, uint32_t policy,
		     uint32_t slice_us)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_SCHED_SET, 0);
	struct objs l;

	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, gpu);
	if (policy != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_POLICY, policy);
	if (slice_us != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_TIMESLICE_US, slice_us);
	return run(nl, nlh, &l);
}

/* A sysfs file's first line, without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	int n = gv_read(path, buf, len);

	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

static unsigned long sysfs_ul(const char *fmt, const char *arg)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), fmt, arg);
	if (gv_read(path, buf, sizeof(buf)) < 0)
		return ~0UL;
	return strtoul(buf, NULL, 0);
}

#define VGPU_ATTR(uuid, f)	sysfs_ul("/sys/bus/mdev/devices/%s/gpuvirt/" f, uuid)

FIXTURE(obj) {
	struct nl nl;
	struct objs *l;
};

FIXTURE_SETUP(obj)
{
	self->l = NULL;
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	self->l = calloc(1, sizeof(*self->l));
	ASSERT_NE(NULL, self->l);
	ASSERT_EQ(0, gv_setup_h200());
	ASSERT_EQ(0, gv_write(T35 "/create", UUID_A));
	ASSERT_EQ(0, gv_write(T35 "/create", UUID_B));
	ASSERT_EQ(0, nl_open(&self->nl));
}

FIXTURE_TEARDOWN(obj)
{
	nl_close(&self->nl);
	gv_write("/sys/bus/mdev/devices/" UUID_A "/remove", "1");
	gv_write("/sys/bus/mdev/devices/" UUID_B "/remove", "1");
	gv_unload_all();
	free(self->l);
}

/* Every type of the GPU, as sysfs has it, available_instances included. */
TEST_F(obj, type_dump_matches_sysfs)
{
	char buf[GV_NLBUF], path[256], val[64];
	struct nlmsghdr *nlh;
	unsigned int i;

	nlh = req(&self->nl, buf, GPUVIRT_CMD_TYPE_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, 0);
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	ASSERT_LT(10, self->l->n);
	for (i = 0; i < self->l->n; i++) {
		struct obj *o = &self->l->o[i];

		snprintf(path, sizeof(path), TYPES "/gpuvirt_sim-%s/name", o->name);
		ASSERT_LT(0, read_line(path, val, sizeof(val)));
		EXPECT_STREQ(o->name, val);
		EXPECT_EQ(sysfs_ul(TYPES "/gpuvirt_sim-%s/available_instances",
				   o->name), o->avail);
		EXPECT_EQ(0, o->gpu_id);
	}

	/* one type by name: two H200-35C exist, so 2 of 4 are left */
	nlh = req(&self->nl, buf, GPUVIRT_CMD_TYPE_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, "H200-35C");
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	ASSERT_EQ(1, self->l->n);
	EXPECT_EQ(4, self->l->o[0].max_inst);
	EXPECT_EQ(2, self->l->o[0].avail);
	EXPECT_EQ(35ULL << 30, self->l->o[0].fb_size);

	nlh = req(&self->nl, buf, GPUVIRT_CMD_TYPE_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, "H200-36C");
	EXPECT_EQ(-ENOENT, run(&self->nl, nlh, self->l));
	EXPECT_STREQ("the GPU has no type of this name", self->nl.ext_msg);
}

/* vgpu-set lands in the scheduler: sysfs and debugfs agree. */
TEST_F(obj, vgpu_get_set_and_dump)
{
	char buf[GV_NLBUF], path[256];
	struct nlmsghdr *nlh;

	ASSERT_EQ(0, vgpu_get(&self->nl, UUID_A, self->l));
	ASSERT_EQ(1, self->l->n);
	EXPECT_STREQ(UUID_A, self->l->o[0].name);
	EXPECT_EQ(100, self->l->o[0].weight);
	EXPECT_EQ(0, self->l->o[0].min_pct);
	EXPECT_EQ(100, self->l->o[0].max_pct);
	EXPECT_EQ(35ULL << 30, self->l->o[0].vram_size);
	EXPECT_TRUE(self->l->o[0].has_stats);

	ASSERT_EQ(0, vgpu_set(&self->nl, UUID_A, 300, 20, 50));
	EXPECT_EQ(300, VGPU_ATTR(UUID_A, "weight"));
	EXPECT_EQ(20, VGPU_ATTR(UUID_A, "min_pct"));
	EXPECT_EQ(50, VGPU_ATTR(UUID_A, "max_pct"));
	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/vgpus/%s/sched",
		 UUID_A);
	EXPECT_EQ(200000, gv_kv_u64(path, "min_ppm"));
	EXPECT_EQ(300, gv_kv_u64(path, "weight"));

	/* a field left out keeps its value */
	ASSERT_EQ(0, vgpu_set(&self->nl, UUID_A, UINT32_MAX, UINT32_MAX, 60));
	ASSERT_EQ(0, vgpu_get(&self->nl, UUID_A, self->l));
	EXPECT_EQ(300, self->l->o[0].weight);
	EXPECT_EQ(20, self->l->o[0].min_pct);
	EXPECT_EQ(60, self->l->o[0].max_pct);

	/* a sysfs write shows over netlink */
	ASSERT_EQ(0, gv_write("/sys/bus/mdev/devices/" UUID_B "/gpuvirt/weight",
			      "7"));
	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_GPU_ID, 0);
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	ASSERT_EQ(2, self->l->n);
	EXPECT_STREQ(UUID_A, self->l->o[0].name);
	EXPECT_STREQ(UUID_B, self->l->o[1].name);
	EXPECT_EQ(7, self->l->o[1].weight);
	EXPECT_NE(self->l->o[0].ctx, self->l->o[1].ctx);

	/* a filter for a GPU with no vGPUs */
	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_GPU_ID, 9);
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	EXPECT_EQ(0, self->l->n);
}

/* One vGPU message as it came: its attributes, after the genetlink header. */
struct raw_msg {
	unsigned int len;
	unsigned char attrs[1024];
};

struct raw_msgs {
	struct raw_msg m[8];
	unsigned int n;
};

static int raw_cb(const struct nlmsghdr *nlh, void *data)
{
	unsigned int len = mnl_nlmsg_get_payload_len(nlh) - GENL_HDRLEN;
	struct raw_msgs *r = data;

	if (r->n >= ARRAY_SIZE(r->m) || len > sizeof(r->m[0].attrs))
		return MNL_CB_ERROR;
	r->m[r->n].len = len;
	memcpy(r->m[r->n].attrs, mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN),
	       len);
	r->n++;
	return MNL_CB_OK;
}

#define NO_OMIT	UINT32_MAX	/* raw_vgpu_get(): no omit attribute at all */

/*
 * vgpu-get of @uuid, or the dump of GPU 0's vGPUs when @uuid is NULL,
 * with @omit as the omit attribute unless it is NO_OMIT.
 */
static int raw_vgpu_get(struct nl *nl, const char *uuid, uint32_t omit,
			struct raw_msgs *r)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;

	nlh = req(nl, buf, GPUVIRT_CMD_VGPU_GET, uuid ? 0 : NLM_F_DUMP);
	if (uuid)
		mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	else
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_GPU_ID, 0);
	if (omit != NO_OMIT)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_OMIT, omit);
	r->n = 0;
	return nl_talk(nl, nlh, raw_cb, r);
}

/* The attributes inside a nest, its pad attribute (@pad) not counted. */
static unsigned int nest_len(const struct nlattr *nest, unsigned int pad)
{
	const struct nlattr *a;
	unsigned int n = 0;

	mnl_attr_for_each_nested(a, nest)
		n += mnl_attr_get_type(a) != pad;
	return n;
}

/*
 * @m without its stats and migration nests, into @out; the top-level
 * attribute types it had, as bits, into @types; and the attributes in
 * those nests into @stats and @mig (0 for a nest it did not have).
 */
static void raw_strip(const struct raw_msg *m, struct raw_msg *out,
		      uint64_t *types, unsigned int *stats, unsigned int *mig)
{
	const struct nlattr *a = (const void *)m->attrs;
	int rem = m->len;

	out->len = 0;
	*types = 0;
	*stats = *mig = 0;
	while (mnl_attr_ok(a, rem)) {
		unsigned int t = mnl_attr_get_type(a);

		*types |= 1ULL << t;
		if (t == GPUVIRT_A_VGPU_STATS) {
			*stats = nest_len(a, GPUVIRT_A_VGPU_STATS_PAD);
		} else if (t == GPUVIRT_A_VGPU_MIGRATION) {
			*mig = nest_len(a, GPUVIRT_A_VGPU_MIGRATION_PAD);
		} else {
			memcpy(out->attrs + out->len, a, MNL_ALIGN(a->nla_len));
			out->len += MNL_ALIGN(a->nla_len);
		}
		rem -= MNL_ALIGN(a->nla_len);
		a = mnl_attr_next(a);
	}
}

/*
 * The omit attribute leaves out the nests it names, in a dump and in a
 * reply to a get, and nothing else: every other attribute comes as it
 * does without it. Without it, or at 0, a vGPU carries both nests in
 * full: 6 scheduling counters, the migration state and 6 counters.
 */
TEST_F(obj, vgpu_omit_leaves_out_only_what_it_names)
{
	static const uint32_t masks[] = {
		0, GPUVIRT_VGPU_OMIT_STATS, GPUVIRT_VGPU_OMIT_MIGRATION,
		GPUVIRT_VGPU_OMIT_STATS | GPUVIRT_VGPU_OMIT_MIGRATION,
	};
	const uint64_t st_bit = 1ULL << GPUVIRT_A_VGPU_STATS;
	const uint64_t mig_bit = 1ULL << GPUVIRT_A_VGPU_MIGRATION;
	struct raw_msgs *full, *part;
	struct raw_msg a, b;
	unsigned int i, k, sa, ma, sb, mb;
	uint64_t ta, tb;

	full = calloc(1, sizeof(*full));
	part = calloc(1, sizeof(*part));
	ASSERT_NE(NULL, full);
	ASSERT_NE(NULL, part);

	ASSERT_EQ(0, raw_vgpu_get(&self->nl, NULL, NO_OMIT, full));
	ASSERT_EQ(2, full->n);
	for (i = 0; i < full->n; i++) {
		raw_strip(&full->m[i], &a, &ta, &sa, &ma);
		EXPECT_EQ(st_bit | mig_bit, ta & (st_bit | mig_bit));
		EXPECT_EQ(6, sa);
		EXPECT_EQ(7, ma);
		EXPECT_TRUE(ta & (1ULL << GPUVIRT_A_VGPU_UUID));
		EXPECT_TRUE(ta & (1ULL << GPUVIRT_A_VGPU_CTX));
		EXPECT_FALSE(ta & (1ULL << GPUVIRT_A_VGPU_OMIT));
	}

	for (k = 0; k < ARRAY_SIZE(masks); k++) {
		uint32_t omit = masks[k];

		TH_LOG("omit %u", omit);
		ASSERT_EQ(0, raw_vgpu_get(&self->nl, NULL, omit, part));
		ASSERT_EQ(full->n, part->n);
		for (i = 0; i < full->n; i++) {
			raw_strip(&full->m[i], &a, &ta, &sa, &ma);
			raw_strip(&part->m[i], &b, &tb, &sb, &mb);
			EXPECT_EQ(ta & ~(st_bit | mig_bit),
				  tb & ~(st_bit | mig_bit));
			EXPECT_EQ(!(omit & GPUVIRT_VGPU_OMIT_STATS),
				  !!(tb & st_bit));
			EXPECT_EQ(!(omit & GPUVIRT_VGPU_OMIT_MIGRATION),
				  !!(tb & mig_bit));
			EXPECT_EQ(omit & GPUVIRT_VGPU_OMIT_STATS ? 0 : 6, sb);
			EXPECT_EQ(omit & GPUVIRT_VGPU_OMIT_MIGRATION ? 0 : 7, mb);
			ASSERT_EQ(a.len, b.len);
			EXPECT_EQ(0, memcmp(a.attrs, b.attrs, a.len));
		}

		/* the same in a reply to a get */
		ASSERT_EQ(0, raw_vgpu_get(&self->nl, UUID_B, omit, part));
		ASSERT_EQ(1, part->n);
		raw_strip(&full->m[1], &a, &ta, &sa, &ma);
		raw_strip(&part->m[0], &b, &tb, &sb, &mb);
		EXPECT_EQ(!(omit & GPUVIRT_VGPU_OMIT_STATS), !!(tb & st_bit));
		EXPECT_EQ(!(omit & GPUVIRT_VGPU_OMIT_MIGRATION),
			  !!(tb & mig_bit));
		ASSERT_EQ(a.len, b.len);
		EXPECT_EQ(0, memcmp(a.attrs, b.attrs, a.len));
	}

	/* a bit that names no part is refused, naming the attribute */
	EXPECT_EQ(-EINVAL, raw_vgpu_get(&self->nl, NULL, 4, part));
	EXPECT_STREQ("reserved bit set", self->nl.ext_msg);
	EXPECT_EQ(-EINVAL, raw_vgpu_get(&self->nl, UUID_A, 0x80000003, part));
	EXPECT_STREQ("reserved bit set", self->nl.ext_msg);
	EXPECT_NE(0, self->nl.ext_off);
	free(full);
	free(part);
}

/* Each refusal: its errno, its extack, and nothing changed. */
TEST_F(obj, vgpu_set_refusals_change_nothing)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;

	ASSERT_EQ(0, vgpu_set(&self->nl, UUID_A, 200, 30, 80));

	EXPECT_EQ(-EINVAL, vgpu_set(&self->nl, UUID_A, 500, 90, 40));
	EXPECT_STREQ("min-pct must not be above max-pct", self->nl.ext_msg);
	EXPECT_EQ(-ENOSPC, vgpu_set(&self->nl, UUID_B, UINT32_MAX, 71,
				    UINT32_MAX));
	EXPECT_STREQ("the minimums of the GPU's vGPUs would add up past 100%",
		     self->nl.ext_msg);
	/* the spec's ranges, enforced by the policy */
	EXPECT_EQ(-ERANGE, vgpu_set(&self->nl, UUID_A, 0, UINT32_MAX,
				    UINT32_MAX));
	EXPECT_NE(0, strlen(self->nl.ext_msg));
	EXPECT_EQ(-ERANGE, vgpu_set(&self->nl, UUID_A, 10001, UINT32_MAX,
				    UINT32_MAX));
	EXPECT_EQ(-ERANGE, vgpu_set(&self->nl, UUID_A, UINT32_MAX, 101,
				    UINT32_MAX));
	EXPECT_EQ(-ERANGE, vgpu_set(&self->nl, UUID_A, UINT32_MAX, UINT32_MAX,
				    0));
	EXPECT_EQ(-ENOENT, vgpu_set(&self->nl, "c0de0000-0000-4000-8000-0000000000ff",
				    1, UINT32_MAX, UINT32_MAX));
	EXPECT_STREQ("no vGPU with this UUID", self->nl.ext_msg);
	/* a UUID longer than any UUID */
	EXPECT_EQ(-EINVAL, vgpu_set(&self->nl, UUID_A "0", 1, UINT32_MAX,
				    UINT32_MAX));
	/* no UUID */
	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_SET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_WEIGHT, 5);
	EXPECT_EQ(-EINVAL, run(&self->nl, nlh, self->l));
	EXPECT_EQ(GPUVIRT_A_VGPU_UUID, self->nl.ext_miss_type);
	/* a weight of the wrong width */
	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_SET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, UUID_A);
	mnl_attr_put_u64(nlh, GPUVIRT_A_VGPU_WEIGHT, 5);
	EXPECT_EQ(-EINVAL, run(&self->nl, nlh, self->l));
	/* an attribute vgpu-set does not take */
	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_SET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, UUID_A);
	mnl_attr_put_u64(nlh, GPUVIRT_A_VGPU_VRAM_SIZE, 5);
	EXPECT_EQ(-EINVAL, run(&self->nl, nlh, self->l));

	ASSERT_EQ(0, vgpu_get(&self->nl, UUID_A, self->l));
	EXPECT_EQ(200, self->l->o[0].weight);
	EXPECT_EQ(30, self->l->o[0].min_pct);
	EXPECT_EQ(80, self->l->o[0].max_pct);
	EXPECT_EQ(0, VGPU_ATTR(UUID_B, "min_pct"));
}

TEST_F(obj, sched_get_set)
{
	char buf[GV_NLBUF], val[32];
	struct nlmsghdr *nlh;

	ASSERT_EQ(0, sched_set(&self->nl, 0, GPUVIRT_SCHED_POLICY_FIXED_SHARE,
			       500));
	ASSERT_LT(0, read_line(GV_SIM_BUS "/devices/sim0/gpu/gpuvirt/sched_policy",
			       val, sizeof(val)));
	EXPECT_STREQ("fixed-share", val);
	EXPECT_EQ(500, sysfs_ul("%s", GV_SIM_BUS "/devices/sim0/gpu/gpuvirt/sched_slice_us"));
	EXPECT_EQ(500000, gv_kv_u64(SCHED, "slice_ns"));

	nlh = req(&self->nl, buf, GPUVIRT_CMD_SCHED_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, 0);
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	ASSERT_EQ(1, self->l->n);
	EXPECT_EQ(GPUVIRT_SCHED_POLICY_FIXED_SHARE, self->l->o[0].policy);
	EXPECT_EQ(500, self->l->o[0].slice_us);

	/* refusals */
	EXPECT_EQ(-ERANGE, sched_set(&self->nl, 0, UINT32_MAX, 50));
	EXPECT_STREQ("time slice must be 0 (default) or 100 to 100000 us",
		     self->nl.ext_msg);
	EXPECT_EQ(-ERANGE, sched_set(&self->nl, 0, UINT32_MAX, 100001));
	EXPECT_EQ(-ERANGE, sched_set(&self->nl, 0, 4, UINT32_MAX));
	EXPECT_EQ(-EINVAL, sched_set(&self->nl, 0, UINT32_MAX, UINT32_MAX));
	EXPECT_STREQ("nothing to set: give policy or timeslice-us",
		     self->nl.ext_msg);
	EXPECT_EQ(-ENOENT, sched_set(&self->nl, 3, 0, UINT32_MAX));
	EXPECT_STREQ("no GPU with this id", self->nl.ext_msg);
	EXPECT_EQ(500000, gv_kv_u64(SCHED, "slice_ns"));

	/* back to the default slice: 2 ms with two vGPUs */
	ASSERT_EQ(0, sched_set(&self->nl, 0, UINT32_MAX, 0));
	EXPECT_EQ(2000000, gv_kv_u64(SCHED, "slice_ns"));

	nlh = req(&self->nl, buf, GPUVIRT_CMD_SCHED_GET, NLM_F_DUMP);
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	ASSERT_EQ(1, self->l->n);
	EXPECT_EQ(0, self->l->o[0].slice_us);
}

/* Run @fn in a child with the given credentials; its exit status. */
static int as_other(bool userns, int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		if (userns) {
			/* root of a new user namespace, in the initial netns */
			if (unshare(CLONE_NEWUSER))
				_exit(100);
		} else if (setgid(65534) || setuid(65534)) {
			_exit(101);
		}
		_exit(fn());
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* 0 when every admin command is refused with EPERM and reads work. */
static int unprivileged_checks(void)
{
	struct objs *l = calloc(1, sizeof(*l));
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	struct nl nl;
	int grp, bad = 0;

	if (!l || nl_open(&nl))
		return 10;
	bad |= (vgpu_get(&nl, UUID_A, l) != -EPERM) << 0;
	bad |= (vgpu_set(&nl, UUID_A, 5, UINT32_MAX, UINT32_MAX) != -EPERM) << 1;
	bad |= (sched_set(&nl, 0, 1, UINT32_MAX) != -EPERM) << 2;
	nlh = req(&nl, buf, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	bad |= (run(&nl, nlh, l) != -EPERM) << 3;
	/* the GPU and its scheduler and types are not tenant data */
	nlh = req(&nl, buf, GPUVIRT_CMD_SCHED_GET, NLM_F_DUMP);
	bad |= (run(&nl, nlh, l) != 0) << 4;
	nlh = req(&nl, buf, GPUVIRT_CMD_TYPE_GET, NLM_F_DUMP);
	bad |= (run(&nl, nlh, l) != 0 || !l->n) << 5;
	/* nor may they listen to the monitor group */
	grp = nl.monitor_grp;
	bad |= (!mnl_socket_setsockopt(nl.sk, NETLINK_ADD_MEMBERSHIP, &grp,
				       sizeof(grp))) << 6;
	nl_close(&nl);
	free(l);
	return bad;
}

TEST_F(obj, admin_commands_need_cap_net_admin)
{
	EXPECT_EQ(0, as_other(false, unprivileged_checks));
	EXPECT_EQ(0, as_other(true, unprivileged_checks));
	/* and nothing changed */
	EXPECT_EQ(100, VGPU_ATTR(UUID_A, "weight"));
	EXPECT_EQ(2000000, gv_kv_u64(SCHED, "slice_ns"));
	EXPECT_EQ(0, gv_kv_u64(SCHED, "vgpus") != 2);
}

/* Wait for one notification. */
static int monitor_next(struct nl *mon, struct objs *l)
{
	l->n = 0;
	return nl_monitor_next(mon, objs_cb, l);
}

TEST_F(obj, changes_are_announced)
{
	const char *uuid_c = "c0de0000-0000-4000-8000-00000000000c";
	struct nl mon;
	int grp;

	ASSERT_EQ(0, nl_open(&mon));
	grp = mon.monitor_grp;
	ASSERT_EQ(0, mnl_socket_setsockopt(mon.sk, NETLINK_ADD_MEMBERSHIP,
					   &grp, sizeof(grp)));

	ASSERT_EQ(0, gv_write(T35 "/create", uuid_c));
	ASSERT_EQ(0, monitor_next(&mon, self->l));
	EXPECT_EQ(GPUVIRT_CMD_VGPU_ADD_NTF, self->l->o[0].cmd);
	EXPECT_STREQ(uuid_c, self->l->o[0].name);

	ASSERT_EQ(0, vgpu_set(&self->nl, uuid_c, 42, UINT32_MAX, UINT32_MAX));
	ASSERT_EQ(0, monitor_next(&mon, self->l));
	EXPECT_EQ(GPUVIRT_CMD_VGPU_CHANGE_NTF, self->l->o[0].cmd);
	EXPECT_EQ(42, self->l->o[0].weight);

	ASSERT_EQ(0, gv_write("/sys/bus/mdev/devices/c0de0000-0000-4000-8000-00000000000c/gpuvirt/max_pct",
			      "30"));
	ASSERT_EQ(0, monitor_next(&mon, self->l));
	EXPECT_EQ(GPUVIRT_CMD_VGPU_CHANGE_NTF, self->l->o[0].cmd);
	EXPECT_EQ(30, self->l->o[0].max_pct);

	ASSERT_EQ(0, gv_write(GV_SIM_BUS "/devices/sim0/gpu/gpuvirt/sched_policy",
			      "weighted"));
	ASSERT_EQ(0, monitor_next(&mon, self->l));
	EXPECT_EQ(GPUVIRT_CMD_SCHED_CHANGE_NTF, self->l->o[0].cmd);
	EXPECT_EQ(GPUVIRT_SCHED_POLICY_WEIGHTED, self->l->o[0].policy);

	/* a refused change says nothing */
	EXPECT_EQ(-EINVAL, vgpu_set(&self->nl, uuid_c, UINT32_MAX, 50, 20));
	EXPECT_EQ(-ETIMEDOUT, monitor_next(&mon, self->l));

	ASSERT_EQ(0, gv_write("/sys/bus/mdev/devices/c0de0000-0000-4000-8000-00000000000c/remove",
			      "1"));
	ASSERT_EQ(0, monitor_next(&mon, self->l));
	EXPECT_EQ(GPUVIRT_CMD_VGPU_DEL_NTF, self->l->o[0].cmd);
	EXPECT_STREQ(uuid_c, self->l->o[0].name);
	nl_close(&mon);
}

/*
 * A dump of 64 vGPUs spans several messages; a vGPU created between two of
 * them marks the rest of the dump NLM_F_DUMP_INTR. Without a change, no
 * message is marked.
 */
TEST_F(obj, dump_interrupted_by_a_change_is_flagged)
{
	char uuid[40], buf[GV_NLBUF];
	unsigned int i, total = 0, intr = 0, rounds = 0;
	struct mnl_socket *sk;
	struct nlmsghdr *nlh;
	char small[8192];
	int n;

	gv_write("/sys/bus/mdev/devices/" UUID_A "/remove", "1");
	gv_write("/sys/bus/mdev/devices/" UUID_B "/remove", "1");
	ASSERT_EQ(0, gv_write(NEW, "1 h200-141gb"));
	for (i = 0; i < 64; i++) {
		snprintf(uuid, sizeof(uuid), "d0d00000-0000-4000-8000-%012x", i);
		snprintf(buf, sizeof(buf),
			 "/sys/bus/gpuvirt_sim/devices/sim%u/gpu/mdev_supported_types/gpuvirt_sim-H200-4C/create",
			 i / 32);
		ASSERT_EQ(0, gv_write(buf, uuid));
	}

	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	ASSERT_EQ(0, run(&self->nl, nlh, self->l));
	EXPECT_EQ(64, self->l->n);	/* and not -EINTR: nothing changed */

	/*
	 * The same dump read in small pieces, with a change after the first.
	 * A fresh socket: the kernel sizes dump messages by the largest
	 * receive buffer a socket has used.
	 */
	sk = mnl_socket_open(NETLINK_GENERIC);
	ASSERT_NE(NULL, sk);
	ASSERT_EQ(0, mnl_socket_bind(sk, 0, MNL_SOCKET_AUTOPID));
	nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
	ASSERT_LT(0, mnl_socket_sendto(sk, nlh, nlh->nlmsg_len));
	self->l->n = 0;
	for (;;) {
		n = mnl_socket_recvfrom(sk, small, sizeof(small));
		ASSERT_LT(0, n);
		if (++rounds == 1) {
			/* remove one of the vGPUs not yet dumped */
			ASSERT_EQ(0, gv_write("/sys/bus/mdev/devices/d0d00000-0000-4000-8000-00000000003f/remove",
					      "1"));
		}
		errno = 0;
		n = mnl_cb_run(small, n, nlh->nlmsg_seq, mnl_socket_get_portid(sk),
			       objs_cb, self->l);
		/* libmnl stops at the first message flagged NLM_F_DUMP_INTR */
		if (n < 0 && errno == EINTR)
			intr++;
		if (n <= MNL_CB_STOP)
			break;
	}
	mnl_socket_close(sk);
	total = self->l->n;
	EXPECT_LT(1, rounds);
	EXPECT_GT(64, total);
	EXPECT_EQ(1, intr);
	for (i = 0; i < 64; i++) {
		snprintf(buf, sizeof(buf), "/sys/bus/mdev/devices/d0d00000-0000-4000-8000-%012x/remove", i);
		gv_write(buf, "1");
	}
}

/*
 * Dumps while another process keeps creating and removing vGPUs: every
 * dump either ends whole and consistent (the fixed vGPUs each exactly
 * once, no UUID twice, only vGPUs that can exist) or is flagged
 * NLM_F_DUMP_INTR (libmnl's EINTR) for the caller to retry.
 */
TEST_F(obj, dumps_under_concurrent_churn)
{
	const char *churn_type =
		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C/create";
	unsigned int i, j, whole = 0, intr = 0, dumps = 0;
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;
	pid_t pid;
	int err, st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/*
		 * two churning vGPUs next to A and B: 60 rounds, about 3 s on
		 * a Debian kernel; a slow (KASAN) kernel stops after 3 s, but
		 * not before 10 rounds
		 */
		struct timespec now, end;

		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += 3;
		for (i = 0; i < 60; i++) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (i >= 10 && now.tv_sec > end.tv_sec)
				break;
			gv_write(churn_type, "c0de0000-0000-4000-8000-0000000000c1");
			gv_write(churn_type, "c0de0000-0000-4000-8000-0000000000c2");
			gv_write("/sys/bus/mdev/devices/c0de0000-0000-4000-8000-0000000000c1/remove", "1");
			gv_write("/sys/bus/mdev/devices/c0de0000-0000-4000-8000-0000000000c2/remove", "1");
		}
		_exit(0);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		nlh = req(&self->nl, buf, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP);
		err = run(&self->nl, nlh, self->l);
		dumps++;
		if (err == -EINTR) {
			intr++;
			continue;
		}
		ASSERT_EQ(0, err);
		whole++;
		ASSERT_LE(2, self->l->n);
		ASSERT_GE(4, self->l->n);
		for (i = 0; i < self->l->n; i++) {
			const char *u = self->l->o[i].name;

			EXPECT_TRUE(!strcmp(u, UUID_A) || !strcmp(u, UUID_B) ||
				    !strncmp(u, "c0de0000-0000-4000-8000-0000000000c", 35));
			for (j = 0; j < i; j++)
				EXPECT_STRNE(u, self->l->o[j].name);
		}
		EXPECT_STREQ(UUID_A, self->l->o[0].name);
	}
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	TH_LOG("%u dumps: %u whole, %u flagged", dumps, whole, intr);
	EXPECT_LT(0, whole);
	EXPECT_FALSE(gv_exists("/sys/bus/mdev/devices/c0de0000-0000-4000-8000-0000000000c1"));
}

TEST_HARNESS_MAIN
