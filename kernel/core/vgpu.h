/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vGPU types (mdev types) and vGPUs (mdev devices that are VFIO devices).
 */
#ifndef GPUVIRT_VGPU_H
#define GPUVIRT_VGPU_H

#include <linux/eventfd.h>
#include <linux/mdev.h>
#include <linux/mutex.h>
#include <linux/vfio.h>

#include "fbacct.h"
#include "gpuvirt.h"
#include "profiles.h"

struct gpuvirt_mdev_parent;
struct gpuvirt_vgpu;

/**
 * struct gpuvirt_sched - the engine of one GPU and who runs on it
 * @lock: protects @runq, the vGPUs' run_node and @current_vgpu
 * @runq: vGPUs with work, in turn order
 * @current_vgpu: the vGPU the engine is running, or NULL
 * @wq: the engine thread waits here for work
 * @idle_wq: gpuvirt_sched_detach() waits here for the engine to let go
 * @thread: the engine thread
 * @turns: turns run, for debugfs; engine thread only
 */
struct gpuvirt_sched {
	spinlock_t lock;	/* see above */
	struct list_head runq;
	struct gpuvirt_vgpu *current_vgpu;
	wait_queue_head_t wq;
	wait_queue_head_t idle_wq;
	struct task_struct *thread;
	u64 turns;
};

/**
 * struct gpuvirt_type - one vGPU type of one GPU, an mdev type
 * @mtype: the mdev type; sysfs_name is the profile name
 * @profile: the profile, in @parent->profiles
 * @parent: the GPU's mdev state
 */
struct gpuvirt_type {
	struct mdev_type mtype;
	const struct gpuvirt_profile *profile;
	struct gpuvirt_mdev_parent *parent;
};

/**
 * struct gpuvirt_mdev_parent - the vGPU side of one GPU
 * @parent: the mdev parent, registered on the GPU's device
 * @gpu: the GPU
 * @lock: protects @fb, the framebuffer placements of the GPU's vGPUs
 * @fb: VRAM placements; a vGPU holds its place from init to release
 * @nr_types: entries used in @profiles, @types and @type_ptrs
 * @profiles: the GPU's time-sliced profiles
 * @types: the mdev types made of them
 * @type_ptrs: what mdev_register_parent() takes
 * @sched: the GPU's engine
 *
 * Allocated when the GPU registers, freed after mdev_unregister_parent()
 * has removed every vGPU.
 */
struct gpuvirt_mdev_parent {
	struct mdev_parent parent;
	struct gpuvirt_gpu *gpu;
	struct mutex lock;	/* see above */
	struct gpuvirt_fb fb;
	unsigned int nr_types;
	struct gpuvirt_profile profiles[GPUVIRT_PROFILES_MAX];
	struct gpuvirt_type types[GPUVIRT_PROFILES_MAX];
	struct mdev_type *type_ptrs[GPUVIRT_PROFILES_MAX];
	struct gpuvirt_sched sched;
};

/**
 * struct gpuvirt_vgpu_ring - a vGPU's command ring, as its registers say
 * @base: ring offset in the slice
 * @size: ring size in bytes; 0 when the ring is off
 * @head: next byte the engine reads
 * @tail: end of the work the driver has rung in
 * @fence: last completed fence seqno
 * @error: GPUVIRT_VGPU_ERR_*; non-zero stops the ring
 * @error_head: ring offset of the packet that failed
 * @done: packets completed
 * @busy_ns: modelled engine time used
 */
struct gpuvirt_vgpu_ring {
	u64 base;
	u32 size;
	u32 head;
	u32 tail;
	u32 fence;
	u32 error;
	u32 error_head;
	u64 done;
	u64 busy_ns;
};

#define GPUVIRT_VGPU_CFG_SIZE	256

/**
 * struct gpuvirt_vgpu - one vGPU, the VFIO device a VM is given
 * @vdev: the VFIO device
 * @mp: the GPU's mdev state
 * @type: the vGPU's type
 * @vram_offset: first byte of its slice in the GPU's VRAM
 * @vram_size: size of its slice
 * @bar2_size: BAR2 size: @vram_size rounded up to a power of two
 * @lock: protects everything below
 * @cfg: emulated PCI config space
 * @cfg_wmask: which config space bits the guest may write
 * @scratch: BAR0 scratch register
 * @irq_status: BAR0 interrupt status (write 1 to clear)
 * @intx_trigger: eventfd for INTx, or NULL
 * @msi_trigger: eventfd for MSI, or NULL
 * @intx_masked: INTx is masked through VFIO
 * @ring: the command ring
 * @detached: the device is closed: the engine must not run it
 * @run_node: entry in the GPU's run queue, under the scheduler's lock
 */
struct gpuvirt_vgpu {
	struct vfio_device vdev;
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_type *type;
	u64 vram_offset;
	u64 vram_size;
	u64 bar2_size;

	struct mutex lock;	/* see above */
	u8 cfg[GPUVIRT_VGPU_CFG_SIZE];
	u8 cfg_wmask[GPUVIRT_VGPU_CFG_SIZE];
	u32 scratch;
	u32 irq_status;
	struct eventfd_ctx *intx_trigger;
	struct eventfd_ctx *msi_trigger;
	bool intx_masked;
	struct gpuvirt_vgpu_ring ring;
	bool detached;

	struct list_head run_node;
};

int gpuvirt_mdev_init(void);
void gpuvirt_mdev_exit(void);
int gpuvirt_mdev_gpu_add(struct gpuvirt_gpu *gpu);
void gpuvirt_mdev_gpu_del(struct gpuvirt_gpu *gpu);

extern const struct vfio_device_ops gpuvirt_vgpu_ops;

void gpuvirt_vgpu_irq_raise(struct gpuvirt_vgpu *vgpu);

int gpuvirt_sched_start(struct gpuvirt_mdev_parent *mp);
void gpuvirt_sched_stop(struct gpuvirt_mdev_parent *mp);
void gpuvirt_sched_kick(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_detach(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_attach(struct gpuvirt_vgpu *vgpu);

#endif /* GPUVIRT_VGPU_H */
