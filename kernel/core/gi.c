// SPDX-License-Identifier: GPL-2.0-only
/*
 * MIG mode and GPU instances (GIs).
 *
 * A GPU is in one of two modes. In time-sliced mode its own mdev parent
 * offers the time-sliced types and one scheduler shares all its engines.
 * In MIG mode that parent's time-sliced types offer nothing and the GPU
 * is cut into GIs, each with its own VRAM range, its own engines and its
 * own scheduler. Changing the mode needs a GPU without vGPUs and without
 * GIs, and resets the GPU (the backend's reset op), as on hardware.
 *
 * Each GI is a device of its own, "<gpu>-gi<id>", a child of the GPU's
 * device, and that device is the mdev parent of the GI's MIG-backed vGPU
 * type:
 *
 *   /sys/class/mdev_bus/sim0-gi2 -> .../8000:00:00.0/sim0-gi2
 *   /sys/class/gpuvirt_gi/sim0-gi2 -> .../8000:00:00.0/sim0-gi2
 *   .../sim0-gi2/mdev_supported_types/gpuvirt_gi-H200-3-71C/
 *   .../sim0-gi2/{profile,placement,engines,vram_offset,vram_size}
 *   .../sim0-gi2/gpuvirt/{sched_policy,sched_slice_us}
 *
 * A GI's parent lets a tool pick the GI by picking the parent, and keeps
 * the invariant the rest of the core relies on: a parent is one VRAM
 * range, one set of engines and one scheduler. It is not a PCI device,
 * though, and libvirt (so OpenStack Nova) takes only PCI devices as mdev
 * parents; so the GPU's own parent, its PCI function, offers the same
 * MIG-backed types too, and places a vGPU of one on the lowest GI of its
 * profile with room, as NVIDIA's driver does on the GPU's PCI device
 * (mdev.c). Both ways a vGPU belongs to its GI's parent: its slice, its
 * engines and its scheduler are the GI's.
 *
 * Isolation follows from that: a GI's vGPU gets a VRAM slice inside the
 * GI's range, every command is range-checked against that slice, and its
 * engine thread runs it only on the GI's engines (struct
 * gpuvirt_exec_ctx.engines). Nothing of a GI is lent to another.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "gi.h"
#include "sriov.h"
#include "vgpu.h"

static void gpuvirt_gi_release(struct device *dev)
{
	kfree(gpuvirt_gi_from_dev(dev));
}

static ssize_t profile_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  gpuvirt_gi_profile_name(gpuvirt_gi_from_dev(dev)));
}
static DEVICE_ATTR_RO(profile);

static ssize_t placement_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gi *gi = gpuvirt_gi_from_dev(dev);

	return sysfs_emit(buf, "%u:%u\n", gi->start,
			  gi->gpu->mig->table.profile[gi->profile].slots);
}
static DEVICE_ATTR_RO(placement);

static ssize_t engines_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%#llx\n", gpuvirt_gi_from_dev(dev)->engines);
}
static DEVICE_ATTR_RO(engines);

static ssize_t vram_offset_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", gpuvirt_gi_from_dev(dev)->vram_base);
}
static DEVICE_ATTR_RO(vram_offset);

static ssize_t vram_size_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", gpuvirt_gi_from_dev(dev)->vram_size);
}
static DEVICE_ATTR_RO(vram_size);

static struct attribute *gpuvirt_gi_attrs[] = {
	&dev_attr_profile.attr,
	&dev_attr_placement.attr,
	&dev_attr_engines.attr,
	&dev_attr_vram_offset.attr,
	&dev_attr_vram_size.attr,
	NULL
};

static const struct attribute_group gpuvirt_gi_group = {
	.attrs = gpuvirt_gi_attrs,
};

static const struct attribute_group *gpuvirt_gi_groups[] = {
	&gpuvirt_gi_group,
	&gpuvirt_sched_attr_group,
	NULL
};

/*
 * The class lists every GI, and names the mdev types of GIs: mdev prefixes
 * a type's directory with the parent's driver, bus or class name.
 */
static struct class gpuvirt_gi_class = {
	.name = "gpuvirt_gi",
};

static const struct device_type gpuvirt_gi_type = {
	.name	= "gpuvirt_gi",
	.groups	= gpuvirt_gi_groups,
	.release = gpuvirt_gi_release,
};

/**
 * gpuvirt_dev_is_gi() - whether a device is a GI
 * @dev: a device
 *
 * Return: true for a GI's device.
 */
bool gpuvirt_dev_is_gi(const struct device *dev)
{
	return dev->type == &gpuvirt_gi_type;
}

