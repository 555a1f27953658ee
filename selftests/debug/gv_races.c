// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lifetime and concurrency races on gpuvirt, bounded in time, for the
 * debug kernel (KASAN and lockdep are the judges; the program checks only
 * that every call ends with a sane result and that the system is back to
 * its starting state after each race).
 *
 * Usage: gv_races [-s SECONDS] RACE...|all|list     (default 15 s a race)
 *
 * Races:
 *   create-remove   two threads create and remove the same UUID
 *   remove-open     a vGPU removed while a client holds its device fd, a
 *                   mapping of its VRAM and an armed MSI eventfd; the client
 *                   lets go after a moment (removal must wait, then finish)
 *   irqs-reset      SET_IRQS (arm, disarm) against VFIO_DEVICE_RESET on one fd
 *   mig-reset       VFIO migration save and resume (data fds read and
 *                   written) against VFIO_DEVICE_RESET on one vGPU
 *   sim-del-busy    del_device of a simulated GPU whose vGPU is open (must be
 *                   refused or wait), against the client closing
 *   rmmod-netlink   rmmod/insmod of gpuvirt_sim while a thread dumps GPUs
 *                   and vGPUs over netlink
 *   rmmod-busy      rmmod of gpuvirt_sim and of gpuvirt while a VFIO client
 *                   holds a vGPU, and of gpuvirt_vfio_pci while one holds
 *                   the passthrough device 0000:01:00.0, with netlink
 *                   dumps running; the client lets go after a moment
 *   vf-type-open    SR-IOV: a VF given a type and cleared again, against a
 *                   VFIO client opening and closing it (a VF in use keeps
 *                   its type: clearing it then is refused) and a thread
 *                   reading and writing the vGPU's files on the VF
 *                   (gpuvirt/weight, min_pct, frame_rate_limiter: ENODEV
 *                   while the VF has no type)
 *   vf-numvfs-open  SR-IOV: VFs enabled, typed, cleared and disabled,
 *                   against a client opening the first VF and the same
 *                   reader and writer of its files
 *   mdev-model      mdev vGPUs created and removed against switches of
 *                   the GPU between the mdev and the sriov vGPU model: no
 *                   mdev vGPU may exist in the sriov model (a created one
 *                   holds its place, so the model cannot switch under it)
 * Prints KTAP, one test per race, with its iteration count.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>

#include "gpuvirt_test.h"
#include "gv_nl.h"
#include "vgpu_client.h"

#define SIM_NEW		GV_SIM_BUS "/new_device"
#define SIM_DEL		GV_SIM_BUS "/del_device"
#define SIM0		GV_SIM_BUS "/devices/sim0"
#define CREATE		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C/create"
#define UUID_A		"7ace0000-0000-4000-8000-00000000000a"
#define REMOVE_A	VGPU_MDEVS "/" UUID_A "/remove"

static int seconds = 15;
static volatile bool stop;
static volatile long bad;

#define FAIL(...) do { printf("#   " __VA_ARGS__); printf("\n"); __sync_fetch_and_add(&bad, 1); } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sim_up(void)
{
	int err = gv_module_load(GV_CORE);

	if (err && err != -EEXIST)
		return err;
	err = gv_module_load(GV_SIM);
	if (err && err != -EEXIST)
		return err;
	if (!gv_exists(SIM0))
		return gv_write(SIM_NEW, "0 h200-141gb");
	return 0;
}

/*
 * Remove the vGPU. mdev's remove_store() deletes its own "remove" file
 * before it asks mdev_device_remove(), which refuses (-EAGAIN) an mdev
 * whose creation has not finished: a remove that races a create of the
 * same UUID can leave an mdev without a "remove" file. Only its parent
 * going away removes it then: delete sim0 and add it again.
 */
static long orphans;

