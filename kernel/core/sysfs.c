// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs configuration of the time-slice scheduler and the vGPU mode.
 *
 *   <gpu device>/gpuvirt/		per GPU
 *	mig_mode	0 | 1 (only without vGPUs and GIs; resets the GPU)
 *	vgpu_mode	homogeneous | mixed (only while the GPU has no vGPUs)
 *	sched_policy	best-effort | equal-share | fixed-share | weighted
 *	sched_slice_us	0 (the default for the vGPU count) or 100..100000
 *   <gi device>/gpuvirt/		per GI in MIG mode (gi.c)
 *	sched_policy, sched_slice_us	as above, for the GI's own engines
 *   /sys/bus/mdev/devices/<uuid>/gpuvirt/	per vGPU
 *	weight		1..10000
 *	min_pct		guaranteed minimum, 0..100
 *	max_pct		the most it may use, 1..100
 *
 * Every change applies to running vGPUs at the scheduler's next decision.
 * A refused write changes nothing and fails with the errno the scheduler
 * gives: -EINVAL out of range, -ENOSPC when the minimums would pass 100 %,
 * -EBUSY for a mode switch with vGPUs present.
 */
#include <linux/device.h>
#include <linux/kstrtox.h>
#include <linux/sysfs.h>

#include "gi.h"
#include "vgpu.h"

/*
 * The group exists only while the GPU's mdev state does: it is removed,
 * waiting for running show/store calls, before that is freed. So the
 * lookup under the registry lock may let go of the lock.
 */
static struct gpuvirt_gpu *gpuvirt_sysfs_gpu(struct device *dev)
{
	struct gpuvirt_gpu *gpu, *found = NULL;
	unsigned long id;

	lockdep_assert_held(&gpuvirt_registry.lock);
	xa_for_each(&gpuvirt_registry.gpus, id, gpu) {
		if (gpu && gpu->dev == dev) {
			found = gpu;
			break;
		}
	}
	return found;
}

/*
 * A GI's files are the GI device's own, removed before its parent is
 * freed (gi.c).
 */
static struct gpuvirt_mdev_parent *gpuvirt_sysfs_mp(struct device *dev)
{
	struct gpuvirt_gpu *gpu;

	if (gpuvirt_dev_is_gi(dev))
		return gpuvirt_gi_from_dev(dev)->mp;
	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_sysfs_gpu(dev);
	mutex_unlock(&gpuvirt_registry.lock);
	return gpu ? gpu->mdev : NULL;
}

static ssize_t sched_policy_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev);
	u32 policy;

	if (!mp)
		return -ENODEV;
	spin_lock(&mp->sched.lock);
	policy = mp->sched.sp.policy;
	spin_unlock(&mp->sched.lock);
	return sysfs_emit(buf, "%s\n", gpuvirt_sched_policy_name(policy));
}

static ssize_t sched_policy_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev);
	int policy, err;

	if (!mp)
		return -ENODEV;
	policy = gpuvirt_sched_policy_parse(buf);
	if (policy < 0)
		return policy;
	err = gpuvirt_sched_set_policy(mp, policy);
	if (err)
		return err;
	gpuvirt_sched_notify(mp);
	return count;
}
static DEVICE_ATTR_RW(sched_policy);

static ssize_t sched_slice_us_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev);
	u64 slice_ns;

	if (!mp)
		return -ENODEV;
	spin_lock(&mp->sched.lock);
	slice_ns = mp->sched.sp.slice_ns;
	spin_unlock(&mp->sched.lock);
	return sysfs_emit(buf, "%llu\n", div_u64(slice_ns, NSEC_PER_USEC));
}

static ssize_t sched_slice_us_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev);
	u32 us;
	int err;

	if (!mp)
		return -ENODEV;
	err = kstrtou32(buf, 0, &us);
	if (err)
		return err;
	err = gpuvirt_sched_set_slice(mp, (u64)us * NSEC_PER_USEC);
	if (err)
		return err;
	gpuvirt_sched_notify(mp);
	return count;
}
static DEVICE_ATTR_RW(sched_slice_us);

static ssize_t vgpu_mode_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev);

	if (!mp)
		return -ENODEV;
	return sysfs_emit(buf, "%s\n", gpuvirt_mdev_mixed(mp) ? "mixed" :
								 "homogeneous");
}

static ssize_t vgpu_mode_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev);
	int err;

	if (!mp)
		return -ENODEV;
	if (sysfs_streq(buf, "mixed"))
		err = gpuvirt_mdev_set_mixed(mp, true);
	else if (sysfs_streq(buf, "homogeneous"))
		err = gpuvirt_mdev_set_mixed(mp, false);
	else
		err = -EINVAL;
	return err ?: count;
}
static DEVICE_ATTR_RW(vgpu_mode);

static ssize_t mig_mode_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gpu *gpu;
	bool mig;

	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_sysfs_gpu(dev);
	mig = gpu && gpu->mode == GPUVIRT_GPU_MODE_MIG;
	mutex_unlock(&gpuvirt_registry.lock);
	if (!gpu)
		return -ENODEV;
	return sysfs_emit(buf, "%d\n", mig);
}

/*
 * MIG mode on (1) or off (0). The files of this group stay through a mode
 * change, which therefore may run from here.
 */
