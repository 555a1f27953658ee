// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs configuration of the time-slice scheduler and the vGPU mode.
 *
 *   <gpu device>/gpuvirt/		per GPU
 *	mig_mode	0 | 1 (only without vGPUs and GIs; resets the GPU)
 *	vgpu_mode	homogeneous | mixed (only while the GPU has no vGPUs)
 *	vgpu_model	mdev | sriov (only without vGPUs, GIs and VFs; sriov.c)
 *	sched_policy	best-effort | equal-share | fixed-share | weighted
 *	sched_slice_us	0 (the default for the vGPU count) or 100..100000
 *   <gi device>/gpuvirt/		per GI in MIG mode (gi.c)
 *	sched_policy, sched_slice_us	as above, for the GI's own engines
 *   /sys/bus/mdev/devices/<uuid>/gpuvirt/	per vGPU
 *	weight		1..10000
 *	min_pct		guaranteed minimum, 0..100
 *	max_pct		the most it may use, 1..100
 *	frame_rate_limiter	1 (on, the default) | 0
 *   <typed VF>/gpuvirt/			per VF vGPU (sriov.c)
 *	weight, min_pct, max_pct, frame_rate_limiter	as above, through
 *			gpuvirt_vgpu_param_show/store(); -ENODEV while
 *			the VF has no type
 *
 * Every change applies to running vGPUs at the scheduler's next decision,
 * and is announced on the netlink monitor group by the function that makes
 * it, as the same change made over netlink is.
 * A refused write changes nothing and fails with the errno the scheduler
 * gives: -EINVAL out of range, -ENOSPC when the minimums would pass 100 %,
 * -EBUSY for a mode switch with vGPUs present.
 */
#include <linux/device.h>
#include <linux/export.h>
#include <linux/kstrtox.h>
#include <linux/sysfs.h>

#include "gi.h"
#include "sriov.h"
#include "vgpu.h"

/*
 * The GPU's files are its device's (gpuvirt_gpu_groups), there for as long
 * as the device, so each call finds the GPU and holds a reference to it
 * while it works; a GI's are the GI device's own, removed before the GI's
 * parent is freed (gi.c). Returns the parent to use and the GPU to put
 * (NULL for a GI), or NULL when the GPU is not registered.
 */
static struct gpuvirt_mdev_parent *gpuvirt_sysfs_mp(struct device *dev,
						    struct gpuvirt_gpu **gpu)
{
	*gpu = NULL;
	if (gpuvirt_dev_is_gi(dev))
		return gpuvirt_gi_from_dev(dev)->mp;
	*gpu = gpuvirt_gpu_get_by_dev(dev);
	return *gpu ? (*gpu)->mdev : NULL;
}

static void gpuvirt_sysfs_put(struct gpuvirt_gpu *gpu)
{
	if (gpu)
		gpuvirt_gpu_put(gpu);
}

static ssize_t sched_policy_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gpu *gpu;
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev, &gpu);
	u32 policy;

	if (!mp)
		return -ENODEV;
	spin_lock(&mp->sched.lock);
	policy = mp->sched.sp.policy;
	spin_unlock(&mp->sched.lock);
	gpuvirt_sysfs_put(gpu);
	return sysfs_emit(buf, "%s\n", gpuvirt_sched_policy_name(policy));
}

static ssize_t sched_policy_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct gpuvirt_gpu *gpu;
	struct gpuvirt_mdev_parent *mp;
	int policy, err;

	policy = gpuvirt_sched_policy_parse(buf);
	if (policy < 0)
		return policy;
	mp = gpuvirt_sysfs_mp(dev, &gpu);
	if (!mp)
		return -ENODEV;
	err = gpuvirt_sched_set(mp, policy, U64_MAX);
	gpuvirt_sysfs_put(gpu);
	return err ?: count;
}
static DEVICE_ATTR_RW(sched_policy);

