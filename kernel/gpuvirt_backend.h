/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interface between the gpuvirt core and a GPU backend.
 *
 * A backend (the simulated GPU today, a vendor driver tomorrow) fills in a
 * struct gpuvirt_gpu for each physical GPU it drives and registers it with
 * the core. Calls only go downwards: the core calls the backend through
 * struct gpuvirt_backend_ops and never the other way round, apart from
 * register and unregister.
 */
#ifndef GPUVIRT_BACKEND_H
#define GPUVIRT_BACKEND_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <uapi/linux/gpuvirt.h>

#include "core/catalogue.h"

#define GPUVIRT_GPU_NAME_MAX	32

struct gpuvirt_gpu;
struct gpuvirt_mdev_parent;
struct gpuvirt_mig;
struct gpuvirt_sriov;

/**
 * enum gpuvirt_cmd_op - what an engine can be asked to do
 * @GPUVIRT_CMD_NOP: nothing, at the engine's fixed cost per command
 * @GPUVIRT_CMD_WRITE: write @len (4 or 8) bytes of @value at @dst
 * @GPUVIRT_CMD_FILL: fill [@dst, @dst + @len) with the 32-bit @value
 * @GPUVIRT_CMD_COPY: copy @len bytes from @src to @dst; the ranges may
 *	overlap, with memmove semantics
 * @GPUVIRT_CMD_COMPUTE: run @len steps of the compute kernel (one step is
 *	one microsecond of the whole GPU's time, GPUVIRT_EXEC_COMPUTE_PARTS
 *	microseconds of one part: x = x * GPUVIRT_VGPU_COMPUTE_MUL +
 *	GPUVIRT_VGPU_COMPUTE_ADD) from x = @value, then write x (8 bytes) at
 *	@dst
 */
enum gpuvirt_cmd_op {
	GPUVIRT_CMD_NOP,
	GPUVIRT_CMD_WRITE,
	GPUVIRT_CMD_FILL,
	GPUVIRT_CMD_COPY,
	GPUVIRT_CMD_COMPUTE,
};

/**
 * struct gpuvirt_cmd - one command on an engine, possibly run in chunks
 * @op: enum gpuvirt_cmd_op
 * @dst: destination, a byte offset in the context's VRAM window
 * @src: source (COPY), likewise
 * @len: bytes (WRITE, FILL, COPY) or steps (COMPUTE)
 * @value: immediate (WRITE), pattern (FILL) or seed (COMPUTE)
 * @done: progress in units of @len; the backend advances it. Starts at 0.
 * @state: the backend's own progress state between chunks
 *
 * The core validates every range against the context's window before the
 * first chunk and keeps the command unchanged between chunks, so that a
 * preempted command resumes where it stopped and never runs twice.
 */
struct gpuvirt_cmd {
	u32 op;
	u64 dst;
	u64 src;
	u64 len;
	u64 value;
	u64 done;
	u64 state;
};

/* Context ids are below this. */
#define GPUVIRT_EXEC_CTX_MAX	32
/*
 * A GPU's compute is counted in this many equal parts (MIG's compute
 * slices): a context holds @compute of them (struct gpuvirt_exec_ctx).
 */
#define GPUVIRT_EXEC_COMPUTE_PARTS	7

/**
 * struct gpuvirt_exec_ctx - the context a command runs in: one vGPU
 * @id: context id, below GPUVIRT_EXEC_CTX_MAX and unique on the GPU while
 *	the vGPU exists (ids are reused); the backend accounts work per id
 * @vram_offset: start of the context's VRAM window in the GPU's VRAM
 * @vram_size: size of the window; no command may touch VRAM outside it
 * @engines: the engines the context may run on, bit n for engine n: all of
 *	them in time-sliced mode, those of its GPU instance in MIG mode
 * @compute: the part of the GPU's throughput the context holds while it
 *	runs, in GPUVIRT_EXEC_COMPUTE_PARTS: all of them in time-sliced mode
 *	(the vGPU owns the whole GPU during its turn), its GPU instance's
 *	compute slices in MIG mode. 1..GPUVIRT_EXEC_COMPUTE_PARTS. The
 *	backend's modelled cost of a command scales by
 *	GPUVIRT_EXEC_COMPUTE_PARTS / @compute (Documentation/backend.rst,
 *	"Capacity model").
 */
struct gpuvirt_exec_ctx {
	u32 id;
	u64 vram_offset;
	u64 vram_size;
	u64 engines;
	u32 compute;
};

/**
 * struct gpuvirt_vf_config - what a VF is provisioned with (SR-IOV)
 * @type: the vGPU type's name, e.g. "H200-35C"
 * @vram_offset: its framebuffer slice in the GPU's VRAM
 * @vram_size: the slice's size
 * @engines: the engines it may run on, bit n for engine n
 * @ctx: its execution context id (struct gpuvirt_exec_ctx.id)
 * @gi: the GPU instance it belongs to, or -1 for a time-sliced vGPU
 */
