// SPDX-License-Identifier: GPL-2.0-only
/*
 * Passthrough preflight: facts and verdict, read below a root prefix; see
 * pt.h. Nothing here prints or writes, so the unit tests run it on fixture
 * trees (selftests/unit/fixtures/pt/).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt.h"

/* Extended capability: Access Control Services (PCIe r6.0, 7.7.11). */
#define PCI_EXT_CAP_ACS		0x000d
#define PCI_ACS_SV		0x0001	/* source validation */
#define PCI_ACS_RR		0x0004	/* P2P request redirect */
#define PCI_ACS_CR		0x0008	/* P2P completion redirect */
#define PCI_ACS_UF		0x0010	/* upstream forwarding */
#define PCI_ACS_WANTED	(PCI_ACS_SV | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF)
#define PCI_CFG_EXT_START	0x100
#define PCI_CFG_EXT_SIZE	4096

/* Files ------------------------------------------------------------------- */

/* Format a path into @buf; -ENAMETOOLONG if it does not fit. */
int path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The first line of @path, newline dropped; -errno if unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf, len - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0) {
		buf[0] = '\0';
		return -EIO;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_hex(const char *path, unsigned long *val)
{
	char buf[32], *end;

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	*val = strtoul(buf, &end, 16);
	return errno || end == buf ? -1 : 0;
}

static int read_uint(const char *path, unsigned int *val)
{
	char buf[32], *end;
	unsigned long v;

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || end == buf || v > UINT32_MAX)
		return -1;
	*val = (unsigned int)v;
	return 0;
}

/* Copy @src into @dst of @len bytes, cut short if needed. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The last component of the symlink @path, "" when it does not exist. */
static void link_base(const char *path, char *buf, size_t len)
{
	char target[PATH_MAX];
	const char *slash;
	ssize_t n;

	buf[0] = '\0';
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	slash = strrchr(target, '/');
	copy_str(buf, len, slash ? slash + 1 : target);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The entries of directory @dir that @keep accepts, sorted; the caller frees
 * each and the array. Returns the count, or -errno.
 */
static int list_dir(const char *dir, bool (*keep)(const char *name),
		    char ***out)
{
	char **names = NULL, **grown;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (keep && !keep(de->d_name)))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				goto err_free;
			names = grown;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto err_free;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	*out = names;
	return (int)n;

err_free:
	while (n)
		free(names[--n]);
	free(names);
	closedir(d);
	return -ENOMEM;
}

static void free_list(char **names, int n)
{
	while (n > 0)
		free(names[--n]);
	free(names);
}

/* Addresses --------------------------------------------------------------- */

/* @n hex digits at @s, followed by @end ('\0' for the end). */
static int hex_field(const char *s, size_t n, char end, unsigned long *val)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -1;
	if (s[n] != end)
		return -1;
	*val = strtoul(s, NULL, 16);
	return 0;
}

static bool looks_like_bdf(const char *s)
{
	unsigned long v;

	return strlen(s) == PT_BDF_LEN - 1 && !hex_field(s, 4, ':', &v) &&
	       !hex_field(s + 5, 2, ':', &v) && !hex_field(s + 8, 2, '.', &v) &&
	       !hex_field(s + 11, 1, '\0', &v);
}

int pt_bdf_parse(const char *in, char out[PT_BDF_LEN], char *err,
		 size_t errlen)
{
	unsigned long dom = 0, bus, dev, fn;
	const char *s = in;
	const char *colon2;

	colon2 = strchr(in, ':') ? strrchr(in, ':') : NULL;
	if (!colon2 || !strchr(colon2, '.')) {
		snprintf(err, errlen,
			 "\"%s\" is not a PCI address (expected DDDD:BB:DD.F, as 0000:01:00.0)",
			 in);
		return -1;
	}
	if (colon2 != strchr(in, ':')) {
		/* A domain is given. */
		if (hex_field(s, 4, ':', &dom)) {
			snprintf(err, errlen,
				 "\"%s\": the domain must be 4 hex digits (DDDD:BB:DD.F)",
				 in);
			return -1;
		}
		s += 5;
	}
	if (hex_field(s, 2, ':', &bus)) {
		snprintf(err, errlen,
			 "\"%s\": the bus must be 2 hex digits (DDDD:BB:DD.F)",
			 in);
		return -1;
	}
	if (hex_field(s + 3, 2, '.', &dev) || dev > 0x1f) {
		snprintf(err, errlen,
			 "\"%s\": the device must be 2 hex digits from 00 to 1f (DDDD:BB:DD.F)",
			 in);
		return -1;
	}
	if (!isdigit((unsigned char)s[6]) || s[7] != '\0' ||
	    (fn = (unsigned long)(s[6] - '0')) > 7) {
		snprintf(err, errlen,
			 "\"%s\": the function must be one digit from 0 to 7 (DDDD:BB:DD.F)",
			 in);
		return -1;
	}
	snprintf(out, PT_BDF_LEN, "%04lx:%02lx:%02lx.%lu", dom, bus, dev, fn);
	return 0;
}

