// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault-injection sweeps over gpuvirt's setup paths, in the style of
 * iommufd's fail_nth selftest. Runs in the debug-kernel guest (failslab,
 * fail_page_alloc, FAULT_INJECTION_DEBUG_FS), as root.
 *
 * Usage: gv_failnth [-n] [-m MAX] PATH...|all|list
 *   -n      no injection: run each path once and check its setup, undo and
 *           state snapshot (works on any kernel)
 *   -m MAX  give up on a path after MAX injection points (default 5000)
 *   -p N    inject at point N only, and have the kernel log the stack of
 *           the failed allocation (failslab/fail_page_alloc verbose 1)
 *   -t SEC  stop a path's sweep after SEC seconds; the points not reached
 *           are reported as not swept ("# partial"), not as a failure
 *
 * For one PATH, for n = 1, 2, ...: bring the system to the path's starting
 * state, snapshot it, write n to /proc/self/task/<tid>/fail-nth, make the
 * path's one system call (finit_module, a sysfs write, a netlink request),
 * and disarm. Then:
 *  - if the fault was not injected (fail-nth still counts down), the path ran
 *    untouched: undo it and stop, n - 1 points were swept;
 *  - if the call failed, it must fail with a clean errno (ENOMEM, or ENOBUFS
 *    for netlink) and the state must be exactly the snapshot: the same
 *    modules, sim devices, mdevs, GIs, available_instances and MIG mode;
 *  - if it succeeded anyway (an allocation whose failure is tolerated),
 *    it is undone and the state must again be the snapshot;
 *  - the kernel log must have no new report (WARNING, BUG, KASAN, lockdep...).
 * Leaks are checked by the caller (selftests/debug/fail-nth.sh) with
 * kmemleak after each path. Prints KTAP, one test per path, with the number
 * of injection points swept; exits 1 if any path failed.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <sys/types.h>

#include <sys/eventfd.h>
#include <time.h>

#include "gpuvirt_test.h"
#include "gv_nl.h"
#include "vgpu_client.h"

#define SIM_NEW		GV_SIM_BUS "/new_device"
#define SIM_DEL		GV_SIM_BUS "/del_device"
#define SIM0		GV_SIM_BUS "/devices/sim0"
#define MIG_MODE	SIM0 "/gpuvirt/mig_mode"
#define TYPES		"/sys/class/mdev_bus/sim0/mdev_supported_types"
#define VGPU_TYPE	"gpuvirt_sim-H200-35C"
#define UUID_A		"fa11f417-0000-4000-8000-00000000000a"
#define UUID_B		"fa11f417-0000-4000-8000-00000000000b"
#define SNAP_MAX	65536

static int fail_fd = -1;
static int kmsg_fd = -1;
static int max_nth = 5000;
static bool dry;	/* -n: no injection, each path once (plumbing check) */
static int budget_s;	/* -t: time bound of one path, 0 = none */
static bool last_partial;
static int only_point;	/* -p: sweep this point alone, with a stack dump */
static struct nl nl;
static int gi_id = -1;

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
	snap_add(buf, off, "mig_mode: %s\n", len > 0 ? val : "absent");
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
	int err = gv_module_load(m);

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

/* A genl request with fail-nth armed around sendmsg() alone. */
static int armed_nl(struct nlmsghdr *nlh, mnl_cb_t cb, void *data, int n, bool *inj)
{
	struct nl_ctx ctx = { &nl, cb, data };
	int ret;

	ctl_cbs[NLMSG_ERROR] = ctl_err_cb;
	ctl_cbs[NLMSG_DONE] = ctl_done_cb;
	nl.ext_msg[0] = '\0';
	/*
	 * A request that failed with ENOBUFS (a lost ack) may have left its
	 * reply queued: drop it, or it is taken for this request's answer.
	 */
	while (recv(mnl_socket_get_fd(nl.sk), nl.buf, sizeof(nl.buf), MSG_DONTWAIT) >= 0 ||
	       errno == ENOBUFS)
		;
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
	nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	if (nl_talk(&nl, nlh, gi_ids_cb, ids))
		return;
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
};

