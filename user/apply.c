// SPDX-License-Identifier: GPL-2.0-only
/*
 * The declarative configuration against the system:
 *
 *	gpuvirtctl apply -f FILE [ --dry-run ] [ --prune ] [ --vf-timeout S ]
 *	gpuvirtctl assert -f FILE
 *
 * Both parse FILE (config.c), read the state of the host into struct state
 * (state_read() below: the netlink gpu, sched and vgpu dumps, the MIG state
 * of the file's GPUs, the kernel's answer for each vGPU type the file wants
 * on an existing GPU, the passthrough preflight of each "passthrough" entry
 * and the other stacks' sysfs), and let the planner (plan.c), which does no
 * I/O, compute the steps and the conflicts. Conflicts refuse the whole file
 * before anything changes. "apply" prints the plan and runs it step by
 * step; when a step fails, the steps done are undone in reverse order, so
 * that nothing is left half-applied. A step that enables VFs which later
 * steps type waits for them to come up (--vf-timeout), and disables them
 * again if they do not. "assert" prints the plan as the list of
 * differences. Each kind of step is one entry of step_ops[]: how it is
 * shown, named, done and undone.
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
#include "plan.h"
#include "print.h"
#include "pt.h"
#include "sysfs.h"

#define SIM_BUS		"/sys/bus/gpuvirt_sim"
#define MDEV_BUS	"/sys/class/mdev_bus"
#define APPLY_LOCK	"/run/gpuvirtctl.lock"
#define FILE_MAX	(1 << 20)
#define NAME_LEN	PLAN_NAME_LEN
/* How long VFs this run enables may take to come up, by default. */
#define VF_TIMEOUT_S	60

/* --vf-timeout, in ms, for the steps that wait for VFs. */
static unsigned int vf_wait_ms = VF_TIMEOUT_S * 1000;

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
	g = plan_append(&st->gpus, &st->n_gpus, sizeof(*g));
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
	g->vgpu_mode = -1;
	if (tb[GPUVIRT_A_GPU_VGPU_MODE])
		g->vgpu_mode = mnl_attr_get_u32(tb[GPUVIRT_A_GPU_VGPU_MODE]) ==
			       GPUVIRT_VGPU_MODE_MIXED ?
			       CONFIG_VGPU_MODE_MIXED :
			       CONFIG_VGPU_MODE_HOMOGENEOUS;
	g->vgpu_model = -1;
	if (tb[GPUVIRT_A_GPU_VGPU_MODEL])
		g->vgpu_model = mnl_attr_get_u32(tb[GPUVIRT_A_GPU_VGPU_MODEL]) ==
				GPUVIRT_VGPU_MODEL_SRIOV ?
				CONFIG_VGPU_MODEL_SRIOV : CONFIG_VGPU_MODEL_MDEV;
	g->num_vfs = tb[GPUVIRT_A_GPU_NUM_VFS] ?
		     (int)mnl_attr_get_u32(tb[GPUVIRT_A_GPU_NUM_VFS]) : -1;
	g->max_vfs = tb[GPUVIRT_A_GPU_MAX_VFS] ?
		     (int)mnl_attr_get_u32(tb[GPUVIRT_A_GPU_MAX_VFS]) : -1;
	nl_attr_strcpy(g->dev, sizeof(g->dev), tb[GPUVIRT_A_GPU_DEV_NAME]);
	g->vf_offset = -1;
	g->vf_stride = -1;
	return 0;
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
	v = plan_append(&st->vgpus, &st->n_vgpus, sizeof(*v));
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
	nl_attr_strcpy(v->vf, sizeof(v->vf), tb[GPUVIRT_A_VGPU_VF]);
	return 0;
}

static int dump(struct ctx *ctx, uint8_t cmd, nl_msg_cb cb, void *data)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, cmd, NLM_F_DUMP);
	/*
	 * The plan reads no vGPU counters: a dump without them is half the
	 * size. A module older than omit refuses it; nl_exchange() then asks
	 * again without it.
	 */
	if (cmd == GPUVIRT_CMD_VGPU_GET)
		nl_put_optional_u32(ctx->nl, nlh, GPUVIRT_A_VGPU_OMIT,
				    GPUVIRT_VGPU_OMIT_STATS |
				    GPUVIRT_VGPU_OMIT_MIGRATION);
	if (nl_exchange(ctx->nl, cb, data)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, NULL);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static const char *pt_root(const struct ctx *ctx)
{
	return ctx->sysfs_root ? ctx->sysfs_root : "";
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

/* A number 0..0xffff in the GPU's PF's sysfs @file; -1 if not. */
static int pf_u16(const struct cur_gpu *g, const char *file)
{
	char path[PATH_MAX], val[16];
	char *end;
	long v;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", g->dev,
		 file);
	if (sysfs_read_line(path, val, sizeof(val)))
		return -1;
	v = strtol(val, &end, 10);
	return *end || v < 0 || v > 0xffff ? -1 : (int)v;
}

