// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the host side may do to gpuvirt, root and the VMMs it runs alike,
 * and what must hold all the same:
 *   - gpu-set is all or nothing: a request with one setting refused leaves
 *     the others as they were, and announces nothing;
 *   - no mdev vGPU ever lives on a GPU in the sriov vGPU model, however
 *     creating mdevs and switching the model interleave;
 *   - a VM that keeps its vGPU open while its GPU is removed holds up that
 *     removal only: netlink requests about the GPU, its vGPUs and other
 *     GPUs, and the sysfs files of other objects (another VF, another GPU)
 *     answer at once or fail with an error, for a time-sliced vGPU, one on
 *     a GPU instance and one on a VF (the sriov vGPU model);
 *   - the simulated GPU's NumVFs is read-only while VF Enable is set;
 *   - INTx is automasked, as VFIO_IRQ_INFO_AUTOMASKED says.
 * What the API reports is checked against sysfs and debugfs. A call that
 * hangs is detected with a generous bound (20 s), far above what any call
 * takes; it judges a hang, not a speed.
 */
#include <dirent.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

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

/* Kill and reap the children, the VMM first: what waits for it ends. */
static void children_end(pid_t *pids, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
		pids[i] = 0;
	}
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

FIXTURE(removal) {
	struct nl nl;
	pid_t pids[3];		/* the VMM, the remover, the others */
};

FIXTURE_VARIANT(removal) {
	const char *how;	/* the held vGPU: "mdev", "gi" or "vf" */
};

FIXTURE_VARIANT_ADD(removal, mdev) { .how = "mdev" };
FIXTURE_VARIANT_ADD(removal, gi) { .how = "gi" };
FIXTURE_VARIANT_ADD(removal, vf) { .how = "vf" };

FIXTURE_SETUP(removal)
{
	ASSERT_EQ(0, two_gpus());
	ASSERT_EQ(0, nl_open(&self->nl));
}

FIXTURE_TEARDOWN(removal)
{
	children_end(self->pids, ARRAY_SIZE(self->pids));
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
		if (gv_write(T0 "/gpuvirt_sim-H200-35C/create", c->uuid)) {
			usleep(100);	/* the sriov model: refused */
			continue;
		}
		__atomic_add_fetch(&c->creates, 1, __ATOMIC_RELAXED);
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
 * switches sim0 between the mdev and the sriov model. Each time the switch
 * to sriov succeeds, no vGPU of sim0 exists (netlink's vgpu dump of sim0,
 * the core's debugfs), and no mdev created is ever seen in the sriov
 * model. Both sides must have run many times over: the loop goes on until
 * 20 switches and 20 creations interleaved, whatever the host's load (only
 * the harness's timeout bounds it), and after each step each side leaves
 * the other a moment.
 */
#define SRIOV_RACE_ROUNDS	20
#define SRIOV_RACE_MAX_TRIES	20000

TEST_F(host, no_mdev_vgpu_in_the_sriov_model)
{
	volatile bool stop = false;
	struct creator c = { .uuid = UUID_A, .stop = &stop };
	long switched = 0, refused = 0, bad = 0, creates = 0;
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
	for (i = 0; i < SRIOV_RACE_MAX_TRIES; i++) {
		creates = __atomic_load_n(&c.creates, __ATOMIC_RELAXED);
		if (switched >= SRIOV_RACE_ROUNDS &&
		    creates >= SRIOV_RACE_ROUNDS)
			break;
		err = gv_write(GV0 "/vgpu_model", "sriov");
		if (err) {
			/* a vGPU of sim0 exists */
			EXPECT_EQ(-EBUSY, err);
			refused++;
			usleep(200);
			continue;
		}
		switched++;
		if (dump(&self->nl, GPUVIRT_CMD_VGPU_GET, GPUVIRT_A_VGPU_GPU_ID,
			 0, &n) || n || dir_entries(GV_DEBUGFS "/gpus/sim0/vgpus"))
			bad++;
		EXPECT_EQ(0, gv_write(GV0 "/vgpu_model", "mdev"));
		/* the creator's turn: a create, or none, in the mdev model */
		usleep(200 + 300 * (i % 4));
	}
	stop = true;
	pthread_join(th, NULL);
	TH_LOG("%u tries: %ld switches to sriov, %ld refused (a vGPU existed), %ld vGPUs created",
	       i, switched, refused, c.creates);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, c.in_sriov);
	EXPECT_LE(SRIOV_RACE_ROUNDS, switched);
	EXPECT_LE(SRIOV_RACE_ROUNDS, c.creates);
	EXPECT_EQ(0, dir_entries(GV_DEBUGFS "/gpus/sim0/vgpus"));
}

/* ---- a removal waiting for a VM blocks nobody else ---- */

/* vgpu-get of one vGPU; 0 or -errno. */
static int vgpu_get(struct nl *nl, const char *uuid)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(nl, buf, nl->family,
					GPUVIRT_CMD_VGPU_GET, 0);

	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	return nl_talk(nl, nlh, ignore_cb, NULL);
}

