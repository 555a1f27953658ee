// SPDX-License-Identifier: GPL-2.0-only
/*
 * The planner of "gpuvirtctl apply" and "assert" (plan.h): the steps that
 * take the host from the state apply.c read to what the file says, in this
 * order:
 *
 *	+ simulated GPUs that are missing		new_device
 *	then per GPU of the file:
 *	- vGPUs it does not list (--prune only)	mdev remove, or VF type 0
 *	~ VFs to 0, when leaving the sriov model	sriov_numvfs
 *	~ vgpu-model					gpu-set
 *	~ MIG mode on					gpu-set
 *	- GIs in the way of the "mig" section		gi-del
 *	+ GIs of the "mig" section			gi-new
 *	  (or: - every GI, ~ MIG mode off)
 *	~ vgpu-mode					sysfs vgpu_mode
 *	~ VFs of the sriov model			sriov_numvfs, and a
 *							wait for the VFs
 *							when it types some
 *	~ the scheduler					sched-set
 *	~ weight, min-pct, max-pct of vGPUs, those	vgpu-set
 *	  that lower their minimum first
 *	+ missing vGPUs					mdev create, or VF
 *							type; vgpu-set
 *	then the other stacks' devices (apply_stacks.c):
 *	- their vGPUs it does not list (--prune only)	remove, or VF type 0
 *	~ VFs of a PF that has none			sriov_numvfs, and a
 *							wait for the VFs
 *							when vGPUs follow
 *	+ their missing vGPUs				create, or VF type
 *							(on VFs of this run:
 *							their names read
 *							once the VFs are up)
 *	then passthrough (pt.c):
 *	- assignments it does not list (--prune only)	pt release
 *	  per device of "passthrough" not assigned as it says:
 *	- its group's assignment, if another one	pt release
 *	+ its group to the driver			pt assign
 *
 * so that capacity and the minimums' 100 % are freed before they are used.
 * What the plan cannot do is a conflict, refused before anything changes:
 * a GPU that does not exist, a vGPU of another type or on another GPU than
 * the file says, a type the GPU does not offer, a mode or model change
 * with vGPUs left, a VF count changed under VF vGPUs, a VF that the GPU
 * will not have, a vGPU listed the way the GPU's model does not make
 * them (by UUID in the sriov model, by VF in mdev), a MIG layout that the planner (mig.h) cannot reach without moving
 * a GI that has a vGPU, a device whose group pt_check() refuses or whose
 * driver is not loaded, two devices of one IOMMU group, and anything of
 * the state that could not be read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "plan.h"

#define SIM_BACKEND	"gpuvirt_sim"

/* The state ----------------------------------------------------------------- */