static void clean(void)
{
	if (!gv_exists(VGPU_MDEVS "/" UUID_A))
		return;
	gv_write(REMOVE_A, "1");
	if (gv_exists(VGPU_MDEVS "/" UUID_A) && !gv_exists(REMOVE_A)) {
		orphans++;
		gv_write(SIM_DEL, "0");
		gv_write(SIM_NEW, "0 h200-141gb");
	}
}

/* ---- create-remove ---- */

static void *creator(void *arg)
{
	long n = 0;

	while (!stop) {
		int err = gv_write(CREATE, UUID_A);

		if (err && err != -EEXIST && err != -EBUSY && err != -ENOSPC)
			FAIL("create: %s", strerror(-err));
		n++;
	}
	return (void *)n;
}

static void *remover(void *arg)
{
	long n = 0;

	while (!stop) {
		int err = gv_write(REMOVE_A, "1");

		if (err && err != -ENOENT && err != -ENODEV && err != -EBUSY &&
		    err != -EAGAIN)
			FAIL("remove: %s", strerror(-err));
		n++;
	}
	return (void *)n;
}

static long race_create_remove(void)
{
	pthread_t a, b, c;
	void *na, *nb, *nc;

	pthread_create(&a, NULL, creator, NULL);
	pthread_create(&c, NULL, creator, NULL);
	pthread_create(&b, NULL, remover, NULL);
	sleep(seconds);
	stop = true;
	pthread_join(a, &na);
	pthread_join(b, &nb);
	pthread_join(c, &nc);
	clean();
	printf("# create-remove: %ld creates/removes refused with EAGAIN left an mdev without its remove file\n",
	       orphans);
	return (long)na + (long)nb + (long)nc;
}

/* ---- remove-open ---- */

struct client {
	struct vfio_user u;
	void *map;
	size_t len;
	int efd;
};

static int client_open(struct client *c)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri),
				       .index = VFIO_PCI_BAR2_REGION_INDEX };
	int err = vgpu_client_open(&c->u, UUID_A);

	c->map = MAP_FAILED;
	c->efd = -1;
	if (err)
		return err;
	if (ioctl(c->u.device, VFIO_DEVICE_GET_REGION_INFO, &ri) == 0 && ri.size) {
		c->len = ri.size < (1 << 20) ? ri.size : (1 << 20);
		c->map = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			      c->u.device, ri.offset);
		if (c->map != MAP_FAILED)
			memset(c->map, 0x5a, 4096);
	}
	c->efd = eventfd(0, EFD_CLOEXEC);
	if (c->efd >= 0)
		vgpu_client_set_irq(c->u.device, VFIO_PCI_MSI_IRQ_INDEX, c->efd);
	return 0;
}

static void client_close(struct client *c)
{
	if (c->map != MAP_FAILED)
		munmap(c->map, c->len);
	c->map = MAP_FAILED;
	vgpu_client_close(&c->u);
	if (c->efd >= 0)
		close(c->efd);
	c->efd = -1;
}

static void *remove_thread(void *arg)
{
	return (void *)(long)gv_write(REMOVE_A, "1");
}

static long race_remove_open(void)
{
	double end = now_s() + seconds;
	long n = 0;

	while (now_s() < end) {
		struct client c;
		pthread_t t;
		void *ret;
		int err;

		clean();
		err = gv_write(CREATE, UUID_A);
		if (err) {
			FAIL("create: %s", strerror(-err));
			break;
		}
		err = client_open(&c);
		if (err) {
			FAIL("open: %s", strerror(-err));
			break;
		}
		pthread_create(&t, NULL, remove_thread, NULL);
		usleep(1000 * (n % 20));
		/* the client keeps using what it holds while removal waits */
		if (c.map != MAP_FAILED)
			((volatile char *)c.map)[n % 4096] = 1;
		client_close(&c);
		pthread_join(t, &ret);
		if ((long)ret)
			FAIL("remove with an open client: %s", strerror(-(long)ret));
		if (gv_exists(VGPU_MDEVS "/" UUID_A))
			FAIL("the vGPU is still there after remove");
		n++;
	}
	return n;
}

