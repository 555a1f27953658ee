// SPDX-License-Identifier: GPL-2.0-only
/*
 * Framebuffer accounting of one GPU; see fbacct.h for the rules.
 *
 * Pure logic: built into gpuvirt.ko and into the userspace unit tests.
 */
#include "fbacct.h"

/**
 * gpuvirt_fb_init() - an empty GPU in homogeneous mode
 * @fb: state to initialise
 * @vram_size: the GPU's framebuffer in bytes
 */
void gpuvirt_fb_init(struct gpuvirt_fb *fb, u64 vram_size)
{
	memset(fb, 0, sizeof(*fb));
	fb->vram_size = vram_size;
}

static bool gpuvirt_fb_same_type(const struct gpuvirt_profile *a,
				 const struct gpuvirt_profile *b)
{
	return a == b || !strcmp(a->name, b->name);
}

/* Homogeneous rule: a vGPU of a type other than @p exists. */
static bool gpuvirt_fb_other_type(const struct gpuvirt_fb *fb,
				  const struct gpuvirt_profile *p)
{
	return !fb->mixed && fb->count &&
	       !gpuvirt_fb_same_type(fb->vgpus[0].profile, p);
}

/* Number of possible starts of @p in the current mode. */
static u32 gpuvirt_fb_slots(const struct gpuvirt_fb *fb,
			    const struct gpuvirt_profile *p)
{
	if (!p->fb_size)
		return 0;
	return fb->mixed ? p->mixed_max_instances : p->max_instances;
}

/* Start of slot @k of @p in the current mode. */
static u64 gpuvirt_fb_start(const struct gpuvirt_fb *fb,
			    const struct gpuvirt_profile *p, u32 k)
{
	u64 stride;

	if (!fb->mixed)
		return k * p->fb_size;
	stride = fb->vram_size / p->mixed_max_instances;
	return k * (stride & ~((u64)SZ_1M - 1));
}

/* Slot @k of @p lies in the VRAM and overlaps no vGPU. */
static bool gpuvirt_fb_slot_free(const struct gpuvirt_fb *fb,
				 const struct gpuvirt_profile *p, u32 k)
{
	u64 start = gpuvirt_fb_start(fb, p, k);
	unsigned int i;

	if (start > fb->vram_size || p->fb_size > fb->vram_size - start)
		return false;
	for (i = 0; i < fb->count; i++) {
		const struct gpuvirt_fb_vgpu *v = &fb->vgpus[i];

		if (start < v->offset + v->size && v->offset < start + p->fb_size)
			return false;
	}
	return true;
}

/**
 * gpuvirt_fb_available() - how many more vGPUs of a type fit now
 * @fb: GPU state
 * @p: the type
 *
 * The count is exact: that many gpuvirt_fb_place() calls for @p in a row
 * succeed, and the next one fails.
 *
 * Return: the number of instances of @p that can still be created; 0 in
 * homogeneous mode while a vGPU of another type exists.
 */
unsigned int gpuvirt_fb_available(const struct gpuvirt_fb *fb,
				  const struct gpuvirt_profile *p)
{
	u32 k, slots = gpuvirt_fb_slots(fb, p);
	unsigned int n = 0;
	u64 start, end = 0;

	if (gpuvirt_fb_other_type(fb, p))
		return 0;
	/*
	 * Replay what repeated gpuvirt_fb_place() calls would do: take the
	 * lowest free slot that does not overlap the slot taken before it.
	 */
	for (k = 0; k < slots; k++) {
		start = gpuvirt_fb_start(fb, p, k);
		if ((n && start < end) || !gpuvirt_fb_slot_free(fb, p, k))
			continue;
		end = start + p->fb_size;
		n++;
	}
	if (n > GPUVIRT_FB_MAX_VGPUS - fb->count)
		n = GPUVIRT_FB_MAX_VGPUS - fb->count;
	return n;
}

/**
 * gpuvirt_fb_place() - place a new vGPU at the lowest free slot
 * @fb: GPU state
 * @p: the new vGPU's type; must outlive the placement
 * @offset: receives the offset of the vGPU's framebuffer in the VRAM
 *
 * Return: 0 on success; -EBUSY in homogeneous mode while a vGPU of another
 * type exists; -ENOSPC when no slot is free or the GPU holds
 * GPUVIRT_FB_MAX_VGPUS vGPUs; -EINVAL for a type without framebuffer.
 */
int gpuvirt_fb_place(struct gpuvirt_fb *fb, const struct gpuvirt_profile *p,
		     u64 *offset)
{
	u32 k, slots = gpuvirt_fb_slots(fb, p);
	struct gpuvirt_fb_vgpu *v;

	if (!p->fb_size)
		return -EINVAL;
	if (gpuvirt_fb_other_type(fb, p))
		return -EBUSY;
	if (fb->count >= GPUVIRT_FB_MAX_VGPUS)
		return -ENOSPC;
	for (k = 0; k < slots; k++) {
		if (!gpuvirt_fb_slot_free(fb, p, k))
			continue;
		v = &fb->vgpus[fb->count++];
		v->profile = p;
		v->offset = gpuvirt_fb_start(fb, p, k);
		v->size = p->fb_size;
		*offset = v->offset;
		return 0;
	}
	return -ENOSPC;
}

/**
 * gpuvirt_fb_release() - free the vGPU placed at an offset
 * @fb: GPU state
 * @offset: the offset gpuvirt_fb_place() returned
 *
 * Return: 0, or -ENOENT if no vGPU starts at @offset.
 */
int gpuvirt_fb_release(struct gpuvirt_fb *fb, u64 offset)
{
	unsigned int i;

	for (i = 0; i < fb->count; i++) {
		if (fb->vgpus[i].offset != offset)
			continue;
		fb->vgpus[i] = fb->vgpus[--fb->count];
		memset(&fb->vgpus[fb->count], 0, sizeof(fb->vgpus[0]));
		return 0;
	}
	return -ENOENT;
}

/**
 * gpuvirt_fb_set_mixed() - turn mixed-size mode on or off
 * @fb: GPU state
 * @mixed: true for mixed-size mode, false for homogeneous mode
 *
 * Return: 0 (also when the mode is already @mixed), or -EBUSY if the mode
 * would change while a vGPU exists.
 */
int gpuvirt_fb_set_mixed(struct gpuvirt_fb *fb, bool mixed)
{
	if (fb->mixed == mixed)
		return 0;
	if (fb->count)
		return -EBUSY;
	fb->mixed = mixed;
	return 0;
}
