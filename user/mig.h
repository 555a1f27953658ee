/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MIG on the userspace side, shared by the mig object (mig.c) and by the
 * declarative configuration (apply.c): a GPU's MIG state as netlink
 * reports it, its GI profiles computed with the kernel's own pure MIG
 * logic (kernel/core/mig.c, linked into gpuvirtctl), the wanted GIs of a
 * command line or file, and the netlink requests that change it.
 *
 * The profile table is the kernel's: gpuvirtctl builds it with
 * gpuvirt_mig_table_build() from the model, VRAM and engines that gpu-get
 * reports, as gi.c does when the GPU enters MIG mode, so the names, the
 * placements and the planner's answers are the kernel's.
 */
#ifndef GPUVIRTCTL_MIG_H
#define GPUVIRTCTL_MIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/mig.h"
#include "gpuvirtctl.h"

#define MIG_NAME_LEN	64

/* One GI as gi-get reports it. */
struct mig_gi {
	char profile[GPUVIRT_MIG_NAME_MAX];
	char vgpu_type[GPUVIRT_MIG_VGPU_NAME_MAX];
	uint32_t start, slots, slices, vgpus;
	uint64_t engines, vram_offset, vram_size, busy_ns, idle_ns;
};

/* A GPU, its profiles and its GIs. */
struct mig_gpu {
	uint32_t id;
	char name[MIG_NAME_LEN];
	char model[MIG_NAME_LEN];
	uint64_t vram;
	uint32_t engines;
	bool mig;			/* in MIG mode */
	int table_err;			/* 0, or -errno: no MIG profiles */
	struct gpuvirt_mig_table table;
	struct gpuvirt_mig_layout layout;	/* the GIs, by id */
	uint8_t busy;			/* bit n: GI n has a vGPU */
	struct mig_gi gi[GPUVIRT_MIG_GIS_MAX];
};

/*
 * The profiles of a GPU of @model ("custom" or a catalogue name) with
 * @vram bytes and @engines engines, as the kernel computes them when the
 * GPU enters MIG mode. Returns 0 or -EOPNOTSUPP (no profiles).
 */
int mig_table(const char *model, uint64_t vram, uint32_t engines,
	      struct gpuvirt_mig_table *t);

/* Why a GPU has no profiles, for messages: "it needs ...". */
const char *mig_table_why(const struct mig_gpu *g);

/*
 * Read GPU @id (gpu-get) and its GIs (gi-get dump). Returns an exit
 * status, having reported a failure: a GPU that does not exist is named
 * by the keyword "gpu".
 */
int mig_gpu_read(struct ctx *ctx, uint32_t id, struct mig_gpu *g);

/*
 * Add the GIs of @word, "PROFILE" or "PROFILExCOUNT" (COUNT 1 to 7), to
 * @want (a count per profile of @t). Returns 0, or -1 with a message
 * naming the bad part in @err.
 */
int mig_want_add(const struct gpuvirt_mig_table *t, const char *word,
		 unsigned int *want, char *err, size_t errlen);

/* "1g.18gb, 1g.18gb+me, ..." */
void mig_profile_list(const struct gpuvirt_mig_table *t, char *buf,
		      size_t len);

/*
 * The requests, each reporting a refusal with the kernel's message.
 * mig_gi_new() stores the new GI's id in @id. They return 0 or -1.
 */
int mig_mode_set(struct ctx *ctx, uint32_t gpu, bool on);
int mig_gi_new(struct ctx *ctx, uint32_t gpu, const char *profile,
	       unsigned int start, uint32_t *id);
int mig_gi_del(struct ctx *ctx, uint32_t gpu, uint32_t id);

#endif /* GPUVIRTCTL_MIG_H */
