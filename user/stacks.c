// SPDX-License-Identifier: GPL-2.0-only
/*
 * Discovery of the vGPU stacks other than gpuvirt's own, below a root
 * prefix; see stacks.h. Nothing here writes (stack_mdev.c and
 * stack_nvvf.c do) or prints, so the unit tests run it on the fixture trees
 * of selftests/unit/fixtures/stacks/.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pt.h"
#include "stacks.h"
#include "sysfs.h"

static const char *const kind_names[] = {
	[STK_GPUVIRT]	= "gpuvirt",
	[STK_MDEV]	= "mdev",
	[STK_NVVF]	= "nvidia-vf",
	[STK_SRIOV]	= "sriov",
};

void stk_copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

const char *stk_kind_name(enum stk_kind kind)
{
	return kind_names[kind];
}

int stk_kind_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(name, kind_names[i]))
			return (int)i;
	return -1;
}

/* Files ------------------------------------------------------------------- */

/* The first line of @dir/@file, or "" if it cannot be read. */
static int read_str(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	buf[0] = '\0';
	if (path_fmt(path, sizeof(path), "%s/%s", dir, file))
		return -ENAMETOOLONG;
	return sysfs_read_line(path, buf, len);
}

/*
 * A description: GVT-g writes one "key: value" a line, NVIDIA one line of
 * "key=value, ..."; the lines are joined with ", " into one.
 */
static void read_desc(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX], line[256];
	size_t used = 0;
	FILE *f;

	buf[0] = '\0';
	if (path_fmt(path, sizeof(path), "%s/description", dir))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && used + 1 < len) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", line);
		if (used >= len)
			used = len - 1;
	}
	fclose(f);
}

/* A decimal or 0x number in @dir/@file; @dflt if absent or malformed. */
static long read_num(const char *dir, const char *file, long dflt)
{
	char buf[32], *end;
	long v;

	if (read_str(dir, file, buf, sizeof(buf)) || !buf[0])
		return dflt;
	errno = 0;
	v = strtol(buf, &end, 0);
	return errno || *end ? dflt : v;
}

static bool exists(const char *dir, const char *file)
{
	char path[PATH_MAX];
	struct stat st;

	return !path_fmt(path, sizeof(path), "%s/%s", dir, file) &&
	       !stat(path, &st);
}

/* The last component of the symlink @dir/@file, or "" if none. */
static void link_base(const char *dir, const char *file, char *buf,
		      size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *slash;
	ssize_t n;

	buf[0] = '\0';
	if (path_fmt(path, sizeof(path), "%s/%s", dir, file))
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return;
	target[n] = '\0';
	slash = strrchr(target, '/');
	stk_copy(buf, len, slash ? slash + 1 : target);
}

