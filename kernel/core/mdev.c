// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU types as mdev types. Each registered GPU becomes an mdev parent
 * offering its time-sliced profiles; creating an mdev of a type places a
 * framebuffer slice in the GPU's VRAM (fbacct.c), exactly accounted, and
 * makes a VFIO device of it (vgpu.c).
 *
 *   /sys/class/mdev_bus/<gpu>/mdev_supported_types/<driver>-<profile>/
 *	name, description, available_instances, device_api, create, devices/
 */
#include <linux/slab.h>

#include "vgpu.h"

static struct gpuvirt_type *to_gpuvirt_type(struct mdev_type *mtype)
{
	return container_of(mtype, struct gpuvirt_type, mtype);
}

static unsigned int gpuvirt_mdev_get_available(struct mdev_type *mtype)
{
	struct gpuvirt_type *type = to_gpuvirt_type(mtype);
	struct gpuvirt_mdev_parent *mp = type->parent;
	unsigned int n;

	mutex_lock(&mp->lock);
	n = gpuvirt_fb_available(&mp->fb, type->profile);
	mutex_unlock(&mp->lock);
	return n;
}

static ssize_t gpuvirt_mdev_show_description(struct mdev_type *mtype,
					     char *buf)
{
	return sysfs_emit(buf, "%s\n", to_gpuvirt_type(mtype)->profile->description);
}

static int gpuvirt_mdev_probe(struct mdev_device *mdev)
{
	struct gpuvirt_vgpu *vgpu;
	int err;

	vgpu = vfio_alloc_device(gpuvirt_vgpu, vdev, &mdev->dev,
				 &gpuvirt_vgpu_ops);
	if (IS_ERR(vgpu))
		return PTR_ERR(vgpu);

	err = vfio_register_emulated_iommu_dev(&vgpu->vdev);
	if (err)
		goto err_put_vdev;
	dev_set_drvdata(&mdev->dev, vgpu);
	gpuvirt_vgpu_notify(vgpu, GPUVIRT_CMD_VGPU_ADD_NTF);
	return 0;

err_put_vdev:
	vfio_put_device(&vgpu->vdev);
	return err;
}

static void gpuvirt_mdev_remove(struct mdev_device *mdev)
{
	struct gpuvirt_vgpu *vgpu = dev_get_drvdata(&mdev->dev);

	gpuvirt_vgpu_notify(vgpu, GPUVIRT_CMD_VGPU_DEL_NTF);
	vfio_unregister_group_dev(&vgpu->vdev);
	vfio_put_device(&vgpu->vdev);
}

static struct mdev_driver gpuvirt_mdev_driver = {
	.device_api		= VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name		= "gpuvirt_vgpu",
		.owner		= THIS_MODULE,
		.mod_name	= KBUILD_MODNAME,
		.dev_groups	= gpuvirt_vgpu_groups,
	},
	.probe			= gpuvirt_mdev_probe,
	.remove			= gpuvirt_mdev_remove,
	.get_available		= gpuvirt_mdev_get_available,
	.show_description	= gpuvirt_mdev_show_description,
};

/**
 * gpuvirt_mdev_parent_create() - the vGPU side of a GPU or of a GI
 * @gpu: the GPU
 * @dev: the device to register the mdev parent on
 * @vram_base: where the parent's VRAM starts in the GPU's
 * @vram_size: how much VRAM the parent's vGPUs share
 * @engines: the engines they run on, bit n for engine n
 * @ctx_base: the first execution context id of its vGPUs
 * @debugfs: the directory its sched file and vgpus/ directory go in
 *
 * Starts the scheduler's engine thread. The caller fills in the profiles
 * (@nr_types, @profiles) and publishes the parent.
 *
 * Return: the parent, or an ERR_PTR: -ENOMEM, or the scheduler's error.
 */
