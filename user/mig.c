// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mig object: MIG mode and the GPU instances (GIs) of each GPU.
 *
 *	gpuvirtctl mig show [ gpu ID ]
 *	gpuvirtctl mig profiles gpu ID
 *	gpuvirtctl mig mode gpu ID { on | off }
 *	gpuvirtctl mig create gpu ID profile NAME [ start N ]
 *	gpuvirtctl mig destroy gpu ID gi N
 *	gpuvirtctl mig plan gpu ID PROFILE[xCOUNT]...
 *	gpuvirtctl mig apply gpu ID PROFILE[xCOUNT]... [ dry-run ]
 *
 * "plan" and "apply" take the whole wanted partition, as a list of
 * profiles, each with an optional count ("1g.18gbx2 2g.35gb 3g.71gb"),
 * and run the kernel's planner (gpuvirt_mig_plan(), linked in from
 * kernel/core/mig.c) on the GPU's GIs: the GIs with a vGPU are busy and
 * stay where they are, the idle ones may go. The plan is the GIs to
 * destroy, then the GIs to create in order, each at its start. "apply"
 * runs it, turning MIG mode on first if needed; it does not undo a step
 * that fails (the GIs destroyed may not come back where they were), it
 * says what was done and what was not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "mig.h"
#include "nl.h"
#include "print.h"

/* The command-line keywords, for the kernel's error messages. */
static const char *const gpu_keywords[GPUVIRT_A_GPU_MAX + 1] = {
	[GPUVIRT_A_GPU_ID]	= "gpu",
};

static const struct nl_attr_names gpu_names = GPU_ATTR_NAMES(gpu_keywords);

static const char *const gi_keywords[GPUVIRT_A_GI_MAX + 1] = {
	[GPUVIRT_A_GI_GPU_ID]	= "gpu",
	[GPUVIRT_A_GI_ID]	= "gi",
};

static const struct nl_attr_names gi_names = GI_ATTR_NAMES(gi_keywords);

/* Reading the state ----------------------------------------------------------- */

static uint32_t get_u32(const struct nlattr *a)
{
	return a ? mnl_attr_get_u32(a) : 0;
}

static uint64_t get_u64(const struct nlattr *a)
{
	return a ? mnl_attr_get_u64(a) : 0;
}

static int gpu_read_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GPU_MAX + 1];
	struct mig_gpu *g = data;

	if (nl_parse(nlh, gpu_policy, GPUVIRT_A_GPU_MAX, tb) ||
	    !tb[GPUVIRT_A_GPU_ID] || !tb[GPUVIRT_A_GPU_NAME] ||
	    !tb[GPUVIRT_A_GPU_MODEL]) {
		err_print("malformed GPU message from the kernel");
		return -EINVAL;
	}
	g->id = mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ID]);
	nl_attr_strcpy(g->name, sizeof(g->name), tb[GPUVIRT_A_GPU_NAME]);
	nl_attr_strcpy(g->model, sizeof(g->model), tb[GPUVIRT_A_GPU_MODEL]);
	g->vram = get_u64(tb[GPUVIRT_A_GPU_VRAM_SIZE]);
	g->engines = get_u32(tb[GPUVIRT_A_GPU_ENGINES]);
	g->mig = get_u32(tb[GPUVIRT_A_GPU_MODE]) == GPUVIRT_GPU_MODE_MIG;
	return 0;
}