/* The names in @dir that are not dot files, sorted as versions. */
static int list_dir(const char *dir, char ***names, unsigned int *n)
{
	const struct dirent *de;
	char **v = NULL, **nv;
	unsigned int cnt = 0, i, j;
	DIR *d;

	*names = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv)
			goto err_nomem;
		v = nv;
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			goto err_nomem;
		cnt++;
	}
	closedir(d);
	/* insertion sort: directories here hold a few dozen entries */
	for (i = 1; i < cnt; i++) {
		char *x = v[i];

		for (j = i; j > 0 && strverscmp(v[j - 1], x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	*names = v;
	*n = cnt;
	return 0;

err_nomem:
	closedir(d);
	while (cnt)
		free(v[--cnt]);
	free(v);
	return -ENOMEM;
}

static void free_names(char **names, unsigned int n)
{
	while (n)
		free(names[--n]);
	free(names);
}

/* Use by a VMM --------------------------------------------------------------- */

/*
 * The VFIO files open in any process below @h->root/proc ("/dev/vfio/N",
 * "/dev/vfio/devices/vfioX"), read once per scan: a host has many
 * processes and a PF many VFs.
 */
static void load_vfio_open(struct stk_host *h)
{
	char dir[PATH_MAX], fddir[PATH_MAX], path[PATH_MAX], target[PATH_MAX];
	const struct dirent *p, *f;
	DIR *pd, *fd;
	char **v;
	ssize_t n;

	h->vfio_scanned = true;
	if (path_fmt(dir, sizeof(dir), "%s/proc", h->root))
		return;
	pd = opendir(dir);
	if (!pd)
		return;
	while ((p = readdir(pd))) {
		if (!isdigit((unsigned char)p->d_name[0]) ||
		    path_fmt(fddir, sizeof(fddir), "%s/%s/fd", dir, p->d_name))
			continue;
		fd = opendir(fddir);
		if (!fd)
			continue;
		while ((f = readdir(fd))) {
			if (f->d_name[0] == '.' ||
			    path_fmt(path, sizeof(path), "%s/%s", fddir, f->d_name))
				continue;
			n = readlink(path, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (strncmp(target, "/dev/vfio/", 10))
				continue;
			v = realloc(h->vfio_open,
				    (h->n_vfio_open + 1) * sizeof(*v));
			if (!v) {
				h->vfio_partial = true;
				break;
			}
			h->vfio_open = v;
			v[h->n_vfio_open] = strdup(target);
			if (v[h->n_vfio_open])
				h->n_vfio_open++;
			else
				h->vfio_partial = true;
		}
		closedir(fd);
	}
	closedir(pd);
}

static bool vfio_is_open(struct stk_host *h, const char *want)
{
	unsigned int i;

	if (!h->vfio_scanned)
		load_vfio_open(h);
	if (h->vfio_partial)
		return true;	/* not known: never touch it */
	for (i = 0; i < h->n_vfio_open; i++)
		if (!strcmp(h->vfio_open[i], want))
			return true;
	return false;
}

/*
 * Is the device at @devpath in use by a VMM? True when a process holds
 * open its VFIO group (/dev/vfio/N, N its iommu_group) or its VFIO cdev
 * (/dev/vfio/devices/vfioX, 6.6 and later).
 */
static bool dev_in_use(struct stk_host *h, const char *devpath)
{
	char group[32], want[300], vdir[PATH_MAX];
	bool used = false;
	char **names;
	unsigned int n;

	link_base(devpath, "iommu_group", group, sizeof(group));
	if (group[0]) {
		snprintf(want, sizeof(want), "/dev/vfio/%s", group);
		used = vfio_is_open(h, want);
	}
	if (!used && !path_fmt(vdir, sizeof(vdir), "%s/vfio-dev", devpath) &&
	    !list_dir(vdir, &names, &n)) {
		if (n) {
			snprintf(want, sizeof(want), "/dev/vfio/devices/%s",
				 names[0]);
			used = vfio_is_open(h, want);
		}
		free_names(names, n);
	}
	return used;
}

/* Building the host ----------------------------------------------------------- */

static struct stk_dev *add_dev(struct stk_host *h, enum stk_kind kind,
			       const char *name)
{
	struct stk_dev *v, *d;

	v = realloc(h->devs, (h->n_devs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	h->devs = v;
	d = &h->devs[h->n_devs++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->numvfs = -1;
	d->totalvfs = -1;
	d->pf_numvfs = -1;
	d->pf_totalvfs = -1;
	d->vf_offset = -1;
	d->vf_stride = -1;
	stk_copy(d->version, sizeof(d->version), "-");
	stk_copy(d->name, sizeof(d->name), name);
	return d;
}

static struct stk_type *add_type(struct stk_dev *d)
{
	struct stk_type *v, *t;

	v = realloc(d->types, (d->n_types + 1) * sizeof(*v));
	if (!v)
		return NULL;
	d->types = v;
	t = &d->types[d->n_types++];
	memset(t, 0, sizeof(*t));
	return t;
}

static struct stk_vgpu *add_vgpu(struct stk_host *h, enum stk_kind kind)
{
	struct stk_vgpu *v, *g;

	v = realloc(h->vgpus, (h->n_vgpus + 1) * sizeof(*v));
	if (!v)
		return NULL;
	h->vgpus = v;
	g = &h->vgpus[h->n_vgpus++];
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->gi = -1;
	g->placement = -1;
	return g;
}

/* mdev ------------------------------------------------------------------------ */

/*
 * An mdev parent, as the kernel's mdev core lays it out
 * (Documentation/driver-api/vfio-mediated-device.rst):
 *
 *   /sys/class/mdev_bus/<parent>/mdev_supported_types/<type-id>/
 *           name  description  device_api  available_instances  create
 *           devices/<uuid>
 *   /sys/bus/mdev/devices/<uuid>/{mdev_type -> <type dir>, remove}
 *
 * <type-id> is "<driver>-<type>": "nvidia-558" from NVIDIA's legacy vGPU
 * manager, whose "name" reads "GRID A100-4C" and "description"
 * "num_heads=1, frl_config=60, framebuffer=4096M, ..." (NVIDIA vGPU user
 * guide, "Creating an NVIDIA vGPU on a Linux with KVM hypervisor"); on
 * Ampere with SR-IOV each VF is a parent of its own with one instance
 * (available_instances 1 or 0). Intel GVT-g's ids are "i915-GVTg_V5_<N>"
 * with descriptions of low_gm_size, high_gm_size, fence, resolution and
 * weight (drivers/gpu/drm/i915/gvt/kvmgt.c). A parent of ours carries
 * gpuvirt's attribute group, <parent>/gpuvirt/, and is left to netlink.
 */
static int scan_mdev_types(const char *pdir, struct stk_dev *d)
{
	char tdir[PATH_MAX], dir[PATH_MAX];
	struct stk_type *t;
	char **names;
	unsigned int n, i;
	int err = 0;

	if (path_fmt(tdir, sizeof(tdir), "%s/mdev_supported_types", pdir) ||
	    list_dir(tdir, &names, &n))
		return 0;
	for (i = 0; i < n && !err; i++) {
		if (path_fmt(dir, sizeof(dir), "%s/%s", tdir, names[i]))
			continue;
		t = add_type(d);
		if (!t) {
			err = -ENOMEM;
			break;
		}
		stk_copy(t->id, sizeof(t->id), names[i]);
		if (read_str(dir, "name", t->name, sizeof(t->name)) ||
		    !t->name[0])
			stk_copy(t->name, sizeof(t->name), names[i]);
		read_desc(dir, t->description, sizeof(t->description));
		read_str(dir, "device_api", t->device_api,
			 sizeof(t->device_api));
		t->available = (int)read_num(dir, "available_instances", -1);
	}
	free_names(names, n);
	return err;
}

static int scan_mdev(const char *root, struct stk_host *h)
{
	char bus[PATH_MAX], pdir[PATH_MAX];
	struct stk_dev *d;
	char **names;
	unsigned int n, i;
	int err = 0;

	if (path_fmt(bus, sizeof(bus), "%s/sys/class/mdev_bus", root) ||
	    list_dir(bus, &names, &n))
		return 0;	/* no mdev core loaded: no parents */
	for (i = 0; i < n && !err; i++) {
		if (path_fmt(pdir, sizeof(pdir), "%s/%s", bus, names[i]))
			continue;
		if (exists(pdir, "gpuvirt")) {
			char (*v)[STK_NAME_LEN];

			v = realloc(h->ours, (h->n_ours + 1) * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			h->ours = v;
			stk_copy(v[h->n_ours++], STK_NAME_LEN, names[i]);
			continue;
		}
		d = add_dev(h, STK_MDEV, names[i]);
		if (!d) {
			err = -ENOMEM;
			break;
		}
		link_base(pdir, "driver", d->driver, sizeof(d->driver));
		link_base(pdir, "physfn", d->pf, sizeof(d->pf));
		err = scan_mdev_types(pdir, d);
	}
	free_names(names, n);
	return err;
}

static struct stk_dev *find_kind(struct stk_host *h, enum stk_kind kind,
				 const char *name)
{
	unsigned int i;

	for (i = 0; i < h->n_devs; i++)
		if (h->devs[i].kind == kind && !strcmp(h->devs[i].name, name))
			return &h->devs[i];
	return NULL;
}

static const struct stk_type *find_type_id(const struct stk_dev *d,
					   const char *id)
{
	unsigned int i;

	for (i = 0; i < d->n_types; i++)
		if (!strcmp(d->types[i].id, id))
			return &d->types[i];
	return NULL;
}

/* The mdev devices of the parents found: /sys/bus/mdev/devices/<uuid>. */
static int scan_mdev_vgpus(const char *root, struct stk_host *h)
{
	char dir[PATH_MAX], path[PATH_MAX], real[PATH_MAX], parent[PATH_MAX];
	const struct stk_type *t;
	const struct stk_dev *d;
	struct stk_vgpu *g;
	const char *slash;
	char **names;
	unsigned int n, i;
	int err = 0;

	if (path_fmt(dir, sizeof(dir), "%s/sys/bus/mdev/devices", root) ||
	    list_dir(dir, &names, &n))
		return 0;
	for (i = 0; i < n && !err; i++) {
		if (path_fmt(path, sizeof(path), "%s/%s", dir, names[i]) ||
		    !realpath(path, real))
			continue;
		/* the device sits in its parent's directory */
		stk_copy(parent, sizeof(parent), real);
		*strrchr(parent, '/') = '\0';
		slash = strrchr(parent, '/');
		d = find_kind(h, STK_MDEV, slash ? slash + 1 : parent);
		if (!d || strlen(names[i]) >= UNITS_UUID_LEN)
			continue;	/* one of ours, or not a UUID */
		g = add_vgpu(h, STK_MDEV);
		if (!g) {
			err = -ENOMEM;
			break;
		}
		stk_copy(g->handle, sizeof(g->handle), names[i]);
		stk_copy(g->dev, sizeof(g->dev), d->name);
		link_base(real, "mdev_type", g->type_id, sizeof(g->type_id));
		t = find_type_id(d, g->type_id);
		snprintf(g->type_name, sizeof(g->type_name), "%s",
			 t ? t->name : g->type_id);
		g->in_use = dev_in_use(h, real);
	}
	free_names(names, n);
	return err;
}

/* nvidia-vf and sriov --------------------------------------------------------- */

/*
 * NVIDIA's vendor-specific VFIO vGPUs (vGPU 17 and later; Ada, Hopper,
 * Blackwell). The host driver enables the PF's VFs ("sriov-manage -e"),
 * and each VF carries
 *
 *   /sys/bus/pci/devices/<VF>/nvidia/creatable_vgpu_types
 *   /sys/bus/pci/devices/<VF>/nvidia/current_vgpu_type
 *   /sys/bus/pci/devices/<VF>/nvidia/gpu_instance_id   (MIG-backed vGPUs)
 *   /sys/bus/pci/devices/<VF>/nvidia/placement_id
 *
 * creatable_vgpu_types lists one type a line under a header, "ID : vGPU
 * Name", as "557   : NVIDIA H100XM-1-10CME": a line whose first word is a
 * number is a type, and NVIDIA/vgpu-device-manager internal/vfio/vfio.go
 * (GetIdForVGPUTypeName) takes the line's last word as the type's name.
 * A vGPU is made by writing the number into current_vgpu_type and undone
 * by writing 0 (vfio.go CreateVGPUDevice and Delete; NVIDIA vGPU user guide,
 * "Creating an NVIDIA vGPU that supports SR-IOV on a Linux with KVM
 * hypervisor"; the Proxmox VE wiki, "NVIDIA vGPU on Proxmox VE"). A VF with
 * a non-zero current_vgpu_type is a vGPU, which the VMM takes whole as a
 * PCI device (-device vfio-pci,host=<VF>; KubeVirt 1.9 discovers them so).
 */
static void parse_creatable(const char *vfdir, struct stk_dev *pf,
			    struct stk_vf *vf)
{
	char path[PATH_MAX], line[256], *name;
	struct stk_type *t;
	unsigned long id;
	unsigned int i;
	FILE *f;

	if (path_fmt(path, sizeof(path), "%s/nvidia/creatable_vgpu_types", vfdir))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (units_parse_type_line(line, &id, &name))
			continue;
		if (vf->n_creatable < STK_TYPE_IDS)
			vf->creatable[vf->n_creatable++] = (unsigned int)id;
		snprintf(path, sizeof(path), "%lu", id);
		for (i = 0; i < pf->n_types; i++)
			if (!strcmp(pf->types[i].id, path))
				break;
		if (i < pf->n_types)
			continue;
		t = add_type(pf);
		if (!t)
			break;
		snprintf(t->id, sizeof(t->id), "%lu", id);
		stk_copy(t->name, sizeof(t->name), name);
		t->listed = true;
	}
	fclose(f);
}

/* The type names on record --------------------------------------------------- */

/*
 * NVIDIA names a type only in creatable_vgpu_types, and a VF lists only the
 * types it has room for: on a full GPU every VF lists none, and a typed
 * VF's current_vgpu_type is a bare number (NVIDIA's own vgpu-device-manager
 * asks NVML for the names then). So the names seen are kept, one line per
 * type of a GPU model and driver version:
 *
 *   10de:2330 550.54.10 1065 NVIDIA H100-4C
 *
 * in STK_KNOWN_FILE below the root, and name the typed VFs' numbers that no
 * VF lists. A number that neither a VF nor the record names keeps its
 * number as its name.
 */
static void known_load(struct stk_host *h)
{
	char path[PATH_MAX], line[256], pciid[16], version[32], num[16];
	struct stk_known *v, *k;
	unsigned long id;
	char *name, *end;
	int n;
	FILE *f;

	if (path_fmt(path, sizeof(path), "%s" STK_KNOWN_FILE, h->root))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* "PCIID VERSION ID NAME..." */
		if (sscanf(line, "%15s %31s %15s %n", pciid, version, num, &n) != 3)
			continue;
		errno = 0;
		id = strtoul(num, &end, 10);
		name = line + n;
		if (errno || *end || !id || id > UINT32_MAX || !*name)
			continue;
		v = realloc(h->known, (h->n_known + 1) * sizeof(*v));
		if (!v)
			break;
		h->known = v;
		k = &h->known[h->n_known++];
		snprintf(k->key, sizeof(k->key), "%s %s", pciid, version);
		k->id = (unsigned int)id;
		stk_copy(k->name, sizeof(k->name), name);
	}
	fclose(f);
}

static void dev_key(const struct stk_dev *d, char *key, size_t len)
{
	snprintf(key, len, "%s %s", d->pciid[0] ? d->pciid : "-", d->version);
}

static const struct stk_known *known_find(const struct stk_host *h,
					  const char *key, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < h->n_known; i++)
		if (h->known[i].id == id && !strcmp(h->known[i].key, key))
			return &h->known[i];
	return NULL;
}

/* Is type @t of @d on record under its name? */
static bool known_as(const struct stk_host *h, const struct stk_dev *d,
		     const struct stk_type *t)
{
	char key[64];
	const struct stk_known *k;

	dev_key(d, key, sizeof(key));
	k = known_find(h, key, (unsigned int)strtoul(t->id, NULL, 10));
	return k && !strcmp(k->name, t->name);
}

void stk_types_save(const struct stk_host *h)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], key[64], *slash;
	unsigned int i, j, news = 0;
	const struct stk_dev *d;
	FILE *f;

	for (i = 0; i < h->n_devs; i++)
		for (j = 0; j < h->devs[i].n_types; j++)
			news += h->devs[i].kind == STK_NVVF &&
				h->devs[i].types[j].listed &&
				!known_as(h, &h->devs[i], &h->devs[i].types[j]);
	if (!news || path_fmt(path, sizeof(path), "%s" STK_KNOWN_FILE, h->root))
		return;
	/* its directory, as "mkdir -p" */
	for (slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	/* what was on record, but for the numbers listed now */
	for (i = 0; i < h->n_known; i++) {
		const struct stk_known *k = &h->known[i];
		bool listed = false;

		for (j = 0; j < h->n_devs && !listed; j++) {
			unsigned int t;

			d = &h->devs[j];
			dev_key(d, key, sizeof(key));
			if (d->kind != STK_NVVF || strcmp(key, k->key))
				continue;
			for (t = 0; t < d->n_types; t++)
				listed |= d->types[t].listed &&
					  strtoul(d->types[t].id, NULL, 10) == k->id;
		}
		if (!listed)
			fprintf(f, "%s %u %s\n", k->key, k->id, k->name);
	}
	for (i = 0; i < h->n_devs; i++) {
		d = &h->devs[i];
		if (d->kind != STK_NVVF)
			continue;
		dev_key(d, key, sizeof(key));
		for (j = 0; j < d->n_types; j++)
			if (d->types[j].listed)
				fprintf(f, "%s %s %s\n", key, d->types[j].id,
					d->types[j].name);
	}
	if (fclose(f) || rename(tmp, path))
		unlink(tmp);
}

/*
 * The types of typed VFs that no VF lists: the GPU is full, or nearly.
 * Their names come from the record, or are their numbers.
 */
static int add_typed_types(struct stk_host *h, struct stk_dev *d)
{
	const struct stk_known *k;
	struct stk_type *t;
	unsigned int i, j;
	char id[16], key[64];

	dev_key(d, key, sizeof(key));
	for (i = 0; i < d->n_vfs; i++) {
		if (!d->vfs[i].current)
			continue;
		snprintf(id, sizeof(id), "%u", d->vfs[i].current);
		for (j = 0; j < d->n_types; j++)
			if (!strcmp(d->types[j].id, id))
				break;
		if (j < d->n_types)
			continue;
		t = add_type(d);
		if (!t)
			return -ENOMEM;
		stk_copy(t->id, sizeof(t->id), id);
		k = known_find(h, key, d->vfs[i].current);
		stk_copy(t->name, sizeof(t->name), k ? k->name : id);
		t->unnamed = !k;
	}
	return 0;
}

static bool vf_lists(const struct stk_vf *vf, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < vf->n_creatable; i++)
		if (vf->creatable[i] == id)
			return true;
	return false;
}

static bool is_mdev_parent(const char *root, const char *bdf)
{
	char path[PATH_MAX];
	struct stat st;

	return !path_fmt(path, sizeof(path), "%s/sys/class/mdev_bus/%s", root,
		      bdf) && !stat(path, &st);
}

/* The PF at @dir: its PCI id, its driver's version, where its VFs are. */
static void scan_pf_id(const char *root, const char *dir, struct stk_dev *d)
{
	char path[PATH_MAX];
	long vendor = read_num(dir, "vendor", -1);
	long device = read_num(dir, "device", -1);

	if (vendor >= 0 && device >= 0)
		snprintf(d->pciid, sizeof(d->pciid), "%04lx:%04lx",
			 vendor & 0xffff, device & 0xffff);
	if (d->driver[0] &&
	    !path_fmt(path, sizeof(path), "%s/sys/module/%s", root, d->driver) &&
	    (read_str(path, "version", d->version, sizeof(d->version)) ||
	     !d->version[0] || strchr(d->version, ' ')))
		stk_copy(d->version, sizeof(d->version), "-");
	d->vf_offset = (int)read_num(dir, "sriov_offset", -1);
	d->vf_stride = (int)read_num(dir, "sriov_stride", -1);
}

static int scan_pf(const char *root, const char *bdf, struct stk_host *h)
{
	char dir[PATH_MAX], vfdir[PATH_MAX], vfname[32], vfbdf[STK_BDF_LEN];
	struct stk_vf vfs[256];
	unsigned int nvf = 0, i, j;
	bool nvidia = false, mdev = false;
	struct stk_dev *d;
	long numvfs, totalvfs;
	int err;

	if (path_fmt(dir, sizeof(dir), "%s/sys/bus/pci/devices/%s", root, bdf))
		return 0;
	totalvfs = read_num(dir, "sriov_totalvfs", -1);
	if (totalvfs < 0 || is_mdev_parent(root, bdf))
		return 0;
	numvfs = read_num(dir, "sriov_numvfs", 0);

	for (i = 0; i < 256 && nvf < 256; i++) {
		snprintf(vfname, sizeof(vfname), "virtfn%u", i);
		link_base(dir, vfname, vfbdf, sizeof(vfbdf));
		if (!vfbdf[0])
			break;
		if (is_mdev_parent(root, vfbdf))
			mdev = true;
		if (path_fmt(vfdir, sizeof(vfdir), "%s/sys/bus/pci/devices/%s",
			  root, vfbdf) || !exists(vfdir, "nvidia"))
			continue;
		nvidia = true;
		memset(&vfs[nvf], 0, sizeof(vfs[nvf]));
		stk_copy(vfs[nvf].bdf, sizeof(vfs[nvf].bdf), vfbdf);
		nvf++;
	}
	/* a PF whose VFs are mdev parents is listed through them */
	if (mdev && !nvidia) {
		for (i = 0; i < h->n_devs; i++) {
			if (h->devs[i].kind != STK_MDEV ||
			    strcmp(h->devs[i].pf, bdf))
				continue;
			h->devs[i].pf_numvfs = (int)numvfs;
			h->devs[i].pf_totalvfs = (int)totalvfs;
		}
		return 0;
	}
	if (!nvidia) {
		/* plain SR-IOV: only display controllers are GPUs */
		if ((read_num(dir, "class", 0) >> 16) != 0x03)
			return 0;
	}
	d = add_dev(h, nvidia ? STK_NVVF : STK_SRIOV, bdf);
	if (!d)
		return -ENOMEM;
	link_base(dir, "driver", d->driver, sizeof(d->driver));
	d->numvfs = (int)numvfs;
	d->totalvfs = (int)totalvfs;
	scan_pf_id(root, dir, d);
	if (!nvidia)
		return 0;

	d->vfs = calloc(nvf, sizeof(*d->vfs));
	if (!d->vfs)
		return -ENOMEM;
	for (i = 0; i < nvf; i++) {
		struct stk_vf *vf = &d->vfs[i];

		*vf = vfs[i];
		path_fmt(vfdir, sizeof(vfdir), "%s/sys/bus/pci/devices/%s", root,
		      vf->bdf);
		path_fmt(dir, sizeof(dir), "%s/nvidia", vfdir);
		vf->current = (unsigned int)read_num(dir, "current_vgpu_type", 0);
		vf->gi = (int)read_num(dir, "gpu_instance_id", -1);
		vf->placement = (int)read_num(dir, "placement_id", -1);
		link_base(vfdir, "driver", vf->driver, sizeof(vf->driver));
		vf->in_use = dev_in_use(h, vfdir);
		parse_creatable(vfdir, d, vf);
	}
	d->n_vfs = nvf;
	err = add_typed_types(h, d);
	if (err)
		return err;

	/* a type's instances: the free VFs that list it */
	for (j = 0; j < d->n_types; j++) {
		unsigned int id = (unsigned int)strtoul(d->types[j].id, NULL, 10);

		d->types[j].available = 0;
		for (i = 0; i < d->n_vfs; i++)
			if (!d->vfs[i].current && !d->vfs[i].in_use &&
			    vf_lists(&d->vfs[i], id))
				d->types[j].available++;
	}
	/* sorted by number, as the vendor lists them */
	for (i = 1; i < d->n_types; i++) {
		struct stk_type x = d->types[i];

		for (j = i; j > 0 && strverscmp(d->types[j - 1].id, x.id) > 0; j--)
			d->types[j] = d->types[j - 1];
		d->types[j] = x;
	}
	return 0;
}

static int scan_nvvf_vgpus(struct stk_host *h)
{
	const struct stk_type *t;
	struct stk_vgpu *g;
	unsigned int i, j;
	char id[16];

	for (i = 0; i < h->n_devs; i++) {
		const struct stk_dev *d = &h->devs[i];

		if (d->kind != STK_NVVF)
			continue;
		for (j = 0; j < d->n_vfs; j++) {
			const struct stk_vf *vf = &d->vfs[j];

			if (!vf->current)
				continue;
			g = add_vgpu(h, STK_NVVF);
			if (!g)
				return -ENOMEM;
			stk_copy(g->handle, sizeof(g->handle), vf->bdf);
			stk_copy(g->dev, sizeof(g->dev), d->name);
			snprintf(id, sizeof(id), "%u", vf->current);
			stk_copy(g->type_id, sizeof(g->type_id), id);
			t = find_type_id(d, id);
			snprintf(g->type_name, sizeof(g->type_name), "%s",
				 t ? t->name : id);
			g->gi = vf->gi;
			g->placement = vf->placement;
			g->in_use = vf->in_use;
		}
	}
	return 0;
}

static int scan_pci(const char *root, struct stk_host *h)
{
	char dir[PATH_MAX];
	char **names;
	unsigned int n, i;
	int err = 0;

	if (path_fmt(dir, sizeof(dir), "%s/sys/bus/pci/devices", root) ||
	    list_dir(dir, &names, &n))
		return 0;
	for (i = 0; i < n && !err; i++)
		err = scan_pf(root, names[i], h);
	free_names(names, n);
	return err;
}

int stk_scan(const char *root, struct stk_host *h, char *err, size_t len)
{
	int ret;

	memset(h, 0, sizeof(*h));
	stk_copy(h->root, sizeof(h->root), root ? root : "");
	known_load(h);
	ret = scan_mdev(h->root, h);
	if (!ret)
		ret = scan_pci(h->root, h);
	if (!ret)
		ret = scan_mdev_vgpus(h->root, h);
	if (!ret)
		ret = scan_nvvf_vgpus(h);
	if (ret) {
		snprintf(err, len, "cannot read the vGPU stacks in sysfs: %s",
			 strerror(-ret));
		stk_free(h);
	}
	return ret;
}

void stk_free(struct stk_host *h)
{
	unsigned int i;

	for (i = 0; i < h->n_devs; i++) {
		free(h->devs[i].types);
		free(h->devs[i].vfs);
	}
	for (i = 0; i < h->n_vfio_open; i++)
		free(h->vfio_open[i]);
	free(h->vfio_open);
	h->vfio_open = NULL;
	h->n_vfio_open = 0;
	h->vfio_scanned = false;
	h->vfio_partial = false;
	free(h->ours);
	h->ours = NULL;
	h->n_ours = 0;
	free(h->known);
	h->known = NULL;
	h->n_known = 0;
	free(h->devs);
	free(h->vgpus);
	h->devs = NULL;
	h->vgpus = NULL;
	h->n_devs = 0;
	h->n_vgpus = 0;
}

/* Lookups ------------------------------------------------------------------- */

/* @name as sysfs spells it: a PCI address made canonical, else as is. */
static void canonical(const char *name, char *out, size_t len)
{
	char bdf[PT_BDF_LEN], err[128];

	if (!pt_bdf_parse(name, bdf, err, sizeof(err)))
		stk_copy(out, len, bdf);
	else
		stk_copy(out, len, name);
}

struct stk_dev *stk_find_dev(const struct stk_host *h, const char *name)
{
	char want[STK_NAME_LEN];
	unsigned int i;

	canonical(name, want, sizeof(want));
	for (i = 0; i < h->n_devs; i++)
		if (!strcmp(h->devs[i].name, want))
			return &h->devs[i];
	return NULL;
}

struct stk_vgpu *stk_find_vgpu(const struct stk_host *h, const char *handle)
{
	char want[UNITS_UUID_LEN];
	unsigned int i;

	canonical(handle, want, sizeof(want));
	for (i = 0; i < h->n_vgpus; i++)
		if (!strcasecmp(h->vgpus[i].handle, want))
			return &h->vgpus[i];
	return NULL;
}

bool stk_is_ours(const struct stk_host *h, const char *name)
{
	char want[STK_NAME_LEN], path[PATH_MAX];
	unsigned int i;

	canonical(name, want, sizeof(want));
	for (i = 0; i < h->n_ours; i++)
		if (!strcmp(h->ours[i], want))
			return true;
	/* a simulated GPU by its sim name: sim<ID> links to its function */
	return !path_fmt(path, sizeof(path),
			 "%s/sys/bus/gpuvirt_sim/devices/%s/gpu", h->root, name) &&
	       !access(path, F_OK);
}

unsigned int stk_targets(const struct stk_host *h, const char *name,
			 struct stk_dev **out, unsigned int max)
{
	struct stk_dev *d = stk_find_dev(h, name);
	char want[STK_NAME_LEN];
	unsigned int i, n = 0;

	/* an nvidia-vf PF is one with no type listed too: it is full */
	if (d && (d->n_types || d->kind != STK_MDEV)) {
		out[0] = d;
		return 1;
	}
	canonical(name, want, sizeof(want));
	for (i = 0; i < h->n_devs && n < max; i++)
		if (h->devs[i].kind == STK_MDEV && !strcmp(h->devs[i].pf, want))
			out[n++] = &h->devs[i];
	return n;
}

/* The last blank-separated word of @s. */
static const char *last_word(const char *s)
{
	const char *w = strrchr(s, ' ');

	return w ? w + 1 : s;
}

/* @id ends in "-@want" or "_@want". */
static bool id_suffix(const char *id, const char *want)
{
	size_t il = strlen(id), wl = strlen(want);

	return il > wl && (id[il - wl - 1] == '-' || id[il - wl - 1] == '_') &&
	       !strcmp(id + il - wl, want);
}

/* Append the types of @d to @err: " A100-4C (nvidia-558), ...". */
static void list_types(const struct stk_dev *d, char *err, size_t len)
{
	size_t used = strlen(err);
	unsigned int i;

	for (i = 0; i < d->n_types && used < len; i++) {
		int n = snprintf(err + used, len - used, "%s\"%s\" (%s)",
			     i ? ", " : " ", d->types[i].name, d->types[i].id);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (!d->n_types)
		snprintf(err + used, used < len ? len - used : 0, " none");
}

int stk_match_type(const struct stk_dev *d, const char *want, char *err,
		   size_t len)
{
	int pass, i;

	for (pass = 0; pass < 3; pass++) {
		int found = -1, n = 0;

		for (i = 0; i < (int)d->n_types; i++) {
			const struct stk_type *t = &d->types[i];
			bool hit;

			if (pass == 0)
				hit = !strcmp(t->id, want) || !strcmp(t->name, want);
			else if (pass == 1)
				hit = !strcmp(last_word(t->name), want);
			else
				hit = id_suffix(t->id, want);
			if (hit) {
				found = i;
				n++;
			}
		}
		if (n == 1)
			return found;
		if (n > 1) {
			snprintf(err, len,
				 "type \"%s\" is ambiguous on %s (%s); the types:",
				 want, d->name, stk_kind_name(d->kind));
			list_types(d, err, len);
			return -EEXIST;
		}
	}
	snprintf(err, len, "no type \"%s\" on %s (%s); the types:", want,
		 d->name, stk_kind_name(d->kind));
	list_types(d, err, len);
	for (i = 0; i < (int)d->n_types; i++)
		if (d->types[i].unnamed)
			break;
	if (i < (int)d->n_types) {
		size_t used = strlen(err);

		snprintf(err + used, used < len ? len - used : 0,
			 " (a type that typed VFs hold and no VF lists, the GPU being full, goes by its number until gpuvirtctl has seen its name listed)");
	}
	return -ENOENT;
}

/* Waiting for VFs -------------------------------------------------------------- */

int stk_vf_bdf(const struct stk_dev *d, unsigned int index,
	       char bdf[STK_BDF_LEN])
{
	unsigned int dom, bus, dev, fn, rid;

	if (d->vf_offset < 0 || d->vf_stride < 0 ||
	    sscanf(d->name, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return -1;
	rid = (bus << 8 | dev << 3 | fn) + (unsigned int)d->vf_offset +
	      index * (unsigned int)d->vf_stride;
	if (rid > 0xffff)
		return -1;
	snprintf(bdf, STK_BDF_LEN, "%04x:%02x:%02x.%x", dom, rid >> 8,
		 (rid >> 3) & 0x1f, rid & 7);
	return 0;
}

/*
 * Is VF @i of the PF at @pfdir there, with what @kind makes vGPUs through?
 * Else say what is missing in @what.
 */
static bool vf_ready(const char *root, const char *pfdir, unsigned int i,
		     enum stk_kind kind, char *what, size_t len)
{
	char name[32], bdf[STK_BDF_LEN], dir[PATH_MAX];

	snprintf(name, sizeof(name), "virtfn%u", i);
	link_base(pfdir, name, bdf, sizeof(bdf));
	if (!bdf[0]) {
		snprintf(what, len, "it has no VF %u (no %s)", i, name);
		return false;
	}
	if (path_fmt(dir, sizeof(dir), "%s/sys/bus/pci/devices/%s", root, bdf))
		return false;
	switch (kind) {
	case STK_NVVF:
		if (exists(dir, "nvidia/current_vgpu_type") &&
		    exists(dir, "nvidia/creatable_vgpu_types"))
			return true;
		snprintf(what, len, "VF %s has no NVIDIA vGPU files (nvidia/current_vgpu_type): is NVIDIA's vGPU manager loaded, and did a driver take the VF?",
			 bdf);
		return false;
	case STK_GPUVIRT:
		if (exists(dir, "gpuvirt/current_vgpu_type"))
			return true;
		snprintf(what, len, "VF %s has no gpuvirt/current_vgpu_type: no driver took it (is the PF's sriov_drivers_autoprobe 0?)",
			 bdf);
		return false;
	case STK_MDEV:
		if (!path_fmt(dir, sizeof(dir), "%s/sys/class/mdev_bus/%s", root,
			      bdf) && exists(dir, "mdev_supported_types"))
			return true;
		snprintf(what, len, "VF %s is no mdev parent yet (no /sys/class/mdev_bus/%s)",
			 bdf, bdf);
		return false;
	default:
		return true;
	}
}

int stk_wait_vfs(const char *root, const char *pf, unsigned int n,
		 enum stk_kind kind, unsigned int wait_ms, char *err,
		 size_t len)
{
	const struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
	char pfdir[PATH_MAX], what[512] = "";
	struct timespec start, now;
	unsigned int i = 0;

	if (path_fmt(pfdir, sizeof(pfdir), "%s/sys/bus/pci/devices/%s", root, pf))
		return -ENAMETOOLONG;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		/* the VFs seen ready stay so: go on from the first that was not */
		while (i < n && vf_ready(root, pfdir, i, kind, what, sizeof(what)))
			i++;
		if (i == n)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000 >= (long)wait_ms)
			break;
		nanosleep(&tick, NULL);
	}
	snprintf(err, len, "the %u VFs of %s did not all come up within %u s: %s",
		 n, pf, (wait_ms + 999) / 1000, what);
	return -ETIMEDOUT;
}