static ssize_t sched_slice_us_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gpu *gpu;
	struct gpuvirt_mdev_parent *mp = gpuvirt_sysfs_mp(dev, &gpu);
	u64 slice_ns;

	if (!mp)
		return -ENODEV;
	spin_lock(&mp->sched.lock);
	slice_ns = mp->sched.sp.slice_ns;
	spin_unlock(&mp->sched.lock);
	gpuvirt_sysfs_put(gpu);
	return sysfs_emit(buf, "%llu\n", div_u64(slice_ns, NSEC_PER_USEC));
}

static ssize_t sched_slice_us_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	struct gpuvirt_gpu *gpu;
	struct gpuvirt_mdev_parent *mp;
	u32 us;
	int err;

	err = kstrtou32(buf, 0, &us);
	if (err)
		return err;
	mp = gpuvirt_sysfs_mp(dev, &gpu);
	if (!mp)
		return -ENODEV;
	err = gpuvirt_sched_set(mp, U32_MAX, (u64)us * NSEC_PER_USEC);
	gpuvirt_sysfs_put(gpu);
	return err ?: count;
}
static DEVICE_ATTR_RW(sched_slice_us);

/* By the uapi enums' values (GPUVIRT_VGPU_MODE_*, GPUVIRT_VGPU_MODEL_*) */
static const char * const gpuvirt_vgpu_mode_names[] = {
	[GPUVIRT_VGPU_MODE_HOMOGENEOUS]	= "homogeneous",
	[GPUVIRT_VGPU_MODE_MIXED]	= "mixed",
};

static const char * const gpuvirt_vgpu_model_names[] = {
	[GPUVIRT_VGPU_MODEL_MDEV]	= "mdev",
	[GPUVIRT_VGPU_MODEL_SRIOV]	= "sriov",
};

static ssize_t vgpu_mode_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gpu *gpu = gpuvirt_gpu_get_by_dev(dev);
	u32 mode;

	if (!gpu)
		return -ENODEV;
	mode = gpuvirt_gpu_vgpu_mode(gpu);
	gpuvirt_gpu_put(gpu);
	return sysfs_emit(buf, "%s\n", gpuvirt_vgpu_mode_names[mode]);
}

/*
 * Change one of the GPU's settings (gpuvirt_gpu_configure()), logging a
 * refusal's reason; @name is the file's.
 */
static ssize_t gpuvirt_sysfs_configure(struct device *dev, const char *name,
				       const struct gpuvirt_gpu_cfg *cfg,
				       size_t count)
{
	struct gpuvirt_gpu_why why;
	struct gpuvirt_gpu *gpu;
	int err;

	gpu = gpuvirt_gpu_get_by_dev(dev);
	if (!gpu)
		return -ENODEV;
	err = gpuvirt_gpu_lock(gpu);
	if (!err) {
		err = gpuvirt_gpu_configure(gpu, cfg, &why);
		gpuvirt_gpu_unlock(gpu);
		if (err && why.msg[0])
			dev_info(dev, "gpuvirt: %s stays: %s\n", name, why.msg);
	}
	gpuvirt_gpu_put(gpu);
	return err ?: count;
}

static ssize_t vgpu_mode_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct gpuvirt_gpu_cfg cfg = {
		.vgpu_model = GPUVIRT_GPU_CFG_KEEP,
		.mode = GPUVIRT_GPU_CFG_KEEP,
	};
	int err;

	err = sysfs_match_string(gpuvirt_vgpu_mode_names, buf);
	if (err < 0)
		return err;
	cfg.vgpu_mode = err;
	return gpuvirt_sysfs_configure(dev, "vgpu_mode", &cfg, count);
}
static DEVICE_ATTR_RW(vgpu_mode);