/*
 * Where the VFs of the GPU @g are: the offset and stride of its PF's
 * SR-IOV capability (Documentation/ABI/testing/sysfs-bus-pci). Left at -1
 * when the PF has none, or they cannot be read.
 */
static void state_read_vf_layout(struct cur_gpu *g)
{
	if (!g->dev[0])
		return;
	g->vf_offset = pf_u16(g, "sriov_offset");
	g->vf_stride = g->vf_offset < 0 ? -1 : pf_u16(g, "sriov_stride");
}

/*
 * Of the GPUs of the file that exist: the MIG state, where their VFs are,
 * and the kernel's answer for each type of a vGPU to create on one in
 * time-sliced mode.
 */
static int state_read_gpus(struct ctx *ctx, const struct config *cfg,
			   struct state *st)
{
	struct cur_type *t;
	struct cur_gpu *g;
	size_t i, j;

	for (i = 0; i < cfg->n_gpus; i++) {
		const struct config_gpu *gpu = &cfg->gpus[i];

		g = state_gpu(st, gpu->id);
		if (!g)
			continue;
		state_read_vf_layout(g);
		/* A failure is reported here, and by the planner. */
		g->has_mig = !mig_gpu_read(ctx, gpu->id, &g->mig);
		if (!g->has_mig || g->mig.mig)
			continue;
		for (j = 0; j < gpu->n_vgpus; j++) {
			const struct config_vgpu *v = &gpu->vgpus[j];

			if (v->has_gi || state_vgpu_of(st, v) ||
			    state_type(st, gpu->id, v->type))
				continue;
			t = plan_append(&st->types, &st->n_types, sizeof(*t));
			if (!t) {
				err_print("%s", strerror(ENOMEM));
				return EXIT_RUNTIME;
			}
			t->gpu = gpu->id;
			snprintf(t->type, sizeof(t->type), "%s", v->type);
			t->err = type_get(ctx, gpu->id, v->type);
		}
	}
	return EXIT_OK;
}

