// SPDX-License-Identifier: GPL-2.0-only
/*
 * mdev sysfs access, see sysfs.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

#define MDEV_BUS	"/sys/class/mdev_bus"
#define MDEV_DEVICES	"/sys/bus/mdev/devices"

int sysfs_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = write(fd, val, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

int sysfs_read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		n = read(fd, buf, len - 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = -errno;
		n = 0;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	close(fd);
	return err;
}

/* Is the directory entry @name "<driver>-<type>", as mdev names them? */
static bool type_named(const char *name, const char *type)
{
	size_t nlen = strlen(name), tlen = strlen(type);

	return nlen > tlen && name[nlen - tlen - 1] == '-' &&
	       !strcmp(name + nlen - tlen, type);
}

/*
 * Does the directory entry @name of type directory @dir offer @type? Its
 * name file says; without a readable one, the directory's name does.
 */
static bool type_matches(const char *dir, const char *name, const char *type)
{
	char path[PATH_MAX], buf[64];
	int n;

	n = snprintf(path, sizeof(path), "%s/%s/name", dir, name);
	if (n > 0 && (size_t)n < sizeof(path) &&
	    !sysfs_read_line(path, buf, sizeof(buf)))
		return !strcmp(buf, type);
	return type_named(name, type);
}

int sysfs_mdev_type_dir(const char *gpu, const char *type, char *path,
			size_t len)
{
	char dir[256];
	int n, pass, err = -ENOENT;
	DIR *d;

	n = snprintf(dir, sizeof(dir), MDEV_BUS "/%s/mdev_supported_types",
		     gpu);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	/*
	 * First the directories named after the type, which is how gpuvirt
	 * and most drivers name them: one name file read instead of one for
	 * every type of the GPU, which "vgpu add" in a batch of thousands
	 * would pay each time. Then every directory, for a driver whose
	 * directory names are not its type names.
	 */
	for (pass = 0; pass < 2 && err == -ENOENT; pass++) {
		const struct dirent *de;

		rewinddir(d);
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' ||
			    (!pass && !type_named(de->d_name, type)) ||
			    !type_matches(dir, de->d_name, type))
				continue;
			n = snprintf(path, len, "%s/%s", dir, de->d_name);
			err = n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
			break;
		}
	}
	closedir(d);
	return err;
}

int sysfs_mdev_create(const char *type_dir, const char *uuid)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/create", type_dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return sysfs_write(path, uuid);
}

int sysfs_mdev_remove(const char *uuid)
{
	char path[256];

	snprintf(path, sizeof(path), MDEV_DEVICES "/%s/remove", uuid);
	return sysfs_write(path, "1");
}

int sysfs_random_uuid(char out[UNITS_UUID_LEN])
{
	uint8_t bytes[16];
	size_t got = 0;
	int fd;

	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < sizeof(bytes)) {
		ssize_t n = read(fd, bytes + got, sizeof(bytes) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			n = n < 0 ? -errno : -EIO;
			close(fd);
			return (int)n;
		}
		got += (size_t)n;
	}
	close(fd);
	units_format_uuid4(bytes, out);
	return 0;
}

/* SR-IOV vGPUs ------------------------------------------------------------ */

#define PCI_DEVICES	"/sys/bus/pci/devices"

/* The id under which the VF directory @vfdir lists @type, or 0. */
static unsigned long vf_type_id(const char *vfdir, const char *type)
{
	char path[PATH_MAX], line[128], *name;
	unsigned long id, found = 0;
	FILE *f;
	int n;

	n = snprintf(path, sizeof(path), "%s/gpuvirt/creatable_vgpu_types",
		     vfdir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (!units_parse_type_line(line, &id, &name) &&
		    !strcmp(name, type))
			found = id;
	fclose(f);
	return found;
}

/*
 * Give the free VF whose sysfs directory is @vfdir the type @type, and
 * read its vGPU's UUID. -EBUSY: it has a type already (or took one
 * meanwhile); -ENOENT: it cannot take @type now.
 */
static int vf_type_set(const char *vfdir, const char *type,
		       char uuid[UNITS_UUID_LEN])
{
	char path[PATH_MAX + 64], cur[16], idbuf[24];
	unsigned long id;
	int err;

	snprintf(path, sizeof(path), "%s/gpuvirt/current_vgpu_type", vfdir);
	err = sysfs_read_line(path, cur, sizeof(cur));
	if (err)
		return err;
	if (strcmp(cur, "0"))
		return -EBUSY;
	id = vf_type_id(vfdir, type);
	if (!id)
		return -ENOENT;
	snprintf(idbuf, sizeof(idbuf), "%lu", id);
	err = sysfs_write(path, idbuf);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/gpuvirt/vgpu_uuid", vfdir);
	return sysfs_read_line(path, uuid, UNITS_UUID_LEN);
}

int sysfs_vf_type(const char *pf, const char *vf, const char *type,
		  char uuid[UNITS_UUID_LEN])
{
	char vfdir[PATH_MAX], link[PATH_MAX];
	const char *base;
	ssize_t l;
	int n;

	n = snprintf(vfdir, sizeof(vfdir), PCI_DEVICES "/%s", vf);
	if (n < 0 || (size_t)n >= sizeof(vfdir) - 8)
		return -ENAMETOOLONG;
	/* physfn names the PF: a VF of another GPU is no VF of this one */
	strcat(vfdir, "/physfn");
	l = readlink(vfdir, link, sizeof(link) - 1);
	if (l < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	link[l] = '\0';
	base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	if (strcmp(base, pf))
		return -EXDEV;
	vfdir[n] = '\0';
	return vf_type_set(vfdir, type, uuid);
}

static int vf_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int sysfs_vf_take(const char *pf, const char *type, char *vf, size_t len,
		  char uuid[UNITS_UUID_LEN])
{
	char dir[PATH_MAX], vfdir[PATH_MAX + 32], link[PATH_MAX];
	int idx[256], nidx = 0, i, n;
	const struct dirent *de;
	ssize_t l;
	DIR *d;

	n = snprintf(dir, sizeof(dir), PCI_DEVICES "/%s", pf);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && nidx < (int)(sizeof(idx) / sizeof(idx[0])))
		if (!strncmp(de->d_name, "virtfn", 6))
			idx[nidx++] = atoi(de->d_name + 6);
	closedir(d);
	qsort(idx, nidx, sizeof(idx[0]), vf_cmp);

	for (i = 0; i < nidx; i++) {
		int err;

		snprintf(vfdir, sizeof(vfdir), "%s/virtfn%d", dir, idx[i]);
		err = vf_type_set(vfdir, type, uuid);
		if (err == -EBUSY || err == -ENOENT)
			continue;	/* typed, or taken meanwhile */
		if (err)
			return err;
		l = readlink(vfdir, link, sizeof(link) - 1);
		if (l < 0)
			return -errno;
		link[l] = '\0';
		snprintf(vf, len, "%s",
			 strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
		return 0;
	}
	return -ENOENT;
}

int sysfs_vf_uuid(const char *vf, char uuid[UNITS_UUID_LEN])
{
	char path[PATH_MAX];
	int n, err;

	n = snprintf(path, sizeof(path), PCI_DEVICES "/%s/gpuvirt/vgpu_uuid",
		     vf);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	err = sysfs_read_line(path, uuid, UNITS_UUID_LEN);
	if (err)
		return err == -ENOENT ? -ENOENT : err;
	return uuid[0] ? 0 : -ENODATA;
}

int sysfs_vf_release(const char *vf)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path),
		     PCI_DEVICES "/%s/gpuvirt/current_vgpu_type", vf);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return sysfs_write(path, "0");
}