struct gpuvirt_vf_config {
	const char *type;
	u64 vram_offset;
	u64 vram_size;
	u64 engines;
	u32 ctx;
	int gi;
};

/**
 * struct gpuvirt_backend_ops - what the core may ask of a backend
 * @name: backend driver name, reported to userspace
 * @vram_page: return the host page behind VRAM byte @offset, with a
 *	reference for the caller. With @alloc false, return NULL for VRAM that
 *	has never been written (it reads as zero); with @alloc true, back it,
 *	zeroed. Errors as ERR_PTR: -ENOSPC when the backend is out of memory
 *	for backing, -ENOMEM, -ERANGE past the end. May sleep. Called with
 *	the vGPU's lock held by the engine, so it must not call back into
 *	the core.
 * @vram_zero: make [offset, offset + size) read as zero. Pages that are
 *	mapped stay mapped and read zero. May sleep. Called with the vGPU's
 *	lock held (reset), so it must not call back into the core.
 * @vram_discard: release the backing of [offset, offset + size). The core
 *	calls it only when nothing maps the range any more. May sleep.
 * @vram_next: the first byte, at or after @offset and below @end, of a
 *	VRAM page that is backed (that @vram_page with @alloc false would
 *	return), page-aligned; @end if there is none. A snapshot: pages may
 *	be backed or discarded meanwhile. Migration walks a vGPU's slice with
 *	it, so it should cost about the backed pages, not the range. May
 *	sleep; called with no core lock held but a migration file's.
 * @exec: run @cmd in @ctx from @cmd->done on, for at most about @budget_ns
 *	of modelled engine time (at least one unit of progress, so a budget
 *	smaller than one unit may be overrun by one unit). Stores the engine
 *	time used in *@cost_ns: the backend's model, at the throughput of
 *	@ctx->compute parts of the GPU, not the host CPU time it took.
 *	Returns 1 when the command is complete, 0
 *	when it is not (call again with the same @cmd), or a negative errno:
 *	-EFAULT for a range outside @ctx (the core checks first; this is the
 *	backend's own guard), -EINVAL for engines or a @ctx->compute the GPU
 *	does not have, -ENOSPC or -ENOMEM when VRAM could not be
 *	backed, -EIO for an engine fault. A hung engine makes no progress and
 *	returns 0 with the time spent; the core gives up on the command after
 *	its watchdog and calls @engine_reset. Called with the vGPU's lock
 *	held; may sleep; must not call back into the core.
 * @engine_reset: reset the engines in the mask @engines (bit n for engine
 *	n) after a hang or fault, so that other contexts can run. Contexts'
 *	VRAM is untouched, and so are the other engines. May sleep.
 * @reset: reset the whole GPU, as a MIG mode change does on hardware:
 *	every engine, and VRAM, which afterwards reads as zero everywhere.
 *	The core calls it only while no vGPU exists. May sleep.
 * @vf_provision: (SR-IOV, optional) give virtual function @vf (0-based)
 *	the resources of a vGPU, as a vendor's firmware does when a VF is
 *	given a type: its VRAM slice, engines and context. The slice reads as
 *	zero already. Called with the VF's lock held, before the VF is
 *	offered to a VFIO user. Returns 0 or a negative errno, which fails
 *	the typing. May sleep.
 * @vf_release: (SR-IOV, optional) take back what @vf_provision gave, when
 *	the VF's type is cleared or the VF goes away, after its VFIO user has
 *	closed it. May sleep.
 *
 * Every member but the SR-IOV ones is required: gpuvirt_gpu_register()
 * refuses a GPU whose ops lack one, naming it. A GPU offers the sriov
 * vGPU model only if its device is a PCI physical function, @max_vfs in
 * struct gpuvirt_gpu is not 0, and both SR-IOV ops are there. Capabilities
 * are the fields of struct gpuvirt_gpu: VRAM size and engine count. Every
 * op is called with no core lock held unless its description says
 * otherwise; the reset op is called with the GPU's own lock held.
 */
struct gpuvirt_backend_ops {
	const char *name;
	struct page *(*vram_page)(struct gpuvirt_gpu *gpu, u64 offset,
				  bool alloc);
	void (*vram_zero)(struct gpuvirt_gpu *gpu, u64 offset, u64 size);
	void (*vram_discard)(struct gpuvirt_gpu *gpu, u64 offset, u64 size);
	u64 (*vram_next)(struct gpuvirt_gpu *gpu, u64 offset, u64 end);
	int (*exec)(struct gpuvirt_gpu *gpu, const struct gpuvirt_exec_ctx *ctx,
		    struct gpuvirt_cmd *cmd, u64 budget_ns, u64 *cost_ns);
	void (*engine_reset)(struct gpuvirt_gpu *gpu, u64 engines);
	void (*reset)(struct gpuvirt_gpu *gpu);
	int (*vf_provision)(struct gpuvirt_gpu *gpu, unsigned int vf,
			    const struct gpuvirt_vf_config *cfg);
	void (*vf_release)(struct gpuvirt_gpu *gpu, unsigned int vf);
};

