// SPDX-License-Identifier: GPL-2.0-only
/*
 * The declarative configuration against the system:
 *
 *	gpuvirtctl apply -f FILE [ --dry-run ] [ --prune ]
 *	gpuvirtctl assert -f FILE
 *
 * Both parse FILE (config.c), read the state (netlink gpu, sched and vgpu
 * dumps; a GPU's vgpu_mode in sysfs) and compute a plan: the steps that take
 * the system to what the file says, in this order:
 *
 *	+ simulated GPUs that are missing		new_device
 *	then per GPU of the file:
 *	- vGPUs it does not list (--prune only)	mdev remove
 *	~ MIG mode on					gpu-set
 *	- GIs in the way of the "mig" section		gi-del
 *	+ GIs of the "mig" section			gi-new
 *	  (or: - every GI, ~ MIG mode off)
 *	~ vgpu-mode					sysfs vgpu_mode
 *	~ the scheduler					sched-set
 *	~ weight, min-pct, max-pct of vGPUs, those	vgpu-set
 *	  that lower their minimum first
 *	+ missing vGPUs					mdev create, vgpu-set
 *	then the other stacks' devices (apply_stacks.c):
 *	- their vGPUs it does not list (--prune only)	remove, or VF type 0
 *	+ their missing vGPUs				create, or VF type
 *	then passthrough (pt.c):
 *	- assignments it does not list (--prune only)	pt release
 *	  per device of "passthrough" not assigned as it says:
 *	- its group's assignment, if another one	pt release
 *	+ its group to the driver			pt assign
 *
 * so that capacity and the minimums' 100 % are freed before they are used.
 * What the plan cannot do is a conflict, refused before anything changes:
 * a GPU that does not exist, a vGPU of another type or on another GPU than
 * the file says, a type the GPU does not offer, a mode change with vGPUs
 * left, a MIG layout that the planner (mig.h) cannot reach without moving
 * a GI that has a vGPU, a device whose group pt_check() refuses or whose
 * driver is not loaded, two devices of one IOMMU group. "apply" prints the
 * plan and runs it step by step; when a step fails, the steps done are
 * undone in reverse order, so that nothing is left half-applied. "assert"
 * prints the plan as the list of differences. Each kind of step is one
 * entry of step_ops[]: how it is shown, named, done and undone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <uapi/linux/gpuvirt.h>

#include "apply_stacks.h"
#include "config.h"
#include "gpuvirtctl.h"
#include "mig.h"
#include "nl.h"
#include "print.h"
#include "pt.h"
#include "sysfs.h"

#define SIM_BUS		"/sys/bus/gpuvirt_sim"
#define SIM_BACKEND	"gpuvirt_sim"
#define MDEV_BUS	"/sys/class/mdev_bus"
#define APPLY_LOCK	"/run/gpuvirtctl.lock"
#define FILE_MAX	(1 << 20)
#define NAME_LEN	64

/* The kernel's errors name attributes by the keys of the file. */
static const char *const vgpu_keywords[GPUVIRT_A_VGPU_MAX + 1] = {
	[GPUVIRT_A_VGPU_GPU_ID]		= "gpu",
};

static const struct nl_attr_names vgpu_names = VGPU_ATTR_NAMES(vgpu_keywords);

static const char *const sched_keywords[GPUVIRT_A_SCHED_MAX + 1] = {
	[GPUVIRT_A_SCHED_GPU_ID]	= "id",
};

static const struct nl_attr_names sched_names =
	SCHED_ATTR_NAMES(sched_keywords);

/* The state ----------------------------------------------------------------- */

struct cur_gpu {
	uint32_t id;
	char name[NAME_LEN];
	char model[NAME_LEN];
	char backend[NAME_LEN];
	uint64_t vram;
	uint32_t engines;
	bool has_sched;
	uint32_t policy, timeslice_us;
};

struct cur_vgpu {
	char uuid[UNITS_UUID_LEN];
	uint32_t gpu;
	char type[NAME_LEN];
	uint32_t weight, min_pct, max_pct;
	bool has_gi;
	uint32_t gi;
};

struct state {
	struct cur_gpu *gpus;
	size_t n_gpus;
	struct cur_vgpu *vgpus;
	size_t n_vgpus;
};

/* One more zeroed element at the end of *@arr; NULL without memory. */
static void *append(void *arr_p, size_t *n, size_t size)
{
	void **arr = arr_p;
	char *a = realloc(*arr, (*n + 1) * size);

	if (!a)
		return NULL;
	*arr = a;
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

static int state_gpu_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GPU_MAX + 1];
	struct state *st = data;
	struct cur_gpu *g;

	if (nl_parse(nlh, gpu_policy, GPUVIRT_A_GPU_MAX, tb) ||
	    !tb[GPUVIRT_A_GPU_ID] || !tb[GPUVIRT_A_GPU_NAME]) {
		err_print("malformed GPU message from the kernel");
		return -EINVAL;
	}
	g = append(&st->gpus, &st->n_gpus, sizeof(*g));
	if (!g) {
		err_print("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	g->id = mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ID]);
	nl_attr_strcpy(g->name, sizeof(g->name), tb[GPUVIRT_A_GPU_NAME]);
	nl_attr_strcpy(g->model, sizeof(g->model), tb[GPUVIRT_A_GPU_MODEL]);
	nl_attr_strcpy(g->backend, sizeof(g->backend),
		       tb[GPUVIRT_A_GPU_BACKEND]);
	if (tb[GPUVIRT_A_GPU_VRAM_SIZE])
		g->vram = mnl_attr_get_u64(tb[GPUVIRT_A_GPU_VRAM_SIZE]);
	if (tb[GPUVIRT_A_GPU_ENGINES])
		g->engines = mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ENGINES]);
	return 0;
}

static struct cur_gpu *state_gpu(const struct state *st, uint32_t id)
{
	size_t i;

	for (i = 0; i < st->n_gpus; i++)
		if (st->gpus[i].id == id)
			return &st->gpus[i];
	return NULL;
}

static int state_sched_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_SCHED_MAX + 1];
	struct state *st = data;
	struct cur_gpu *g;

	if (nl_parse(nlh, sched_policy, GPUVIRT_A_SCHED_MAX, tb) ||
	    !tb[GPUVIRT_A_SCHED_GPU_ID] || !tb[GPUVIRT_A_SCHED_POLICY] ||
	    !tb[GPUVIRT_A_SCHED_TIMESLICE_US]) {
		err_print("malformed scheduler message from the kernel");
		return -EINVAL;
	}
	/* The schedulers of GIs are not the GPU's (a file sets the GPU's). */
	if (tb[GPUVIRT_A_SCHED_GI_ID])
		return 0;
	g = state_gpu(st, mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_GPU_ID]));
	if (!g)
		return 0;	/* registered between the two dumps */
	g->has_sched = true;
	g->policy = mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_POLICY]);
	g->timeslice_us = mnl_attr_get_u32(tb[GPUVIRT_A_SCHED_TIMESLICE_US]);
	return 0;
}

static int state_vgpu_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_VGPU_MAX + 1];
	struct state *st = data;
	struct cur_vgpu *v;

	if (nl_parse(nlh, vgpu_policy, GPUVIRT_A_VGPU_MAX, tb) ||
	    !tb[GPUVIRT_A_VGPU_UUID] || !tb[GPUVIRT_A_VGPU_GPU_ID] ||
	    !tb[GPUVIRT_A_VGPU_TYPE] || !tb[GPUVIRT_A_VGPU_WEIGHT] ||
	    !tb[GPUVIRT_A_VGPU_MIN_PCT] || !tb[GPUVIRT_A_VGPU_MAX_PCT]) {
		err_print("malformed vGPU message from the kernel");
		return -EINVAL;
	}
	v = append(&st->vgpus, &st->n_vgpus, sizeof(*v));
	if (!v) {
		err_print("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	nl_attr_strcpy(v->uuid, sizeof(v->uuid), tb[GPUVIRT_A_VGPU_UUID]);
	v->gpu = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_GPU_ID]);
	nl_attr_strcpy(v->type, sizeof(v->type), tb[GPUVIRT_A_VGPU_TYPE]);
	v->weight = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_WEIGHT]);
	v->min_pct = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MIN_PCT]);
	v->max_pct = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_MAX_PCT]);
	v->has_gi = tb[GPUVIRT_A_VGPU_GI_ID];
	if (v->has_gi)
		v->gi = mnl_attr_get_u32(tb[GPUVIRT_A_VGPU_GI_ID]);
	return 0;
}

static const struct cur_vgpu *state_vgpu(const struct state *st,
					 const char *uuid)
{
	size_t i;

	for (i = 0; i < st->n_vgpus; i++)
		if (!strcmp(st->vgpus[i].uuid, uuid))
			return &st->vgpus[i];
	return NULL;
}