/* ---- processes ---- */

/*
 * Wait up to @ms for one byte on @fd; the byte, or -ETIMEDOUT, or -EPIPE
 * when the writer went away.
 */
static int pipe_byte(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	unsigned char c;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	return read(fd, &c, 1) == 1 ? c : -EPIPE;
}

/*
 * A VMM: a child process that opens vGPU @name (an mdev's UUID or a VF's
 * address) as QEMU does, arms its REQ interrupt, says 'o' on the pipe,
 * then 'r' once the kernel asks it to let go, and holds the device until
 * it is killed. 'E' if it could not open it.
 */
static pid_t vmm_start(const char *name, int *rd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (!pid) {
		struct vfio_user u;
		uint64_t v;
		int req;

		close(p[0]);
		req = eventfd(0, EFD_CLOEXEC);
		if (req < 0 || vgpu_client_open_name(&u, name) ||
		    vgpu_client_set_irq(u.device, VFIO_PCI_REQ_IRQ_INDEX, req)) {
			if (write(p[1], "E", 1) != 1)
				_exit(2);
			_exit(1);
		}
		if (write(p[1], "o", 1) != 1 ||
		    read(req, &v, sizeof(v)) != sizeof(v) ||
		    write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	*rd = p[0];
	return pid;
}

/* A child that writes @what to @path; its exit status says how it went. */
static pid_t writer_start(const char *path, const char *what)
{
	pid_t pid = fork();

	if (!pid)
		_exit(gv_write(path, what) ? 1 : 0);
	return pid;
}

/* Reap @pid, waiting up to @ms; its wait status, or -1 if it is still there. */
static int reap(pid_t pid, int ms)
{
	int st;

	for (; ms >= 0; ms -= 50) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(50000);
	}
	return -1;
}

/* ---- the requests of others while a removal waits for a VM ---- */

enum step_kind {
	NL_GPU_GET,		/* gpu-get of GPU @arg */
	NL_VGPU_GET,		/* vgpu-get of the held vGPU */
	NL_GPU_DUMP,		/* gpu-get dump */
	NL_VGPU_DUMP,		/* vgpu-get dump */
	NL_SCHED_DUMP,		/* sched-get dump */
	FILE_READ,		/* read @path */
	FILE_WRITE,		/* write @val to @path */
};

struct step {
	const char *name;
	enum step_kind kind;
	uint32_t arg;
	const char *path;
	const char *val;
	int want;		/* its result: 0 or -errno */
};

/*
 * Runs @steps in a child, one after the other, and writes each one's
 * result to the pipe as it comes: one byte, 128 + errno (0 for success).
 */
static pid_t others_start(const struct step *steps, unsigned int n,
			  const char *uuid, int *rd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (!pid) {
		struct nl nl;
		unsigned int i, cnt;

		close(p[0]);
		if (nl_open(&nl))
			_exit(1);
		for (i = 0; i < n; i++) {
			const struct step *s = &steps[i];
			unsigned char c;
			char buf[256];
			int err = 0;

			switch (s->kind) {
			case NL_GPU_GET:
				err = gpu_get(&nl, s->arg, NULL, NULL);
				break;
			case NL_VGPU_GET:
				err = vgpu_get(&nl, uuid);
				break;
			case NL_GPU_DUMP:
				err = dump(&nl, GPUVIRT_CMD_GPU_GET, 0, -1, &cnt);
				break;
			case NL_VGPU_DUMP:
				err = dump(&nl, GPUVIRT_CMD_VGPU_GET, 0, -1, &cnt);
				break;
			case NL_SCHED_DUMP:
				err = dump(&nl, GPUVIRT_CMD_SCHED_GET, 0, -1, &cnt);
				break;
			case FILE_READ:
				err = gv_read(s->path, buf, sizeof(buf));
				err = err < 0 ? err : 0;
				break;
			case FILE_WRITE:
				err = gv_write(s->path, s->val);
				break;
			}
			c = err ? 128 + (-err & 127) : 0;
			if (write(p[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	*rd = p[0];
	return pid;
}

/* The type id of @type among a VF's creatable types, or -1. */
static int vf_type_id(const char *vf, const char *type)
{
	char path[256], buf[8192], *line, *save = NULL, name[64];
	int id;

	snprintf(path, sizeof(path), "%s/gpuvirt/creatable_vgpu_types", vf);
	if (gv_read(path, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%d : %63s", &id, name) == 2 &&
		    !strcmp(name, type))
			return id;
	return -1;
}

/*
 * Make sim0's vGPU the way the variant says; its name for a VMM in @name
 * (UUID or VF address) and its UUID in @uuid.
 */
static int held_vgpu_make(const char *how, struct nl *nl, char *name,
			  char *uuid, size_t len)
{
	char id[16], buf[64];
	int err, n;

	if (!strcmp(how, "mdev")) {
		snprintf(name, len, UUID_A);
		snprintf(uuid, len, UUID_A);
		return gv_write(T0 "/gpuvirt_sim-H200-35C/create", UUID_A);
	}
	if (!strcmp(how, "gi")) {
		char req[512];
		struct nlmsghdr *nlh;

		err = gv_write(GV0 "/mig_mode", "1");
		if (err)
			return err;
		nlh = genl_req(nl, req, nl->family, GPUVIRT_CMD_GI_NEW, 0);
		mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
		mnl_attr_put_strz(nlh, GPUVIRT_A_GI_PROFILE, "3g.71gb");
		err = nl_talk(nl, nlh, ignore_cb, NULL);
		if (err)
			return err;
		snprintf(name, len, UUID_A);
		snprintf(uuid, len, UUID_A);
		return gv_write("/sys/class/mdev_bus/sim0-gi0/mdev_supported_types/gpuvirt_gi-H200-3-71C/create",
				UUID_A);
	}
	/* a VF: the sriov model, two VFs, the second typed */
	err = gv_write(GV0 "/vgpu_model", "sriov") ?:
	      gv_write(PF0 "/sriov_numvfs", "2");
	if (err)
		return err;
	n = vf_type_id(VF1, "H200-35C");
	if (n < 0)
		return -ENOENT;
	snprintf(id, sizeof(id), "%d", n);
	err = gv_write(VF1 "/gpuvirt/current_vgpu_type", id);
	if (err)
		return err;
	n = gv_read(VF1 "/gpuvirt/vgpu_uuid", buf, sizeof(buf));
	if (n < 37)
		return n < 0 ? n : -EIO;
	buf[36] = '\0';
	snprintf(name, len, VF1_NAME);
	snprintf(uuid, len, "%s", buf);
	return 0;
}

/*
 * A VMM holds a vGPU of sim0 while sim0 is deleted. The deletion waits
 * for it (the vGPU's REQ interrupt asks the VMM to let go), and meanwhile
 * a third process asks netlink about sim0, its vGPU and every GPU, and
 * reads and writes files of other objects: each must answer or fail at
 * once (HANG_MS judges a hang). Deleting sim0 stops its PCI functions
 * last first: a VF vGPU's removal waits (in the VF's remove) while sim0
 * is registered and its other VF is there, so those requests find them; a
 * time-sliced or GI vGPU's removal waits once sim0 is unregistered and its
 * function's files gone (the driver core removes them before the driver),
 * so they find it gone. (sim0 on the sim bus is gone at once.)
 */
TEST_F(removal, waiting_for_a_vm_blocks_nobody_else)
{
	bool vf = !strcmp(variant->how, "vf");
	char type[16];
	const struct step steps[] = {
		{ .name = "gpu-get of sim0", .kind = NL_GPU_GET, .arg = 0,
		  .want = vf ? 0 : -ENOENT },
		{ .name = "vgpu-get of the held vGPU", .kind = NL_VGPU_GET,
		  .want = vf ? 0 : -ENOENT },
		{ .name = "gpu-get of sim1", .kind = NL_GPU_GET, .arg = 1 },
		{ .name = "gpu-get dump", .kind = NL_GPU_DUMP },
		{ .name = "vgpu-get dump", .kind = NL_VGPU_DUMP },
		{ .name = "sched-get dump", .kind = NL_SCHED_DUMP },
		/* the other VF takes a vGPU of the same type */
		{ .name = "a write of another object's file",
		  .kind = FILE_WRITE,
		  .path = vf ? VF0 "/gpuvirt/current_vgpu_type" :
			       GV1 "/vgpu_mode",
		  .val = vf ? type : "mixed" },
		{ .name = "a read of that file", .kind = FILE_READ,
		  .path = vf ? VF0 "/gpuvirt/current_vgpu_type" :
			       GV1 "/vgpu_mode" },
		{ .name = "a read of sim0's vgpu_model", .kind = FILE_READ,
		  .path = PF0 "/gpuvirt/vgpu_model", .want = vf ? 0 : -ENOENT },
		{ .name = "a read of sim1's vgpu_model", .kind = FILE_READ,
		  .path = GV1 "/vgpu_model" },
	};
	char name[64], uuid[64], path[256];
	int vmm_rd, others_rd, c, st;
	unsigned int i;

	ASSERT_EQ(0, held_vgpu_make(variant->how, &self->nl, name, uuid,
				    sizeof(name)));
	TH_LOG("%s vGPU %s (%s)", variant->how, uuid, name);
	snprintf(type, sizeof(type), "%d", vf ? vf_type_id(VF0, "H200-35C") : 0);
	/* the core's directory of the vGPU: its GI's on a GI */
	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/%svgpus/%s",
		 strcmp(variant->how, "gi") ? "" : "gis/0/", uuid);
	ASSERT_TRUE(gv_exists(path));

	self->pids[0] = vmm_start(name, &vmm_rd);
	ASSERT_LT(0, self->pids[0]);
	ASSERT_EQ('o', pipe_byte(vmm_rd, HANG_MS));
	self->pids[1] = writer_start(GV_SIM_BUS "/del_device", "0");
	ASSERT_LT(0, self->pids[1]);
	/* the removal asks the VMM to let go: it is waiting now */
	ASSERT_EQ('r', pipe_byte(vmm_rd, 60000));
	EXPECT_EQ(-1, reap(self->pids[1], 0));
	EXPECT_TRUE(gv_exists(path));
	EXPECT_TRUE(gv_exists(GV_SIM_DEBUGFS "/sim0"));

	self->pids[2] = others_start(steps, ARRAY_SIZE(steps), uuid,
				     &others_rd);
	ASSERT_LT(0, self->pids[2]);
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		c = pipe_byte(others_rd, HANG_MS);
		EXPECT_NE(-ETIMEDOUT, c)
			TH_LOG("%s: still blocked after %d s while the removal waits for the VM",
			       steps[i].name, HANG_MS / 1000);
		if (c == -ETIMEDOUT)
			break;	/* it ends once the VMM lets go, below */
		ASSERT_LE(0, c);
		EXPECT_EQ(steps[i].want, c ? -(c - 128) : 0)
			TH_LOG("%s", steps[i].name);
	}
	/* the removal waited all along */
	EXPECT_EQ(-1, reap(self->pids[1], 0));

	/* the VMM lets go: the removal ends, and sim0 with its vGPU goes */
	children_end(self->pids, 1);
	st = reap(self->pids[1], 60000);
	ASSERT_NE(-1, st);
	self->pids[1] = 0;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	st = reap(self->pids[2], 60000);
	ASSERT_NE(-1, st);
	self->pids[2] = 0;
	EXPECT_FALSE(gv_exists(SIM0));
	EXPECT_FALSE(gv_exists(path));
	EXPECT_FALSE(gv_exists(GV_SIM_DEBUGFS "/sim0"));
	EXPECT_EQ(-ENOENT, gpu_get(&self->nl, 0, NULL, NULL));
	EXPECT_EQ(0, gpu_get(&self->nl, 1, NULL, NULL));
	close(vmm_rd);
	close(others_rd);
}

/* ---- the simulated GPU's SR-IOV capability ---- */

/* Offset of sim0's SR-IOV capability in its config space, or -1. */
static int sriov_cap(int fd)
{
	uint32_t hdr;
	int off = 0x100;

	while (off >= 0x100 && off < 0x1000) {
		if (pread(fd, &hdr, 4, off) != 4)
			return -1;
		if ((hdr & 0xffff) == 0x10)
			return off;
		off = hdr >> 20;
	}
	return -1;
}

static uint16_t cfg16(int fd, int off)
{
	uint16_t v = 0xffff;

	if (pread(fd, &v, 2, off) != 2)
		return 0xffff;
	return v;
}

/* NumVFs as the sim's debugfs shows the config space, or -1. */
static int sim0_numvfs(int cap)
{
	char buf[8192], *line, *save = NULL;
	unsigned int b[16], at = cap + 0x10, o;

	if (gv_read(GV_SIM_DEBUGFS "/sim0/config", buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%x: %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x %x",
			   &o, &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6],
			   &b[7], &b[8], &b[9], &b[10], &b[11], &b[12], &b[13],
			   &b[14], &b[15]) == 17 && o == (at & ~15u))
			return b[at & 15] | b[(at & 15) + 1] << 8;
	return -1;
}

/*
 * NumVFs of the SR-IOV capability is read-only while VF Enable is set:
 * root writing it through the PF's config file changes nothing, and the
 * VFs the PCI core enumerated stay there. With VF Enable clear it is
 * writable.
 */
TEST_F(host, numvfs_read_only_while_vfs_enabled)
{
	uint16_t one = 1, three = 3, zero = 0;
	uint32_t class;
	int fd, vf, cap;

	ASSERT_EQ(0, gv_write(GV0 "/vgpu_model", "sriov"));
	ASSERT_EQ(0, gv_write(PF0 "/sriov_numvfs", "2"));
	fd = open(PF0 "/config", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	cap = sriov_cap(fd);
	ASSERT_LT(0, cap);
	ASSERT_TRUE(cfg16(fd, cap + 8) & 1);	/* VF Enable */
	EXPECT_EQ(2, cfg16(fd, cap + 0x10));

	EXPECT_EQ(2, pwrite(fd, &one, 2, cap + 0x10));
	EXPECT_EQ(2, cfg16(fd, cap + 0x10));
	EXPECT_EQ(2, sim0_numvfs(cap));
	/* the second VF is still there, a 3D controller */
	vf = open(VF1 "/config", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, vf);
	EXPECT_EQ(4, pread(vf, &class, 4, 8));
	EXPECT_EQ(0x0302u, class >> 16);
	close(vf);

	ASSERT_EQ(0, gv_write(PF0 "/sriov_numvfs", "0"));
	EXPECT_FALSE(cfg16(fd, cap + 8) & 1);
	EXPECT_EQ(2, pwrite(fd, &three, 2, cap + 0x10));
	EXPECT_EQ(3, cfg16(fd, cap + 0x10));
	EXPECT_EQ(3, sim0_numvfs(cap));
	EXPECT_EQ(2, pwrite(fd, &zero, 2, cap + 0x10));
	close(fd);
	EXPECT_EQ(0, gv_write(GV0 "/vgpu_model", "mdev"));
}

/* ---- INTx ---- */

static int irq_action(int fd, unsigned int index, uint32_t action,
		      unsigned int count)
{
	struct vfio_irq_set s = {
		.argsz = sizeof(s),
		.flags = VFIO_IRQ_SET_DATA_NONE | action,
		.index = index, .count = count,
	};

	return ioctl(fd, VFIO_DEVICE_SET_IRQS, &s) ? -errno : 0;
}

/* What an eventfd counted so far, 0 for nothing; reading resets it. */
static uint64_t efd_take(int efd)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/*
 * INTx is level-triggered and automasked, as GET_IRQ_INFO says: the first
 * interrupt masks it, so a second cause signals nothing until the VMM
 * unmasks, when the pending cause signals again; acknowledged, an unmask
 * signals nothing. Disabled and enabled again, INTx starts unmasked. The
 * eventfd counts are read right after the call that signals: the device
 * signals before the call returns.
 */
TEST_F(host, intx_is_automasked)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii),
				    .index = VFIO_PCI_INTX_IRQ_INDEX };
	struct vfio_user u;
	int efd, fd;

	ASSERT_EQ(0, gv_write(T0 "/gpuvirt_sim-H200-35C/create", UUID_A));
	ASSERT_EQ(0, vgpu_client_open(&u, UUID_A));
	fd = u.device;
	ASSERT_EQ(0, ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, &ii));
	EXPECT_TRUE(ii.flags & VFIO_IRQ_INFO_AUTOMASKED);
	EXPECT_TRUE(ii.flags & VFIO_IRQ_INFO_MASKABLE);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_INTX_IRQ_INDEX, efd));

	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_RAISE,
				    GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1u, efd_take(efd));
	/* masked by the first: the second cause is not signalled */
	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_RAISE,
				    GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(0u, efd_take(efd));
	/* unmasked with a cause pending: signalled, and masked again */
	ASSERT_EQ(0, irq_action(fd, VFIO_PCI_INTX_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_UNMASK, 1));
	EXPECT_EQ(1u, efd_take(efd));
	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_RAISE,
				    GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(0u, efd_take(efd));
	/* acknowledged, then unmasked: nothing */
	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
	ASSERT_EQ(0, irq_action(fd, VFIO_PCI_INTX_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_UNMASK, 1));
	EXPECT_EQ(0u, efd_take(efd));
	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_RAISE,
				    GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1u, efd_take(efd));

	/* disabled while masked, enabled again: unmasked */
	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_STATUS, ~0u));
	ASSERT_EQ(0, irq_action(fd, VFIO_PCI_INTX_IRQ_INDEX,
				VFIO_IRQ_SET_ACTION_TRIGGER, 0));
	ASSERT_EQ(0, vgpu_client_set_irq(fd, VFIO_PCI_INTX_IRQ_INDEX, efd));
	ASSERT_EQ(0, vgpu_reg_write(fd, GPUVIRT_VGPU_REG_IRQ_RAISE,
				    GPUVIRT_VGPU_IRQ_SW));
	EXPECT_EQ(1u, efd_take(efd));
	close(efd);
	vgpu_client_close(&u);
}

TEST_HARNESS_MAIN
