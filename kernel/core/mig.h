/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MIG GPU instances (GIs): the profiles of a GPU, where each may be placed,
 * and a planner that finds a partition for a wanted set of GIs. Pure logic:
 * no locks, no allocation, no kernel-only calls; built into gpuvirt.ko and
 * into the userspace unit tests (selftests/unit/test_mig.c).
 *
 * The geometry. A GPU in MIG mode has two axes: its VRAM is cut into 8
 * memory slots and its compute into 7 slices. A GI placed at start s takes
 * the memory slots [s, s + slots) and the compute slices [s, s + slices)
 * of its profile. Every legal start keeps both ranges inside their axis,
 * and since no profile has more slices than slots, the compute range of a
 * GI lies under its memory range. Two GIs share no memory slot and no
 * compute slice; a GPU holds at most 7 GIs, and at most a profile's max
 * count of each profile. Nothing is lent between GIs.
 *
 * The profiles, NVIDIA's for A100, H100 and H200, in table order (the index
 * of a profile in struct gpuvirt_mig_table):
 *
 *   shape     slices slots max  starts   a100-40gb  a100-80gb, h200-141gb
 *                                                   h100-80gb
 *   1g        1      1     7    0-6      1g.5gb     1g.10gb    1g.18gb
 *   1g+me     1      1     1    0-6      1g.5gb+me  1g.10gb+me 1g.18gb+me
 *   1g, wide  1      2     4    0,2,4,6  1g.10gb    1g.20gb    1g.35gb
 *   2g        2      2     3    0,2,4    2g.10gb    2g.20gb    2g.35gb
 *   3g        3      4     2    0,4      3g.20gb    3g.40gb    3g.71gb
 *   4g        4      4     1    0        4g.20gb    4g.40gb    4g.71gb
 *   7g        7      8     1    0        7g.40gb    7g.80gb    7g.141gb
 *
 * "+me" is the one 1g GI that gets the media engines (decoders, JPEG, OFA).
 * A GI's memory is slots x (VRAM / 8).
 *
 * Other GPUs (custom GPUs, and a MIG-capable catalogue model without a
 * table of its own) get the same seven shapes, with:
 *  - a slot of VRAM / 8, rounded down to a whole MiB;
 *  - names <slices>g.<GB>gb[+me], GB being slots x VRAM / 8 in GiB rounded
 *    to the nearest whole number, halves up. This rule gives exactly the
 *    names of the table above (141 / 8 = 17.6 -> 18, 141 / 2 = 70.5 -> 71);
 *  - MIG only with at least 8 GiB of VRAM, so that every slot holds at
 *    least 1 GiB (no name reads "0gb", and no two names are the same), and
 *    at least 7 engines, one per compute slice. Smaller GPUs have no
 *    profiles (-EOPNOTSUPP).
 *
 * MIG-backed vGPU types map 1:1 to the profiles: <PREFIX>-<slices>-<GB>C,
 * with "CME" for the +me profile, e.g. "H200-3-71C", "A100-1-5C",
 * "A100-1-5CME"; PREFIX is the model's profile prefix ("CUSTOM" for a
 * custom GPU). A type allows as many instances as its profile allows GIs
 * (struct gpuvirt_mig_profile.max): one vGPU on each GI of the profile.
 *
 * Adding a GI (gpuvirt_mig_gi_add()) with a start checks that start; with
 * GPUVIRT_MIG_START_ANY it takes the lowest legal start that is free on
 * both axes. A GI gets the lowest free id, 0 to 6. A refusal changes
 * nothing and fills a struct gpuvirt_mig_why that names the constraint
 * and, where there is one, the GI in the way.
 *
 * The planner (gpuvirt_mig_plan()) takes the GPU's current layout, a mask
 * of busy GIs that must stay where they are, and the wanted GIs as a count
 * per profile (the whole wanted partition, busy GIs included). It returns
 * the GIs to destroy and the GIs to create, in order, or says why there is
 * no such plan. Guarantees:
 *  - a plan exists if and only if some placement of the wanted GIs keeps
 *    every busy GI where it is;
 *  - among such plans it destroys the fewest idle GIs (idle GIs already
 *    wanted stay where they are when they can); on a tie it keeps the set
 *    of GIs whose id mask is the smallest number, that is it destroys the
 *    highest ids;
 *  - creating the GIs in the plan's order, each at its start, with
 *    gpuvirt_mig_gi_add() after the destroys succeeds at every step and
 *    gives the ids the plan names;
 *  - the output depends only on the input. The GIs to create are placed
 *    largest first (most slots, then most slices, then table order), each
 *    at its lowest start that still lets the rest fit.
 * The search is a backtracking over the starts of at most 7 GIs on 8 slots,
 * GIs of one profile taking increasing starts; for each set of idle GIs
 * kept (at most 128 sets) it runs once. selftests/unit/test_mig.c checks it
 * against a brute force over every wanted set of every model.
 */