static int dump(struct ctx *ctx, uint8_t cmd, nl_msg_cb cb, void *data)
{
	nl_msg_start(ctx->nl, cmd, NLM_F_DUMP);
	if (nl_exchange(ctx->nl, cb, data)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, NULL);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* GPUs first: the scheduler dump fills in theirs. */
static int state_read(struct ctx *ctx, struct state *st)
{
	return dump(ctx, GPUVIRT_CMD_GPU_GET, state_gpu_cb, st) ||
	       dump(ctx, GPUVIRT_CMD_SCHED_GET, state_sched_cb, st) ||
	       dump(ctx, GPUVIRT_CMD_VGPU_GET, state_vgpu_cb, st) ?
	       EXIT_RUNTIME : EXIT_OK;
}

static void state_free(struct state *st)
{
	free(st->gpus);
	free(st->vgpus);
}

/* The vgpu_mode file of the GPU named @name; 0 or -errno. */
static int mode_path(const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, MDEV_BUS "/%s/gpuvirt/vgpu_mode", name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

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
	STEP_KINDS
};

/* What a step sets, of struct vals. */
#define SET_POLICY	0x01
#define SET_TIMESLICE	0x02
#define SET_WEIGHT	0x04
#define SET_MIN		0x08
#define SET_MAX		0x10
#define SET_MODE	0x20
#define SET_PARAMS	(SET_WEIGHT | SET_MIN | SET_MAX)

struct vals {
	uint32_t policy, timeslice_us;
	uint32_t weight, min_pct, max_pct;
	uint32_t mode;		/* enum config_vgpu_mode */
	bool mig;		/* MIG mode */
};

struct step {
	enum step_kind kind;
	uint32_t gpu;
	const struct config_sim *sim;		/* STEP_SIM_ADD */
	char uuid[UNITS_UUID_LEN];		/* vGPU steps */
	char type[NAME_LEN];
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
};

struct plan {
	struct step *steps;
	size_t n_steps;
	char **conflicts;
	size_t n_conflicts;
	bool oom;
};

static struct step *plan_step(struct plan *pl, enum step_kind kind,
			      uint32_t gpu)
{
	struct step *s = append(&pl->steps, &pl->n_steps, sizeof(*s));

	if (!s) {
		pl->oom = true;
		return NULL;
	}
	s->kind = kind;
	s->gpu = gpu;
	return s;
}

/* A conflict, "FILE:LINE: message". */
__attribute__((format(printf, 4, 5)))
static void conflict(struct plan *pl, const char *file, unsigned int line,
		     const char *fmt, ...)
{
	char msg[512], **c;
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "%s:%u: ", file, line);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	c = append(&pl->conflicts, &pl->n_conflicts, sizeof(*c));
	if (!c || !(*c = strdup(msg))) {
		if (c)
			pl->n_conflicts--;
		pl->oom = true;
	}
}

static void plan_free(struct plan *pl)
{
	size_t i;

	for (i = 0; i < pl->n_conflicts; i++)
		free(pl->conflicts[i]);
	free(pl->conflicts);
	free(pl->steps);
}

struct planner {
	struct ctx *ctx;
	const char *file;
	const struct config *cfg;
	const struct state *st;
	bool prune;
	struct plan *pl;
	struct stk_plan *sp;
};

static void plan_sims(struct planner *p)
{
	char have[32], want[32];
	size_t i;

	for (i = 0; i < p->cfg->n_sims; i++) {
		const struct config_sim *sim = &p->cfg->sims[i];
		const struct cur_gpu *g = state_gpu(p->st, sim->id);

		if (!g) {
			struct step *s = plan_step(p->pl, STEP_SIM_ADD,
						   sim->id);

			if (s)
				s->sim = sim;
		} else if (strcmp(g->backend, SIM_BACKEND)) {
			conflict(p->pl, p->file, sim->line,
				 "GPU %u exists and is not a simulated GPU (backend %s)",
				 sim->id, g->backend);
		} else if (strcmp(g->model, sim->model)) {
			conflict(p->pl, p->file, sim->line,
				 "simulated GPU %u exists with model %s, not %s",
				 sim->id, g->model, sim->model);
		} else if (!strcmp(sim->model, "custom") &&
			   (g->vram != sim->vram || g->engines != sim->engines)) {
			units_format_size(have, sizeof(have), g->vram);
			units_format_size(want, sizeof(want), sim->vram);
			conflict(p->pl, p->file, sim->line,
				 "simulated GPU %u exists with vram %s and %u engines, not %s and %u",
				 sim->id, have, g->engines, want, sim->engines);
		}
	}
}

/* Is the vGPU @uuid listed on any GPU of the file? */
static bool listed(const struct config *cfg, const char *uuid)
{
	size_t i;

	for (i = 0; i < cfg->n_gpus; i++)
		if (config_find_vgpu(&cfg->gpus[i], uuid))
			return true;
	return false;
}

/* --prune: the vGPUs of @gpu that the file lists nowhere; returns how many
 * vGPUs the GPU keeps. */
static size_t plan_prune(struct planner *p, const struct config_gpu *gpu)
{
	const struct cur_vgpu *v;
	struct step *s;
	size_t i, kept = 0;

	for (i = 0; i < p->st->n_vgpus; i++) {
		v = &p->st->vgpus[i];
		if (v->gpu != gpu->id)
			continue;
		if (!p->prune || listed(p->cfg, v->uuid)) {
			kept++;
			continue;
		}
		s = plan_step(p->pl, STEP_VGPU_DEL, gpu->id);
		if (!s)
			continue;
		memcpy(s->uuid, v->uuid, sizeof(s->uuid));
		snprintf(s->type, sizeof(s->type), "%s", v->type);
		s->mask = SET_PARAMS;
		s->old.weight = v->weight;
		s->old.min_pct = v->min_pct;
		s->old.max_pct = v->max_pct;
	}
	return kept;
}

/* MIG ----------------------------------------------------------------------- */

/* A GPU's MIG state once its mig steps are done, for its vGPUs. */
struct mig_after {
	bool bad;		/* reported: plan no vGPU on its GIs */
	bool on;		/* in MIG mode */
	bool changes;		/* the mode changes */
	struct mig_gpu g;	/* as it is now, with its profiles */
	struct gpuvirt_mig_layout layout;
	uint8_t taken;		/* GIs with a vGPU, or one planned */
};

static struct step *gi_step(struct planner *p, enum step_kind kind,
			    const struct mig_after *ma, unsigned int gi,
			    unsigned int profile, unsigned int start)
{
	const struct gpuvirt_mig_profile *pr = &ma->g.table.profile[profile];
	struct step *s = plan_step(p->pl, kind, ma->g.id);

	if (!s)
		return NULL;
	s->gi = gi;
	snprintf(s->profile, sizeof(s->profile), "%s", pr->name);
	s->start = start;
	s->slots = pr->slots;
	return s;
}

static void mig_mode_step(struct planner *p, const struct mig_after *ma,
			  bool on)
{
	struct step *s = plan_step(p->pl, STEP_MIG_MODE, ma->g.id);

	if (!s)
		return;
	s->want.mig = on;
	s->old.mig = !on;
}

/* The GPU's MIG state now: from the kernel, or for a GPU yet to be made. */
static int mig_now(struct planner *p, const struct config_gpu *gpu,
		   const struct cur_gpu *g, struct mig_after *ma)
{
	size_t i;

	memset(ma, 0, sizeof(*ma));
	if (g) {
		if (mig_gpu_read(p->ctx, gpu->id, &ma->g)) {
			conflict(p->pl, p->file, gpu->line,
				 "cannot read the MIG state of GPU %u", gpu->id);
			ma->bad = true;
			return -1;
		}
	} else {
		const struct config_sim *sim = config_find_sim(p->cfg, gpu->id);

		ma->g.id = gpu->id;
		snprintf(ma->g.model, sizeof(ma->g.model), "%s",
			 sim ? sim->model : "");
		ma->g.table_err = mig_table(ma->g.model, sim ? sim->vram : 0,
					    sim ? sim->engines : 0,
					    &ma->g.table);
		gpuvirt_mig_layout_init(&ma->g.layout);
	}
	ma->on = ma->g.mig;
	ma->layout = ma->g.layout;
	for (i = 0; i < p->st->n_vgpus; i++)
		if (p->st->vgpus[i].gpu == gpu->id && p->st->vgpus[i].has_gi &&
		    p->st->vgpus[i].gi < GPUVIRT_MIG_GIS_MAX)
			ma->taken |= (uint8_t)(1U << p->st->vgpus[i].gi);
	return 0;
}

/* "mig: mode: off": every GI goes (none may have a vGPU), then the mode. */
static void plan_mig_off(struct planner *p, const struct config_gpu *gpu,
			 struct mig_after *ma)
{
	unsigned int i;