void *plan_append(void *arr_p, size_t *n, size_t size)
{
	void **arr = arr_p;
	char *a = realloc(*arr, (*n + 1) * size);

	if (!a)
		return NULL;
	*arr = a;
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

struct cur_gpu *state_gpu(const struct state *st, uint32_t id)
{
	size_t i;

	for (i = 0; i < st->n_gpus; i++)
		if (st->gpus[i].id == id)
			return &st->gpus[i];
	return NULL;
}

const struct cur_vgpu *state_vgpu(const struct state *st, const char *uuid)
{
	size_t i;

	for (i = 0; i < st->n_vgpus; i++)
		if (!strcmp(st->vgpus[i].uuid, uuid))
			return &st->vgpus[i];
	return NULL;
}

const struct cur_vgpu *state_vgpu_vf(const struct state *st, const char *vf)
{
	size_t i;

	for (i = 0; i < st->n_vgpus; i++)
		if (st->vgpus[i].vf[0] && !strcmp(st->vgpus[i].vf, vf))
			return &st->vgpus[i];
	return NULL;
}

const struct cur_vgpu *state_vgpu_of(const struct state *st,
				     const struct config_vgpu *v)
{
	return v->vf[0] ? state_vgpu_vf(st, v->vf) : state_vgpu(st, v->uuid);
}

const struct cur_type *state_type(const struct state *st, uint32_t gpu,
				  const char *type)
{
	size_t i;

	for (i = 0; i < st->n_types; i++)
		if (st->types[i].gpu == gpu && !strcmp(st->types[i].type, type))
			return &st->types[i];
	return NULL;
}

void state_free(struct state *st)
{
	free(st->gpus);
	free(st->vgpus);
	free(st->types);
	free(st->pts);
	free(st->pt_list);
	stk_free(&st->stk);
	memset(st, 0, sizeof(*st));
}

/* The plan ------------------------------------------------------------------ */

static struct step *plan_step(struct plan *pl, enum step_kind kind,
			      uint32_t gpu)
{
	struct step *s = plan_append(&pl->steps, &pl->n_steps, sizeof(*s));

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
	c = plan_append(&pl->conflicts, &pl->n_conflicts, sizeof(*c));
	if (!c || !(*c = strdup(msg))) {
		if (c)
			pl->n_conflicts--;
		pl->oom = true;
	}
}

void plan_free(struct plan *pl)
{
	size_t i;

	for (i = 0; i < pl->n_conflicts; i++)
		free(pl->conflicts[i]);
	free(pl->conflicts);
	free(pl->steps);
	stk_plan_free(&pl->sp);
	memset(pl, 0, sizeof(*pl));
}

struct planner {
	const char *file;
	const struct config *cfg;
	const struct state *st;
	bool prune;
	struct plan *pl;
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

/* Is the vGPU @v listed on any GPU of the file: by its VF, or its UUID? */
static bool listed(const struct config *cfg, const struct cur_vgpu *v)
{
	size_t i;

	for (i = 0; i < cfg->n_gpus; i++)
		if (v->vf[0] ? config_find_vf(&cfg->gpus[i], v->vf) != NULL :
			       config_find_vgpu(&cfg->gpus[i], v->uuid) != NULL)
			return true;
	return false;
}

/* The vGPUs the GPU keeps through --prune: all of them, and those on VFs. */
struct kept {
	size_t all, vfs;
};

/* --prune: the vGPUs of @gpu that the file lists nowhere. */
static struct kept plan_prune(struct planner *p, const struct config_gpu *gpu)
{
	struct kept kept = { 0, 0 };
	const struct cur_vgpu *v;
	struct step *s;
	size_t i;

	for (i = 0; i < p->st->n_vgpus; i++) {
		v = &p->st->vgpus[i];
		if (v->gpu != gpu->id)
			continue;
		if (!p->prune || listed(p->cfg, v)) {
			kept.all++;
			kept.vfs += v->vf[0] != '\0';
			continue;
		}
		s = plan_step(p->pl, STEP_VGPU_DEL, gpu->id);
		if (!s)
			continue;
		memcpy(s->uuid, v->uuid, sizeof(s->uuid));
		memcpy(s->vf, v->vf, sizeof(s->vf));
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
	bool unknown;		/* reported: its MIG state was not read */
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
		if (!g->has_mig) {
			conflict(p->pl, p->file, gpu->line,
				 "cannot read the MIG state of GPU %u", gpu->id);
			ma->bad = true;
			ma->unknown = true;
			return -1;
		}
		ma->g = g->mig;
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
				 config_vgpu_name(v), v->gi, gpu->id, v->gi);
			return -1;
		}
		if (gi->profile != prof) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s of type %s needs a GI of profile %s, and GI %u is %s",
				 config_vgpu_name(v), v->type, ma->g.table.profile[prof].name,
				 v->gi, ma->g.table.profile[gi->profile].name);
			return -1;
		}
		if (ma->taken & (1U << v->gi)) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s is on GI %u, which has a vGPU already",
				 config_vgpu_name(v), v->gi);
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
		 config_vgpu_name(v), v->type, ma->g.table.profile[prof].name, gpu->id);
	return -1;
}

