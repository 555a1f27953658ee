// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the planner of "gpuvirtctl apply" and "assert"
 * (user/plan.c), which does no I/O: each test parses a file with the real
 * configuration parser, builds the state of a host by hand (GPUs, their
 * MIG state, vGPUs, the kernel's answers for types, what the passthrough
 * preflight found, the other stacks' sysfs) and checks the steps, in order,
 * with what each sets, and the conflicts, word for word.
 *
 * The GPUs and devices of these states exist nowhere on the machine that
 * runs the test: a planner that read sysfs or asked the kernel would see
 * them missing and report conflicts that the tests do not expect.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include <uapi/linux/gpuvirt.h>

#include "config.h"
#include "plan.h"

#define U1	"5a3c0001-0000-4000-8000-000000000001"
#define U2	"5a3c0001-0000-4000-8000-000000000002"
#define U3	"5a3c0001-0000-4000-8000-000000000003"
#define U9	"5a3c0001-0000-4000-8000-000000000009"

#define H200_VRAM	(141ULL << 30)

FIXTURE(plan) {
	struct config cfg;
	struct state st;
	struct plan pl;
	bool parsed;
};

FIXTURE_SETUP(plan)
{
	memset(self, 0, sizeof(*self));
}

FIXTURE_TEARDOWN(plan)
{
	plan_free(&self->pl);
	state_free(&self->st);
	if (self->parsed)
		config_free(&self->cfg);
}

/* Parse @text as the file "t.yaml"; a test's file is always valid. */
static int parse(struct __test_metadata *_metadata, struct config *cfg,
		 const char *text)
{
	char err[512] = "";
	int ret = config_parse("t.yaml", text, strlen(text), cfg, err,
			       sizeof(err));

	if (ret)
		TH_LOG("%s", err);
	return ret;
}

#define PARSE(text)							\
	do {								\
		ASSERT_EQ(0, parse(_metadata, &self->cfg, (text)));	\
		self->parsed = true;					\
	} while (0)

/* A simulated GPU of @model, time-sliced, best-effort, homogeneous. */
static struct cur_gpu *add_gpu(struct state *st, uint32_t id,
			       const char *model)
{
	struct cur_gpu *g = plan_append(&st->gpus, &st->n_gpus, sizeof(*g));

	if (!g)
		return NULL;
	g->id = id;
	snprintf(g->name, sizeof(g->name), "sim%u", id);
	snprintf(g->model, sizeof(g->model), "%s", model);
	snprintf(g->backend, sizeof(g->backend), "gpuvirt_sim");
	g->vram = H200_VRAM;
	g->engines = 8;
	g->has_sched = true;
	g->policy = GPUVIRT_SCHED_POLICY_BEST_EFFORT;
	g->timeslice_us = 1000;
	g->vgpu_mode = CONFIG_VGPU_MODE_HOMOGENEOUS;
	/* the simulated GPU's PCI function: VFs from function 1 on */
	g->vgpu_model = CONFIG_VGPU_MODEL_MDEV;
	g->num_vfs = 0;
	g->max_vfs = 16;
	snprintf(g->dev, sizeof(g->dev), "%04x:00:00.0", 0x8000 + id);
	g->vf_offset = 1;
	g->vf_stride = 1;
	g->has_mig = true;
	g->mig.id = id;
	snprintf(g->mig.model, sizeof(g->mig.model), "%s", model);
	g->mig.table_err = mig_table(model, g->vram, g->engines, &g->mig.table);
	gpuvirt_mig_layout_init(&g->mig.layout);
	return g;
}

static struct cur_vgpu *add_vgpu(struct state *st, const char *uuid,
				 uint32_t gpu, const char *type)
{
	struct cur_vgpu *v = plan_append(&st->vgpus, &st->n_vgpus, sizeof(*v));

	if (!v)
		return NULL;
	snprintf(v->uuid, sizeof(v->uuid), "%s", uuid);
	v->gpu = gpu;
	snprintf(v->type, sizeof(v->type), "%s", type);
	v->weight = 100;
	v->max_pct = 100;
	return v;
}

/* The kernel's answer to "does GPU @gpu offer @type". */
static int add_type(struct state *st, uint32_t gpu, const char *type,
		    int err)
{
	struct cur_type *t = plan_append(&st->types, &st->n_types, sizeof(*t));

	if (!t)
		return -1;
	t->gpu = gpu;
	snprintf(t->type, sizeof(t->type), "%s", type);
	t->err = err;
	return 0;
}

/* GI @profile of GPU @g at @start, as the kernel would place it. */
static int add_gi(struct cur_gpu *g, const char *profile, int start)
{
	struct gpuvirt_mig_why why;
	int p = gpuvirt_mig_profile_find(&g->mig.table, profile);

	if (p < 0)
		return -1;
	return gpuvirt_mig_gi_add(&g->mig.table, &g->mig.layout,
				  (unsigned int)p, start, &why);
}

static const char *const kind_names[STEP_KINDS] = {
	[STEP_SIM_ADD] = "sim+", [STEP_VGPU_DEL] = "vgpu-",
	[STEP_MIG_MODE] = "mig~", [STEP_GI_DEL] = "gi-", [STEP_GI_ADD] = "gi+",
	[STEP_MODE] = "mode~", [STEP_SCHED] = "sched~",
	[STEP_VGPU_SET] = "vgpu~", [STEP_VGPU_ADD] = "vgpu+",
	[STEP_PT_DEL] = "pt-", [STEP_PT_ADD] = "pt+", [STEP_STK] = "stk",
	[STEP_MODEL] = "model~", [STEP_VFS] = "vfs~",
};

/* The plan as "kind subject" words, one per step, for one comparison. */
static const char *steps_str(const struct plan *pl)
{
	static char buf[2048];
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < pl->n_steps && used < sizeof(buf); i++) {
		const struct step *s = &pl->steps[i];
		const char *subj;
		char num[16];

		switch (s->kind) {
		case STEP_VGPU_DEL:
		case STEP_VGPU_SET:
		case STEP_VGPU_ADD:
			if (s->vf[0])	/* "vf0.1" */
				snprintf(num, sizeof(num), "vf%s",
					 s->vf + strlen(s->vf) - 3);
			subj = s->vf[0] ? num :
			       s->uuid + strlen(s->uuid) - 2;	/* "01" */
			break;
		case STEP_GI_DEL:
		case STEP_GI_ADD:
			snprintf(num, sizeof(num), "%u@%u", s->gi, s->start);
			subj = num;
			break;
		case STEP_PT_DEL:
		case STEP_PT_ADD:
			subj = s->pt.device;
			break;
		default:
			snprintf(num, sizeof(num), "%u", s->gpu);
			subj = num;
		}
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s %s",
					 i ? ", " : "", kind_names[s->kind],
					 subj);
	}
	return buf;
}