	if (!ma->g.mig)
		return;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_gi *gi = &ma->layout.gi[i];

		if (!gi->used)
			continue;
		if (ma->g.busy & (1U << i)) {
			conflict(p->pl, p->file, gpu->mig.line,
				 "GPU %u: MIG mode off needs the GIs gone, and GI %u has a vGPU",
				 gpu->id, i);
			ma->bad = true;
			continue;
		}
		gi_step(p, STEP_GI_DEL, ma, i, gi->profile, gi->start);
	}
	mig_mode_step(p, ma, false);
	ma->on = false;
	ma->changes = true;
	gpuvirt_mig_layout_init(&ma->layout);
}

/*
 * The "mig" section of @gpu: its instances are the GPU's partition. The
 * planner keeps every GI with a vGPU where it is; without --prune the GIs
 * the file does not list stay too (their profiles are counted in).
 */
static void plan_mig(struct planner *p, const struct config_gpu *gpu,
		     const struct cur_gpu *g, size_t kept,
		     struct mig_after *ma)
{
	unsigned int want[GPUVIRT_MIG_PROFILES] = { 0 };
	unsigned int have[GPUVIRT_MIG_PROFILES] = { 0 };
	const struct config_mig *mig = &gpu->mig;
	struct gpuvirt_mig_plan plan;
	struct gpuvirt_mig_why why;
	char list[160];
	unsigned int i;

	if (mig_now(p, gpu, g, ma) || !mig->set)
		return;
	if (!mig->on) {
		plan_mig_off(p, gpu, ma);
		return;
	}
	if (ma->g.table_err) {
		conflict(p->pl, p->file, mig->line,
			 "GPU %u (%s) is not MIG capable: %s", gpu->id,
			 ma->g.model, mig_table_why(&ma->g));
		ma->bad = true;
		return;
	}
	for (i = 0; i < mig->n_gis; i++) {
		int prof = gpuvirt_mig_profile_find(&ma->g.table,
						    mig->gis[i].profile);

		if (prof < 0) {
			mig_profile_list(&ma->g.table, list, sizeof(list));
			conflict(p->pl, p->file, mig->gis[i].line,
				 "GPU %u (%s) has no GI profile %s (expected one of %s)",
				 gpu->id, ma->g.model, mig->gis[i].profile,
				 list);
			ma->bad = true;
			continue;
		}
		want[prof] += mig->gis[i].count;
	}
	if (ma->bad)
		return;
	if (!ma->g.mig && kept) {
		conflict(p->pl, p->file, mig->line,
			 "GPU %u: MIG mode can only be turned on without vGPUs, and it keeps %zu",
			 gpu->id, kept);
		ma->bad = true;
		return;
	}
	if (!p->prune) {
		for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++)
			if (ma->layout.gi[i].used)
				have[ma->layout.gi[i].profile]++;
		for (i = 0; i < GPUVIRT_MIG_PROFILES; i++)
			if (have[i] > want[i])
				want[i] = have[i];
	}
	if (gpuvirt_mig_plan(&ma->g.table, &ma->g.layout, ma->g.busy, want,
			     &plan, &why)) {
		conflict(p->pl, p->file, mig->line,
			 "GPU %u: no MIG layout holds these instances: %s",
			 gpu->id, why.msg);
		ma->bad = true;
		return;
	}
	if (!ma->g.mig) {
		mig_mode_step(p, ma, true);
		ma->changes = true;
	}
	for (i = 0; i < plan.nr_destroy; i++) {
		const struct gpuvirt_mig_gi *gi = &ma->layout.gi[plan.destroy[i]];

		gi_step(p, STEP_GI_DEL, ma, plan.destroy[i], gi->profile,
			gi->start);
	}
	for (i = 0; i < plan.nr_create; i++)
		gi_step(p, STEP_GI_ADD, ma, plan.create[i].gi,
			plan.create[i].profile, plan.create[i].start);
	ma->on = true;
	ma->layout = plan.layout;
}

/*
 * The GI for the new MIG-backed vGPU @v: the one it names, or the lowest
 * free GI of its type's profile once the mig steps are done. Returns its
 * id, or -1 having reported a conflict.
 */
static int mig_vgpu_gi(struct planner *p, const struct config_gpu *gpu,
		       const struct config_vgpu *v, struct mig_after *ma)
{
	int prof = ma->g.table_err ? -1 :
		   gpuvirt_mig_vgpu_find(&ma->g.table, v->type);
	const struct gpuvirt_mig_gi *gi;
	unsigned int i;

	if (prof < 0) {
		conflict(p->pl, p->file, v->line,
			 "GPU %u is in MIG mode and its GIs offer no vGPU type %s",
			 gpu->id, v->type);
		return -1;
	}
	if (v->has_gi) {
		gi = &ma->layout.gi[v->gi];
		if (!gi->used) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s is on GI %u, and GPU %u has no GI %u",
				 v->uuid, v->gi, gpu->id, v->gi);
			return -1;
		}
		if (gi->profile != prof) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s of type %s needs a GI of profile %s, and GI %u is %s",
				 v->uuid, v->type, ma->g.table.profile[prof].name,
				 v->gi, ma->g.table.profile[gi->profile].name);
			return -1;
		}
		if (ma->taken & (1U << v->gi)) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s is on GI %u, which has a vGPU already",
				 v->uuid, v->gi);
			return -1;
		}
		ma->taken |= (uint8_t)(1U << v->gi);
		return (int)v->gi;
	}
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		gi = &ma->layout.gi[i];
		if (gi->used && gi->profile == prof &&
		    !(ma->taken & (1U << i))) {
			ma->taken |= (uint8_t)(1U << i);
			return (int)i;
		}
	}
	conflict(p->pl, p->file, v->line,
		 "vGPU %s of type %s needs a GI of profile %s without a vGPU, and GPU %u has none",
		 v->uuid, v->type, ma->g.table.profile[prof].name, gpu->id);
	return -1;
}

/* The GPU's vgpu_mode now; -1 (reported as a conflict) if unreadable. */
static int read_mode(struct planner *p, const struct config_gpu *gpu,
		     const struct cur_gpu *g)
{
	char path[PATH_MAX], buf[32];
	int err;

	err = mode_path(g->name, path, sizeof(path));
	if (!err)
		err = sysfs_read_line(path, buf, sizeof(buf));
	if (err) {
		conflict(p->pl, p->file, gpu->line, "cannot read %s: %s", path,
			 strerror(-err));
		return -1;
	}
	if (!strcmp(buf, "mixed"))
		return CONFIG_VGPU_MODE_MIXED;
	if (!strcmp(buf, "homogeneous"))
		return CONFIG_VGPU_MODE_HOMOGENEOUS;
	conflict(p->pl, p->file, gpu->line, "%s reads \"%s\"", path, buf);
	return -1;
}

static void plan_mode(struct planner *p, const struct config_gpu *gpu,
		      const struct cur_gpu *g, size_t kept)
{
	struct step *s;
	int mode;

	if (gpu->vgpu_mode == CONFIG_VGPU_MODE_UNSET)
		return;
	/* A new simulated GPU starts homogeneous, as every GPU does. */
	mode = g ? read_mode(p, gpu, g) : CONFIG_VGPU_MODE_HOMOGENEOUS;
	if (mode < 0 || (uint32_t)mode == gpu->vgpu_mode)
		return;
	if (kept) {
		conflict(p->pl, p->file, gpu->line,
			 "GPU %u: vgpu-mode can only change while the GPU has no vGPUs, and it keeps %zu",
			 gpu->id, kept);
		return;
	}
	s = plan_step(p->pl, STEP_MODE, gpu->id);
	if (!s)
		return;
	s->mask = SET_MODE;
	s->want.mode = gpu->vgpu_mode;
	s->old.mode = (uint32_t)mode;
}

static void plan_sched(struct planner *p, const struct config_gpu *gpu,
		       const struct cur_gpu *g)
{
	/* A new GPU's scheduler: best-effort and the default slice. */
	struct vals old = { .policy = GPUVIRT_SCHED_POLICY_BEST_EFFORT };
	unsigned int mask = 0;
	struct step *s;

	if (g && !g->has_sched) {
		conflict(p->pl, p->file, gpu->line,
			 "the kernel reports no scheduler for GPU %u", gpu->id);
		return;
	}
	if (g) {
		old.policy = g->policy;
		old.timeslice_us = g->timeslice_us;
	}
	if (gpu->has_policy && gpu->policy != old.policy)
		mask |= SET_POLICY;
	if (gpu->has_timeslice && gpu->timeslice_us != old.timeslice_us)
		mask |= SET_TIMESLICE;
	if (!mask)
		return;
	s = plan_step(p->pl, STEP_SCHED, gpu->id);
	if (!s)
		return;
	s->mask = mask;
	s->old = old;
	s->want.policy = gpu->policy;
	s->want.timeslice_us = gpu->timeslice_us;
}

