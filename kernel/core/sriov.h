/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sriov vGPU model (sriov.c).
 */
#ifndef GPUVIRT_SRIOV_H
#define GPUVIRT_SRIOV_H

#include "gpuvirt.h"

struct gpuvirt_vf;
struct gpuvirt_vgpu;

/**
 * struct gpuvirt_sriov - a GPU's SR-IOV state, for a GPU that has SR-IOV
 * @on: the GPU is in the sriov vGPU model; written under the GPU's lock
 *	and the registry lock, read under either
 * @changing: VFs are being enabled or disabled; under the GPU's lock
 * @closing: the GPU is going away: no more VFs; under the GPU's lock
 * @nr_vfs: VFs enabled; under the GPU's lock
 * @vf: the VFs bound to the backend's VF driver, by VF index, @max_vfs of
 *	struct gpuvirt_gpu; under the GPU's lock
 */
struct gpuvirt_sriov {
	bool on;
	bool changing;
	bool closing;
	unsigned int nr_vfs;
	struct gpuvirt_vf *vf[];
};

bool gpuvirt_gpu_sriov(struct gpuvirt_gpu *gpu);
int gpuvirt_sriov_gpu_add(struct gpuvirt_gpu *gpu);
void gpuvirt_sriov_gpu_close(struct gpuvirt_gpu *gpu);
void gpuvirt_sriov_gpu_del(struct gpuvirt_gpu *gpu);
int gpuvirt_sriov_model_check(struct gpuvirt_gpu *gpu, bool sriov,
			      struct gpuvirt_gpu_why *why);
void gpuvirt_sriov_model_set(struct gpuvirt_gpu *gpu, bool sriov);
const char *gpuvirt_vf_name(const struct gpuvirt_vgpu *vgpu);

#endif /* GPUVIRT_SRIOV_H */
