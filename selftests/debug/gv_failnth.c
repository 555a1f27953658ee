// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault-injection sweeps over gpuvirt's setup paths, in the style of
 * iommufd's fail_nth selftest. Runs in the debug-kernel guest (failslab,
 * fail_page_alloc, FAULT_INJECTION_DEBUG_FS), as root.
 *
 * Usage: gv_failnth [-n] [-m MAX] [-k K] [-p N] [-t SEC] [-K K:R] PATH...|all|list
 *   -n      no injection: run each path once and check its setup, undo and
 *           state snapshot (works on any kernel)
 *   -m MAX  give up on a path after MAX injection points (default 5000)
 *   -p N    inject at point N only, and have the kernel log the stack of
 *           the failed allocation (failslab/fail_page_alloc verbose 1)
 *   -t SEC  stop a path's sweep after SEC seconds; the points not reached
 *           are reported as not swept ("# partial"), not as a failure
 *   -k K    a path with steps (pt-assign): sweep step K alone (with -p N:
 *           point N of step K)
 *   -K K:R  a sample: inject only at the points n with n % K == R (of each
 *           step), 0 <= R < K; the sweep still ends where the path runs
 *           untouched. K runs with R = 0 .. K-1 sweep every point once
 *           (scripts/check-debug.sh derives R from the commit)
 *
 * For one PATH, for n = 1, 2, ...: bring the system to the path's starting
 * state, snapshot it, write n to /proc/self/task/<tid>/fail-nth, make the
 * path's one system call (finit_module, a sysfs write, a netlink request,
 * a VFIO ioctl, read, write, mmap or close of a vGPU), and disarm. Then:
 *  - if the fault was not injected (fail-nth still counts down), the path ran
 *    untouched: undo it and stop, n - 1 points were swept;
 *  - if the call failed, it must fail with a clean errno (ENOMEM, or ENOBUFS
 *    for netlink) and the state must be exactly the snapshot: the same
 *    modules, sim devices, mdevs, GIs, available_instances and MIG mode;
 *  - if it succeeded anyway (an allocation whose failure is tolerated),
 *    it is undone and the state must again be the snapshot;
 *  - the kernel log must have no new report (WARNING, BUG, KASAN, lockdep...).
 * The state also holds 0000:01:00.0's driver and driver_override, and the
 * state files of pt-assign.
 *
 * Setups only build what is missing: after a point that left the snapshot
 * as it was ("warm"), the next point reuses the state, the vGPU and the
 * open VFIO fds (see vgpu_a_setup() and vfio_setup()). A second netlink
 * socket, subscribed to the family's monitor group for the whole run,
 * makes every notification real (and so swept) inside the mutating paths;
 * it is drained at each point, and an overflow fails the path.
 *
 * A path with steps (pt-assign) is swept for step k = 1, 2, ...: point n
 * of step k injects the n-th allocation of the k-th counted sysfs write of
 * pt_assign(); a step is done when its write runs untouched, the path when
 * a run has no step k.
 * Leaks are checked by the caller (selftests/debug/fail-nth.sh) with
 * kmemleak after each path. Prints KTAP, one test per path, with the number
 * of injection points swept; exits 1 if any path failed.
 */
#include <ctype.h>
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <sys/eventfd.h>
#include <time.h>

#include "gpuvirt_test.h"
#include "gv_nl.h"
#include "vgpu_client.h"
#include "../../user/pt.h"

#define SIM_NEW		GV_SIM_BUS "/new_device"
#define SIM_DEL		GV_SIM_BUS "/del_device"
#define SIM0		GV_SIM_BUS "/devices/sim0"
#define MIG_MODE	SIM0 "/gpu/gpuvirt/mig_mode"
#define PF0		SIM0 "/gpu"
#define VGPU_MODEL	PF0 "/gpuvirt/vgpu_model"
#define NUMVFS		PF0 "/sriov_numvfs"
#define VF1_TYPE	"/sys/bus/pci/devices/8000:00:00.1/gpuvirt/current_vgpu_type"
#define TYPES		"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types"
#define VGPU_TYPE	"gpuvirt_sim-H200-35C"
#define UUID_A		"fa11f417-0000-4000-8000-00000000000a"
#define UUID_B		"fa11f417-0000-4000-8000-00000000000b"
#define SNAP_MAX	65536
#define PT_BDF		"0000:01:00.0"
#define PT_DEV		"/sys/bus/pci/devices/" PT_BDF

static int fail_fd = -1;
static int kmsg_fd = -1;
static int max_nth = 5000;
static bool dry;	/* -n: no injection, each path once (plumbing check) */
static int budget_s;	/* -t: time bound of one path, 0 = none */
static bool last_partial;
static int only_point;	/* -p: sweep this point alone, with a stack dump */
static int sample_k = 1;	/* -K K:R: the points n with n % K == R only */
static int sample_r;
static struct nl nl;
static struct nl mon;	/* subscribed to the monitor group, drained at each point */
static int gi_id = -1;
/*
 * The previous point of this path left the state exactly as its setup made
 * it (the snapshots matched): a setup may then skip what only rebuilds that
 * state, and re-establish only what the snapshot does not see.
 */
static bool warm;
/*
 * Paths with steps (pt-assign): the step whose write is armed, and whether
 * the last run of the op got that far; -k picks one step.
 */
static unsigned long cur_step = 1;
static bool step_absent;
static unsigned long only_step;

/* ---- fail-nth ---- */

static void arm(int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (dry)
		return;
	if (pwrite(fail_fd, buf, len, 0) != len) {
		perror("fail-nth write");
		exit(2);
	}
}

/* Disarm; true when the armed fault was injected. */
static bool disarm(void)
{
	char buf[16] = "";

	if (dry)
		return false;
	if (pread(fail_fd, buf, sizeof(buf) - 1, 0) <= 0) {
		perror("fail-nth read");
		exit(2);
	}
	if (pwrite(fail_fd, "0", 1, 0) != 1) {
		perror("fail-nth write");
		exit(2);
	}
	return atoi(buf) == 0;
}