/* The settings of @v that differ from @cur; the mask of them. */
static unsigned int vgpu_diff(const struct config_vgpu *v,
			      const struct cur_vgpu *cur)
{
	unsigned int mask = 0;

	if (v->has_weight && v->weight != cur->weight)
		mask |= SET_WEIGHT;
	if (v->has_min && v->min_pct != cur->min_pct)
		mask |= SET_MIN;
	if (v->has_max && v->max_pct != cur->max_pct)
		mask |= SET_MAX;
	return mask;
}

static void vgpu_vals(const struct config_vgpu *v, struct vals *vals)
{
	vals->weight = v->weight;
	vals->min_pct = v->min_pct;
	vals->max_pct = v->max_pct;
}

/*
 * The vGPUs of the file that exist: their settings, in two passes so that
 * the minimums that go down do so before those that go up.
 */
static void plan_vgpu_sets(struct planner *p, const struct config_gpu *gpu)
{
	const struct config_vgpu *v;
	const struct cur_vgpu *cur;
	unsigned int mask, pass;
	bool lowers;
	struct step *s;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < gpu->n_vgpus; i++) {
			v = &gpu->vgpus[i];
			cur = state_vgpu(p->st, v->uuid);
			if (!cur || cur->gpu != gpu->id ||
			    strcmp(cur->type, v->type))
				continue;
			mask = vgpu_diff(v, cur);
			lowers = (mask & SET_MIN) && v->min_pct < cur->min_pct;
			if (!mask || lowers != !pass)
				continue;
			s = plan_step(p->pl, STEP_VGPU_SET, gpu->id);
			if (!s)
				return;
			memcpy(s->uuid, v->uuid, sizeof(s->uuid));
			snprintf(s->type, sizeof(s->type), "%s", v->type);
			s->mask = mask;
			vgpu_vals(v, &s->want);
			s->old.weight = cur->weight;
			s->old.min_pct = cur->min_pct;
			s->old.max_pct = cur->max_pct;
		}
	}
}

/* Does GPU @gpu offer the type @type? The kernel answers: 0 or -errno. */
static int type_get(struct ctx *ctx, uint32_t gpu, const char *type)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_TYPE_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_TYPE_GPU_ID, gpu);
	mnl_attr_put_strz(nlh, GPUVIRT_A_TYPE_NAME, type);
	return nl_exchange(ctx->nl, NULL, NULL);
}

/* The vGPUs of the file that do not exist, or exist otherwise. */
static void plan_vgpu_adds(struct planner *p, const struct config_gpu *gpu,
			   const struct cur_gpu *g, struct mig_after *ma)
{
	struct step *s;
	size_t i;
	int err, gi;

	for (i = 0; i < gpu->n_vgpus; i++) {
		const struct config_vgpu *v = &gpu->vgpus[i];
		const struct cur_vgpu *cur = state_vgpu(p->st, v->uuid);

		if (cur && cur->gpu != gpu->id) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s exists on GPU %u, not on GPU %u",
				 v->uuid, cur->gpu, gpu->id);
			continue;
		}
		if (cur && strcmp(cur->type, v->type)) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s exists with type %s, not %s; remove it first (gpuvirtctl vgpu del uuid %s)",
				 v->uuid, cur->type, v->type, v->uuid);
			continue;
		}
		if (cur && v->has_gi && (!cur->has_gi || cur->gi != v->gi)) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s exists on %s, not on GI %u; remove it first (gpuvirtctl vgpu del uuid %s)",
				 v->uuid, cur->has_gi ? "another GI" : "no GI",
				 v->gi, v->uuid);
			continue;
		}
		if (cur)
			continue;
		gi = -1;
		if (ma->on) {
			if (ma->bad)
				continue;
			gi = mig_vgpu_gi(p, gpu, v, ma);
			if (gi < 0)
				continue;
			err = 0;
		} else if (v->has_gi) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s is on GI %u, but GPU %u is not in MIG mode (add a \"mig\" section)",
				 v->uuid, v->gi, gpu->id);
			continue;
		} else {
			/* A GPU yet to be created or to change mode cannot be asked. */
			err = g && !ma->changes ?
			      type_get(p->ctx, gpu->id, v->type) : 0;
		}
		if (err == -ENOENT) {
			conflict(p->pl, p->file, v->line,
				 "GPU %u offers no vGPU type %s", gpu->id,
				 v->type);
			continue;
		} else if (err) {
			conflict(p->pl, p->file, v->line,
				 "cannot look up vGPU type %s of GPU %u: %s",
				 v->type, gpu->id, strerror(-err));
			continue;
		}
		s = plan_step(p->pl, STEP_VGPU_ADD, gpu->id);
		if (!s)
			return;
		memcpy(s->uuid, v->uuid, sizeof(s->uuid));
		snprintf(s->type, sizeof(s->type), "%s", v->type);
		s->mask = (v->has_weight ? SET_WEIGHT : 0) |
			  (v->has_min ? SET_MIN : 0) |
			  (v->has_max ? SET_MAX : 0);
		vgpu_vals(v, &s->want);
		s->on_gi = gi >= 0;
		s->gi = gi >= 0 ? (uint32_t)gi : 0;
	}
}

/* Passthrough --------------------------------------------------------------- */

static const char *pt_root(const struct ctx *ctx)
{
	return ctx->sysfs_root ? ctx->sysfs_root : "";
}

static const char *pt_driver_name(uint32_t driver)
{
	return driver == CONFIG_PT_VFIO_PCI ? PT_DRV_VFIO_PCI : PT_DRV_GPUVIRT;
}

static struct step *pt_step(struct planner *p, enum step_kind kind,
			    const char *device, const char *driver)
{
	struct step *s = plan_step(p->pl, kind, 0);

	if (!s)
		return NULL;
	snprintf(s->pt.device, sizeof(s->pt.device), "%s", device);
	snprintf(s->pt.driver, sizeof(s->pt.driver), "%s", driver);
	return s;
}

/* Release @st: what "pt assign" did, undone by assigning it again. */
static void pt_release_step(struct planner *p, const struct pt_state *st,
			    bool only)
{
	struct step *s = pt_step(p, STEP_PT_DEL, st->device, st->driver);

	if (!s)
		return;
	s->pt.force = true;	/* it was assigned: the undo may not refuse */
	s->pt.only = only;
	s->pt.persistent = st->persistent;
}

/* Does @e name @st's device or one of its members? */
static bool pt_covers(const struct config_pt *e, const struct pt_state *st)
{
	unsigned int i;

	if (!strcmp(e->device, st->device))
		return true;
	for (i = 0; i < st->n; i++)
		if (!strcmp(e->device, st->m[i].bdf))
			return true;
	return false;
}

/* --prune: the assignments on record that no entry of the file covers. */
static void plan_pt_prune(struct planner *p)
{
	struct pt_state *all;
	size_t n, i, j;
	int err;

	err = pt_state_list(&all, &n);
	if (err) {
		conflict(p->pl, p->file, 1,
			 "cannot read the passthrough state files: %s",
			 strerror(-err));
		return;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < p->cfg->n_pts; j++)
			if (pt_covers(&p->cfg->pts[j], &all[i]))
				break;
		if (j == p->cfg->n_pts)
			pt_release_step(p, &all[i], false);
	}
	free(all);
}

/*
 * Is the group of @r assigned as @e says? Its state file @st names the
 * driver and persistence, every member that moves and every member on
 * record is bound to the driver, and a persistent one has its udev rule.
 */
static bool pt_in_place(struct planner *p, const struct config_pt *e,
			const struct pt_report *r, const struct pt_state *st)
{
	const char *drv = pt_driver_name(e->driver);
	unsigned int idx[PT_MAX_MEMBERS], n, i;
	char cur[PT_NAME_LEN];

	if (strcmp(st->driver, drv) || st->persistent != e->persistent)
		return false;
	n = pt_moving(r, false, idx);
	for (i = 0; i < n; i++)
		if (strcmp(r->members[idx[i]].driver, drv))
			return false;
	for (i = 0; i < st->n; i++) {
		pt_driver_of(pt_root(p->ctx), st->m[i].bdf, cur, sizeof(cur));
		if (strcmp(cur, drv))
			return false;
	}
	return !e->persistent || pt_rule_exists(st->device);
}

/* Why pt_check() refuses @r, as one line. */
static void pt_refusal(const struct pt_report *r, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i;
	int n;

	buf[0] = '\0';
	for (i = 0; i < r->n_reasons && used < len; i++) {
		if (r->reasons[i].level == PT_LEVEL_NOTE)
			continue;
		n = snprintf(buf + used, len - used, "%s%s: %s",
			     used ? "; " : "", pt_level_name(r->reasons[i].level),
			     r->reasons[i].text);
		if (n > 0)
			used += (size_t)n;
	}
}