/* What the passthrough preflight finds for each entry of the file. */
static int state_read_pts(const struct ctx *ctx, const struct config *cfg,
			  bool prune, struct state *st)
{
	const char *root = pt_root(ctx);
	char path[PATH_MAX];
	size_t k;
	unsigned int i;

	if (prune)
		st->pt_list_err = pt_state_list(&st->pt_list, &st->n_pt_list);
	if (!cfg->n_pts)
		return EXIT_OK;
	st->pts = calloc(cfg->n_pts, sizeof(*st->pts));
	if (!st->pts) {
		err_print("%s", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	for (k = 0; k < cfg->n_pts; k++) {
		const struct config_pt *e = &cfg->pts[k];
		struct pt_request req = { .force = e->force };
		struct cur_pt *c = &st->pts[k];

		c->check = pt_check(root, e->device, &req, &c->r, c->err,
				    sizeof(c->err));
		c->has_old = !pt_state_lookup(e->device, &c->old, path,
					      sizeof(path));
		for (i = 0; c->has_old && i < c->old.n && i < PT_MAX_MEMBERS; i++)
			pt_driver_of(root, c->old.m[i].bdf, c->old_driver[i],
				     sizeof(c->old_driver[i]));
		c->rule = c->has_old && pt_rule_exists(c->old.device);
		snprintf(c->driver_dir, sizeof(c->driver_dir),
			 "%s/sys/bus/pci/drivers/%s", root,
			 pt_driver_name(e->driver));
		c->driver_loaded = !access(c->driver_dir, F_OK);
	}
	return EXIT_OK;
}

/*
 * Everything the planner may need of @cfg, into @st. Our GPUs come over
 * netlink, GPUs first: the scheduler dump fills in theirs.
 */
static int state_read(struct ctx *ctx, const struct config *cfg, bool prune,
		      struct state *st)
{
	if (ctx->nl &&
	    (dump(ctx, GPUVIRT_CMD_GPU_GET, state_gpu_cb, st) ||
	     dump(ctx, GPUVIRT_CMD_SCHED_GET, state_sched_cb, st) ||
	     dump(ctx, GPUVIRT_CMD_VGPU_GET, state_vgpu_cb, st) ||
	     state_read_gpus(ctx, cfg, st)))
		return EXIT_RUNTIME;
	if (cfg->n_devs) {
		char err[256];

		st->stk_err = stk_scan(pt_root(ctx), &st->stk, err,
				       sizeof(err));
		if (!st->stk_err)
			stk_types_save(&st->stk);
	}
	return state_read_pts(ctx, cfg, prune, st);
}

/* The vgpu_mode file of the GPU whose device is @name; 0 or -errno. */
static int mode_path(const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, MDEV_BUS "/%s/gpuvirt/vgpu_mode", name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The plan ------------------------------------------------------------------ */

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

static const char *model_name(uint32_t model)
{
	const char *name = config_enum_name(config_vgpu_models, model);

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
	if (mask & SET_MODEL)
		pr_string("vgpu-model", NULL, model_name(v->model));
	if (mask & SET_VFS)
		pr_uint("vfs", NULL, v->vfs);
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
	if (s->mask & SET_MODEL)
		pr_change_str("vgpu-model", model_name(s->old.model),
			      model_name(s->want.model));
	if (s->mask & SET_VFS)
		pr_change_uint("vfs", s->old.vfs, s->want.vfs);
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

/*
 * "vgpu UUID type TYPE on gpu ID", or "vgpu vf BDF ..." for a VF vGPU: an
 * object "vgpu" in JSON.
 */
static void pr_vgpu_open(const struct step *s)
{
	pr_open_object("vgpu");
	pr_text("vgpu");
	if (s->vf[0])
		pr_string("vf", NULL, s->vf);
	else
		pr_string("uuid", "", s->uuid);
}

/* How error messages name the vGPU of @s. */
static const char *step_vgpu(const struct step *s)
{
	return s->vf[0] ? s->vf : s->uuid;
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

	if (gpu_mdev_parent(ctx, gpu, -1, name, sizeof(name)))
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

/* Remove the vGPU of step @s: its mdev device, or its VF's type. */
static int vgpu_remove(const struct step *s)
{
	int err = s->vf[0] ? sysfs_vf_release(s->vf) :
			     sysfs_mdev_remove(s->uuid);

	if (err)
		err_print("cannot remove vGPU %s: %s%s", step_vgpu(s),
			  strerror(-err),
			  err == -EBUSY && s->vf[0] ?
			  " (the VF is open: it keeps its type until its user closes it)" : "");
	return err;
}

/*
 * Give the VF of step @s its type, with the settings @mask of @v, all or
 * nothing; the kernel chooses the vGPU's UUID.
 */
static int vf_create(struct ctx *ctx, const struct step *s,
		     unsigned int mask, const struct vals *v)
{
	char pf[NAME_LEN], uuid[UNITS_UUID_LEN];
	int err;

	if (gpu_mdev_parent(ctx, s->gpu, -1, pf, sizeof(pf)))
		return -1;
	err = sysfs_vf_type(pf, s->vf, s->type, uuid);
	if (err) {
		err_print("cannot give VF %s of GPU %u (%s) the type %s: %s",
			  s->vf, s->gpu, pf, s->type, vf_type_hint(err));
		return err;
	}
	if (vgpu_set(ctx, uuid, mask, v)) {
		err = sysfs_vf_release(s->vf);
		if (err)
			err_print("cannot take the type from VF %s again: %s",
				  s->vf, strerror(-err));
		else
			err_print("took the type from VF %s again", s->vf);
		return -1;
	}
	return 0;
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

	if (s->vf[0])
		return vf_create(ctx, s, mask, v);
	/* A MIG-backed vGPU's parent is its GI. */
	if (gpu_mdev_parent(ctx, s->gpu, s->on_gi ? (int)s->gi : -1, name,
			    sizeof(name)))
		return -1;
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
		if (!vgpu_remove(s))
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

	ret = stk_action_run(ctx->sysfs_root ? ctx->sysfs_root : "",
			     vf_wait_ms, s->act, undo, err, sizeof(err));
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
	snprintf(buf, len, "- vgpu %s", step_vgpu(s));
}

static int vgpu_del_apply(struct ctx *ctx, const struct step *s)
{
	(void)ctx;
	return vgpu_remove(s);
}

static int vgpu_del_undo(struct ctx *ctx, const struct step *s)
{
	/* Back with its type and every setting it had, and its UUID, but
	 * on a VF, whose UUID the kernel chooses anew. */
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

/* ~ gpu vgpu-model: gpu-set. */
static void vgpu_model_show(const struct step *s)
{
	vgpu_mode_show(s);
}

static void vgpu_model_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "~ gpu %u vgpu-model", s->gpu);
}

/* The uapi's value of a model of the file. */
static uint32_t model_uapi(uint32_t model)
{
	return model == CONFIG_VGPU_MODEL_SRIOV ? GPUVIRT_VGPU_MODEL_SRIOV :
						  GPUVIRT_VGPU_MODEL_MDEV;
}

static int vgpu_model_apply(struct ctx *ctx, const struct step *s)
{
	return gpu_model_set(ctx, s->gpu, model_uapi(s->want.model));
}

static int vgpu_model_undo(struct ctx *ctx, const struct step *s)
{
	return gpu_model_set(ctx, s->gpu, model_uapi(s->old.model));
}

/* ~ gpu vfs: its PF's sriov_numvfs. */
static void vfs_show(const struct step *s)
{
	vgpu_mode_show(s);
}

static void vfs_name(const struct step *s, char *buf, size_t len)
{
	snprintf(buf, len, "~ gpu %u vfs %u", s->gpu, s->want.vfs);
}

/*
 * Enable the VFs, and when the plan types some of them, wait for a driver
 * to take each (their gpuvirt/ files); if they do not come up, disable
 * them again: the step undoes itself.
 */
static int vfs_apply(struct ctx *ctx, const struct step *s)
{
	char pf[NAME_LEN] = "", err[640];

	if (gpu_vfs_set(ctx, s->gpu, s->want.vfs))
		return -1;
	if (!s->wait_vfs || !s->want.vfs)
		return 0;
	if (!gpu_mdev_parent(ctx, s->gpu, -1, pf, sizeof(pf)) &&
	    !stk_wait_vfs("", pf, s->want.vfs, STK_GPUVIRT, vf_wait_ms, err,
			  sizeof(err)))
		return 0;
	if (pf[0])
		err_print("GPU %u: %s", s->gpu, err);
	gpu_vfs_set(ctx, s->gpu, s->old.vfs);
	return -1;
}

static int vfs_undo(struct ctx *ctx, const struct step *s)
{
	return gpu_vfs_set(ctx, s->gpu, s->old.vfs);
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
	snprintf(buf, len, "~ vgpu %s", step_vgpu(s));
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
	snprintf(buf, len, "+ vgpu %s type %s on gpu %u", step_vgpu(s),
		 s->type, s->gpu);
}

static int vgpu_add_apply(struct ctx *ctx, const struct step *s)
{
	return vgpu_create(ctx, s, s->mask, &s->want);
}

static int vgpu_add_undo(struct ctx *ctx, const struct step *s)
{
	(void)ctx;
	return vgpu_remove(s);
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
	/* on a VF yet to come up: the type as the file names it */
	pr_string("type", NULL, a->pending ? a->type_name : a->type_id);
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
			 a->del ? "-" : "+", a->handle,
			 a->pending ? a->type_name : a->type_id, a->dev);
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
	[STEP_MODEL]	= STEP_OPS(vgpu_model),
	[STEP_VFS]	= STEP_OPS(vfs),
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

enum { FILE_ARG, FILE_DRY_RUN, FILE_PRUNE, FILE_VF_TIMEOUT };

struct file_opts {
	const char *file;
	bool dry_run;
	bool prune;
	uint32_t vf_timeout;
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
	[FILE_VF_TIMEOUT] = {
		.keyword = "--vf-timeout", .type = ARG_U32, .meta = "SECONDS",
		.offset = offsetof(struct file_opts, vf_timeout),
		.min = 1, .max = 3600,
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
	ret = state_read(ctx, &cfg, o->prune, &st);
	if (ret)
		goto out;
	plan_build(o->file, &cfg, &st, o->prune, &pl);
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
	state_free(&st);
	config_free(&cfg);
	return ret;
}

static int apply_run(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct file_opts *opts = o;

	if (given & ARG_BIT(FILE_VF_TIMEOUT))
		vf_wait_ms = opts->vf_timeout * 1000;
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
