// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: drivers must call vfio_free_device() from their release callback.
 * v6.1 requires it; from v6.4 the VFIO core frees the device itself and the
 * function is gone.
 */
#include <linux/vfio.h>

static void __maybe_unused probe_release(struct vfio_device *vdev)
{
	vfio_free_device(vdev);
}
