// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pt object: PCI devices handed whole to VMs through VFIO.
 *
 *	gpuvirtctl pt check BDF [ force ] [ only ]
 *	gpuvirtctl pt assign BDF [ driver { gpuvirt_vfio_pci | vfio-pci } ]
 *				 [ force ] [ only ] [ persistent ]
 *	gpuvirtctl pt release BDF
 *	gpuvirtctl pt show BDF
 *
 * "check" prints the facts and the verdict of pt_check.c. "assign" moves
 * every endpoint of the device's IOMMU group (bridges stay) to a VFIO driver
 * through driver_override, unbind and drivers_probe, all or nothing: when a
 * step fails, every device goes back to the driver it had. The drivers it
 * had are written first to a state file, which "release" reads to give them
 * back, after a reboot too. "persistent" also writes a udev rule that sets
 * driver_override when the device appears at boot, before a host driver can
 * claim it.
 *
 * pt_assign() and pt_release() do the work of "assign" and "release" and
 * print only errors; "apply" (apply.c) calls them for the "passthrough"
 * entries of a configuration file, and undoes them when a later step fails.
 *
 * "show" asks the kernel (pt_show.c): the IOMMU group as the IOMMU core
 * has it, and gpuvirt_vfio_pci's state of the device.
 *
 * Environment, for tests and for packagers:
 *   GPUVIRT_PT_STATE_DIR  state files (default /var/lib/gpuvirt/pt)
 *   GPUVIRT_PT_UDEV_DIR   udev rules (default /etc/udev/rules.d)
 *   GPUVIRT_PT_FAIL_AT=N  make the Nth sysfs write of an assignment fail,
 *                         to prove the rollback (tests only)
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuvirtctl.h"
#include "print.h"
#include "pt.h"
#include "sysfs.h"

#define PT_STATE_DIR	"/var/lib/gpuvirt/pt"
#define PT_UDEV_DIR	"/etc/udev/rules.d"
#define PT_UDEV_PREFIX	"61-gpuvirt-pt-"

enum pt_driver { PT_TO_GPUVIRT, PT_TO_VFIO_PCI };

static const struct arg_enum pt_drivers[] = {
	{ PT_DRV_GPUVIRT,	PT_TO_GPUVIRT },
	{ PT_DRV_VFIO_PCI,	PT_TO_VFIO_PCI },
	{ .name = NULL }
};

struct pt_opts {
	const char *dev;
	uint32_t driver;
	bool force;
	bool only;
	bool persistent;
};

enum { PT_ARG_DEV, PT_ARG_DRIVER, PT_ARG_FORCE, PT_ARG_ONLY, PT_ARG_PERSIST };

#define PT_DEV_ARG							\
	[PT_ARG_DEV] = { "dev", ARG_STRING, offsetof(struct pt_opts, dev), \
			 ARG_REQUIRED | ARG_POSITIONAL, .meta = "BDF",	\
			 .max_len = 64 }

static const struct arg_spec check_args[] = {
	PT_DEV_ARG,
	[PT_ARG_DRIVER] = { "force", ARG_FLAG, offsetof(struct pt_opts, force) },
	[PT_ARG_FORCE] = { "only", ARG_FLAG, offsetof(struct pt_opts, only) },
	{ .keyword = NULL }
};

static const struct arg_spec assign_args[] = {
	PT_DEV_ARG,
	[PT_ARG_DRIVER] = { "driver", ARG_ENUM,
			    offsetof(struct pt_opts, driver),
			    .enums = pt_drivers },
	[PT_ARG_FORCE] = { "force", ARG_FLAG, offsetof(struct pt_opts, force) },
	[PT_ARG_ONLY] = { "only", ARG_FLAG, offsetof(struct pt_opts, only) },
	[PT_ARG_PERSIST] = { "persistent", ARG_FLAG,
			     offsetof(struct pt_opts, persistent) },
	{ .keyword = NULL }
};

static const struct arg_spec release_args[] = {
	PT_DEV_ARG,
	{ .keyword = NULL }
};

static const char *root_of(const struct ctx *ctx)
{
	return ctx->sysfs_root ? ctx->sysfs_root : "";
}

static const char *env_dir(const char *var, const char *def)
{
	const char *v = getenv(var);

	return v && *v ? v : def;
}