/* ---- irqs-reset ---- */

static struct client shared;

static long irq_errs, reset_errs;

static void *irq_thread(void *arg)
{
	long n = 0;
	int efd = eventfd(0, EFD_CLOEXEC);

	while (!stop) {
		int err = vgpu_client_set_irq(shared.u.device, VFIO_PCI_MSI_IRQ_INDEX,
					      n & 1 ? -1 : efd);

		if (err && err != -EBUSY && err != -EAGAIN)
			FAIL("SET_IRQS: %s", strerror(-err));
		irq_errs += !!err;
		n++;
	}
	vgpu_client_set_irq(shared.u.device, VFIO_PCI_MSI_IRQ_INDEX, -1);
	close(efd);
	return (void *)n;
}

static void *reset_thread(void *arg)
{
	long n = 0;

	while (!stop) {
		if (ioctl(shared.u.device, VFIO_DEVICE_RESET)) {
			if (errno != EBUSY && errno != EAGAIN)
				FAIL("RESET: %s", strerror(errno));
			reset_errs++;
		}
		n++;
	}
	return (void *)n;
}

static long race_irqs_reset(void)
{
	pthread_t a, b;
	void *na, *nb;
	int err;

	clean();
	err = gv_write(CREATE, UUID_A);
	if (!err)
		err = client_open(&shared);
	if (err) {
		FAIL("setup: %s", strerror(-err));
		return 0;
	}
	pthread_create(&a, NULL, irq_thread, NULL);
	pthread_create(&b, NULL, reset_thread, NULL);
	sleep(seconds);
	stop = true;
	pthread_join(a, &na);
	pthread_join(b, &nb);
	client_close(&shared);
	clean();
	printf("# irqs-reset: %ld SET_IRQS (%ld refused busy), %ld resets (%ld refused busy)\n",
	       (long)na, irq_errs, (long)nb, reset_errs);
	return (long)na + (long)nb;
}

/* ---- mig-reset ---- */

static long mig_dead;

static int mig_set(int fd, uint32_t state, int *data_fd)
{
	char buf[sizeof(struct vfio_device_feature) +
		 sizeof(struct vfio_device_feature_mig_state)];
	struct vfio_device_feature *f = (void *)buf;
	struct vfio_device_feature_mig_state *st = (void *)f->data;

	f->argsz = sizeof(buf);
	f->flags = VFIO_DEVICE_FEATURE_SET | VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE;
	st->device_state = state;
	st->data_fd = -1;
	if (ioctl(fd, VFIO_DEVICE_FEATURE, f))
		return -errno;
	*data_fd = st->data_fd;
	return 0;
}

/*
 * Save and resume in a loop on one vGPU: the data fds die under it when
 * the other thread resets (ENODEV), which is the point.
 */
static void *migrator(void *arg)
{
	static char buf[65536];
	long n = 0;
	ssize_t r;
	int dfd = -1, err;

	while (!stop) {
		err = mig_set(shared.u.device, n & 1 ? VFIO_DEVICE_STATE_RESUMING :
			      VFIO_DEVICE_STATE_STOP_COPY, &dfd);
		if (err) {
			FAIL("set state: %s", strerror(-err));
			break;
		}
		/* small reads: a long window for the reset to land in */
		do {
			r = n & 1 ? write(dfd, buf, 100) : read(dfd, buf, 64);
		} while (r > 0 && !(n & 1));
		if (r < 0 && errno == ENODEV)
			mig_dead++;
		else if (r < 0 && !(n & 1))
			FAIL("read: %s", strerror(errno));
		close(dfd);
		err = mig_set(shared.u.device, VFIO_DEVICE_STATE_RUNNING, &dfd);
		/* a resume of 100 junk bytes is refused: reset instead */
		if (err == -EINVAL)
			err = ioctl(shared.u.device, VFIO_DEVICE_RESET) ? -errno : 0;
		if (err) {
			FAIL("back to RUNNING: %s", strerror(-err));
			break;
		}
		n++;
	}
	return (void *)n;
}

