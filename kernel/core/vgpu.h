/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vGPU types (mdev types) and vGPUs (mdev devices that are VFIO devices).
 */
#ifndef GPUVIRT_VGPU_H
#define GPUVIRT_VGPU_H

#include <linux/eventfd.h>
#include <linux/mdev.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/uuid.h>
#include <linux/vfio.h>

#include "display.h"
#include "fbacct.h"
#include "gi.h"
#include "mig.h"
#include "migration.h"
#include "gpuvirt.h"
#include "profiles.h"
#include "sched_policy.h"

struct gpuvirt_gi;
struct gpuvirt_mdev_parent;
struct gpuvirt_vf;
struct gpuvirt_vgpu;

/**
 * struct gpuvirt_sched - the engines of one GPU and who owns them
 * @lock: protects @sp, @vgpus, @current_vgpu, @last_vgpu, @kicked,
 *	@parked, @inline_vgpu, @inline_deferred, the telemetry below and
 *	every vGPU's struct gpuvirt_vgpu_stats. Taken inside a vGPU's lock,
 *	never the other way round.
 * @sp: the policy's state; a vGPU's policy slot is its context id
 * @vgpus: the vGPU in each policy slot, or NULL
 * @current_vgpu: the vGPU the engine thread is running now, or NULL
 * @last_vgpu: the vGPU that owned them last, to count switches
 * @kicked: something changed since the last pick: a vGPU became runnable
 *	or the configuration changed; an idle engine picks again
 * @parked: the engine thread's last pick found nothing to run and no time
 *	to wait for: it is idle until kicked, and a doorbell may run its
 *	vGPU's work itself (engine.c, gpuvirt_sched_inline())
 * @inline_vgpu: the vGPU a doorbell is running that way, or NULL; it owns
 *	the engines, and the engine thread starts no turn meanwhile
 * @inline_deferred: the engine thread was kicked while @inline_vgpu ran;
 *	the inline turn kicks it again at its end
 * @wq: the engine thread waits here while idle
 * @idle_wq: gpuvirt_sched_detach() waits here for the engine to let go
 * @thread: the engine thread
 * @mark_ns: engine clock at the end of the last turn or idle period
 * @busy_ns: time some vGPU owned the engines
 * @idle_ns: time no vGPU did, including @switch_ns and @idle_lag_ns
 * @switch_ns: the part of @idle_ns spent between turns deciding who is next
 * @switches: turns that went to another vGPU than the one before
 * @inline_turns: turns run by doorbells (@inline_vgpu), counted in the
 *	figures above like the engine thread's
 * @decide_ns: CPU time the engine thread spent deciding and accounting
 *	(the scheduler's own cost, apart from running the work); written
 *	by the engine thread only. An inline turn decides in the task that
 *	rang, and is not counted here.
 * @lag_ns: time the host did not give the engine thread to keep the
 *	modelled rate: wall time turns held the engines beyond the modelled
 *	time of the work they ran, plus @idle_lag_ns. Only grows.
 * @idle_lag_ns: the part of @lag_ns (and of @idle_ns) that timed idle
 *	waits lasted past the end the policy asked for (engine.c,
 *	gpuvirt_sched_idle()). Only grows.
 * @caught_up_ns: the part of @lag_ns the engine made up in later turns
 * @behind_ns: @lag_ns - @caught_up_ns: the engine's modelled clock is the
 *	wall clock less this (engine.c), and the policy runs on that clock
 */
struct gpuvirt_sched {
	spinlock_t lock;	/* see above */
	struct gpuvirt_sp sp;
	struct gpuvirt_vgpu *vgpus[GPUVIRT_SP_SLOTS];
	struct gpuvirt_vgpu *current_vgpu;
	struct gpuvirt_vgpu *last_vgpu;
	bool kicked;
	bool parked;
	bool inline_deferred;
	struct gpuvirt_vgpu *inline_vgpu;
	wait_queue_head_t wq;
	wait_queue_head_t idle_wq;
	struct task_struct *thread;
	u64 mark_ns;
	u64 busy_ns;
	u64 idle_ns;
	u64 switch_ns;
	u64 switches;
	u64 inline_turns;
	u64 decide_ns;
	u64 lag_ns;
	u64 idle_lag_ns;
	u64 caught_up_ns;
	u64 behind_ns;
};

