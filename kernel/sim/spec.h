/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parser for the sim bus control files. Pure logic, also built into the
 * userspace unit tests.
 */
#ifndef GPUVIRT_SIM_SPEC_H
#define GPUVIRT_SIM_SPEC_H

#include "pure.h"
#include "core/catalogue.h"

/**
 * struct gpuvirt_sim_spec - a parsed new_device request
 * @id: GPU id
 * @model: model name; "custom" for a custom GPU
 * @vram_size: custom GPUs only: framebuffer size in bytes
 * @engines: custom GPUs only: engine count
 */
struct gpuvirt_sim_spec {
	u32 id;
	char model[GPUVIRT_MODEL_NAME_MAX];
	u64 vram_size;
	u32 engines;
};

int gpuvirt_sim_parse_new(const char *buf, size_t len,
			  struct gpuvirt_sim_spec *spec, const char **why);
int gpuvirt_sim_parse_del(const char *buf, size_t len, u32 *id,
			  const char **why);

#endif /* GPUVIRT_SIM_SPEC_H */