static int gi_read_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GI_MAX + 1];
	struct mig_gpu *g = data;
	struct mig_gi *gi;
	uint32_t id;
	int p;

	if (nl_parse(nlh, gi_policy, GPUVIRT_A_GI_MAX, tb) ||
	    !tb[GPUVIRT_A_GI_GPU_ID] || !tb[GPUVIRT_A_GI_ID] ||
	    !tb[GPUVIRT_A_GI_PROFILE] || !tb[GPUVIRT_A_GI_START]) {
		err_print("malformed GI message from the kernel");
		return -EINVAL;
	}
	if (mnl_attr_get_u32(tb[GPUVIRT_A_GI_GPU_ID]) != g->id)
		return 0;
	id = mnl_attr_get_u32(tb[GPUVIRT_A_GI_ID]);
	if (id >= GPUVIRT_MIG_GIS_MAX) {
		err_print("the kernel reports GI %u, above %d", id,
			  GPUVIRT_MIG_GIS_MAX - 1);
		return -EINVAL;
	}
	gi = &g->gi[id];
	nl_attr_strcpy(gi->profile, sizeof(gi->profile),
		       tb[GPUVIRT_A_GI_PROFILE]);
	nl_attr_strcpy(gi->vgpu_type, sizeof(gi->vgpu_type),
		       tb[GPUVIRT_A_GI_VGPU_TYPE]);
	gi->start = mnl_attr_get_u32(tb[GPUVIRT_A_GI_START]);
	gi->slots = get_u32(tb[GPUVIRT_A_GI_SLOTS]);
	gi->slices = get_u32(tb[GPUVIRT_A_GI_SLICES]);
	gi->vgpus = get_u32(tb[GPUVIRT_A_GI_VGPUS]);
	gi->engines = get_u64(tb[GPUVIRT_A_GI_ENGINES]);
	gi->vram_offset = get_u64(tb[GPUVIRT_A_GI_VRAM_OFFSET]);
	gi->vram_size = get_u64(tb[GPUVIRT_A_GI_VRAM_SIZE]);
	gi->busy_ns = get_u64(tb[GPUVIRT_A_GI_BUSY_NS]);
	gi->idle_ns = get_u64(tb[GPUVIRT_A_GI_IDLE_NS]);

	p = g->table_err ? -1 : gpuvirt_mig_profile_find(&g->table,
							 gi->profile);
	if (p < 0 || gi->start >= GPUVIRT_MIG_SLOTS) {
		err_print("GI %u of GPU %u has profile %s at %u, which the profiles of its model do not allow",
			  id, g->id, gi->profile, gi->start);
		return -EINVAL;
	}
	if (!g->layout.gi[id].used)
		g->layout.nr++;
	g->layout.gi[id].used = true;
	g->layout.gi[id].profile = (u8)p;
	g->layout.gi[id].start = (u8)gi->start;
	if (gi->vgpus)
		g->busy |= (uint8_t)(1U << id);
	return 0;
}

int mig_gpu_read(struct ctx *ctx, uint32_t id, struct mig_gpu *g)
{
	struct nlmsghdr *nlh;
	int ret;

	memset(g, 0, sizeof(*g));
	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_GET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, id);
	if (nl_exchange(ctx->nl, gpu_read_cb, g)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, &gpu_names);
		return EXIT_RUNTIME;
	}
	g->table_err = mig_table(g->model, g->vram, g->engines, &g->table);
	gpuvirt_mig_layout_init(&g->layout);
	if (!g->mig)
		return EXIT_OK;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GI_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, id);
	if (nl_exchange(ctx->nl, gi_read_cb, g)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, &gi_names);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* Requests -------------------------------------------------------------------- */

int mig_mode_set(struct ctx *ctx, uint32_t gpu, bool on)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_SET, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_ID, gpu);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GPU_MODE,
			 on ? GPUVIRT_GPU_MODE_MIG : GPUVIRT_GPU_MODE_TIMESLICED);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &gpu_names);
		return -1;
	}
	return 0;
}

struct gi_new_state {
	uint32_t id;
	bool got;
	int (*print)(const struct nlmsghdr *nlh);
};

static int gi_new_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GI_MAX + 1];
	struct gi_new_state *st = data;

	if (nl_parse(nlh, gi_policy, GPUVIRT_A_GI_MAX, tb) ||
	    !tb[GPUVIRT_A_GI_ID]) {
		err_print("malformed GI message from the kernel");
		return -EINVAL;
	}
	st->id = mnl_attr_get_u32(tb[GPUVIRT_A_GI_ID]);
	st->got = true;
	if (st->print) {
		pr_open_object(NULL);
		pr_open_array("gi");
		pr_open_object(NULL);
		st->print(nlh);
		pr_close_object();
		pr_eol();
		pr_close_array();
		pr_close_object();
	}
	return 0;
}

static int gi_new(struct ctx *ctx, uint32_t gpu, const char *profile,
		  int start, struct gi_new_state *st)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GI_NEW, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, gpu);
	mnl_attr_put_strz(nlh, GPUVIRT_A_GI_PROFILE, profile);
	if (start >= 0)
		mnl_attr_put_u32(nlh, GPUVIRT_A_GI_START, (uint32_t)start);
	if (nl_exchange(ctx->nl, gi_new_cb, st)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, &gi_names);
		return -1;
	}
	if (!st->got) {
		err_print("the kernel did not say which GI it created");
		return -1;
	}
	return 0;
}

int mig_gi_new(struct ctx *ctx, uint32_t gpu, const char *profile,
	       unsigned int start, uint32_t *id)
{
	struct gi_new_state st = { .got = false };

	if (gi_new(ctx, gpu, profile, (int)start, &st))
		return -1;
	*id = st.id;
	return 0;
}