/* Classes and drivers ----------------------------------------------------- */

bool pt_driver_is_vfio(const char *drv)
{
	return !strcmp(drv, PT_DRV_VFIO_PCI) || !strcmp(drv, PT_DRV_GPUVIRT) ||
	       !strcmp(drv, PT_DRV_STUB);
}

bool pt_class_is_bridge(uint32_t class)
{
	/* PCI-to-PCI and semi-transparent PCI-to-PCI bridges. */
	return (class >> 8) == 0x0604 || (class >> 8) == 0x0609;
}

/* Host and ISA/LPC bridges: chipset functions the host runs on. */
static bool class_is_chipset(uint32_t class)
{
	return (class >> 8) == 0x0600 || (class >> 8) == 0x0601;
}

const char *pt_role_name(enum pt_role role)
{
	static const char *const names[] = {
		[PT_ROLE_TARGET] = "target",
		[PT_ROLE_SLOT] = "slot",
		[PT_ROLE_OTHER] = "other",
		[PT_ROLE_BRIDGE] = "bridge",
	};

	return names[role];
}

const char *pt_acs_name(enum pt_acs acs)
{
	static const char *const names[] = {
		[PT_ACS_UNKNOWN] = "unknown",
		[PT_ACS_NONE] = "none",
		[PT_ACS_OFF] = "off",
		[PT_ACS_ON] = "on",
	};

	return names[acs];
}

const char *pt_level_name(enum pt_level level)
{
	static const char *const names[] = {
		[PT_LEVEL_NOTE] = "note",
		[PT_LEVEL_FORCE] = "force",
		[PT_LEVEL_BLOCK] = "block",
	};

	return names[level];
}

const char *pt_tristate_name(enum pt_tristate t)
{
	static const char *const names[] = {
		[PT_UNKNOWN] = "unknown",
		[PT_OFF] = "off",
		[PT_ON] = "on",
	};

	return names[t];
}

/* Devices ----------------------------------------------------------------- */

static int dev_path(const char *root, const char *bdf, const char *file,
		    char *buf, size_t len)
{
	return path_fmt(buf, len, "%s/sys/bus/pci/devices/%s%s%s", root, bdf,
			file ? "/" : "", file ? file : "");
}

/* Read one device's identity, driver and group; -1 if it does not exist. */
static int read_dev(const char *root, const char *bdf, struct pt_dev *d)
{
	char path[PATH_MAX], buf[PT_NAME_LEN];
	unsigned long v;

	memset(d, 0, sizeof(*d));
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->group = -1;
	if (dev_path(root, bdf, "class", path, sizeof(path)) ||
	    read_hex(path, &v))
		return -1;
	d->class = (uint32_t)v;
	if (!dev_path(root, bdf, "vendor", path, sizeof(path)) &&
	    !read_hex(path, &v))
		d->vendor = (uint16_t)v;
	if (!dev_path(root, bdf, "device", path, sizeof(path)) &&
	    !read_hex(path, &v))
		d->device = (uint16_t)v;
	if (!dev_path(root, bdf, "driver", path, sizeof(path)))
		link_base(path, d->driver, sizeof(d->driver));
	if (!dev_path(root, bdf, "driver_override", path, sizeof(path)) &&
	    !read_line(path, buf, sizeof(buf)) && strcmp(buf, "(null)"))
		snprintf(d->override, sizeof(d->override), "%s", buf);
	if (!dev_path(root, bdf, "iommu_group", path, sizeof(path))) {
		link_base(path, buf, sizeof(buf));
		if (buf[0])
			d->group = atoi(buf);
	}
	return 0;
}