/* modload-core: insmod gpuvirt.ko (vfio and mdev loaded). */
static int modload_core_setup(void)
{
	static bool deps;

	nl_close(&nl);
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

static int base_setup(void)
{
	vfio_teardown();
	if (sim_up())
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

/* vgpu-remove: echo 1 > /sys/bus/mdev/devices/UUID/remove. */
static int vgpu_remove_setup(void)
{
	return vgpu_setup() ?: must(gv_write(TYPES "/" VGPU_TYPE "/create", UUID_A),
				    "create vGPU");
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
 * vgpu-open: VFIO_GROUP_GET_DEVICE_FD on a vGPU whose group is set up
 * (the VMM's open); vfio-set-irqs: VFIO_DEVICE_SET_IRQS with an eventfd on
 * the open device.
 */
static struct vfio_user vu = { -1, -1, -1 };
static int efd = -1;

static void vfio_teardown(void)
{
	vgpu_client_close(&vu);
	if (efd >= 0)
		close(efd);
	efd = -1;
}

static int vgpu_open_setup(void)
{
	int err;

	vfio_teardown();
	if (vgpu_remove_setup())
		return -1;
	if (system("modprobe -q vfio_iommu_type1"))
		return -1;
	err = vgpu_client_open(&vu, UUID_A);
	if (must(err, "open the vGPU"))
		return -1;
	close(vu.device);
	vu.device = -1;
	return 0;
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
	vfio_teardown();
	return 0;
}

static int set_irqs_setup(void)
{
	if (vgpu_open_setup())
		return -1;
	vu.device = ioctl(vu.group, VFIO_GROUP_GET_DEVICE_FD, UUID_A);
	if (vu.device < 0) {
		printf("# setup: device fd: %s\n", strerror(errno));
		return -1;
	}
	efd = eventfd(0, EFD_CLOEXEC);
	return efd < 0 ? -1 : 0;
}

static int set_irqs_op(int n, bool *inj)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *irq = (struct vfio_irq_set *)buf;
	int ret;

	irq->argsz = sizeof(buf);
	irq->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	irq->index = VFIO_PCI_MSI_IRQ_INDEX;
	irq->start = 0;
	irq->count = 1;
	memcpy(irq->data, &efd, sizeof(efd));
	arm(n);
	ret = ioctl(vu.device, VFIO_DEVICE_SET_IRQS, irq) ? -errno : 0;
	*inj = disarm();
	return ret;
}

static int set_irqs_undo(void)
{
	int ret = vgpu_client_set_irq(vu.device, VFIO_PCI_MSI_IRQ_INDEX, -1);

	vfio_teardown();
	return ret;
}

/* mig-enable: echo 1 > .../gpuvirt/mig_mode. */
static int mig_enable_setup(void)
{
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
static int gi_del_setup(void)
{
	char buf[512];
	struct nlmsghdr *nlh;

	if (gi_setup())
		return -1;
	nlh = genl_req(&nl, buf, nl.family, GPUVIRT_CMD_GI_NEW, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_GI_PROFILE, "3g.71gb");
	gi_id = -1;
	return must(nl_talk(&nl, nlh, gi_msg_cb, &gi_id), "gi-new");
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
	return gi_del_setup();
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
	int cnt = 0;

	if (dump_cmd == GPUVIRT_CMD_GPU_GET && !dump_flags)
		mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, 0);
	else if (dump_cmd == GPUVIRT_CMD_PT_GET)
		mnl_attr_put_strz(nlh, GPUVIRT_A_PT_BDF, "0000:01:00.0");
	else if (dump_cmd == GPUVIRT_CMD_GI_GET || dump_cmd == GPUVIRT_CMD_SCHED_GET)
		mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, 0);
	return armed_nl(nlh, count_cb, &cnt, n, inj);
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

static void teardown_all(void)
{
	nl_close(&nl);
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
	{ "modload-core", "insmod gpuvirt.ko", modload_core_setup, modload_core_op,
	  modload_core_undo, NULL, 0 },
	{ "modload-sim", "insmod gpuvirt_sim.ko", modload_sim_setup, modload_sim_op,
	  modload_sim_undo, NULL, 0 },
	/*
	 * When the driver core fails to bind (really_probe: driver_sysfs_add),
	 * the driver's probe never runs and new_device says ENODEV
	 * (kernel/sim/bus.c, probe_err's initial value).
	 */
	{ "sim-add", "echo '0 h200-141gb' > new_device", sim_add_setup, sim_add_op,
	  sim_add_undo, NULL, -ENODEV },
	{ "sim-del", "echo 0 > del_device", sim_del_setup, sim_del_op, sim_del_undo, NULL, 0 },
	{ "vgpu-create", "mdev create " VGPU_TYPE, vgpu_setup, vgpu_create_op,
	  vgpu_create_undo, NULL, 0 },
	{ "vgpu-remove", "mdev remove", vgpu_remove_setup, vgpu_remove_op,
	  vgpu_remove_undo, NULL, 0 },
	{ "vgpu-open", "VFIO_GROUP_GET_DEVICE_FD on a vGPU", vgpu_open_setup, vgpu_open_op,
	  vgpu_open_undo, vfio_teardown, 0 },
	{ "vfio-set-irqs", "VFIO_DEVICE_SET_IRQS MSI eventfd", set_irqs_setup, set_irqs_op,
	  set_irqs_undo, vfio_teardown, 0 },
	{ "mig-enable", "echo 1 > mig_mode", mig_enable_setup, mig_enable_op,
	  mig_enable_undo, NULL, 0 },
	{ "gi-new", "netlink gi-new 3g.71gb", gi_setup, gi_new_op, gi_new_undo, NULL, 0 },
	{ "gi-del", "netlink gi-del", gi_del_setup, gi_del_op, gi_del_undo, NULL, 0 },
	{ "gi-vgpu-create", "mdev create on a GI", gi_vgpu_setup, gi_vgpu_op,
	  gi_vgpu_undo, NULL, 0 },
	{ "nl-gpu-set-mode", "netlink gpu-set mode=timesliced from MIG", nl_mig_off_setup,
	  nl_mig_off_op, nl_mig_off_undo, NULL, 0 },
	{ "nl-sched-set", "netlink sched-set policy", nl_sched_setup, nl_sched_op,
	  nl_sched_undo, NULL, 0 },
	{ "nl-vgpu-set", "netlink vgpu-set weight", nl_vgpu_setup, nl_vgpu_op,
	  nl_vgpu_undo, NULL, 0 },
	{ "nl-gpu-get", "netlink gpu-get id 0", nl_gpu_get_setup, nl_dump_op, no_undo, NULL, 0 },
	{ "nl-gpu-dump", "netlink gpu-get dump", nl_gpu_dump_setup, nl_dump_op, no_undo, NULL, 0 },
	{ "nl-type-dump", "netlink type-get dump", nl_type_dump_setup, nl_dump_op, no_undo, NULL, 0 },
	{ "nl-vgpu-dump", "netlink vgpu-get dump", nl_vgpu_dump_setup, nl_dump_op, no_undo, NULL, 0 },
	{ "nl-sched-get", "netlink sched-get gpu 0", nl_sched_get_setup, nl_dump_op, no_undo, NULL, 0 },
	{ "nl-gi-dump", "netlink gi-get dump", nl_gi_dump_setup, nl_dump_op, no_undo, NULL, 0 },
	{ "nl-pt-get", "netlink pt-get 0000:01:00.0", nl_pt_get_setup, nl_dump_op, no_undo,
	  NULL, 0 },
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

	*points = 0;
	for (n = only_point ?: 1; n <= max_nth; n++) {
		if (only_point && n > only_point)
			break;
		if (budget_s && time(NULL) - t0 >= budget_s) {
			partial = true;
			break;
		}
		if (p->setup()) {
			printf("# %s: setup failed before point %d\n", p->name, n);
			bad++;
			break;
		}
		snapshot(before);
		kmsg_reports();
		err = p->op(n, &inj);
		if (kmsg_reports()) {
			printf("# %s: point %d: kernel report (op %s)\n", p->name, n,
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
			break;
		}
		(*points)++;
		if (err) {
			if (!clean_errno(p, err)) {
				printf("# %s: point %d: unexpected errno %d (%s)%s%s\n",
				       p->name, n, -err, strerror(-err),
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
						printf("# %s: point %d: ENOBUFS, done, undo failed\n",
						       p->name, n);
						bad++;
					}
				}
			}
		} else {
			tolerated++;
			if (p->undo()) {
				printf("# %s: point %d: op succeeded under injection and undo failed\n",
				       p->name, n);
				bad++;
			}
		}
		snapshot(after);
		if (strcmp(before, after)) {
			printf("# %s: point %d: state changed (op %s):\n", p->name, n,
			       err ? strerror(-err) : "succeeded");
			snap_diff(before, after);
			bad++;
		}
		if (kmsg_reports()) {
			printf("# %s: point %d: kernel report after undo\n", p->name, n);
			bad++;
		}
		if (bad > 5) {
			printf("# %s: too many problems, stopping at point %d\n", p->name, n);
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
	printf("# %s (%s): %d injection points%s: %d ENOMEM, %d ENOBUFS (%d of them done, reply lost), %d %s, %d other, %d tolerated, %ld s\n",
	       p->name, p->what, *points, partial ? " (partial)" : "", errs[0], errs[1],
	       acklost, errs[2], p->also_ok ? strerror(-p->also_ok) : "-", errs[3], tolerated,
	       (long)(time(NULL) - t0));
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
		} else if (first + 1 < argc && !strcmp(argv[first], "-m")) {
			max_nth = atoi(argv[first + 1]);
			first += 2;
		} else {
			break;
		}
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [-n] [-m MAX] [-p N] [-t SEC] PATH...|all|list\n",
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