static ssize_t vgpu_model_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gpu *gpu = gpuvirt_gpu_get_by_dev(dev);
	bool sriov;

	if (!gpu)
		return -ENODEV;
	mutex_lock(&gpuvirt_registry.lock);
	sriov = gpuvirt_gpu_sriov(gpu);
	mutex_unlock(&gpuvirt_registry.lock);
	gpuvirt_gpu_put(gpu);
	return sysfs_emit(buf, "%s\n", gpuvirt_vgpu_model_names[sriov]);
}

static ssize_t vgpu_model_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct gpuvirt_gpu_cfg cfg = {
		.vgpu_mode = GPUVIRT_GPU_CFG_KEEP,
		.mode = GPUVIRT_GPU_CFG_KEEP,
	};
	int err;

	err = sysfs_match_string(gpuvirt_vgpu_model_names, buf);
	if (err < 0)
		return err;
	cfg.vgpu_model = err;
	return gpuvirt_sysfs_configure(dev, "vgpu_model", &cfg, count);
}
static DEVICE_ATTR_RW(vgpu_model);

static ssize_t mig_mode_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct gpuvirt_gpu *gpu = gpuvirt_gpu_get_by_dev(dev);
	bool mig;

	if (!gpu)
		return -ENODEV;
	mig = READ_ONCE(gpu->mode) == GPUVIRT_GPU_MODE_MIG;
	gpuvirt_gpu_put(gpu);
	return sysfs_emit(buf, "%d\n", mig);
}

/* MIG mode on (1) or off (0); the files stay through a mode change. */
static ssize_t mig_mode_store(struct device *dev,
			      struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct gpuvirt_gpu_cfg cfg = {
		.vgpu_model = GPUVIRT_GPU_CFG_KEEP,
		.vgpu_mode = GPUVIRT_GPU_CFG_KEEP,
	};
	bool mig;
	int err;

	err = kstrtobool(buf, &mig);
	if (err)
		return err;
	cfg.mode = mig ? GPUVIRT_GPU_MODE_MIG : GPUVIRT_GPU_MODE_TIMESLICED;
	return gpuvirt_sysfs_configure(dev, "mig_mode", &cfg, count);
}
static DEVICE_ATTR_RW(mig_mode);

static struct attribute *gpuvirt_gpu_attrs[] = {
	&dev_attr_mig_mode.attr,
	&dev_attr_vgpu_mode.attr,
	&dev_attr_vgpu_model.attr,
	&dev_attr_sched_policy.attr,
	&dev_attr_sched_slice_us.attr,
	NULL
};

static const struct attribute_group gpuvirt_gpu_group = {
	.name = "gpuvirt",
	.attrs = gpuvirt_gpu_attrs,
};

/* A GPU's files: listed in its device's groups by the backend. */
const struct attribute_group *gpuvirt_gpu_groups[] = {
	&gpuvirt_gpu_group,
	NULL
};
EXPORT_SYMBOL_GPL(gpuvirt_gpu_groups);

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

/* A vGPU's scheduling parameters, under its GPU's sched lock */
static struct gpuvirt_sp_slot gpuvirt_sysfs_slot(struct gpuvirt_vgpu *vgpu)
{
	struct gpuvirt_sched *s = &vgpu->mp->sched;
	struct gpuvirt_sp_slot slot;

	spin_lock(&s->lock);
	slot = s->sp.slot[vgpu->slot];
	spin_unlock(&s->lock);
	return slot;
}

/**
 * gpuvirt_vgpu_param_show() - read one of a vGPU's settings for sysfs
 * @vgpu: the vGPU, kept alive by the caller
 * @buf: the sysfs buffer
 * @p: which setting
 *
 * The one reader of <vGPU>/gpuvirt/{weight,min_pct,max_pct,
 * frame_rate_limiter}, for an mdev's files (below) and a typed VF's
 * (sriov.c).
 *
 * Return: the length written.
 */
ssize_t gpuvirt_vgpu_param_show(struct gpuvirt_vgpu *vgpu, char *buf,
				enum gpuvirt_vgpu_param p)
{
	struct gpuvirt_sp_slot slot;

