/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the gpuvirt VM tests: loading the modules under test,
 * sysfs and debugfs access, and reading the kernel log. The tests run as
 * root inside the test VM (selftests/vm-run.sh), with GPUVIRT_KO_DIR
 * pointing at the module build tree of the running kernel.
 */
#ifndef GPUVIRT_TEST_H
#define GPUVIRT_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The harness's timeout is a hang detector, not a speed limit: its 30 s
 * default is what a test of many vGPUs takes on the KASAN kernel under TCG
 * while other guests load the host. Every test that does not ask for more
 * (TEST_F_TIMEOUT) gets 300 s; the runner's own bound per program
 * (selftests/vm-run.sh -T) stays the backstop. The harness is included
 * first, so this is seen by every TEST_F that follows.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#endif

#define GV_SIM_BUS	"/sys/bus/gpuvirt_sim"
#define GV_DEBUGFS	"/sys/kernel/debug/gpuvirt"
#define GV_SIM_DEBUGFS	"/sys/kernel/debug/gpuvirt_sim"

struct gv_module {
	const char *name;	/* as in /sys/module */
	const char *path;	/* relative to GPUVIRT_KO_DIR */
	const char *deps;	/* in-tree modules to modprobe first, or NULL */
};

/* In load order. */
static const struct gv_module gv_modules[] = {
	{ "gpuvirt", "kernel/core/gpuvirt.ko", "vfio mdev" },
	{ "gpuvirt_sim", "kernel/sim/gpuvirt_sim.ko", NULL },
	{ "gpuvirt_vfio_pci", "kernel/vfio_pci/gpuvirt_vfio_pci.ko",
	  "vfio_pci_core" },
};

#define GV_CORE		(&gv_modules[0])
#define GV_SIM		(&gv_modules[1])
#define GV_VFIO_PCI	(&gv_modules[2])

static inline bool gv_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static inline bool gv_module_loaded(const struct gv_module *m)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", m->name);
	return gv_exists(path);
}

/* Returns 0 or -errno; -EEXIST when already loaded. */
static inline int gv_module_load(const struct gv_module *m)
{
	const char *dir = getenv("GPUVIRT_KO_DIR");
	char path[PATH_MAX], cmd[256];
	int fd, ret;

	if (!dir)
		return -ENOENT;
	if (m->deps) {
		snprintf(cmd, sizeof(cmd), "modprobe -qa %s", m->deps);
		if (system(cmd))
			return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* Returns 0 or -errno. */
static inline int gv_module_unload(const struct gv_module *m)
{
	return syscall(SYS_delete_module, m->name, O_NONBLOCK) ? -errno : 0;
}

/* Unload everything of ours that is loaded, last module first. */
static inline int gv_unload_all(void)
{
	int i, err = 0;

	for (i = (int)(sizeof(gv_modules) / sizeof(gv_modules[0])) - 1; i >= 0; i--)
		if (gv_module_loaded(&gv_modules[i]) &&
		    gv_module_unload(&gv_modules[i]))
			err = -errno;
	return err;
}

/* Write a string to a sysfs file in one write(); returns 0 or -errno. */
static inline int gv_write(const char *path, const char *s)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* Read a whole small file into buf; returns its length or -errno. */
static inline int gv_read(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		got += n;
	}
	buf[got] = '\0';
	close(fd);
	return got;
}

/*
 * The common start of a vGPU test: nothing of ours loaded, then the core
 * and the sim with a simulated H200 as sim0. 0, or the first failure as
 * -errno (a failing command is -EIO).
 */
static inline int gv_setup_h200(void)
{
	int err = gv_unload_all();

	if (err)
		return err;
	if (system("modprobe -q vfio_iommu_type1"))
		return -EIO;
	return gv_module_load(GV_CORE) ?: gv_module_load(GV_SIM) ?:
	       gv_write(GV_SIM_BUS "/new_device", "0 h200-141gb");
}

/*
 * Value of "key: value" in a debugfs file such as .../info or .../hw;
 * returns 0 and copies the value, or -errno.
 */
static inline int gv_kv(const char *path, const char *key, char *val, size_t len)
{
	char buf[4096], *line, *save = NULL;
	size_t klen = strlen(key);
	int n;

	n = gv_read(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, key, klen) && line[klen] == ':' &&
		    line[klen + 1] == ' ') {
			snprintf(val, len, "%s", line + klen + 2);
			return 0;
		}
	}
	return -ENOENT;
}

static inline unsigned long long gv_kv_u64(const char *path, const char *key)
{
	char val[64];

	if (gv_kv(path, key, val, sizeof(val)))
		return ~0ULL;
	return strtoull(val, NULL, 0);
}

/*
 * Kernel log cursor: records logged after gv_kmsg_open() can be searched
 * with gv_kmsg_find().
 */
/*
 * A kernel with KASAN, as the debug lane's: every memory access is checked,
 * and the guest CPU, which also runs the simulated GPU's engine threads,
 * does several times less. Throughput ratios are not judged there.
 */
static inline bool gv_kernel_has_kasan(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " kasan_report\n") != NULL;
	fclose(f);
	return found;
}

static inline int gv_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* True if a record containing needle was logged since the cursor. */
static inline bool gv_kmsg_find(int fd, const char *needle)
{
	char rec[8192];
	bool found = false;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten records: go on */
				continue;
			break;
		}
		rec[n] = '\0';
		if (strstr(rec, needle))
			found = true;
	}
	return found;
}

#endif /* GPUVIRT_TEST_H */