int mig_gi_del(struct ctx *ctx, uint32_t gpu, uint32_t id)
{
	struct nlmsghdr *nlh;

	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_GI_DEL, 0);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_GPU_ID, gpu);
	mnl_attr_put_u32(nlh, GPUVIRT_A_GI_ID, id);
	if (nl_exchange(ctx->nl, NULL, NULL)) {
		nl_perror(ctx->nl, &gi_names);
		return -1;
	}
	return 0;
}

/* Printing -------------------------------------------------------------------- */

static void pr_hex(const char *key, const char *label, uint64_t v)
{
	char buf[24];

	if (pr_is_json()) {
		pr_uint(key, label, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)v);
	pr_string(key, label, buf);
}

/* "0:4" in text; "start": 0, "slots": 4 in JSON. */
static void pr_placement(uint32_t start, uint32_t slots)
{
	char buf[16];

	if (pr_is_json()) {
		pr_uint("start", NULL, start);
		pr_uint("slots", NULL, slots);
		return;
	}
	snprintf(buf, sizeof(buf), "%u:%u", start, slots);
	pr_string("placement", NULL, buf);
}

/* The members of one GI of a gi-get reply (mig create and monitor print it). */
int gi_print(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_GI_MAX + 1];

	if (nl_parse(nlh, gi_policy, GPUVIRT_A_GI_MAX, tb)) {
		err_print("malformed GI message from the kernel");
		return -EINVAL;
	}
	if (tb[GPUVIRT_A_GI_GPU_ID])
		pr_uint("gpu", NULL, mnl_attr_get_u32(tb[GPUVIRT_A_GI_GPU_ID]));
	if (tb[GPUVIRT_A_GI_ID])
		pr_uint("id", "gi", mnl_attr_get_u32(tb[GPUVIRT_A_GI_ID]));
	if (tb[GPUVIRT_A_GI_PROFILE])
		pr_string("profile", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_GI_PROFILE]));
	if (tb[GPUVIRT_A_GI_START] && tb[GPUVIRT_A_GI_SLOTS])
		pr_placement(mnl_attr_get_u32(tb[GPUVIRT_A_GI_START]),
			     mnl_attr_get_u32(tb[GPUVIRT_A_GI_SLOTS]));
	if (tb[GPUVIRT_A_GI_SLICES])
		pr_uint("slices", NULL,
			mnl_attr_get_u32(tb[GPUVIRT_A_GI_SLICES]));
	if (tb[GPUVIRT_A_GI_ENGINES])
		pr_hex("engines", NULL,
		       mnl_attr_get_u64(tb[GPUVIRT_A_GI_ENGINES]));
	if (tb[GPUVIRT_A_GI_VRAM_OFFSET])
		pr_size("vram-offset", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_GI_VRAM_OFFSET]));
	if (tb[GPUVIRT_A_GI_VRAM_SIZE])
		pr_size("vram", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_GI_VRAM_SIZE]));
	if (tb[GPUVIRT_A_GI_VGPU_TYPE])
		pr_string("type", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_GI_VGPU_TYPE]));
	if (tb[GPUVIRT_A_GI_VGPUS])
		pr_uint("vgpus", NULL, mnl_attr_get_u32(tb[GPUVIRT_A_GI_VGPUS]));
	if (tb[GPUVIRT_A_GI_BUSY_NS])
		pr_time("busy", NULL, mnl_attr_get_u64(tb[GPUVIRT_A_GI_BUSY_NS]));
	if (tb[GPUVIRT_A_GI_IDLE_NS])
		pr_time("idle", NULL, mnl_attr_get_u64(tb[GPUVIRT_A_GI_IDLE_NS]));
	return 0;
}

/* mig show -------------------------------------------------------------------- */

enum { MIG_SHOW_GPU };

struct mig_show_opts {
	uint32_t gpu;
};

static const struct arg_spec mig_show_args[] = {
	[MIG_SHOW_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct mig_show_opts, gpu),
	},
	{ .keyword = NULL }
};

/* The GPU ids, from a gpu dump. */
struct id_list {
	uint32_t *ids;
	size_t n;
};