/**
 * gpuvirt_gi_from_dev() - the GI of a GI's device
 * @dev: a device for which gpuvirt_dev_is_gi() holds
 *
 * Return: the GI.
 */
struct gpuvirt_gi *gpuvirt_gi_from_dev(struct device *dev)
{
	return container_of(dev, struct gpuvirt_gi, dev);
}

/**
 * gpuvirt_gi_profile_name() - a GI's profile name, e.g. "3g.71gb"
 * @gi: the GI; its GPU is in MIG mode for as long as the GI exists
 *
 * Return: the name.
 */
const char *gpuvirt_gi_profile_name(const struct gpuvirt_gi *gi)
{
	return gi->gpu->mig->table.profile[gi->profile].name;
}

/**
 * gpuvirt_gi_vgpus() - how many vGPUs a GI has
 * @gi: the GI
 *
 * Return: its vGPUs, counting those removed but not yet released.
 */
unsigned int gpuvirt_gi_vgpus(const struct gpuvirt_gi *gi)
{
	unsigned int n;

	mutex_lock(&gi->mp->lock);
	n = gi->mp->fb.count;
	mutex_unlock(&gi->mp->lock);
	return n;
}

static int gpuvirt_gi_info_show(struct seq_file *m, void *v)
{
	struct gpuvirt_gi *gi = m->private;
	const struct gpuvirt_mig_profile *p =
		&gi->gpu->mig->table.profile[gi->profile];

	seq_printf(m, "id: %u\n", gi->id);
	seq_printf(m, "profile: %s\n", p->name);
	seq_printf(m, "vgpu_type: %s\n", p->vgpu_name);
	seq_printf(m, "start: %u\n", gi->start);
	seq_printf(m, "slots: %u\n", p->slots);
	seq_printf(m, "slices: %u\n", p->slices);
	seq_printf(m, "media: %d\n", p->media);
	seq_printf(m, "engines: %#llx\n", gi->engines);
	seq_printf(m, "vram_offset: %#llx\n", gi->vram_base);
	seq_printf(m, "vram_size: %#llx\n", gi->vram_size);
	seq_printf(m, "vgpus: %u\n", gpuvirt_gi_vgpus(gi));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_gi_info);

/*
 * The engines of compute slices [first, first + n): each slice has an
 * equal share of the GPU's engines, whole engines only.
 */
static u64 gpuvirt_gi_engine_mask(const struct gpuvirt_gpu *gpu,
				  unsigned int first, unsigned int n)
{
	unsigned int per = min(gpu->engines, 64U) / GPUVIRT_MIG_SLICES;

	return GENMASK_ULL((first + n) * per - 1, first * per);
}

/**
 * gpuvirt_gi_create() - create a GI
 * @gpu: a GPU in MIG mode
 * @profile: index in the GPU's table
 * @start: first memory slot, or GPUVIRT_MIG_START_ANY
 * @why: filled in when refused
 *
 * Context: the GPU's lock held; @gpu registered.
 * Return: the new GI's id; -EINVAL when the GPU is not in MIG mode or for
 * an illegal start, -ENOSPC when the GI does not fit (@why says what is in
 * the way), -ENOMEM, or a driver core or mdev error.
 */
