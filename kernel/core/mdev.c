// SPDX-License-Identifier: GPL-2.0-only
/*
 * vGPU types as mdev types. Each registered GPU becomes an mdev parent
 * offering its time-sliced profiles; creating an mdev of a type places a
 * framebuffer slice in the GPU's VRAM (fbacct.c), exactly accounted, and
 * makes a VFIO device of it (vgpu.c).
 *
 *   /sys/class/mdev_bus/<gpu>/mdev_supported_types/<driver>-<profile>/
 *	name, description, available_instances, device_api, create, devices/
 *
 * A GPU that has MIG profiles also offers its MIG-backed types there, as
 * NVIDIA's driver offers them on the GPU's PCI device: libvirt, and so
 * OpenStack Nova, take only PCI devices as mdev parents, and a GI's own
 * parent (gi.c) is not one. In time-sliced mode they have no instance; in
 * MIG mode a type's available_instances is the number of its GIs with
 * room, and a vGPU created from it goes to the lowest-numbered of them.
 * The time-sliced types have no instance in MIG mode.
 */
#include <linux/slab.h>

#include "vgpu.h"

static struct gpuvirt_type *to_gpuvirt_type(struct mdev_type *mtype)
{
	return container_of(mtype, struct gpuvirt_type, mtype);
}

/*
 * The GIs of @type's GI profile, lowest id first, each looked at with its
 * parent's lock held. Without @placed: how many vGPUs of the type they
 * have room for. With @placed: place one on the first with room that is in
 * the vGPU model of @vf (a VF's vGPU in the sriov model, an mdev in the
 * mdev model), set *@placed to its parent and *@offset to the place, and
 * return 1; 0 and *@placed NULL if none has room. The model is checked in
 * the critical section that places, on the GI's own parent, whose model is
 * the GPU's for as long as the GI lives (no GI exists across a switch of
 * the model). Every GI found is linked, so its parent lives until the
 * registry lock is dropped; a GI being destroyed is offline first
 * (gpuvirt_gi_destroy()).
 */
static unsigned int gpuvirt_mdev_gis(struct gpuvirt_type *type, u64 *offset,
				     struct gpuvirt_vf *vf,
				     struct gpuvirt_mdev_parent **placed)
{
	struct gpuvirt_gpu *gpu = type->parent->gpu;
	struct gpuvirt_mdev_parent *gi_mp;
	unsigned int i, n = 0;
	struct gpuvirt_mig *m;

	if (placed)
		*placed = NULL;
	mutex_lock(&gpuvirt_registry.lock);
	m = gpu->mig;
	for (i = 0; m && i < GPUVIRT_MIG_GIS_MAX && !(placed && *placed); i++) {
		if (!m->gi[i] || m->gi[i]->profile != type->mig_profile)
			continue;
		gi_mp = m->gi[i]->mp;
		mutex_lock(&gi_mp->lock);
		/* an offline GI is going away */
		if (!gi_mp->offline && !placed)
			n += gpuvirt_fb_available(&gi_mp->fb,
						  &gi_mp->profiles[0]);
		else if (!gi_mp->offline && gi_mp->sriov == !!vf &&
			 !gpuvirt_fb_place(&gi_mp->fb, &gi_mp->profiles[0],
					   offset))
			*placed = gi_mp;
		mutex_unlock(&gi_mp->lock);
	}
	mutex_unlock(&gpuvirt_registry.lock);
	return placed ? !!*placed : n;
}

/**
 * gpuvirt_type_available() - how many more vGPUs of a type fit now
 * @type: the type
 *
 * Whatever the vGPU model: a VF's creatable types are those with room.
 *
 * Return: the number of vGPUs of @type that could still be placed.
 */
unsigned int gpuvirt_type_available(struct gpuvirt_type *type)
{
	struct gpuvirt_mdev_parent *mp = type->parent;
	unsigned int n = 0;

	if (type->mig_profile >= 0)
		return gpuvirt_mdev_gis(type, NULL, NULL, NULL);
	mutex_lock(&mp->lock);
	if (!mp->mig && !mp->offline)
		n = gpuvirt_fb_available(&mp->fb, type->profile);
	mutex_unlock(&mp->lock);
	return n;
}

