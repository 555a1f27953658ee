/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The planner of "gpuvirtctl apply" and "assert": from a configuration
 * (config.h) and the state of the host (struct state), the steps that take
 * the host to what the file says, and the conflicts that refuse it.
 *
 * The planner does no I/O. apply.c reads everything it may need into
 * struct state first: the netlink dumps of GPUs, schedulers and vGPUs, the
 * MIG state of the file's GPUs, the kernel's answer to each vGPU type the
 * file asks of an existing GPU, what the passthrough preflight finds for
 * each "passthrough" entry, and the other stacks' sysfs. What could not be
 * read is recorded as an error there, and the planner reports it as a
 * conflict of the line that needed it. The unit tests (selftests/unit/
 * test_plan.c) build a state by hand and check the plan.
 */
#ifndef GPUVIRTCTL_PLAN_H
#define GPUVIRTCTL_PLAN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apply_stacks.h"
#include "config.h"
#include "mig.h"
#include "pt.h"
#include "units.h"

#define PLAN_NAME_LEN	64

/* The state ----------------------------------------------------------------- */

struct cur_gpu {
	uint32_t id;
	char name[PLAN_NAME_LEN];
	char model[PLAN_NAME_LEN];
	char backend[PLAN_NAME_LEN];
	uint64_t vram;
	uint32_t engines;
	bool has_sched;
	uint32_t policy, timeslice_us;
	int vgpu_mode;		/* enum config_vgpu_mode; -1 if not reported */
	int vgpu_model;		/* enum config_vgpu_model; -1 if not reported */
	int num_vfs, max_vfs;	/* -1 if not reported */
	char dev[PLAN_NAME_LEN];	/* its PCI function: "8000:00:00.0" */
	/* Read for the GPUs of the file only: where its VFs are (-1: not) */
	int vf_offset, vf_stride;
	/* Read for the GPUs of the file only. */
	bool has_mig;
	struct mig_gpu mig;
};

struct cur_vgpu {
	char uuid[UNITS_UUID_LEN];
	char vf[CONFIG_BDF_LEN];	/* the VF it is made on, or "" */
	uint32_t gpu;
	char type[PLAN_NAME_LEN];
	uint32_t weight, min_pct, max_pct;
	bool has_gi;
	uint32_t gi;
};

/* Does GPU @gpu offer vGPU type @type? The kernel's answer, 0 or -errno. */
struct cur_type {
	uint32_t gpu;
	char type[PLAN_NAME_LEN];
	int err;
};

/* What the passthrough preflight finds for one "passthrough" entry. */
struct cur_pt {
	int check;			/* pt_check(): 0, or -1 with @err */
	char err[PATH_MAX + 128];
	struct pt_report r;
	bool has_old;			/* a state file: it was assigned */
	struct pt_state old;
	char old_driver[PT_MAX_MEMBERS][PT_NAME_LEN];	/* of old.m[] now */
	bool rule;			/* the udev rule of a persistent one */
	bool driver_loaded;
	char driver_dir[PATH_MAX];	/* the driver's sysfs directory */
};

struct state {
	struct cur_gpu *gpus;
	size_t n_gpus;
	struct cur_vgpu *vgpus;
	size_t n_vgpus;
	struct cur_type *types;
	size_t n_types;
	struct cur_pt *pts;		/* one per entry of the file's */
	int pt_list_err;		/* --prune: reading the state files */
	struct pt_state *pt_list;	/* the assignments on record */
	size_t n_pt_list;
	int stk_err;			/* reading the other stacks */
	struct stk_host stk;
};

/* One more zeroed element at the end of *@arr_p; NULL without memory. */
void *plan_append(void *arr_p, size_t *n, size_t size);

struct cur_gpu *state_gpu(const struct state *st, uint32_t id);
const struct cur_vgpu *state_vgpu(const struct state *st, const char *uuid);
const struct cur_vgpu *state_vgpu_vf(const struct state *st, const char *vf);
/* The vGPU that is entry @v of the file, if it exists. */
const struct cur_vgpu *state_vgpu_of(const struct state *st,
				     const struct config_vgpu *v);
const struct cur_type *state_type(const struct state *st, uint32_t gpu,
				  const char *type);
void state_free(struct state *st);

/* The plan ------------------------------------------------------------------ */

enum step_kind {
	STEP_SIM_ADD,
	STEP_VGPU_DEL,
	STEP_MIG_MODE,
	STEP_GI_DEL,
	STEP_GI_ADD,
	STEP_MODE,
	STEP_SCHED,
	STEP_VGPU_SET,
	STEP_VGPU_ADD,
	STEP_PT_DEL,
	STEP_PT_ADD,
	STEP_STK,		/* another stack's vGPU: apply_stacks.c */
	STEP_MODEL,		/* the vGPU model, mdev or sriov */
	STEP_VFS,		/* the VFs of a GPU in the sriov model */
	STEP_KINDS
};

/* What a step sets, of struct vals. */
#define SET_POLICY	0x01
#define SET_TIMESLICE	0x02
#define SET_WEIGHT	0x04
#define SET_MIN		0x08
#define SET_MAX		0x10
#define SET_MODE	0x20
#define SET_MODEL	0x40
#define SET_VFS		0x80
#define SET_PARAMS	(SET_WEIGHT | SET_MIN | SET_MAX)

struct vals {
	uint32_t policy, timeslice_us;
	uint32_t weight, min_pct, max_pct;
	uint32_t mode;		/* enum config_vgpu_mode */
	uint32_t model;		/* enum config_vgpu_model */
	uint32_t vfs;
	bool mig;		/* MIG mode */
};

struct step {
	enum step_kind kind;
	uint32_t gpu;
	const struct config_sim *sim;		/* STEP_SIM_ADD */
	char uuid[UNITS_UUID_LEN];		/* vGPU steps; "" for a new VF's */
	char vf[CONFIG_BDF_LEN];		/* and its VF, or "" */
	char type[PLAN_NAME_LEN];
	unsigned int mask;			/* SET_* */
	struct vals want, old;
	bool on_gi;				/* STEP_VGPU_ADD on GI @gi */
	uint32_t gi;				/* and the GI steps */
	char profile[GPUVIRT_MIG_NAME_MAX];	/* GI steps */
	uint32_t start, slots;
	struct step_pt {			/* STEP_PT_* */
		char device[PT_BDF_LEN];
		char driver[PT_NAME_LEN];
		bool force, only, persistent;
	} pt;
	const struct stk_action *act;		/* STEP_STK */
	bool wait_vfs;				/* STEP_VFS: vGPUs on them
						 * follow: wait for their
						 * files (stk_wait_vfs()) */
};

struct plan {
	struct step *steps;
	size_t n_steps;
	char **conflicts;		/* "FILE:LINE: message" */
	size_t n_conflicts;
	struct stk_plan sp;		/* what the STEP_STK steps point to */
	bool oom;
};

/*
 * Plan @cfg, parsed from the file named @file, against @st. With @prune,
 * what the file does not list goes. The plan is empty of conflicts when
 * apply may run it; @pl->oom says that memory ran out (the plan is then
 * incomplete). Free it with plan_free() either way.
 */
void plan_build(const char *file, const struct config *cfg,
		const struct state *st, bool prune, struct plan *pl);
void plan_free(struct plan *pl);

/* The driver a "passthrough" entry names. */
const char *pt_driver_name(uint32_t driver);

#endif /* GPUVIRTCTL_PLAN_H */