/* Parse the BDF argument; prints the error. */
static int pt_bdf(const struct pt_opts *o, char bdf[PT_BDF_LEN])
{
	char err[256];

	if (pt_bdf_parse(o->dev, bdf, err, sizeof(err))) {
		err_print("%s", err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static int pt_run_check(struct ctx *ctx, const struct pt_opts *o,
			struct pt_report *r)
{
	struct pt_request req = { .force = o->force, .only = o->only };
	char bdf[PT_BDF_LEN], err[PATH_MAX + 128];
	int ret;

	ret = pt_bdf(o, bdf);
	if (ret)
		return ret;
	if (pt_check(root_of(ctx), bdf, &req, r, err, sizeof(err))) {
		err_print("%s", err);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* check ------------------------------------------------------------------- */

static void print_dev(const struct pt_dev *d)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%06x", d->class);
	pr_string("class", NULL, buf);
	snprintf(buf, sizeof(buf), "%04x:%04x", d->vendor, d->device);
	pr_string("id", NULL, buf);
	pr_string("driver", NULL, d->driver[0] ? d->driver : "none");
}

/* Space-separated words as a JSON array, or as they are in text. */
static void print_words(const char *key, const char *label, const char *words)
{
	char buf[PT_REASON_LEN], *save = NULL, *w;

	if (!pr_is_json()) {
		pr_string(key, label, words[0] ? words : "none");
		return;
	}
	snprintf(buf, sizeof(buf), "%s", words);
	pr_open_array(key);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		pr_string(NULL, NULL, w);
	pr_close_array();
}

static const char *yes_no(bool v)
{
	return v ? "yes" : "no";
}

static void print_report(const struct pt_report *r)
{
	unsigned int i;

	pr_open_object(NULL);
	pr_open_object("pt");
	pr_string("bdf", "pt", r->dev.bdf);
	print_dev(&r->dev);
	pr_eol();

	pr_open_object("iommu");
	if (pr_is_json())
		pr_bool("enabled", NULL, r->iommu);
	else
		pr_string("enabled", "iommu", r->iommu ? "on" : "off");
	print_words("units", NULL, r->units);
	pr_string("interrupt_remapping", "interrupt-remapping",
		  pt_tristate_name(r->irq_remap));
	pr_close_object();
	pr_eol();

	/* JSON leaves the group out when there is none. */
	if (r->group >= 0)
		pr_uint("group", NULL, (uint64_t)r->group);
	else if (!pr_is_json())
		pr_string("group", NULL, "none");
	pr_eol();
	pr_open_array("members");
	for (i = 0; i < r->n_members; i++) {
		const struct pt_dev *m = &r->members[i];

		pr_open_object(NULL);
		pr_string("bdf", "member", m->bdf);
		print_dev(m);
		pr_string("role", NULL, pt_role_name(m->role));
		pr_close_object();
		pr_eol();
	}
	pr_close_array();

	pr_open_array("slot");
	for (i = 0; i < r->n_slot; i++) {
		const struct pt_dev *s = &r->slot[i];

		pr_open_object(NULL);
		pr_string("bdf", "slot", s->bdf);
		print_dev(s);
		if (s->group >= 0)
			pr_uint("group", NULL, (uint64_t)s->group);
		pr_close_object();
		pr_eol();
	}
	pr_close_array();

	print_words("reset_methods", "reset-methods", r->reset_methods);
	pr_eol();
	if (pr_is_json()) {
		pr_bool("boot_vga", NULL, r->boot_vga);
		pr_bool("console", NULL, r->console);
		pr_bool("host_driver", NULL, r->host_driver);
	} else {
		pr_string("boot_vga", "boot-vga", yes_no(r->boot_vga));
		pr_string("console", NULL, yes_no(r->console));
		pr_string("host_driver", "host-driver",
			  r->host_driver ? r->dev.driver : "no");
	}
	if (r->fb[0])
		pr_string("framebuffer", NULL, r->fb);
	pr_eol();

	pr_open_object("sriov");
	if (pr_is_json())
		pr_bool("capable", NULL, r->sriov);
	else
		pr_string("capable", "sriov", r->sriov ? "pf" :
			  r->physfn[0] ? "vf" : "no");
	if (r->sriov) {
		pr_uint("totalvfs", NULL, r->totalvfs);
		pr_uint("numvfs", NULL, r->numvfs);
	}
	if (r->physfn[0])
		pr_string("physfn", NULL, r->physfn);
	pr_close_object();
	pr_eol();

	pr_open_array("upstream");
	for (i = 0; i < r->n_ports; i++) {
		pr_open_object(NULL);
		pr_string("bdf", "upstream", r->ports[i].bdf);
		pr_string("acs", NULL, pt_acs_name(r->ports[i].acs));
		pr_close_object();
		pr_eol();
	}
	pr_close_array();

	if (pr_is_json())
		pr_bool("assignable", NULL, r->assignable);
	else
		pr_string("assignable", NULL, yes_no(r->assignable));
	pr_eol();
	pr_open_array("reasons");
	for (i = 0; i < r->n_reasons; i++) {
		pr_open_object(NULL);
		pr_string("level", "", pt_level_name(r->reasons[i].level));
		if (!pr_is_json())
			pr_text("-");
		pr_string("reason", "", r->reasons[i].text);
		pr_close_object();
		pr_eol();
	}
	pr_close_array();
	pr_close_object();
	pr_close_object();
}

static int cmd_check(struct ctx *ctx, const void *opts, uint64_t given)
{
	struct pt_report *r;
	int ret;

	(void)given;
	r = calloc(1, sizeof(*r));
	if (!r) {
		err_print("%s", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	ret = pt_run_check(ctx, opts, r);
	if (!ret)
		print_report(r);
	free(r);
	return ret;
}

/* State files ------------------------------------------------------------- */

static int state_path(const char *bdf, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s.state",
			 env_dir("GPUVIRT_PT_STATE_DIR", PT_STATE_DIR), bdf);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int udev_path(const char *bdf, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" PT_UDEV_PREFIX "%s.rules",
			 env_dir("GPUVIRT_PT_UDEV_DIR", PT_UDEV_DIR), bdf);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p, for the state directory. */
static int make_dirs(const char *dir)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", dir);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Write @text to @path through a temporary file and rename(). */
static int write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;
	int n;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fputs(text, f) < 0 || fflush(f) || fsync(fileno(f))) {
		n = errno ? -errno : -EIO;
		fclose(f);
		unlink(tmp);
		return n;
	}
	if (fclose(f)) {
		n = -errno;
		unlink(tmp);
		return n;
	}
	if (rename(tmp, path)) {
		n = -errno;
		unlink(tmp);
		return n;
	}
	return 0;
}

static int state_write(const struct pt_state *st, char *path, size_t len)
{
	char text[PT_MAX_MEMBERS * 160 + 512];
	size_t used;
	unsigned int i;
	int ret;

	ret = make_dirs(env_dir("GPUVIRT_PT_STATE_DIR", PT_STATE_DIR));
	if (ret)
		return ret;
	ret = state_path(st->device, path, len);
	if (ret)
		return ret;
	used = (size_t)snprintf(text, sizeof(text),
		"# gpuvirtctl pt: written by \"pt assign\", read by \"pt release\".\n"
		"# member BDF ORIGINAL-DRIVER ORIGINAL-DRIVER-OVERRIDE (- for none)\n"
		"device %s\ndriver %s\npersistent %d\n",
		st->device, st->driver, st->persistent);
	for (i = 0; i < st->n && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "member %s %s %s\n", st->m[i].bdf,
					 st->m[i].driver[0] ? st->m[i].driver : "-",
					 st->m[i].override[0] ? st->m[i].override : "-");
	if (used >= sizeof(text))
		return -ENOSPC;
	return write_file(path, text);
}

/* Read the state file @path; -errno, or -EINVAL for a malformed line. */
static int state_read(const char *path, struct pt_state *st, int *bad_line)
{
	char line[512], a[PT_NAME_LEN], b[PT_NAME_LEN], c[PT_NAME_LEN];
	char d[PT_NAME_LEN];
	int lineno = 0, n, ret = 0;
	FILE *f;

	memset(st, 0, sizeof(*st));
	*bad_line = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		n = sscanf(line, "%63s %63s %63s %63s", a, b, c, d);
		if (n == 2 && !strcmp(a, "device") && strlen(b) < PT_BDF_LEN) {
			snprintf(st->device, sizeof(st->device), "%s", b);
		} else if (n == 2 && !strcmp(a, "driver")) {
			snprintf(st->driver, sizeof(st->driver), "%s", b);
		} else if (n == 2 && !strcmp(a, "persistent")) {
			st->persistent = !strcmp(b, "1");
		} else if (n == 4 && !strcmp(a, "member") &&
			   strlen(b) < PT_BDF_LEN && st->n < PT_MAX_MEMBERS) {
			struct pt_member_state *m = &st->m[st->n++];

			snprintf(m->bdf, sizeof(m->bdf), "%s", b);
			snprintf(m->driver, sizeof(m->driver), "%s",
				 strcmp(c, "-") ? c : "");
			snprintf(m->override, sizeof(m->override), "%s",
				 strcmp(d, "-") ? d : "");
		} else {
			ret = -EINVAL;
			*bad_line = lineno;
			break;
		}
	}
	fclose(f);
	if (!ret && (!st->device[0] || !st->driver[0] || !st->n)) {
		ret = -EINVAL;
		*bad_line = lineno;
	}
	return ret;
}

/* The state file naming @bdf as its device or as one of its members. */
static int state_find(const char *bdf, struct pt_state *st, char *path,
		      size_t len)
{
	const char *dir = env_dir("GPUVIRT_PT_STATE_DIR", PT_STATE_DIR);
	struct dirent *de;
	unsigned int i;
	int bad, ret;
	DIR *d;

	ret = state_path(bdf, path, len);
	if (ret)
		return ret;
	if (!state_read(path, st, &bad))
		return 0;
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);

		if (nl < 7 || strcmp(de->d_name + nl - 6, ".state"))
			continue;
		if (snprintf(path, len, "%s/%s", dir, de->d_name) >= (int)len)
			continue;
		if (state_read(path, st, &bad))
			continue;
		for (i = 0; i < st->n; i++) {
			if (!strcmp(st->m[i].bdf, bdf)) {
				closedir(d);
				return 0;
			}
		}
	}
	closedir(d);
	return -ENOENT;
}

/* Moving drivers ---------------------------------------------------------- */

/* The steps of one assignment, counted for GPUVIRT_PT_FAIL_AT. */
struct pt_mover {
	const char *root;
	unsigned long fail_at;
	unsigned long step;
	int (*write)(void *data, unsigned long step, const char *path,
		     const char *val);	/* pt_assign_req.step_write */
	void *data;
};

static int dev_file(const struct pt_mover *mv, const char *bdf,
		    const char *file, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/sys/bus/pci/devices/%s/%s", mv->root,
			 bdf, file);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* One counted write; the injected failure looks like a refused write. */
static int step_write(struct pt_mover *mv, const char *path, const char *val,
		      const char **what)
{
	mv->step++;
	if (mv->fail_at && mv->step == mv->fail_at) {
		*what = "failure injected by GPUVIRT_PT_FAIL_AT";
		return -EIO;
	}
	*what = NULL;
	if (mv->write)
		return mv->write(mv->data, mv->step, path, val);
	return sysfs_write(path, val);
}

static void current_driver(const struct pt_mover *mv, const char *bdf,
			   char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *slash;
	ssize_t n;

	buf[0] = '\0';
	if (dev_file(mv, bdf, "driver", path, sizeof(path)))
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	slash = strrchr(target, '/');
	snprintf(buf, len, "%.63s", slash ? slash + 1 : target);
}

/*
 * Give @bdf to @drv: driver_override, unbind from its driver, and probe.
 * Returns 0, or -errno with the step in @msg.
 */
static int move_one(struct pt_mover *mv, const char *bdf, const char *drv,
		    char *msg, size_t len)
{
	char path[PATH_MAX], cur[PT_NAME_LEN];
	const char *why = NULL;
	int ret;

	ret = dev_file(mv, bdf, "driver_override", path, sizeof(path));
	if (!ret)
		ret = step_write(mv, path, drv, &why);
	if (ret) {
		snprintf(msg, len, "setting driver_override of %s to %s: %s",
			 bdf, drv, why ? why : strerror(-ret));
		return ret;
	}
	current_driver(mv, bdf, cur, sizeof(cur));
	if (cur[0] && strcmp(cur, drv)) {
		ret = dev_file(mv, bdf, "driver/unbind", path, sizeof(path));
		if (!ret)
			ret = step_write(mv, path, bdf, &why);
		if (ret) {
			snprintf(msg, len, "unbinding %s from %s: %s", bdf, cur,
				 why ? why : strerror(-ret));
			return ret;
		}
	}
	if (strcmp(cur, drv)) {
		snprintf(path, sizeof(path), "%s/sys/bus/pci/drivers_probe",
			 mv->root);
		ret = step_write(mv, path, bdf, &why);
		current_driver(mv, bdf, cur, sizeof(cur));
		/* drivers_probe fails when nothing binds; say what is bound. */
		if (ret && !why && !strcmp(cur, drv))
			ret = 0;
		if (ret || strcmp(cur, drv)) {
			snprintf(msg, len, "binding %s to %s: %s (now %s)", bdf,
				 drv, why ? why : ret ? strerror(-ret) :
				 "the driver did not take it",
				 cur[0] ? cur : "no driver");
			return ret ? ret : -ENODEV;
		}
	}
	return 0;
}

/*
 * A device that refused its host driver after the VFIO driver's reset
 * (a display's driver reading its ID registers before they answer, say):
 * have the PCI core forget it and find it again, as an admin would with
 * remove and rescan, and wait up to 5 s for it and its driver. Leaves the
 * driver it then has in @cur.
 */
static void reenumerate(struct pt_mover *mv, const struct pt_member_state *m,
			char *cur, size_t len)
{
	char path[PATH_MAX];
	int i;

	if (dev_file(mv, m->bdf, "remove", path, sizeof(path)))
		return;
	err_print("note: %s did not take %s back; re-enumerating it (remove and rescan)",
		  m->bdf, m->driver);
	if (sysfs_write(path, "1"))
		return;
	snprintf(path, sizeof(path), "%s/sys/bus/pci/rescan", mv->root);
	if (sysfs_write(path, "1"))
		return;
	for (i = 0; i < 50; i++) {
		current_driver(mv, m->bdf, cur, len);
		if (!strcmp(cur, m->driver))
			return;
		usleep(100000);
	}
}

/*
 * Give @m's device back to its original driver. Not counted: the rollback
 * must not be the step that fails. Returns 0 or -errno with @msg.
 */
static int restore_one(struct pt_mover *mv, const struct pt_member_state *m,
		       char *msg, size_t len)
{
	char path[PATH_MAX], cur[PT_NAME_LEN];
	int ret = 0;

	current_driver(mv, m->bdf, cur, sizeof(cur));
	if (cur[0] && strcmp(cur, m->driver)) {
		if (!dev_file(mv, m->bdf, "driver/unbind", path, sizeof(path)))
			ret = sysfs_write(path, m->bdf);
		if (ret) {
			snprintf(msg, len, "unbinding %s from %s: %s", m->bdf,
				 cur, strerror(-ret));
			return ret;
		}
	}
	if (!dev_file(mv, m->bdf, "driver_override", path, sizeof(path))) {
		ret = sysfs_write(path, m->override[0] ? m->override : "\n");
		if (ret) {
			snprintf(msg, len,
				 "restoring driver_override of %s: %s",
				 m->bdf, strerror(-ret));
			return ret;
		}
	}
	current_driver(mv, m->bdf, cur, sizeof(cur));
	if (!m->driver[0] || !strcmp(cur, m->driver))
		return 0;
	snprintf(path, sizeof(path), "%s/sys/bus/pci/drivers/%s/bind",
		 mv->root, m->driver);
	if (sysfs_write(path, m->bdf)) {
		/* Gone, or refusing bind: let the PCI core pick a driver. */
		snprintf(path, sizeof(path), "%s/sys/bus/pci/drivers_probe",
			 mv->root);
		sysfs_write(path, m->bdf);
	}
	current_driver(mv, m->bdf, cur, sizeof(cur));
	if (!cur[0])
		reenumerate(mv, m, cur, sizeof(cur));
	if (strcmp(cur, m->driver)) {
		snprintf(msg, len, "%s did not go back to %s (now %s)", m->bdf,
			 m->driver, cur[0] ? cur : "no driver");
		return -EIO;
	}
	return 0;
}

/* Undo the first @n moves, last first; reports every failure. */
static int restore_all(struct pt_mover *mv, const struct pt_state *st,
		       unsigned int n)
{
	char msg[512];
	int ret = 0;

	while (n--) {
		if (restore_one(mv, &st->m[n], msg, sizeof(msg))) {
			err_print("rollback: %s", msg);
			ret = -EIO;
		}
	}
	return ret;
}

static int udev_write(const struct pt_state *st)
{
	char path[PATH_MAX], text[PT_MAX_MEMBERS * 200 + 256];
	size_t used;
	unsigned int i;
	int ret;

	ret = make_dirs(env_dir("GPUVIRT_PT_UDEV_DIR", PT_UDEV_DIR));
	if (ret)
		return ret;
	ret = udev_path(st->device, path, sizeof(path));
	if (ret)
		return ret;
	used = (size_t)snprintf(text, sizeof(text),
		"# Written by \"gpuvirtctl pt assign %s persistent\"; removed by \"pt release\".\n"
		"# Claims the devices of its IOMMU group for %s at boot, before a host driver.\n",
		st->device, st->driver);
	for (i = 0; i < st->n && used < sizeof(text); i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
			"ACTION==\"add\", SUBSYSTEM==\"pci\", KERNEL==\"%s\", ATTR{driver_override}=\"%s\", RUN{builtin}+=\"kmod load %s\"\n",
			st->m[i].bdf, st->driver, st->driver);
	if (used >= sizeof(text))
		return -ENOSPC;
	return write_file(path, text);
}

static void print_moves(const char *verb, const struct pt_state *st,
			bool to_vfio, const char *state, const char *rule)
{
	unsigned int i;

	pr_open_object(NULL);
	pr_string("device", "pt", st->device);
	pr_string("action", "", verb);
	pr_string("driver", NULL, to_vfio ? st->driver : "host");
	pr_eol();
	pr_open_array("members");
	for (i = 0; i < st->n; i++) {
		const char *orig = st->m[i].driver[0] ? st->m[i].driver : "none";

		pr_open_object(NULL);
		pr_string("bdf", "member", st->m[i].bdf);
		pr_string("from", NULL, to_vfio ? orig : st->driver);
		pr_string("to", NULL, to_vfio ? st->driver : orig);
		pr_close_object();
		pr_eol();
	}
	pr_close_array();
	if (state)
		pr_string("state", NULL, state);
	if (rule)
		pr_string("udev_rule", "udev-rule", rule);
	pr_eol();
	pr_close_object();
}

/* assign ------------------------------------------------------------------ */

static void refuse(const struct pt_report *r)
{
	unsigned int i, forced = 0;

	err_print("refusing %s:", r->dev.bdf);
	for (i = 0; i < r->n_reasons; i++) {
		if (r->reasons[i].level == PT_LEVEL_NOTE)
			continue;
		forced += r->reasons[i].level == PT_LEVEL_FORCE;
		fprintf(stderr, "  %s: %s\n", pt_level_name(r->reasons[i].level),
			r->reasons[i].text);
	}
	if (forced)
		fputs("  (\"force\" accepts the reasons marked force, at the admin's risk)\n",
		      stderr);
}

/* Is every moving member of @r already on @drv, with this state? */
static bool already_assigned(const struct pt_report *r, const char *drv,
			     const unsigned int *idx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcmp(r->members[idx[i]].driver, drv))
			return false;
	return true;
}

