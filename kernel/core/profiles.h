/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Time-sliced vGPU types (profiles) of a GPU. Pure logic: no kernel-only
 * calls, so that the unit tests can build it in userspace.
 *
 * Names follow NVIDIA's grammar <PREFIX>-<framebuffer GB><series>, for
 * example "H200-35C"; a 512 MiB framebuffer is written 0 ("A100-0B"). The
 * mdev sysfs_name of a type is its name, unchanged.
 *
 * How the table of a catalogue model is derived:
 *  - C series: the sizes and max instances of NVIDIA's tables, exactly:
 *    A100-40GB 40C:1 20C:2 10C:4 8C:5 5C:8 4C:10; H200 (141 GB) 141C:1
 *    70C:2 35C:4 28C:5 17C:8 14C:10 8C:16 7C:20 4C:32. A100-80GB (prefix
 *    A100D) and H100-80GB have NVIDIA's 80 GB shape: 80C:1 40C:2 20C:4
 *    16C:5 10C:8 8C:10 4C:20.
 *  - Q series: the same sizes and max instances as the C series.
 *  - A series: the C sizes of at most 8 GB (application streaming needs
 *    little framebuffer), same max instances.
 *  - B series: 1B and 2B, max = min(vram / framebuffer, 32), 32 being the
 *    largest per-GPU count in NVIDIA's tables (H200-4C).
 *
 * Custom GPUs (and any catalogue model without a table) get C and Q
 * profiles for the power-of-two fractions 1, 1/2, 1/4, ... of the VRAM
 * rounded down to whole GB, while the framebuffer is at least 1 GB and the
 * denominator at most GPUVIRT_PROFILE_INSTANCES_MAX; max instances is the
 * denominator. Custom names use the prefix "CUSTOM", e.g. "CUSTOM-12C".
 * A custom GPU smaller than 1 GB has no profiles.
 *
 * Mixed-size mode (rule of this driver, see fbacct.h for the placement):
 * a profile's mixed-size max is its max instances rounded down to a power
 * of two. Mixed-size placements use a binary "buddy" grid: a profile with
 * mixed max M may start only at k * (vram / M), k < M, so every size has
 * its own aligned slots and the slots of two sizes nest. This gives
 * exactly NVIDIA's two published numbers for A100-40GB (8C: 5 -> 4,
 * 4C: 10 -> 8) and leaves the power-of-two counts (40C, 20C, 10C, 5C)
 * unchanged.
 */
#ifndef GPUVIRT_PROFILES_H
#define GPUVIRT_PROFILES_H

#include "pure.h"
#include "catalogue.h"

/* Longest name, e.g. "CUSTOM-1024C", with room to spare. */
#define GPUVIRT_PROFILE_NAME_MAX	24
/* Longest description is about 110 characters. */
#define GPUVIRT_PROFILE_DESC_MAX	160
/* Profiles of one GPU; H200 has the most, 23. */
#define GPUVIRT_PROFILES_MAX		32
/* Most time-sliced vGPUs of one type on one GPU (H200-4C, B series). */
#define GPUVIRT_PROFILE_INSTANCES_MAX	32
/* Prefix of the profile names of custom GPUs. */
#define GPUVIRT_PROFILE_CUSTOM_PREFIX	"CUSTOM"

/**
 * enum gpuvirt_series - NVIDIA vGPU series, the letter ending a type name
 * @GPUVIRT_SERIES_Q: virtual workstations
 * @GPUVIRT_SERIES_B: virtual desktops
 * @GPUVIRT_SERIES_A: virtual applications
 * @GPUVIRT_SERIES_C: compute
 */
enum gpuvirt_series {
	GPUVIRT_SERIES_Q,
	GPUVIRT_SERIES_B,
	GPUVIRT_SERIES_A,
	GPUVIRT_SERIES_C,
};

/**
 * struct gpuvirt_profile - one time-sliced vGPU type of a GPU
 * @name: type name, e.g. "H200-35C"; also the mdev sysfs_name
 * @description: NVIDIA-style description, e.g. "num_heads=1,
 *	frl_config=60, framebuffer=35840M, max_resolution=4096x2160,
 *	max_instance=4, series=C"
 * @series: the series
 * @fb_size: framebuffer of one instance, in bytes
 * @max_instances: most instances on the GPU in homogeneous (default) mode
 * @mixed_max_instances: most instances on the GPU in mixed-size mode
 * @heads: display heads of one instance (num_heads)
 * @frl: frame rate limit, vblanks per second (frl_config)
 * @max_width: widest display mode, pixels (max_resolution)
 * @max_height: tallest display mode, lines
 */
struct gpuvirt_profile {
	char name[GPUVIRT_PROFILE_NAME_MAX];
	char description[GPUVIRT_PROFILE_DESC_MAX];
	enum gpuvirt_series series;
	u64 fb_size;
	u32 max_instances;
	u32 mixed_max_instances;
	u32 heads;
	u32 frl;
	u32 max_width;
	u32 max_height;
};

int gpuvirt_profiles_build(const struct gpuvirt_model *model, u64 vram_size,
			   struct gpuvirt_profile *out, unsigned int max);
const struct gpuvirt_profile *
gpuvirt_profile_find(const struct gpuvirt_profile *table, unsigned int count,
		     const char *name);
char gpuvirt_profile_series_letter(enum gpuvirt_series series);
void gpuvirt_profile_fill_mig(struct gpuvirt_profile *p, const char *name,
			      u64 fb_size);

#endif /* GPUVIRT_PROFILES_H */