/* As mdev types: nothing in the sriov model, where the VFs take them. */
static unsigned int gpuvirt_mdev_get_available(struct mdev_type *mtype)
{
	struct gpuvirt_type *type = to_gpuvirt_type(mtype);
	struct gpuvirt_mdev_parent *mp = type->parent;
	bool sriov;

	mutex_lock(&mp->lock);
	sriov = mp->sriov;
	mutex_unlock(&mp->lock);
	return sriov ? 0 : gpuvirt_type_available(type);
}

/**
 * gpuvirt_mdev_place() - place a new vGPU of a type
 * @type: its type
 * @offset: set to its framebuffer's offset in the parent's VRAM range
 * @vf: the VF it is made on, or NULL for an mdev
 *
 * A vGPU of a MIG-backed type of the GPU's own parent goes to the GI of
 * its profile with the lowest id that has room; any other to the type's
 * parent. The place is held until gpuvirt_fb_release() on the parent
 * returned. In the sriov model only a VF makes vGPUs, in the mdev model
 * only mdev: the model is checked in the same critical section of the
 * parent's lock that places the vGPU, so that a switch of the model
 * (gpuvirt_mdev_reconfigure(), which needs the parent without vGPUs) comes
 * either before the check or after the place.
 *
 * Return: the parent the vGPU belongs to, or an ERR_PTR: -ENODEV if that
 * parent is being withdrawn, -EBUSY for a time-sliced type of a GPU in MIG
 * mode or for an mdev in the sriov model (or a VF in the mdev model),
 * -ENOSPC if no GI of the profile has room, or the placement error.
 */
struct gpuvirt_mdev_parent *gpuvirt_mdev_place(struct gpuvirt_type *type,
					       u64 *offset,
					       struct gpuvirt_vf *vf)
{
	struct gpuvirt_mdev_parent *mp = type->parent;
	int err = 0;

	if (type->mig_profile >= 0) {
		/*
		 * The GPU's model, for the errno; the GI's own parent,
		 * checked where the vGPU is placed, decides.
		 */
		mutex_lock(&mp->lock);
		if (mp->sriov != !!vf)
			err = -EBUSY;
		mutex_unlock(&mp->lock);
		if (err)
			return ERR_PTR(err);
		return gpuvirt_mdev_gis(type, offset, vf, &mp) ? mp :
								  ERR_PTR(-ENOSPC);
	}

	mutex_lock(&mp->lock);
	if (mp->offline)
		err = -ENODEV;	/* the parent is going away */
	else if (mp->sriov != !!vf)
		err = -EBUSY;	/* the other vGPU model */
	else if (mp->mig)
		err = -EBUSY;	/* the GPU is cut into GIs */
	else
		err = gpuvirt_fb_place(&mp->fb, type->profile, offset);
	mutex_unlock(&mp->lock);
	return err ? ERR_PTR(err) : mp;
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
	unsigned int i, n = mp->nr_types + mp->nr_mig_types;
	int err;

	mp->types = kcalloc(n, sizeof(*mp->types), GFP_KERNEL);
	if (!mp->types)
		return -ENOMEM;
	mp->type_ptrs = kcalloc(n, sizeof(*mp->type_ptrs), GFP_KERNEL);
	if (!mp->type_ptrs) {
		err = -ENOMEM;
		goto err_free_types;
	}
	for (i = 0; i < n; i++) {
		struct gpuvirt_type *t = &mp->types[i];

		if (i < mp->nr_types) {
			t->profile = &mp->profiles[i];
			t->mig_profile = -1;
		} else {
			t->profile = &mp->mig_profiles[i - mp->nr_types];
			t->mig_profile = mp->mig_index[i - mp->nr_types];
		}
		t->parent = mp;
		t->mtype.sysfs_name = t->profile->name;
		t->mtype.pretty_name = t->profile->name;
		mp->type_ptrs[i] = &t->mtype;
	}

