// SPDX-License-Identifier: GPL-2.0-only
/*
 * Planning and running the other stacks' part of a configuration; see
 * apply_stacks.h. The rules are apply's own: what exists as the file says
 * is left alone (a second run has nothing to do), what exists otherwise is
 * a conflict and never changed, a vGPU in use is never touched, and what
 * only gpuvirt offers is refused naming the stack.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply_stacks.h"

struct sp_ctx {
	struct stk_plan *sp;
	stk_conflict_fn conflict;
	void *arg;
	int *taken;		/* per device of sp->h: instances planned */
	bool oom;
};

__attribute__((format(printf, 3, 4)))
static void refuse(struct sp_ctx *c, unsigned int line, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->conflict(c->arg, line, msg);
}

static struct stk_action *act(struct sp_ctx *c, bool del, enum stk_kind kind,
			      const char *dev, const char *handle,
			      const char *type_id, const char *type_name)
{
	struct stk_plan *sp = c->sp;
	struct stk_action *v, *a;

	v = realloc(sp->acts, (sp->n_acts + 1) * sizeof(*v));
	if (!v) {
		c->oom = true;
		return NULL;
	}
	sp->acts = v;
	a = &sp->acts[sp->n_acts++];
	memset(a, 0, sizeof(*a));
	a->del = del;
	a->kind = kind;
	stk_copy(a->dev, sizeof(a->dev), dev);
	stk_copy(a->handle, sizeof(a->handle), handle);
	stk_copy(a->type_id, sizeof(a->type_id), type_id);
	stk_copy(a->type_name, sizeof(a->type_name), type_name);
	return a;
}

static bool is_target(struct stk_dev *const *t, unsigned int n,
		      const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(t[i]->name, name))
			return true;
	return false;
}

static bool listed(const struct config_dev *cd, const struct stk_vgpu *g)
{
	size_t i;

	for (i = 0; i < cd->n_vgpus; i++) {
		const struct config_dvgpu *v = &cd->vgpus[i];

		if ((v->has_uuid && !strcasecmp(v->uuid, g->handle)) ||
		    (v->has_vf && !strcmp(v->vf, g->handle)))
			return true;
	}
	return false;
}

/* The targets of a "device" entry, or 0 having said why none. */
static unsigned int targets(struct sp_ctx *c, const struct config_dev *cd,
			    struct stk_dev **t, unsigned int max)
{
	unsigned int n = stk_targets(c->sp->h, cd->device, t, max);

	if (n && t[0]->kind == STK_SRIOV && !cd->n_vgpus)
		return 0;	/* its VFs alone: plan_vfs() did them */
	if (n && t[0]->kind == STK_SRIOV) {
		refuse(c, cd->line, "device %s has plain SR-IOV: vGPUs are not offered by this stack (sriov); \"passthrough\" assigns its VFs whole",
		       cd->device);
		return 0;
	}
	if (!n && stk_is_ours(c->sp->h, cd->device))
		refuse(c, cd->line, "device %s is one of gpuvirt's GPUs: name it by \"id\" (gpuvirtctl gpu show gives it)",
		       cd->device);
	else if (!n)
		refuse(c, cd->line, "device %s is no mdev parent, nor an SR-IOV PF with NVIDIA vGPU files, on this host",
		       cd->device);
	else if (cd->ours_only)
		refuse(c, cd->line, "\"%s\" is not offered by this stack (%s)",
		       cd->ours_only, stk_kind_name(t[0]->kind));
	return cd->ours_only ? 0 : n;
}

static void plan_prune(struct sp_ctx *c, const struct config_dev *cd)
{
	struct stk_dev *t[64];
	unsigned int n, i;

	n = stk_targets(c->sp->h, cd->device, t, 64);
	if (!n || t[0]->kind == STK_SRIOV || cd->ours_only)
		return;
	for (i = 0; i < c->sp->h->n_vgpus; i++) {
		const struct stk_vgpu *g = &c->sp->h->vgpus[i];

		if (!is_target(t, n, g->dev) || listed(cd, g))
			continue;
		if (g->in_use) {
			refuse(c, cd->line, "vGPU %s of device %s is not in the file, but in use: not removed",
			       g->handle, g->dev);
			continue;
		}
		act(c, true, g->kind, g->dev, g->handle, g->type_id,
		    g->type_name);
	}
}