/* Where each entry's IOMMU group is, to refuse two entries in one. */
struct pt_seen {
	int group;
	const struct config_pt *e;
};

static void plan_pt_entry(struct planner *p, const struct config_pt *e,
			  struct pt_report *r, struct pt_seen *seen,
			  size_t n_seen)
{
	struct pt_request req = { .force = e->force };
	const char *drv = pt_driver_name(e->driver);
	const char *root = pt_root(p->ctx);
	unsigned int idx[PT_MAX_MEMBERS], n;
	char err[PATH_MAX + 128], path[PATH_MAX];
	struct pt_state old;
	struct step *s;
	bool has_old;
	size_t i;

	seen[n_seen].group = -1;
	seen[n_seen].e = e;
	if (pt_check(root, e->device, &req, r, err, sizeof(err))) {
		conflict(p->pl, p->file, e->line, "%s", err);
		return;
	}
	seen[n_seen].group = r->group;
	for (i = 0; i < n_seen && r->group >= 0; i++)
		if (seen[i].group == r->group) {
			conflict(p->pl, p->file, e->line,
				 "%s is in IOMMU group %d with %s (line %u): a group is assigned as a whole, list one of its devices",
				 e->device, r->group, seen[i].e->device,
				 seen[i].e->line);
			return;
		}
	n = pt_moving(r, false, idx);
	has_old = !pt_state_lookup(e->device, &old, path, sizeof(path));
	if (has_old && pt_in_place(p, e, r, &old))
		return;
	if (!r->assignable) {
		char why[400];

		pt_refusal(r, why, sizeof(why));
		conflict(p->pl, p->file, e->line, "refusing %s: %s%s", e->device,
			 why, e->force ? "" :
			 " (\"force: true\" accepts the reasons marked force)");
		return;
	}
	if (!n) {
		conflict(p->pl, p->file, e->line,
			 "refusing %s: no endpoint to move", e->device);
		return;
	}
	snprintf(path, sizeof(path), "%s/sys/bus/pci/drivers/%s", root, drv);
	if (access(path, F_OK)) {
		conflict(p->pl, p->file, e->line,
			 "refusing %s: driver %s is not loaded (no %s): modprobe %s first",
			 e->device, drv, path, drv);
		return;
	}
	/* Another driver, persistence or a member gone astray: redo it. */
	if (has_old)
		pt_release_step(p, &old, old.n == 1 && n > 1);
	s = pt_step(p, STEP_PT_ADD, e->device, drv);
	if (!s)
		return;
	s->pt.force = e->force;
	s->pt.persistent = e->persistent;
}

static void plan_pt(struct planner *p)
{
	struct pt_seen *seen;
	struct pt_report *r;

	if (p->prune)
		plan_pt_prune(p);
	if (!p->cfg->n_pts)
		return;
	r = calloc(1, sizeof(*r));
	seen = calloc(p->cfg->n_pts, sizeof(*seen));
	if (!r || !seen) {
		p->pl->oom = true;
	} else {
		size_t i;

		for (i = 0; i < p->cfg->n_pts; i++)
			plan_pt_entry(p, &p->cfg->pts[i], r, seen, i);
	}
	free(seen);
	free(r);
}

/* The other stacks ----------------------------------------------------------- */

static void stk_conflict(void *arg, unsigned int line, const char *msg)
{
	const struct planner *p = arg;

	conflict(p->pl, p->file, line, "%s", msg);
}

/* The "device" entries: removals first, as for our GPUs, then creations. */
static void plan_stacks(struct planner *p)
{
	const char *root = p->ctx->sysfs_root ? p->ctx->sysfs_root : "";
	size_t i;
	int err;

	err = stk_plan_build(root, p->cfg, p->prune, p->sp, stk_conflict, p);
	if (err) {
		p->pl->oom = err == -ENOMEM;
		if (!p->pl->oom)
			conflict(p->pl, p->file, 1, "cannot read the vGPU stacks in sysfs: %s",
				 strerror(-err));
		return;
	}
	for (i = 0; i < p->sp->n_acts; i++) {
		struct step *s = plan_step(p->pl, STEP_STK, 0);

		if (!s)
			return;
		s->act = &p->sp->acts[i];
	}
}

static void plan_build(struct planner *p)
{
	struct mig_after ma;
	size_t i, kept;

	plan_sims(p);
	for (i = 0; i < p->cfg->n_gpus; i++) {
		const struct config_gpu *gpu = &p->cfg->gpus[i];
		const struct cur_gpu *g = state_gpu(p->st, gpu->id);

		if (!g && !config_find_sim(p->cfg, gpu->id)) {
			conflict(p->pl, p->file, gpu->line,
				 "GPU %u does not exist", gpu->id);
			continue;
		}
		kept = plan_prune(p, gpu);
		plan_mig(p, gpu, g, kept, &ma);
		plan_mode(p, gpu, g, kept);
		plan_sched(p, gpu, g);
		plan_vgpu_sets(p, gpu);
		plan_vgpu_adds(p, gpu, g, &ma);
	}
	plan_stacks(p);
	plan_pt(p);
}

/* Printing the plan ---------------------------------------------------------- */

static const char *policy_name(uint32_t policy)
{
	const char *name = config_enum_name(sched_policy_names, policy);

	return name ? name : "?";
}

static const char *mode_name(uint32_t mode)
{
	const char *name = config_enum_name(config_vgpu_modes, mode);

	return name ? name : "?";
}

/* "+" in text, "action": "add" in JSON. */
static void pr_action(const char *sign, const char *action)
{
	pr_text(sign);
	if (pr_is_json())
		pr_string("action", NULL, action);
}

/* Text "key old -> new"; JSON "key": new, the old value goes in "old". */
static void pr_change_str(const char *key, const char *old, const char *want)
{
	if (!pr_is_json()) {
		pr_string(key, NULL, old);
		pr_text("->");
	}
	pr_string(key, "", want);
}

static void pr_change_uint(const char *key, uint32_t old, uint32_t want)
{
	if (!pr_is_json()) {
		pr_uint(key, NULL, old);
		pr_text("->");
	}
	pr_uint(key, "", want);
}

/* The values of @v that @mask names: "weight", "min-pct", ... */
static void pr_vals(unsigned int mask, const struct vals *v)
{
	if (mask & SET_MODE)
		pr_string("vgpu-mode", NULL, mode_name(v->mode));
	if (mask & SET_POLICY)
		pr_string("policy", NULL, policy_name(v->policy));
	if (mask & SET_TIMESLICE)
		pr_uint("timeslice-us", NULL, v->timeslice_us);
	if (mask & SET_WEIGHT)
		pr_uint("weight", NULL, v->weight);
	if (mask & SET_MIN)
		pr_uint("min-pct", NULL, v->min_pct);
	if (mask & SET_MAX)
		pr_uint("max-pct", NULL, v->max_pct);
}

/* The changed values, "old -> new" in text. */
static void pr_changes(const struct step *s)
{
	if (s->mask & SET_MODE)
		pr_change_str("vgpu-mode", mode_name(s->old.mode),
			      mode_name(s->want.mode));
	if (s->mask & SET_POLICY)
		pr_change_str("policy", policy_name(s->old.policy),
			      policy_name(s->want.policy));
	if (s->mask & SET_TIMESLICE)
		pr_change_uint("timeslice-us", s->old.timeslice_us,
			       s->want.timeslice_us);
	if (s->mask & SET_WEIGHT)
		pr_change_uint("weight", s->old.weight, s->want.weight);
	if (s->mask & SET_MIN)
		pr_change_uint("min-pct", s->old.min_pct, s->want.min_pct);
	if (s->mask & SET_MAX)
		pr_change_uint("max-pct", s->old.max_pct, s->want.max_pct);
}

/* A JSON object of the old values of a change; nothing in text. */
static void pr_old(const struct step *s)
{
	if (!pr_is_json())
		return;
	pr_open_object("old");
	pr_vals(s->mask, &s->old);
	pr_close_object();
}

/* "vgpu UUID type TYPE on gpu ID": an object "vgpu" in JSON. */
static void pr_vgpu_open(const struct step *s)
{
	pr_open_object("vgpu");
	pr_text("vgpu");
	pr_string("uuid", "", s->uuid);
}

/* What the steps run ---------------------------------------------------------- */

static int sim_new(const struct config_sim *sim)
{
	char line[96];
	int err;

	if (!strcmp(sim->model, "custom")) {
		char vram[32];

		units_format_size(vram, sizeof(vram), sim->vram);
		snprintf(line, sizeof(line), "%u custom %s %u", sim->id, vram,
			 sim->engines);
	} else {
		snprintf(line, sizeof(line), "%u %s", sim->id, sim->model);
	}
	err = sysfs_write(SIM_BUS "/new_device", line);
	if (err)
		err_print("cannot write \"%s\" to " SIM_BUS "/new_device: %s%s",
			  line, strerror(-err),
			  err == -ENOENT ? " (is gpuvirt_sim loaded?)" :
			  err == -EINVAL ? " (the kernel log says why)" : "");
	return err;
}