static long race_mig_reset(void)
{
	pthread_t a, b;
	void *na, *nb;
	int err;

	clean();
	err = gv_write(CREATE, UUID_A);
	if (!err)
		err = client_open(&shared);
	if (err) {
		FAIL("setup: %s", strerror(-err));
		return 0;
	}
	/* 64 pages of VRAM, so that a save has a stream to read */
	for (err = 0; err < 64; err++) {
		static const char page[4096] = { 1 };

		if (pwrite(shared.u.device, page, sizeof(page),
			   VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) +
			   err * 65536) != sizeof(page))
			FAIL("write VRAM: %s", strerror(errno));
	}
	pthread_create(&a, NULL, migrator, NULL);
	pthread_create(&b, NULL, reset_thread, NULL);
	sleep(seconds);
	stop = true;
	pthread_join(a, &na);
	pthread_join(b, &nb);
	client_close(&shared);
	clean();
	printf("# mig-reset: %ld saves and resumes (%ld data fds killed by a reset), %ld resets\n",
	       (long)na, mig_dead, (long)nb);
	return (long)na + (long)nb;
}

/* ---- sim-del-busy ---- */

static void *sim_del_thread(void *arg)
{
	return (void *)(long)gv_write(SIM_DEL, "0");
}

static long race_sim_del_busy(void)
{
	double end = now_s() + seconds;
	long n = 0;

	while (now_s() < end) {
		struct client c;
		pthread_t t;
		void *ret;
		int err;

		if (!gv_exists(SIM0) && gv_write(SIM_NEW, "0 h200-141gb")) {
			FAIL("re-add sim0");
			break;
		}
		clean();
		err = gv_write(CREATE, UUID_A) ?: client_open(&c);
		if (err) {
			FAIL("setup: %s", strerror(-err));
			break;
		}
		pthread_create(&t, NULL, sim_del_thread, NULL);
		usleep(1000 * (n % 20));
		if (c.map != MAP_FAILED)
			((volatile char *)c.map)[n % 4096] = 1;
		client_close(&c);
		pthread_join(t, &ret);
		err = (long)ret;
		if (err && err != -EBUSY)
			FAIL("del_device with an open vGPU: %s", strerror(-err));
		if (!err) {
			/* it went, and took the vGPU with it */
			if (gv_exists(VGPU_MDEVS "/" UUID_A))
				FAIL("sim0 deleted but its vGPU is left");
		}
		n++;
	}
	clean();
	if (!gv_exists(SIM0))
		gv_write(SIM_NEW, "0 h200-141gb");
	return n;
}

/* ---- rmmod-netlink ---- */

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(*(long *)data)++;
	return MNL_CB_OK;
}

static void *dumper(void *arg)
{
	long n = 0, msgs = 0;
	struct nl nl;

	if (nl_open(&nl)) {
		FAIL("netlink open");
		return NULL;
	}
	while (!stop) {
		char buf[512];
		uint8_t cmd = n & 1 ? GPUVIRT_CMD_VGPU_GET : GPUVIRT_CMD_GPU_GET;
		struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, cmd, NLM_F_DUMP);
		int err = nl.sk ? nl_talk(&nl, nlh, count_cb, &msgs) : -ENOENT;

		if (err && err != -ENODEV && err != -ENOENT && err != -EINTR)
			FAIL("dump: %s", strerror(-err));
		/* gpuvirt itself was unloaded: find the family again */
		if (err == -ENOENT) {
			nl_close(&nl);
			if (nl_open(&nl)) {
				nl_close(&nl);
				usleep(1000);
			}
		}
		n++;
	}
	nl_close(&nl);
	return (void *)n;
}

