// SPDX-License-Identifier: GPL-2.0-only
/*
 * The other vGPU stacks in "gpu show", "type show" and "vgpu show": loading
 * them (stacks.c) and printing their devices, types and vGPUs in the form
 * of gpuvirt's own, with a "stack" member first. Names with blanks ("GRID
 * A100-4C") are quoted in the text form so that its words stay pairs.
 */
#include <stdio.h>
#include <string.h>

#include "gpuvirtctl.h"
#include "print.h"
#include "stacks.h"
#include "stacks_cmd.h"

const struct arg_enum stk_kind_enums[] = {
	{ "gpuvirt",	STK_GPUVIRT },
	{ "mdev",	STK_MDEV },
	{ "nvidia-vf",	STK_NVVF },
	{ "sriov",	STK_SRIOV },
	{ .name = NULL }
};

int stk_load(struct ctx *ctx, struct stk_host *h)
{
	char err[256];

	if (stk_scan(ctx->sysfs_root ? ctx->sysfs_root : "", h, err,
		     sizeof(err))) {
		err_print("%s", err);
		return EXIT_RUNTIME;
	}
	/* NVIDIA's type names, while listed, for when the GPU is full */
	stk_types_save(h);
	return EXIT_OK;
}

/* A string that may hold blanks: quoted in text, as is in JSON. */
static void pr_name(const char *key, const char *label, const char *val)
{
	char buf[160];

	if (pr_is_json() || !strchr(val, ' ')) {
		pr_string(key, label, val);
		return;
	}
	snprintf(buf, sizeof(buf), "\"%s\"", val);
	pr_string(key, label, buf);
}

static bool dev_wanted(const struct stk_show *sh, const struct stk_dev *d)
{
	return (sh->kind < 0 || (int)d->kind == sh->kind) &&
	       (!sh->dev || d == sh->dev ||
		(d->kind == STK_MDEV && !strcmp(d->pf, sh->dev->name)));
}

static bool vgpu_wanted(const struct stk_show *sh, const struct stk_vgpu *g)
{
	const struct stk_dev *d = NULL;
	unsigned int i;

	for (i = 0; i < sh->h->n_devs && !d; i++)
		if (!strcmp(sh->h->devs[i].name, g->dev))
			d = &sh->h->devs[i];
	return d && dev_wanted(sh, d) && (!sh->vgpu || sh->vgpu == g);
}

static void entry_open(const char *kind)
{
	pr_open_object(NULL);
	pr_string("stack", NULL, kind);
}

static void entry_close(void)
{
	pr_close_object();
	pr_eol();
}

void stk_print_dev(const struct stk_host *h, const struct stk_dev *d)
{
	unsigned int i, free_vfs = 0, vgpus = 0;

	entry_open(stk_kind_name(d->kind));
	pr_string("dev", NULL, d->name);
	if (d->pf[0])
		pr_string("pf", NULL, d->pf);
	if (d->driver[0])
		pr_string("driver", NULL, d->driver);
	if (d->totalvfs >= 0) {
		pr_uint("vfs", NULL, (unsigned int)d->numvfs);
		pr_uint("total-vfs", NULL, (unsigned int)d->totalvfs);
	}
	for (i = 0; i < d->n_vfs; i++)
		free_vfs += !d->vfs[i].current && !d->vfs[i].in_use;
	if (d->kind == STK_NVVF)
		pr_uint("free-vfs", NULL, free_vfs);
	if (d->kind != STK_SRIOV)
		pr_uint("types", NULL, d->n_types);
	for (i = 0; i < h->n_vgpus; i++)
		vgpus += !strcmp(h->vgpus[i].dev, d->name);
	if (d->kind != STK_SRIOV)
		pr_uint("vgpus", NULL, vgpus);
	entry_close();
}