#ifndef GPUVIRT_MIG_H
#define GPUVIRT_MIG_H

#include "pure.h"
#include "catalogue.h"

#define GPUVIRT_MIG_SLOTS		8	/* memory axis */
#define GPUVIRT_MIG_SLICES		7	/* compute axis */
#define GPUVIRT_MIG_GIS_MAX		7	/* GIs on one GPU */
#define GPUVIRT_MIG_PROFILES		7	/* profiles of one GPU */
/* Longest names: "1g.128gb+me", "7g.1024gb", "CUSTOM-7-1024C". */
#define GPUVIRT_MIG_NAME_MAX		16
#define GPUVIRT_MIG_VGPU_NAME_MAX	24
#define GPUVIRT_MIG_WHY_MAX		128
/* Smallest VRAM of a GPU without a table of its own: 1 GiB per slot. */
#define GPUVIRT_MIG_VRAM_MIN		(GPUVIRT_MIG_SLOTS * (u64)SZ_1G)
/* A start for gpuvirt_mig_gi_add(): the lowest legal free one. */
#define GPUVIRT_MIG_START_ANY		(-1)

/**
 * struct gpuvirt_mig_profile - one GI profile of a GPU
 * @name: e.g. "3g.71gb"
 * @vgpu_name: its MIG-backed vGPU type, e.g. "H200-3-71C"
 * @slices: compute slices, of GPUVIRT_MIG_SLICES
 * @slots: memory slots, of GPUVIRT_MIG_SLOTS: the width of a placement
 * @max: most GIs of this profile on one GPU; also the max instances of
 *	its vGPU type
 * @starts: legal starts, bit n set when a GI may start at memory slot n
 * @media: the profile has the media engines ("+me")
 * @gb: the GB figure in the names
 * @mem_size: VRAM of one GI, in bytes
 */
struct gpuvirt_mig_profile {
	char name[GPUVIRT_MIG_NAME_MAX];
	char vgpu_name[GPUVIRT_MIG_VGPU_NAME_MAX];
	u8 slices;
	u8 slots;
	u8 max;
	u8 starts;
	bool media;
	u32 gb;
	u64 mem_size;
};

/**
 * struct gpuvirt_mig_table - the GI profiles of a GPU
 * @slot_size: one memory slot, in bytes
 * @count: profiles in @profile
 * @profile: the profiles, in the order of the table in the file comment
 */
struct gpuvirt_mig_table {
	u64 slot_size;
	unsigned int count;
	struct gpuvirt_mig_profile profile[GPUVIRT_MIG_PROFILES];
};

/**
 * struct gpuvirt_mig_gi - one GI of a layout
 * @used: the id is taken
 * @profile: index in the table
 * @start: first memory slot
 */
struct gpuvirt_mig_gi {
	bool used;
	u8 profile;
	u8 start;
};

/**
 * struct gpuvirt_mig_layout - the GIs of a GPU, indexed by GI id
 * @gi: the GIs
 * @nr: GIs in use
 */
struct gpuvirt_mig_layout {
	struct gpuvirt_mig_gi gi[GPUVIRT_MIG_GIS_MAX];
	unsigned int nr;
};

/**
 * enum gpuvirt_mig_reason - why a GI or a plan was refused
 * @GPUVIRT_MIG_OK: not refused
 * @GPUVIRT_MIG_ERR_PROFILE: no such profile (-EINVAL)
 * @GPUVIRT_MIG_ERR_START: not a legal start of the profile (-EINVAL)
 * @GPUVIRT_MIG_ERR_GI: no such GI (-ENOENT), or a busy GI that does not
 *	exist (-EINVAL)
 * @GPUVIRT_MIG_ERR_GIS: the GPU would hold more than 7 GIs (-ENOSPC)
 * @GPUVIRT_MIG_ERR_MAX: more than the profile's max count (-ENOSPC)
 * @GPUVIRT_MIG_ERR_MEMORY: a memory slot is taken by another GI (-ENOSPC)
 * @GPUVIRT_MIG_ERR_COMPUTE: a compute slice is taken by another GI
 *	(-ENOSPC)
 * @GPUVIRT_MIG_ERR_NO_START: no legal start of the profile is free
 *	(-ENOSPC)
 * @GPUVIRT_MIG_ERR_SLICES: the wanted GIs need more than 7 compute slices
 *	(-ENOSPC)
 * @GPUVIRT_MIG_ERR_SLOTS: the wanted GIs need more than 8 memory slots
 *	(-ENOSPC)
 * @GPUVIRT_MIG_ERR_FRAGMENT: the wanted GIs pass every count but no
 *	placement holds them all (-ENOSPC)
 * @GPUVIRT_MIG_ERR_BUSY: a busy GI is not in the wanted set (-EBUSY)
 * @GPUVIRT_MIG_ERR_BUSY_PLACE: the wanted GIs fit an empty GPU, but not
 *	around the busy GIs (-EBUSY)
 */