/* Same domain, bus and device: functions of one slot. */
static bool same_slot(const char *a, const char *b)
{
	return !strncmp(a, b, 10);
}

/* Reasons ----------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static void reason(struct pt_report *r, enum pt_level level,
		   const char *fmt, ...)
{
	struct pt_reason *rs;
	va_list ap;

	if (r->n_reasons >= PT_MAX_REASONS)
		return;
	rs = &r->reasons[r->n_reasons++];
	rs->level = level;
	va_start(ap, fmt);
	vsnprintf(rs->text, sizeof(rs->text), fmt, ap);
	va_end(ap);
}

/* Facts ------------------------------------------------------------------- */

static bool keep_bdf(const char *name)
{
	return looks_like_bdf(name);
}

static void read_iommu(const char *root, struct pt_report *r)
{
	char path[PATH_MAX], buf[4096];
	char **names;
	int i, n;
	FILE *f;

	path_fmt(path, sizeof(path), "%s/sys/kernel/iommu_groups", root);
	n = list_dir(path, NULL, &names);
	r->iommu = n > 0;
	free_list(names, n);

	path_fmt(path, sizeof(path), "%s/sys/class/iommu", root);
	n = list_dir(path, NULL, &names);
	for (i = 0; i < n; i++) {
		size_t used = strlen(r->units);

		snprintf(r->units + used, sizeof(r->units) - used, "%s%s",
			 used ? " " : "", names[i]);
	}
	free_list(names, n);

	/*
	 * Interrupt remapping: when it is on, the x86 MSI irqchips are the
	 * remapping ones, named "IR-PCI-MSI" (and "IR-IO-APIC") in
	 * /proc/interrupts, which anyone can read. Only "unknown" when the
	 * file cannot be read at all.
	 */
	r->irq_remap = PT_UNKNOWN;
	path_fmt(path, sizeof(path), "%s/proc/interrupts", root);
	f = fopen(path, "re");
	if (!f)
		return;
	r->irq_remap = PT_OFF;
	while (fgets(buf, sizeof(buf), f)) {
		if (strstr(buf, " IR-")) {
			r->irq_remap = PT_ON;
			break;
		}
	}
	fclose(f);
}

/* ACS of one port, from its config space (beyond 64 bytes needs root). */
static enum pt_acs read_acs(const char *root, const char *bdf)
{
	unsigned char cfg[PCI_CFG_EXT_SIZE];
	char path[PATH_MAX];
	unsigned int off, hops;
	ssize_t n;
	int fd;

	if (dev_path(root, bdf, "config", path, sizeof(path)))
		return PT_ACS_UNKNOWN;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PT_ACS_UNKNOWN;
	n = pread(fd, cfg, sizeof(cfg), 0);
	close(fd);
	if (n < PCI_CFG_EXT_START + 4)
		return PT_ACS_UNKNOWN;

	for (off = PCI_CFG_EXT_START, hops = 0;
	     off >= PCI_CFG_EXT_START && off + 8 <= (unsigned int)n &&
	     hops < 256; hops++) {
		uint32_t hdr = cfg[off] | cfg[off + 1] << 8 |
			       cfg[off + 2] << 16 | (uint32_t)cfg[off + 3] << 24;
		if (hdr == 0 || hdr == 0xffffffff)
			break;
		if ((hdr & 0xffff) == PCI_EXT_CAP_ACS) {
			uint16_t cap = cfg[off + 4] | cfg[off + 5] << 8;
			uint16_t ctl = cfg[off + 6] | cfg[off + 7] << 8;

			cap &= PCI_ACS_WANTED;
			return cap && (ctl & cap) == cap ? PT_ACS_ON :
							   PT_ACS_OFF;
		}
		off = (hdr >> 20) & 0xffc;
	}
	return PT_ACS_NONE;
}

/*
 * The ports between the device and its root bus: the PCI addresses in the
 * device's real path, nearest first.
 */