static int sim_del(uint32_t id)
{
	char line[16];
	int err;

	snprintf(line, sizeof(line), "%u", id);
	err = sysfs_write(SIM_BUS "/del_device", line);
	if (err)
		err_print("cannot write \"%s\" to " SIM_BUS "/del_device: %s",
			  line, strerror(-err));
	return err;
}

static int mode_set(struct ctx *ctx, uint32_t gpu, uint32_t mode)
{
	char name[NAME_LEN], path[PATH_MAX];
	int err;

	if (gpu_name(ctx, gpu, name, sizeof(name)))
		return -1;
	err = mode_path(name, path, sizeof(path));
	if (!err)
		err = sysfs_write(path, mode_name(mode));
	if (err)
		err_print("cannot write \"%s\" to %s: %s%s", mode_name(mode),
			  path, strerror(-err),
			  err == -EBUSY ? " (the GPU has vGPUs)" : "");
	return err;
}

static int sched_set(struct ctx *ctx, uint32_t gpu, unsigned int mask,
		     const struct vals *v)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_SCHED_SET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_GPU_ID, gpu);
	if (mask & SET_POLICY)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_POLICY, v->policy);
	if (mask & SET_TIMESLICE)
		mnl_attr_put_u32(nlh, GPUVIRT_A_SCHED_TIMESLICE_US,
				 v->timeslice_us);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &sched_names);
		return -1;
	}
	return 0;
}

static int vgpu_set(struct ctx *ctx, const char *uuid, unsigned int mask,
		    const struct vals *v)
{
	struct nlmsghdr *nlh;

	if (!(mask & SET_PARAMS))
		return 0;
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_VGPU_SET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_VGPU_UUID, uuid);
	if (mask & SET_WEIGHT)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_WEIGHT, v->weight);
	if (mask & SET_MIN)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MIN_PCT, v->min_pct);
	if (mask & SET_MAX)
		mnl_attr_put_u32(nlh, GPUVIRT_A_VGPU_MAX_PCT, v->max_pct);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &vgpu_names);
		return -1;
	}
	return 0;
}

static int vgpu_remove(const char *uuid)
{
	int err = sysfs_mdev_remove(uuid);

	if (err)
		err_print("cannot remove vGPU %s: %s", uuid, strerror(-err));
	return err;
}

/*
 * Create the vGPU of step @s with the settings @mask of @v, all or nothing:
 * if the kernel refuses the settings, the vGPU goes again.
 */
static int vgpu_create(struct ctx *ctx, const struct step *s,
		       unsigned int mask, const struct vals *v)
{
	char name[NAME_LEN], dir[PATH_MAX];
	int err;

	if (gpu_name(ctx, s->gpu, name, sizeof(name)))
		return -1;
	/* A MIG-backed vGPU's parent is its GI, "<gpu>-gi<id>" (gi.c). */
	if (s->on_gi) {
		size_t n = strlen(name);

		snprintf(name + n, sizeof(name) - n, "-gi%u", s->gi);
	}
	err = sysfs_mdev_type_dir(name, s->type, dir, sizeof(dir));
	if (err) {
		err_print("GPU %u (%s) has no mdev type \"%s\" in sysfs: %s",
			  s->gpu, name, s->type, strerror(-err));
		return err;
	}
	err = sysfs_mdev_create(dir, s->uuid);
	if (err) {
		err_print("cannot create vGPU %s of type %s on GPU %u: %s",
			  s->uuid, s->type, s->gpu, vgpu_create_hint(err));
		return err;
	}
	if (vgpu_set(ctx, s->uuid, mask, v)) {
		if (!vgpu_remove(s->uuid))
			err_print("removed the new vGPU %s again", s->uuid);
		return -1;
	}
	return 0;
}

/* Create the GI of step @s, which must get the id the planner gave it. */
static int gi_add(struct ctx *ctx, const struct step *s)
{
	uint32_t id;

	if (mig_gi_new(ctx, s->gpu, s->profile, s->start, &id))
		return -1;
	if (id != s->gi) {
		err_print("GI %s at %u of GPU %u was created as GI %u, not %u",
			  s->profile, s->start, s->gpu, id, s->gi);
		mig_gi_del(ctx, s->gpu, id);
		return -1;
	}
	return 0;
}

static int gi_readd(struct ctx *ctx, const struct step *s)
{
	uint32_t id;

	return mig_gi_new(ctx, s->gpu, s->profile, s->start, &id);
}

/*
 * Assign the group of step @s as "pt assign" does, all or nothing; the
 * undo of a release passes @fail_at 0, as the rollback must not fail.
 */
static int pt_do_assign(struct ctx *ctx, const struct step *s,
			unsigned long fail_at)
{
	struct pt_assign_req req = {
		.bdf = s->pt.device, .driver = s->pt.driver,
		.force = s->pt.force, .only = s->pt.only,
		.persistent = s->pt.persistent, .fail_at = fail_at,
	};
	struct pt_paths *paths = malloc(sizeof(*paths));
	struct pt_state *st = malloc(sizeof(*st));
	int ret = -1;

	if (paths && st)
		ret = pt_assign(pt_root(ctx), &req, st, paths);
	else
		err_print("%s", strerror(ENOMEM));
	free(st);
	free(paths);
	return ret < 0 ? -1 : 0;
}

static int pt_do_release(struct ctx *ctx, const struct step *s)
{
	struct pt_paths *paths = malloc(sizeof(*paths));
	struct pt_state *st = malloc(sizeof(*st));
	int ret = -1;

	if (paths && st)
		ret = pt_release(pt_root(ctx), s->pt.device, st, paths);
	else
		err_print("%s", strerror(ENOMEM));
	free(st);
	free(paths);
	return ret;
}

/* Another stack's vGPU, or with @undo the reverse; reports a refusal. */
static int stk_step(const struct ctx *ctx, const struct step *s, bool undo)
{
	char err[1024];
	int ret;

	ret = stk_action_run(ctx->sysfs_root ? ctx->sysfs_root : "", s->act,
			     undo, err, sizeof(err));
	if (ret)
		err_print("%s", err);
	return ret;
}

/* The steps -------------------------------------------------------------------- */

/*
 * Each kind of step, as its four functions side by side: show prints it
 * as a line of the plan (text) or an object of its array (JSON), between
 * the object step_print() opens and closes; name gives the short form of
 * the error messages; apply does it and undo puts back what apply
 * changed. apply and undo return 0, or nonzero having printed why.
 */
struct step_ops {
	void (*show)(const struct step *s);
	void (*name)(const struct step *s, char *buf, size_t len);
	int (*apply)(struct ctx *ctx, const struct step *s);
	int (*undo)(struct ctx *ctx, const struct step *s);
};

/* The end of a "~" step: its changes, and in JSON the old values. */
static void pr_change_end(const struct step *s)
{
	pr_changes(s);
	pr_close_object();
	pr_old(s);
}

/* + simulated-gpu: new_device, undone by del_device. */
static void sim_add_show(const struct step *s)
{
	const struct config_sim *sim = s->sim;

	pr_action("+", "add");
	pr_open_object("simulated-gpu");
	pr_text("simulated-gpu");
	pr_uint("id", "", sim->id);
	pr_string("model", NULL, sim->model);
	if (!strcmp(sim->model, "custom")) {
		pr_size("vram", NULL, sim->vram);
		pr_uint("engines", NULL, sim->engines);
	}
	pr_close_object();
}

static void sim_add_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "+ simulated-gpu %u", s->gpu);
}

static int sim_add_apply(struct ctx *ctx, const struct step *s)
{
	(void)ctx;
	return sim_new(s->sim);
}

static int sim_add_undo(struct ctx *ctx, const struct step *s)
{
	(void)ctx;
	return sim_del(s->gpu);
}

/* - vgpu: mdev remove, undone by creating it again as it was. */
static void vgpu_del_show(const struct step *s)
{
	pr_action("-", "del");
	pr_vgpu_open(s);
	pr_string("type", NULL, s->type);
	pr_uint("gpu", "on gpu", s->gpu);
	pr_close_object();
}

static void vgpu_del_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "- vgpu %s", s->uuid);
}

static int vgpu_del_apply(struct ctx *ctx, const struct step *s)
{
	(void)ctx;
	return vgpu_remove(s->uuid);
}

static int vgpu_del_undo(struct ctx *ctx, const struct step *s)
{
	/* Back with its UUID, type and every setting it had. */
	return vgpu_create(ctx, s, SET_PARAMS, &s->old);
}

