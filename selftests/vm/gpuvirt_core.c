// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GPU as the core's object (kernel/core/gpu.c):
 *   - a VMM that does not close its vGPU holds up the removal of that GPU
 *     only: MIG mode changes and GPU instances of another GPU go on, over
 *     netlink and sysfs, while the first GPU's removal waits;
 *   - every change of a GPU, vGPU, GI or scheduler is announced exactly once
 *     on the monitor group by the function that makes it, whether netlink
 *     or sysfs asked, and a refused or empty change is not announced;
 *   - the GPU's sysfs files exist when udev hears of its device.
 * What the API reports is checked against sysfs and debugfs.
 */
#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "gpuvirt_test.h"
#include "gv_nl.h"
#include "vgpu_client.h"

#define GPU0_SYSFS	GV_SIM_BUS "/devices/sim0/gpu/gpuvirt"
#define GPU1_SYSFS	GV_SIM_BUS "/devices/sim1/gpu/gpuvirt"
#define T0		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define UUID_A		"c0de0000-0000-4000-8000-0000000c0de1"
#define VGPU_A		VGPU_MDEVS "/" UUID_A

/* Two simulated H100s, sim0 (id 0) and sim1 (id 1). */
static int two_h100s(void)
{
	int err = gv_unload_all();

	if (err)
		return err;
	if (system("modprobe -qa mdev vfio_iommu_type1"))
		return -EIO;
	return gv_module_load(GV_CORE) ?: gv_module_load(GV_SIM) ?:
	       gv_write(GV_SIM_BUS "/new_device", "0 h100-80gb") ?:
	       gv_write(GV_SIM_BUS "/new_device", "1 h100-80gb");
}

static struct nlmsghdr *req(struct nl *nl, char *buf, uint8_t cmd)
{
	return genl_req(nl, buf, nl->family, cmd, 0);
}

static int ignore_cb(const struct nlmsghdr *nlh, void *data)
{
	return MNL_CB_OK;
}

static int gpu_set(struct nl *nl, uint32_t id, uint32_t mode, uint32_t vmode)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_GPU_SET);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	if (mode != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_MODE, mode);
	if (vmode != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_VGPU_MODE, vmode);
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

static int gi_new(struct nl *nl, uint32_t gpu, const char *profile)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_GI_NEW);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, gpu);
	mnl_attr_put_strz(nlh, GPUVIRT_A_GI_PROFILE, profile);
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

static int gi_del(struct nl *nl, uint32_t gpu, uint32_t id)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_GI_DEL);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, gpu);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_ID, id);
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

static int sched_set(struct nl *nl, uint32_t gpu, int gi, uint32_t policy,
		     uint32_t slice_us)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_SCHED_SET);

	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, gpu);
	if (gi >= 0)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GI_ID, gi);
	if (policy != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_POLICY, policy);
	if (slice_us != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_TIMESLICE_US, slice_us);
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

static int vgpu_set(struct nl *nl, const char *uuid, uint32_t weight,
		    uint32_t min, uint32_t max)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = req(nl, buf, GPUVIRT_CMD_VGPU_SET);

	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	if (weight != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_WEIGHT, weight);
	if (min != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MIN_PCT, min);
	if (max != UINT32_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MAX_PCT, max);
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

/* The GPU ids a gpu-get dump lists, as a bit mask. */
static int gpu_ids_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == GPUVIRT_A_GPU_ID &&
		    mnl_attr_get_u32(a) < 32)
			*(uint32_t *)data |= 1u << mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int gpu_ids(struct nl *nl, uint32_t *mask)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family, GPUVIRT_CMD_GPU_GET,
					NLM_F_DUMP);

	*mask = 0;
	return nl_talk(nl, nlh, gpu_ids_cb, mask);
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(*(unsigned int *)data)++;
	return MNL_CB_OK;
}