static void read_ports(const char *root, struct pt_report *r)
{
	char path[PATH_MAX], real[PATH_MAX], *comp[64], *save = NULL, *tok;
	unsigned int nc = 0;
	int i;

	if (dev_path(root, r->dev.bdf, NULL, path, sizeof(path)) ||
	    !realpath(path, real))
		return;
	for (tok = strtok_r(real, "/", &save); tok && nc < 64;
	     tok = strtok_r(NULL, "/", &save))
		comp[nc++] = tok;
	/* The last component is the device itself. */
	for (i = (int)nc - 2; i >= 0 && r->n_ports < PT_MAX_PORTS; i--) {
		struct pt_port *p;

		if (!looks_like_bdf(comp[i]))
			break;
		p = &r->ports[r->n_ports++];
		snprintf(p->bdf, sizeof(p->bdf), "%s", comp[i]);
		p->acs = read_acs(root, p->bdf);
	}
}

/* The framebuffer on the device, and whether fbcon is bound at all. */
static void read_console(const char *root, struct pt_report *r)
{
	char path[PATH_MAX], dev_real[PATH_MAX], fb_real[PATH_MAX];
	long first_fb = -1, dev_fb = -1;
	char buf[128];
	bool fbcon = false;
	char **names;
	int i, n;

	path_fmt(path, sizeof(path), "%s/sys/class/vtconsole", root);
	n = list_dir(path, NULL, &names);
	for (i = 0; i < n; i++) {
		path_fmt(path, sizeof(path), "%s/sys/class/vtconsole/%s/name",
			 root, names[i]);
		if (read_line(path, buf, sizeof(buf)) ||
		    !strstr(buf, "frame buffer"))
			continue;
		path_fmt(path, sizeof(path), "%s/sys/class/vtconsole/%s/bind",
			 root, names[i]);
		/* No bind file: take it as bound. */
		if (read_line(path, buf, sizeof(buf)) || !strcmp(buf, "1"))
			fbcon = true;
	}
	free_list(names, n);

	if (dev_path(root, r->dev.bdf, NULL, path, sizeof(path)) ||
	    !realpath(path, dev_real))
		return;
	/*
	 * fbcon maps every console to the first framebuffer registered unless
	 * told otherwise (fbcon=map:), so the lowest-numbered one is taken as
	 * the console's.
	 */
	path_fmt(path, sizeof(path), "%s/sys/class/graphics", root);
	n = list_dir(path, NULL, &names);
	for (i = 0; i < n; i++) {
		char *end;
		long num;

		if (strncmp(names[i], "fb", 2))
			continue;
		num = strtol(names[i] + 2, &end, 10);
		if (end == names[i] + 2 || *end)
			continue;
		if (first_fb < 0 || num < first_fb)
			first_fb = num;
		path_fmt(path, sizeof(path), "%s/sys/class/graphics/%s/device",
			 root, names[i]);
		if (r->fb[0] || !realpath(path, fb_real) ||
		    strcmp(fb_real, dev_real))
			continue;
		snprintf(r->fb, sizeof(r->fb), "%s", names[i]);
		dev_fb = num;
	}
	r->console = fbcon && dev_fb >= 0 && dev_fb == first_fb;
	free_list(names, n);
}

static void read_target_extras(const char *root, struct pt_report *r)
{
	const char *bdf = r->dev.bdf;
	char path[PATH_MAX], buf[PT_NAME_LEN];
	unsigned int v;

	if (!dev_path(root, bdf, "reset_method", path, sizeof(path)) &&
	    !read_line(path, buf, sizeof(buf))) {
		const char *p;

		r->reset_file = true;
		snprintf(r->reset_methods, sizeof(r->reset_methods), "%s",
			 buf);
		/* Blank or whitespace only means no method. */
		for (p = r->reset_methods; *p == ' '; p++)
			;
		if (!*p)
			r->reset_methods[0] = '\0';
	}
	if (!dev_path(root, bdf, "boot_vga", path, sizeof(path)) &&
	    !read_uint(path, &v))
		r->boot_vga = v == 1;
	if (!dev_path(root, bdf, "sriov_totalvfs", path, sizeof(path)) &&
	    !read_uint(path, &r->totalvfs)) {
		r->sriov = true;
		if (!dev_path(root, bdf, "sriov_numvfs", path, sizeof(path)))
			read_uint(path, &r->numvfs);
	}
	if (!dev_path(root, bdf, "physfn", path, sizeof(path)))
		link_base(path, r->physfn, sizeof(r->physfn));
	r->host_driver = r->dev.driver[0] && !pt_driver_is_vfio(r->dev.driver);
	read_console(root, r);
	read_ports(root, r);
}

