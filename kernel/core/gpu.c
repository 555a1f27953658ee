// SPDX-License-Identifier: GPL-2.0-only
/*
 * The GPU: the core's per-GPU object. Backends register the GPUs they drive
 * here; this file owns a GPU's registration and unregistration, its lock and
 * its reference count, and the changes of its configuration (MIG mode, vGPU
 * mode), each of which announces itself.
 *
 * Registration, in this order, each step undone in reverse:
 *   1. debugfs: <debugfs>/gpuvirt/gpus/<id>/, where the vGPUs' directories
 *	go from the moment they can exist;
 *   2. mdev parent: the time-sliced and MIG-backed vGPU types (mdev.c);
 *   3. sysfs: the GPU's files are the device's own groups
 *	(gpuvirt_gpu_groups), there since the device was announced; they
 *	answer once the GPU can be found, which is the next step;
 *   4. announce: the GPU enters the registry, where netlink, sysfs and
 *	debugfs find it, and the monitor group hears of it.
 * Unregistration withdraws the announcement, withdraws the mdev parent
 * (removing the vGPUs made through it), tears MIG down (every GI with its
 * vGPUs), then
 * waits for the last reference before freeing the parent and debugfs.
 *
 * Locking (struct gpuvirt_gpu documents each field):
 *   gpu->lock		per GPU: configuration changes and the start of
 *			unregistration. Held for short sections only, never
 *			across a wait for the GPU's VFIO users (a VM holds a
 *			vGPU for as long as it likes): unregistration marks
 *			the GPU unregistered under it, then drops it to wait.
 *			Taken killably by requests (gpuvirt_gpu_lock()).
 *   registry lock	global and short: the registry's xarray and the
 *			fields readers may see change (mode, mig, GIs,
 *			registered). Never held across a wait for anything.
 * The order is gpu->lock, then the registry lock, then a parent's or
 * scheduler's own locks.
 */
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "gpuvirt.h"
#include "sriov.h"
#include "vgpu.h"

struct gpuvirt_registry gpuvirt_registry = {
	.lock = __MUTEX_INITIALIZER(gpuvirt_registry.lock),
	.gpus = XARRAY_INIT(gpuvirt_registry.gpus, 0),
	.gen = ATOMIC_INIT(1),
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
 * gpuvirt_gpu_get() - find a registered GPU and take a reference to it
 * @id: GPU id
 *
 * A GPU is in the registry only while it holds its own reference, so a
 * GPU found there can always be taken. The reference keeps the GPU's
 * memory and its core state; it does not keep it registered.
 *
 * Return: the GPU, to give back with gpuvirt_gpu_put(), or NULL.
 */
struct gpuvirt_gpu *gpuvirt_gpu_get(u32 id)
{
	struct gpuvirt_gpu *gpu;

	mutex_lock(&gpuvirt_registry.lock);
	gpu = xa_load(&gpuvirt_registry.gpus, id);
	if (gpu)
		refcount_inc(&gpu->refs);
	mutex_unlock(&gpuvirt_registry.lock);
	return gpu;
}

/**
 * gpuvirt_gpu_get_by_dev() - gpuvirt_gpu_get() by the backend's device
 * @dev: a GPU's device
 *
 * Return: the GPU, with a reference, or NULL when @dev is not registered.
 */
struct gpuvirt_gpu *gpuvirt_gpu_get_by_dev(struct device *dev)
{
	struct gpuvirt_gpu *gpu, *found = NULL;
	unsigned long id;