/**
 * struct gpuvirt_gpu - one physical GPU as the core sees it
 * @dev: the backend's device; parent of the GPU's vGPUs. Must be bound to a
 *	driver while registered, and must carry gpuvirt_gpu_groups (below)
 *	in its groups or its driver's dev_groups.
 * @ops: backend operations
 * @id: host-unique id chosen by the backend
 * @name: short name, e.g. "sim0" or a PCI address
 * @model: catalogue entry, or NULL for a custom GPU
 * @model_name: model name reported to userspace
 * @vram_size: framebuffer size in bytes
 * @engines: number of execution engines
 * @max_vfs: SR-IOV: how many VFs the PF has (its TotalVFs), 0 without
 *	SR-IOV; see struct gpuvirt_backend_ops for what else it takes
 * @lock: the GPU's own lock (kernel/core/gpu.c). Serialises every change
 *	of the GPU's configuration (mode, vGPU mode, GIs) and the start of
 *	its unregistration. Taken before the registry lock and before any
 *	lock of a vGPU parent or scheduler. Held for short sections only,
 *	never across a wait for a VFIO user to close a vGPU (removing a
 *	GPU or a VF waits without it), so that a VM holding a vGPU never
 *	blocks the GPU's other requests; requests take it killably.
 * @refs: references: one while registered, one per user that found the GPU
 *	in the registry (netlink requests, sysfs files). Unregistration
 *	waits for the others to be dropped.
 * @released: completed when @refs drops to zero
 * @mode: enum gpuvirt_gpu_mode
 * @mig: the GPU instances, in MIG mode; NULL in time-sliced mode
 * @registered: set between gpuvirt_gpu_register() and _unregister()
 * @debugfs: the core's debugfs directory for this GPU
 * @mdev: the core's vGPU state for this GPU
 * @sriov: the core's SR-IOV state, for a GPU that has SR-IOV
 *
 * The backend owns the memory and fills in @dev to @max_vfs before
 * registering; the core owns the rest. All fields are stable while
 * registered except @mode, @mig and @registered, which are written under
 * both @lock and the registry lock, and may be read under either.
 */
struct gpuvirt_gpu {
	struct device *dev;
	const struct gpuvirt_backend_ops *ops;
	u32 id;
	char name[GPUVIRT_GPU_NAME_MAX];
	const struct gpuvirt_model *model;
	char model_name[GPUVIRT_MODEL_NAME_MAX];
	u64 vram_size;
	u32 engines;
	u32 max_vfs;

	/* owned by the core */
	struct mutex lock;	/* see above */
	refcount_t refs;
	struct completion released;
	enum gpuvirt_gpu_mode mode;
	struct gpuvirt_mig *mig;
	bool registered;
	struct dentry *debugfs;
	struct gpuvirt_mdev_parent *mdev;
	struct gpuvirt_sriov *sriov;
};

/*
 * The GPU's sysfs files (<gpu device>/gpuvirt/: mig_mode, vgpu_mode,
 * sched_policy, sched_slice_us). A backend lists them in its GPU device's
 * groups before device_add(), or in its driver's dev_groups, so that they
 * exist when the device is announced to udev. They answer -ENODEV until
 * the GPU is registered and after it is unregistered.
 */
extern const struct attribute_group *gpuvirt_gpu_groups[];

const struct gpuvirt_model *gpuvirt_model_lookup(const char *name);
int gpuvirt_gpu_register(struct gpuvirt_gpu *gpu);
void gpuvirt_gpu_unregister(struct gpuvirt_gpu *gpu);

/*
 * SR-IOV (kernel/core/sriov.c). A backend whose GPU has SR-IOV calls
 * gpuvirt_sriov_configure() from its PF driver's sriov_configure, and
 * binds the VFs to a VF driver whose probe calls gpuvirt_vf_add(), whose
 * remove calls gpuvirt_vf_del(), and whose dev_groups are gpuvirt_vf_groups
 * (<VF>/gpuvirt/: creatable_vgpu_types, current_vgpu_type, vgpu_uuid, and
 * the vGPU's weight, min_pct, max_pct and frame_rate_limiter). The core
 * owns the VFs' driver data. gpuvirt_gpu_unregister() disables the
 * VFs first.
 */
struct pci_dev;
extern const struct attribute_group *gpuvirt_vf_groups[];
int gpuvirt_sriov_configure(struct gpuvirt_gpu *gpu, int num_vfs);
int gpuvirt_vf_add(struct pci_dev *pdev);
void gpuvirt_vf_del(struct pci_dev *pdev);

#endif /* GPUVIRT_BACKEND_H */