/* How many GPUs a whole gpu-get dump lists. */
static int gpu_count(struct nl *nl, unsigned int *n)
{
	char buf[GV_NLBUF];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family, GPUVIRT_CMD_GPU_GET,
					NLM_F_DUMP);

	*n = 0;
	return nl_talk(nl, nlh, count_cb, n);
}

/* Wait up to @ms for an eventfd to fire: 1, 0 on time-out, or -errno. */
static int wait_efd(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t v;

	if (poll(&p, 1, ms) < 0)
		return -errno;
	if (!(p.revents & POLLIN))
		return 0;
	return read(fd, &v, sizeof(v)) == sizeof(v) ? 1 : -EIO;
}

FIXTURE(core) {
	struct nl nl;
};

FIXTURE_SETUP(core)
{
	ASSERT_EQ(0, two_h100s());
	ASSERT_EQ(0, nl_open(&self->nl));
}

FIXTURE_TEARDOWN(core)
{
	nl_close(&self->nl);
	gv_unload_all();
}

/*
 * A VMM keeps a vGPU of sim0 open while sim0 is removed: the removal
 * waits for it (the vGPU's REQ interrupt asks the VMM to let go), and
 * meanwhile sim1 changes mode, gets and loses a GPU instance and goes back,
 * over netlink and sysfs. A lock shared by the GPUs would hang this test
 * (the harness's time-out fails it).
 */
TEST_F(core, stuck_vmm_blocks_only_its_gpu)
{
	struct vfio_user u;
	char val[64];
	uint32_t ids;
	int req, st;
	pid_t pid;

	ASSERT_EQ(0, gv_write(T0 "/gpuvirt_sim-H100-20C/create", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&u, UUID_A));
	req = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, req);
	ASSERT_EQ(0, vgpu_client_set_irq(u.device, VFIO_PCI_REQ_IRQ_INDEX, req));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* the remover must not be a VMM of the vGPU itself */
		vgpu_client_close(&u);
		close(req);
		_exit(gv_write(GV_SIM_BUS "/del_device", "0") ? 1 : 0);
	}

	/* the removal is waiting for this VMM */
	ASSERT_EQ(1, wait_efd(req, 60000));
	ASSERT_EQ(0, gpu_ids(&self->nl, &ids));
	EXPECT_EQ(1u << 1, ids);

	/* sim1 meanwhile: every MIG operation, over netlink and sysfs */
	EXPECT_EQ(0, gpu_set(&self->nl, 1, GPUVIRT_GPU_MODE_MIG, UINT32_MAX));
	EXPECT_EQ(0, gi_new(&self->nl, 1, "3g.40gb"));
	EXPECT_TRUE(gv_exists(GV_DEBUGFS "/gpus/sim1/gis/0/info"));
	EXPECT_EQ(0, gv_kv(GV_DEBUGFS "/gpus/sim1/gis/0/info", "profile", val,
			   sizeof(val)));
	EXPECT_STREQ("3g.40gb", val);
	EXPECT_EQ(0, gi_del(&self->nl, 1, 0));
	EXPECT_FALSE(gv_exists(GV_DEBUGFS "/gpus/sim1/gis/0"));
	EXPECT_EQ(0, gv_write(GPU1_SYSFS "/mig_mode", "0"));
	EXPECT_LT(0, gv_read(GPU1_SYSFS "/mig_mode", val, sizeof(val)));
	EXPECT_STREQ("0\n", val);
	EXPECT_EQ(0, gv_write(GPU1_SYSFS "/mig_mode", "1"));
	EXPECT_EQ(0, gpu_set(&self->nl, 1, GPUVIRT_GPU_MODE_TIMESLICED,
			     UINT32_MAX));

	/* still waiting: the VMM has not let go */
	EXPECT_EQ(0, waitpid(pid, &st, WNOHANG));
	vgpu_client_close(&u);
	close(req);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_FALSE(gv_exists(GV_SIM_BUS "/devices/sim0"));
	EXPECT_FALSE(gv_exists(VGPU_A));
}