/**
 * struct gpuvirt_type - one vGPU type of one GPU, an mdev type
 * @mtype: the mdev type; sysfs_name is the profile name
 * @profile: the profile, in @parent->profiles or @parent->mig_profiles
 * @parent: the GPU's mdev state
 * @mig_profile: for a MIG-backed type offered on the GPU's own parent, the
 *	GI profile (index in the GPU's MIG table) whose GIs its vGPUs go to;
 *	-1 for a type whose vGPUs go to @parent itself
 */
struct gpuvirt_type {
	struct mdev_type mtype;
	const struct gpuvirt_profile *profile;
	struct gpuvirt_mdev_parent *parent;
	int mig_profile;
};

/**
 * struct gpuvirt_mdev_parent - the vGPU side of a GPU, or of a GPU instance
 * @parent: the mdev parent, registered on @dev while published
 * @gpu: the GPU
 * @dev: the device the mdev parent is registered on: the GPU's device, or
 *	a GI's (gi.c)
 * @gi: the GPU instance in MIG mode, NULL for the GPU's own time-sliced
 *	parent
 * @vram_base: first byte of the parent's VRAM in the GPU's: 0 for the GPU,
 *	the GI's range in MIG mode. @fb places slices from 0 up to the
 *	parent's VRAM size; a vGPU's slice starts at @vram_base plus that.
 * @engines: the engines the parent's vGPUs run on, bit n for engine n
 * @ctx_base: added to a vGPU's policy slot to make its execution context
 *	id, so that ids stay unique on the GPU across GIs
 * @lock: protects @fb, @offline, @mig and @sriov. A vGPU is placed in @fb
 *	in the critical section that checks @offline, @mig and @sriov
 *	(gpuvirt_mdev_place()), and @mig and @sriov change only in one that
 *	finds @fb empty (gpuvirt_mdev_reconfigure()), so that no vGPU lands
 *	in a model or mode it does not belong to.
 * @fb: VRAM placements; a vGPU holds its place from init to release
 * @offline: no vGPU may be created: the parent is being withdrawn (GPU
 *	unregistration, GI destroy)
 * @mig: the GPU's own parent while the GPU is in MIG mode: its time-sliced
 *	types offer nothing, its MIG-backed types place vGPUs on GIs
 * @sriov: the GPU is in the sriov vGPU model: the types offer nothing as
 *	mdev types; its VFs take them (sriov.c)
 * @published: the mdev parent is registered; changed under the GPU's
 *	lock only
 * @nr_types: entries used in @profiles
 * @profiles: the profiles offered, time-sliced or (a GI's) MIG-backed
 * @nr_mig_types: entries used in @mig_profiles and @mig_index; the GPU's
 *	own parent only
 * @mig_profiles: the GPU's MIG-backed vGPU types, offered on its own parent
 *	so that consumers that take only PCI devices as mdev parents (libvirt,
 *	and through it OpenStack Nova) see them; a vGPU of one goes to the
 *	GI of that profile with the lowest id that has room
 * @mig_index: for each of @mig_profiles, its GI profile in the MIG table
 * @types: the mdev types made of @profiles, then of @mig_profiles,
 *	allocated while published
 * @type_ptrs: what mdev_register_parent() takes, likewise
 * @sched: the engines' scheduler
 * @debugfs: the directory @debugfs_sched and @debugfs_vgpus are in
 * @debugfs_sched: <dir>/sched
 * @debugfs_vgpus: <dir>/vgpus/
 *
 * The GPU's own parent is allocated when the GPU registers, published
 * until it unregisters, and freed after that. A GI's lives
 * as long as the GI. Either is freed only once mdev_unregister_parent()
 * has removed every vGPU of it.
 */
struct gpuvirt_mdev_parent {
	struct mdev_parent parent;
	struct gpuvirt_gpu *gpu;
	struct device *dev;
	struct gpuvirt_gi *gi;
	u64 vram_base;
	u64 engines;
	u32 ctx_base;
	struct mutex lock;	/* see above */
	struct gpuvirt_fb fb;
	bool offline;
	bool mig;
	bool sriov;
	bool published;
	unsigned int nr_types;
	struct gpuvirt_profile profiles[GPUVIRT_PROFILES_MAX];
	unsigned int nr_mig_types;
	struct gpuvirt_profile mig_profiles[GPUVIRT_MIG_PROFILES];
	u8 mig_index[GPUVIRT_MIG_PROFILES];
	struct gpuvirt_type *types;
	struct mdev_type **type_ptrs;
	struct gpuvirt_sched sched;
	struct dentry *debugfs;
	struct dentry *debugfs_sched;
	struct dentry *debugfs_vgpus;
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
 * @cmd: the command of the packet at @head while it runs, in chunks
 * @cmd_active: @cmd holds the packet at @head, partly run
 * @cmd_dwords: the packet's length
 * @cmd_header: the packet's header dword
 * @cmd_seqno: FENCE: the seqno to publish when it completes
 * @cmd_stuck_ns: engine time @cmd has spent without progress (watchdog)
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
	struct gpuvirt_cmd cmd;
	bool cmd_active;
	u32 cmd_dwords;
	u32 cmd_header;
	u32 cmd_seqno;
	u64 cmd_stuck_ns;
};

