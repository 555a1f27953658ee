// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the host side may do to gpuvirt, root and the VMMs it runs alike,
 * and what must hold all the same:
 *   - gpu-set is all or nothing: a request with one setting refused leaves
 *     the others as they were, and announces nothing;
 *   - no mdev vGPU ever lives on a GPU in the sriov vGPU model, however
 *     creating mdevs and switching the model interleave.
 * What the API reports is checked against sysfs and debugfs.
 */
#include <dirent.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "gv_nl.h"
#include "vgpu_client.h"

#define SIM0		GV_SIM_BUS "/devices/sim0"
#define GV0		SIM0 "/gpu/gpuvirt"
#define GV1		GV_SIM_BUS "/devices/sim1/gpu/gpuvirt"
#define T0		SIM0 "/gpu/mdev_supported_types"
#define PF0		"/sys/bus/pci/devices/8000:00:00.0"
/* sim0's VFs; removing sim0 stops its functions last first */
#define VF0		"/sys/bus/pci/devices/8000:00:00.1"
#define VF1_NAME	"8000:00:00.2"
#define VF1		"/sys/bus/pci/devices/" VF1_NAME
#define UUID_A		"4057113e-0000-4000-8000-00000000000a"
#define HANG_MS		20000

/* ---- netlink ---- */

static int ignore_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_OK;
}

/* gpu-get of one GPU; 0 or -errno. */
static int gpu_get(struct nl *nl, uint32_t id, mnl_cb_t cb, void *data)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family,
					GPUVIRT_CMD_GPU_GET, 0);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	return nl_talk(nl, nlh, cb ?: ignore_cb, data);
}

/* The vGPU model a gpu-get reports. */
static int model_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == GPUVIRT_A_GPU_VGPU_MODEL)
			*(uint32_t *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

/* ---- fixtures ---- */

/*
 * sim0, an H200, and sim1, a custom GPU of 16 GiB with 4 engines: SR-IOV
 * like every simulated GPU, but no MIG profiles.
 */
static int two_gpus(void)
{
	return gv_setup_h200() ?:
	       gv_write(GV_SIM_BUS "/new_device", "1 custom 16G 4");
}

FIXTURE(host) {
	struct nl nl;
};

FIXTURE_SETUP(host)
{
	ASSERT_EQ(0, two_gpus());
	ASSERT_EQ(0, nl_open(&self->nl));
}

FIXTURE_TEARDOWN(host)
{
	nl_close(&self->nl);
	gv_unload_all();
}

/* ---- gpu-set: all or nothing ---- */

/* How many notifications the monitor socket has queued; drains them. */
static unsigned int monitor_drain(struct nl *mon)
{
	struct pollfd p = { mnl_socket_get_fd(mon->sk), POLLIN, 0 };
	unsigned int n = 0;

	/* the kernel queues them before it answers the request */
	while (poll(&p, 1, 0) == 1 &&
	       mnl_socket_recvfrom(mon->sk, mon->buf, sizeof(mon->buf)) > 0)
		n++;
	return n;
}

/*
 * gpu-set of GPU @id with the settings that are not UINT32_MAX; 0 or
 * -errno, and in *@bad_off the offset in the request of @bad_attr.
 */
static int gpu_set(struct nl *nl, uint32_t id, uint32_t model, uint32_t vmode,
		   uint32_t mode, uint16_t bad_attr, uint32_t *bad_off)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family,
					GPUVIRT_CMD_GPU_SET, 0);
	const struct {
		uint16_t type;
		uint32_t val;
	} a[] = {
		{ GPUVIRT_A_GPU_VGPU_MODEL, model },
		{ GPUVIRT_A_GPU_VGPU_MODE, vmode },
		{ GPUVIRT_A_GPU_MODE, mode },
	};
	unsigned int i;

	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	*bad_off = 0;
	for (i = 0; i < ARRAY_SIZE(a); i++) {
		if (a[i].val == UINT32_MAX)
			continue;
		if (a[i].type == bad_attr)
			*bad_off = (char *)mnl_nlmsg_get_payload_tail(nlh) - buf;
		mnl_attr_put_u32(nlh, a[i].type, a[i].val);
	}
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