	mutex_lock(&mp->lock);
	mp->offline = false;
	mutex_unlock(&mp->lock);
	err = mdev_register_parent(&mp->parent, mp->dev, &gpuvirt_mdev_driver,
				   mp->type_ptrs, n);
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
 * Removes every vGPU of the parent; waits for their users to close them,
 * for as long as they keep them open.
 *
 * Context: the GPU's lock held for a parent without vGPUs (a GI being
 * destroyed, gpuvirt_mdev_parent_offline() first); for one that may have
 * vGPUs, the GPU unregistered and its lock not held, so that no other
 * request waits on a VM (gpuvirt_gpu_unregister()).
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

/* The GPU's MIG-backed types, if it has MIG profiles (gpuvirt_mig_alloc()) */
static void gpuvirt_mdev_mig_types(struct gpuvirt_gpu *gpu,
				   struct gpuvirt_mdev_parent *mp)
{
	struct gpuvirt_mig_table *t;
	unsigned int i;

	if (gpu->engines < GPUVIRT_MIG_SLICES)
		return;
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return;	/* the GI parents still offer them */
	if (!gpuvirt_mig_table_build(gpu->model, gpu->vram_size, gpu->engines,
				     t)) {
		for (i = 0; i < t->count && i < ARRAY_SIZE(mp->mig_profiles);
		     i++) {
			gpuvirt_profile_fill_mig(&mp->mig_profiles[i],
						 t->profile[i].vgpu_name,
						 t->profile[i].mem_size);
			mp->mig_index[i] = i;
		}
		mp->nr_mig_types = i;
	}
	kfree(t);
}

/**
 * gpuvirt_mdev_gpu_add() - offer a GPU's vGPU types
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
	gpuvirt_mdev_mig_types(gpu, mp);

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
 * gpuvirt_mdev_reconfigure() - change what the GPU's own parent offers
 * @mp: the GPU's own parent
 * @sriov: true in the sriov vGPU model: the types offer nothing as mdev
 *	types; the VFs take them (sriov.c)
 * @mixed: true for mixed-size mode, false for homogeneous mode (fbacct.h)
 * @mig: true when the GPU goes into MIG mode: the time-sliced types offer
 *	nothing, the MIG-backed ones place vGPUs on GIs. Leaving MIG mode is
 *	gpuvirt_mdev_leave_mig()'s, once the GPU is reset.
 *
 * The parent side of gpuvirt_gpu_configure(): all three at once or none,
 * in one critical section, the one gpuvirt_mdev_place() places in. Any
 * change needs the parent without vGPUs: a vGPU counts from its creation
 * until its VFIO device is released, so one being removed still counts
 * until its user has let go. Asking for what the parent is already in
 * succeeds whether or not vGPUs exist.
 *
 * Context: the GPU's lock held.
 * Return: 0, or -EBUSY, and then nothing changed, if something would
 * change while the parent has a vGPU.
 */
int gpuvirt_mdev_reconfigure(struct gpuvirt_mdev_parent *mp, bool sriov,
			     bool mixed, bool mig)
{
	int err = 0;

	mutex_lock(&mp->lock);
	if (mp->sriov == sriov && mp->fb.mixed == mixed && (!mig || mp->mig))
		goto out_unlock;
	if (mp->fb.count) {
		err = -EBUSY;
		goto out_unlock;
	}
	mp->sriov = sriov;
	gpuvirt_fb_set_mixed(&mp->fb, mixed);	/* no vGPU: cannot fail */
	if (mig)
		mp->mig = true;
out_unlock:
	mutex_unlock(&mp->lock);
	return err;
}

/**
 * gpuvirt_mdev_leave_mig() - the GPU's own parent leaves MIG mode
 * @mp: the GPU's own parent, in MIG mode
 *
 * The time-sliced types offer their instances again.
 *
 * Context: the GPU's lock held; the GPU has no GI and has been reset.
 */
void gpuvirt_mdev_leave_mig(struct gpuvirt_mdev_parent *mp)
{
	mutex_lock(&mp->lock);
	mp->mig = false;
	mutex_unlock(&mp->lock);
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