static const char *conflicts_str(const struct plan *pl)
{
	static char buf[4096];
	size_t used = 0, i;

	buf[0] = '\0';
	for (i = 0; i < pl->n_conflicts && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s",
					 i ? " | " : "", pl->conflicts[i]);
	return buf;
}

#define PLAN(prune)							\
	do {								\
		plan_build("t.yaml", &self->cfg, &self->st, (prune),	\
			   &self->pl);					\
		ASSERT_FALSE(self->pl.oom);				\
	} while (0)

#define STEPS_ARE(want)	ASSERT_STREQ((want), steps_str(&self->pl))
#define CONFLICTS_ARE(want) ASSERT_STREQ((want), conflicts_str(&self->pl))

/* Our GPUs ------------------------------------------------------------------- */

/* A new simulated GPU: made, its scheduler set, its vGPUs created. */
TEST_F(plan, new_gpu)
{
	const struct step *s;

	PARSE("simulated-gpus:\n"
	      "  - {id: 0, model: h200-141gb}\n"
	      "gpus:\n"
	      "  - id: 0\n"
	      "    sched: {policy: equal-share, timeslice-us: 2000}\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C, weight: 200, min-pct: 10}\n"
	      "      - {uuid: " U2 ", type: H200-35C}\n");
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("sim+ 0, sched~ 0, vgpu+ 01, vgpu+ 02");
	s = &self->pl.steps[1];
	EXPECT_EQ((unsigned int)(SET_POLICY | SET_TIMESLICE), s->mask);
	EXPECT_EQ((unsigned int)(GPUVIRT_SCHED_POLICY_BEST_EFFORT), s->old.policy);
	EXPECT_EQ((unsigned int)(GPUVIRT_SCHED_POLICY_EQUAL_SHARE), s->want.policy);
	EXPECT_EQ(2000U, s->want.timeslice_us);
	s = &self->pl.steps[2];
	EXPECT_STREQ("H200-35C", s->type);
	EXPECT_EQ((unsigned int)(SET_WEIGHT | SET_MIN), s->mask);
	EXPECT_EQ(200U, s->want.weight);
	EXPECT_EQ(10U, s->want.min_pct);
	EXPECT_FALSE(s->on_gi);
	EXPECT_EQ(0U, self->pl.steps[3].mask);
	EXPECT_EQ(&self->cfg.sims[0], self->pl.steps[0].sim);
}

/* What is as the file says needs nothing, and asks nothing. */
TEST_F(plan, nothing_to_do)
{
	struct cur_vgpu *v;

	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    vgpu-mode: homogeneous\n"
	      "    sched: {policy: best-effort, timeslice-us: 1000}\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C, weight: 300}\n");
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	v = add_vgpu(&self->st, U1, 0, "H200-35C");
	ASSERT_NE(NULL, v);
	v->weight = 300;
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("");
}

/* Minimums that go down are set before those that go up. */
TEST_F(plan, lowered_minimums_first)
{
	struct cur_vgpu *v;

	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C, min-pct: 60}\n"
	      "      - {uuid: " U2 ", type: H200-35C, min-pct: 10, max-pct: 40}\n"
	      "      - {uuid: " U3 ", type: H200-35C, weight: 50}\n");
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	v = add_vgpu(&self->st, U1, 0, "H200-35C");
	ASSERT_NE(NULL, v);
	v->min_pct = 20;
	v = add_vgpu(&self->st, U2, 0, "H200-35C");
	ASSERT_NE(NULL, v);
	v->min_pct = 70;
	ASSERT_NE(NULL, add_vgpu(&self->st, U3, 0, "H200-35C"));
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("vgpu~ 02, vgpu~ 01, vgpu~ 03");
	EXPECT_EQ((unsigned int)(SET_MIN | SET_MAX), self->pl.steps[0].mask);
	EXPECT_EQ(70U, self->pl.steps[0].old.min_pct);
	EXPECT_EQ(40U, self->pl.steps[0].want.max_pct);
	EXPECT_EQ((unsigned int)(SET_MIN), self->pl.steps[1].mask);
	EXPECT_EQ((unsigned int)(SET_WEIGHT), self->pl.steps[2].mask);
	EXPECT_EQ(100U, self->pl.steps[2].old.weight);
}