	mutex_lock(&gpuvirt_registry.lock);
	xa_for_each(&gpuvirt_registry.gpus, id, gpu) {
		if (gpu->dev == dev) {
			refcount_inc(&gpu->refs);
			found = gpu;
			break;
		}
	}
	mutex_unlock(&gpuvirt_registry.lock);
	return found;
}

/**
 * gpuvirt_gpu_put() - give back a reference
 * @gpu: the GPU
 */
void gpuvirt_gpu_put(struct gpuvirt_gpu *gpu)
{
	if (refcount_dec_and_test(&gpu->refs))
		complete(&gpu->released);
}

/**
 * gpuvirt_gpu_lock() - take a referenced GPU's lock, if it is registered
 * @gpu: the GPU, with a reference held
 *
 * The lock is held only for short sections, never across a wait for a
 * VFIO user (struct gpuvirt_gpu), and the wait for it is killable all the
 * same: a request that names the GPU never hangs its caller.
 *
 * Return: 0 with the lock held; without it, -ENODEV when the GPU was
 * unregistered since it was found, or -EINTR when a fatal signal came
 * while waiting.
 */
int gpuvirt_gpu_lock(struct gpuvirt_gpu *gpu)
{
	if (mutex_lock_killable(&gpu->lock))
		return -EINTR;
	if (gpu->registered)
		return 0;
	mutex_unlock(&gpu->lock);
	return -ENODEV;
}

/**
 * gpuvirt_gpu_unlock() - drop what gpuvirt_gpu_lock() took
 * @gpu: the GPU
 */
void gpuvirt_gpu_unlock(struct gpuvirt_gpu *gpu)
{
	mutex_unlock(&gpu->lock);
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

/* The first op the core needs that @ops lacks, or NULL. */
static const char *gpuvirt_gpu_missing_op(const struct gpuvirt_backend_ops *ops)
{
	if (!ops->name)
		return "name";
	if (!ops->vram_page)
		return "vram_page";
	if (!ops->vram_zero)
		return "vram_zero";
	if (!ops->vram_discard)
		return "vram_discard";
	if (!ops->vram_next)
		return "vram_next";
	if (!ops->exec)
		return "exec";
	if (!ops->engine_reset)
		return "engine_reset";
	if (!ops->reset)
		return "reset";
	return NULL;
}

/* Whether @groups lists the GPU's sysfs files. */
static bool gpuvirt_gpu_groups_in(const struct attribute_group *const *groups)
{
	for (; groups && *groups; groups++)
		if (*groups == gpuvirt_gpu_groups[0])
			return true;
	return false;
}

static int gpuvirt_gpu_validate(const struct gpuvirt_gpu *gpu)
{
	const char *missing;

	if (!gpu->dev || !gpu->ops) {
		pr_err("gpuvirt: backend registered a GPU without device or ops\n");
		return -EINVAL;
	}
	missing = gpuvirt_gpu_missing_op(gpu->ops);
	if (missing) {
		dev_err(gpu->dev, "GPU %u: the backend has no '%s' op; every op of struct gpuvirt_backend_ops is required\n",
			gpu->id, missing);
		return -EINVAL;
	}
	if (!gpuvirt_gpu_groups_in(gpu->dev->groups) &&
	    !(gpu->dev->type && gpuvirt_gpu_groups_in(gpu->dev->type->groups)) &&
	    !(gpu->dev->driver &&
	      gpuvirt_gpu_groups_in(gpu->dev->driver->dev_groups))) {
		dev_err(gpu->dev, "GPU %u: the device does not carry gpuvirt_gpu_groups\n",
			gpu->id);
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

/*
 * A GPU or vGPU came or went: netlink dumps in progress are stale. The
 * generation skips 0 when it wraps: a dump whose first part saw 0 would
 * not be flagged (nl_dump_check_consistent() takes 0 for "not set").
 * Called under any lock or none; the compare-and-exchange keeps 0 from
 * ever being seen.
 */
void gpuvirt_registry_changed(void)
{
	int old = atomic_read(&gpuvirt_registry.gen), gen;

	do {
		gen = (int)((u32)old + 1);
		if (!gen)
			gen = 1;
	} while (!atomic_try_cmpxchg(&gpuvirt_registry.gen, &old, gen));
}

/**
 * gpuvirt_gpu_register() - hand a GPU to the core
 * @gpu: filled-in GPU; the backend keeps owning its memory
 *
 * Return: 0, -EINVAL for an incomplete GPU (a missing op, a device without
 * gpuvirt_gpu_groups, no name or size), -EEXIST if the id is taken,
 * -ENOMEM, or the mdev parent's error.
 */
int gpuvirt_gpu_register(struct gpuvirt_gpu *gpu)
{
	int err;

	err = gpuvirt_gpu_validate(gpu);
	if (err)
		return err;

	/* reserve the id, so that a second GPU of this id fails early */
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

	mutex_init(&gpu->lock);
	refcount_set(&gpu->refs, 1);
	init_completion(&gpu->released);
	gpu->mode = GPUVIRT_GPU_MODE_TIMESLICED;
	gpu->mig = NULL;
	gpu->sriov = NULL;

	gpuvirt_debugfs_gpu_add(gpu);
	err = gpuvirt_mdev_gpu_add(gpu);
	if (err)
		goto err_debugfs_del;
	err = gpuvirt_sriov_gpu_add(gpu);
	if (err)
		goto err_mdev_del;

	mutex_lock(&gpu->lock);
	mutex_lock(&gpuvirt_registry.lock);
	xa_store(&gpuvirt_registry.gpus, gpu->id, gpu, GFP_KERNEL);
	gpuvirt_registry_changed();
	gpu->registered = true;
	mutex_unlock(&gpuvirt_registry.lock);
	gpuvirt_gpu_notify(gpu, GPUVIRT_CMD_GPU_ADD_NTF);
	mutex_unlock(&gpu->lock);
	dev_info(gpu->dev, "gpuvirt: registered GPU %u (%s, %s)\n",
		 gpu->id, gpu->name, gpu->model_name);
	return 0;

err_mdev_del:
	gpuvirt_mdev_parent_withdraw(gpu->mdev);
	gpuvirt_mdev_gpu_del(gpu);
err_debugfs_del:
	gpuvirt_debugfs_gpu_del(gpu);
	mutex_destroy(&gpu->lock);
	mutex_lock(&gpuvirt_registry.lock);
	xa_erase(&gpuvirt_registry.gpus, gpu->id);
	mutex_unlock(&gpuvirt_registry.lock);
	return err;
}
EXPORT_SYMBOL_GPL(gpuvirt_gpu_register);

/**
 * gpuvirt_gpu_unregister() - take a GPU back from the core
 * @gpu: a registered GPU
 *
 * Removes the GPU's vGPUs, waiting for their users to close them, with no
 * lock held that anything else waits for: the GPU is marked unregistered
 * under its lock, then the lock is dropped for the waits. On return no
 * core path refers to @gpu any more and the backend may free it.
 */
void gpuvirt_gpu_unregister(struct gpuvirt_gpu *gpu)
{
	/* the VFs first, without the lock: their removal takes it */
	gpuvirt_sriov_gpu_close(gpu);

	mutex_lock(&gpu->lock);
	if (WARN_ON_ONCE(!gpu->registered)) {
		mutex_unlock(&gpu->lock);
		return;
	}
	/* announce: withdrawn first, so that nobody finds the GPU any more */
	gpuvirt_gpu_notify(gpu, GPUVIRT_CMD_GPU_DEL_NTF);
	mutex_lock(&gpuvirt_registry.lock);
	xa_erase(&gpuvirt_registry.gpus, gpu->id);
	gpuvirt_registry_changed();
	gpu->registered = false;
	mutex_unlock(&gpuvirt_registry.lock);
	mutex_unlock(&gpu->lock);

	/*
	 * The mdev parent, then MIG teardown: both wait for VFIO users, for
	 * as long as a VM keeps a vGPU open, so not under the GPU's lock: a
	 * request that found the GPU before it went takes the lock, finds it
	 * unregistered and fails at once. Nothing changes the GPU's
	 * configuration any more: that takes the lock with the GPU
	 * registered. The parent goes first, as MIG-backed vGPUs made
	 * through it live on GIs.
	 */
	gpuvirt_mdev_parent_withdraw(gpu->mdev);
	gpuvirt_mig_gpu_del(gpu);

	/* sysfs and netlink users that found the GPU before it went */
	gpuvirt_gpu_put(gpu);
	wait_for_completion(&gpu->released);

	gpuvirt_sriov_gpu_del(gpu);
	gpuvirt_mdev_gpu_del(gpu);
	gpuvirt_debugfs_gpu_del(gpu);
	mutex_destroy(&gpu->lock);
}
EXPORT_SYMBOL_GPL(gpuvirt_gpu_unregister);

/**
 * gpuvirt_gpu_mp() - the vGPU parents of a GPU, one by one
 * @gpu: the GPU
 * @i: 0 for the GPU's own, 1 to GPUVIRT_MIG_GIS_MAX for its GIs by id + 1
 *
 * Context: registry lock or the GPU's lock held.
 * Return: the parent, or NULL: the GPU's own parent in MIG mode, or no GI of
 * that id.
 */
struct gpuvirt_mdev_parent *gpuvirt_gpu_mp(struct gpuvirt_gpu *gpu,
					   unsigned int i)
{
	if (!i)
		return gpu->mode == GPUVIRT_GPU_MODE_TIMESLICED ? gpu->mdev :
								  NULL;
	if (!gpu->mig || i > GPUVIRT_MIG_GIS_MAX || !gpu->mig->gi[i - 1])
		return NULL;
	return gpu->mig->gi[i - 1]->mp;
}

/* Publish the new mode where readers look for it. */
static void gpuvirt_gpu_set_mig(struct gpuvirt_gpu *gpu, struct gpuvirt_mig *m)
{
	mutex_lock(&gpuvirt_registry.lock);
	gpu->mig = m;
	gpu->mode = m ? GPUVIRT_GPU_MODE_MIG : GPUVIRT_GPU_MODE_TIMESLICED;
	gpuvirt_registry_changed();
	mutex_unlock(&gpuvirt_registry.lock);
}

/**
 * gpuvirt_gpu_why_set() - fill in a refusal of gpuvirt_gpu_configure()
 * @why: the refusal
 * @item: the setting refused
 * @reason: what is in the way
 * @fmt: a line for people, printf-style
 *
 * Return: -EBUSY, -EOPNOTSUPP or -ENOMEM, the errno of @reason.
 */
int gpuvirt_gpu_why_set(struct gpuvirt_gpu_why *why,
			enum gpuvirt_gpu_cfg_item item,
			enum gpuvirt_gpu_refusal reason, const char *fmt, ...)
{
	va_list args;

	why->item = item;
	why->reason = reason;
	va_start(args, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, args);
	va_end(args);
	switch (reason) {
	case GPUVIRT_GPU_REFUSED_NO_SRIOV:
	case GPUVIRT_GPU_REFUSED_NO_MIG:
		return -EOPNOTSUPP;
	case GPUVIRT_GPU_REFUSED_NOMEM:
		return -ENOMEM;
	default:
		return -EBUSY;
	}
}

/*
 * What a change of the mode needs that the GPU's lock guards: GIs only
 * come and go under it. Entering MIG mode allocates the MIG state now, so
 * that nothing can fail once the change is committed; *@m is NULL when
 * the mode stays.
 */
static int gpuvirt_gpu_mode_prepare(struct gpuvirt_gpu *gpu, u32 mode,
				    struct gpuvirt_mig **m,
				    struct gpuvirt_gpu_why *why)
{
	struct gpuvirt_mig_why mwhy = {};
	int err;

	*m = NULL;
	if (mode == GPUVIRT_GPU_CFG_KEEP || mode == gpu->mode)
		return 0;
	if (mode == GPUVIRT_GPU_MODE_TIMESLICED) {
		err = gpuvirt_mig_check_empty(gpu, &mwhy);
		return err ? gpuvirt_gpu_why_set(why, GPUVIRT_GPU_CFG_MODE,
						 GPUVIRT_GPU_REFUSED_GIS, "%s",
						 mwhy.msg) : 0;
	}
	*m = gpuvirt_mig_alloc(gpu, &mwhy);
	if (!IS_ERR(*m))
		return 0;
	err = PTR_ERR(*m);
	*m = NULL;
	if (err == -ENOMEM)
		return gpuvirt_gpu_why_set(why, GPUVIRT_GPU_CFG_MODE,
					   GPUVIRT_GPU_REFUSED_NOMEM,
					   "GPU %s: out of memory", gpu->name);
	return gpuvirt_gpu_why_set(why, GPUVIRT_GPU_CFG_MODE,
				   GPUVIRT_GPU_REFUSED_NO_MIG, "%s", mwhy.msg);
}

/* The first of the settings @cfg changes that needs a GPU without vGPUs. */
static enum gpuvirt_gpu_cfg_item
gpuvirt_gpu_busy_item(struct gpuvirt_gpu *gpu, const struct gpuvirt_gpu_cfg *cfg,
		      bool sriov)
{
	if (cfg->vgpu_model != GPUVIRT_GPU_CFG_KEEP &&
	    sriov != gpuvirt_gpu_sriov(gpu))
		return GPUVIRT_GPU_CFG_VGPU_MODEL;
	if (cfg->vgpu_mode != GPUVIRT_GPU_CFG_KEEP &&
	    cfg->vgpu_mode != gpuvirt_gpu_vgpu_mode(gpu))
		return GPUVIRT_GPU_CFG_VGPU_MODE;
	return GPUVIRT_GPU_CFG_MODE;
}

/**
 * gpuvirt_gpu_configure() - change a GPU's vGPU model, vGPU mode and mode
 * @gpu: the GPU
 * @cfg: the settings to change
 * @why: filled in when refused
 *
 * All or nothing: every setting is checked, and what may fail is done,
 * before any changes; a refused request changes nothing. Then, in this
 * order, the vGPU model (sriov.c), the vGPU mode (fbacct.h) and the mode
 * (gi.c) change. Each needs a GPU without vGPUs, and the model also a GPU
 * without GIs and VFs; a change of the mode resets the GPU. Asking for
 * what the GPU is already in succeeds and changes nothing. The change is
 * announced once on the monitor group.
 *
 * Context: the GPU's lock held (gpuvirt_gpu_lock()).
 * Return: 0; -EINVAL for an unknown value; or, with @why filled in,
 * -EBUSY when vGPUs, GIs or VFs are in the way, -EOPNOTSUPP for the sriov
 * model on a GPU without SR-IOV or MIG mode on one without MIG profiles,
 * or -ENOMEM.
 */
int gpuvirt_gpu_configure(struct gpuvirt_gpu *gpu,
			  const struct gpuvirt_gpu_cfg *cfg,
			  struct gpuvirt_gpu_why *why)
{
	struct gpuvirt_mig *old_mig = gpu->mig, *mig;
	bool sriov, mixed, mode_changes, changed;
	int err;

	lockdep_assert_held(&gpu->lock);
	memset(why, 0, sizeof(*why));
	if ((cfg->vgpu_model != GPUVIRT_GPU_CFG_KEEP &&
	     cfg->vgpu_model > GPUVIRT_VGPU_MODEL_SRIOV) ||
	    (cfg->vgpu_mode != GPUVIRT_GPU_CFG_KEEP &&
	     cfg->vgpu_mode > GPUVIRT_VGPU_MODE_MIXED) ||
	    (cfg->mode != GPUVIRT_GPU_CFG_KEEP &&
	     cfg->mode > GPUVIRT_GPU_MODE_MIG))
		return -EINVAL;

	/* what the GPU's lock guards, in the order of the changes */
	sriov = cfg->vgpu_model == GPUVIRT_GPU_CFG_KEEP ?
		gpuvirt_gpu_sriov(gpu) :
		cfg->vgpu_model == GPUVIRT_VGPU_MODEL_SRIOV;
	err = gpuvirt_sriov_model_check(gpu, sriov, why);
	if (err)
		return err;
	mixed = cfg->vgpu_mode == GPUVIRT_GPU_CFG_KEEP ?
		gpuvirt_gpu_vgpu_mode(gpu) == GPUVIRT_VGPU_MODE_MIXED :
		cfg->vgpu_mode == GPUVIRT_VGPU_MODE_MIXED;
	err = gpuvirt_gpu_mode_prepare(gpu, cfg->mode, &mig, why);
	if (err)
		return err;
	mode_changes = cfg->mode != GPUVIRT_GPU_CFG_KEEP &&
		       cfg->mode != gpu->mode;
	changed = mode_changes || sriov != gpuvirt_gpu_sriov(gpu) ||
		  mixed != (gpuvirt_gpu_vgpu_mode(gpu) ==
			    GPUVIRT_VGPU_MODE_MIXED);

	/*
	 * The model reads mdev before the parent takes mdev vGPUs, and reads
	 * sriov only once the parent refuses them: no reader of vgpu_model
	 * sees an mdev vGPU in the sriov model. Leaving the sriov model
	 * cannot be refused below: the parent has no vGPUs in it.
	 */
	if (!sriov)
		gpuvirt_sriov_model_set(gpu, false);
	/* what vGPUs being created meanwhile decide: the parent's, at once */
	err = gpuvirt_mdev_reconfigure(gpu->mdev, sriov, mixed, !!mig);
	if (err) {
		if (mig)
			gpuvirt_mig_free(mig);
		return gpuvirt_gpu_why_set(why, gpuvirt_gpu_busy_item(gpu, cfg,
								       sriov),
					   GPUVIRT_GPU_REFUSED_VGPUS,
					   "GPU %s has vGPUs; remove them first",
					   gpu->name);
	}

	/* nothing fails from here on */
	gpuvirt_sriov_model_set(gpu, sriov);
	if (mig) {
		gpu->ops->reset(gpu);
		gpuvirt_gpu_set_mig(gpu, mig);
	} else if (mode_changes) {
		/* time-sliced vGPUs only once the GPU is reset */
		gpuvirt_gpu_set_mig(gpu, NULL);
		gpu->ops->reset(gpu);
		gpuvirt_mdev_leave_mig(gpu->mdev);
		gpuvirt_mig_free(old_mig);
	}
	if (!changed)
		return 0;
	gpuvirt_gpu_notify(gpu, GPUVIRT_CMD_GPU_CHANGE_NTF);
	if (mode_changes)
		dev_info(gpu->dev, "gpuvirt: GPU %u is now in %s mode\n",
			 gpu->id, mig ? "MIG" : "time-sliced");
	return 0;
}

/**
 * gpuvirt_gpu_vgpu_mode() - the GPU's vGPU placement mode
 * @gpu: the GPU
 *
 * Return: GPUVIRT_VGPU_MODE_MIXED or GPUVIRT_VGPU_MODE_HOMOGENEOUS.
 */
u32 gpuvirt_gpu_vgpu_mode(struct gpuvirt_gpu *gpu)
{
	return gpuvirt_mdev_mixed(gpu->mdev) ? GPUVIRT_VGPU_MODE_MIXED :
					       GPUVIRT_VGPU_MODE_HOMOGENEOUS;
}