static void read_group(const char *root, struct pt_report *r)
{
	char path[PATH_MAX];
	char **names;
	int i, n;

	if (r->group < 0)
		return;
	path_fmt(path, sizeof(path), "%s/sys/kernel/iommu_groups/%d/devices",
		 root, r->group);
	n = list_dir(path, keep_bdf, &names);
	for (i = 0; i < n && r->n_members < PT_MAX_MEMBERS; i++) {
		struct pt_dev *m = &r->members[r->n_members];

		if (read_dev(root, names[i], m))
			continue;
		if (!strcmp(m->bdf, r->dev.bdf))
			m->role = PT_ROLE_TARGET;
		else if (pt_class_is_bridge(m->class))
			m->role = PT_ROLE_BRIDGE;
		else if (same_slot(m->bdf, r->dev.bdf))
			m->role = PT_ROLE_SLOT;
		else
			m->role = PT_ROLE_OTHER;
		r->n_members++;
	}
	free_list(names, n);
}

static void read_slot(const char *root, struct pt_report *r)
{
	char path[PATH_MAX];
	char **names;
	int i, n;

	path_fmt(path, sizeof(path), "%s/sys/bus/pci/devices", root);
	n = list_dir(path, keep_bdf, &names);
	for (i = 0; i < n; i++) {
		if (r->n_slot >= sizeof(r->slot) / sizeof(r->slot[0]))
			break;
		if (!same_slot(names[i], r->dev.bdf) ||
		    !strcmp(names[i], r->dev.bdf))
			continue;
		if (!read_dev(root, names[i], &r->slot[r->n_slot]))
			r->n_slot++;
	}
	free_list(names, n);
}

/* Verdict ----------------------------------------------------------------- */

static const char *drv_or_none(const char *drv)
{
	return drv[0] ? drv : "no driver";
}

static void judge_member(struct pt_report *r, const struct pt_dev *m,
			 const struct pt_request *req)
{
	if (m->role == PT_ROLE_BRIDGE)
		return;
	if (req->only && m->role != PT_ROLE_TARGET) {
		/* Left behind: fine only if the host cannot use it. */
		if (m->driver[0] && !pt_driver_is_vfio(m->driver))
			reason(r, PT_LEVEL_BLOCK,
			       "%s is in the same IOMMU group %d and would stay bound to %s: a group moves as a whole (assign without \"only\")",
			       m->bdf, r->group, m->driver);
		return;
	}
	if (m->role == PT_ROLE_OTHER && m->driver[0] &&
	    !pt_driver_is_vfio(m->driver))
		reason(r, PT_LEVEL_FORCE,
		       "%s (class 0x%06x) shares IOMMU group %d but is another device, used by host driver %s",
		       m->bdf, m->class, r->group, m->driver);
	if (class_is_chipset(m->class) && m->driver[0] &&
	    !pt_driver_is_vfio(m->driver))
		reason(r, PT_LEVEL_FORCE,
		       "%s is a chipset %s bridge (class 0x%06x, %s) that the host relies on",
		       m->bdf, (m->class >> 8) == 0x0600 ? "host" : "ISA/LPC",
		       m->class, m->driver);
}