int gpuvirt_gi_create(struct gpuvirt_gpu *gpu, unsigned int profile,
		      int start, struct gpuvirt_mig_why *why)
{
	struct gpuvirt_mig *mig = gpu->mig;
	const struct gpuvirt_mig_profile *p;
	struct gpuvirt_mdev_parent *mp;
	struct gpuvirt_mig_layout l;
	struct gpuvirt_gi *gi;
	char name[12];
	int id, err;

	lockdep_assert_held(&gpu->lock);
	memset(why, 0, sizeof(*why));
	if (!mig) {
		snprintf(why->msg, sizeof(why->msg),
			 "GPU %s is not in MIG mode", gpu->name);
		return -EINVAL;
	}
	l = mig->layout;
	id = gpuvirt_mig_gi_add(&mig->table, &l, profile, start, why);
	if (id < 0)
		return id;
	p = &mig->table.profile[profile];

	gi = kzalloc(sizeof(*gi), GFP_KERNEL);
	if (!gi)
		return -ENOMEM;
	gi->gpu = gpu;
	gi->id = id;
	gi->profile = profile;
	gi->start = l.gi[id].start;
	gi->vram_base = gi->start * mig->table.slot_size;
	gi->vram_size = p->mem_size;
	gi->engines = gpuvirt_gi_engine_mask(gpu, gi->start, p->slices);
	device_initialize(&gi->dev);
	gi->dev.parent = gpu->dev;
	gi->dev.type = &gpuvirt_gi_type;
	gi->dev.class = &gpuvirt_gi_class;
	err = dev_set_name(&gi->dev, "%s-gi%u", gpu->name, id);
	if (err)
		goto err_put_dev;
	err = device_add(&gi->dev);
	if (err)
		goto err_put_dev;

	snprintf(name, sizeof(name), "%u", id);
	gi->debugfs = debugfs_create_dir(name, mig->debugfs);
	debugfs_create_file("info", 0400, gi->debugfs, gi,
			    &gpuvirt_gi_info_fops);

	/* one vGPU per GI, so the GI id is a free execution context id */
	mp = gpuvirt_mdev_parent_create(gpu, &gi->dev, gi->vram_base,
					gi->vram_size, gi->engines, id,
					gi->debugfs);
	if (IS_ERR(mp)) {
		err = PTR_ERR(mp);
		goto err_del_dev;
	}
	mp->gi = gi;
	mp->sriov = gpuvirt_gpu_sriov(gpu);	/* no GI exists across a switch */
	mp->nr_types = 1;
	gpuvirt_profile_fill_mig(&mp->profiles[0], p->vgpu_name, p->mem_size);
	gi->mp = mp;
	/*
	 * As NVIDIA's GIs before Blackwell: a fixed share per vGPU. With one
	 * vGPU per GI the slice only marks where the engine thread stops to
	 * account, so it is the longest, for the least overhead.
	 */
	err = gpuvirt_sched_set_policy(mp, GPUVIRT_SCHED_POLICY_FIXED_SHARE) ?:
	      gpuvirt_sched_set_slice(mp, GPUVIRT_SP_SLICE_MAX_NS);
	if (err)
		goto err_destroy_mp;
	err = gpuvirt_mdev_parent_publish(mp);
	if (err)
		goto err_destroy_mp;

	mutex_lock(&gpuvirt_registry.lock);
	mig->layout = l;
	mig->gi[id] = gi;
	gpuvirt_registry_changed();
	gpuvirt_gi_notify(gi, GPUVIRT_CMD_GI_ADD_NTF);
	mutex_unlock(&gpuvirt_registry.lock);
	dev_info(gpu->dev, "gpuvirt: GI %d: %s at memory slot %u\n", id,
		 p->name, gi->start);
	return id;

err_destroy_mp:
	gi->mp = NULL;
	gpuvirt_mdev_parent_destroy(mp);
err_del_dev:
	debugfs_remove_recursive(gi->debugfs);
	device_del(&gi->dev);
err_put_dev:
	put_device(&gi->dev);
	return err;
}

/* Take down a GI that is no longer reachable from the GPU's state. */
static void gpuvirt_gi_teardown(struct gpuvirt_gi *gi)
{
	gpuvirt_mdev_parent_withdraw(gi->mp);
	device_del(&gi->dev);
	gpuvirt_mdev_parent_destroy(gi->mp);
	debugfs_remove_recursive(gi->debugfs);
	put_device(&gi->dev);
}

/* Unlink GI @id from the GPU's state, under the registry lock. */
static struct gpuvirt_gi *gpuvirt_gi_unlink(struct gpuvirt_gpu *gpu,
					    unsigned int id)
{
	struct gpuvirt_gi *gi = gpu->mig->gi[id];

	mutex_lock(&gpuvirt_registry.lock);
	if (gpu->registered)
		gpuvirt_gi_notify(gi, GPUVIRT_CMD_GI_DEL_NTF);
	gpu->mig->gi[id] = NULL;
	gpuvirt_mig_gi_remove(&gpu->mig->layout, id);
	gpuvirt_registry_changed();
	mutex_unlock(&gpuvirt_registry.lock);
	return gi;
}

/**
 * gpuvirt_gi_destroy() - destroy an idle GI
 * @gpu: a GPU in MIG mode
 * @id: the GI
 * @why: filled in when refused
 *
 * Context: the GPU's lock held; @gpu registered.
 * Return: 0; -EINVAL when the GPU is not in MIG mode, -ENOENT when it has
 * no GI @id, or -EBUSY when the GI has a vGPU.
 */
int gpuvirt_gi_destroy(struct gpuvirt_gpu *gpu, unsigned int id,
		       struct gpuvirt_mig_why *why)
{
	struct gpuvirt_gi *gi;
	int err;

