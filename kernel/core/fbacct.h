/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Framebuffer accounting of one GPU: its VRAM as a set of vGPU placements.
 * Pure logic: no allocation, no locks (the caller serialises), so that the
 * unit tests can build it in userspace.
 *
 * Homogeneous mode (the default, NVIDIA's rule "one vGPU type per GPU"):
 * while any vGPU exists, only more vGPUs of that same type may be created;
 * every other type has 0 available and placing one fails with -EBUSY.
 * Instance i of a type of framebuffer S sits at offset i * S, for
 * i < max_instances.
 *
 * Mixed-size mode: types of different sizes coexist. A type with mixed-size
 * max M may start only at k * (vram / M) (rounded down to 1 MiB), k < M,
 * and must not overlap another vGPU. With the tables of profiles.c a start
 * is at least one framebuffer after the previous one, so the starts of one
 * type are disjoint and creating an instance never takes away another free
 * start of that type; M is a power of two, so the starts of all types form
 * a binary buddy grid.
 *
 * available_instances is exact in both modes: it replays the placements
 * that repeated gpuvirt_fb_place() calls would make, so it equals the
 * number of those calls that succeed.
 *
 * In both modes a GPU holds at most GPUVIRT_FB_MAX_VGPUS vGPUs, and the
 * placement is always the lowest free slot or start. The mode may change
 * only while no vGPU exists.
 */
#ifndef GPUVIRT_FBACCT_H
#define GPUVIRT_FBACCT_H

#include "pure.h"
#include "profiles.h"

#define GPUVIRT_FB_MAX_VGPUS	64

/**
 * struct gpuvirt_fb_vgpu - one placed vGPU
 * @profile: its type; the profile table must outlive the placement
 * @offset: first byte of its framebuffer in the GPU's VRAM
 * @size: framebuffer size in bytes (@profile->fb_size)
 */
struct gpuvirt_fb_vgpu {
	const struct gpuvirt_profile *profile;
	u64 offset;
	u64 size;
};

/**
 * struct gpuvirt_fb - VRAM state of one GPU
 * @vram_size: the GPU's framebuffer in bytes
 * @mixed: mixed-size mode is on
 * @count: number of entries in @vgpus
 * @vgpus: the placed vGPUs, in no particular order
 */
struct gpuvirt_fb {
	u64 vram_size;
	bool mixed;
	unsigned int count;
	struct gpuvirt_fb_vgpu vgpus[GPUVIRT_FB_MAX_VGPUS];
};

void gpuvirt_fb_init(struct gpuvirt_fb *fb, u64 vram_size);
unsigned int gpuvirt_fb_available(const struct gpuvirt_fb *fb,
				  const struct gpuvirt_profile *p);
int gpuvirt_fb_place(struct gpuvirt_fb *fb, const struct gpuvirt_profile *p,
		     u64 *offset);
int gpuvirt_fb_release(struct gpuvirt_fb *fb, u64 offset);
int gpuvirt_fb_set_mixed(struct gpuvirt_fb *fb, bool mixed);

#endif /* GPUVIRT_FBACCT_H */