unsigned long pt_fail_at(void)
{
	const char *fail = getenv("GPUVIRT_PT_FAIL_AT");

	return fail && *fail ? strtoul(fail, NULL, 10) : 0;
}

/* Is @drv loaded below @root? Prints the refusal when it is not. */
static bool driver_loaded(const char *root, const char *bdf, const char *drv)
{
	char path[PATH_MAX];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/drivers/%s", root, drv);
	if (!stat(path, &sb))
		return true;
	err_print("refusing %s: driver %s is not loaded (no %s): modprobe %s first",
		  bdf, drv, path, drv);
	return false;
}

int pt_assign(const char *root, const struct pt_assign_req *req,
	      struct pt_state *st, struct pt_paths *paths)
{
	struct pt_request preq = { .force = req->force, .only = req->only };
	struct pt_mover mv = {
		.root = root, .fail_at = req->fail_at,
		.write = req->step_write, .data = req->step_data,
	};
	const char *drv = req->driver;
	char *path = paths->state, *rule = paths->rule;
	char msg[PATH_MAX + 128], err[PATH_MAX + 128];
	unsigned int idx[PT_MAX_MEMBERS], n, i;
	struct pt_report *r;
	struct pt_state *old;
	int ret, bad;

	memset(st, 0, sizeof(*st));
	path[0] = rule[0] = '\0';
	r = calloc(1, sizeof(*r));
	old = calloc(1, sizeof(*old));
	if (!r || !old) {
		err_print("%s", strerror(ENOMEM));
		ret = -1;
		goto out_free;
	}
	if (pt_check(root, req->bdf, &preq, r, err, sizeof(err))) {
		err_print("%s", err);
		ret = -1;
		goto out_free;
	}
	n = pt_moving(r, req->only, idx);

