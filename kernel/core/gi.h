/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MIG mode and GPU instances (GIs) in the core: gi.c. The geometry, the
 * profiles and the planner are the pure logic of mig.h.
 */
#ifndef GPUVIRT_GI_H
#define GPUVIRT_GI_H

#include <linux/device.h>

#include "mig.h"

struct gpuvirt_mdev_parent;
struct netlink_ext_ack;

/**
 * struct gpuvirt_gi - one GPU instance
 * @dev: the GI's device, "<gpu>-gi<id>", a child of the GPU's device and
 *	the mdev parent its vGPU type is offered on
 * @gpu: the GPU
 * @id: GI id, 0 to 6
 * @profile: index in the GPU's struct gpuvirt_mig_table
 * @start: first memory slot, the placement
 * @vram_base: first byte of its VRAM range in the GPU's
 * @vram_size: size of the range
 * @engines: its engines, bit n for engine n: those of its compute slices
 * @mp: its vGPU side: the MIG-backed type, its scheduler and telemetry
 * @debugfs: <debugfs>/gpuvirt/gpus/<gpu>/gis/<id>/
 *
 * Everything is fixed from creation to destruction; the GI is created and
 * destroyed under its GPU's lock (struct gpuvirt_gpu.lock).
 */
struct gpuvirt_gi {
	struct device dev;
	struct gpuvirt_gpu *gpu;
	u8 id;
	u8 profile;
	u8 start;
	u64 vram_base;
	u64 vram_size;
	u64 engines;
	struct gpuvirt_mdev_parent *mp;
	struct dentry *debugfs;
};

/**
 * struct gpuvirt_mig - a GPU in MIG mode
 * @table: its GI profiles
 * @layout: where its GIs are
 * @gi: its GIs by id, NULL where none
 * @debugfs: <debugfs>/gpuvirt/gpus/<gpu>/gis/
 *
 * @layout and @gi change under the GPU's lock and the registry lock both,
 * and may be read under either.
 */
struct gpuvirt_mig {
	struct gpuvirt_mig_table table;
	struct gpuvirt_mig_layout layout;
	struct gpuvirt_gi *gi[GPUVIRT_MIG_GIS_MAX];
	struct dentry *debugfs;
};

int gpuvirt_gi_init(void);
void gpuvirt_gi_exit(void);
struct gpuvirt_mig *gpuvirt_mig_alloc(struct gpuvirt_gpu *gpu,
				      struct gpuvirt_mig_why *why);
void gpuvirt_mig_free(struct gpuvirt_mig *m);
int gpuvirt_mig_check_empty(struct gpuvirt_gpu *gpu,
			    struct gpuvirt_mig_why *why);
int gpuvirt_gi_create(struct gpuvirt_gpu *gpu, unsigned int profile,
		      int start, struct gpuvirt_mig_why *why);
int gpuvirt_gi_destroy(struct gpuvirt_gpu *gpu, unsigned int id,
		       struct gpuvirt_mig_why *why);
void gpuvirt_mig_gpu_del(struct gpuvirt_gpu *gpu);
bool gpuvirt_dev_is_gi(const struct device *dev);
struct gpuvirt_gi *gpuvirt_gi_from_dev(struct device *dev);
const char *gpuvirt_gi_profile_name(const struct gpuvirt_gi *gi);
unsigned int gpuvirt_gi_vgpus(const struct gpuvirt_gi *gi);

#endif /* GPUVIRT_GI_H */