/* sim1's settings as sysfs, netlink and the core's debugfs show them. */
static void sim1_settings(struct nl *nl, char *model, char *vmode,
			  char *mig, uint32_t *nl_model, char *dbg_mode)
{
	gv_read(GV1 "/vgpu_model", model, 16);
	gv_read(GV1 "/vgpu_mode", vmode, 16);
	gv_read(GV1 "/mig_mode", mig, 16);
	*nl_model = UINT32_MAX;
	gpu_get(nl, 1, model_cb, nl_model);
	if (gv_kv(GV_DEBUGFS "/gpus/sim1/info", "mode", dbg_mode, 32))
		strcpy(dbg_mode, "?");
}

/*
 * sim1 has SR-IOV but no MIG profiles: in a gpu-set with vgpu-model (or
 * vgpu-mode) and mode, the mode is refused, so the vGPU model (or mode)
 * stays as it was, and nothing is announced; the extack names the mode
 * attribute. The GPU is not reset. A request that is accepted changes
 * both, announced once.
 */
TEST_F(host, gpu_set_is_all_or_nothing)
{
	unsigned long long resets;
	char model[16], vmode[16], mig[16], dbg[32];
	uint32_t off, nl_model;
	struct nl mon;
	int grp;

	ASSERT_EQ(0, nl_open(&mon));
	grp = mon.monitor_grp;
	ASSERT_EQ(0, mnl_socket_setsockopt(mon.sk, NETLINK_ADD_MEMBERSHIP,
					   &grp, sizeof(grp)));
	resets = gv_kv_u64(GV_SIM_DEBUGFS "/sim1/engine", "gpu_resets");
	ASSERT_NE(~0ULL, resets);

	/* the vGPU model is fine, MIG mode is not */
	EXPECT_EQ(-EOPNOTSUPP, gpu_set(&self->nl, 1, GPUVIRT_VGPU_MODEL_SRIOV,
				       UINT32_MAX, GPUVIRT_GPU_MODE_MIG,
				       GPUVIRT_A_GPU_MODE, &off));
	EXPECT_STREQ("the GPU has no MIG profiles", self->nl.ext_msg);
	EXPECT_EQ(off, self->nl.ext_off);
	sim1_settings(&self->nl, model, vmode, mig, &nl_model, dbg);
	EXPECT_STREQ("mdev\n", model);
	EXPECT_EQ(GPUVIRT_VGPU_MODEL_MDEV, nl_model);
	EXPECT_STREQ("0\n", mig);
	EXPECT_STREQ("timesliced", dbg);
	EXPECT_EQ(0u, monitor_drain(&mon));

	/* the vGPU mode is fine, MIG mode is not */
	EXPECT_EQ(-EOPNOTSUPP, gpu_set(&self->nl, 1, UINT32_MAX,
				       GPUVIRT_VGPU_MODE_MIXED,
				       GPUVIRT_GPU_MODE_MIG,
				       GPUVIRT_A_GPU_MODE, &off));
	EXPECT_EQ(off, self->nl.ext_off);
	sim1_settings(&self->nl, model, vmode, mig, &nl_model, dbg);
	EXPECT_STREQ("homogeneous\n", vmode);
	EXPECT_STREQ("0\n", mig);
	EXPECT_EQ(0u, monitor_drain(&mon));
	EXPECT_EQ(resets, gv_kv_u64(GV_SIM_DEBUGFS "/sim1/engine",
				    "gpu_resets"));

	/* both fine: both change, announced once */
	EXPECT_EQ(0, gpu_set(&self->nl, 1, GPUVIRT_VGPU_MODEL_SRIOV,
			     GPUVIRT_VGPU_MODE_MIXED, UINT32_MAX,
			     GPUVIRT_A_GPU_MODE, &off));
	sim1_settings(&self->nl, model, vmode, mig, &nl_model, dbg);
	EXPECT_STREQ("sriov\n", model);
	EXPECT_EQ(GPUVIRT_VGPU_MODEL_SRIOV, nl_model);
	EXPECT_STREQ("mixed\n", vmode);
	EXPECT_EQ(1u, monitor_drain(&mon));
	EXPECT_EQ(0, gpu_set(&self->nl, 1, GPUVIRT_VGPU_MODEL_MDEV,
			     GPUVIRT_VGPU_MODE_HOMOGENEOUS, UINT32_MAX,
			     GPUVIRT_A_GPU_MODE, &off));
	EXPECT_EQ(1u, monitor_drain(&mon));
	nl_close(&mon);
}

/* ---- no mdev vGPU on a GPU in the sriov model ---- */

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(*(unsigned int *)data)++;
	return MNL_CB_OK;
}