	if (!state_path(r->dev.bdf, path, PATH_MAX) &&
	    !state_read(path, old, &bad)) {
		if (already_assigned(r, old->driver, idx, n) &&
		    !strcmp(old->driver, drv)) {
			err_print("%s is already assigned to %s (%s)",
				  r->dev.bdf, drv, path);
			*st = *old;
			ret = PT_ALREADY;
		} else {
			err_print("%s has an assignment to %s on record (%s): run \"gpuvirtctl pt release %s\" first",
				  r->dev.bdf, old->driver, path, r->dev.bdf);
			ret = -1;
		}
		goto out_free;
	}
	ret = -1;
	if (!r->assignable) {
		refuse(r);
		goto out_free;
	}
	if (!n) {
		err_print("refusing %s: no endpoint to move", r->dev.bdf);
		goto out_free;
	}
	if (!driver_loaded(root, r->dev.bdf, drv))
		goto out_free;

	/* Remember the original drivers before touching anything. */
	snprintf(st->device, sizeof(st->device), "%s", r->dev.bdf);
	snprintf(st->driver, sizeof(st->driver), "%s", drv);
	st->persistent = req->persistent;
	for (i = 0; i < n; i++) {
		const struct pt_dev *m = &r->members[idx[i]];

		snprintf(st->m[i].bdf, sizeof(st->m[i].bdf), "%s", m->bdf);
		snprintf(st->m[i].driver, sizeof(st->m[i].driver), "%s",
			 m->driver);
		snprintf(st->m[i].override, sizeof(st->m[i].override), "%s",
			 m->override);
	}
	st->n = n;
	ret = state_write(st, path, PATH_MAX);
	if (ret) {
		err_print("cannot write the state file %s: %s", path,
			  strerror(-ret));
		ret = -1;
		goto out_free;
	}