struct gpuvirt_mdev_parent *
gpuvirt_mdev_parent_create(struct gpuvirt_gpu *gpu, struct device *dev,
			   u64 vram_base, u64 vram_size, u64 engines,
			   u32 ctx_base, struct dentry *debugfs)
{
	struct gpuvirt_mdev_parent *mp;
	int err;

	mp = kzalloc(sizeof(*mp), GFP_KERNEL);
	if (!mp)
		return ERR_PTR(-ENOMEM);
	mp->gpu = gpu;
	mp->dev = dev;
	mp->vram_base = vram_base;
	mp->engines = engines;
	mp->ctx_base = ctx_base;
	mp->debugfs = debugfs;
	mutex_init(&mp->lock);
	gpuvirt_fb_init(&mp->fb, vram_size);

	err = gpuvirt_sched_start(mp);
	if (err)
		goto err_free_mp;
	gpuvirt_debugfs_mdev_add(mp);
	return mp;

err_free_mp:
	mutex_destroy(&mp->lock);
	kfree(mp);
	return ERR_PTR(err);
}

/**
 * gpuvirt_mdev_parent_destroy() - free what gpuvirt_mdev_parent_create() made
 * @mp: a parent that is not published
 */
void gpuvirt_mdev_parent_destroy(struct gpuvirt_mdev_parent *mp)
{
	WARN_ON(mp->published);
	gpuvirt_debugfs_mdev_del(mp);
	gpuvirt_sched_stop(mp);
	WARN_ON(mp->fb.count);
	mutex_destroy(&mp->lock);
	kfree(mp);
}

/**
 * gpuvirt_mdev_parent_publish() - offer the parent's vGPU types in sysfs
 * @mp: a parent that is not published, with its profiles filled in
 *
 * The mdev core keeps the types' kobjects until it lets go of the parent,
 * so each publication gets types of its own.
 *
 * Context: the GPU's lock held, or the GPU not yet registered.
 * Return: 0, -ENOMEM, or the error of mdev_register_parent().
 */
int gpuvirt_mdev_parent_publish(struct gpuvirt_mdev_parent *mp)
{
	unsigned int i;
	int err;

	mp->types = kcalloc(mp->nr_types, sizeof(*mp->types), GFP_KERNEL);
	if (!mp->types)
		return -ENOMEM;
	mp->type_ptrs = kcalloc(mp->nr_types, sizeof(*mp->type_ptrs),
				GFP_KERNEL);
	if (!mp->type_ptrs) {
		err = -ENOMEM;
		goto err_free_types;
	}
	for (i = 0; i < mp->nr_types; i++) {
		mp->types[i].profile = &mp->profiles[i];
		mp->types[i].parent = mp;
		mp->types[i].mtype.sysfs_name = mp->profiles[i].name;
		mp->types[i].mtype.pretty_name = mp->profiles[i].name;
		mp->type_ptrs[i] = &mp->types[i].mtype;
	}

	mutex_lock(&mp->lock);
	mp->offline = false;
	mutex_unlock(&mp->lock);
	err = mdev_register_parent(&mp->parent, mp->dev, &gpuvirt_mdev_driver,
				   mp->type_ptrs, mp->nr_types);
	if (err)
		goto err_offline;
	mp->published = true;
	return 0;

err_offline:
	mutex_lock(&mp->lock);
	mp->offline = true;
	mutex_unlock(&mp->lock);
	kfree(mp->type_ptrs);
	mp->type_ptrs = NULL;
err_free_types:
	kfree(mp->types);
	mp->types = NULL;
	return err;
}

/**
 * gpuvirt_mdev_parent_offline() - refuse new vGPUs, if there are none
 * @mp: a parent
 *
 * A vGPU counts from its creation until its VFIO device is released.
 *
 * Return: 0 once no vGPU can be created on @mp any more, or -EBUSY if it
 * has one, and then nothing changed.
 */
int gpuvirt_mdev_parent_offline(struct gpuvirt_mdev_parent *mp)
{
	int err = 0;

	mutex_lock(&mp->lock);
	if (mp->fb.count)
		err = -EBUSY;
	else
		mp->offline = true;
	mutex_unlock(&mp->lock);
	return err;
}

/**
 * gpuvirt_mdev_parent_withdraw() - take the parent's types out of sysfs
 * @mp: a published parent
 *
 * Removes every vGPU of the parent; waits for their users to close them.
 *
 * Context: the GPU's lock held.
 */