/* The GPU's vgpu_mode now; -1 (reported as a conflict) if unknown. */
static int read_mode(struct planner *p, const struct config_gpu *gpu,
		     const struct cur_gpu *g)
{
	if (g->vgpu_mode < 0)
		conflict(p->pl, p->file, gpu->line,
			 "the kernel reports no vgpu-mode for GPU %u", gpu->id);
	return g->vgpu_mode;
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

/* The SR-IOV model ----------------------------------------------------------- */

/* The vGPU model of a GPU now: a new simulated GPU starts with mdev. */
static int model_now(const struct cur_gpu *g)
{
	if (!g)
		return CONFIG_VGPU_MODEL_MDEV;
	return g->vgpu_model;
}

/* The vGPU model once the steps are done; -1 if unknown. */
static int model_after(const struct config_gpu *gpu, const struct cur_gpu *g)
{
	if (gpu->vgpu_model != CONFIG_VGPU_MODEL_UNSET)
		return gpu->vgpu_model;
	return model_now(g);
}

/* Does the file change the GPU's vGPU model? */
static bool model_changes(const struct config_gpu *gpu,
			  const struct cur_gpu *g)
{
	return gpu->vgpu_model != CONFIG_VGPU_MODEL_UNSET &&
	       (int)gpu->vgpu_model != model_now(g);
}

/* The VFs a GPU has now, 0 for a new one; -1 if unknown. */
static int vfs_now(const struct cur_gpu *g)
{
	return g ? g->num_vfs : 0;
}

static struct step *vfs_step(struct planner *p, uint32_t gpu, uint32_t old,
			     uint32_t want)
{
	struct step *s = plan_step(p->pl, STEP_VFS, gpu);

	if (!s)
		return NULL;
	s->mask = SET_VFS;
	s->old.vfs = old;
	s->want.vfs = want;
	return s;
}

/*
 * "vgpu-model": the kernel switches it only while the GPU has no vGPU, no
 * GI and no VF. The VFs of a GPU leaving the sriov model go first: with
 * no vGPU kept none of them has a type.
 */
static void plan_model(struct planner *p, const struct config_gpu *gpu,
		       const struct cur_gpu *g, struct kept kept)
{
	unsigned int gis = 0, i;
	struct step *s;
	int now;

	if (gpu->vgpu_model == CONFIG_VGPU_MODEL_UNSET)
		return;
	now = model_now(g);
	if (now < 0) {
		conflict(p->pl, p->file, gpu->line,
			 "the kernel reports no vgpu-model for GPU %u", gpu->id);
		return;
	}
	if ((uint32_t)now == gpu->vgpu_model)
		return;
	if (kept.all) {
		conflict(p->pl, p->file, gpu->line,
			 "GPU %u: vgpu-model can only change while the GPU has no vGPUs, and it keeps %zu",
			 gpu->id, kept.all);
		return;
	}
	for (i = 0; g && g->has_mig && i < GPUVIRT_MIG_GIS_MAX; i++)
		gis += g->mig.layout.gi[i].used;
	if (gis) {
		conflict(p->pl, p->file, gpu->line,
			 "GPU %u: vgpu-model can only change while the GPU has no GPU instances, and it has %u; remove them first (gpuvirtctl mig gi del)",
			 gpu->id, gis);
		return;
	}
	if (vfs_now(g) < 0) {
		conflict(p->pl, p->file, gpu->line,
			 "the kernel reports no VF count for GPU %u", gpu->id);
		return;
	}
	if (vfs_now(g) > 0)
		vfs_step(p, gpu->id, (uint32_t)vfs_now(g), 0);
	s = plan_step(p->pl, STEP_MODEL, gpu->id);
	if (!s)
		return;
	s->mask = SET_MODEL;
	s->old.model = (uint32_t)now;
	s->want.model = gpu->vgpu_model;
}

/* The VFs of the GPU once the steps are done; -1 if unknown. */
static int vfs_after(const struct config_gpu *gpu, const struct cur_gpu *g)
{
	if (gpu->has_vfs)
		return (int)gpu->vfs;
	if (model_changes(gpu, g))
		return 0;	/* a model change starts and ends with none */
	return vfs_now(g);
}

/*
 * "vfs": the count of the GPU's VFs. The PCI core changes a count only
 * through 0, which ends every VF; so the count changes only while no VF
 * kept has a vGPU, and the step writes 0 first. Returns the step's index,
 * or -1 for none.
 */
static long plan_vfs(struct planner *p, const struct config_gpu *gpu,
		     const struct cur_gpu *g, struct kept kept)
{
	int now;

	if (!gpu->has_vfs)
		return -1;
	if (model_after(gpu, g) != CONFIG_VGPU_MODEL_SRIOV) {
		conflict(p->pl, p->file, gpu->line,
			 "GPU %u: \"vfs\" needs the sriov vGPU model, and the GPU has mdev (add vgpu-model: sriov)",
			 gpu->id);
		return -1;
	}
	now = model_changes(gpu, g) ? 0 : vfs_now(g);
	if (now < 0) {
		conflict(p->pl, p->file, gpu->line,
			 "the kernel reports no VF count for GPU %u", gpu->id);
		return -1;
	}
	if ((uint32_t)now == gpu->vfs)
		return -1;
	if (g && g->max_vfs >= 0 && gpu->vfs > (uint32_t)g->max_vfs) {
		conflict(p->pl, p->file, gpu->line,
			 "GPU %u has at most %d VFs, not %u", gpu->id,
			 g->max_vfs, gpu->vfs);
		return -1;
	}
	if (now > 0 && kept.vfs) {
		conflict(p->pl, p->file, gpu->line,
			 "GPU %u has %d VFs, not %u: the kernel changes the count only through 0, which ends every VF, and %zu of them keep a vGPU",
			 gpu->id, now, gpu->vfs, kept.vfs);
		return -1;
	}
	if (!vfs_step(p, gpu->id, (uint32_t)now, gpu->vfs))
		return -1;
	return (long)p->pl->n_steps - 1;
}

/*
 * Which VF of @g the address @bdf is, from the PF's address and its SR-IOV
 * capability's offset and stride as the PCI core computes them; -1 if it
 * is none of the first @max, -2 if that cannot be told.
 */
static int vf_index(const struct cur_gpu *g, const char *bdf, int max)
{
	unsigned int dom, bus, dev, fn, vdom, vbus, vdev, vfn;
	unsigned int rid, vrid;
	int i;

	if (!g || g->vf_offset < 0 || g->vf_stride < 0 ||
	    sscanf(g->dev, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4 ||
	    sscanf(bdf, "%x:%x:%x.%x", &vdom, &vbus, &vdev, &vfn) != 4)
		return -2;
	if (vdom != dom)
		return -1;
	rid = bus << 8 | dev << 3 | fn;
	vrid = vbus << 8 | vdev << 3 | vfn;
	for (i = 0; i < max; i++)
		if (rid + (unsigned int)g->vf_offset +
		    (unsigned int)i * (unsigned int)g->vf_stride == vrid)
			return i;
	return -1;
}

/*
 * Is @v listed the way the GPU's model makes vGPUs, and, for a VF that has
 * no vGPU yet, one the GPU will have? False having reported why not.
 */
static bool vgpu_fits_model(struct planner *p, const struct config_gpu *gpu,
			    const struct cur_gpu *g,
			    const struct config_vgpu *v)
{
	int model = model_after(gpu, g);
	int vfs, idx;

	if (model == CONFIG_VGPU_MODEL_SRIOV && !v->vf[0]) {
		conflict(p->pl, p->file, v->line,
			 "vGPU %s: GPU %u has the sriov vGPU model, whose vGPUs are VFs listed by \"vf\"",
			 v->uuid, gpu->id);
		return false;
	}
	if (model != CONFIG_VGPU_MODEL_SRIOV && v->vf[0]) {
		conflict(p->pl, p->file, v->line,
			 "vGPU on VF %s: GPU %u has the mdev vGPU model (add vgpu-model: sriov)",
			 v->vf, gpu->id);
		return false;
	}
	if (!v->vf[0] || state_vgpu_vf(p->st, v->vf))
		return true;
	vfs = vfs_after(gpu, g);
	idx = vf_index(g, v->vf, vfs < 0 ? 0 : vfs);
	if (idx == -1) {
		conflict(p->pl, p->file, v->line,
			 "%s is not one of the %d VFs GPU %u (%s) will have%s",
			 v->vf, vfs, gpu->id, g->dev,
			 gpu->has_vfs ? "" : " (set \"vfs\")");
		return false;
	}
	return true;
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
			cur = state_vgpu_of(p->st, v);
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
			memcpy(s->uuid, cur->uuid, sizeof(s->uuid));
			memcpy(s->vf, v->vf, sizeof(s->vf));
			snprintf(s->type, sizeof(s->type), "%s", v->type);
			s->mask = mask;
			vgpu_vals(v, &s->want);
			s->old.weight = cur->weight;
			s->old.min_pct = cur->min_pct;
			s->old.max_pct = cur->max_pct;
		}
	}
}