	for (i = 0; i < n; i++) {
		ret = move_one(&mv, st->m[i].bdf, drv, msg, sizeof(msg));
		if (ret)
			break;
	}
	if (!ret && req->persistent) {
		const char *why;

		/* Counted like a sysfs write, so a test can fail it. */
		mv.step++;
		why = mv.fail_at && mv.step == mv.fail_at ?
		      "failure injected by GPUVIRT_PT_FAIL_AT" : NULL;
		ret = why ? -EIO : udev_write(st);
		udev_path(st->device, rule, PATH_MAX);
		if (ret) {
			snprintf(msg, sizeof(msg), "writing the udev rule %s: %s",
				 rule, why ? why : strerror(-ret));
			unlink(rule);
			rule[0] = '\0';
			i = n;
		}
	}
	if (ret) {
		err_print("%s; giving every device back to its driver", msg);
		/* The device that failed may be half-moved: undo it too. */
		if (restore_all(&mv, st, i < n ? i + 1 : n))
			err_print("the rollback was not complete: the state stays in %s for \"pt release\"",
				  path);
		else
			unlink(path);
		ret = -1;
	}

out_free:
	free(old);
	free(r);
	return ret;
}

static int cmd_assign(struct ctx *ctx, const void *opts, uint64_t given)
{
	const struct pt_opts *o = opts;
	struct pt_assign_req req = {
		.bdf = NULL,
		.driver = o->driver == PT_TO_VFIO_PCI ? PT_DRV_VFIO_PCI :
						       PT_DRV_GPUVIRT,
		.force = o->force,
		.only = o->only,
		.persistent = o->persistent,
		.fail_at = pt_fail_at(),
	};
	char bdf[PT_BDF_LEN];
	struct pt_paths *paths;
	struct pt_state *st;
	int ret;

	(void)given;
	ret = pt_bdf(o, bdf);
	if (ret)
		return ret;
	req.bdf = bdf;
	st = calloc(1, sizeof(*st));
	paths = calloc(1, sizeof(*paths));
	if (!st || !paths) {
		err_print("%s", strerror(ENOMEM));
		ret = EXIT_RUNTIME;
		goto out_free;
	}
	ret = pt_assign(root_of(ctx), &req, st, paths);
	if (!ret)
		print_moves("assigned", st, true, paths->state,
			    paths->rule[0] ? paths->rule : NULL);
	ret = ret < 0 ? EXIT_RUNTIME : EXIT_OK;

out_free:
	free(paths);
	free(st);
	return ret;
}