static void judge(const char *root, struct pt_report *r,
		  const struct pt_request *req)
{
	char path[PATH_MAX];
	unsigned int i, v;

	if (!r->iommu) {
		reason(r, PT_LEVEL_BLOCK,
		       "the IOMMU is off (no IOMMU groups): boot with intel_iommu=on or amd_iommu=on");
	} else if (r->group < 0) {
		reason(r, PT_LEVEL_BLOCK, "%s is in no IOMMU group",
		       r->dev.bdf);
	}
	if (pt_class_is_bridge(r->dev.class))
		reason(r, PT_LEVEL_BLOCK,
		       "%s is a PCI bridge (class 0x%06x): bridges stay with the host",
		       r->dev.bdf, r->dev.class);
	if (r->sriov && r->numvfs)
		reason(r, PT_LEVEL_BLOCK,
		       "%s has %u SR-IOV virtual functions enabled, which need its driver: disable them first (echo 0 > sriov_numvfs)",
		       r->dev.bdf, r->numvfs);

	for (i = 0; i < r->n_members; i++) {
		const struct pt_dev *m = &r->members[i];

		judge_member(r, m, req);
		if (m->role == PT_ROLE_BRIDGE ||
		    (req->only && m->role != PT_ROLE_TARGET))
			continue;
		/* boot_vga of every member that moves, not only the target. */
		if (m->role != PT_ROLE_TARGET &&
		    !dev_path(root, m->bdf, "boot_vga", path, sizeof(path)) &&
		    !read_uint(path, &v) && v == 1)
			reason(r, PT_LEVEL_FORCE,
			       "%s, in the same group, is the boot VGA device",
			       m->bdf);
	}
	if (r->boot_vga)
		reason(r, PT_LEVEL_FORCE,
		       "%s is the boot VGA device: the firmware console started on it",
		       r->dev.bdf);
	if (r->console)
		reason(r, PT_LEVEL_FORCE,
		       "the host console (fbcon) draws on %s through %s",
		       r->dev.bdf, r->fb);

	/* Notes: worth knowing, but no reason to refuse. */
	if (r->host_driver && !pt_class_is_bridge(r->dev.class))
		reason(r, PT_LEVEL_NOTE,
		       "%s is in use by host driver %s, which assign unbinds",
		       r->dev.bdf, r->dev.driver);
	if (!r->reset_methods[0])
		reason(r, PT_LEVEL_NOTE,
		       "%s has no reset method%s: state may carry over from one VM to the next",
		       r->dev.bdf,
		       r->reset_file ? " (reset_method is empty)" :
				       " (no reset_method file)");
	if (r->iommu && r->irq_remap == PT_OFF)
		reason(r, PT_LEVEL_NOTE,
		       "interrupt remapping is off: VFIO refuses the device unless vfio_iommu_type1 allow_unsafe_interrupts=1");
	if (r->physfn[0])
		reason(r, PT_LEVEL_NOTE,
		       "%s is an SR-IOV virtual function of %s", r->dev.bdf,
		       r->physfn);
	for (i = 0; i < r->n_slot; i++) {
		const struct pt_dev *s = &r->slot[i];

		if (s->group != r->group)
			reason(r, PT_LEVEL_NOTE,
			       "%s, in the same slot, is in another IOMMU group (%d) and stays with %s",
			       s->bdf, s->group, drv_or_none(s->driver));
	}
	for (i = 0; i < r->n_ports; i++) {
		if (r->ports[i].acs == PT_ACS_NONE || r->ports[i].acs == PT_ACS_OFF)
			reason(r, PT_LEVEL_NOTE,
			       "upstream port %s has ACS %s: the devices below it cannot be isolated from each other",
			       r->ports[i].bdf, pt_acs_name(r->ports[i].acs));
	}

	r->assignable = true;
	for (i = 0; i < r->n_reasons; i++) {
		if (r->reasons[i].level == PT_LEVEL_BLOCK ||
		    (r->reasons[i].level == PT_LEVEL_FORCE && !req->force))
			r->assignable = false;
	}
}

unsigned int pt_moving(const struct pt_report *r, bool only,
		       unsigned int idx[PT_MAX_MEMBERS])
{
	unsigned int i, n = 0;

	for (i = 0; i < r->n_members; i++) {
		const struct pt_dev *m = &r->members[i];

		if (m->role == PT_ROLE_BRIDGE ||
		    (only && m->role != PT_ROLE_TARGET))
			continue;
		idx[n++] = i;
	}
	return n;
}

int pt_check(const char *root, const char *bdf, const struct pt_request *req,
	     struct pt_report *r, char *err, size_t errlen)
{
	char path[PATH_MAX];

	memset(r, 0, sizeof(*r));
	if (!root)
		root = "";
	if (dev_path(root, bdf, NULL, path, sizeof(path)) ||
	    access(path, F_OK)) {
		snprintf(err, errlen, "no PCI device %s (%s does not exist)",
			 bdf, path);
		return -1;
	}
	if (read_dev(root, bdf, &r->dev)) {
		snprintf(err, errlen, "cannot read the class of %s in %s", bdf,
			 path);
		return -1;
	}
	r->dev.role = PT_ROLE_TARGET;
	r->group = r->dev.group;
	read_iommu(root, r);
	read_group(root, r);
	read_slot(root, r);
	read_target_extras(root, r);
	judge(root, r, req);
	return 0;
}