/* ~ gpu mig: MIG mode on or off. */
static void mig_mode_show(const struct step *s)
{
	pr_action("~", "change");
	pr_open_object("gpu");
	pr_text("gpu");
	pr_uint("id", "", s->gpu);
	if (!pr_is_json()) {
		pr_string("mig", NULL, s->old.mig ? "on" : "off");
		pr_text("->");
		pr_string(NULL, "", s->want.mig ? "on" : "off");
	} else {
		pr_bool("mig", NULL, s->want.mig);
	}
	pr_close_object();
}

static void mig_mode_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "~ gpu %u mig %s", s->gpu,
		 s->want.mig ? "on" : "off");
}

static int mig_mode_apply(struct ctx *ctx, const struct step *s)
{
	return mig_mode_set(ctx, s->gpu, s->want.mig);
}

static int mig_mode_undo(struct ctx *ctx, const struct step *s)
{
	return mig_mode_set(ctx, s->gpu, s->old.mig);
}

/* A GI step, "-"/"+" @sign: "gi ID profile P placement START:SLOTS". */
static void gi_show(const struct step *s, const char *sign,
		    const char *action)
{
	pr_action(sign, action);
	pr_open_object("gi");
	pr_text("gi");
	pr_uint("id", "", s->gi);
	pr_string("profile", NULL, s->profile);
	if (pr_is_json()) {
		pr_uint("start", NULL, s->start);
		pr_uint("slots", NULL, s->slots);
	} else {
		char pl[16];

		snprintf(pl, sizeof(pl), "%u:%u", s->start, s->slots);
		pr_string(NULL, "placement", pl);
	}
	pr_uint("gpu", "on gpu", s->gpu);
	pr_close_object();
}

static void gi_name(const struct step *s, const char *sign, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s gi %u profile %s on gpu %u", sign, s->gi,
		 s->profile, s->gpu);
}

/* - gi: gi-del, undone by creating it again where it was. */
static void gi_del_show(const struct step *s)
{
	gi_show(s, "-", "del");
}

static void gi_del_name(const struct step *s, char *buf, size_t len)
{
	gi_name(s, "-", buf, len);
}

static int gi_del_apply(struct ctx *ctx, const struct step *s)
{
	return mig_gi_del(ctx, s->gpu, s->gi);
}

static int gi_del_undo(struct ctx *ctx, const struct step *s)
{
	/* Back where it was; its id is the lowest free one. */
	return gi_readd(ctx, s);
}

/* + gi: gi-new with the id the planner gave it, undone by gi-del. */
static void gi_add_show(const struct step *s)
{
	gi_show(s, "+", "add");
}

static void gi_add_name(const struct step *s, char *buf, size_t len)
{
	gi_name(s, "+", buf, len);
}

static int gi_add_apply(struct ctx *ctx, const struct step *s)
{
	return gi_add(ctx, s);
}

static int gi_add_undo(struct ctx *ctx, const struct step *s)
{
	return mig_gi_del(ctx, s->gpu, s->gi);
}

/* ~ gpu vgpu-mode: its sysfs vgpu_mode file. */
static void vgpu_mode_show(const struct step *s)
{
	pr_action("~", "change");
	pr_open_object("gpu");
	pr_text("gpu");
	pr_uint("id", "", s->gpu);
	pr_change_end(s);
}

static void vgpu_mode_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "~ gpu %u vgpu-mode", s->gpu);
}

static int vgpu_mode_apply(struct ctx *ctx, const struct step *s)
{
	return mode_set(ctx, s->gpu, s->want.mode);
}

static int vgpu_mode_undo(struct ctx *ctx, const struct step *s)
{
	return mode_set(ctx, s->gpu, s->old.mode);
}

/* ~ sched: sched-set of the policy and time slice. */
static void sched_show(const struct step *s)
{
	pr_action("~", "change");
	pr_open_object("sched");
	pr_text("sched");
	pr_uint("gpu", NULL, s->gpu);
	pr_change_end(s);
}

static void sched_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "~ sched gpu %u", s->gpu);
}

static int sched_apply(struct ctx *ctx, const struct step *s)
{
	return sched_set(ctx, s->gpu, s->mask, &s->want);
}

static int sched_undo(struct ctx *ctx, const struct step *s)
{
	return sched_set(ctx, s->gpu, s->mask, &s->old);
}

/* ~ vgpu: vgpu-set of its weight, min-pct and max-pct. */
static void vgpu_set_show(const struct step *s)
{
	pr_action("~", "change");
	pr_vgpu_open(s);
	pr_change_end(s);
}

static void vgpu_set_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "~ vgpu %s", s->uuid);
}

static int vgpu_set_apply(struct ctx *ctx, const struct step *s)
{
	return vgpu_set(ctx, s->uuid, s->mask, &s->want);
}

static int vgpu_set_undo(struct ctx *ctx, const struct step *s)
{
	return vgpu_set(ctx, s->uuid, s->mask, &s->old);
}

/* + vgpu: mdev create and vgpu-set, undone by mdev remove. */
static void vgpu_add_show(const struct step *s)
{
	pr_action("+", "add");
	pr_vgpu_open(s);
	pr_string("type", NULL, s->type);
	pr_uint("gpu", "on gpu", s->gpu);
	if (s->on_gi)
		pr_uint("gi", NULL, s->gi);
	pr_vals(s->mask, &s->want);
	pr_close_object();
}

static void vgpu_add_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "+ vgpu %s type %s on gpu %u", s->uuid, s->type,
		 s->gpu);
}

static int vgpu_add_apply(struct ctx *ctx, const struct step *s)
{
	return vgpu_create(ctx, s, s->mask, &s->want);
}

static int vgpu_add_undo(struct ctx *ctx, const struct step *s)
{
	(void)ctx;
	return vgpu_remove(s->uuid);
}

/* A passthrough step: "pt BDF driver D [force] [persistent]". */
static void pt_show(const struct step *s, const char *sign,
		    const char *action, bool add)
{
	pr_action(sign, action);
	pr_open_object("pt");
	pr_text("pt");
	pr_string("device", "", s->pt.device);
	pr_string("driver", NULL, s->pt.driver);
	if (pr_is_json()) {
		if (add)
			pr_bool("force", NULL, s->pt.force);
		pr_bool("persistent", NULL, s->pt.persistent);
	} else {
		if (add && s->pt.force)
			pr_text("force");
		if (s->pt.persistent)
			pr_text("persistent");
	}
	pr_close_object();
}

static void pt_name(const struct step *s, const char *sign, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s pt %s driver %s", sign, s->pt.device,
		 s->pt.driver);
}

/* - pt: pt release, undone by assigning the group again. */
static void pt_del_show(const struct step *s)
{
	pt_show(s, "-", "del", false);
}

static void pt_del_name(const struct step *s, char *buf, size_t len)
{
	pt_name(s, "-", buf, len);
}

static int pt_del_apply(struct ctx *ctx, const struct step *s)
{
	return pt_do_release(ctx, s);
}

static int pt_del_undo(struct ctx *ctx, const struct step *s)
{
	/* Back to the driver it had, udev rule and all. */
	return pt_do_assign(ctx, s, 0);
}

/* + pt: pt assign, undone by pt release. */
static void pt_add_show(const struct step *s)
{
	pt_show(s, "+", "add", true);
}

static void pt_add_name(const struct step *s, char *buf, size_t len)
{
	pt_name(s, "+", buf, len);
}

static int pt_add_apply(struct ctx *ctx, const struct step *s)
{
	return pt_do_assign(ctx, s, pt_fail_at());
}

static int pt_add_undo(struct ctx *ctx, const struct step *s)
{
	return pt_do_release(ctx, s);
}

/*
 * Another stack's vGPU or VFs: the action apply_stacks.c planned, which it
 * also runs and undoes (stk_action_run()).
 */
static void stk_show(const struct step *s)
{
	const struct stk_action *a = s->act;

	if (a->vfs) {
		pr_action("~", "change");
		pr_open_object("device");
		pr_text("device");
		pr_string("device", "", a->dev);
		pr_change_uint("vfs", 0, a->vfs);
		pr_string("stack", NULL, stk_kind_name(a->kind));
		pr_close_object();
		return;
	}
	if (a->del)
		pr_action("-", "del");
	else
		pr_action("+", "add");
	pr_open_object("vgpu");
	pr_text("vgpu");
	pr_string(a->kind == STK_NVVF ? "vf" : "uuid", "", a->handle);
	pr_string("type", NULL, a->type_id);
	pr_string("device", "on device", a->dev);
	pr_string("stack", NULL, stk_kind_name(a->kind));
	pr_close_object();
}