static int id_list_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[GPUVIRT_A_GPU_MAX + 1];
	struct id_list *l = data;
	uint32_t *ids;

	if (nl_parse(nlh, gpu_policy, GPUVIRT_A_GPU_MAX, tb) ||
	    !tb[GPUVIRT_A_GPU_ID]) {
		err_print("malformed GPU message from the kernel");
		return -EINVAL;
	}
	ids = realloc(l->ids, (l->n + 1) * sizeof(*ids));
	if (!ids) {
		err_print("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	l->ids = ids;
	l->ids[l->n++] = mnl_attr_get_u32(tb[GPUVIRT_A_GPU_ID]);
	return 0;
}

/*
 * The GPU's two MIG axes drawn as text, under the GI lines of "mig show"
 * in text mode (never in JSON): one row for the 8 memory slots and one
 * for the 7 compute slices, 8 columns a slot, each GI a box over the
 * slots it holds, named by its id and profile ("*" after the id: it has a
 * vGPU). A free compute slice is "free" where a GI could still use it and
 * "--" under another GI's memory, where none can. 73 columns wide.
 *
 *            0       1       2       3       4       5       6       7
 *   memory  [gi0 3g.71gb                   ][gi1 1g.35gb   ][ free ][ free ]
 *   compute [gi0 3 slices          ][  --  ][gi1   ][  --  ][ free ]
 */
#define MIG_CELL	8

static void mig_draw_row(const struct mig_gpu *g, bool memory)
{
	int owner[GPUVIRT_MIG_SLOTS], mem_owner[GPUVIRT_MIG_SLOTS];
	unsigned int n = memory ? GPUVIRT_MIG_SLOTS : GPUVIRT_MIG_SLICES;
	char line[MIG_CELL * GPUVIRT_MIG_SLOTS + 16], label[64];
	unsigned int i, s, run, w;
	size_t pos;

	for (s = 0; s < GPUVIRT_MIG_SLOTS; s++)
		owner[s] = mem_owner[s] = -1;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct mig_gi *gi = &g->gi[i];

		if (!g->layout.gi[i].used)
			continue;
		for (s = gi->start; s < gi->start + gi->slots && s < GPUVIRT_MIG_SLOTS; s++)
			mem_owner[s] = i;
		for (s = gi->start; s < gi->start + gi->slices && s < n; s++)
			owner[s] = i;
	}
	if (memory)
		memcpy(owner, mem_owner, sizeof(owner));
	pos = snprintf(line, sizeof(line), "  %-8s", memory ? "memory" : "compute");
	for (s = 0; s < n; s += run) {
		for (run = 1; s + run < n && owner[s + run] == owner[s]; run++)
			;
		if (owner[s] < 0) {
			run = 1;
			pos += snprintf(line + pos, sizeof(line) - pos, "%s",
					mem_owner[s] < 0 ? "[ free ]" : "[  --  ]");
			continue;
		}
		i = owner[s];
		if (memory)
			snprintf(label, sizeof(label), "gi%u%s %s", i,
				 g->busy & (1u << i) ? "*" : "", g->gi[i].profile);
		else if (run > 1)
			snprintf(label, sizeof(label), "gi%u%s %u slices", i,
				 g->busy & (1u << i) ? "*" : "", run);
		else
			snprintf(label, sizeof(label), "gi%u%s", i,
				 g->busy & (1u << i) ? "*" : "");
		w = run * MIG_CELL - 2;
		pos += snprintf(line + pos, sizeof(line) - pos, "[%-*.*s]",
				(int)w, (int)w, label);
	}
	printf("%s\n", line);
}

static void mig_draw(const struct mig_gpu *g)
{
	unsigned int s;

	printf("  %-8s", "");
	for (s = 0; s < GPUVIRT_MIG_SLOTS; s++)
		printf(" %-*u", s + 1 < GPUVIRT_MIG_SLOTS ? MIG_CELL - 1 : 0, s);
	printf("\n");
	mig_draw_row(g, true);
	mig_draw_row(g, false);
}

static void mig_gpu_print(const struct mig_gpu *g)
{
	unsigned int i;

	pr_open_object(NULL);
	pr_uint("gpu", NULL, g->id);
	pr_string("name", NULL, g->name);
	pr_string("model", NULL, g->model);
	pr_enum("mode", NULL, gpu_mode_names,
		g->mig ? GPUVIRT_GPU_MODE_MIG : GPUVIRT_GPU_MODE_TIMESLICED);
	if (g->table_err)
		pr_bool("capable", NULL, false);
	if (g->mig)
		pr_uint("gis", NULL, g->layout.nr);
	pr_eol();
	pr_open_array("gi");
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct mig_gi *gi = &g->gi[i];

		if (!g->layout.gi[i].used)
			continue;
		pr_open_object(NULL);
		if (!pr_is_json())
			pr_uint("gpu", NULL, g->id);
		pr_uint("id", "gi", i);
		pr_string("profile", NULL, gi->profile);
		pr_placement(gi->start, gi->slots);
		pr_uint("slices", NULL, gi->slices);
		pr_hex("engines", NULL, gi->engines);
		pr_size("vram-offset", NULL, gi->vram_offset);
		pr_size("vram", NULL, gi->vram_size);
		pr_string("type", NULL, gi->vgpu_type);
		pr_uint("vgpus", NULL, gi->vgpus);
		pr_time("busy", NULL, gi->busy_ns);
		pr_time("idle", NULL, gi->idle_ns);
		pr_close_object();
		pr_eol();
	}
	pr_close_array();
	pr_close_object();
	if (!pr_is_json() && g->mig && !g->table_err) {
		fflush(stdout);
		mig_draw(g);
	}
}