#define GPUVIRT_WAIT_HIST_BUCKETS	9

/**
 * struct gpuvirt_vgpu_stats - a vGPU's scheduling telemetry
 * @run_ns: wall time it owned the engines
 * @charged_ns: modelled time of its turns, what the policy charged it:
 *	@run_ns less its lag
 * @lag_ns: wall time its turns held the engines beyond the modelled time
 *	of the work they ran. Only grows; the engine makes up lag in the
 *	next turn, whoever's it is, so @run_ns - @charged_ns may be less.
 * @slices: turns it got
 * @preemptions: turns that ended with its work unfinished
 * @work_ns: modelled engine time of the work it ran
 * @packets: packets it completed
 * @wait_since_ns: when it last became runnable, 0 once it has run since
 * @wait_hist: waits from becoming runnable to its first turn, by bucket:
 *	<= 1, 4, 16, ... 16384 us, and above
 *
 * Under the GPU's sched lock.
 */
struct gpuvirt_vgpu_stats {
	u64 run_ns;
	u64 charged_ns;
	u64 lag_ns;
	u64 slices;
	u64 preemptions;
	u64 work_ns;
	u64 packets;
	u64 wait_since_ns;
	u64 wait_hist[GPUVIRT_WAIT_HIST_BUCKETS];
};

#define GPUVIRT_VGPU_CFG_SIZE	256

/**
 * struct gpuvirt_vgpu - one vGPU, the VFIO device a VM is given
 * @vdev: the VFIO device
 * @mp: the parent it belongs to: the GPU's own, or a GI's
 * @type: the vGPU's type
 * @vf: the VF it is made on (SR-IOV, sriov.c), or NULL for an mdev
 * @uuid: its UUID as a string: the mdev's name, or a VF vGPU's own
 * @vram_offset: first byte of its slice in the GPU's VRAM
 * @vram_size: size of its slice
 * @bar2_size: BAR2 size: @vram_size rounded up to a power of two
 * @bar2_id: index of the vGPU's range of mmap page offsets, from init to
 *	release
 * @bar2_pgoff: first page offset of that range: BAR2 mappings are moved
 *	there so that they can be zapped (vgpu.c, "BAR2 mappings")
 * @memory_lock: orders BAR accesses against the command register's Memory
 *	Space bit. Held for read by BAR2 faults and BAR2 reads and writes,
 *	which fail while the bit is clear; held for write by whatever changes
 *	the bit (config writes of the command register, reset), which zaps
 *	the BAR2 mappings when memory goes off. Taken after mmap_lock (faults
 *	and mmap), before @lock, and never held across a user copy.
 * @bar2_mapping: the address_space the BAR2 VMAs are in, once mapped; set
 *	and read under @memory_lock held for write
 * @lock: protects everything below. The command register in @cfg changes
 *	only with @memory_lock held for write as well, so holders of
 *	@memory_lock may read it.
 * @cfg: emulated PCI config space
 * @cfg_wmask: which config space bits the guest may write
 * @scratch: BAR0 scratch register
 * @irq_status: BAR0 interrupt status (write 1 to clear)
 * @intx_trigger: eventfd for INTx, or NULL
 * @msi_trigger: eventfd for MSI, or NULL
 * @req_trigger: eventfd for the VFIO device request (REQ), or NULL
 * @intx_masked: INTx is masked through VFIO
 * @msi_suppressed: MSIs not sent because Bus Master was off; also read
 *	without the lock, by debugfs (vgpus/<uuid>/msi_suppressed)
 * @ring: the command ring
 * @detached: the device is closed: the engine must not run it
 * @opened: a VFIO user has the device open
 * @retiring: a VF's type is being cleared: the device must not be opened
 * @display: the display heads (display.c); its guest-visible state is
 *	under @lock
 * @mig_stopped: migration stopped the device (STOP, STOP_COPY, RESUMING):
 *	the engine must not run it; it stops at a packet or chunk boundary
 * @irq_held: interrupt causes are pending that no eventfd has seen: a
 *	migration stream brought them, or they were raised while the device
 *	was stopped, which signals nothing (linux/vfio.h). They are signalled
 *	when it runs, on the (destination) VMM's eventfds
 * @slot: the vGPU's policy slot and execution context id; fixed from init
 *	to release
 * @stats: scheduling telemetry, under the GPU's sched lock
 * @debugfs: <debugfs>/gpuvirt/gpus/<gpu>/vgpus/<uuid>/
 * @uuid_node: in the index of every vGPU by UUID (engine.c) while the vGPU
 *	holds its policy slot; under that index's lock
 * @mig: migration state (migration.c). Its state mutex is taken before
 *	@memory_lock and @lock; its dirty and stats spinlocks inside them.
 */
