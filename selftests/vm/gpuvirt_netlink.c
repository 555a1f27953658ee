// SPDX-License-Identifier: GPL-2.0-only
/*
 * The gpuvirt generic netlink family: it exists while the core is loaded,
 * answers gpu-get (do and dump) with what the sim's "hardware" holds,
 * refuses bad requests with an errno and an extack message, and sends
 * add/del notifications to the monitor group.
 */
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <time.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "gv_nl.h"

#define NEW	GV_SIM_BUS "/new_device"
#define DEL	GV_SIM_BUS "/del_device"

struct gpu_attrs {
	uint32_t id, engines, mode;
	uint64_t vram;
	char name[32], model[32], backend[32];
	bool has_vram, has_pad;
	int cmd;
};

static int gpu_attr_cb(const struct nlattr *a, void *data)
{
	struct gpu_attrs *g = data;

	switch (mnl_attr_get_type(a)) {
	case GPUVIRT_A_GPU_ID:
		g->id = mnl_attr_get_u32(a);
		break;
	case GPUVIRT_A_GPU_NAME:
		snprintf(g->name, sizeof(g->name), "%s", mnl_attr_get_str(a));
		break;
	case GPUVIRT_A_GPU_MODEL:
		snprintf(g->model, sizeof(g->model), "%s", mnl_attr_get_str(a));
		break;
	case GPUVIRT_A_GPU_VRAM_SIZE:
		g->vram = mnl_attr_get_u64(a);
		g->has_vram = true;
		break;
	case GPUVIRT_A_GPU_ENGINES:
		g->engines = mnl_attr_get_u32(a);
		break;
	case GPUVIRT_A_GPU_MODE:
		g->mode = mnl_attr_get_u32(a);
		break;
	case GPUVIRT_A_GPU_BACKEND:
		snprintf(g->backend, sizeof(g->backend), "%s", mnl_attr_get_str(a));
		break;
	case GPUVIRT_A_GPU_PAD:
		g->has_pad = true;
		break;
	}
	return MNL_CB_OK;
}

struct gpu_list {
	struct gpu_attrs gpus[128];
	unsigned int n;
};

static int gpu_list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gpu_list *l = data;
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	if (l->n >= 128)
		return MNL_CB_ERROR;
	memset(&l->gpus[l->n], 0, sizeof(l->gpus[0]));
	l->gpus[l->n].cmd = g->cmd;
	mnl_attr_parse(nlh, sizeof(*g), gpu_attr_cb, &l->gpus[l->n]);
	l->n++;
	return MNL_CB_OK;
}

static int gpu_dump(struct nl *nl, struct gpu_list *l)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;

	l->n = 0;
	nlh = genl_req(nl, buf, nl->family, GPUVIRT_CMD_GPU_GET, NLM_F_DUMP);
	return nl_talk(nl, nlh, gpu_list_cb, l);
}

static int gpu_get(struct nl *nl, uint32_t id, struct gpu_list *l)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh;

	l->n = 0;
	nlh = genl_req(nl, buf, nl->family, GPUVIRT_CMD_GPU_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	return nl_talk(nl, nlh, gpu_list_cb, l);
}

FIXTURE(nl) {
	struct nl nl;
};

FIXTURE_SETUP(nl)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_unload_all());
	ASSERT_EQ(0, gv_module_load(GV_CORE));
	ASSERT_EQ(0, gv_module_load(GV_SIM));
	ASSERT_EQ(0, nl_open(&self->nl));
}

FIXTURE_TEARDOWN(nl)
{
	nl_close(&self->nl);
	gv_unload_all();
}

TEST_F(nl, family_comes_and_goes)
{
	struct nl other;

	EXPECT_NE(0, self->nl.family);
	EXPECT_NE(0, self->nl.monitor_grp);
	nl_close(&self->nl);

	ASSERT_EQ(0, gv_module_unload(GV_SIM));
	ASSERT_EQ(0, gv_module_unload(GV_CORE));
	EXPECT_EQ(-ENOENT, nl_open(&other));
	nl_close(&other);

	ASSERT_EQ(0, gv_module_load(GV_CORE));
	EXPECT_EQ(0, nl_open(&other));
	nl_close(&other);
}