static int mig_show(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct mig_show_opts *opts = o;
	struct id_list l = { .ids = NULL };
	struct mig_gpu g;
	size_t i;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	if (given & ARG_BIT(MIG_SHOW_GPU)) {
		ret = mig_gpu_read(ctx, opts->gpu, &g);
		if (ret)
			return ret;
		pr_open_object(NULL);
		pr_open_array("mig");
		mig_gpu_print(&g);
		pr_close_array();
		pr_close_object();
		return EXIT_OK;
	}

	nl_msg_start(ctx->nl, GPUVIRT_CMD_GPU_GET, NLM_F_DUMP);
	if (nl_exchange(ctx->nl, id_list_cb, &l)) {
		if (ctx->nl->error.err)
			nl_perror(ctx->nl, &gpu_names);
		free(l.ids);
		return EXIT_RUNTIME;
	}
	pr_open_object(NULL);
	pr_open_array("mig");
	for (i = 0; i < l.n && !ret; i++) {
		/* A GPU gone between the dump and the get is skipped. */
		ret = mig_gpu_read(ctx, l.ids[i], &g);
		if (ret && ctx->nl->error.err == ENOENT)
			ret = EXIT_OK;
		else if (!ret)
			mig_gpu_print(&g);
	}
	pr_close_array();
	pr_close_object();
	free(l.ids);
	return ret;
}

/* mig profiles ---------------------------------------------------------------- */

enum { MIG_GPU_ARG };

struct mig_gpu_opts {
	uint32_t gpu;
};

static const struct arg_spec mig_gpu_args[] = {
	[MIG_GPU_ARG] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct mig_gpu_opts, gpu),
		.flags = ARG_REQUIRED,
	},
	{ .keyword = NULL }
};

/* A GPU that has profiles, or an exit status having said why not. */
static int gpu_capable(struct ctx *ctx, uint32_t id, struct mig_gpu *g)
{
	int ret = mig_gpu_read(ctx, id, g);

	if (ret)
		return ret;
	if (g->table_err) {
		err_print("GPU %u (%s, %s) is not MIG capable: %s", g->id,
			  g->name, g->model, mig_table_why(g));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int mig_profiles(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct mig_gpu_opts *opts = o;
	struct mig_gpu g;
	unsigned int i, s;
	char starts[32];
	int ret;

	(void)given;
	ret = gpu_capable(ctx, opts->gpu, &g);
	if (ret)
		return ret;
	pr_open_object(NULL);
	pr_open_array("profile");
	for (i = 0; i < g.table.count; i++) {
		const struct gpuvirt_mig_profile *p = &g.table.profile[i];

		pr_open_object(NULL);
		pr_string("name", "profile", p->name);
		pr_uint("slices", NULL, p->slices);
		pr_uint("slots", NULL, p->slots);
		pr_uint("max", NULL, p->max);
		if (pr_is_json()) {
			pr_open_array("starts");
			for (s = 0; s < GPUVIRT_MIG_SLOTS; s++)
				if (p->starts & (1U << s))
					pr_uint(NULL, NULL, s);
			pr_close_array();
		} else {
			size_t used = 0;

			starts[0] = '\0';
			for (s = 0; s < GPUVIRT_MIG_SLOTS; s++)
				if (p->starts & (1U << s))
					used += (size_t)snprintf(starts + used,
						sizeof(starts) - used, "%s%u",
						used ? "," : "", s);
			pr_string(NULL, "starts", starts);
		}
		pr_size("vram", NULL, p->mem_size);
		if (p->media)
			pr_bool("media", NULL, true);
		pr_string("type", NULL, p->vgpu_name);
		pr_close_object();
		pr_eol();
	}
	pr_close_array();
	pr_close_object();
	return EXIT_OK;
}

/* mig mode -------------------------------------------------------------------- */

enum { MIG_MODE_GPU, MIG_MODE_STATE };

struct mig_mode_opts {
	uint32_t gpu;
	uint32_t state;
};

static const struct arg_enum mig_states[] = {
	{ "on",		1 },
	{ "off",	0 },
	{ .name = NULL }
};

static const struct arg_spec mig_mode_args[] = {
	[MIG_MODE_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct mig_mode_opts, gpu),
		.flags = ARG_REQUIRED,
	},
	[MIG_MODE_STATE] = {
		.keyword = "mode", .type = ARG_ENUM, .enums = mig_states,
		.meta = "{ on | off }",
		.offset = offsetof(struct mig_mode_opts, state),
		.flags = ARG_REQUIRED | ARG_POSITIONAL,
	},
	{ .keyword = NULL }
};

static int mig_mode(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct mig_mode_opts *opts = o;
	int ret;

	(void)given;
	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	return mig_mode_set(ctx, opts->gpu, opts->state) ? EXIT_RUNTIME :
							    EXIT_OK;
}

/* mig create ------------------------------------------------------------------ */

enum { MIG_CREATE_GPU, MIG_CREATE_PROFILE, MIG_CREATE_START };

struct mig_create_opts {
	uint32_t gpu;
	const char *profile;
	uint32_t start;
};

static const struct arg_spec mig_create_args[] = {
	[MIG_CREATE_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct mig_create_opts, gpu),
		.flags = ARG_REQUIRED,
	},
	[MIG_CREATE_PROFILE] = {
		.keyword = "profile", .type = ARG_STRING, .meta = "NAME",
		.offset = offsetof(struct mig_create_opts, profile),
		.flags = ARG_REQUIRED, .max_len = GPUVIRT_MIG_NAME_MAX - 1,
	},
	[MIG_CREATE_START] = {
		.keyword = "start", .type = ARG_U32, .meta = "N",
		.offset = offsetof(struct mig_create_opts, start),
		.max = GPUVIRT_MIG_SLOTS - 1, .flags = ARG_ZERO,
	},
	{ .keyword = NULL }
};