/* --prune removes what no GPU of the file lists; without it all stays. */
TEST_F(plan, prune)
{
	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    vgpu-mode: mixed\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C}\n");
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	ASSERT_NE(NULL, add_vgpu(&self->st, U1, 0, "H200-35C"));
	ASSERT_NE(NULL, add_vgpu(&self->st, U9, 0, "H200-70C"));
	PLAN(false);
	/* U1 and U9 stay: the mode cannot change. */
	CONFLICTS_ARE("t.yaml:2: GPU 0: vgpu-mode can only change while the GPU has no vGPUs, and it keeps 2");
	STEPS_ARE("");
	plan_free(&self->pl);

	PLAN(true);
	CONFLICTS_ARE("t.yaml:2: GPU 0: vgpu-mode can only change while the GPU has no vGPUs, and it keeps 1");
	STEPS_ARE("vgpu- 09");
	EXPECT_STREQ("H200-70C", self->pl.steps[0].type);
}

TEST_F(plan, vgpu_mode)
{
	struct cur_gpu *g;

	PARSE("gpus:\n"
	      "  - {id: 0, vgpu-mode: mixed}\n"
	      "  - {id: 1, vgpu-mode: mixed}\n");
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	g = add_gpu(&self->st, 1, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_mode = -1;	/* a kernel that does not report it */
	PLAN(false);
	CONFLICTS_ARE("t.yaml:3: the kernel reports no vgpu-mode for GPU 1");
	STEPS_ARE("mode~ 0");
	EXPECT_EQ((unsigned int)(CONFIG_VGPU_MODE_HOMOGENEOUS), self->pl.steps[0].old.mode);
	EXPECT_EQ((unsigned int)(CONFIG_VGPU_MODE_MIXED), self->pl.steps[0].want.mode);
}

/* The kernel's answers about types, and their absence. */
TEST_F(plan, types)
{
	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C}\n"
	      "      - {uuid: " U2 ", type: A100-4C}\n"
	      "      - {uuid: " U3 ", type: H200-70C}\n");
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	ASSERT_EQ(0, add_type(&self->st, 0, "H200-35C", 0));
	ASSERT_EQ(0, add_type(&self->st, 0, "A100-4C", -ENOENT));
	PLAN(false);
	CONFLICTS_ARE("t.yaml:5: GPU 0 offers no vGPU type A100-4C | "
		      "t.yaml:6: cannot look up vGPU type H200-70C of GPU 0: No data available");
	STEPS_ARE("vgpu+ 01");
}

/* vGPUs that exist otherwise than the file says, and GPUs that do not. */
TEST_F(plan, refusals)
{
	PARSE("simulated-gpus:\n"
	      "  - {id: 1, model: a100-40gb}\n"
	      "  - {id: 2, model: custom, vram: 16G, engines: 4}\n"
	      "gpus:\n"
	      "  - id: 0\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C}\n"
	      "      - {uuid: " U2 ", type: H200-35C}\n"
	      "  - id: 5\n");
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	ASSERT_NE(NULL, add_gpu(&self->st, 1, "h200-141gb"));
	ASSERT_NE(NULL, add_gpu(&self->st, 2, "custom"));
	ASSERT_NE(NULL, add_vgpu(&self->st, U1, 1, "H200-35C"));
	ASSERT_NE(NULL, add_vgpu(&self->st, U2, 0, "H200-70C"));
	PLAN(false);
	CONFLICTS_ARE("t.yaml:2: simulated GPU 1 exists with model h200-141gb, not a100-40gb | "
		      "t.yaml:3: simulated GPU 2 exists with vram 141G and 8 engines, not 16G and 4 | "
		      "t.yaml:7: vGPU " U1 " exists on GPU 1, not on GPU 0 | "
		      "t.yaml:8: vGPU " U2 " exists with type H200-70C, not H200-35C; remove it first (gpuvirtctl vgpu del uuid " U2 ") | "
		      "t.yaml:9: GPU 5 does not exist");
	STEPS_ARE("");
}

/* A GPU of another backend is not a simulated GPU of the file. */
TEST_F(plan, not_simulated)
{
	struct cur_gpu *g;

	PARSE("simulated-gpus:\n"
	      "  - {id: 0, model: h200-141gb}\n"
	      "gpus:\n"
	      "  - {id: 0, sched: {policy: fixed-share}}\n");
	g = add_gpu(&self->st, 0, "h200-141gb");
	ASSERT_NE(NULL, g);
	snprintf(g->backend, sizeof(g->backend), "vendor");
	g->has_sched = false;
	PLAN(false);
	CONFLICTS_ARE("t.yaml:2: GPU 0 exists and is not a simulated GPU (backend vendor) | "
		      "t.yaml:4: the kernel reports no scheduler for GPU 0");
	STEPS_ARE("");
}

/* MIG ------------------------------------------------------------------------- */

