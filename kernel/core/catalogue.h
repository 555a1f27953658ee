/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The GPU model catalogue. Pure logic: no kernel-only calls, so that the
 * unit tests can build it in userspace.
 */
#ifndef GPUVIRT_CATALOGUE_H
#define GPUVIRT_CATALOGUE_H

#include "pure.h"

#define GPUVIRT_MODEL_NAME_MAX	24

/**
 * struct gpuvirt_model - one catalogue entry
 * @name: model name as admins write it, e.g. "h200-141gb"
 * @profile_prefix: GPU part of vGPU type names, e.g. "H200" in "H200-35C"
 * @vram_size: framebuffer size in bytes
 * @engines: execution engines (compute slices) the GPU has
 * @sms: streaming multiprocessors, informational
 * @mig_capable: the model can be cut into MIG GPU instances
 */
struct gpuvirt_model {
	const char *name;
	const char *profile_prefix;
	u64 vram_size;
	u32 engines;
	u32 sms;
	bool mig_capable;
};

/* Name of the catalogue's custom model, whose size the backend supplies. */
#define GPUVIRT_MODEL_CUSTOM	"custom"

/* Limits for custom models: room for a 1 GiB vGPU, at most 1 TiB. */
#define GPUVIRT_CUSTOM_VRAM_MIN	(1024 * (u64)SZ_1M)
#define GPUVIRT_CUSTOM_VRAM_MAX	(1024 * (u64)SZ_1G)
#define GPUVIRT_ENGINES_MAX	64

const struct gpuvirt_model *gpuvirt_catalogue_find(const char *name);
const struct gpuvirt_model *gpuvirt_catalogue_get(unsigned int idx);
unsigned int gpuvirt_catalogue_count(void);

#endif /* GPUVIRT_CATALOGUE_H */