static int mig_create(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct mig_create_opts *opts = o;
	struct gi_new_state st = { .print = gi_print };
	struct mig_gpu g;
	int ret;

	ret = gpu_capable(ctx, opts->gpu, &g);
	if (ret)
		return ret;
	if (gpuvirt_mig_profile_find(&g.table, opts->profile) < 0) {
		char list[160];

		mig_profile_list(&g.table, list, sizeof(list));
		err_print("\"profile\": GPU %u (%s) has no profile \"%s\" (expected one of %s)",
			  g.id, g.model, opts->profile, list);
		return EXIT_RUNTIME;
	}
	if (!g.mig) {
		err_print("GPU %u is not in MIG mode; turn it on first (gpuvirtctl mig mode gpu %u on)",
			  g.id, g.id);
		return EXIT_RUNTIME;
	}
	return gi_new(ctx, opts->gpu, opts->profile,
		      (given & ARG_BIT(MIG_CREATE_START)) ? (int)opts->start : -1,
		      &st) ? EXIT_RUNTIME : EXIT_OK;
}

/* mig destroy ----------------------------------------------------------------- */

enum { MIG_DESTROY_GPU, MIG_DESTROY_GI };

struct mig_destroy_opts {
	uint32_t gpu;
	uint32_t gi;
};

static const struct arg_spec mig_destroy_args[] = {
	[MIG_DESTROY_GPU] = {
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",
		.offset = offsetof(struct mig_destroy_opts, gpu),
		.flags = ARG_REQUIRED,
	},
	[MIG_DESTROY_GI] = {
		.keyword = "gi", .type = ARG_U32, .meta = "N",
		.offset = offsetof(struct mig_destroy_opts, gi),
		.max = GPUVIRT_MIG_GIS_MAX - 1, .flags = ARG_REQUIRED | ARG_ZERO,
	},
	{ .keyword = NULL }
};

static int mig_destroy(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct mig_destroy_opts *opts = o;
	int ret;

	(void)given;
	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	return mig_gi_del(ctx, opts->gpu, opts->gi) ? EXIT_RUNTIME : EXIT_OK;
}

/* mig plan, mig apply --------------------------------------------------------- */

enum { MIG_PLAN_GPU, MIG_PLAN_WANT, MIG_PLAN_DRY_RUN };

struct mig_plan_opts {
	uint32_t gpu;
	struct arg_list want;
	bool dry_run;
};

#define MIG_PLAN_ARGS							\
	[MIG_PLAN_GPU] = {						\
		.keyword = "gpu", .type = ARG_U32, .meta = "ID",	\
		.offset = offsetof(struct mig_plan_opts, gpu),		\
		.flags = ARG_REQUIRED,					\
	},								\
	[MIG_PLAN_WANT] = {						\
		.keyword = "profile", .type = ARG_STRING,		\
		.meta = "PROFILE[xCOUNT]...",				\
		.offset = offsetof(struct mig_plan_opts, want),		\
		.flags = ARG_REQUIRED | ARG_POSITIONAL | ARG_REPEAT,	\
		.max_len = GPUVIRT_MIG_NAME_MAX + 2,			\
	}