	lockdep_assert_held(&gpu->lock);
	memset(why, 0, sizeof(*why));
	if (!gpu->mig) {
		snprintf(why->msg, sizeof(why->msg),
			 "GPU %s is not in MIG mode", gpu->name);
		return -EINVAL;
	}
	if (id >= GPUVIRT_MIG_GIS_MAX || !gpu->mig->gi[id]) {
		snprintf(why->msg, sizeof(why->msg), "GPU %s has no GI %u",
			 gpu->name, id);
		return -ENOENT;
	}
	gi = gpu->mig->gi[id];
	err = gpuvirt_mdev_parent_offline(gi->mp);
	if (err) {
		snprintf(why->msg, sizeof(why->msg),
			 "GI %u (%s) has a vGPU; remove it first", id,
			 gpuvirt_gi_profile_name(gi));
		return err;
	}
	gpuvirt_gi_teardown(gpuvirt_gi_unlink(gpu, id));
	dev_info(gpu->dev, "gpuvirt: GI %u destroyed\n", id);
	return 0;
}

/**
 * gpuvirt_mig_alloc() - the MIG state of a GPU about to enter MIG mode
 * @gpu: the GPU
 * @why: filled in when refused
 *
 * Return: the state, with no GIs, to free with gpuvirt_mig_free() unless
 * the GPU takes it; ERR_PTR(-EOPNOTSUPP) for a GPU without MIG profiles,
 * or ERR_PTR(-ENOMEM).
 */
struct gpuvirt_mig *gpuvirt_mig_alloc(struct gpuvirt_gpu *gpu,
				      struct gpuvirt_mig_why *why)
{
	struct gpuvirt_mig *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	err = gpuvirt_mig_table_build(gpu->model, gpu->vram_size, gpu->engines,
				      &m->table);
	if (!err && gpu->engines < GPUVIRT_MIG_SLICES)
		err = -EOPNOTSUPP;
	if (err) {
		snprintf(why->msg, sizeof(why->msg),
			 "GPU %s (%s) has no MIG profiles", gpu->name,
			 gpu->model_name);
		kfree(m);
		return ERR_PTR(err);
	}
	gpuvirt_mig_layout_init(&m->layout);
	m->debugfs = debugfs_create_dir("gis", gpu->debugfs);
	return m;
}

/**
 * gpuvirt_mig_free() - free what gpuvirt_mig_alloc() made
 * @m: MIG state without GIs, no longer the GPU's
 */
void gpuvirt_mig_free(struct gpuvirt_mig *m)
{
	WARN_ON(m->layout.nr);
	debugfs_remove_recursive(m->debugfs);
	kfree(m);
}

/**
 * gpuvirt_mig_check_empty() - whether a GPU in MIG mode may leave it
 * @gpu: a GPU in MIG mode
 * @why: filled in when not
 *
 * Context: the GPU's lock held.
 * Return: 0 when the GPU has no GI, or -EBUSY (@why lists them).
 */
int gpuvirt_mig_check_empty(struct gpuvirt_gpu *gpu,
			    struct gpuvirt_mig_why *why)
{
	struct gpuvirt_mig *m = gpu->mig;
	unsigned int i, n;

	lockdep_assert_held(&gpu->lock);
	if (!m->layout.nr)
		return 0;
	n = scnprintf(why->msg, sizeof(why->msg), "GPU %s has GIs:", gpu->name);
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
		if (m->gi[i])
			n += scnprintf(why->msg + n, sizeof(why->msg) - n,
				       " %u", i);
	scnprintf(why->msg + n, sizeof(why->msg) - n, "; destroy them first");
	return -EBUSY;
}

/**
 * gpuvirt_mig_gpu_del() - destroy every GI of a GPU going away
 * @gpu: the GPU, no longer registered
 *
 * Removes the GIs' vGPUs, waiting for their users to close them.
 *
 * Context: the GPU's lock not held: the waits last as long as a VM keeps
 * a vGPU open. Nothing else changes the GPU's GIs any more, since that
 * takes the lock with the GPU registered (gpuvirt_gpu_unregister()).
 */
void gpuvirt_mig_gpu_del(struct gpuvirt_gpu *gpu)
{
	struct gpuvirt_mig *m = gpu->mig;
	unsigned int i;

	if (WARN_ON_ONCE(gpu->registered))
		return;
	if (!m)
		return;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
		if (m->gi[i])
			gpuvirt_gi_teardown(gpuvirt_gi_unlink(gpu, i));
	mutex_lock(&gpuvirt_registry.lock);
	gpu->mig = NULL;
	mutex_unlock(&gpuvirt_registry.lock);
	gpuvirt_mig_free(m);
}

int gpuvirt_gi_init(void)
{
	return class_register(&gpuvirt_gi_class);
}

void gpuvirt_gi_exit(void)
{
	class_unregister(&gpuvirt_gi_class);
}