struct gpuvirt_vgpu {
	struct vfio_device vdev;
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_type *type;
	struct gpuvirt_vf *vf;
	char uuid[UUID_STRING_LEN + 1];
	u64 vram_offset;
	u64 vram_size;
	u64 bar2_size;
	int bar2_id;
	unsigned long bar2_pgoff;
	struct rw_semaphore memory_lock;	/* see above */
	struct address_space *bar2_mapping;

	struct mutex lock;	/* see above */
	u8 cfg[GPUVIRT_VGPU_CFG_SIZE];
	u8 cfg_wmask[GPUVIRT_VGPU_CFG_SIZE];
	u32 scratch;
	u32 irq_status;
	struct eventfd_ctx *intx_trigger;
	struct eventfd_ctx *msi_trigger;
	struct eventfd_ctx *req_trigger;
	bool intx_masked;
	u64 msi_suppressed;
	struct gpuvirt_vgpu_ring ring;
	bool detached;
	bool opened;
	bool retiring;
	struct gpuvirt_display display;
	bool mig_stopped;
	bool irq_held;

	int slot;
	struct gpuvirt_vgpu_stats stats;
	struct dentry *debugfs;
	struct hlist_node uuid_node;
	struct gpuvirt_migration mig;
};

int gpuvirt_mdev_init(void);
void gpuvirt_mdev_exit(void);
int gpuvirt_mdev_gpu_add(struct gpuvirt_gpu *gpu);
void gpuvirt_mdev_gpu_del(struct gpuvirt_gpu *gpu);
struct gpuvirt_mdev_parent *
gpuvirt_mdev_parent_create(struct gpuvirt_gpu *gpu, struct device *dev,
			   u64 vram_base, u64 vram_size, u64 engines,
			   u32 ctx_base, struct dentry *debugfs);
void gpuvirt_mdev_parent_destroy(struct gpuvirt_mdev_parent *mp);
int gpuvirt_mdev_parent_publish(struct gpuvirt_mdev_parent *mp);
void gpuvirt_mdev_parent_withdraw(struct gpuvirt_mdev_parent *mp);
int gpuvirt_mdev_parent_offline(struct gpuvirt_mdev_parent *mp);
struct gpuvirt_mdev_parent *gpuvirt_gpu_mp(struct gpuvirt_gpu *gpu,
					   unsigned int i);
#define GPUVIRT_GPU_MPS	(1 + GPUVIRT_MIG_GIS_MAX)
int gpuvirt_mdev_reconfigure(struct gpuvirt_mdev_parent *mp, bool sriov,
			     bool mixed, bool mig);
void gpuvirt_mdev_leave_mig(struct gpuvirt_mdev_parent *mp);
struct gpuvirt_mdev_parent *gpuvirt_mdev_place(struct gpuvirt_type *type,
					       u64 *offset,
					       struct gpuvirt_vf *vf);
unsigned int gpuvirt_type_available(struct gpuvirt_type *type);