static const struct arg_spec mig_plan_args[] = {
	MIG_PLAN_ARGS,
	{ .keyword = NULL }
};

static const struct arg_spec mig_apply_args[] = {
	MIG_PLAN_ARGS,
	[MIG_PLAN_DRY_RUN] = {
		.keyword = "dry-run", .type = ARG_FLAG,
		.offset = offsetof(struct mig_plan_opts, dry_run),
	},
	{ .keyword = NULL }
};

/* One line of a plan: "- gi 3 profile 1g.18gb placement 6:1". */
static void plan_gi_print(const struct mig_gpu *g, const char *sign,
			  const char *action, unsigned int gi,
			  unsigned int profile, unsigned int start, bool busy)
{
	const struct gpuvirt_mig_profile *p = &g->table.profile[profile];

	pr_open_object(NULL);
	pr_text(sign);
	if (pr_is_json())
		pr_string("action", NULL, action);
	pr_uint("gi", NULL, gi);
	pr_string("profile", NULL, p->name);
	pr_placement(start, p->slots);
	if (busy)
		pr_bool("busy", NULL, true);
	pr_close_object();
	pr_eol();
}

static void plan_print(const struct mig_gpu *g,
		       const struct gpuvirt_mig_plan *plan)
{
	unsigned int i;

	pr_open_object(NULL);
	if (pr_is_json())
		pr_uint("gpu", NULL, g->id);
	pr_open_array("plan");
	if (!g->mig) {
		pr_open_object(NULL);
		pr_text("~");
		if (pr_is_json())
			pr_string("action", NULL, "change");
		pr_uint("gpu", NULL, g->id);
		if (!pr_is_json()) {
			pr_enum("mode", NULL, gpu_mode_names,
				GPUVIRT_GPU_MODE_TIMESLICED);
			pr_text("->");
		}
		pr_enum("mode", "", gpu_mode_names, GPUVIRT_GPU_MODE_MIG);
		pr_close_object();
		pr_eol();
	}
	for (i = 0; i < plan->nr_destroy; i++) {
		const struct gpuvirt_mig_gi *gi = &g->layout.gi[plan->destroy[i]];

		plan_gi_print(g, "-", "destroy", plan->destroy[i], gi->profile,
			      gi->start, false);
	}
	for (i = 0; i < plan->nr_create; i++)
		plan_gi_print(g, "+", "create", plan->create[i].gi,
			      plan->create[i].profile, plan->create[i].start,
			      false);
	pr_close_array();
	/* The GIs that stay, busy or not: text only says "=" for them. */
	pr_open_array("keep");
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_gi *gi = &g->layout.gi[i];
		unsigned int d;
		bool gone = false;

		if (!gi->used)
			continue;
		for (d = 0; d < plan->nr_destroy; d++)
			gone |= plan->destroy[d] == i;
		if (!gone)
			plan_gi_print(g, "=", "keep", i, gi->profile,
				      gi->start, g->busy & (1U << i));
	}
	pr_close_array();
	pr_close_object();
}

/*
 * Read the GPU, parse the wanted GIs and plan. Returns an exit status;
 * EXIT_OK with @plan filled.
 */
static int plan_make(struct ctx *ctx, const struct mig_plan_opts *opts,
		     struct mig_gpu *g, struct gpuvirt_mig_plan *plan)
{
	unsigned int want[GPUVIRT_MIG_PROFILES] = { 0 }, i;
	struct gpuvirt_mig_why why;
	char err[256];
	int ret;