/* Events by command, counted from a monitor socket. */
struct events {
	struct nl mon;
	unsigned int n[256];
	unsigned int total;
	uint32_t last_vgpu_mode;
};

static int events_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct events *ev = data;
	const struct nlattr *a;

	ev->n[g->cmd]++;
	ev->total++;
	if (g->cmd == GPUVIRT_CMD_GPU_CHANGE_NTF)
		mnl_attr_for_each(a, nlh, sizeof(*g))
			if (mnl_attr_get_type(a) == GPUVIRT_A_GPU_VGPU_MODE)
				ev->last_vgpu_mode = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

/*
 * Count what arrived. A change is announced before the call that made it
 * returns, so the events are queued by now; the wait only gives a late
 * one (there should be none) the chance to be counted.
 */
static void events_drain(struct events *ev)
{
	struct pollfd p = { mnl_socket_get_fd(ev->mon.sk), POLLIN, 0 };
	int n;

	memset(ev->n, 0, sizeof(ev->n));
	ev->total = 0;
	while (poll(&p, 1, 100) == 1) {
		n = mnl_socket_recvfrom(ev->mon.sk, ev->mon.buf,
					sizeof(ev->mon.buf));
		if (n <= 0)
			break;
		mnl_cb_run(ev->mon.buf, n, 0, 0, events_cb, ev);
	}
}

/* @what made exactly one event, of @cmd (or none when @cmd is 0). */
#define EXPECT_ONE(ev, cmd, what) do {					\
	events_drain(ev);						\
	if ((cmd) ? (ev)->total != 1 || (ev)->n[cmd] != 1 : (ev)->total)\
		TH_LOG("%s: %u events, %u of cmd %d", what, (ev)->total,\
		       (ev)->n[(cmd) & 0xff], (int)(cmd));		\
	EXPECT_EQ((cmd) ? 1u : 0u, (ev)->total);			\
	if (cmd)							\
		EXPECT_EQ(1u, (ev)->n[cmd]);				\
} while (0)

