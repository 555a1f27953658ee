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
 * gpuvirt_mdev_gpu_add() - offer a GPU's vGPU types
 * @gpu: a GPU being registered, not yet visible to userspace
 *
 * Return: 0, -ENOMEM, or the error of mdev_register_parent().
 */
int gpuvirt_mdev_gpu_add(struct gpuvirt_gpu *gpu)
{
	struct gpuvirt_mdev_parent *mp;
	unsigned int i;
	int n, err;

	mp = kzalloc(sizeof(*mp), GFP_KERNEL);
	if (!mp)
		return -ENOMEM;
	mp->gpu = gpu;
	mutex_init(&mp->lock);
	gpuvirt_fb_init(&mp->fb, gpu->vram_size);

	n = gpuvirt_profiles_build(gpu->model, gpu->vram_size, mp->profiles,
				   ARRAY_SIZE(mp->profiles));
	if (n <= 0) {
		dev_err(gpu->dev, "GPU %u: no vGPU profile fits %llu bytes of VRAM\n",
			gpu->id, gpu->vram_size);
		err = n ?: -EINVAL;
		goto err_free_mp;
	}
	mp->nr_types = n;
	for (i = 0; i < mp->nr_types; i++) {
		mp->types[i].profile = &mp->profiles[i];
		mp->types[i].parent = mp;
		mp->types[i].mtype.sysfs_name = mp->profiles[i].name;
		mp->types[i].mtype.pretty_name = mp->profiles[i].name;
		mp->type_ptrs[i] = &mp->types[i].mtype;
	}

	err = gpuvirt_sched_start(mp);
	if (err)
		goto err_free_mp;
	gpuvirt_debugfs_mdev_add(mp);

	/* the sysfs files find mp through gpu->mdev */
	gpu->mdev = mp;
	err = gpuvirt_sysfs_gpu_add(mp);
	if (err)
		goto err_unpublish;

	err = mdev_register_parent(&mp->parent, gpu->dev, &gpuvirt_mdev_driver,
				   mp->type_ptrs, mp->nr_types);
	if (err)
		goto err_sysfs_del;
	return 0;

err_sysfs_del:
	gpuvirt_sysfs_gpu_del(mp);
err_unpublish:
	gpu->mdev = NULL;
	gpuvirt_debugfs_mdev_del(mp);
	gpuvirt_sched_stop(mp);
err_free_mp:
	mutex_destroy(&mp->lock);
	kfree(mp);
	return err;
}

/**
 * gpuvirt_mdev_gpu_del() - withdraw a GPU's vGPU types
 * @gpu: the GPU
 *
 * Removes every vGPU of the GPU; waits for their users to close them.
 */
void gpuvirt_mdev_gpu_del(struct gpuvirt_gpu *gpu)
{
	struct gpuvirt_mdev_parent *mp = gpu->mdev;

	if (!mp)
		return;
	mdev_unregister_parent(&mp->parent);
	gpuvirt_sysfs_gpu_del(mp);
	gpuvirt_debugfs_mdev_del(mp);
	gpuvirt_sched_stop(mp);
	WARN_ON(mp->fb.count);
	gpu->mdev = NULL;
	mutex_destroy(&mp->lock);
	kfree(mp);
}

/**
 * gpuvirt_mdev_set_mixed() - switch a GPU between homogeneous and mixed-size
 * @mp: the GPU's mdev state
 * @mixed: true for mixed-size mode, false for homogeneous mode
 *
 * The mode decides where new vGPUs go and which types are open
 * (fbacct.h). It can change only while the GPU has no vGPU: a vGPU counts
 * from its creation until its VFIO device is released, so one being
 * removed still counts until its user has let go. Asking for the mode the
 * GPU is already in succeeds whether or not vGPUs exist.
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