	ret = gpu_capable(ctx, opts->gpu, g);
	if (ret)
		return ret;
	for (i = 0; i < opts->want.n; i++) {
		if (mig_want_add(&g->table, opts->want.val[i], want, err,
				 sizeof(err))) {
			err_print("%s", err);
			return EXIT_USAGE;
		}
	}
	/* A GPU in time-sliced mode starts from no GIs once switched. */
	if (gpuvirt_mig_plan(&g->table, &g->layout, g->busy, want, plan,
			     &why)) {
		err_print("no plan for GPU %u: %s", g->id, why.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int mig_plan_cmd(struct ctx *ctx, const void *o, uint64_t given)
{
	struct gpuvirt_mig_plan plan;
	struct mig_gpu g;
	int ret;

	(void)given;
	ret = plan_make(ctx, o, &g, &plan);
	if (ret)
		return ret;
	plan_print(&g, &plan);
	if (!g.mig)
		err_print("note: GPU %u is not in MIG mode: \"mig apply\" turns it on first, which needs a GPU without vGPUs",
			  g.id);
	return EXIT_OK;
}

/* "- gi 3", "+ gi 1 (3g.71gb at 0)" for the report of a failed apply. */
static void step_name(const struct mig_gpu *g,
		      const struct gpuvirt_mig_plan *plan, size_t step,
		      char *buf, size_t len)
{
	size_t base = g->mig ? 0 : 1;

	if (step < base) {
		snprintf(buf, len, "~ gpu %u mode mig", g->id);
	} else if (step - base < plan->nr_destroy) {
		snprintf(buf, len, "- gi %u", plan->destroy[step - base]);
	} else {
		const struct gpuvirt_mig_create *c =
			&plan->create[step - base - plan->nr_destroy];

		snprintf(buf, len, "+ gi %u profile %s start %u", c->gi,
			 g->table.profile[c->profile].name, c->start);
	}
}

static int plan_run(struct ctx *ctx, const struct mig_gpu *g,
		    const struct gpuvirt_mig_plan *plan)
{
	size_t base = g->mig ? 0 : 1;
	size_t n = base + plan->nr_destroy + plan->nr_create, i;
	struct mig_gpu after;
	uint32_t id;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		if (i < base) {
			err = mig_mode_set(ctx, g->id, true);
		} else if (i - base < plan->nr_destroy) {
			err = mig_gi_del(ctx, g->id, plan->destroy[i - base]);
		} else {
			const struct gpuvirt_mig_create *c =
				&plan->create[i - base - plan->nr_destroy];

			err = mig_gi_new(ctx, g->id,
					 g->table.profile[c->profile].name,
					 c->start, &id);
			if (!err && id != c->gi)
				err_print("warning: GI %s was created as GI %u, not %u",
					  g->table.profile[c->profile].name,
					  id, c->gi);
		}
	}
	if (err) {
		char name[96];
		size_t j;

		i--;
		step_name(g, plan, i, name, sizeof(name));
		err_print("step %zu of %zu failed (%s)", i + 1, n, name);
		if (!i)
			err_print("nothing was changed");
		for (j = 0; j < i; j++) {
			step_name(g, plan, j, name, sizeof(name));
			err_print("done: %s", name);
		}
		for (j = i; j < n; j++) {
			step_name(g, plan, j, name, sizeof(name));
			err_print("not done: %s", name);
		}
		return EXIT_RUNTIME;
	}

	/* The result, as the kernel has it, is the plan's. */
	if (mig_gpu_read(ctx, g->id, &after))
		return EXIT_RUNTIME;
	for (i = 0; i < GPUVIRT_MIG_GIS_MAX; i++) {
		const struct gpuvirt_mig_gi *a = &after.layout.gi[i];
		const struct gpuvirt_mig_gi *w = &plan->layout.gi[i];

		if (a->used != w->used ||
		    (a->used && (a->profile != w->profile ||
				 a->start != w->start))) {
			err_print("GPU %u: GI %zu differs from the plan after applying it (changed meanwhile?)",
				  g->id, i);
			return EXIT_RUNTIME;
		}
	}
	return EXIT_OK;
}

static int mig_apply_cmd(struct ctx *ctx, const void *o, uint64_t given)
{
	const struct mig_plan_opts *opts = o;
	struct gpuvirt_mig_plan plan;
	struct mig_gpu g;
	int ret;

	(void)given;
	ret = plan_make(ctx, opts, &g, &plan);
	if (ret)
		return ret;
	plan_print(&g, &plan);
	if (opts->dry_run)
		return EXIT_OK;
	pr_flush();
	return plan_run(ctx, &g, &plan);
}

static const struct cmd mig_cmds[] = {
	{ "show", mig_show_args, sizeof(struct mig_show_opts), mig_show },
	{ "profiles", mig_gpu_args, sizeof(struct mig_gpu_opts), mig_profiles },
	{ "mode", mig_mode_args, sizeof(struct mig_mode_opts), mig_mode },
	{ "create", mig_create_args, sizeof(struct mig_create_opts),
	  mig_create },
	{ "destroy", mig_destroy_args, sizeof(struct mig_destroy_opts),
	  mig_destroy },
	{ "plan", mig_plan_args, sizeof(struct mig_plan_opts), mig_plan_cmd },
	{ "apply", mig_apply_args, sizeof(struct mig_plan_opts),
	  mig_apply_cmd },
	{ .name = NULL }
};

const struct object mig_object = {
	.name = "mig",
	.cmds = mig_cmds,
};