static long race_rmmod_netlink(void)
{
	double end = now_s() + seconds;
	pthread_t t;
	void *nd;
	long n = 0, unloaded = 0;

	clean();
	pthread_create(&t, NULL, dumper, NULL);
	while (now_s() < end) {
		int err = gv_module_unload(GV_SIM);

		if (err && err != -EAGAIN && err != -EBUSY && err != -EWOULDBLOCK)
			FAIL("rmmod gpuvirt_sim: %s", strerror(-err));
		unloaded += !err;
		err = gv_module_load(GV_SIM);
		if (err && err != -EEXIST)
			FAIL("insmod gpuvirt_sim: %s", strerror(-err));
		if (!gv_exists(SIM0))
			gv_write(SIM_NEW, "0 h200-141gb");
		n++;
	}
	stop = true;
	pthread_join(t, &nd);
	printf("# rmmod-netlink: %ld rmmod/insmod rounds (%ld unloads), %ld dumps\n",
	       n, unloaded, (long)nd);
	return n + (long)nd;
}

/* ---- rmmod-busy ---- */

#define PT_DEV		"0000:01:00.0"
#define PT_SYSFS	"/sys/bus/pci/devices/" PT_DEV
#define PT_DRV		"/sys/bus/pci/drivers/gpuvirt_vfio_pci"

static void *unload_thread(void *arg)
{
	return (void *)(long)gv_module_unload(arg);
}

/*
 * rmmod @m from a second thread while @u is open and the netlink dumper
 * runs; the client lets go after @delay_us. The unload either fails at once
 * (the module is in use) or waits for the client; it must not fail
 * otherwise. Returns 1 if it unloaded the module.
 */
static int unload_under(const struct gv_module *m, struct vfio_user *u,
			useconds_t delay_us)
{
	pthread_t t;
	void *ret;
	int err;

	pthread_create(&t, NULL, unload_thread, (void *)m);
	usleep(delay_us);
	vgpu_client_close(u);
	pthread_join(t, &ret);
	err = (long)ret;
	if (err && err != -EBUSY && err != -EWOULDBLOCK && err != -EAGAIN)
		FAIL("rmmod %s with an open client: %s", m->name, strerror(-err));
	return !err;
}

/* 0000:01:00.0 to gpuvirt_vfio_pci (loaded), or back to its driver. */
static int pt_bind(bool to_vfio)
{
	gv_write(PT_SYSFS "/driver/unbind", PT_DEV);
	gv_write(PT_SYSFS "/driver_override", to_vfio ? "gpuvirt_vfio_pci" : "\n");
	if (to_vfio)
		return gv_write(PT_DRV "/bind", PT_DEV);
	return gv_write("/sys/bus/pci/drivers_probe", PT_DEV);
}