/* A dump of @cmd, counted; with @gpu >= 0 only that GPU's. */
static int dump(struct nl *nl, uint8_t cmd, uint16_t gpu_attr, int gpu,
		unsigned int *n)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family, cmd, NLM_F_DUMP);

	if (gpu >= 0)
		mnl_attr_put_u32(nlh, gpu_attr, gpu);
	*n = 0;
	return nl_talk(nl, nlh, count_cb, n);
}

struct creator {
	const char *uuid;
	volatile bool *stop;
	long creates;
	long in_sriov;	/* created, and the GPU read as in the sriov model */
};

/*
 * Creates and removes an mdev vGPU of sim0 in a loop. Once created, it
 * holds its place until removed, so the GPU cannot be switched to the
 * sriov model meanwhile: reading "sriov" then means an mdev vGPU was
 * placed on a GPU in the sriov model.
 */
static void *mdev_creator(void *arg)
{
	struct creator *c = arg;
	char model[16], rm[128];

	snprintf(rm, sizeof(rm), VGPU_MDEVS "/%s/remove", c->uuid);
	while (!*c->stop) {
		if (gv_write(T0 "/gpuvirt_sim-H200-35C/create", c->uuid))
			continue;	/* the sriov model: refused */
		c->creates++;
		if (gv_read(GV0 "/vgpu_model", model, sizeof(model)) > 0 &&
		    !strcmp(model, "sriov\n"))
			c->in_sriov++;
		gv_write(rm, "1");
		/* now and then a moment without a vGPU, for the switches */
		usleep(250 * (c->creates % 4));
	}
	return NULL;
}

/* Entries of a debugfs directory, "." and ".." aside; -1 if unreadable. */
static int dir_entries(const char *path)
{
	struct dirent *d;
	DIR *dir = opendir(path);
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(dir);
	return n;
}

/*
 * A thread creates and removes an mdev vGPU of sim0 while the test
 * switches sim0 between the mdev and the sriov model, 300 times. Each time the
 * switch to sriov succeeds, no vGPU of sim0 exists (netlink's vgpu dump of
 * sim0, the core's debugfs), and no mdev created is ever seen in the sriov
 * model. The counts show that both sides ran.
 */
TEST_F_TIMEOUT(host, no_mdev_vgpu_in_the_sriov_model, 240)
{
	volatile bool stop = false;
	struct creator c = { .uuid = UUID_A, .stop = &stop };
	long switched = 0, refused = 0, bad = 0;
	unsigned int i, n;
	pthread_t th;
	char val[16];
	int err;

	/* in the sriov model an mdev cannot be made, and none is offered */
	ASSERT_EQ(0, gv_write(GV0 "/vgpu_model", "sriov"));
	EXPECT_EQ(-EBUSY, gv_write(T0 "/gpuvirt_sim-H200-35C/create", UUID_A));
	ASSERT_LT(0, gv_read(T0 "/gpuvirt_sim-H200-35C/available_instances",
			     val, sizeof(val)));
	EXPECT_STREQ("0\n", val);
	ASSERT_EQ(0, gv_write(GV0 "/vgpu_model", "mdev"));

	ASSERT_EQ(0, pthread_create(&th, NULL, mdev_creator, &c));
	for (i = 0; i < 300; i++) {
		err = gv_write(GV0 "/vgpu_model", "sriov");
		if (err) {
			/* a vGPU of sim0 exists */
			EXPECT_EQ(-EBUSY, err);
			refused++;
			continue;
		}
		switched++;
		if (dump(&self->nl, GPUVIRT_CMD_VGPU_GET, GPUVIRT_A_VGPU_GPU_ID,
			 0, &n) || n || dir_entries(GV_DEBUGFS "/gpus/sim0/vgpus"))
			bad++;
		EXPECT_EQ(0, gv_write(GV0 "/vgpu_model", "mdev"));
	}
	stop = true;
	pthread_join(th, NULL);
	TH_LOG("%ld switches to sriov, %ld refused (a vGPU existed), %ld vGPUs created",
	       switched, refused, c.creates);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, c.in_sriov);
	EXPECT_LT(0, switched);
	EXPECT_LT(0, c.creates);
	EXPECT_EQ(0, dir_entries(GV_DEBUGFS "/gpus/sim0/vgpus"));
}

TEST_HARNESS_MAIN