/*
 * Does GPU @gpu offer the type @type? The kernel's answer, which apply.c
 * asked for each vGPU of the file that does not exist on an existing GPU.
 */
static int type_offered(const struct planner *p, uint32_t gpu,
			const char *type)
{
	const struct cur_type *t = state_type(p->st, gpu, type);

	return t ? t->err : -ENODATA;
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
		const struct cur_vgpu *cur = state_vgpu_of(p->st, v);

		if (cur && cur->gpu != gpu->id) {
			conflict(p->pl, p->file, v->line,
				 "vGPU %s exists on GPU %u, not on GPU %u",
				 config_vgpu_name(v), cur->gpu, gpu->id);
			continue;
		}
		if (!vgpu_fits_model(p, gpu, g, v))
			continue;
		if (cur && v->vf[0] && strcmp(cur->type, v->type)) {
			conflict(p->pl, p->file, v->line,
				 "VF %s has a vGPU of type %s, not %s; clear it first (gpuvirtctl vgpu del vf %s)",
				 v->vf, cur->type, v->type, v->vf);
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
		/* Where a new vGPU goes depends on what could not be read. */
		if (cur || ma->unknown)
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
			      type_offered(p, gpu->id, v->type) : 0;
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
		memcpy(s->vf, v->vf, sizeof(s->vf));
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

const char *pt_driver_name(uint32_t driver)
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
	const struct state *st = p->st;
	size_t i, j;

	if (st->pt_list_err) {
		conflict(p->pl, p->file, 1,
			 "cannot read the passthrough state files: %s",
			 strerror(-st->pt_list_err));
		return;
	}
	for (i = 0; i < st->n_pt_list; i++) {
		for (j = 0; j < p->cfg->n_pts; j++)
			if (pt_covers(&p->cfg->pts[j], &st->pt_list[i]))
				break;
		if (j == p->cfg->n_pts)
			pt_release_step(p, &st->pt_list[i], false);
	}
}

/*
 * Is the group of entry @e assigned as it says? Its state file names the
 * driver and persistence, every member that moves and every member on
 * record is bound to the driver, and a persistent one has its udev rule.
 */
static bool pt_in_place(const struct config_pt *e, const struct cur_pt *c)
{
	const char *drv = pt_driver_name(e->driver);
	unsigned int idx[PT_MAX_MEMBERS], n, i;

	if (strcmp(c->old.driver, drv) || c->old.persistent != e->persistent)
		return false;
	n = pt_moving(&c->r, false, idx);
	for (i = 0; i < n; i++)
		if (strcmp(c->r.members[idx[i]].driver, drv))
			return false;
	for (i = 0; i < c->old.n && i < PT_MAX_MEMBERS; i++)
		if (strcmp(c->old_driver[i], drv))
			return false;
	return !e->persistent || c->rule;
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

static void plan_pt_entry(struct planner *p, size_t k, struct pt_seen *seen)
{
	const struct config_pt *e = &p->cfg->pts[k];
	const struct cur_pt *c = &p->st->pts[k];
	const struct pt_report *r = &c->r;
	const char *drv = pt_driver_name(e->driver);
	unsigned int idx[PT_MAX_MEMBERS], n;
	struct step *s;
	size_t i;

	seen[k].group = -1;
	seen[k].e = e;
	if (c->check) {
		conflict(p->pl, p->file, e->line, "%s", c->err);
		return;
	}
	seen[k].group = r->group;
	for (i = 0; i < k && r->group >= 0; i++)
		if (seen[i].group == r->group) {
			conflict(p->pl, p->file, e->line,
				 "%s is in IOMMU group %d with %s (line %u): a group is assigned as a whole, list one of its devices",
				 e->device, r->group, seen[i].e->device,
				 seen[i].e->line);
			return;
		}
	n = pt_moving(r, false, idx);
	if (c->has_old && pt_in_place(e, c))
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
	if (!c->driver_loaded) {
		conflict(p->pl, p->file, e->line,
			 "refusing %s: driver %s is not loaded (no %s): modprobe %s first",
			 e->device, drv, c->driver_dir, drv);
		return;
	}
	/* Another driver, persistence or a member gone astray: redo it. */
	if (c->has_old)
		pt_release_step(p, &c->old, c->old.n == 1 && n > 1);
	s = pt_step(p, STEP_PT_ADD, e->device, drv);
	if (!s)
		return;
	s->pt.force = e->force;
	s->pt.persistent = e->persistent;
}

static void plan_pt(struct planner *p)
{
	struct pt_seen *seen;
	size_t i;

	if (p->prune)
		plan_pt_prune(p);
	if (!p->cfg->n_pts)
		return;
	if (!p->st->pts) {
		conflict(p->pl, p->file, p->cfg->pts[0].line,
			 "the passthrough devices were not read");
		return;
	}
	seen = calloc(p->cfg->n_pts, sizeof(*seen));
	if (!seen) {
		p->pl->oom = true;
		return;
	}
	for (i = 0; i < p->cfg->n_pts; i++)
		plan_pt_entry(p, i, seen);
	free(seen);
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
	struct stk_plan *sp = &p->pl->sp;
	size_t i;

	if (!p->cfg->n_devs)
		return;
	if (p->st->stk_err) {
		conflict(p->pl, p->file, p->cfg->devs[0].line,
			 "cannot read the vGPU stacks in sysfs: %s",
			 strerror(-p->st->stk_err));
		return;
	}
	if (stk_plan_build(&p->st->stk, p->cfg, p->prune, sp, stk_conflict,
			   p)) {
		p->pl->oom = true;
		return;
	}
	for (i = 0; i < sp->n_acts; i++) {
		struct step *s = plan_step(p->pl, STEP_STK, 0);

		if (!s)
			return;
		s->act = &sp->acts[i];
	}
}

void plan_build(const char *file, const struct config *cfg,
		const struct state *st, bool prune, struct plan *pl)
{
	struct planner planner = {
		.file = file, .cfg = cfg, .st = st, .prune = prune, .pl = pl,
	};
	struct planner *p = &planner;
	struct mig_after ma;
	struct kept kept;
	size_t i, j;
	long vfs;

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
		plan_model(p, gpu, g, kept);
		plan_mig(p, gpu, g, kept.all, &ma);
		plan_mode(p, gpu, g, kept.all);
		vfs = plan_vfs(p, gpu, g, kept);
		plan_sched(p, gpu, g);
		plan_vgpu_sets(p, gpu);
		plan_vgpu_adds(p, gpu, g, &ma);
		/* VFs this run enables and then types: wait for them */
		for (j = vfs < 0 ? p->pl->n_steps : (size_t)vfs + 1;
		     j < p->pl->n_steps; j++)
			if (p->pl->steps[j].kind == STEP_VGPU_ADD &&
			    p->pl->steps[j].vf[0])
				p->pl->steps[vfs].wait_vfs = true;
	}
	plan_stacks(p);
	plan_pt(p);
}