static long race_rmmod_busy(void)
{
	double end = now_s() + seconds;
	long n = 0, n_vgpu = 0, gone[3] = { 0 };
	pthread_t t;
	void *nd;
	int err;

	if (!gv_exists(PT_SYSFS)) {
		FAIL("no " PT_DEV ": not the vm-run.sh topology");
		return 0;
	}
	pthread_create(&t, NULL, dumper, NULL);
	/* the first half of the time on the vGPU, the second on the PCI device */
	end -= seconds / 2.0;
	while (now_s() < end && !bad) {
		struct vfio_user u;
		useconds_t delay = 1000 * (n % 20);

		/* gpuvirt_sim, then gpuvirt, under an open vGPU */
		clean();
		err = sim_up() ?: gv_write(CREATE, UUID_A) ?:
		      vgpu_client_open(&u, UUID_A);
		if (err) {
			FAIL("vGPU setup: %s", strerror(-err));
			break;
		}
		gone[0] += unload_under(GV_SIM, &u, delay);
		clean();
		err = gv_write(CREATE, UUID_A);
		if (err && gv_module_loaded(GV_SIM))
			FAIL("create after rmmod: %s", strerror(-err));
		if (!err && !vgpu_client_open(&u, UUID_A))
			gone[1] += unload_under(GV_CORE, &u, delay);
		n++;
	}
	end += seconds / 2.0;
	n_vgpu = n;
	while (now_s() < end && !bad) {
		struct vfio_user u;
		useconds_t delay = 100 * (n % 20);

		/*
		 * gpuvirt_vfio_pci under an open passthrough device; the
		 * device stays bound while the module stays
		 */
		if (!gv_exists(PT_DRV "/" PT_DEV)) {
			err = gv_module_load(GV_CORE);
			err = err && err != -EEXIST ? err : gv_module_load(GV_VFIO_PCI);
			if (err && err != -EEXIST) {
				FAIL("insmod gpuvirt_vfio_pci: %s", strerror(-err));
				break;
			}
			err = pt_bind(true);
			if (err) {
				FAIL("bind " PT_DEV ": %s", strerror(-err));
				break;
			}
		}
		err = vfio_client_open(&u, PT_SYSFS, PT_DEV);
		if (err) {
			FAIL("open " PT_DEV ": %s", strerror(-err));
			break;
		}
		if (unload_under(GV_VFIO_PCI, &u, delay)) {
			gone[2]++;
			pt_bind(false);
		}
		n++;
	}
	stop = true;
	pthread_join(t, &nd);
	gv_module_unload(GV_VFIO_PCI);
	pt_bind(false);
	sim_up();
	printf("# rmmod-busy: %ld rounds under an open vGPU (gpuvirt_sim unloaded %ld times, gpuvirt %ld), %ld under an open PCI device (gpuvirt_vfio_pci unloaded %ld times); the other unloads were refused, in use; %ld dumps\n",
	       n_vgpu, gone[0], gone[1], n - n_vgpu, gone[2], (long)nd);
	return n;
}

/* ---- vf-type-open, vf-numvfs-open ---- */

#define PF0		SIM0 "/gpu"
#define VF1		"/sys/bus/pci/devices/8000:00:00.1"
#define VF1_TYPE	VF1 "/gpuvirt/current_vgpu_type"

static void sriov_clean(void)
{
	if (gv_exists(VF1_TYPE))
		gv_write(VF1_TYPE, "0");
	gv_write(PF0 "/sriov_numvfs", "0");
	gv_write(PF0 "/gpuvirt/vgpu_model", "mdev");
}

/* Opens VF 1 as a VMM does, holds it a moment, closes it; counts opens. */
static void *vf_opener(void *arg)
{
	long n = 0;

	while (!stop) {
		struct vfio_user u;
		int err = vfio_client_open(&u, VF1, "8000:00:00.1");

		if (!err) {
			/* held open: the type must stay */
			if (!gv_write(VF1_TYPE, "0"))
				FAIL("the type of an open VF was cleared");
			n++;
			usleep(2000);
			vgpu_client_close(&u);
		} else if (err != -ENOENT && err != -ENODEV && err != -ENXIO &&
			   err != -EBUSY && err != -EINVAL) {
			/* the VF's type, so its VFIO group, may just have gone */
			FAIL("open VF: %s", strerror(-err));
		}
	}
	return (void *)n;
}

/*
 * Reads and writes the vGPU's settings on VF 1 while its type comes and
 * goes: each call lands on the vGPU or fails with ENODEV (no type), or
 * ENOENT when the VF itself is gone (vf-numvfs-open). Counts the landed
 * writes.
 */