TEST_F(nl, dump_matches_hardware)
{
	static const char * const reqs[] = {
		"0 a100-40gb", "3 h200-141gb", "17 custom 20G 5",
	};
	struct gpu_list *l = calloc(1, sizeof(*l));
	char hw[128], val[64];
	unsigned int i;

	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, gpu_dump(&self->nl, l));
	EXPECT_EQ(0, l->n);

	for (i = 0; i < ARRAY_SIZE(reqs); i++)
		ASSERT_EQ(0, gv_write(NEW, reqs[i]));

	ASSERT_EQ(0, gpu_dump(&self->nl, l));
	ASSERT_EQ(3, l->n);
	for (i = 0; i < l->n; i++) {
		struct gpu_attrs *g = &l->gpus[i];

		EXPECT_EQ(GPUVIRT_CMD_GPU_GET, g->cmd);
		snprintf(hw, sizeof(hw), GV_SIM_DEBUGFS "/sim%u/hw", g->id);
		snprintf(val, sizeof(val), "sim%u", g->id);
		EXPECT_STREQ(val, g->name);
		EXPECT_TRUE(g->has_vram);
		EXPECT_EQ(gv_kv_u64(hw, "vram_size"), g->vram);
		EXPECT_EQ(gv_kv_u64(hw, "engines"), g->engines);
		ASSERT_EQ(0, gv_kv(hw, "model", val, sizeof(val)));
		EXPECT_STREQ(val, g->model);
		EXPECT_EQ(GPUVIRT_GPU_MODE_TIMESLICED, g->mode);
		EXPECT_STREQ("gpuvirt_sim", g->backend);
	}
	/* dumps come in id order */
	EXPECT_EQ(0, l->gpus[0].id);
	EXPECT_EQ(3, l->gpus[1].id);
	EXPECT_EQ(17, l->gpus[2].id);
	EXPECT_EQ(141ULL << 30, l->gpus[1].vram);
	EXPECT_EQ(20ULL << 30, l->gpus[2].vram);
	EXPECT_EQ(5, l->gpus[2].engines);
	free(l);
}

/* More GPUs than fit in one dump skb: the dump resumes where it stopped. */
TEST_F(nl, dump_spans_messages)
{
	struct gpu_list *l = calloc(1, sizeof(*l));
	unsigned int i;
	char cmd[64];

	ASSERT_NE(NULL, l);
	for (i = 0; i < 100; i++) {
		snprintf(cmd, sizeof(cmd), "%u custom 1G 1", i * 7);
		ASSERT_EQ(0, gv_write(NEW, cmd));
	}
	ASSERT_EQ(0, gpu_dump(&self->nl, l));
	ASSERT_EQ(100, l->n);
	for (i = 0; i < 100; i++)
		EXPECT_EQ(i * 7, l->gpus[i].id);
	free(l);
}

TEST_F(nl, get_one)
{
	struct gpu_list *l = calloc(1, sizeof(*l));

	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, gv_write(NEW, "5 h100-80gb"));
	ASSERT_EQ(0, gv_write(NEW, "6 a100-80gb"));
	ASSERT_EQ(0, gpu_get(&self->nl, 6, l));
	ASSERT_EQ(1, l->n);
	EXPECT_EQ(6, l->gpus[0].id);
	EXPECT_STREQ("a100-80gb", l->gpus[0].model);
	EXPECT_EQ(80ULL << 30, l->gpus[0].vram);
	free(l);
}

