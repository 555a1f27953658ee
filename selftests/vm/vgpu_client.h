/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VFIO side of a vGPU user, shared by the VM tests, the demo tool and
 * the benchmarks: open an mdev through the VFIO group API the way a VMM
 * does, and close it again.
 */
#ifndef GPUVIRT_VGPU_CLIENT_H
#define GPUVIRT_VGPU_CLIENT_H

#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define VGPU_MDEVS		"/sys/bus/mdev/devices"
/* Offset of VFIO region i in the device fd, as vfio-pci lays them out. */
#define VGPU_REGION(i)		((uint64_t)(i) << 40)

/* A VFIO user of one mdev: container, group and device fds. */
struct vfio_user {
	int container, group, device;
};

static inline void vgpu_client_close(struct vfio_user *u)
{
	if (u->device >= 0)
		close(u->device);
	if (u->group >= 0)
		close(u->group);
	if (u->container >= 0)
		close(u->container);
	u->container = u->group = u->device = -1;
}

/* Open mdev @uuid; 0 or -errno, and nothing left open on failure. */
static inline int vgpu_client_open(struct vfio_user *u, const char *uuid)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[256], link[256];
	ssize_t n;
	int err;

	u->container = u->group = u->device = -1;
	snprintf(path, sizeof(path), VGPU_MDEVS "/%s/iommu_group", uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	snprintf(path, sizeof(path), "/dev/vfio/%s", strrchr(link, '/') + 1);

	u->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (u->container < 0)
		goto err;
	if (ioctl(u->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
		errno = EPROTO;
		goto err;
	}
	u->group = open(path, O_RDWR | O_CLOEXEC);
	if (u->group < 0 || ioctl(u->group, VFIO_GROUP_GET_STATUS, &st))
		goto err;
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		errno = EPERM;
		goto err;
	}
	if (ioctl(u->group, VFIO_GROUP_SET_CONTAINER, &u->container) ||
	    ioctl(u->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		goto err;
	u->device = ioctl(u->group, VFIO_GROUP_GET_DEVICE_FD, uuid);
	if (u->device < 0)
		goto err;
	return 0;
err:
	err = -errno;
	vgpu_client_close(u);
	return err;
}

/* Route interrupt @index (one vector) to eventfd @efd; -1 clears it. */
static inline int vgpu_client_set_irq(int device, unsigned int index, int32_t efd)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int32_t)];
	struct vfio_irq_set *s = (struct vfio_irq_set *)buf;

	s->argsz = sizeof(buf);
	s->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->index = index;
	s->start = 0;
	s->count = 1;
	memcpy(s->data, &efd, sizeof(efd));
	return ioctl(device, VFIO_DEVICE_SET_IRQS, s) ? -errno : 0;
}

#endif /* GPUVIRT_VGPU_CLIENT_H */
