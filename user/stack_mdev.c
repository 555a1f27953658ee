// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes on the mdev stack: create a vGPU through its type's "create",
 * remove it through its "remove" (Documentation/driver-api/
 * vfio-mediated-device.rst); see stacks.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stacks.h"

/*
 * Write @val to @path in one write(), truncating as a shell's "echo >"
 * does (sysfs ignores it; a fixture's plain file then holds just @val). A
 * refusal names the file and the errno.
 */
int stk_write(const char *path, const char *val, char *err, size_t len)
{
	size_t vlen = strlen(val);
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
	} else {
		ssize_t n;

		do {
			n = write(fd, val, vlen);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			ret = -errno;
		else if ((size_t)n != vlen)
			ret = -EIO;
		close(fd);
	}
	if (ret)
		snprintf(err, len, "writing \"%s\" to %s failed: %s (%s)", val,
			 path, strerror(-ret), strerrorname_np(-ret) ?: "?");
	return ret;
}

int stk_mdev_write_create(const char *root, const char *parent,
			  const char *type_id, const char *uuid, char *err,
			  size_t len)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path),
		     "%s/sys/class/mdev_bus/%s/mdev_supported_types/%s/create",
		     root, parent, type_id);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, len, "the path of type %s is too long", type_id);
		return -ENAMETOOLONG;
	}
	return stk_write(path, uuid, err, len);
}

int stk_mdev_write_remove(const char *root, const char *uuid, char *err,
			  size_t len)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/sys/bus/mdev/devices/%s/remove",
		     root, uuid);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, len, "the path of vGPU %s is too long", uuid);
		return -ENAMETOOLONG;
	}
	return stk_write(path, "1", err, len);
}

int stk_mdev_create(const struct stk_host *h, const struct stk_dev *d,
		    const struct stk_type *t, const char *uuid, char *err,
		    size_t len)
{
	return stk_mdev_write_create(h->root, d->name, t->id, uuid, err, len);
}

int stk_mdev_remove(const struct stk_host *h, const struct stk_vgpu *v,
		    char *err, size_t len)
{
	if (v->in_use) {
		snprintf(err, len, "vGPU %s is in use (its VFIO device is open); not removed",
			 v->handle);
		return -EBUSY;
	}
	return stk_mdev_write_remove(h->root, v->handle, err, len);
}

int stk_mdev_create_new(const char *root, const char *pf, const char *uuid,
			const char *want, char *err, size_t len)
{
	struct stk_dev *t[256];
	struct stk_host h;
	unsigned int n, i, j;
	int idx, ret;

	ret = stk_scan(root, &h, err, len);
	if (ret)
		return ret;
	n = stk_targets(&h, pf, t, 256);
	if (!n || t[0]->kind != STK_MDEV) {
		snprintf(err, len, "the VFs of %s are no mdev parents", pf);
		ret = -ENODEV;
		goto out;
	}
	if (stk_find_vgpu(&h, uuid)) {
		snprintf(err, len, "vGPU %s exists already", uuid);
		ret = -EEXIST;
		goto out;
	}
	idx = stk_match_type(t[0], want, err, len);
	if (idx < 0) {
		ret = idx;
		goto out;
	}
	/* the first VF parent with an instance of the type left */
	for (i = 0; i < n; i++)
		for (j = 0; j < t[i]->n_types; j++)
			if (!strcmp(t[i]->types[j].id, t[0]->types[idx].id) &&
			    t[i]->types[j].available != 0) {
				ret = stk_mdev_create(&h, t[i], &t[i]->types[j],
						      uuid, err, len);
				goto out;
			}
	snprintf(err, len, "no VF of %s has room for vGPU %s of type \"%s\" (%s)",
		 pf, uuid, t[0]->types[idx].name, t[0]->types[idx].id);
	ret = -ENOSPC;
out:
	stk_free(&h);
	return ret;
}