/* A new GPU's partition: the mode, the GIs in plan order, the vGPU. */
TEST_F(plan, mig_new_gpu)
{
	const struct step *s;

	PARSE("simulated-gpus:\n"
	      "  - {id: 2, model: h200-141gb}\n"
	      "gpus:\n"
	      "  - id: 2\n"
	      "    mig: {mode: on, instances: [3g.71gb, 2g.35gb, 1g.18gbx2]}\n"
	      "    vgpus:\n"
	      "      - {uuid: " U2 ", type: H200-3-71C}\n");
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("sim+ 2, mig~ 2, gi+ 0@4, gi+ 1@0, gi+ 2@2, gi+ 3@3, vgpu+ 02");
	EXPECT_TRUE(self->pl.steps[1].want.mig);
	EXPECT_STREQ("3g.71gb", self->pl.steps[2].profile);
	EXPECT_EQ(4U, self->pl.steps[2].slots);
	s = &self->pl.steps[6];
	EXPECT_TRUE(s->on_gi);
	EXPECT_EQ(0U, s->gi);
}

/* A GI with a vGPU stays where it is; an idle one in the way goes. */
TEST_F(plan, mig_busy_gi_stays)
{
	struct cur_gpu *g;
	struct cur_vgpu *v;

	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    mig: {mode: on, instances: [4g.71gb, 3g.71gb]}\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-3-71C}\n");
	g = add_gpu(&self->st, 0, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->mig.mig = true;
	ASSERT_EQ(0, add_gi(g, "3g.71gb", 4));		/* GI 0, busy */
	ASSERT_EQ(1, add_gi(g, "2g.35gb", 0));		/* GI 1, idle */
	g->mig.busy = 1U << 0;
	v = add_vgpu(&self->st, U1, 0, "H200-3-71C");
	ASSERT_NE(NULL, v);
	v->has_gi = true;
	v->gi = 0;
	PLAN(true);
	CONFLICTS_ARE("");
	STEPS_ARE("gi- 1@0, gi+ 1@0");
	EXPECT_STREQ("2g.35gb", self->pl.steps[0].profile);
	EXPECT_STREQ("4g.71gb", self->pl.steps[1].profile);
}