/* release ----------------------------------------------------------------- */

int pt_release(const char *root, const char *bdf, struct pt_state *st,
	       struct pt_paths *paths)
{
	struct pt_mover mv = { .root = root };
	char *path = paths->state, *rule = paths->rule, dev[PATH_MAX];
	int ret, bad;

	path[0] = rule[0] = '\0';
	snprintf(dev, sizeof(dev), "%s/sys/bus/pci/devices/%s", root, bdf);
	ret = state_find(bdf, st, path, PATH_MAX);
	if (ret == -EINVAL || (!ret && state_read(path, st, &bad))) {
		err_print("malformed state file %s", path);
		return -1;
	}
	if (ret) {
		state_path(bdf, path, PATH_MAX);
		if (access(dev, F_OK))
			err_print("no PCI device %s (%s does not exist)", bdf,
				  dev);
		else
			err_print("%s was not assigned by gpuvirtctl (no state file %s)",
				  bdf, path);
		return -1;
	}
	if (restore_all(&mv, st, st->n)) {
		err_print("some devices did not go back; the state stays in %s",
			  path);
		return -1;
	}
	if (!udev_path(st->device, rule, PATH_MAX) && unlink(rule) &&
	    errno == ENOENT)
		rule[0] = '\0';
	unlink(path);
	return 0;
}

