/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vGPUs are mdev devices, which only the mdev core creates and removes,
 * through sysfs:
 *
 *   /sys/class/mdev_bus/<gpu name>/mdev_supported_types/<driver>-<type>/create
 *   /sys/bus/mdev/devices/<uuid>/remove
 *
 * These helpers do that, and read and write single sysfs files for "apply"
 * (the simulated GPUs' new_device, a GPU's vgpu_mode); the caller reports
 * errors. They return 0 or a negative errno.
 */
#ifndef GPUVIRTCTL_SYSFS_H
#define GPUVIRTCTL_SYSFS_H

#include <stddef.h>

#include "units.h"

/* Write @val to the sysfs file @path in one write(). */
int sysfs_write(const char *path, const char *val);

/* Read the first line of the sysfs file @path, newline dropped. */
int sysfs_read_line(const char *path, char *buf, size_t len);

/*
 * Find the mdev type directory of type @type on the GPU named @gpu: the
 * entry whose "name" file reads @type, or whose name ends in "-@type".
 * -ENOENT: the GPU offers no such type; another errno: the GPU's
 * mdev_supported_types directory cannot be read.
 */
int sysfs_mdev_type_dir(const char *gpu, const char *type, char *path,
			size_t len);

/* Create the vGPU @uuid in the type directory @type_dir. */
int sysfs_mdev_create(const char *type_dir, const char *uuid);

/* Remove the vGPU @uuid; -ENOENT if there is no mdev device of that UUID. */
int sysfs_mdev_remove(const char *uuid);

/*
 * SR-IOV vGPUs: give the first free VF of the PF @pf (a PCI address) that
 * lists @type in gpuvirt/creatable_vgpu_types that type; store the VF's
 * address in @vf and the new vGPU's UUID in @uuid. -ENOENT: no VF could
 * take it.
 */
int sysfs_vf_take(const char *pf, const char *type, char *vf, size_t len,
		  char uuid[UNITS_UUID_LEN]);

/*
 * Give the VF @vf of the PF @pf (PCI addresses) the type @type and store
 * its vGPU's UUID in @uuid. -EXDEV: @vf is a VF of another PF; -ENODEV: no
 * VF @vf; -EBUSY: it has a type; -ENOENT: it cannot take @type now.
 */
int sysfs_vf_type(const char *pf, const char *vf, const char *type,
		  char uuid[UNITS_UUID_LEN]);

/*
 * The UUID of the vGPU that the VF @vf (a PCI address) of one of gpuvirt's
 * GPUs is: 0, -ENODATA if the VF has no type, -ENOENT if it is no VF of
 * ours (no gpuvirt/vgpu_uuid).
 */
int sysfs_vf_uuid(const char *vf, char uuid[UNITS_UUID_LEN]);

/* Clear the type of the VF @vf (a PCI address), removing its vGPU. */
int sysfs_vf_release(const char *vf);

/* A random (version 4) UUID from /dev/urandom. */
int sysfs_random_uuid(char out[UNITS_UUID_LEN]);

#endif /* GPUVIRTCTL_SYSFS_H */