TEST_F(plan, mig_refusals)
{
	struct cur_gpu *g;

	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    mig: {mode: off}\n"
	      "  - id: 1\n"
	      "    mig: {instances: [1g.5gb]}\n"
	      "  - id: 2\n"
	      "    mig: {instances: [7g.141gb]}\n"
	      "    vgpus:\n"
	      "      - {uuid: " U3 ", type: H200-35C}\n"
	      "  - id: 3\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C, gi: 1}\n");
	g = add_gpu(&self->st, 0, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->mig.mig = true;
	ASSERT_EQ(0, add_gi(g, "7g.141gb", 0));
	g->mig.busy = 1;
	ASSERT_NE(NULL, add_gpu(&self->st, 1, "h200-141gb"));
	ASSERT_NE(NULL, add_gpu(&self->st, 2, "h200-141gb"));
	ASSERT_NE(NULL, add_vgpu(&self->st, U9, 2, "H200-35C"));
	ASSERT_EQ(0, add_type(&self->st, 2, "H200-35C", 0));
	g = add_gpu(&self->st, 3, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->has_mig = false;	/* the kernel did not answer */
	PLAN(false);
	CONFLICTS_ARE("t.yaml:3: GPU 0: MIG mode off needs the GIs gone, and GI 0 has a vGPU | "
		      "t.yaml:5: GPU 1 (h200-141gb) has no GI profile 1g.5gb (expected one of 1g.18gb, 1g.18gb+me, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb) | "
		      "t.yaml:7: GPU 2: MIG mode can only be turned on without vGPUs, and it keeps 1 | "
		      "t.yaml:10: cannot read the MIG state of GPU 3");
	/* The steps that do not depend on what was refused are still shown. */
	STEPS_ARE("mig~ 0, vgpu+ 03");
}

/* The sriov vGPU model ------------------------------------------------------ */

/* A vGPU on VF @vf of GPU @gpu, typed @type, with the kernel's UUID @uuid. */
static struct cur_vgpu *add_vf_vgpu(struct state *st, const char *uuid,
				    uint32_t gpu, const char *type,
				    const char *vf)
{
	struct cur_vgpu *v = add_vgpu(st, uuid, gpu, type);

	if (v)
		snprintf(v->vf, sizeof(v->vf), "%s", vf);
	return v;
}

/* A new GPU: the model, then its VFs, then the vGPUs on them. */
TEST_F(plan, sriov_new_gpu)
{
	const struct step *s;

	PARSE("simulated-gpus:\n"
	      "  - {id: 0, model: h200-141gb}\n"
	      "gpus:\n"
	      "  - id: 0\n"
	      "    vgpu-model: sriov\n"
	      "    vfs: 4\n"
	      "    vgpus:\n"
	      "      - {vf: 8000:00:00.1, type: H200-35C, weight: 300}\n"
	      "      - {vf: 8000:00:00.3, type: H200-35C}\n");
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("sim+ 0, model~ 0, vfs~ 0, vgpu+ vf0.1, vgpu+ vf0.3");
	s = &self->pl.steps[1];
	EXPECT_EQ((unsigned int)SET_MODEL, s->mask);
	EXPECT_EQ((unsigned int)CONFIG_VGPU_MODEL_MDEV, s->old.model);
	EXPECT_EQ((unsigned int)CONFIG_VGPU_MODEL_SRIOV, s->want.model);
	s = &self->pl.steps[2];
	EXPECT_EQ((unsigned int)SET_VFS, s->mask);
	EXPECT_EQ(0U, s->old.vfs);
	EXPECT_EQ(4U, s->want.vfs);
	s = &self->pl.steps[3];
	EXPECT_STREQ("8000:00:00.1", s->vf);
	EXPECT_STREQ("", s->uuid);	/* the kernel's choice */
	EXPECT_STREQ("H200-35C", s->type);
	EXPECT_EQ((unsigned int)SET_WEIGHT, s->mask);
	EXPECT_EQ(300U, s->want.weight);
}

/* An existing GPU: what is in place stays; settings go by the kernel's UUID. */
TEST_F(plan, sriov_existing)
{
	struct cur_gpu *g;
	struct cur_vgpu *v;

	PARSE("gpus:\n"
	      "  - id: 1\n"
	      "    vgpu-model: sriov\n"
	      "    vfs: 2\n"
	      "    vgpus:\n"
	      "      - {vf: 8001:00:00.1, type: H200-35C, weight: 300}\n"
	      "      - {vf: 8001:00:00.2, type: H200-35C}\n");
	g = add_gpu(&self->st, 1, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_model = CONFIG_VGPU_MODEL_SRIOV;
	g->num_vfs = 2;
	v = add_vf_vgpu(&self->st, U9, 1, "H200-35C", "8001:00:00.1");
	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, add_type(&self->st, 1, "H200-35C", 0));
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("vgpu~ vf0.1, vgpu+ vf0.2");
	EXPECT_STREQ("8001:00:00.1", self->pl.steps[0].vf);
	EXPECT_STREQ(U9, self->pl.steps[0].uuid);	/* set by its UUID */
	EXPECT_EQ(100U, self->pl.steps[0].old.weight);
	EXPECT_EQ(300U, self->pl.steps[0].want.weight);
	plan_free(&self->pl);

	/* as the file says: nothing to do */
	v->weight = 300;
	ASSERT_NE(NULL, add_vf_vgpu(&self->st, U2, 1, "H200-35C",
				    "8001:00:00.2"));
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("");
}

/* --prune: an unlisted VF vGPU goes by its VF; leaving the model, VFs first. */
TEST_F(plan, sriov_prune_and_leave)
{
	struct cur_gpu *g;

	PARSE("gpus:\n"
	      "  - {id: 0, vgpu-model: mdev}\n");
	g = add_gpu(&self->st, 0, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_model = CONFIG_VGPU_MODEL_SRIOV;
	g->num_vfs = 3;
	ASSERT_NE(NULL, add_vf_vgpu(&self->st, U1, 0, "H200-35C",
				    "8000:00:00.2"));
	PLAN(false);
	CONFLICTS_ARE("t.yaml:2: GPU 0: vgpu-model can only change while the GPU has no vGPUs, and it keeps 1");
	STEPS_ARE("");
	plan_free(&self->pl);

	PLAN(true);
	CONFLICTS_ARE("");
	STEPS_ARE("vgpu- vf0.2, vfs~ 0, model~ 0");
	EXPECT_STREQ(U1, self->pl.steps[0].uuid);
	EXPECT_STREQ("H200-35C", self->pl.steps[0].type);
	EXPECT_EQ(3U, self->pl.steps[1].old.vfs);
	EXPECT_EQ(0U, self->pl.steps[1].want.vfs);
	EXPECT_EQ((unsigned int)CONFIG_VGPU_MODEL_MDEV,
		  self->pl.steps[2].want.model);
}

/* What the sriov model refuses, word for word. */
TEST_F(plan, sriov_refusals)
{
	struct cur_gpu *g;

	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C}\n"
	      "      - {vf: 8000:00:00.5, type: H200-35C}\n"
	      "      - {vf: 8002:00:00.1, type: H200-35C}\n"
	      "      - {vf: 8000:00:00.1, type: H200-70C}\n"
	      "  - id: 1\n"
	      "    vgpus:\n"
	      "      - {vf: 8001:00:00.1, type: H200-35C}\n"
	      "  - {id: 2, vgpu-model: sriov, vfs: 17}\n"
	      "  - {id: 3, vgpu-model: sriov, vfs: 2}\n"
	      "  - {id: 4, vgpu-model: sriov}\n"
	      "  - {id: 5, vfs: 2}\n");
	g = add_gpu(&self->st, 0, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_model = CONFIG_VGPU_MODEL_SRIOV;
	g->num_vfs = 4;
	ASSERT_NE(NULL, add_vf_vgpu(&self->st, U9, 0, "H200-35C",
				    "8000:00:00.1"));
	ASSERT_EQ(0, add_type(&self->st, 0, "H200-35C", 0));
	ASSERT_NE(NULL, add_gpu(&self->st, 1, "h200-141gb"));
	g = add_gpu(&self->st, 2, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_model = CONFIG_VGPU_MODEL_SRIOV;
	g = add_gpu(&self->st, 3, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_model = CONFIG_VGPU_MODEL_SRIOV;
	g->num_vfs = 4;
	ASSERT_NE(NULL, add_vf_vgpu(&self->st, U3, 3, "H200-35C",
				    "8003:00:00.4"));
	g = add_gpu(&self->st, 4, "h200-141gb");
	ASSERT_NE(NULL, g);
	ASSERT_EQ(0, add_gi(g, "7g.141gb", -1));
	ASSERT_NE(NULL, add_gpu(&self->st, 5, "h200-141gb"));
	PLAN(false);
	CONFLICTS_ARE("t.yaml:4: vGPU " U1 ": GPU 0 has the sriov vGPU model, whose vGPUs are VFs listed by \"vf\""
		      " | t.yaml:5: 8000:00:00.5 is not one of the 4 VFs GPU 0 (8000:00:00.0) will have (set \"vfs\")"
		      " | t.yaml:6: 8002:00:00.1 is not one of the 4 VFs GPU 0 (8000:00:00.0) will have (set \"vfs\")"
		      " | t.yaml:7: VF 8000:00:00.1 has a vGPU of type H200-35C, not H200-70C; clear it first (gpuvirtctl vgpu del vf 8000:00:00.1)"
		      " | t.yaml:10: vGPU on VF 8001:00:00.1: GPU 1 has the mdev vGPU model (add vgpu-model: sriov)"
		      " | t.yaml:11: GPU 2 has at most 16 VFs, not 17"
		      " | t.yaml:12: GPU 3 has 4 VFs, not 2: the kernel changes the count only through 0, which ends every VF, and 1 of them keep a vGPU"
		      " | t.yaml:13: GPU 4: vgpu-model can only change while the GPU has no GPU instances, and it has 1; remove them first (gpuvirtctl mig gi del)"
		      " | t.yaml:14: GPU 5: \"vfs\" needs the sriov vGPU model, and the GPU has mdev (add vgpu-model: sriov)");
	STEPS_ARE("");
}

/* The VFs of a new GPU are waited for when vGPUs on them follow. */
TEST_F(plan, sriov_waits_for_the_vfs_it_types)
{
	PARSE("simulated-gpus:\n"
	      "  - {id: 0, model: h200-141gb}\n"
	      "  - {id: 1, model: h200-141gb}\n"
	      "gpus:\n"
	      "  - id: 0\n"
	      "    vgpu-model: sriov\n"
	      "    vfs: 4\n"
	      "    vgpus:\n"
	      "      - {vf: 8000:00:00.4, type: H200-35C}\n"
	      "  - {id: 1, vgpu-model: sriov, vfs: 2}\n");
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("sim+ 0, sim+ 1, model~ 0, vfs~ 0, vgpu+ vf0.4, model~ 1, vfs~ 1");
	EXPECT_TRUE(self->pl.steps[3].wait_vfs);
	EXPECT_FALSE(self->pl.steps[6].wait_vfs);
}

/*
 * Full GPUs: what they hold is as the file says, and nothing is asked of
 * the room left (no type answer is in the state: asking would conflict).
 */
TEST_F(plan, full_gpus_have_nothing_to_do)
{
	static const char *const uu[] = { U1, U2, U3, U9 };
	char vf[CONFIG_BDF_LEN];
	struct cur_gpu *g;
	struct cur_vgpu *v;
	unsigned int i;

	PARSE("gpus:\n"
	      "  - id: 0\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: H200-35C, weight: 200}\n"
	      "      - {uuid: " U2 ", type: H200-35C}\n"
	      "      - {uuid: " U3 ", type: H200-35C}\n"
	      "      - {uuid: " U9 ", type: H200-35C}\n"
	      "  - id: 1\n"
	      "    vgpu-model: sriov\n"
	      "    vfs: 4\n"
	      "    vgpus:\n"
	      "      - {vf: 8001:00:00.1, type: H200-35C}\n"
	      "      - {vf: 8001:00:00.2, type: H200-35C, weight: 300}\n"
	      "      - {vf: 8001:00:00.3, type: H200-35C}\n"
	      "      - {vf: 8001:00:00.4, type: H200-35C}\n"
	      "  - id: 2\n"
	      "    mig: {mode: on, instances: [3g.71gb, 2g.35gb, 1g.18gbx2]}\n"
	      "    vgpus:\n"
	      "      - {uuid: 5a3c0001-0000-4000-8000-000000000021, type: H200-3-71C, gi: 0}\n"
	      "      - {uuid: 5a3c0001-0000-4000-8000-000000000022, type: H200-2-35C}\n"
	      "      - {uuid: 5a3c0001-0000-4000-8000-000000000023, type: H200-1-18C}\n"
	      "      - {uuid: 5a3c0001-0000-4000-8000-000000000024, type: H200-1-18C, gi: 3}\n");
	/* GPU 0: four H200-35C, the most it takes */
	ASSERT_NE(NULL, add_gpu(&self->st, 0, "h200-141gb"));
	for (i = 0; i < 4; i++) {
		v = add_vgpu(&self->st, uu[i], 0, "H200-35C");
		ASSERT_NE(NULL, v);
		v->weight = i ? 100 : 200;
	}
	/* GPU 1: its four VFs typed, none lists a type any more */
	g = add_gpu(&self->st, 1, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->vgpu_model = CONFIG_VGPU_MODEL_SRIOV;
	g->num_vfs = 4;
	for (i = 0; i < 4; i++) {
		snprintf(vf, sizeof(vf), "8001:00:00.%u", (i + 1) & 7);
		v = add_vf_vgpu(&self->st, uu[i], 1, "H200-35C", vf);
		ASSERT_NE(NULL, v);
		v->weight = i == 1 ? 300 : 100;
	}
	/* GPU 2: MIG, a vGPU on every GI */
	g = add_gpu(&self->st, 2, "h200-141gb");
	ASSERT_NE(NULL, g);
	g->mig.mig = true;
	ASSERT_EQ(0, add_gi(g, "3g.71gb", 4));
	ASSERT_EQ(1, add_gi(g, "2g.35gb", 0));
	ASSERT_EQ(2, add_gi(g, "1g.18gb", 2));
	ASSERT_EQ(3, add_gi(g, "1g.18gb", 3));
	g->mig.busy = 0xf;
	for (i = 0; i < 4; i++) {
		static const char *const t[] = {
			"H200-3-71C", "H200-2-35C", "H200-1-18C", "H200-1-18C",
		};
		char u[UNITS_UUID_LEN];

		snprintf(u, sizeof(u), "5a3c0001-0000-4000-8000-00000000002%u",
			 i + 1);
		v = add_vgpu(&self->st, u, 2, t[i]);
		ASSERT_NE(NULL, v);
		v->has_gi = true;
		v->gi = i;
	}
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("");
	plan_free(&self->pl);
	PLAN(true);
	CONFLICTS_ARE("");
	STEPS_ARE("");
}


/* Passthrough ------------------------------------------------------------------ */

/* A preflight report of @bdf, alone in IOMMU group @group, bound to @drv. */
static void pt_fact(struct cur_pt *c, const char *bdf, int group,
		    const char *drv, bool loaded)
{
	struct pt_dev *m = &c->r.members[0];

	snprintf(c->r.dev.bdf, sizeof(c->r.dev.bdf), "%s", bdf);
	c->r.group = group;
	c->r.n_members = 1;
	snprintf(m->bdf, sizeof(m->bdf), "%s", bdf);
	snprintf(m->driver, sizeof(m->driver), "%s", drv);
	m->role = PT_ROLE_TARGET;
	m->group = group;
	c->r.assignable = true;
	c->driver_loaded = loaded;
	snprintf(c->driver_dir, sizeof(c->driver_dir),
		 "/sys/bus/pci/drivers/gpuvirt_vfio_pci");
}

TEST_F(plan, passthrough)
{
	struct state *st = &self->st;
	struct pt_state *rec;

	PARSE("passthrough:\n"
	      "  - device: 0000:01:00.0\n"		/* to assign */
	      "  - device: 0000:02:00.0\n"		/* in place */
	      "  - device: 0000:03:00.0\n"		/* refused */
	      "  - device: 0000:04:00.0\n"		/* group of line 2 */
	      "  - device: 0000:05:00.0\n"		/* driver missing */
	      "  - device: 0000:06:00.0\n");	/* preflight failed */
	st->pts = calloc(6, sizeof(*st->pts));
	ASSERT_NE(NULL, st->pts);
	pt_fact(&st->pts[0], "0000:01:00.0", 11, "bochs-drm", true);
	pt_fact(&st->pts[1], "0000:02:00.0", 12, "gpuvirt_vfio_pci", true);
	st->pts[1].has_old = true;
	snprintf(st->pts[1].old.device, PT_BDF_LEN, "0000:02:00.0");
	snprintf(st->pts[1].old.driver, PT_NAME_LEN, "gpuvirt_vfio_pci");
	st->pts[1].old.n = 1;
	snprintf(st->pts[1].old_driver[0], PT_NAME_LEN, "gpuvirt_vfio_pci");
	pt_fact(&st->pts[2], "0000:03:00.0", 13, "nvme", true);
	st->pts[2].r.assignable = false;
	st->pts[2].r.n_reasons = 1;
	st->pts[2].r.reasons[0].level = PT_LEVEL_FORCE;
	snprintf(st->pts[2].r.reasons[0].text,
		 sizeof(st->pts[2].r.reasons[0].text), "a host driver holds it");
	pt_fact(&st->pts[3], "0000:04:00.0", 11, "snd", true);
	pt_fact(&st->pts[4], "0000:05:00.0", 15, "", false);
	st->pts[5].check = -1;
	snprintf(st->pts[5].err, sizeof(st->pts[5].err),
		 "no PCI device 0000:06:00.0");
	/* --prune: an assignment on record that no entry covers */
	st->pt_list = calloc(1, sizeof(*st->pt_list));
	ASSERT_NE(NULL, st->pt_list);
	st->n_pt_list = 1;
	rec = &st->pt_list[0];
	snprintf(rec->device, PT_BDF_LEN, "0000:09:00.0");
	snprintf(rec->driver, PT_NAME_LEN, "vfio-pci");
	rec->persistent = true;

	PLAN(true);
	CONFLICTS_ARE("t.yaml:4: refusing 0000:03:00.0: force: a host driver holds it (\"force: true\" accepts the reasons marked force) | "
		      "t.yaml:5: 0000:04:00.0 is in IOMMU group 11 with 0000:01:00.0 (line 2): a group is assigned as a whole, list one of its devices | "
		      "t.yaml:6: refusing 0000:05:00.0: driver gpuvirt_vfio_pci is not loaded (no /sys/bus/pci/drivers/gpuvirt_vfio_pci): modprobe gpuvirt_vfio_pci first | "
		      "t.yaml:7: no PCI device 0000:06:00.0");
	STEPS_ARE("pt- 0000:09:00.0, pt+ 0000:01:00.0");
	EXPECT_TRUE(self->pl.steps[0].pt.force);
	EXPECT_TRUE(self->pl.steps[0].pt.persistent);
	EXPECT_STREQ("vfio-pci", self->pl.steps[0].pt.driver);
	EXPECT_STREQ("gpuvirt_vfio_pci", self->pl.steps[1].pt.driver);
	EXPECT_FALSE(self->pl.steps[1].pt.force);
}

/* An assignment on record whose member went to another driver is redone. */
TEST_F(plan, passthrough_redone)
{
	struct cur_pt *c;

	PARSE("passthrough:\n"
	      "  - {device: 0000:02:00.0, driver: vfio-pci}\n");
	self->st.pts = calloc(1, sizeof(*self->st.pts));
	ASSERT_NE(NULL, self->st.pts);
	c = &self->st.pts[0];
	pt_fact(c, "0000:02:00.0", 12, "vfio-pci", true);
	c->has_old = true;
	snprintf(c->old.device, PT_BDF_LEN, "0000:02:00.0");
	snprintf(c->old.driver, PT_NAME_LEN, "vfio-pci");
	c->old.n = 1;
	snprintf(c->old_driver[0], PT_NAME_LEN, "nouveau");
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("pt- 0000:02:00.0, pt+ 0000:02:00.0");
}

/* The other stacks -------------------------------------------------------------- */

TEST_F(plan, stacks_unreadable)
{
	PARSE("gpus:\n"
	      "  - device: mtty\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: mtty-1}\n");
	self->st.stk_err = -EACCES;
	PLAN(false);
	CONFLICTS_ARE("t.yaml:2: cannot read the vGPU stacks in sysfs: Permission denied");
	STEPS_ARE("");
}

/* An mdev parent of another driver, as stk_scan() reads it. */
TEST_F(plan, stacks_create)
{
	struct stk_host *h = &self->st.stk;
	struct stk_dev *d;

	PARSE("gpus:\n"
	      "  - device: mtty\n"
	      "    vgpus:\n"
	      "      - {uuid: " U1 ", type: mtty-1}\n");
	h->devs = calloc(1, sizeof(*h->devs));
	ASSERT_NE(NULL, h->devs);
	h->n_devs = 1;
	d = &h->devs[0];
	d->kind = STK_MDEV;
	snprintf(d->name, sizeof(d->name), "mtty");
	d->types = calloc(1, sizeof(*d->types));
	ASSERT_NE(NULL, d->types);
	d->n_types = 1;
	snprintf(d->types[0].id, sizeof(d->types[0].id), "mtty-1");
	snprintf(d->types[0].name, sizeof(d->types[0].name), "Single port serial");
	d->types[0].available = 2;
	d->numvfs = -1;
	d->totalvfs = -1;
	PLAN(false);
	CONFLICTS_ARE("");
	STEPS_ARE("stk 0");
	EXPECT_FALSE(self->pl.steps[0].act->del);
	EXPECT_STREQ("mtty", self->pl.steps[0].act->dev);
	EXPECT_STREQ("mtty-1", self->pl.steps[0].act->type_id);
	EXPECT_STREQ(U1, self->pl.steps[0].act->handle);
}

/* A cold PF of NVIDIA's: its VFs, then their vGPUs, in one run. */
TEST_F(plan, stacks_cold_pf)
{
	struct stk_host *h = &self->st.stk;
	const struct stk_action *a;
	struct stk_dev *d;

	PARSE("gpus:\n"
	      "  - device: 0000:e1:00.0\n"
	      "    vfs: 32\n"
	      "    vgpus:\n"
	      "      - {vf: 0000:e1:00.4, type: H100-4C}\n"
	      "      - {vf: 0000:e1:04.3, type: H100-4C}\n"
	      "  - device: 0000:e2:00.0\n"
	      "    vfs: 8\n"
	      "    vgpus:\n"
	      "      - {vf: 0000:e2:01.4, type: H100-4C}\n");
	h->devs = calloc(2, sizeof(*h->devs));
	ASSERT_NE(NULL, h->devs);
	h->n_devs = 2;
	d = &h->devs[0];
	d->kind = STK_SRIOV;	/* no VF yet: plain SR-IOV as far as it shows */
	snprintf(d->name, sizeof(d->name), "0000:e1:00.0");
	snprintf(d->driver, sizeof(d->driver), "nvidia");
	d->numvfs = 0;
	d->totalvfs = 32;
	d->vf_offset = 4;
	d->vf_stride = 1;
	h->devs[1] = *d;
	snprintf(h->devs[1].name, sizeof(h->devs[1].name), "0000:e2:00.0");
	PLAN(false);
	CONFLICTS_ARE("t.yaml:10: 0000:e2:01.4 is not one of the 8 VFs 0000:e2:00.0 will have");
	STEPS_ARE("stk 0, stk 0, stk 0");
	a = self->pl.steps[0].act;
	EXPECT_EQ(32U, a->vfs);
	EXPECT_EQ(STK_NVVF, (int)a->kind);
	EXPECT_FALSE(a->pending);
	a = self->pl.steps[2].act;
	EXPECT_TRUE(a->pending);
	EXPECT_EQ(0U, a->vfs);
	EXPECT_EQ(STK_NVVF, (int)a->kind);
	EXPECT_STREQ("0000:e1:04.3", a->handle);
	EXPECT_STREQ("0000:e1:00.0", a->dev);
	EXPECT_STREQ("H100-4C", a->type_name);
	EXPECT_STREQ("", a->type_id);
}

TEST_HARNESS_MAIN