static void plan_mdev(struct sp_ctx *c, const struct config_dvgpu *v,
		      struct stk_dev **t, unsigned int n, int idx)
{
	const char *want = t[0]->types[idx].id;
	const struct stk_vgpu *g;
	unsigned int i, j;

	if (v->has_vf) {
		refuse(c, v->line, "\"vf\" is not offered by this stack (mdev): its vGPUs are named by \"uuid\"");
		return;
	}
	g = stk_find_vgpu(c->sp->h, v->uuid);
	if (g && !is_target(t, n, g->dev)) {
		refuse(c, v->line, "vGPU %s exists on %s, not on %s", v->uuid,
		       g->dev, t[0]->pf[0] ? t[0]->pf : t[0]->name);
		return;
	}
	if (g && strcmp(g->type_id, want)) {
		refuse(c, v->line, "vGPU %s exists with type %s (%s), not %s; remove it first (gpuvirtctl vgpu del uuid %s)",
		       v->uuid, g->type_name, g->type_id, v->type, v->uuid);
		return;
	}
	if (g)
		return;
	/* the first parent with an instance left after the planned ones */
	for (i = 0; i < n; i++) {
		int k = (int)(t[i] - c->sp->h->devs);

		for (j = 0; j < t[i]->n_types; j++) {
			const struct stk_type *ty = &t[i]->types[j];

			if (strcmp(ty->id, want) ||
			    (ty->available >= 0 && ty->available <= c->taken[k]))
				continue;
			c->taken[k]++;
			act(c, false, STK_MDEV, t[i]->name, v->uuid, ty->id,
			    ty->name);
			return;
		}
	}
	refuse(c, v->line, "no room for vGPU %s of type %s on %s: available_instances is 0",
	       v->uuid, t[0]->types[idx].name, t[0]->pf[0] ? t[0]->pf : t[0]->name);
}

static void plan_nvvf(struct sp_ctx *c, const struct config_dvgpu *v,
		      const struct stk_dev *pf, int idx)
{
	const struct stk_type *ty = &pf->types[idx];
	unsigned int id = (unsigned int)strtoul(ty->id, NULL, 10), i;
	const struct stk_vf *vf = NULL;
	bool lists = false;

	if (v->has_uuid) {
		refuse(c, v->line, "\"uuid\" is not offered by this stack (nvidia-vf): its vGPUs are named by \"vf\"");
		return;
	}
	for (i = 0; i < pf->n_vfs && !vf; i++)
		if (!strcmp(pf->vfs[i].bdf, v->vf))
			vf = &pf->vfs[i];
	if (!vf) {
		refuse(c, v->line, "%s is no VF of %s with NVIDIA vGPU files",
		       v->vf, pf->name);
		return;
	}
	if (vf->current == id)
		return;
	if (vf->current) {
		refuse(c, v->line, "VF %s holds a vGPU of type %u, not %s; remove it first (gpuvirtctl vgpu del vf %s)",
		       vf->bdf, vf->current, ty->name, vf->bdf);
		return;
	}
	if (vf->in_use) {
		refuse(c, v->line, "VF %s is in use: not changed", vf->bdf);
		return;
	}
	for (i = 0; i < vf->n_creatable; i++)
		lists |= vf->creatable[i] == id;
	if (!lists) {
		refuse(c, v->line, "VF %s cannot take type %s now: its creatable_vgpu_types does not list %u",
		       vf->bdf, ty->name, id);
		return;
	}
	act(c, false, STK_NVVF, pf->name, vf->bdf, ty->id, ty->name);
}

/* Is @uuid a vGPU that exists? Refused, as it is not where the file says. */
static bool exists_elsewhere(struct sp_ctx *c, const struct config_dvgpu *v,
			     const char *pf)
{
	const struct stk_vgpu *g = stk_find_vgpu(c->sp->h, v->uuid);

	if (g)
		refuse(c, v->line, "vGPU %s exists on %s, not on a VF of %s",
		       v->uuid, g->dev, pf);
	return g;
}

/*
 * The vGPUs of an entry whose VFs this run enables: made in the same run,
 * once the VFs are up. They did not exist when the plan was made, so each
 * is planned as the file says and resolved when it runs (@pending): a VF
 * vGPU (nvidia-vf, vGPU 17+) by its address, which must be one of the VFs
 * the PF will have; an mdev vGPU (Ampere, whose VFs become mdev parents)
 * by its UUID, on the first VF with room. The VFs of a PF bound to NVIDIA's
 * driver get these files; other PFs offer no vGPUs.
 */