static int setup_fault_attrs(void)
{
	static const char *const files[][2] = {
		{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/failslab/verbose", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
	};
	char path[64];
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (gv_write(files[i][0], files[i][1])) {
			printf("# cannot write %s: %s\n", files[i][0], strerror(errno));
			return -1;
		}
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	fail_fd = open(path, O_RDWR | O_CLOEXEC);
	if (fail_fd < 0) {
		printf("# cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- kernel log ---- */

static const char *const reports[] = {
	"WARNING:", "BUG:", "kernel BUG at", "Oops", "KASAN", "UBSAN",
	"possible circular locking", "possible recursive locking",
	"inconsistent lock state", "suspicious RCU usage",
	"possible irq lock inversion", "bad unlock balance",
	"trying to register non-static key", "general protection fault",
	"refcount_t: ", "list_add corruption", "list_del corruption",
	"Kernel panic",
};

/* Read what the kernel logged since the last call; count its reports. */
static int kmsg_reports(void)
{
	char rec[8192];
	int found = 0;
	ssize_t n;
	size_t i;

	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		for (i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
			if (strstr(rec, reports[i])) {
				char *msg = strchr(rec, ';');

				printf("#   kernel: %.200s", msg ? msg + 1 : rec);
				found++;
				break;
			}
	}
	return found;
}

/* ---- state ---- */

static size_t snap_add(char *buf, size_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (off >= SNAP_MAX)
		return off;
	va_start(ap, fmt);
	n = vsnprintf(buf + off, SNAP_MAX - off, fmt, ap);
	va_end(ap);
	return n < 0 ? off : off + n;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entries of a directory, one line each, with their contents if @read. */
static size_t snap_dir(char *buf, size_t off, const char *dir, const char *file)
{
	char *names[512], path[512], val[256];
	struct dirent *de;
	int i, n = 0, len;
	DIR *d = opendir(dir);

	if (!d)
		return snap_add(buf, off, "%s: absent\n", dir);
	while ((de = readdir(d)) && n < 512) {
		if (de->d_name[0] == '.')
			continue;
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++) {
		if (file) {
			snprintf(path, sizeof(path), "%s/%s/%s", dir, names[i], file);
			len = gv_read(path, val, sizeof(val) - 1);
			val[len > 0 ? len : 0] = '\0';
			off = snap_add(buf, off, "%s/%s: %s%s", dir, names[i], val,
				       len > 0 && val[len - 1] == '\n' ? "" : "\n");
		} else {
			off = snap_add(buf, off, "%s/%s\n", dir, names[i]);
		}
		free(names[i]);
	}
	return off;
}

static void snapshot(char *buf)
{
	static const char *const mods[] = { "gpuvirt", "gpuvirt_sim" };
	char path[128], val[64];
	struct nl probe;
	size_t off = 0, i;
	int len;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", mods[i]);
		off = snap_add(buf, off, "module %s: %s\n", mods[i],
			       gv_exists(path) ? "loaded" : "absent");
	}
	len = nl_open(&probe);
	nl_close(&probe);
	off = snap_add(buf, off, "genl family: %s\n", len ? "absent" : "present");
	off = snap_dir(buf, off, GV_SIM_BUS "/devices", NULL);
	off = snap_dir(buf, off, "/sys/class/mdev_bus", NULL);
	off = snap_dir(buf, off, "/sys/bus/mdev/devices", NULL);
	off = snap_dir(buf, off, TYPES, "available_instances");
	off = snap_dir(buf, off, GV_DEBUGFS "/gpus", NULL);
	off = snap_dir(buf, off, GV_DEBUGFS "/gpus/sim0/gis", NULL);
	len = gv_read(MIG_MODE, val, sizeof(val) - 1);
	val[len > 0 ? len : 0] = '\0';
	off = snap_add(buf, off, "mig_mode: %s\n", len > 0 ? val : "absent");
	/* SR-IOV: the vGPU model, the VFs and the first VF's type */
	len = gv_read(VGPU_MODEL, val, sizeof(val) - 1);
	val[len > 0 ? len : 0] = '\0';
	off = snap_add(buf, off, "vgpu_model: %s\n", len > 0 ? val : "absent");
	len = gv_read(NUMVFS, val, sizeof(val) - 1);
	val[len > 0 ? len : 0] = '\0';
	off = snap_add(buf, off, "sriov_numvfs: %s\n", len > 0 ? val : "absent");
	len = gv_read(VF1_TYPE, val, sizeof(val) - 1);
	val[len > 0 ? len : 0] = '\0';
	off = snap_add(buf, off, "vf1 type: %s\n", len > 0 ? val : "absent");
	/* the passthrough device: its driver, its override, pt-assign's state files */
	if (gv_exists(PT_DEV)) {
		pt_driver_of("", PT_BDF, val, sizeof(val));
		off = snap_add(buf, off, PT_BDF " driver: %s\n", val[0] ? val : "none");
		len = gv_read(PT_DEV "/driver_override", val, sizeof(val) - 1);
		val[len > 0 ? len : 0] = '\0';
		off = snap_add(buf, off, PT_BDF " driver_override: %s%s", len > 0 ? val : "?\n",
			       len > 0 && val[len - 1] == '\n' ? "" : "\n");
	}
	if (getenv("GPUVIRT_PT_STATE_DIR"))
		snap_dir(buf, off, getenv("GPUVIRT_PT_STATE_DIR"), NULL);
}

/* Print the lines of @a and @b that differ. */
static void snap_diff(const char *a, const char *b)
{
	const char *p;
	char line[512];

	for (p = a; *p; ) {
		size_t l = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s\n", (int)l, p);
		if (!strstr(b, line))
			printf("#   before only: %s", line);
		p += l + (p[l] == '\n');
	}
	for (p = b; *p; ) {
		size_t l = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s\n", (int)l, p);
		if (!strstr(a, line))
			printf("#   after only:  %s", line);
		p += l + (p[l] == '\n');
	}
}

/* ---- helpers of the paths ---- */

static int must(int err, const char *what)
{
	if (err)
		printf("# setup: %s: %s\n", what, strerror(-err));
	return err;
}

static int load(const struct gv_module *m)
{
	int err;

	if (gv_module_loaded(m))
		return 0;	/* without gv_module_load()'s modprobe of the deps */
	err = gv_module_load(m);

	return err == -EEXIST ? 0 : err;
}

static int unload(const struct gv_module *m)
{
	return gv_module_loaded(m) ? gv_module_unload(m) : 0;
}

/* A write of @s to @path with fail-nth armed around the write() alone. */
static int armed_write(const char *path, const char *s, int n, bool *inj)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;
	ssize_t w;

	if (fd < 0)
		return -errno;
	arm(n);
	w = write(fd, s, strlen(s));
	ret = w < 0 ? -errno : 0;
	*inj = disarm();
	close(fd);
	return ret;
}

/*
 * The monitor socket: subscribed to the family's multicast group while the
 * family exists, so that every notification is allocated and sent (and so
 * swept) inside the mutating paths; drained at every point, never full.
 */
static long mon_msgs, mon_lost;

static void mon_close(void)
{
	nl_close(&mon);
}

static void mon_up(void)
{
	int grp, sz = 4 << 20;

	if (mon.sk || !gv_module_loaded(GV_CORE))
		return;
	if (nl_open(&mon) || !mon.monitor_grp) {
		nl_close(&mon);
		return;
	}
	grp = mon.monitor_grp;
	if (mnl_socket_setsockopt(mon.sk, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp))) {
		printf("# monitor: cannot join the group: %s\n", strerror(errno));
		nl_close(&mon);
		return;
	}
	setsockopt(mnl_socket_get_fd(mon.sk), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
}

static void mon_drain(void)
{
	ssize_t n;

	while (mon.sk) {
		n = recv(mnl_socket_get_fd(mon.sk), mon.buf, sizeof(mon.buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			mon_lost++;
			continue;
		}
		if (n <= 0)
			break;
		mon_msgs++;
	}
}

static int sim_up(void)
{
	char path[128];

	if (must(load(GV_CORE), "load gpuvirt") || must(load(GV_SIM), "load gpuvirt_sim"))
		return -1;
	snprintf(path, sizeof(path), SIM0);
	if (!gv_exists(path) && must(gv_write(SIM_NEW, "0 h200-141gb"), "add sim0"))
		return -1;
	if (nl.sk)
		return 0;
	return must(nl_open(&nl), "open netlink") ? -1 : 0;
}

/*
 * Drop what is queued on the request socket: after a request that failed
 * with ENOBUFS its reply or ack may still come, and would be taken for the
 * answer of the next request (whose nl_talk() then fails on the sequence
 * number, and an undo silently does nothing).
 */
static void nl_drain(void)
{
	while (nl.sk && (recv(mnl_socket_get_fd(nl.sk), nl.buf, sizeof(nl.buf),
			      MSG_DONTWAIT) >= 0 || errno == ENOBUFS))
		;
}

/* A genl request with fail-nth armed around sendmsg() alone. */
static int armed_nl(struct nlmsghdr *nlh, mnl_cb_t cb, void *data, int n, bool *inj)
{
	struct nl_ctx ctx = { &nl, cb, data };
	int ret;

	ctl_cbs[NLMSG_ERROR] = ctl_err_cb;
	ctl_cbs[NLMSG_DONE] = ctl_done_cb;
	nl.ext_msg[0] = '\0';
	nl_drain();
	arm(n);
	ret = mnl_socket_sendto(nl.sk, nlh, nlh->nlmsg_len);
	*inj = disarm();
	if (ret < 0)
		return -errno;
	for (;;) {
		ret = mnl_socket_recvfrom(nl.sk, nl.buf, sizeof(nl.buf));
		if (ret < 0)
			return -errno;
		errno = 0;
		ret = mnl_cb_run2(nl.buf, ret, nlh->nlmsg_seq, nl.portid,
				  data_cb, &ctx, ctl_cbs, NLMSG_MIN_TYPE);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret == MNL_CB_ERROR ? -errno : 0;
}

static int gi_id_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == GPUVIRT_A_GI_ID)
		*(int *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int gi_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, gi_id_cb, data);
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(*(int *)data)++;
	return MNL_CB_OK;
}

static int gi_del(int id)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_DEL, 0);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_ID, id);
	return nl_talk(&nl, nlh, NULL, NULL);
}

/* Collect the ids of a gi-get dump. */
static int gi_ids_cb(const struct nlmsghdr *nlh, void *data)
{
	int *ids = data, id = -1;

	mnl_attr_parse(nlh, GENL_HDRLEN, gi_id_cb, &id);
	if (id >= 0 && id < 32)
		ids[id] = 1;
	return MNL_CB_OK;
}

/*
 * The GIs of sim0, all deleted. Asked over netlink: a GI whose debugfs
 * directory could not be made (a tolerated failure) is not in debugfs.
 */
static void gi_del_all(void)
{
	int ids[32] = { 0 }, i;
	char buf[512];
	struct nlmsghdr *nlh;

	if (!nl.sk && nl_open(&nl))
		return;
	nl_drain();
	nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	if (nl_talk(&nl, nlh, gi_ids_cb, ids)) {
		printf("# gi-get dump to delete the GIs: %s\n", strerror(errno));
		return;
	}
	for (i = 0; i < 32; i++)
		if (ids[i])
			gi_del(i);
}

/* ---- the paths ---- */

struct path {
	const char *name;
	const char *what;
	int (*setup)(void);			/* the starting state; 0 or -1 */
	int (*op)(int n, bool *injected);	/* 0 or -errno */
	int (*undo)(void);			/* after a successful op */
	void (*teardown)(void);
	int also_ok;				/* an errno besides ENOMEM/ENOBUFS */
	bool stepped;				/* swept step by step (cur_step) */
};

/* modload-core: insmod gpuvirt.ko (vfio and mdev loaded). */
static int modload_core_setup(void)
{
	static bool deps;

	nl_close(&nl);
	mon_close();	/* the family goes with gpuvirt */
	if (must(unload(GV_VFIO_PCI), "unload gpuvirt_vfio_pci") ||
	    must(unload(GV_SIM), "unload gpuvirt_sim") ||
	    must(unload(GV_CORE), "unload gpuvirt"))
		return -1;
	if (!deps && system("modprobe -qa vfio mdev vfio_iommu_type1"))
		return -1;
	deps = true;
	return 0;
}

static int modload(const struct gv_module *m, int n, bool *inj)
{
	char path[PATH_MAX];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", getenv("GPUVIRT_KO_DIR"), m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	arm(n);
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	*inj = disarm();
	close(fd);
	return ret;
}

static int modload_core_op(int n, bool *inj)
{
	return modload(GV_CORE, n, inj);
}

static int modload_core_undo(void)
{
	mon_close();
	return gv_module_unload(GV_CORE);
}