void stk_print_type(const struct stk_dev *d, const struct stk_type *t)
{
	entry_open(stk_kind_name(d->kind));
	pr_string("dev", NULL, d->name);
	pr_string("id", "type", t->id);
	if (t->available >= 0)
		pr_uint("available-instances", "available",
			(unsigned int)t->available);
	if (t->device_api[0])
		pr_string("device-api", "api", t->device_api);
	pr_name("name", NULL, t->name);
	if (t->description[0])
		pr_string("description", NULL, t->description);
	entry_close();
}

void stk_print_vgpu(const struct stk_vgpu *g)
{
	pr_open_object(NULL);
	if (g->kind == STK_NVVF)
		pr_string("vf", NULL, g->handle);
	else
		pr_string("uuid", "vgpu", g->handle);
	pr_string("stack", NULL, stk_kind_name(g->kind));
	pr_string("dev", NULL, g->dev);
	pr_string("type-id", NULL, g->type_id);
	if (g->gi >= 0)
		pr_uint("gi", NULL, (unsigned int)g->gi);
	if (g->placement >= 0)
		pr_uint("placement", NULL, (unsigned int)g->placement);
	pr_bool("open", NULL, g->in_use);
	pr_name("type", NULL, g->type_name);
	entry_close();
}

void stk_show_devs(void *arg)
{
	const struct stk_show *sh = arg;
	unsigned int i;

	for (i = 0; i < sh->h->n_devs; i++)
		if (dev_wanted(sh, &sh->h->devs[i]))
			stk_print_dev(sh->h, &sh->h->devs[i]);
}

void stk_show_types(void *arg)
{
	const struct stk_show *sh = arg;
	unsigned int i, j;

	for (i = 0; i < sh->h->n_devs; i++) {
		const struct stk_dev *d = &sh->h->devs[i];

		if (!dev_wanted(sh, d))
			continue;
		for (j = 0; j < d->n_types; j++)
			if (!sh->type || sh->type == &d->types[j])
				stk_print_type(d, &d->types[j]);
	}
}

void stk_show_vgpus(void *arg)
{
	const struct stk_show *sh = arg;
	unsigned int i;

	for (i = 0; i < sh->h->n_vgpus; i++) {
		const struct stk_vgpu *g = &sh->h->vgpus[i];

		if (vgpu_wanted(sh, g))
			stk_print_vgpu(g);
	}
}

unsigned int stk_count(const struct stk_show *sh, enum stk_what what)
{
	unsigned int i, j, n = 0;

	if (what == STK_DEVS) {
		for (i = 0; i < sh->h->n_devs; i++)
			n += dev_wanted(sh, &sh->h->devs[i]);
	} else if (what == STK_TYPES) {
		for (i = 0; i < sh->h->n_devs; i++)
			if (dev_wanted(sh, &sh->h->devs[i]))
				for (j = 0; j < sh->h->devs[i].n_types; j++)
					n += !sh->type ||
					     sh->type == &sh->h->devs[i].types[j];
	} else {
		for (i = 0; i < sh->h->n_vgpus; i++)
			n += vgpu_wanted(sh, &sh->h->vgpus[i]);
	}
	return n;
}

int stk_dev_arg(struct stk_host *h, const char *name, struct stk_dev **out)
{
	struct stk_dev *d = stk_find_dev(h, name);

	/* a PF whose VFs are mdev parents stands for them: the first */
	if (!d && !stk_targets(h, name, &d, 1))
		d = NULL;
	if (!d && stk_is_ours(h, name)) {
		err_print("\"%s\" is one of gpuvirt's GPUs: name it by \"gpu ID\" (gpuvirtctl gpu show gives it)",
			  name);
		return EXIT_RUNTIME;
	}
	if (!d) {
		err_print("no vGPU-capable device \"%s\" on the mdev, nvidia-vf or sriov stacks (gpuvirt's GPUs go by \"gpu ID\")",
			  name);
		return EXIT_RUNTIME;
	}
	*out = d;
	return EXIT_OK;
}