static int cmd_release(struct ctx *ctx, const void *opts, uint64_t given)
{
	char bdf[PT_BDF_LEN];
	struct pt_paths *paths;
	struct pt_state *st;
	int ret;

	(void)given;
	ret = pt_bdf(opts, bdf);
	if (ret)
		return ret;
	st = calloc(1, sizeof(*st));
	paths = calloc(1, sizeof(*paths));
	if (!st || !paths) {
		err_print("%s", strerror(ENOMEM));
		ret = EXIT_RUNTIME;
		goto out_free;
	}
	ret = pt_release(root_of(ctx), bdf, st, paths);
	if (!ret)
		print_moves("released", st, false, NULL,
			    paths->rule[0] ? paths->rule : NULL);
	ret = ret ? EXIT_RUNTIME : EXIT_OK;

out_free:
	free(paths);
	free(st);
	return ret;
}

/* For "apply" ------------------------------------------------------------- */

int pt_state_lookup(const char *bdf, struct pt_state *st, char *path,
		    size_t len)
{
	return state_find(bdf, st, path, len);
}

int pt_state_list(struct pt_state **list, size_t *n)
{
	const char *dir = env_dir("GPUVIRT_PT_STATE_DIR", PT_STATE_DIR);
	struct pt_state *all = NULL, *more;
	char path[PATH_MAX];
	struct dirent *de;
	int bad;
	DIR *d;

	*list = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);

		if (nl < 7 || strcmp(de->d_name + nl - 6, ".state"))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		more = realloc(all, (*n + 1) * sizeof(*all));
		if (!more) {
			closedir(d);
			free(all);
			*n = 0;
			return -ENOMEM;
		}
		all = more;
		if (state_read(path, &all[*n], &bad)) {
			err_print("ignoring the malformed state file %s (line %d)",
				  path, bad);
			continue;
		}
		(*n)++;
	}
	closedir(d);
	*list = all;
	return 0;
}

bool pt_rule_exists(const char *device)
{
	char path[PATH_MAX];

	return !udev_path(device, path, sizeof(path)) && !access(path, F_OK);
}

void pt_driver_of(const char *root, const char *bdf, char *buf, size_t len)
{
	const struct pt_mover mv = { .root = root };

	current_driver(&mv, bdf, buf, len);
}

static int cmd_show(struct ctx *ctx, const void *opts, uint64_t given)
{
	char bdf[PT_BDF_LEN];
	int ret;

	(void)given;
	ret = pt_bdf(opts, bdf);
	return ret ?: pt_show_run(ctx, bdf);
}

static const struct cmd pt_cmds[] = {
	{ "check", check_args, sizeof(struct pt_opts), cmd_check },
	{ "assign", assign_args, sizeof(struct pt_opts), cmd_assign },
	{ "release", release_args, sizeof(struct pt_opts), cmd_release },
	{ "show", release_args, sizeof(struct pt_opts), cmd_show },
	{ .name = NULL }
};

const struct object pt_object = {
	.name = "pt",
	.cmds = pt_cmds,
};
