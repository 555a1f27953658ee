// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GPU registry: backends register the GPUs they drive here, and every
 * other part of the core finds them here.
 */
#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/string.h>

#include "gpuvirt.h"
#include "vgpu.h"

struct gpuvirt_registry gpuvirt_registry = {
	.lock = __MUTEX_INITIALIZER(gpuvirt_registry.lock),
	.gpus = XARRAY_INIT(gpuvirt_registry.gpus, 0),
};

/**
 * gpuvirt_gpu_find() - look up a registered GPU by id
 * @id: GPU id
 *
 * Context: registry lock held; the GPU stays valid until it is dropped.
 * Return: the GPU, or NULL.
 */
struct gpuvirt_gpu *gpuvirt_gpu_find(u32 id)
{
	lockdep_assert_held(&gpuvirt_registry.lock);
	return xa_load(&gpuvirt_registry.gpus, id);
}

/**
 * gpuvirt_model_lookup() - find a catalogue model for a backend
 * @name: model name
 *
 * Return: the model, or NULL if the catalogue has none of that name.
 */
const struct gpuvirt_model *gpuvirt_model_lookup(const char *name)
{
	return gpuvirt_catalogue_find(name);
}
EXPORT_SYMBOL_GPL(gpuvirt_model_lookup);

static int gpuvirt_gpu_validate(const struct gpuvirt_gpu *gpu)
{
	if (!gpu->dev || !gpu->ops || !gpu->ops->name ||
	    !gpu->ops->vram_page || !gpu->ops->vram_zero ||
	    !gpu->ops->vram_discard || !gpu->ops->exec ||
	    !gpu->ops->engine_reset) {
		pr_err("gpuvirt: backend registered a GPU without device or ops\n");
		return -EINVAL;
	}
	if (!gpu->name[0] || !gpu->model_name[0]) {
		dev_err(gpu->dev, "GPU %u has no name or model\n", gpu->id);
		return -EINVAL;
	}
	if (!gpu->vram_size || !gpu->engines ||
	    gpu->engines > GPUVIRT_ENGINES_MAX) {
		dev_err(gpu->dev, "GPU %u: invalid size (vram %llu, engines %u)\n",
			gpu->id, gpu->vram_size, gpu->engines);
		return -EINVAL;
	}
	return 0;
}

/* A GPU or vGPU came or went: netlink dumps in progress are stale. */
void gpuvirt_registry_changed(void)
{
	atomic_inc(&gpuvirt_registry.gen);
}

/**
 * gpuvirt_gpu_register() - hand a GPU to the core
 * @gpu: filled-in GPU; the backend keeps owning its memory
 *
 * Return: 0, -EINVAL for an incomplete GPU, -EEXIST if the id is taken, or
 * -ENOMEM.
 */
int gpuvirt_gpu_register(struct gpuvirt_gpu *gpu)
{
	int err;

	err = gpuvirt_gpu_validate(gpu);
	if (err)
		return err;

	mutex_lock(&gpuvirt_registry.lock);
	err = xa_insert(&gpuvirt_registry.gpus, gpu->id, NULL, GFP_KERNEL);
	mutex_unlock(&gpuvirt_registry.lock);
	if (err) {
		if (err == -EBUSY) {
			dev_err(gpu->dev, "GPU id %u is already registered\n",
				gpu->id);
			err = -EEXIST;
		}
		return err;
	}

	/*
	 * Outside the registry lock: mdev takes its own locks. The debugfs
	 * directory comes first and goes last, because vGPUs keep theirs in
	 * it and exist from mdev registration until mdev unregistration.
	 */
	gpu->mode = GPUVIRT_GPU_MODE_TIMESLICED;
	gpuvirt_debugfs_gpu_add(gpu);
	err = gpuvirt_mdev_gpu_add(gpu);
	if (err) {
		gpuvirt_debugfs_gpu_del(gpu);
		mutex_lock(&gpuvirt_registry.lock);
		xa_erase(&gpuvirt_registry.gpus, gpu->id);
		mutex_unlock(&gpuvirt_registry.lock);
		return err;
	}

	mutex_lock(&gpuvirt_registry.lock);
	xa_store(&gpuvirt_registry.gpus, gpu->id, gpu, GFP_KERNEL);
	gpuvirt_registry_changed();
	gpu->registered = true;
	gpuvirt_gpu_notify(gpu, GPUVIRT_CMD_GPU_ADD_NTF);
	dev_info(gpu->dev, "gpuvirt: registered GPU %u (%s, %s)\n",
		 gpu->id, gpu->name, gpu->model_name);
	mutex_unlock(&gpuvirt_registry.lock);
	return 0;
}
EXPORT_SYMBOL_GPL(gpuvirt_gpu_register);

/**
 * gpuvirt_gpu_unregister() - take a GPU back from the core
 * @gpu: a registered GPU
 *
 * On return no core path refers to @gpu any more and the backend may free it.
 */
void gpuvirt_gpu_unregister(struct gpuvirt_gpu *gpu)
{
	mutex_lock(&gpuvirt_registry.lock);
	if (WARN_ON_ONCE(!gpu->registered)) {
		mutex_unlock(&gpuvirt_registry.lock);
		return;
	}
	gpuvirt_gpu_notify(gpu, GPUVIRT_CMD_GPU_DEL_NTF);
	xa_erase(&gpuvirt_registry.gpus, gpu->id);
	gpuvirt_registry_changed();
	gpu->registered = false;
	mutex_unlock(&gpuvirt_registry.lock);

	/* Removes the vGPUs, waiting for their users to close them. */
	gpuvirt_mdev_gpu_del(gpu);
	gpuvirt_debugfs_gpu_del(gpu);
}
EXPORT_SYMBOL_GPL(gpuvirt_gpu_unregister);