/* modload-sim: insmod gpuvirt_sim.ko with gpuvirt loaded. */
static int modload_sim_setup(void)
{
	nl_close(&nl);
	if (must(unload(GV_VFIO_PCI), "unload gpuvirt_vfio_pci") ||
	    must(unload(GV_SIM), "unload gpuvirt_sim"))
		return -1;
	return must(load(GV_CORE), "load gpuvirt");
}

static int modload_sim_op(int n, bool *inj)
{
	return modload(GV_SIM, n, inj);
}

static int modload_sim_undo(void)
{
	return gv_module_unload(GV_SIM);
}

/* sim-add: echo "0 h200-141gb" > new_device. */
static int sim_add_setup(void)
{
	nl_close(&nl);
	if (must(load(GV_CORE), "load gpuvirt") || must(load(GV_SIM), "load gpuvirt_sim"))
		return -1;
	if (gv_exists(SIM0) && must(gv_write(SIM_DEL, "0"), "del sim0"))
		return -1;
	return 0;
}

static int sim_add_op(int n, bool *inj)
{
	return armed_write(SIM_NEW, "0 h200-141gb", n, inj);
}

static int sim_add_undo(void)
{
	return gv_write(SIM_DEL, "0");
}

/* sim-del: echo 0 > del_device (sim0 with one vGPU is not allowed; idle). */
static int sim_del_setup(void)
{
	return sim_add_setup() ?: must(gv_write(SIM_NEW, "0 h200-141gb"), "add sim0");
}

static int sim_del_op(int n, bool *inj)
{
	return armed_write(SIM_DEL, "0", n, inj);
}

static int sim_del_undo(void)
{
	return gv_write(SIM_NEW, "0 h200-141gb");
}

/* sim0 up, without our vGPUs; its mode as it is. */
static void vfio_teardown(void);

/* Back to the mdev vGPU model: no VF type, no VFs. */
static int sriov_off(void)
{
	char val[16] = "";

	if (gv_read(VGPU_MODEL, val, sizeof(val) - 1) <= 0 || strncmp(val, "sriov", 5))
		return 0;
	if (gv_exists(VF1_TYPE))
		gv_write(VF1_TYPE, "0");
	if (must(gv_write(NUMVFS, "0"), "sriov_numvfs 0"))
		return -1;
	return must(gv_write(VGPU_MODEL, "mdev"), "vgpu_model mdev");
}

static int base_setup(void)
{
	vfio_teardown();
	if (sim_up() || sriov_off())
		return -1;
	if (gv_exists(VGPU_MDEVS "/" UUID_B))
		gv_write(VGPU_MDEVS "/" UUID_B "/remove", "1");
	if (gv_exists(VGPU_MDEVS "/" UUID_A))
		gv_write(VGPU_MDEVS "/" UUID_A "/remove", "1");
	return 0;
}

static bool mig_on(void)
{
	char val[8] = "";

	return gv_read(MIG_MODE, val, sizeof(val) - 1) > 0 && val[0] == '1';
}

/* vgpu-create: echo UUID > mdev_supported_types/<type>/create. */
static int vgpu_setup(void)
{
	if (base_setup())
		return -1;
	if (mig_on()) {
		gi_del_all();
		return must(gv_write(MIG_MODE, "0"), "mig_mode 0");
	}
	return 0;
}

static int vgpu_create_op(int n, bool *inj)
{
	return armed_write(TYPES "/" VGPU_TYPE "/create", UUID_A, n, inj);
}

static int vgpu_create_undo(void)
{
	return gv_write(VGPU_MDEVS "/" UUID_A "/remove", "1");
}

/*
 * sim0 timesliced with vGPU A and without B, each piece made only where it
 * is missing: a point that left the state as it found it costs nothing
 * here. The VFIO user of A stays open unless MIG mode has to go.
 */
static int vgpu_a_setup(void)
{
	if (sim_up())
		return -1;
	if (gv_exists(VGPU_MDEVS "/" UUID_B))
		gv_write(VGPU_MDEVS "/" UUID_B "/remove", "1");
	if (mig_on()) {
		vfio_teardown();
		if (gv_exists(VGPU_MDEVS "/" UUID_A))
			gv_write(VGPU_MDEVS "/" UUID_A "/remove", "1");
		gi_del_all();
		if (must(gv_write(MIG_MODE, "0"), "mig_mode 0"))
			return -1;
	}
	if (gv_exists(VGPU_MDEVS "/" UUID_A))
		return 0;
	return must(gv_write(TYPES "/" VGPU_TYPE "/create", UUID_A), "create vGPU");
}

/* vgpu-remove: echo 1 > /sys/bus/mdev/devices/UUID/remove. */
static int vgpu_remove_setup(void)
{
	vfio_teardown();
	return vgpu_a_setup();
}

static int vgpu_remove_op(int n, bool *inj)
{
	return armed_write(VGPU_MDEVS "/" UUID_A "/remove", "1", n, inj);
}

static int vgpu_remove_undo(void)
{
	return gv_write(TYPES "/" VGPU_TYPE "/create", UUID_A);
}

/*
 * The VFIO paths: vgpu-open is VFIO_GROUP_GET_DEVICE_FD on a vGPU whose
 * group is set up (the VMM's open); the vfio-* paths are one ioctl or
 * access each on the open device fd. The container, group and device fds
 * stay open from point to point; only what a point changed is redone.
 */
static struct vfio_user vu = { -1, -1, -1 };
static int efd = -1;
static bool vfio_mods;

static void vfio_teardown(void)
{
	vgpu_client_close(&vu);
	if (efd >= 0)
		close(efd);
	efd = -1;
}

/* vGPU A's group open and set up; its device fd open if @device, else closed. */
static int vfio_setup(bool device)
{
	if (vgpu_a_setup())
		return -1;
	if (vu.group < 0) {
		vfio_teardown();
		if (!vfio_mods && system("modprobe -q vfio_iommu_type1"))
			return -1;
		vfio_mods = true;
		if (must(vgpu_client_open(&vu, UUID_A), "open the vGPU"))
			return -1;
	}
	if (device && vu.device < 0) {
		vu.device = ioctl(vu.group, VFIO_GROUP_GET_DEVICE_FD, UUID_A);
		if (vu.device < 0) {
			printf("# setup: device fd: %s\n", strerror(errno));
			return -1;
		}
	} else if (!device && vu.device >= 0) {
		close(vu.device);
		vu.device = -1;
	}
	if (efd < 0)
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return efd < 0 ? -1 : 0;
}

static int vgpu_open_setup(void)
{
	return vfio_setup(false);
}

static int vgpu_open_op(int n, bool *inj)
{
	int fd;

	arm(n);
	fd = ioctl(vu.group, VFIO_GROUP_GET_DEVICE_FD, UUID_A);
	*inj = disarm();
	if (fd < 0)
		return -errno;
	vu.device = fd;
	return 0;
}

static int vgpu_open_undo(void)
{
	close(vu.device);
	vu.device = -1;
	return 0;
}

static int vfio_dev_setup(void)
{
	return vfio_setup(true);
}

/* An ioctl of the device fd with fail-nth armed around it alone. */
static int armed_ioctl(unsigned long req, void *arg, int n, bool *inj)
{
	int ret;

	arm(n);
	ret = ioctl(vu.device, req, arg) ? -errno : 0;
	*inj = disarm();
	return ret;
}

/*
 * vfio-close: close() of the device fd, the VMM's last close (the vGPU's
 * close op: scheduler detach, triggers dropped). close() cannot fail; the
 * undo opens the device again, and a point where that fails is a failure.
 */
static int vfio_close_op(int n, bool *inj)
{
	int ret;

	arm(n);
	ret = close(vu.device) ? -errno : 0;
	*inj = disarm();
	vu.device = -1;
	return ret;
}

static int vfio_close_undo(void)
{
	vu.device = ioctl(vu.group, VFIO_GROUP_GET_DEVICE_FD, UUID_A);
	if (vu.device < 0) {
		printf("# vfio-close: the device cannot be opened again: %s\n",
		       strerror(errno));
		return -1;
	}
	return 0;
}

/* vfio-get-info: VFIO_DEVICE_GET_INFO. */
static int vfio_info_op(int n, bool *inj)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };

	return armed_ioctl(VFIO_DEVICE_GET_INFO, &info, n, inj);
}

/*
 * vfio-region-info: VFIO_DEVICE_GET_REGION_INFO of every region index the
 * device reports, and again with room for the capability chain where a
 * region has one (BAR2's sparse mmap), all in one armed window.
 */
static unsigned int vfio_nregions = VFIO_PCI_NUM_REGIONS;
static unsigned int vfio_nirqs = VFIO_PCI_NUM_IRQS;

static int vfio_count_setup(void)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };

	if (vfio_dev_setup())
		return -1;
	if (ioctl(vu.device, VFIO_DEVICE_GET_INFO, &info)) {
		printf("# setup: VFIO_DEVICE_GET_INFO: %s\n", strerror(errno));
		return -1;
	}
	vfio_nregions = info.num_regions;
	vfio_nirqs = info.num_irqs;
	return 0;
}