static void *vf_param_writer(void *arg)
{
	static const char * const files[] = {
		VF1 "/gpuvirt/weight",
		VF1 "/gpuvirt/min_pct",
		VF1 "/gpuvirt/frame_rate_limiter",
	};
	static const char * const vals[] = { "250", "10", "0" };
	long n = 0;
	unsigned int i;

	while (!stop) {
		char buf[32];
		int err;

		for (i = 0; i < 3; i++) {
			err = gv_write(files[i], vals[i]);
			if (!err)
				n++;
			else if (err != -ENODEV && err != -ENOENT)
				FAIL("write %s: %s", files[i], strerror(-err));
		}
		err = gv_read(files[0], buf, sizeof(buf));
		/* the default, or what was written */
		if (err >= 0 && strcmp(buf, "100\n") && strcmp(buf, "250\n"))
			FAIL("VF 1's weight reads \"%s\"", buf);
		else if (err < 0 && err != -ENODEV && err != -ENOENT)
			FAIL("read VF 1's weight: %s", strerror(-err));
	}
	return (void *)n;
}

static void *vf_typer(void *arg)
{
	bool numvfs = arg;
	long n = 0;

	while (!stop) {
		int err = numvfs ? gv_write(PF0 "/sriov_numvfs", "1") : 0;

		if (err && err != -EBUSY)
			FAIL("sriov_numvfs 1: %s", strerror(-err));
		err = gv_write(VF1_TYPE, "3");
		if (err && err != -EBUSY && err != -ENOENT)
			FAIL("type VF: %s", strerror(-err));
		err = gv_write(VF1_TYPE, "0");
		if (err && err != -EBUSY && err != -ENOENT)
			FAIL("clear VF: %s", strerror(-err));
		err = numvfs ? gv_write(PF0 "/sriov_numvfs", "0") : 0;
		if (err && err != -EBUSY)
			FAIL("sriov_numvfs 0: %s", strerror(-err));
		n++;
	}
	return (void *)n;
}

static long race_vf(bool numvfs)
{
	pthread_t a, b, c;
	void *na, *nb, *nc;

	clean();
	if (gv_write(PF0 "/gpuvirt/vgpu_model", "sriov") ||
	    gv_write(PF0 "/sriov_numvfs", "1")) {
		FAIL("cannot enter the sriov model");
		sriov_clean();
		return 0;
	}
	pthread_create(&a, NULL, vf_typer, (void *)numvfs);
	pthread_create(&b, NULL, vf_opener, NULL);
	pthread_create(&c, NULL, vf_param_writer, NULL);
	sleep(seconds);
	stop = true;
	pthread_join(a, &na);
	pthread_join(b, &nb);
	pthread_join(c, &nc);
	sriov_clean();
	if (gv_exists(VF1))
		FAIL("VF 1 left after the race");
	printf("# vf-%s: %ld typing rounds, %ld opens, %ld writes to the vGPU's files on the VF\n",
	       numvfs ? "numvfs-open" : "type-open", (long)na, (long)nb,
	       (long)nc);
	return (long)na + (long)nb;
}

static long race_vf_type_open(void)
{
	return race_vf(false);
}

static long race_vf_numvfs_open(void)
{
	return race_vf(true);
}

/* ---- mdev-model ---- */

/* Entries of a directory, "." and ".." aside; -1 if unreadable. */
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
 * Creates and removes UUID_A; once created it holds its place, so the
 * GPU cannot be in the sriov model until it is removed.
 */
static void *model_creator(void *arg)
{
	long n = 0;
	char model[16];

	while (!stop) {
		int err = gv_write(CREATE, UUID_A);

		if (err) {
			if (err != -EBUSY && err != -EEXIST)
				FAIL("create: %s", strerror(-err));
			continue;
		}
		if (gv_read(PF0 "/gpuvirt/vgpu_model", model, sizeof(model)) > 0 &&
		    !strcmp(model, "sriov\n"))
			FAIL("an mdev vGPU was made on a GPU in the sriov model");
		err = gv_write(REMOVE_A, "1");
		if (err)
			FAIL("remove: %s", strerror(-err));
		/* now and then a moment without a vGPU, for the switcher */
		usleep(250 * (n % 4));
		n++;
	}
	return (void *)n;
}