void gpuvirt_mdev_parent_withdraw(struct gpuvirt_mdev_parent *mp)
{
	if (!mp->published)
		return;
	mutex_lock(&mp->lock);
	mp->offline = true;
	mutex_unlock(&mp->lock);
	mdev_unregister_parent(&mp->parent);
	mp->published = false;
	kfree(mp->type_ptrs);
	mp->type_ptrs = NULL;
	kfree(mp->types);
	mp->types = NULL;
}

/**
 * gpuvirt_mdev_gpu_add() - offer a GPU's time-sliced vGPU types
 * @gpu: a GPU being registered, not yet visible to userspace
 *
 * Return: 0, -ENOMEM, -EINVAL when no profile fits the GPU, or the error of
 * mdev_register_parent().
 */
int gpuvirt_mdev_gpu_add(struct gpuvirt_gpu *gpu)
{
	struct gpuvirt_mdev_parent *mp;
	int n, err;

	mp = gpuvirt_mdev_parent_create(gpu, gpu->dev, 0, gpu->vram_size,
					GENMASK_ULL(gpu->engines - 1, 0), 0,
					gpu->debugfs);
	if (IS_ERR(mp))
		return PTR_ERR(mp);

	n = gpuvirt_profiles_build(gpu->model, gpu->vram_size, mp->profiles,
				   ARRAY_SIZE(mp->profiles));
	if (n <= 0) {
		dev_err(gpu->dev, "GPU %u: no vGPU profile fits %llu bytes of VRAM\n",
			gpu->id, gpu->vram_size);
		err = n ?: -EINVAL;
		goto err_destroy_mp;
	}
	mp->nr_types = n;

	err = gpuvirt_mdev_parent_publish(mp);
	if (err)
		goto err_destroy_mp;
	gpu->mdev = mp;
	return 0;

err_destroy_mp:
	gpuvirt_mdev_parent_destroy(mp);
	return err;
}

/**
 * gpuvirt_mdev_gpu_del() - free a GPU's own vGPU parent
 * @gpu: the GPU, unregistered, its parent withdrawn and nobody left
 *	holding a reference to it
 */
void gpuvirt_mdev_gpu_del(struct gpuvirt_gpu *gpu)
{
	struct gpuvirt_mdev_parent *mp = gpu->mdev;

	if (!mp)
		return;
	gpu->mdev = NULL;
	gpuvirt_mdev_parent_destroy(mp);
}

/**
 * gpuvirt_mdev_set_mixed() - switch a GPU between homogeneous and mixed-size
 * @mp: the GPU's mdev state
 * @mixed: true for mixed-size mode, false for homogeneous mode
 *
 * The parent side of gpuvirt_gpu_set_vgpu_mode(). The mode can change only
 * while the parent has no vGPU: a vGPU counts from its creation until its
 * VFIO device is released, so one being removed still counts until its
 * user has let go. Asking for the mode the parent is already in succeeds
 * whether or not vGPUs exist.
 *
 * Return: 0, or -EBUSY if the mode would change while the GPU has a vGPU.
 */
int gpuvirt_mdev_set_mixed(struct gpuvirt_mdev_parent *mp, bool mixed)
{
	int err;

	mutex_lock(&mp->lock);
	err = gpuvirt_fb_set_mixed(&mp->fb, mixed);
	mutex_unlock(&mp->lock);
	return err;
}

/**
 * gpuvirt_mdev_mixed() - the GPU's placement mode
 * @mp: the GPU's mdev state
 *
 * Return: true in mixed-size mode, false in homogeneous mode.
 */
bool gpuvirt_mdev_mixed(struct gpuvirt_mdev_parent *mp)
{
	bool mixed;

	mutex_lock(&mp->lock);
	mixed = mp->fb.mixed;
	mutex_unlock(&mp->lock);
	return mixed;
}

int gpuvirt_mdev_init(void)
{
	return mdev_register_driver(&gpuvirt_mdev_driver);
}

void gpuvirt_mdev_exit(void)
{
	mdev_unregister_driver(&gpuvirt_mdev_driver);
}