TEST_F(core, every_change_is_announced_once)
{
	struct events ev = {};
	char val[64];
	int grp;

	ASSERT_EQ(0, nl_open(&ev.mon));
	grp = ev.mon.monitor_grp;
	ASSERT_EQ(0, mnl_socket_setsockopt(ev.mon.sk, NETLINK_ADD_MEMBERSHIP,
					   &grp, sizeof(grp)));

	/* the GPU's vGPU mode: sysfs, netlink, and a no-op */
	ASSERT_EQ(0, gv_write(GPU0_SYSFS "/vgpu_mode", "mixed"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_CHANGE_NTF, "vgpu_mode (sysfs)");
	EXPECT_EQ(GPUVIRT_VGPU_MODE_MIXED, ev.last_vgpu_mode);
	ASSERT_EQ(0, gpu_set(&self->nl, 0, UINT32_MAX,
			     GPUVIRT_VGPU_MODE_HOMOGENEOUS));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_CHANGE_NTF, "vgpu-mode (netlink)");
	EXPECT_EQ(GPUVIRT_VGPU_MODE_HOMOGENEOUS, ev.last_vgpu_mode);
	EXPECT_LT(0, gv_read(GPU0_SYSFS "/vgpu_mode", val, sizeof(val)));
	EXPECT_STREQ("homogeneous\n", val);
	ASSERT_EQ(0, gv_write(GPU0_SYSFS "/vgpu_mode", "homogeneous"));
	EXPECT_ONE(&ev, 0, "vgpu_mode unchanged");

	/* the GPU's scheduler */
	ASSERT_EQ(0, gv_write(GPU0_SYSFS "/sched_policy", "equal-share"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_SCHED_CHANGE_NTF, "sched_policy (sysfs)");
	ASSERT_EQ(0, gv_write(GPU0_SYSFS "/sched_slice_us", "2000"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_SCHED_CHANGE_NTF, "sched_slice_us (sysfs)");
	ASSERT_EQ(0, sched_set(&self->nl, 0, -1,
			       GPUVIRT_SCHED_POLICY_FIXED_SHARE, 3000));
	EXPECT_ONE(&ev, GPUVIRT_CMD_SCHED_CHANGE_NTF, "sched-set, both (netlink)");
	EXPECT_EQ(0, gv_kv(GV_DEBUGFS "/gpus/sim0/sched", "policy", val,
			   sizeof(val)));
	EXPECT_STREQ("fixed-share", val);
	EXPECT_EQ(-EINVAL, gv_write(GPU0_SYSFS "/sched_slice_us", "7"));
	EXPECT_ONE(&ev, 0, "refused sched_slice_us");

	/* a vGPU and its parameters */
	ASSERT_EQ(0, gv_write(T0 "/gpuvirt_sim-H100-20C/create", UUID_A));
	EXPECT_ONE(&ev, GPUVIRT_CMD_VGPU_ADD_NTF, "vGPU create");
	ASSERT_EQ(0, gv_write(VGPU_A "/gpuvirt/weight", "300"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_VGPU_CHANGE_NTF, "weight (sysfs)");
	ASSERT_EQ(0, gv_write(VGPU_A "/gpuvirt/min_pct", "10"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_VGPU_CHANGE_NTF, "min_pct (sysfs)");
	ASSERT_EQ(0, gv_write(VGPU_A "/gpuvirt/max_pct", "90"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_VGPU_CHANGE_NTF, "max_pct (sysfs)");
	ASSERT_EQ(0, vgpu_set(&self->nl, UUID_A, 200, 20, 80));
	EXPECT_ONE(&ev, GPUVIRT_CMD_VGPU_CHANGE_NTF, "vgpu-set (netlink)");
	EXPECT_LT(0, gv_read(VGPU_A "/gpuvirt/weight", val, sizeof(val)));
	EXPECT_STREQ("200\n", val);
	EXPECT_EQ(-EINVAL, vgpu_set(&self->nl, UUID_A, UINT32_MAX, 90, 50));
	EXPECT_ONE(&ev, 0, "refused vgpu-set");
	/* with a vGPU the vGPU mode cannot change, and nothing is said */
	EXPECT_EQ(-EBUSY, gpu_set(&self->nl, 0, UINT32_MAX,
				  GPUVIRT_VGPU_MODE_MIXED));
	EXPECT_ONE(&ev, 0, "refused vgpu-mode");
	ASSERT_EQ(0, gv_write(VGPU_A "/remove", "1"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_VGPU_DEL_NTF, "vGPU remove");

	/* MIG mode, a GI and its scheduler, both ways */
	ASSERT_EQ(0, gv_write(GPU0_SYSFS "/mig_mode", "1"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_CHANGE_NTF, "mig_mode (sysfs)");
	ASSERT_EQ(0, gpu_set(&self->nl, 0, GPUVIRT_GPU_MODE_TIMESLICED,
			     UINT32_MAX));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_CHANGE_NTF, "mode (netlink)");
	ASSERT_EQ(0, gpu_set(&self->nl, 0, GPUVIRT_GPU_MODE_MIG, UINT32_MAX));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_CHANGE_NTF, "mode (netlink)");
	ASSERT_EQ(0, gpu_set(&self->nl, 0, GPUVIRT_GPU_MODE_MIG, UINT32_MAX));
	EXPECT_ONE(&ev, 0, "mode unchanged");
	ASSERT_EQ(0, gi_new(&self->nl, 0, "2g.20gb"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GI_ADD_NTF, "gi-new");
	ASSERT_EQ(0, gv_write("/sys/class/gpuvirt_gi/sim0-gi0/gpuvirt/sched_slice_us",
			      "5000"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_SCHED_CHANGE_NTF, "GI sched_slice_us (sysfs)");
	ASSERT_EQ(0, sched_set(&self->nl, 0, 0, UINT32_MAX, 6000));
	EXPECT_ONE(&ev, GPUVIRT_CMD_SCHED_CHANGE_NTF, "GI sched-set (netlink)");
	EXPECT_EQ(0, gi_del(&self->nl, 0, 0));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GI_DEL_NTF, "gi-del");
	ASSERT_EQ(0, gv_write(GPU0_SYSFS "/mig_mode", "0"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_CHANGE_NTF, "mig_mode off (sysfs)");

	/* the GPU itself */
	ASSERT_EQ(0, gv_write(GV_SIM_BUS "/del_device", "1"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_DEL_NTF, "GPU removed");
	ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", "1 a100-40gb"));
	EXPECT_ONE(&ev, GPUVIRT_CMD_GPU_ADD_NTF, "GPU added");
	nl_close(&ev.mon);
}

/*
 * The GPU dump, read in small pieces while a GPU it has not reached yet
 * goes away, is flagged NLM_F_DUMP_INTR, as every other dump is; the same
 * dump unread by a change is whole and unflagged.
 */
TEST_F(core, gpu_dump_interrupted_by_a_change_is_flagged)
{
	unsigned int i, rounds = 0, intr = 0;
	char buf[GV_NLBUF], small[4096];
	struct mnl_socket *sk;
	struct nlmsghdr *nlh;
	unsigned int count;
	int n;

	/* about 130 bytes a GPU: 100 take several rounds of 4 KiB */
	for (i = 10; i < 110; i++) {
		snprintf(buf, sizeof(buf), "%u custom 1G 1", i);
		ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", buf));
	}
	ASSERT_EQ(0, gpu_count(&self->nl, &count));
	EXPECT_EQ(102u, count);	/* and not -EINTR: nothing changed */

	sk = mnl_socket_open(NETLINK_GENERIC);
	ASSERT_NE(NULL, sk);
	ASSERT_EQ(0, mnl_socket_bind(sk, 0, MNL_SOCKET_AUTOPID));
	nlh = genl_req(&self->nl, buf, self->nl.family, GPUVIRT_CMD_GPU_GET,
		       NLM_F_DUMP);
	ASSERT_LT(0, mnl_socket_sendto(sk, nlh, nlh->nlmsg_len));
	for (;;) {
		n = mnl_socket_recvfrom(sk, small, sizeof(small));
		ASSERT_LT(0, n);
		if (++rounds == 1)
			ASSERT_EQ(0, gv_write(GV_SIM_BUS "/del_device", "109"));
		errno = 0;
		n = mnl_cb_run(small, n, nlh->nlmsg_seq,
			       mnl_socket_get_portid(sk), ignore_cb, NULL);
		/* libmnl stops at the first message flagged NLM_F_DUMP_INTR */
		if (n < 0 && errno == EINTR)
			intr++;
		if (n <= MNL_CB_STOP)
			break;
	}
	mnl_socket_close(sk);
	EXPECT_LT(1, rounds);
	EXPECT_EQ(1u, intr);
	TH_LOG("GPU dump: %u rounds, %u flagged", rounds, intr);
}

/*
 * udev hears of a GPU with its gpuvirt/ files already there: they are the
 * driver's dev_groups of the GPU's PCI function, created before the bind
 * uevent that the udev rule (user/60-gpuvirt.rules) matches.
 */
TEST_F(core, gpu_files_exist_when_announced)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	char msg[8192], path[8300];
	bool seen = false;
	struct pollfd p;
	int fd, n;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", "2 h100-80gb"));
	p = (struct pollfd){ fd, POLLIN, 0 };
	while (!seen && poll(&p, 1, 2000) == 1) {
		n = recv(fd, msg, sizeof(msg) - 1, 0);
		if (n <= 0)
			break;
		msg[n] = '\0';
		if (strncmp(msg, "bind@", 5) || !strstr(msg, "/8002:00:00.0"))
			continue;
		seen = true;
		snprintf(path, sizeof(path), "/sys%s/gpuvirt/mig_mode", msg + 5);
		EXPECT_TRUE(gv_exists(path));
	}
	EXPECT_TRUE(seen);
	close(fd);
}

TEST_HARNESS_MAIN
