// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes on the nvidia-vf stack: a vGPU is a VF whose
 * nvidia/current_vgpu_type holds a type's number; writing 0 ends it (the
 * layout and its sources are described above parse_creatable() in
 * stacks.c); see stacks.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

int stk_nvvf_write_type(const char *root, const char *vf, const char *id,
			char *err, size_t len)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path),
			 "%s/sys/bus/pci/devices/%s/nvidia/current_vgpu_type",
			 root, vf);

	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, len, "the path of VF %s is too long", vf);
		return -ENAMETOOLONG;
	}
	return stk_write(path, id, err, len);
}

static bool lists(const struct stk_vf *vf, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < vf->n_creatable; i++)
		if (vf->creatable[i] == id)
			return true;
	return false;
}

int stk_nvvf_create(const struct stk_host *h, struct stk_dev *d,
		    const struct stk_type *t, const char *vf,
		    char bdf[STK_BDF_LEN], char *err, size_t len)
{
	unsigned int id = (unsigned int)strtoul(t->id, NULL, 10), i;
	int ret;

	for (i = 0; i < d->n_vfs; i++) {
		struct stk_vf *v = &d->vfs[i];

		if (vf && strcmp(v->bdf, vf))
			continue;
		if (vf && (v->current || v->in_use || !lists(v, id))) {
			snprintf(err, len, "VF %s of %s cannot take type \"%s\": %s",
				 vf, d->name, t->name,
				 v->current ? "it holds a vGPU already" :
				 v->in_use ? "it is in use" :
				 "its creatable_vgpu_types does not list it now");
			return -EBUSY;
		}
		if (v->current || v->in_use || !lists(v, id))
			continue;
		ret = stk_nvvf_write_type(h->root, v->bdf, t->id, err, len);
		if (ret)
			return ret;
		v->current = id;
		stk_copy(bdf, STK_BDF_LEN, v->bdf);
		return 0;
	}
	if (vf)
		snprintf(err, len, "%s has no VF %s with NVIDIA vGPU files",
			 d->name, vf);
	else
		snprintf(err, len,
			 "no free VF of %s lists type \"%s\" (%s) in its creatable_vgpu_types",
			 d->name, t->name, t->id);
	return -ENOSPC;
}

int stk_nvvf_remove(const struct stk_host *h, const struct stk_vgpu *v,
		    char *err, size_t len)
{
	if (v->in_use) {
		snprintf(err, len, "vGPU %s is in use (its VFIO device is open); not removed",
			 v->handle);
		return -EBUSY;
	}
	return stk_nvvf_write_type(h->root, v->handle, "0", err, len);
}

int stk_nvvf_type_new(const char *root, const char *pf, const char *vf,
		      const char *want, char *err, size_t len)
{
	const struct stk_vf *v = NULL;
	struct stk_host h;
	struct stk_dev *d;
	unsigned int id, i;
	int idx, ret;

	ret = stk_scan(root, &h, err, len);
	if (ret)
		return ret;
	d = stk_find_dev(&h, pf);
	for (i = 0; d && d->kind == STK_NVVF && i < d->n_vfs && !v; i++)
		if (!strcmp(d->vfs[i].bdf, vf))
			v = &d->vfs[i];
	if (!v) {
		snprintf(err, len, "%s has no VF %s with NVIDIA vGPU files",
			 pf, vf);
		ret = -ENODEV;
		goto out;
	}
	/* the names the VFs list now are kept for when none does */
	stk_types_save(&h);
	idx = stk_match_type(d, want, err, len);
	if (idx < 0) {
		ret = idx;
		goto out;
	}
	id = (unsigned int)strtoul(d->types[idx].id, NULL, 10);
	if (v->current == id)
		goto out;	/* as the file says already */
	if (v->current || v->in_use || !lists(v, id)) {
		snprintf(err, len, "VF %s of %s cannot take type \"%s\" (%u): %s",
			 vf, pf, d->types[idx].name, id,
			 v->current ? "it holds a vGPU already" :
			 v->in_use ? "it is in use" :
			 "its creatable_vgpu_types does not list it");
		ret = -EBUSY;
		goto out;
	}
	ret = stk_nvvf_write_type(root, vf, d->types[idx].id, err, len);
out:
	stk_free(&h);
	return ret;
}