static int vfio_region_info_op(int n, bool *inj)
{
	char buf[sizeof(struct vfio_region_info) + 256];
	struct vfio_region_info *info = (struct vfio_region_info *)buf;
	unsigned int i;
	int ret = 0;

	arm(n);
	for (i = 0; i < vfio_nregions && !ret; i++) {
		memset(buf, 0, sizeof(buf));
		info->argsz = sizeof(*info);
		info->index = i;
		ret = ioctl(vu.device, VFIO_DEVICE_GET_REGION_INFO, info) ? -errno : 0;
		if (ret || !(info->flags & VFIO_REGION_INFO_FLAG_CAPS) ||
		    info->argsz <= sizeof(*info))
			continue;
		if (info->argsz > sizeof(buf)) {
			ret = -E2BIG;
			break;
		}
		info->index = i;
		ret = ioctl(vu.device, VFIO_DEVICE_GET_REGION_INFO, info) ? -errno : 0;
		if (!ret && !info->cap_offset)
			ret = -EPROTO;	/* room given, chain not returned */
	}
	*inj = disarm();
	return ret;
}

/* vfio-irq-info: VFIO_DEVICE_GET_IRQ_INFO of every index. */
static int vfio_irq_info_op(int n, bool *inj)
{
	struct vfio_irq_info info;
	unsigned int i;
	int ret = 0;

	arm(n);
	for (i = 0; i < vfio_nirqs && !ret; i++) {
		info = (struct vfio_irq_info){ .argsz = sizeof(info), .index = i };
		ret = ioctl(vu.device, VFIO_DEVICE_GET_IRQ_INFO, &info) ? -errno : 0;
	}
	*inj = disarm();
	return ret;
}

/*
 * VFIO_DEVICE_SET_IRQS: @flags on @index, @count vectors, with an eventfd
 * (DATA_EVENTFD) or nothing; armed if @n.
 */
static int irq_set(unsigned int index, unsigned int flags, unsigned int count,
		   int n, bool *inj)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *irq = (struct vfio_irq_set *)buf;
	bool fd = (flags & VFIO_IRQ_SET_DATA_TYPE_MASK) == VFIO_IRQ_SET_DATA_EVENTFD;
	int ret;

	irq->argsz = sizeof(*irq) + (fd ? sizeof(int32_t) : 0);
	irq->flags = flags;
	irq->index = index;
	irq->start = 0;
	irq->count = count;
	memcpy(irq->data, &efd, sizeof(efd));
	if (!n)
		return ioctl(vu.device, VFIO_DEVICE_SET_IRQS, irq) ? -errno : 0;
	arm(n);
	ret = ioctl(vu.device, VFIO_DEVICE_SET_IRQS, irq) ? -errno : 0;
	*inj = disarm();
	return ret;
}

#define IRQ_EVENTFD	(VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER)
#define IRQ_DISABLE	(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER)
#define IRQ_MASK	(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_MASK)
#define IRQ_UNMASK	(VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK)

/* vfio-set-irqs[-intx|-req]: an eventfd as the trigger of one index. */
static int set_irqs_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_MSI_IRQ_INDEX, IRQ_EVENTFD, 1, n, inj);
}

static int set_irqs_undo(void)
{
	return irq_set(VFIO_PCI_MSI_IRQ_INDEX, IRQ_DISABLE, 0, 0, NULL);
}

static int set_intx_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_INTX_IRQ_INDEX, IRQ_EVENTFD, 1, n, inj);
}

static int set_intx_undo(void)
{
	return irq_set(VFIO_PCI_INTX_IRQ_INDEX, IRQ_DISABLE, 0, 0, NULL);
}

static int set_req_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_REQ_IRQ_INDEX, IRQ_EVENTFD, 1, n, inj);
}

static int set_req_undo(void)
{
	return irq_set(VFIO_PCI_REQ_IRQ_INDEX, IRQ_DISABLE, 0, 0, NULL);
}

/* The device open with an eventfd on MSI, or on INTx (masked if @mask). */
static int msi_setup(void)
{
	return vfio_dev_setup() ?:
	       must(irq_set(VFIO_PCI_MSI_IRQ_INDEX, IRQ_EVENTFD, 1, 0, NULL), "MSI eventfd");
}

static int intx_setup(bool mask)
{
	if (vfio_dev_setup() ||
	    must(irq_set(VFIO_PCI_INTX_IRQ_INDEX, IRQ_EVENTFD, 1, 0, NULL), "INTx eventfd"))
		return -1;
	return must(irq_set(VFIO_PCI_INTX_IRQ_INDEX, mask ? IRQ_MASK : IRQ_UNMASK, 1, 0,
			    NULL), "INTx mask");
}

static int intx_unmasked_setup(void)
{
	return intx_setup(false);
}

static int intx_masked_setup(void)
{
	return intx_setup(true);
}

/* vfio-irq-disable: DATA_NONE, count 0 on MSI drops its eventfd. */
static int irq_disable_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_MSI_IRQ_INDEX, IRQ_DISABLE, 0, n, inj);
}

/* vfio-irq-signal: DATA_NONE, count 1 on MSI signals its eventfd. */
static int irq_signal_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_MSI_IRQ_INDEX, IRQ_DISABLE, 1, n, inj);
}

static int irq_signal_undo(void)
{
	uint64_t v;

	return read(efd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

/* vfio-irq-mask, vfio-irq-unmask: INTx, the only maskable index. */
static int irq_mask_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_INTX_IRQ_INDEX, IRQ_MASK, 1, n, inj);
}

static int irq_unmask_op(int n, bool *inj)
{
	return irq_set(VFIO_PCI_INTX_IRQ_INDEX, IRQ_UNMASK, 1, n, inj);
}

/* vfio-reset: VFIO_DEVICE_RESET. */
static int vfio_reset_op(int n, bool *inj)
{
	return armed_ioctl(VFIO_DEVICE_RESET, NULL, n, inj);
}

/*
 * vfio-cfg-rw: read all of config space, then write the command register
 * back as read (Memory Space stays on), in one armed window.
 */
static int vfio_cfg_op(int n, bool *inj)
{
	uint8_t cfg[256];
	ssize_t r, w = 2;

	arm(n);
	r = pread(vu.device, cfg, sizeof(cfg), VGPU_REGION(VFIO_PCI_CONFIG_REGION_INDEX));
	if (r == (ssize_t)sizeof(cfg))
		w = pwrite(vu.device, cfg + 4, 2, VGPU_REGION(VFIO_PCI_CONFIG_REGION_INDEX) + 4);
	*inj = disarm();
	if (r < 0 || w < 0)
		return -errno;
	return r == (ssize_t)sizeof(cfg) && w == 2 ? 0 : -EIO;
}

/*
 * vfio-bar0-submit: a NOP at the start of a 4 KiB ring at slice offset 0
 * (written through BAR2 by the setup), and the armed doorbell: the BAR0
 * write of RING_TAIL that hands it to the engine. The op then waits for
 * the engine, unarmed; an engine error is a failure.
 */
#define RING_BYTES	4096u

static int bar0_setup(void)
{
	uint32_t nop = GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_NOP, 1, 0);

	if (vfio_dev_setup())
		return -1;
	/* the ring registers take effect while idle: HEAD and TAIL go to 0 */
	if (must(vgpu_reg_write(vu.device, GPUVIRT_VGPU_REG_RING_SIZE, 0), "ring off") ||
	    must(vgpu_reg_write(vu.device, GPUVIRT_VGPU_REG_RING_BASE_LO, 0), "ring base") ||
	    must(vgpu_reg_write(vu.device, GPUVIRT_VGPU_REG_RING_BASE_HI, 0), "ring base") ||
	    must(vgpu_reg_write(vu.device, GPUVIRT_VGPU_REG_RING_SIZE, RING_BYTES), "ring size"))
		return -1;
	if (pwrite(vu.device, &nop, 4, VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX)) != 4) {
		printf("# setup: NOP into VRAM: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int bar0_submit_op(int n, bool *inj)
{
	uint32_t st = 0, tail = 4;
	ssize_t w;
	int ms;

	arm(n);
	w = pwrite(vu.device, &tail, 4,
		   VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX) + GPUVIRT_VGPU_REG_RING_TAIL);
	*inj = disarm();
	if (w != 4)
		return w < 0 ? -errno : -EIO;
	for (ms = 0; ms < 5000; ms += 10) {
		if (vgpu_reg_read(vu.device, GPUVIRT_VGPU_REG_STATUS, &st))
			return -EIO;
		if (!(st & GPUVIRT_VGPU_STATUS_BUSY))
			break;
		usleep(10000);
	}
	if (st & (GPUVIRT_VGPU_STATUS_BUSY | GPUVIRT_VGPU_STATUS_ERROR)) {
		printf("# vfio-bar0-submit: engine status %#x after the doorbell\n", st);
		return -EIO;
	}
	return 0;
}

/*
 * vfio-mmap: mmap of BAR2 (the VRAM slice) and a store to one page of it,
 * in one armed window: the fault handler backs the page (the backend's
 * allocation) and inserts it. Every point touches a page not touched
 * before, so every point takes the allocating path. A backing that cannot
 * be allocated is the user's SIGBUS by design (gpuvirt_vgpu_vm_fault()):
 * the op says -EFAULT for it, an accepted outcome of this path.
 */
#define MMAP_LEN	(8u << 20)
static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_armed)
		siglongjmp(bus_jmp, 1);
	_exit(3);
}

static int mmap_setup(void)
{
	static bool handler;
	struct sigaction sa = { .sa_handler = on_sigbus };

	if (!handler && sigaction(SIGBUS, &sa, NULL))
		return -1;
	handler = true;
	return vfio_dev_setup();
}