	if (p == GPUVIRT_VGPU_PARAM_FRL)
		return sysfs_emit(buf, "%u\n", gpuvirt_display_frl(vgpu));
	slot = gpuvirt_sysfs_slot(vgpu);
	return sysfs_emit(buf, "%u\n", p == GPUVIRT_VGPU_PARAM_WEIGHT ? slot.weight :
					p == GPUVIRT_VGPU_PARAM_MIN_PCT ? slot.min_pct :
					slot.max_pct);
}

/**
 * gpuvirt_vgpu_param_store() - change one of a vGPU's settings from sysfs
 * @vgpu: the vGPU, kept alive by the caller
 * @buf: what was written: a decimal, octal or hex number
 * @count: its length
 * @p: which setting
 *
 * The one writer of the files gpuvirt_vgpu_param_show() reads. The
 * scheduling parameters go through gpuvirt_sched_vgpu_set(), as netlink's
 * vgpu-set does, so the ranges, the errors and the notification are the
 * same; the frame rate limiter takes 0 or 1.
 *
 * Context: may sleep.
 * Return: @count, or -EINVAL (not a number, out of range, a minimum above
 * the maximum), -ERANGE (above U32_MAX) or -ENOSPC (the minimums would
 * pass 100 %); a refused write changes nothing.
 */
ssize_t gpuvirt_vgpu_param_store(struct gpuvirt_vgpu *vgpu, const char *buf,
				 size_t count, enum gpuvirt_vgpu_param p)
{
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (err)
		return err;
	if (p == GPUVIRT_VGPU_PARAM_FRL) {
		if (val > 1)
			return -EINVAL;
		gpuvirt_display_set_frl(vgpu, val);
		return count;
	}
	/* the others keep their values; the scheduler's lock orders writers */
	err = gpuvirt_sched_vgpu_set(vgpu,
				     p == GPUVIRT_VGPU_PARAM_WEIGHT ? val : U32_MAX,
				     p == GPUVIRT_VGPU_PARAM_MIN_PCT ? val : U32_MAX,
				     p == GPUVIRT_VGPU_PARAM_MAX_PCT ? val : U32_MAX);
	return err ?: count;
}

/*
 * Per mdev vGPU: the mdev driver's dev_groups, present while the vGPU is
 * bound, which is while its drvdata is set; sysfs drains a call in
 * progress before the files go, so the vGPU outlives each call.
 */
#define GPUVIRT_SYSFS_PARAM(name, p)					\
static const enum gpuvirt_vgpu_param name##_param = (p);		\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return gpuvirt_vgpu_param_show(dev_get_drvdata(dev), buf,	\
				       name##_param);			\
}									\
static ssize_t name##_store(struct device *dev,				\
			    struct device_attribute *attr,		\
			    const char *buf, size_t count)		\
{									\
	return gpuvirt_vgpu_param_store(dev_get_drvdata(dev), buf,	\
					count, name##_param);		\
}									\
static DEVICE_ATTR_RW(name)

GPUVIRT_SYSFS_PARAM(weight, GPUVIRT_VGPU_PARAM_WEIGHT);
GPUVIRT_SYSFS_PARAM(min_pct, GPUVIRT_VGPU_PARAM_MIN_PCT);
GPUVIRT_SYSFS_PARAM(max_pct, GPUVIRT_VGPU_PARAM_MAX_PCT);
/* The display's frame rate limiter, 1 (on, the default) or 0. */
GPUVIRT_SYSFS_PARAM(frame_rate_limiter, GPUVIRT_VGPU_PARAM_FRL);

static struct attribute *gpuvirt_vgpu_attrs[] = {
	&dev_attr_weight.attr,
	&dev_attr_min_pct.attr,
	&dev_attr_max_pct.attr,
	&dev_attr_frame_rate_limiter.attr,
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