/*
 * Switches sim0 to the sriov model and, a few checks later, back: while
 * it is in the sriov model no vGPU of sim0 may exist, and so nothing may
 * keep it from switching back.
 */
static void *model_switcher(void *arg)
{
	long n = 0;
	int i;

	while (!stop) {
		int err = gv_write(PF0 "/gpuvirt/vgpu_model", "sriov");

		if (err) {
			if (err != -EBUSY)
				FAIL("vgpu_model sriov: %s", strerror(-err));
			continue;
		}
		/* a while in the sriov model, for a creation to land in */
		for (i = 0; i < 4; i++) {
			if (dir_entries(GV_DEBUGFS "/gpus/sim0/vgpus"))
				FAIL("a vGPU of sim0 exists in the sriov model");
			usleep(500);
		}
		err = gv_write(PF0 "/gpuvirt/vgpu_model", "mdev");
		if (err) {
			FAIL("vgpu_model mdev: %s", strerror(-err));
			/* the creator removes what it made: then it can */
			while (gv_write(PF0 "/gpuvirt/vgpu_model", "mdev") &&
			       !stop)
				usleep(1000);
		}
		n++;
	}
	return (void *)n;
}

static long race_mdev_model(void)
{
	pthread_t a, b;
	void *na, *nb;

	clean();
	pthread_create(&a, NULL, model_creator, NULL);
	pthread_create(&b, NULL, model_switcher, NULL);
	sleep(seconds);
	stop = true;
	pthread_join(a, &na);
	pthread_join(b, &nb);
	clean();
	gv_write(PF0 "/gpuvirt/vgpu_model", "mdev");
	printf("# mdev-model: %ld mdev vGPUs made, %ld switches to the sriov model\n",
	       (long)na, (long)nb);
	if (!(long)na || !(long)nb)
		FAIL("one side never ran");
	return (long)na + (long)nb;
}

static const struct race {
	const char *name;
	long (*run)(void);
} races[] = {
	{ "create-remove", race_create_remove },
	{ "remove-open", race_remove_open },
	{ "irqs-reset", race_irqs_reset },
	{ "sim-del-busy", race_sim_del_busy },
	{ "rmmod-netlink", race_rmmod_netlink },
	{ "rmmod-busy", race_rmmod_busy },
	{ "mig-reset", race_mig_reset },
	{ "vf-type-open", race_vf_type_open },
	{ "vf-numvfs-open", race_vf_numvfs_open },
	{ "mdev-model", race_mdev_model },
};

#define NRACES	(sizeof(races) / sizeof(races[0]))

int main(int argc, char **argv)
{
	const struct race *sel[NRACES];
	int i = 1, nsel = 0, failed = 0, k;
	size_t j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (i + 1 < argc && !strcmp(argv[i], "-s")) {
		seconds = atoi(argv[i + 1]);
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-s SECONDS] RACE...|all|list\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[i], "list")) {
		for (j = 0; j < NRACES; j++)
			printf("%s\n", races[j].name);
		return 0;
	}
	for (; i < argc; i++)
		for (j = 0; j < NRACES; j++)
			if (!strcmp(argv[i], "all") || !strcmp(argv[i], races[j].name))
				if (nsel < (int)NRACES)
					sel[nsel++] = &races[j];
	printf("TAP version 13\n1..%d\n", nsel);
	if (sim_up() || system("modprobe -q vfio_iommu_type1")) {
		printf("# cannot bring up gpuvirt and sim0\n");
		return 1;
	}
	for (k = 0; k < nsel; k++) {
		long iters;

		stop = false;
		bad = 0;
		iters = sel[k]->run();
		clean();
		printf("%sok %d %s # %ld iterations in %d s\n", bad ? "not " : "", k + 1,
		       sel[k]->name, iters, seconds);
		failed += !!bad;
	}
	clean();
	return failed ? 1 : 0;
}