static int mmap_touch_op(int n, bool *inj)
{
	volatile uint8_t *map;
	size_t page = (16 + (size_t)n) % (MMAP_LEN / 4096);
	volatile int ret = 0;

	arm(n);
	map = mmap(NULL, MMAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, vu.device,
		   VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	if (map == MAP_FAILED) {
		ret = -errno;
		*inj = disarm();
		return ret;
	}
	if (sigsetjmp(bus_jmp, 1) == 0) {
		bus_armed = 1;
		map[page * 4096] = 0xa5;
	} else {
		ret = -EFAULT;
	}
	bus_armed = 0;
	*inj = disarm();
	munmap((void *)map, MMAP_LEN);
	return ret;
}

/* mig-enable: echo 1 > .../gpuvirt/mig_mode. */
static int mig_enable_setup(void)
{
	if (warm)
		return 0;
	if (vgpu_setup())
		return -1;
	gi_del_all();
	return must(gv_write(MIG_MODE, "0"), "mig_mode 0");
}

static int mig_enable_op(int n, bool *inj)
{
	return armed_write(MIG_MODE, "1", n, inj);
}

static int mig_enable_undo(void)
{
	return gv_write(MIG_MODE, "0");
}

/* gi-new: netlink gi-new 3g.71gb on sim0 in MIG mode. */
static int gi_setup(void)
{
	if (warm)
		return 0;
	if (base_setup())
		return -1;
	gi_del_all();
	return mig_on() ? 0 : must(gv_write(MIG_MODE, "1"), "mig_mode 1");
}

static int gi_new_op(int n, bool *inj)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_NEW, 0);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_GI_PROFILE, "3g.71gb");
	gi_id = -1;
	return armed_nl(nlh, gi_msg_cb, &gi_id, n, inj);
}

static int gi_new_undo(void)
{
	gi_del_all();
	return 0;
}

/* gi-del: netlink gi-del of a 3g.71gb GI. */
static int gi_make(void)
{
	char buf[512];
	struct nlmsghdr *nlh;

	nl_drain();
	nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_NEW, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_GI_PROFILE, "3g.71gb");
	gi_id = -1;
	return must(nl_talk(&nl, nlh, gi_msg_cb, &gi_id), "gi-new");
}

/* Warm: the GI of the previous point is still there (the snapshots say so). */
static int gi_del_setup(void)
{
	if (warm && gi_id >= 0)
		return 0;
	warm = false;
	return gi_setup() ?: gi_make();
}

static int gi_del_op(int n, bool *inj)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_DEL, 0);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_ID, gi_id);
	return armed_nl(nlh, NULL, NULL, n, inj);
}

static int gi_del_undo(void)
{
	return gi_make();
}

/* gi-vgpu-create: a vGPU on a GI (mdev parent sim0-gi<id>). */
static char gi_type_create[256];

static int gi_vgpu_setup(void)
{
	char path[256], type[64];
	int len;

	if (gi_del_setup())
		return -1;
	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/gis/%d/info", gi_id);
	if (gv_kv(path, "vgpu_type", type, sizeof(type))) {
		printf("# setup: no vgpu_type in %s\n", path);
		return -1;
	}
	len = snprintf(gi_type_create, sizeof(gi_type_create),
		       "/sys/class/mdev_bus/sim0-gi%d/mdev_supported_types/gpuvirt_gi-%s/create",
		       gi_id, type);
	return len < (int)sizeof(gi_type_create) ? 0 : -1;
}

static int gi_vgpu_op(int n, bool *inj)
{
	return armed_write(gi_type_create, UUID_B, n, inj);
}

static int gi_vgpu_undo(void)
{
	return gv_write(VGPU_MDEVS "/" UUID_B "/remove", "1");
}

/*
 * gpu-mig-vgpu-create: mdev create of a MIG-backed type on the GPU's own
 * PCI parent, which places the vGPU on the GI (mdev.c).
 */
static int gpu_mig_vgpu_setup(void)
{
	if (gi_del_setup())
		return -1;
	if (gv_exists(VGPU_MDEVS "/" UUID_B))
		gv_write(VGPU_MDEVS "/" UUID_B "/remove", "1");
	return 0;
}

static int gpu_mig_vgpu_op(int n, bool *inj)
{
	return armed_write(TYPES "/gpuvirt_sim-H200-3-71C/create", UUID_B, n, inj);
}

/* sriov-enable and vf-type: the sriov vGPU model (sriov.c) */
static int sriov_setup(void)
{
	if (base_setup())
		return -1;
	if (mig_on()) {
		gi_del_all();
		if (must(gv_write(MIG_MODE, "0"), "mig_mode 0"))
			return -1;
	}
	return must(gv_write(VGPU_MODEL, "sriov"), "vgpu_model sriov");
}

static int sriov_enable_op(int n, bool *inj)
{
	return armed_write(NUMVFS, "2", n, inj);
}

static int sriov_enable_undo(void)
{
	return gv_write(NUMVFS, "0");
}

static int vf_type_setup(void)
{
	if (sriov_setup())
		return -1;
	return must(gv_write(NUMVFS, "1"), "sriov_numvfs 1");
}

/* type 3 is H200-35C, the GPU's third time-sliced type */
static int vf_type_op(int n, bool *inj)
{
	return armed_write(VF1_TYPE, "3", n, inj);
}

static int vf_type_undo(void)
{
	return gv_write(VF1_TYPE, "0");
}

/* mig-disable (netlink gpu-set mode timesliced) from MIG mode. */
static int gpu_set_mode(int mode, int n, bool *inj)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GPU_SET, 0);

	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_MODE, mode);
	return armed_nl(nlh, NULL, NULL, n, inj);
}

static int nl_mig_off_setup(void)
{
	return gi_setup();
}

static int nl_mig_off_op(int n, bool *inj)
{
	return gpu_set_mode(GPUVIRT_GPU_MODE_TIMESLICED, n, inj);
}

static int nl_mig_off_undo(void)
{
	return gv_write(MIG_MODE, "1");
}

/* sched-set: policy equal-share, timeslice 2000 us; undone to the defaults read back. */
static int nl_sched_setup(void)
{
	return mig_enable_setup();
}

static int sched_set(int policy, int n, bool *inj)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_SCHED_SET, 0);

	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_POLICY, policy);
	return armed_nl(nlh, NULL, NULL, n, inj);
}

static int nl_sched_op(int n, bool *inj)
{
	return sched_set(GPUVIRT_SCHED_POLICY_EQUAL_SHARE, n, inj);
}

static int nl_sched_undo(void)
{
	bool inj;

	return sched_set(GPUVIRT_SCHED_POLICY_BEST_EFFORT, 0, &inj);
}

/* vgpu-set: weight of a vGPU. */
static int nl_vgpu_setup(void)
{
	return vgpu_remove_setup();
}

static int vgpu_weight(int w, int n, bool *inj)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_VGPU_SET, 0);

	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, UUID_A);
	mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_WEIGHT, w);
	return armed_nl(nlh, NULL, NULL, n, inj);
}

static int nl_vgpu_op(int n, bool *inj)
{
	return vgpu_weight(300, n, inj);
}

static int nl_vgpu_undo(void)
{
	bool inj;

	return vgpu_weight(100, 0, &inj);
}

/* Dumps and gets: nothing changes; a failure must still be clean. */
static int dump_cmd;
static int dump_flags;

static int nl_dump_op(int n, bool *inj)
{
	char buf[512];
	struct nlmsghdr *nlh = genl_req(&nl, buf, nl.family, dump_cmd, dump_flags);
	int cnt = 0, ret;

	bool get = !(dump_flags & NLM_F_DUMP);

	switch (dump_cmd) {
	case GPUVIRT_CMD_GPU_GET:
		if (get)
			mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, 0);
		break;
	case GPUVIRT_CMD_TYPE_GET:
		if (get) {
			mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, 0);
			mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, "H200-35C");
		}
		break;
	case GPUVIRT_CMD_VGPU_GET:
		if (get)
			mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, UUID_A);
		break;
	case GPUVIRT_CMD_SCHED_GET:
		if (get)
			mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, 0);
		break;
	case GPUVIRT_CMD_GI_GET:
		mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
		if (get)
			mnl_attr_put_u32(nlh, GPUVIRT_A_GI_ID, gi_id);
		break;
	case GPUVIRT_CMD_PT_GET:
		mnl_attr_put_strz(nlh, GPUVIRT_A_PT_BDF, PT_BDF);
		break;
	}
	ret = armed_nl(nlh, count_cb, &cnt, n, inj);
	/* a get that answers nothing, untouched, is no answer */
	return !ret && get && !cnt && !*inj ? -ENODATA : ret;
}

/*
 * Live migration (VFIO migration v2): vfio-mig-save moves vGPU A from
 * RUNNING to STOP_COPY and reads its stream to EOF; vfio-mig-resume moves
 * it to RESUMING, writes a stream saved beforehand and takes it on
 * (RESUMING -> STOP). A refused state change leaves the device where it
 * got to; the setup brings it back to RUNNING, as a VMM's reset would.
 */
static uint8_t *mig_stream;
static size_t mig_stream_len;
static int mig_fd = -1;