static void plan_cold(struct sp_ctx *c, const struct config_dev *cd,
		      const struct stk_dev *d)
{
	enum stk_kind kind = cd->vgpus[0].has_vf ? STK_NVVF : STK_MDEV;
	char bdf[STK_BDF_LEN];
	struct stk_action *a;
	unsigned int i, bad = 0;
	size_t k;

	if (strcmp(d->driver, "nvidia")) {
		refuse(c, cd->line, "device %s has plain SR-IOV (driver %s): vGPUs are not offered by this stack (sriov), on its VFs either; \"passthrough\" assigns its VFs whole",
		       d->name, d->driver[0] ? d->driver : "none");
		return;
	}
	for (k = 0; k < cd->n_vgpus; k++) {
		const struct config_dvgpu *v = &cd->vgpus[k];

		if (v->ours_only) {
			refuse(c, v->line, "\"%s\" is not offered by this stack (%s)",
			       v->ours_only, stk_kind_name(kind));
			bad++;
		} else if ((kind == STK_NVVF) != v->has_vf) {
			refuse(c, v->line, "the VFs of %s will be either vGPUs named by \"vf\" (NVIDIA's vendor-specific VFIO) or mdev parents whose vGPUs are named by \"uuid\", not both: line %u names one by \"%s\"",
			       d->name, cd->vgpus[0].line,
			       kind == STK_NVVF ? "vf" : "uuid");
			bad++;
		} else if (v->has_uuid && exists_elsewhere(c, v, d->name)) {
			bad++;
		} else if (v->has_vf && d->vf_offset >= 0) {
			for (i = 0; i < cd->vfs; i++)
				if (!stk_vf_bdf(d, i, bdf) && !strcmp(bdf, v->vf))
					break;
			if (i == cd->vfs) {
				refuse(c, v->line, "%s is not one of the %u VFs %s will have",
				       v->vf, cd->vfs, d->name);
				bad++;
			}
		}
	}
	if (bad)
		return;
	a = act(c, false, kind, d->name, "", "", "");
	if (a)
		a->vfs = cd->vfs;
	for (k = 0; k < cd->n_vgpus && !c->oom; k++) {
		const struct config_dvgpu *v = &cd->vgpus[k];

		a = act(c, false, kind, d->name, v->has_vf ? v->vf : v->uuid,
			"", v->type);
		if (a)
			a->pending = true;
	}
}

/*
 * "vfs: N": a PF with no VFs gets N (sriov_numvfs, the kernel's own file:
 * Documentation/ABI/testing/sysfs-bus-pci), and its vGPUs in the same run
 * (plan_cold()). A PF with another count is a conflict: the kernel changes
 * it only through 0, which would end every VF. A PF whose VFs are mdev
 * parents is counted through them. Returns false if the entry goes no
 * further.
 */
static bool plan_vfs(struct sp_ctx *c, const struct config_dev *cd)
{
	struct stk_dev *d = stk_find_dev(c->sp->h, cd->device);
	int numvfs, totalvfs;
	struct stk_dev *t[1];
	struct stk_action *a;

	if (!cd->has_vfs)
		return true;
	if (!d && stk_targets(c->sp->h, cd->device, t, 1) &&
	    t[0]->kind == STK_MDEV && t[0]->pf[0]) {
		numvfs = t[0]->pf_numvfs;
		totalvfs = t[0]->pf_totalvfs;
	} else if (!d || (d->kind != STK_NVVF && d->kind != STK_SRIOV)) {
		refuse(c, cd->line, "\"vfs\" is not offered by this stack (%s): %s is no SR-IOV GPU whose VFs gpuvirtctl enables",
		       d ? stk_kind_name(d->kind) : "mdev", cd->device);
		return false;
	} else {
		numvfs = d->numvfs;
		totalvfs = d->totalvfs;
	}
	if (numvfs == (int)cd->vfs)
		return true;
	if (totalvfs >= 0 && cd->vfs > (unsigned int)totalvfs) {
		refuse(c, cd->line, "%s has at most %d VFs (sriov_totalvfs), not %u",
		       cd->device, totalvfs, cd->vfs);
		return false;
	}
	if (numvfs != 0 || !d) {
		refuse(c, cd->line, "%s has %d VFs, not %u: the kernel changes the count only through 0, which ends every VF; change it by hand",
		       cd->device, numvfs, cd->vfs);
		return false;
	}
	if (cd->n_vgpus && cd->vfs) {
		plan_cold(c, cd, d);
		return false;
	}
	a = act(c, false, d->kind, d->name, "", "", "");
	if (a)
		a->vfs = cd->vfs;
	return false;
}