static ssize_t mig_mode_store(struct device *dev,
			      struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct gpuvirt_mig_why why;
	struct gpuvirt_gpu *gpu;
	bool mig;
	int err;

	err = kstrtobool(buf, &mig);
	if (err)
		return err;
	mutex_lock(&gpuvirt_mig_mutex);
	mutex_lock(&gpuvirt_registry.lock);
	gpu = gpuvirt_sysfs_gpu(dev);
	mutex_unlock(&gpuvirt_registry.lock);
	/* a GPU found under the MIG mutex stays until it is dropped */
	err = gpu ? gpuvirt_mig_set_mode(gpu, mig, &why) : -ENODEV;
	mutex_unlock(&gpuvirt_mig_mutex);
	if (err && why.msg[0])
		dev_info(dev, "gpuvirt: mig_mode: %s\n", why.msg);
	return err ?: count;
}
static DEVICE_ATTR_RW(mig_mode);

static struct attribute *gpuvirt_gpu_attrs[] = {
	&dev_attr_mig_mode.attr,
	&dev_attr_vgpu_mode.attr,
	&dev_attr_sched_policy.attr,
	&dev_attr_sched_slice_us.attr,
	NULL
};

static const struct attribute_group gpuvirt_gpu_group = {
	.name = "gpuvirt",
	.attrs = gpuvirt_gpu_attrs,
};

static struct attribute *gpuvirt_sched_attrs[] = {
	&dev_attr_sched_policy.attr,
	&dev_attr_sched_slice_us.attr,
	NULL
};

/* A GI's scheduler: <gi device>/gpuvirt/ */
const struct attribute_group gpuvirt_sched_attr_group = {
	.name = "gpuvirt",
	.attrs = gpuvirt_sched_attrs,
};

int gpuvirt_sysfs_gpu_add(struct gpuvirt_mdev_parent *mp)
{
	return sysfs_create_group(&mp->gpu->dev->kobj, &gpuvirt_gpu_group);
}

void gpuvirt_sysfs_gpu_del(struct gpuvirt_mdev_parent *mp)
{
	sysfs_remove_group(&mp->gpu->dev->kobj, &gpuvirt_gpu_group);
}

/*
 * Per vGPU: the mdev driver's dev_groups, present while the vGPU is bound,
 * which is while its drvdata is set.
 */
static struct gpuvirt_sp_slot gpuvirt_sysfs_slot(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	struct gpuvirt_sp_slot slot;

	spin_lock(&s->lock);
	slot = s->sp.slot[vgpu->slot];
	spin_unlock(&s->lock);
	return slot;
}

/* A vGPU's scheduling parameters, one file each. */
enum gpuvirt_sysfs_param {
	GPUVIRT_SYSFS_WEIGHT,
	GPUVIRT_SYSFS_MIN_PCT,
	GPUVIRT_SYSFS_MAX_PCT,
};

static ssize_t gpuvirt_sysfs_param_show(struct device *dev, char *buf,
					enum gpuvirt_sysfs_param p)
{
	struct gpuvirt_sp_slot slot = gpuvirt_sysfs_slot(dev_get_drvdata(dev));

	return sysfs_emit(buf, "%u\n", p == GPUVIRT_SYSFS_WEIGHT ? slot.weight :
					p == GPUVIRT_SYSFS_MIN_PCT ? slot.min_pct :
					slot.max_pct);
}

static ssize_t gpuvirt_sysfs_param_store(struct device *dev, const char *buf,
					 size_t count,
					 enum gpuvirt_sysfs_param p)
{
	struct gpuvirt_vgpu *vgpu = dev_get_drvdata(dev);
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (err)
		return err;
	/* the others keep their values; the scheduler's lock orders writers */
	err = gpuvirt_sched_vgpu_set(vgpu,
				     p == GPUVIRT_SYSFS_WEIGHT ? val : U32_MAX,
				     p == GPUVIRT_SYSFS_MIN_PCT ? val : U32_MAX,
				     p == GPUVIRT_SYSFS_MAX_PCT ? val : U32_MAX);
	if (err)
		return err;
	gpuvirt_vgpu_notify(vgpu, GPUVIRT_CMD_VGPU_CHANGE_NTF);
	return count;
}

#define GPUVIRT_SYSFS_PARAM(name, p)					\
static const enum gpuvirt_sysfs_param name##_param = (p);		\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return gpuvirt_sysfs_param_show(dev, buf, name##_param);	\
}									\
static ssize_t name##_store(struct device *dev,				\
			    struct device_attribute *attr,		\
			    const char *buf, size_t count)		\
{									\
	return gpuvirt_sysfs_param_store(dev, buf, count, name##_param); \
}									\
static DEVICE_ATTR_RW(name)

GPUVIRT_SYSFS_PARAM(weight, GPUVIRT_SYSFS_WEIGHT);
GPUVIRT_SYSFS_PARAM(min_pct, GPUVIRT_SYSFS_MIN_PCT);
GPUVIRT_SYSFS_PARAM(max_pct, GPUVIRT_SYSFS_MAX_PCT);

static struct attribute *gpuvirt_vgpu_attrs[] = {
	&dev_attr_weight.attr,
	&dev_attr_min_pct.attr,
	&dev_attr_max_pct.attr,
	NULL
};

static const struct attribute_group gpuvirt_vgpu_group = {
	.name = "gpuvirt",
	.attrs = gpuvirt_vgpu_attrs,
};

const struct attribute_group *gpuvirt_vgpu_groups[] = {
	&gpuvirt_vgpu_group,
	NULL
};