TEST_F(nl, errors_carry_extack)
{
	char buf[GV_NLBUF];
	struct gpu_list *l = calloc(1, sizeof(*l));
	struct nlmsghdr *nlh;

	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, gv_write(NEW, "1 a100-40gb"));

	/* an id that does not exist: ENOENT, aimed at the id attribute */
	EXPECT_EQ(-ENOENT, gpu_get(&self->nl, 2, l));
	EXPECT_STREQ("no GPU with this id", self->nl.ext_msg);
	EXPECT_EQ(sizeof(struct nlmsghdr) + sizeof(struct genlmsghdr),
		  self->nl.ext_off);

	/* no id at all */
	nlh = genl_req(&self->nl, buf, self->nl.family, GPUVIRT_CMD_GPU_GET, 0);
	EXPECT_EQ(-EINVAL, nl_talk(&self->nl, nlh, gpu_list_cb, l));
	EXPECT_STREQ("GPU id is required", self->nl.ext_msg);
	EXPECT_EQ(GPUVIRT_A_GPU_ID, self->nl.ext_miss_type);

	/* strict validation: a wrong-size id */
	nlh = genl_req(&self->nl, buf, self->nl.family, GPUVIRT_CMD_GPU_GET, 0);
	mnl_attr_put_u16(nlh, GPUVIRT_A_GPU_ID, 1);
	EXPECT_EQ(-EINVAL, nl_talk(&self->nl, nlh, gpu_list_cb, l));
	EXPECT_NE(0, strlen(self->nl.ext_msg));

	/* strict validation: an attribute the op does not take */
	nlh = genl_req(&self->nl, buf, self->nl.family, GPUVIRT_CMD_GPU_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, 1);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ENGINES, 1);
	EXPECT_EQ(-EINVAL, nl_talk(&self->nl, nlh, gpu_list_cb, l));

	/* an unknown command */
	nlh = genl_req(&self->nl, buf, self->nl.family, GPUVIRT_CMD_MAX + 1, 0);
	EXPECT_EQ(-EOPNOTSUPP, nl_talk(&self->nl, nlh, gpu_list_cb, l));

	/* a notification command is not a request */
	nlh = genl_req(&self->nl, buf, self->nl.family, GPUVIRT_CMD_GPU_ADD_NTF, 0);
	EXPECT_EQ(-EOPNOTSUPP, nl_talk(&self->nl, nlh, gpu_list_cb, l));

	/* nothing changed */
	ASSERT_EQ(0, gpu_dump(&self->nl, l));
	EXPECT_EQ(1, l->n);
	free(l);
}

/* Wait for one notification; 0 and its attrs, or -errno. */
static int monitor_next(struct nl *mon, struct gpu_list *l)
{
	l->n = 0;
	return nl_monitor_next(mon, gpu_list_cb, l);
}

TEST_F(nl, monitor_notifications)
{
	struct gpu_list *l = calloc(1, sizeof(*l));
	struct nl mon;
	int grp;

	ASSERT_NE(NULL, l);
	ASSERT_EQ(0, nl_open(&mon));
	grp = mon.monitor_grp;
	ASSERT_EQ(0, mnl_socket_setsockopt(mon.sk, NETLINK_ADD_MEMBERSHIP,
					   &grp, sizeof(grp)));

	ASSERT_EQ(0, gv_write(NEW, "8 h200-141gb"));
	ASSERT_EQ(0, monitor_next(&mon, l));
	ASSERT_EQ(1, l->n);
	EXPECT_EQ(GPUVIRT_CMD_GPU_ADD_NTF, l->gpus[0].cmd);
	EXPECT_EQ(8, l->gpus[0].id);
	EXPECT_STREQ("h200-141gb", l->gpus[0].model);

	ASSERT_EQ(0, gv_write(DEL, "8"));
	ASSERT_EQ(0, monitor_next(&mon, l));
	EXPECT_EQ(GPUVIRT_CMD_GPU_DEL_NTF, l->gpus[0].cmd);
	EXPECT_EQ(8, l->gpus[0].id);

	/* a refused request notifies nothing */
	EXPECT_EQ(-ENOENT, gv_write(DEL, "8"));
	EXPECT_EQ(-ETIMEDOUT, monitor_next(&mon, l));
	nl_close(&mon);
	free(l);
}

TEST_HARNESS_MAIN
