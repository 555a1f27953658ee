// SPDX-License-Identifier: GPL-2.0-only
/*
 * GPU model catalogue: the physical GPUs a backend can claim to be, with
 * the sizes that the vGPU profile and MIG tables are derived from.
 *
 * Pure logic: built into gpuvirt.ko and into the userspace unit tests.
 */
#include "catalogue.h"

static const struct gpuvirt_model gpuvirt_models[] = {
	{
		.name = "a100-40gb",
		.profile_prefix = "A100",
		.vram_size = 40 * (u64)SZ_1G,
		.engines = 7,
		.sms = 108,
		.mig_capable = true,
	},
	{
		.name = "a100-80gb",
		.profile_prefix = "A100D",
		.vram_size = 80 * (u64)SZ_1G,
		.engines = 7,
		.sms = 108,
		.mig_capable = true,
	},
	{
		.name = "h100-80gb",
		.profile_prefix = "H100",
		.vram_size = 80 * (u64)SZ_1G,
		.engines = 7,
		.sms = 132,
		.mig_capable = true,
	},
	{
		.name = "h200-141gb",
		.profile_prefix = "H200",
		.vram_size = 141 * (u64)SZ_1G,
		.engines = 7,
		.sms = 132,
		.mig_capable = true,
	},
};

/**
 * gpuvirt_catalogue_find() - look a model up by name
 * @name: model name, matched exactly
 *
 * Return: the model, or NULL when the catalogue has no such name. The custom
 * model is not in the table: its sizes come from the backend.
 */
const struct gpuvirt_model *gpuvirt_catalogue_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gpuvirt_models); i++)
		if (!strcmp(gpuvirt_models[i].name, name))
			return &gpuvirt_models[i];
	return NULL;
}

/**
 * gpuvirt_catalogue_get() - model by index, for listing the catalogue
 * @idx: index, from 0 to gpuvirt_catalogue_count() - 1
 *
 * Return: the model, or NULL past the end.
 */
const struct gpuvirt_model *gpuvirt_catalogue_get(unsigned int idx)
{
	return idx < ARRAY_SIZE(gpuvirt_models) ? &gpuvirt_models[idx] : NULL;
}

unsigned int gpuvirt_catalogue_count(void)
{
	return ARRAY_SIZE(gpuvirt_models);
}