static void stk_name(const struct step *s, char *buf, size_t len)
{
	const struct stk_action *a = s->act;

	if (a->vfs)
		snprintf(buf, len, "~ device %s vfs %u", a->dev, a->vfs);
	else
		snprintf(buf, len, "%s vgpu %s type %s on device %s",
			 a->del ? "-" : "+", a->handle, a->type_id, a->dev);
}

static int stk_apply(struct ctx *ctx, const struct step *s)
{
	return stk_step(ctx, s, false);
}

static int stk_undo(struct ctx *ctx, const struct step *s)
{
	return stk_step(ctx, s, true);
}

#define STEP_OPS(prefix) {						\
	.show = prefix##_show, .name = prefix##_name,			\
	.apply = prefix##_apply, .undo = prefix##_undo,			\
}

static const struct step_ops step_ops[STEP_KINDS] = {
	[STEP_SIM_ADD]	= STEP_OPS(sim_add),
	[STEP_VGPU_DEL]	= STEP_OPS(vgpu_del),
	[STEP_MIG_MODE]	= STEP_OPS(mig_mode),
	[STEP_GI_DEL]	= STEP_OPS(gi_del),
	[STEP_GI_ADD]	= STEP_OPS(gi_add),
	[STEP_MODE]	= STEP_OPS(vgpu_mode),
	[STEP_SCHED]	= STEP_OPS(sched),
	[STEP_VGPU_SET]	= STEP_OPS(vgpu_set),
	[STEP_VGPU_ADD]	= STEP_OPS(vgpu_add),
	[STEP_PT_DEL]	= STEP_OPS(pt_del),
	[STEP_PT_ADD]	= STEP_OPS(pt_add),
	[STEP_STK]	= STEP_OPS(stk),
};

static void step_print(const struct step *s)
{
	pr_open_object(NULL);
	step_ops[s->kind].show(s);
	pr_close_object();
	pr_eol();
}

/*
 * The document {"plan": [steps], "conflicts": [messages]}; in text one line
 * per step, then "! message" per conflict. @conflicts: print them here.
 */
static void plan_print(const struct plan *pl, bool conflicts)
{
	size_t i;

	pr_open_object(NULL);
	pr_open_array("plan");
	for (i = 0; i < pl->n_steps; i++)
		step_print(&pl->steps[i]);
	pr_close_array();
	if (conflicts && pl->n_conflicts) {
		pr_open_array("conflicts");
		for (i = 0; i < pl->n_conflicts; i++) {
			pr_text("!");
			pr_string(NULL, "", pl->conflicts[i]);
			pr_eol();
		}
		pr_close_array();
	}
	pr_close_object();
}

/* Run the plan; on a failure undo what was done. Returns an exit status. */
static int plan_run(struct ctx *ctx, const struct plan *pl)
{
	const struct step *s;
	char name[256];
	size_t i, j, failed = 0;

	for (i = 0; i < pl->n_steps; i++) {
		s = &pl->steps[i];
		if (step_ops[s->kind].apply(ctx, s))
			break;
	}
	if (i == pl->n_steps)
		return EXIT_OK;

	step_ops[s->kind].name(s, name, sizeof(name));
	err_print("step %zu of %zu failed (%s); undoing the %zu done before it",
		  i + 1, pl->n_steps, name, i);
	for (j = i; j-- > 0;) {
		s = &pl->steps[j];
		if (!step_ops[s->kind].undo(ctx, s))
			continue;
		step_ops[s->kind].name(s, name, sizeof(name));
		err_print("cannot undo step %zu (%s)", j + 1, name);
		failed++;
	}
	if (failed)
		err_print("%zu step%s could not be undone: the configuration is partly applied",
			  failed, failed == 1 ? "" : "s");
	else
		err_print("nothing was changed");
	return EXIT_RUNTIME;
}

/* The commands ---------------------------------------------------------------- */

/* Read all of @path ("-": standard input) into a new NUL-ended buffer. */
static char *read_file(const char *path, size_t *len)
{
	size_t used = 0, size = 4096;
	char *buf = malloc(size), *nb;
	int fd, err = 0;

	if (!buf) {
		errno = ENOMEM;
		return NULL;
	}
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (used + 1 >= size) {
			if (size > FILE_MAX) {
				err = EFBIG;
				break;
			}
			nb = realloc(buf, size * 2);
			if (!nb) {
				err = ENOMEM;
				break;
			}
			buf = nb;
			size *= 2;
		}
		n = read(fd, buf + used, size - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = errno;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	if (fd)
		close(fd);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[used] = '\0';
	*len = used;
	return buf;
}

/*
 * Serialise "apply" runs, as udev may start one while an admin runs
 * another. Without a writable /run there is nothing to lock with: go on.
 */
static void apply_lock(void)
{
	int fd = open(APPLY_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return;
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	/* Held until exit. */
}

enum { FILE_ARG, FILE_DRY_RUN, FILE_PRUNE };

struct file_opts {
	const char *file;
	bool dry_run;
	bool prune;
};

#define FILE_SPEC {							\
	.keyword = "-f", .type = ARG_STRING, .meta = "FILE",		\
	.offset = offsetof(struct file_opts, file), .flags = ARG_REQUIRED, \
}

static const struct arg_spec apply_args[] = {
	[FILE_ARG] = FILE_SPEC,
	[FILE_DRY_RUN] = {
		.keyword = "--dry-run", .type = ARG_FLAG,
		.offset = offsetof(struct file_opts, dry_run),
	},
	[FILE_PRUNE] = {
		.keyword = "--prune", .type = ARG_FLAG,
		.offset = offsetof(struct file_opts, prune),
	},
	{ .keyword = NULL }
};

static const struct arg_spec assert_args[] = {
	[FILE_ARG] = FILE_SPEC,
	{ .keyword = NULL }
};

/* "apply" and, with @check, "assert". Returns an exit status. */
static int config_run(struct ctx *ctx, const struct file_opts *o, bool check)
{
	struct config cfg;
	struct state st = { .gpus = NULL };
	struct plan pl = { .steps = NULL };
	struct stk_plan sp = { .acts = NULL };
	struct planner p = {
		.ctx = ctx, .file = o->file, .cfg = &cfg, .st = &st,
		.prune = o->prune, .pl = &pl, .sp = &sp,
	};
	char err[512];
	size_t len, i, n;
	char *text;
	int ret;

	text = read_file(o->file, &len);
	if (!text) {
		err_print("cannot read %s: %s", o->file, strerror(errno));
		return EXIT_USAGE;
	}
	ret = config_parse(o->file, text, len, &cfg, err, sizeof(err));
	free(text);
	if (ret) {
		err_print("%s", err);
		config_free(&cfg);
		return EXIT_USAGE;
	}

	/* A file of other stacks' devices alone needs no gpuvirt. */
	if (cfg.n_gpus || cfg.n_sims || cfg.n_pts) {
		ret = ctx_nl(ctx);
		if (ret)
			goto out;
	}
	if (!check && !o->dry_run)
		apply_lock();
	if (ctx->nl) {
		ret = state_read(ctx, &st);
		if (ret)
			goto out;
	}
	plan_build(&p);
	if (pl.oom) {
		err_print("%s", strerror(ENOMEM));
		ret = EXIT_RUNTIME;
		goto out;
	}

	if (check) {
		plan_print(&pl, true);
		n = pl.n_steps + pl.n_conflicts;
		if (n)
			err_print("the system differs from %s in %zu place%s",
				  o->file, n, n == 1 ? "" : "s");
		ret = n ? EXIT_RUNTIME : EXIT_OK;
		goto out;
	}

	/* apply: conflicts refuse the whole file, before anything changes. */
	if (pl.n_conflicts) {
		for (i = 0; i < pl.n_conflicts; i++)
			err_print("%s", pl.conflicts[i]);
		err_print("nothing was changed");
		ret = EXIT_RUNTIME;
		goto out;
	}
	plan_print(&pl, false);
	if (!pl.n_steps) {
		pr_text("nothing to do");
		pr_eol();
	}
	pr_flush();
	ret = o->dry_run ? EXIT_OK : plan_run(ctx, &pl);

out:
	plan_free(&pl);
	stk_plan_free(&sp);
	state_free(&st);
	config_free(&cfg);
	return ret;
}

static int apply_run(struct ctx *ctx, const void *o, uint64_t given)
{
	(void)given;
	return config_run(ctx, o, false);
}

static int assert_run(struct ctx *ctx, const void *o, uint64_t given)
{
	(void)given;
	return config_run(ctx, o, true);
}

static const struct cmd apply_cmd = {
	"apply", apply_args, sizeof(struct file_opts), apply_run,
};

static const struct cmd assert_cmd = {
	"assert", assert_args, sizeof(struct file_opts), assert_run,
};

const struct object apply_object = {
	.name = "apply",
	.bare = &apply_cmd,
};

const struct object assert_object = {
	.name = "assert",
	.bare = &assert_cmd,
};
