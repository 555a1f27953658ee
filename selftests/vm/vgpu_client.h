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
#include <limits.h>
#include <linux/gpuvirt_vgpu.h>
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

/*
 * Open VFIO device @name (an mdev's UUID, a PCI device's address) whose
 * sysfs directory is @dir; 0 or -errno, and nothing left open on failure.
 */
static inline int vfio_client_open(struct vfio_user *u, const char *dir,
				   const char *name)
{
	struct vfio_group_status st = { .argsz = sizeof(st) };
	char path[256], link[256];
	ssize_t n;
	int err;

	u->container = u->group = u->device = -1;
	snprintf(path, sizeof(path), "%s/iommu_group", dir);
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
	u->device = ioctl(u->group, VFIO_GROUP_GET_DEVICE_FD, name);
	if (u->device < 0)
		goto err;
	return 0;
err:
	err = -errno;
	vgpu_client_close(u);
	return err;
}

static inline int vgpu_client_open(struct vfio_user *u, const char *uuid)
{
	char dir[128];

	snprintf(dir, sizeof(dir), VGPU_MDEVS "/%s", uuid);
	return vfio_client_open(u, dir, uuid);
}

/*
 * Open a vGPU by its name: an mdev by UUID, or a VF vGPU (the sriov vGPU
 * model) by its PCI address, which has a ':' where a UUID has none.
 */
static inline int vgpu_client_open_name(struct vfio_user *u, const char *name)
{
	char dir[128];

	if (!strchr(name, ':'))
		return vgpu_client_open(u, name);
	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s", name);
	return vfio_client_open(u, dir, name);
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

/* BAR0 registers, 32 bits each; 0 or -errno. */
static inline int vgpu_reg_read(int device, unsigned int reg, uint32_t *v)
{
	ssize_t n = pread(device, v, 4, VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg);

	return n == 4 ? 0 : n < 0 ? -errno : -EIO;
}

static inline int vgpu_reg_write(int device, unsigned int reg, uint32_t v)
{
	ssize_t n = pwrite(device, &v, 4, VGPU_REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg);

	return n == 4 ? 0 : n < 0 ? -errno : -EIO;
}

/* What a COMPUTE packet of @steps steps from @seed leaves in VRAM. */
static inline uint64_t vgpu_compute_ref(uint32_t seed, uint32_t steps)
{
	uint64_t x = seed;

	while (steps--)
		x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
	return x;
}

/*
 * A command ring at slice offset 0, written through a BAR2 mapping of the
 * caller's that covers at least @size bytes.
 */
struct vgpu_ring {
	int device;
	uint32_t *vram;
	uint32_t size;
	uint32_t tail;
};

static inline int vgpu_ring_setup(struct vgpu_ring *r, int device,
				  void *vram, uint32_t size)
{
	r->device = device;
	r->vram = vram;
	r->size = size;
	r->tail = 0;
	return vgpu_reg_write(device, GPUVIRT_VGPU_REG_RING_BASE_LO, 0) ?:
	       vgpu_reg_write(device, GPUVIRT_VGPU_REG_RING_BASE_HI, 0) ?:
	       vgpu_reg_write(device, GPUVIRT_VGPU_REG_RING_SIZE, size);
}

static inline void vgpu_ring_put(struct vgpu_ring *r, const uint32_t *dw,
				 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		r->vram[r->tail / 4] = dw[i];
		r->tail = (r->tail + 4) & (r->size - 1);
	}
}

static inline int vgpu_ring_kick(struct vgpu_ring *r)
{
	return vgpu_reg_write(r->device, GPUVIRT_VGPU_REG_RING_TAIL, r->tail);
}

/* Wait until the engine has run everything or stopped; 0 or -ETIMEDOUT. */
static inline int vgpu_ring_idle(struct vgpu_ring *r, int ms)
{
	uint32_t st;

	for (; ms > 0; ms -= 10) {
		if (vgpu_reg_read(r->device, GPUVIRT_VGPU_REG_STATUS, &st))
			return -EIO;
		if (!(st & GPUVIRT_VGPU_STATUS_BUSY) ||
		    (st & GPUVIRT_VGPU_STATUS_ERROR))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* The vgpu_load program, which is built next to the test running. */
static inline void vgpu_load_path(char *buf, size_t len)
{
	char exe[PATH_MAX - 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = '\0';
	snprintf(buf, len, "%s/vgpu_load", exe);
}

#endif /* GPUVIRT_VGPU_CLIENT_H */