enum gpuvirt_mig_reason {
	GPUVIRT_MIG_OK,
	GPUVIRT_MIG_ERR_PROFILE,
	GPUVIRT_MIG_ERR_START,
	GPUVIRT_MIG_ERR_GI,
	GPUVIRT_MIG_ERR_GIS,
	GPUVIRT_MIG_ERR_MAX,
	GPUVIRT_MIG_ERR_MEMORY,
	GPUVIRT_MIG_ERR_COMPUTE,
	GPUVIRT_MIG_ERR_NO_START,
	GPUVIRT_MIG_ERR_SLICES,
	GPUVIRT_MIG_ERR_SLOTS,
	GPUVIRT_MIG_ERR_FRAGMENT,
	GPUVIRT_MIG_ERR_BUSY,
	GPUVIRT_MIG_ERR_BUSY_PLACE,
};

/**
 * struct gpuvirt_mig_why - a refusal, for the caller's error message
 * @reason: what refused it
 * @gi: the GI in the way (or named in @msg), -1 when none
 * @profile: the profile concerned, -1 when none
 * @msg: one line for people, e.g. "memory slots 4-7 are taken by GI 2
 *	(3g.71gb)"; empty when not refused
 */
struct gpuvirt_mig_why {
	enum gpuvirt_mig_reason reason;
	int gi;
	int profile;
	char msg[GPUVIRT_MIG_WHY_MAX];
};

/**
 * struct gpuvirt_mig_create - one GI a plan creates
 * @profile: index in the table
 * @start: first memory slot
 * @gi: the id gpuvirt_mig_gi_add() gives it in the plan's order
 */
struct gpuvirt_mig_create {
	u8 profile;
	u8 start;
	u8 gi;
};

/**
 * struct gpuvirt_mig_plan - how to go from one layout to another
 * @nr_destroy: entries in @destroy
 * @destroy: ids of the idle GIs to destroy first, in increasing order
 * @nr_create: entries in @create
 * @create: then the GIs to create, in this order
 * @layout: the layout once done
 */
struct gpuvirt_mig_plan {
	unsigned int nr_destroy;
	u8 destroy[GPUVIRT_MIG_GIS_MAX];
	unsigned int nr_create;
	struct gpuvirt_mig_create create[GPUVIRT_MIG_GIS_MAX];
	struct gpuvirt_mig_layout layout;
};

int gpuvirt_mig_table_build(const struct gpuvirt_model *model, u64 vram_size,
			    u32 engines, struct gpuvirt_mig_table *t);
int gpuvirt_mig_table_find(const char *model_name, struct gpuvirt_mig_table *t);
int gpuvirt_mig_profile_find(const struct gpuvirt_mig_table *t,
			     const char *name);
int gpuvirt_mig_vgpu_find(const struct gpuvirt_mig_table *t,
			  const char *vgpu_name);

void gpuvirt_mig_layout_init(struct gpuvirt_mig_layout *l);
int gpuvirt_mig_gi_check(const struct gpuvirt_mig_table *t,
			 const struct gpuvirt_mig_layout *l,
			 unsigned int profile, int start,
			 struct gpuvirt_mig_why *why);
int gpuvirt_mig_gi_add(const struct gpuvirt_mig_table *t,
		       struct gpuvirt_mig_layout *l, unsigned int profile,
		       int start, struct gpuvirt_mig_why *why);
int gpuvirt_mig_gi_remove(struct gpuvirt_mig_layout *l, unsigned int gi);

int gpuvirt_mig_plan(const struct gpuvirt_mig_table *t,
		     const struct gpuvirt_mig_layout *cur, u8 busy,
		     const unsigned int *want, struct gpuvirt_mig_plan *plan,
		     struct gpuvirt_mig_why *why);

#endif /* GPUVIRT_MIG_H */
