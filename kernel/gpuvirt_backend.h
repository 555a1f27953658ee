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

#include <linux/device.h>
#include <linux/types.h>
#include <uapi/linux/gpuvirt.h>

#include "core/catalogue.h"

#define GPUVIRT_GPU_NAME_MAX	32

struct gpuvirt_gpu;
struct gpuvirt_mdev_parent;

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
 *
 * Grows with the execution, scheduler and MIG work; every op is called with
 * no core lock held unless its description says otherwise.
 */
struct gpuvirt_backend_ops {
	const char *name;
	struct page *(*vram_page)(struct gpuvirt_gpu *gpu, u64 offset,
				  bool alloc);
	void (*vram_zero)(struct gpuvirt_gpu *gpu, u64 offset, u64 size);
	void (*vram_discard)(struct gpuvirt_gpu *gpu, u64 offset, u64 size);
};

/**
 * struct gpuvirt_gpu - one physical GPU as the core sees it
 * @dev: the backend's device; parent of the GPU's vGPUs. Must be bound to a
 *	driver while registered.
 * @ops: backend operations
 * @id: host-unique id chosen by the backend
 * @name: short name, e.g. "sim0" or a PCI address
 * @model: catalogue entry, or NULL for a custom GPU
 * @model_name: model name reported to userspace
 * @vram_size: framebuffer size in bytes
 * @engines: number of execution engines
 * @mode: enum gpuvirt_gpu_mode
 * @registered: set between gpuvirt_gpu_register() and _unregister()
 * @debugfs: the core's debugfs directory for this GPU
 * @mdev: the core's vGPU state for this GPU
 *
 * The backend owns the memory and fills in @dev to @engines before
 * registering; the core owns the rest. All fields are stable while
 * registered except @mode, which is written under the registry lock.
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

	/* owned by the core */
	enum gpuvirt_gpu_mode mode;
	bool registered;
	struct dentry *debugfs;
	struct gpuvirt_mdev_parent *mdev;
};

const struct gpuvirt_model *gpuvirt_model_lookup(const char *name);
int gpuvirt_gpu_register(struct gpuvirt_gpu *gpu);
void gpuvirt_gpu_unregister(struct gpuvirt_gpu *gpu);

#endif /* GPUVIRT_BACKEND_H */