static int mig_set(uint32_t state, int *data_fd)
{
	char buf[sizeof(struct vfio_device_feature) +
		 sizeof(struct vfio_device_feature_mig_state)];
	struct vfio_device_feature *f = (void *)buf;
	struct vfio_device_feature_mig_state *st = (void *)f->data;

	f->argsz = sizeof(buf);
	f->flags = VFIO_DEVICE_FEATURE_SET | VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE;
	st->device_state = state;
	st->data_fd = -1;
	if (ioctl(vu.device, VFIO_DEVICE_FEATURE, f))
		return -errno;
	if (data_fd)
		*data_fd = st->data_fd;
	else if (st->data_fd >= 0)
		close(st->data_fd);
	return 0;
}

/* Read a save fd to EOF into mig_stream (when @keep); 0 or -errno. */
static int mig_read_all(int fd, bool keep)
{
	static uint8_t junk[65536];
	size_t cap = keep ? 1u << 20 : 0;
	ssize_t n;

	if (keep) {
		free(mig_stream);
		mig_stream = malloc(cap);
		mig_stream_len = 0;
		if (!mig_stream)
			return -ENOMEM;
	}
	for (;;) {
		if (keep && cap - mig_stream_len < sizeof(junk)) {
			uint8_t *p = realloc(mig_stream, cap * 2);

			if (!p)
				return -ENOMEM;
			mig_stream = p;
			cap *= 2;
		}
		n = read(fd, keep ? mig_stream + mig_stream_len : junk, sizeof(junk));
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		if (keep)
			mig_stream_len += n;
	}
}

static void mig_teardown(void)
{
	if (mig_fd >= 0)
		close(mig_fd);
	mig_fd = -1;
	vfio_teardown();
}

static int mig_setup(void)
{
	uint8_t page[4096];
	int fd = -1;

	if (mig_fd >= 0)
		close(mig_fd);
	mig_fd = -1;
	if (vfio_dev_setup())
		return -1;
	if (mig_set(VFIO_DEVICE_STATE_RUNNING, NULL) &&
	    must(ioctl(vu.device, VFIO_DEVICE_RESET) ? -errno : 0, "reset the vGPU"))
		return -1;
	if (mig_stream)
		return 0;
	/* a stream with a page of VRAM and the device state, saved once */
	memset(page, 0x5a, sizeof(page));
	if (pwrite(vu.device, page, sizeof(page),
		   VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX) + 0x10000) != sizeof(page) ||
	    must(mig_set(VFIO_DEVICE_STATE_STOP_COPY, &fd), "enter STOP_COPY"))
		return -1;
	if (must(mig_read_all(fd, true), "save a stream")) {
		close(fd);
		return -1;
	}
	close(fd);
	return must(mig_set(VFIO_DEVICE_STATE_RUNNING, NULL), "back to RUNNING");
}

static int mig_save_op(int n, bool *inj)
{
	int ret;

	arm(n);
	ret = mig_set(VFIO_DEVICE_STATE_STOP_COPY, &mig_fd) ?:
	      mig_read_all(mig_fd, false);
	*inj = disarm();
	return ret;
}

static int mig_resume_op(int n, bool *inj)
{
	ssize_t w = 0;
	int ret;

	arm(n);
	ret = mig_set(VFIO_DEVICE_STATE_RESUMING, &mig_fd);
	if (!ret) {
		w = write(mig_fd, mig_stream, mig_stream_len);
		ret = w < 0 ? -errno : (size_t)w != mig_stream_len ? -EIO :
		      mig_set(VFIO_DEVICE_STATE_STOP, NULL);
	}
	*inj = disarm();
	return ret;
}

static int mig_undo(void)
{
	close(mig_fd);
	mig_fd = -1;
	return must(mig_set(VFIO_DEVICE_STATE_RUNNING, NULL), "back to RUNNING");
}

static int no_undo(void)
{
	return 0;
}

#define DUMP_SETUP(fn, cmd, flags, base)			\
static int fn(void)						\
{								\
	dump_cmd = cmd;						\
	dump_flags = flags;					\
	return base();						\
}
DUMP_SETUP(nl_gpu_get_setup, GPUVIRT_CMD_GPU_GET, 0, nl_vgpu_setup)
DUMP_SETUP(nl_gpu_dump_setup, GPUVIRT_CMD_GPU_GET, NLM_F_DUMP, nl_vgpu_setup)
DUMP_SETUP(nl_type_dump_setup, GPUVIRT_CMD_TYPE_GET, NLM_F_DUMP, nl_vgpu_setup)
DUMP_SETUP(nl_vgpu_dump_setup, GPUVIRT_CMD_VGPU_GET, NLM_F_DUMP, nl_vgpu_setup)
DUMP_SETUP(nl_sched_get_setup, GPUVIRT_CMD_SCHED_GET, 0, nl_vgpu_setup)
DUMP_SETUP(nl_gi_dump_setup, GPUVIRT_CMD_GI_GET, NLM_F_DUMP, gi_del_setup)
/* pt-get needs the passthrough module */
static int pt_setup(void)
{
	return nl_vgpu_setup() ?: must(load(GV_VFIO_PCI), "load gpuvirt_vfio_pci");
}
DUMP_SETUP(nl_pt_get_setup, GPUVIRT_CMD_PT_GET, 0, pt_setup)
DUMP_SETUP(nl_type_get_setup, GPUVIRT_CMD_TYPE_GET, 0, nl_vgpu_setup)
DUMP_SETUP(nl_vgpu_get_setup, GPUVIRT_CMD_VGPU_GET, 0, nl_vgpu_setup)
DUMP_SETUP(nl_sched_dump_setup, GPUVIRT_CMD_SCHED_GET, NLM_F_DUMP, nl_vgpu_setup)
DUMP_SETUP(nl_gi_get_setup, GPUVIRT_CMD_GI_GET, 0, gi_del_setup)

/*
 * pt-assign: pt_assign() of user/pt.c, as "gpuvirtctl pt assign" runs it,
 * giving 0000:01:00.0 (a bochs-display alone in its group, bound to
 * bochs-drm) to gpuvirt_vfio_pci. The path has steps: step k arms fail-nth
 * around the write() of pt_assign()'s k-th counted sysfs write alone
 * (driver_override, unbind, drivers_probe), through the step_write seam of
 * struct pt_assign_req, and is swept n = 1.. until that write runs
 * untouched; then step k + 1, until a run has no step k. pt_assign() must
 * fail (the op says ECANCELED, whatever the write's errno was: a probe that
 * fails leaves drivers_probe's write successful and the device unbound)
 * or succeed; either way the snapshot must come back: 01:00.0 on its
 * original driver with its driver_override, and no state file. A success
 * is undone with pt_release().
 */
static char pt_dir[64];
static char pt_orig[PT_NAME_LEN];
static int pt_n;
static bool pt_inj, pt_armed;

static int pt_step_write(void *data, unsigned long step, const char *path,
			 const char *val)
{
	bool inj = false;
	int ret;

	(void)data;
	if (step != cur_step)
		return gv_write(path, val);
	pt_armed = true;
	ret = armed_write(path, val, pt_n, &inj);
	pt_inj = inj;
	return ret;
}

static int pt_assign_setup(void)
{
	char drv[PT_NAME_LEN];

	if (warm)
		return 0;
	if (must(load(GV_CORE), "load gpuvirt") ||
	    must(load(GV_VFIO_PCI), "load gpuvirt_vfio_pci"))
		return -1;
	if (!pt_dir[0]) {
		snprintf(pt_dir, sizeof(pt_dir), "/tmp/gv_failnth_pt.XXXXXX");
		if (!mkdtemp(pt_dir)) {
			pt_dir[0] = '\0';
			return -1;
		}
		setenv("GPUVIRT_PT_STATE_DIR", pt_dir, 1);
		setenv("GPUVIRT_PT_UDEV_DIR", pt_dir, 1);
	}
	if (!gv_exists(PT_DEV)) {
		printf("# setup: no %s\n", PT_DEV);
		return -1;
	}
	pt_driver_of("", PT_BDF, drv, sizeof(drv));
	if (!pt_orig[0] && !drv[0]) {
		/* as booted, the display may still wait for its host driver */
		if (system("modprobe -q bochs"))
			printf("# setup: modprobe bochs failed\n");
		pt_driver_of("", PT_BDF, drv, sizeof(drv));
	}
	if (!pt_orig[0]) {
		if (!drv[0] || pt_driver_is_vfio(drv)) {
			printf("# setup: %s is on \"%s\", not on a host driver\n", PT_BDF, drv);
			return -1;
		}
		snprintf(pt_orig, sizeof(pt_orig), "%s", drv);
	}
	if (strcmp(drv, pt_orig)) {
		printf("# setup: %s is on \"%s\", not on %s\n", PT_BDF, drv, pt_orig);
		return -1;
	}
	return 0;
}

static int pt_assign_op(int n, bool *inj)
{
	struct pt_assign_req req = {
		.bdf = PT_BDF, .driver = PT_DRV_GPUVIRT,
		.step_write = pt_step_write,
	};
	struct pt_paths *paths = calloc(1, sizeof(*paths));
	struct pt_state *st = calloc(1, sizeof(*st));
	int ret;

	if (!st || !paths) {
		free(st);
		free(paths);
		return -ENOMEM;
	}
	pt_n = n;
	pt_inj = pt_armed = false;
	ret = pt_assign("", &req, st, paths);
	*inj = pt_inj;
	step_absent = !pt_armed;
	free(st);
	free(paths);
	if (ret == PT_ALREADY) {
		printf("# pt-assign: already assigned before the op\n");
		return -EALREADY;
	}
	return ret ? -ECANCELED : 0;
}