static void plan_dev(struct sp_ctx *c, const struct config_dev *cd)
{
	struct stk_dev *t[64];
	char err[2048];
	unsigned int n;
	size_t i;
	int idx;

	if (!plan_vfs(c, cd))
		return;
	n = targets(c, cd, t, 64);
	for (i = 0; n && i < cd->n_vgpus && !c->oom; i++) {
		const struct config_dvgpu *v = &cd->vgpus[i];

		if (v->ours_only) {
			refuse(c, v->line, "\"%s\" is not offered by this stack (%s)",
			       v->ours_only, stk_kind_name(t[0]->kind));
			continue;
		}
		idx = stk_match_type(t[0], v->type, err, sizeof(err));
		if (idx < 0) {
			refuse(c, v->line, "%s", err);
			continue;
		}
		if (t[0]->kind == STK_NVVF)
			plan_nvvf(c, v, t[0], idx);
		else
			plan_mdev(c, v, t, n, idx);
	}
}

int stk_plan_build(const struct stk_host *h, const struct config *cfg,
		   bool prune, struct stk_plan *sp, stk_conflict_fn conflict,
		   void *arg)
{
	struct sp_ctx c = { .sp = sp, .conflict = conflict, .arg = arg };
	size_t i;

	memset(sp, 0, sizeof(*sp));
	sp->h = h;
	if (!cfg->n_devs)
		return 0;
	c.taken = calloc(h->n_devs + 1, sizeof(*c.taken));
	if (!c.taken)
		return -ENOMEM;
	if (prune)
		for (i = 0; i < cfg->n_devs && !c.oom; i++)
			plan_prune(&c, &cfg->devs[i]);
	for (i = 0; i < cfg->n_devs && !c.oom; i++)
		plan_dev(&c, &cfg->devs[i]);
	free(c.taken);
	return c.oom ? -ENOMEM : 0;
}

void stk_plan_free(struct stk_plan *sp)
{
	free(sp->acts);
	sp->acts = NULL;
	sp->n_acts = 0;
}

/* Enable the VFs of @a, and wait for them if vGPUs on them follow. */
static int vfs_run(const char *root, unsigned int wait_ms,
		   const struct stk_action *a, bool undo, char *err,
		   size_t len)
{
	char path[PATH_MAX], val[16], e2[256];
	int n, ret;

	n = snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/sriov_numvfs",
		     root, a->dev);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, len, "the path of %s is too long", a->dev);
		return -ENAMETOOLONG;
	}
	snprintf(val, sizeof(val), "%u", undo ? 0 : a->vfs);
	ret = stk_write(path, val, err, len);
	if (ret || undo || (a->kind != STK_NVVF && a->kind != STK_MDEV))
		return ret;
	ret = stk_wait_vfs(root, a->dev, a->vfs, a->kind, wait_ms, err, len);
	/* what does not come up goes again: this step undoes itself */
	if (ret && stk_write(path, "0", e2, sizeof(e2)))
		snprintf(err + strlen(err), len - strlen(err),
			 "; and disabling them again failed: %s", e2);
	return ret;
}

int stk_action_run(const char *root, unsigned int wait_ms,
		   const struct stk_action *a, bool undo, char *err,
		   size_t len)
{
	bool create = a->del == undo;

	if (a->vfs)
		return vfs_run(root, wait_ms, a, undo, err, len);
	if (a->pending && create)
		return a->kind == STK_NVVF ?
		       stk_nvvf_type_new(root, a->dev, a->handle, a->type_name,
					 err, len) :
		       stk_mdev_create_new(root, a->dev, a->handle,
					   a->type_name, err, len);
	if (a->kind == STK_NVVF)
		return stk_nvvf_write_type(root, a->handle,
					   create ? a->type_id : "0", err, len);
	if (create)
		return stk_mdev_write_create(root, a->dev, a->type_id,
					     a->handle, err, len);
	return stk_mdev_write_remove(root, a->handle, err, len);
}
