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