static int pt_assign_undo(void)
{
	struct pt_paths *paths = calloc(1, sizeof(*paths));
	struct pt_state *st = calloc(1, sizeof(*st));
	int ret = -1;

	if (st && paths)
		ret = pt_release("", PT_BDF, st, paths);
	free(st);
	free(paths);
	return ret;
}

static void pt_assign_teardown(void)
{
	char path[128];

	if (pt_dir[0]) {
		snprintf(path, sizeof(path), "%s/%s.state", pt_dir, PT_BDF);
		if (gv_exists(path))
			pt_assign_undo();
		rmdir(pt_dir);
	}
}

static void teardown_all(void)
{
	nl_close(&nl);
	mon_close();
	if (gv_exists(GV_SIM_BUS)) {
		gv_write(VGPU_MDEVS "/" UUID_B "/remove", "1");
		gv_write(VGPU_MDEVS "/" UUID_A "/remove", "1");
		if (gv_exists(SIM0)) {
			if (nl_open(&nl) == 0)
				gi_del_all();
			nl_close(&nl);
			gv_write(MIG_MODE, "0");
			gv_write(SIM_DEL, "0");
		}
	}
}

static const struct path paths[] = {
	/*
	 * The driver core gives EINVAL, not ENOMEM, when it cannot allocate
	 * /sys/module/<mod>/drivers while registering a driver
	 * (module_add_driver(), drivers/base/module.c); the modules' init
	 * passes it on.
	 */
	{ "modload-core", "insmod gpuvirt.ko", modload_core_setup, modload_core_op,
	  modload_core_undo, NULL, -EINVAL, false },
	{ "modload-sim", "insmod gpuvirt_sim.ko", modload_sim_setup, modload_sim_op,
	  modload_sim_undo, NULL, -EINVAL, false },
	/*
	 * When the driver core fails to bind (really_probe: driver_sysfs_add),
	 * the driver's probe never runs and new_device says ENODEV
	 * (kernel/sim/bus.c, probe_err's initial value).
	 */
	{ "sim-add", "echo '0 h200-141gb' > new_device", sim_add_setup, sim_add_op,
	  sim_add_undo, NULL, -ENODEV, false },
	{ "sim-del", "echo 0 > del_device", sim_del_setup, sim_del_op, sim_del_undo, NULL, 0, false },
	{ "vgpu-create", "mdev create " VGPU_TYPE, vgpu_setup, vgpu_create_op,
	  vgpu_create_undo, NULL, 0, false },
	{ "vgpu-remove", "mdev remove", vgpu_remove_setup, vgpu_remove_op,
	  vgpu_remove_undo, NULL, 0, false },
	{ "vgpu-open", "VFIO_GROUP_GET_DEVICE_FD on a vGPU", vgpu_open_setup, vgpu_open_op,
	  vgpu_open_undo, vfio_teardown, 0, false },
	{ "vfio-close", "close() of the vGPU device fd", vfio_dev_setup, vfio_close_op,
	  vfio_close_undo, vfio_teardown, 0, false },
	{ "vfio-get-info", "VFIO_DEVICE_GET_INFO", vfio_dev_setup, vfio_info_op, no_undo,
	  vfio_teardown, 0, false },
	{ "vfio-region-info", "VFIO_DEVICE_GET_REGION_INFO, every index, with caps",
	  vfio_count_setup, vfio_region_info_op, no_undo, vfio_teardown, 0, false },
	{ "vfio-irq-info", "VFIO_DEVICE_GET_IRQ_INFO, every index", vfio_count_setup,
	  vfio_irq_info_op, no_undo, vfio_teardown, 0, false },
	{ "vfio-set-irqs", "VFIO_DEVICE_SET_IRQS MSI eventfd", vfio_dev_setup, set_irqs_op,
	  set_irqs_undo, vfio_teardown, 0, false },
	{ "vfio-set-irqs-intx", "VFIO_DEVICE_SET_IRQS INTx eventfd", vfio_dev_setup,
	  set_intx_op, set_intx_undo, vfio_teardown, 0, false },
	{ "vfio-set-irqs-req", "VFIO_DEVICE_SET_IRQS REQ eventfd", vfio_dev_setup,
	  set_req_op, set_req_undo, vfio_teardown, 0, false },
	{ "vfio-irq-disable", "VFIO_DEVICE_SET_IRQS MSI trigger off (DATA_NONE, count 0)",
	  msi_setup, irq_disable_op, no_undo, vfio_teardown, 0, false },
	{ "vfio-irq-signal", "VFIO_DEVICE_SET_IRQS MSI signal (DATA_NONE, count 1)",
	  msi_setup, irq_signal_op, irq_signal_undo, vfio_teardown, 0, false },
	{ "vfio-irq-mask", "VFIO_DEVICE_SET_IRQS INTx mask", intx_unmasked_setup,
	  irq_mask_op, no_undo, vfio_teardown, 0, false },
	{ "vfio-irq-unmask", "VFIO_DEVICE_SET_IRQS INTx unmask", intx_masked_setup,
	  irq_unmask_op, no_undo, vfio_teardown, 0, false },
	{ "vfio-reset", "VFIO_DEVICE_RESET", vfio_dev_setup, vfio_reset_op, no_undo,
	  vfio_teardown, 0, false },
	{ "vfio-cfg-rw", "config space pread, command register pwrite", vfio_dev_setup,
	  vfio_cfg_op, no_undo, vfio_teardown, 0, false },
	{ "vfio-bar0-submit", "BAR0 RING_TAIL doorbell of a NOP", bar0_setup,
	  bar0_submit_op, no_undo, vfio_teardown, 0, false },
	/* SIGBUS (-EFAULT): the backend could not back the page, by design */
	{ "vfio-mmap", "mmap of BAR2 and a store to a new page", mmap_setup,
	  mmap_touch_op, no_undo, vfio_teardown, -EFAULT, false },
	{ "vfio-mig-save", "VFIO migration RUNNING -> STOP_COPY, stream read to EOF",
	  mig_setup, mig_save_op, mig_undo, mig_teardown, 0, false },
	{ "vfio-mig-resume", "VFIO migration STOP -> RESUMING, stream written, -> STOP",
	  mig_setup, mig_resume_op, mig_undo, mig_teardown, 0, false },
	{ "mig-enable", "echo 1 > mig_mode", mig_enable_setup, mig_enable_op,
	  mig_enable_undo, NULL, 0, false },
	{ "gi-new", "netlink gi-new 3g.71gb", gi_setup, gi_new_op, gi_new_undo, NULL, 0, false },
	{ "gi-del", "netlink gi-del", gi_del_setup, gi_del_op, gi_del_undo, NULL, 0, false },
	{ "gi-vgpu-create", "mdev create on a GI", gi_vgpu_setup, gi_vgpu_op,
	  gi_vgpu_undo, NULL, 0, false },
	{ "gpu-mig-vgpu-create", "mdev create of a MIG-backed type on the GPU's PCI function",
	  gpu_mig_vgpu_setup, gpu_mig_vgpu_op, gi_vgpu_undo, NULL, 0, false },
	{ "sriov-enable", "echo 2 > sriov_numvfs", sriov_setup, sriov_enable_op,
	  sriov_enable_undo, NULL, 0, false },
	{ "vf-type", "echo 3 > VF current_vgpu_type", vf_type_setup, vf_type_op,
	  vf_type_undo, NULL, 0, false },
	{ "nl-gpu-set-mode", "netlink gpu-set mode=timesliced from MIG", nl_mig_off_setup,
	  nl_mig_off_op, nl_mig_off_undo, NULL, 0, false },
	{ "nl-sched-set", "netlink sched-set policy", nl_sched_setup, nl_sched_op,
	  nl_sched_undo, NULL, 0, false },
	{ "nl-vgpu-set", "netlink vgpu-set weight", nl_vgpu_setup, nl_vgpu_op,
	  nl_vgpu_undo, NULL, 0, false },
	{ "nl-gpu-get", "netlink gpu-get id 0", nl_gpu_get_setup, nl_dump_op, no_undo, NULL, 0, false },
	{ "nl-gpu-dump", "netlink gpu-get dump", nl_gpu_dump_setup, nl_dump_op, no_undo, NULL, 0, false },
	{ "nl-type-dump", "netlink type-get dump", nl_type_dump_setup, nl_dump_op, no_undo, NULL, 0, false },
	{ "nl-vgpu-dump", "netlink vgpu-get dump", nl_vgpu_dump_setup, nl_dump_op, no_undo, NULL, 0, false },
	{ "nl-sched-get", "netlink sched-get gpu 0", nl_sched_get_setup, nl_dump_op, no_undo, NULL, 0, false },
	{ "nl-gi-dump", "netlink gi-get dump", nl_gi_dump_setup, nl_dump_op, no_undo, NULL, 0, false },
	{ "nl-pt-get", "netlink pt-get 0000:01:00.0", nl_pt_get_setup, nl_dump_op, no_undo,
	  NULL, 0, false },
	{ "nl-type-get", "netlink type-get H200-35C", nl_type_get_setup, nl_dump_op, no_undo,
	  NULL, 0, false },
	{ "nl-vgpu-get", "netlink vgpu-get uuid", nl_vgpu_get_setup, nl_dump_op, no_undo,
	  NULL, 0, false },
	{ "nl-sched-dump", "netlink sched-get dump", nl_sched_dump_setup, nl_dump_op, no_undo,
	  NULL, 0, false },
	{ "nl-gi-get", "netlink gi-get id", nl_gi_get_setup, nl_dump_op, no_undo, NULL, 0, false },
	/* ECANCELED: pt_assign() failed and rolled back; the snapshot checks how well */
	{ "pt-assign", "pt_assign() 0000:01:00.0 to gpuvirt_vfio_pci, step by step",
	  pt_assign_setup, pt_assign_op, pt_assign_undo, pt_assign_teardown, -ECANCELED,
	  true },
};