/**
 * struct gpuvirt_vf - a virtual function of a GPU in the sriov vGPU model
 * @pdev: the VF; its driver data points here while it is bound
 * @gpu: its GPU, with a reference, while the VF is bound
 * @index: its VF index, 0-based (the backend's number for it)
 * @lock: serialises setting and clearing its type: @type_id, @vgpu,
 *	@pending and @uuid. Held, it also keeps @vgpu alive: the vGPU is
 *	put only under it (gpuvirt_vf_untype()), so the VF's sysfs files
 *	use @vgpu under it and nothing else. Taken before the GPU's lock,
 *	the vGPU's @lock and its GPU's sched lock. When the VF goes away it
 *	is held across the wait for the vGPU's VFIO user, once the VF's
 *	files are gone, and the GPU's lock is not.
 * @type_id: its type's id (1-based index in the GPU's own parent's types),
 *	0 when it has none; @type_id and @vgpu change under the GPU's lock
 *	as well, and may be read under either
 * @pending: the type being made, read by the vGPU's init
 * @vgpu: the vGPU made of it while it has a type
 * @uuid: the vGPU's UUID, new each time the VF is given a type
 */
struct gpuvirt_vf {
	struct pci_dev *pdev;
	struct gpuvirt_gpu *gpu;
	unsigned int index;
	struct mutex lock;	/* see above */
	u32 type_id;
	struct gpuvirt_type *pending;
	struct gpuvirt_vgpu *vgpu;
	uuid_t uuid;
};

extern const struct vfio_device_ops gpuvirt_vgpu_vf_ops;
bool gpuvirt_mdev_mixed(struct gpuvirt_mdev_parent *mp);

extern const struct vfio_device_ops gpuvirt_vgpu_ops;

void gpuvirt_vgpu_irq_raise(struct gpuvirt_vgpu *vgpu);
struct page *gpuvirt_vgpu_slice_page(struct gpuvirt_vgpu *vgpu, u64 off,
				     size_t len, bool alloc);

int gpuvirt_sched_start(struct gpuvirt_mdev_parent *mp);
void gpuvirt_sched_stop(struct gpuvirt_mdev_parent *mp);
int gpuvirt_sched_add(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_remove(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_kick(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_ring(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_detach(struct gpuvirt_vgpu *vgpu);
void gpuvirt_sched_attach(struct gpuvirt_vgpu *vgpu);
void gpuvirt_ring_clear(struct gpuvirt_vgpu_ring *r);

/* Configuration; each returns 0 or the policy's errno. */
int gpuvirt_sched_set_policy(struct gpuvirt_mdev_parent *mp, u32 policy);
int gpuvirt_sched_set_slice(struct gpuvirt_mdev_parent *mp, u64 slice_ns);
int gpuvirt_sched_vgpu_set(struct gpuvirt_vgpu *vgpu, u32 weight, u32 min_pct,
			   u32 max_pct);
int gpuvirt_sched_find_gpu_id(const char *uuid, u32 *gpu_id);
struct gpuvirt_vgpu *gpuvirt_sched_find_locked(struct gpuvirt_sched *s,
					       const char *uuid);
int gpuvirt_sched_set(struct gpuvirt_mdev_parent *mp, u32 policy,
		      u64 slice_ns);
const char *gpuvirt_sched_policy_name(u32 policy);
void gpuvirt_vgpu_notify(struct gpuvirt_vgpu *vgpu, u8 cmd);
void gpuvirt_sched_notify(struct gpuvirt_mdev_parent *mp);
int gpuvirt_sched_policy_parse(const char *name);
u64 gpuvirt_sched_clock(const struct gpuvirt_sched *s);

void gpuvirt_debugfs_mdev_add(struct gpuvirt_mdev_parent *mp);
void gpuvirt_debugfs_mdev_del(struct gpuvirt_mdev_parent *mp);
void gpuvirt_debugfs_vgpu_add(struct gpuvirt_vgpu *vgpu);
void gpuvirt_debugfs_vgpu_del(struct gpuvirt_vgpu *vgpu);

extern const struct attribute_group *gpuvirt_vgpu_groups[];

/* A vGPU's sysfs settings (sysfs.c): an mdev's files and a typed VF's */
enum gpuvirt_vgpu_param {
	GPUVIRT_VGPU_PARAM_WEIGHT,
	GPUVIRT_VGPU_PARAM_MIN_PCT,
	GPUVIRT_VGPU_PARAM_MAX_PCT,
	GPUVIRT_VGPU_PARAM_FRL,		/* frame_rate_limiter */
};

ssize_t gpuvirt_vgpu_param_show(struct gpuvirt_vgpu *vgpu, char *buf,
				enum gpuvirt_vgpu_param p);
ssize_t gpuvirt_vgpu_param_store(struct gpuvirt_vgpu *vgpu, const char *buf,
				 size_t count, enum gpuvirt_vgpu_param p);
extern const struct attribute_group gpuvirt_sched_attr_group;

#endif /* GPUVIRT_VGPU_H */