#define NPATHS	(sizeof(paths) / sizeof(paths[0]))

static bool clean_errno(const struct path *p, int err)
{
	return err == -ENOMEM || err == -ENOBUFS || (p->also_ok && err == p->also_ok);
}

/* One sweep; 0 if clean. */
static int sweep(const struct path *p, int *points)
{
	char *before = malloc(SNAP_MAX), *after = malloc(SNAP_MAX);
	int n, err, bad = 0, errs[4] = { 0 }, tolerated = 0, acklost = 0;
	bool inj = false, partial = false;
	time_t t0 = time(NULL);
	long msgs0 = mon_msgs, lost0 = mon_lost;
	char at[48];
	int bad0;

	*points = 0;
	warm = false;
	cur_step = only_step ?: 1;
	for (n = only_point ?: 1; n <= max_nth; n++) {
		if (only_point && n > only_point)
			break;
		/* not in the sample: this point is another run's */
		if (!only_point && n % sample_k != sample_r)
			continue;
		if (p->stepped)
			snprintf(at, sizeof(at), "step %lu point %d", cur_step, n);
		else
			snprintf(at, sizeof(at), "point %d", n);
		bad0 = bad;
		if (budget_s && time(NULL) - t0 >= budget_s) {
			partial = true;
			break;
		}
		if (p->setup()) {
			printf("# %s: setup failed before %s\n", p->name, at);
			bad++;
			break;
		}
		mon_up();
		mon_drain();
		snapshot(before);
		kmsg_reports();
		err = p->op(n, &inj);
		mon_drain();
		if (kmsg_reports()) {
			printf("# %s: %s: kernel report (op %s)\n", p->name, at,
			       err ? strerror(-err) : "succeeded");
			bad++;
		}
		if (!inj) {
			if (err) {
				printf("# %s: the path fails without injection: %s%s%s\n",
				       p->name, strerror(-err), nl.ext_msg[0] ? ": " : "",
				       nl.ext_msg);
				bad++;
			} else if (p->undo()) {
				printf("# %s: undo failed\n", p->name);
				bad++;
			}
			/* this step's write ran untouched: on to the next step */
			if (p->stepped && !step_absent && !err && !only_step && bad == bad0) {
				printf("# %s: step %lu swept up to point %d\n", p->name, cur_step,
				       n - 1);
				cur_step++;
				warm = false;
				n = 0;
				continue;
			}
			break;
		}
		(*points)++;
		if (err) {
			if (!clean_errno(p, err)) {
				printf("# %s: %s: unexpected errno %d (%s)%s%s\n",
				       p->name, at, -err, strerror(-err),
				       nl.ext_msg[0] ? ": " : "", nl.ext_msg);
				errs[3]++;
				bad++;
			} else {
				errs[err == -ENOMEM ? 0 : err == -ENOBUFS ? 1 : 2]++;
			}
			/*
			 * ENOBUFS from netlink may only mean that the reply or
			 * ack was lost (netlink_ack() could not allocate): the
			 * request may have been carried out. Then its effect
			 * must be whole, and undoing it must restore the state.
			 */
			if (err == -ENOBUFS) {
				snapshot(after);
				if (strcmp(before, after)) {
					acklost++;
					if (p->undo()) {
						printf("# %s: %s: ENOBUFS, done, undo failed\n",
						       p->name, at);
						bad++;
					}
				}
			}
		} else {
			tolerated++;
			if (p->undo()) {
				printf("# %s: %s: op succeeded under injection and undo failed\n",
				       p->name, at);
				bad++;
			}
		}
		snapshot(after);
		if (strcmp(before, after)) {
			printf("# %s: %s: state changed (op %s):\n", p->name, at,
			       err ? strerror(-err) : "succeeded");
			snap_diff(before, after);
			bad++;
		}
		if (kmsg_reports()) {
			printf("# %s: %s: kernel report after undo\n", p->name, at);
			bad++;
		}
		mon_drain();
		warm = bad == bad0 && !strcmp(before, after);
		if (bad > 5) {
			printf("# %s: too many problems, stopping at %s\n", p->name, at);
			break;
		}
	}
	if (p->teardown)
		p->teardown();
	last_partial = partial;
	if (partial) {
		printf("# %s: partial: time bound of %d s hit, points 1..%d swept, the rest not\n",
		       p->name, budget_s, n - 1);
	}
	if (n > max_nth) {
		printf("# %s: still injecting at point %d, stopped\n", p->name, max_nth);
		bad++;
	}
	if (mon_lost > lost0) {
		printf("# %s: the monitor socket overflowed %ld times\n", p->name,
		       mon_lost - lost0);
		bad++;
	}
	printf("# %s (%s): %d injection points%s%s: %d ENOMEM, %d ENOBUFS (%d of them done, reply lost), %d %s, %d other, %d tolerated, %ld notifications, %ld s\n",
	       p->name, p->what, *points, sample_k > 1 ? " (sampled)" : "",
	       partial ? " (partial)" : "", errs[0], errs[1],
	       acklost, errs[2], p->also_ok ? strerror(-p->also_ok) : "-", errs[3], tolerated,
	       mon_msgs - msgs0, (long)(time(NULL) - t0));
	free(before);
	free(after);
	return bad;
}

int main(int argc, char **argv)
{
	int i, first = 1, failed = 0, total = 0;
	size_t j;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		if (first < argc && !strcmp(argv[first], "-n")) {
			dry = true;
			first++;
		} else if (first + 1 < argc && !strcmp(argv[first], "-p")) {
			only_point = atoi(argv[first + 1]);
			first += 2;
		} else if (first + 1 < argc && !strcmp(argv[first], "-t")) {
			budget_s = atoi(argv[first + 1]);
			first += 2;
		} else if (first + 1 < argc && !strcmp(argv[first], "-k")) {
			only_step = strtoul(argv[first + 1], NULL, 10);
			first += 2;
		} else if (first + 1 < argc && !strcmp(argv[first], "-m")) {
			max_nth = atoi(argv[first + 1]);
			first += 2;
		} else if (first + 1 < argc && !strcmp(argv[first], "-K")) {
			if (sscanf(argv[first + 1], "%d:%d", &sample_k, &sample_r) != 2 ||
			    sample_k < 1 || sample_r < 0 || sample_r >= sample_k) {
				fprintf(stderr, "-K wants K:R with K >= 1 and 0 <= R < K\n");
				return 2;
			}
			first += 2;
		} else {
			break;
		}
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [-n] [-m MAX] [-k STEP] [-p N] [-t SEC] [-K K:R] PATH...|all|list\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[first], "list")) {
		for (j = 0; j < NPATHS; j++)
			printf("%-16s %s\n", paths[j].name, paths[j].what);
		return 0;
	}
	if (!getenv("GPUVIRT_KO_DIR")) {
		printf("1..0 # SKIP GPUVIRT_KO_DIR is not set\n");
		return 4;
	}
	if (!dry && setup_fault_attrs()) {
		printf("1..0 # SKIP no fault injection (failslab, fail_page_alloc, fail-nth)\n");
		return 4;
	}
	if (only_point && (gv_write("/sys/kernel/debug/failslab/verbose", "1") ||
			   gv_write("/sys/kernel/debug/fail_page_alloc/verbose", "1"))) {
		printf("1..0 # SKIP no fault injection (failslab, fail_page_alloc, fail-nth)\n");
		return 4;
	}
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd < 0) {
		perror("/dev/kmsg");
		return 2;
	}
	lseek(kmsg_fd, 0, SEEK_END);

	printf("TAP version 13\n");
	if (sample_k > 1)
		printf("# sample: the points n with n %% %d == %d of each path\n", sample_k,
		       sample_r);
	if (!strcmp(argv[first], "all")) {
		printf("1..%zu\n", NPATHS);
		for (j = 0; j < NPATHS; j++) {
			int pts, bad = sweep(&paths[j], &pts);

			total += pts;
			printf("%sok %zu %s # %d points%s\n", bad ? "not " : "", j + 1,
			       paths[j].name, pts, last_partial ? " (partial)" : "");
			failed += !!bad;
		}
	} else {
		printf("1..%d\n", argc - first);
		for (i = first; i < argc; i++) {
			const struct path *p = NULL;
			int pts = 0, bad;

			for (j = 0; j < NPATHS; j++)
				if (!strcmp(paths[j].name, argv[i]))
					p = &paths[j];
			if (!p) {
				printf("not ok %d %s # no such path\n", i - first + 1, argv[i]);
				failed++;
				continue;
			}
			bad = sweep(p, &pts);
			total += pts;
			printf("%sok %d %s # %d points%s\n", bad ? "not " : "", i - first + 1,
			       p->name, pts, last_partial ? " (partial)" : "");
			failed += !!bad;
		}
	}
	teardown_all();
	printf("# %d injection points in all\n", total);
	return failed ? 1 : 0;
}
