// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of gpuvirtctl on the host's other vGPU stacks (user/stacks.c,
 * stack_mdev.c, stack_nvvf.c and the commands over them), on fake sysfs
 * trees built at run time by fixtures/stacks/mktree.sh from the
 * descriptions in fixtures/stacks/<name>.stk, each naming the public
 * source of its layout.
 *
 * Discovery is checked through stk_scan() on the tree. The commands that
 * write ("vgpu add", "vgpu del") run as the real gpuvirtctl binary with
 * --sysfs-root on a fresh tree in a temporary directory; the tests then
 * read what it wrote into the tree's create, remove and
 * current_vgpu_type files, and that every other file stayed as it was.
 */
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "stacks.h"

#ifndef STK_FIXTURES
#error "STK_FIXTURES: the directory of the fixture descriptions"
#endif
#ifndef GPUVIRTCTL
#error "GPUVIRTCTL: the gpuvirtctl binary under test"
#endif
#ifndef GPUVIRTCTL_MAN
#error "GPUVIRTCTL_MAN: its man page, gpuvirtctl.8"
#endif

#define H100_PF	"0000:41:00.0"
#define VF(x)	"/sys/bus/pci/devices/0000:41:" x "/nvidia/current_vgpu_type"
#define A100_T(vf, t) "/sys/class/mdev_bus/0000:81:00." vf "/mdev_supported_types/" t "/create"
#define GVT_T(t) "/sys/class/mdev_bus/0000:00:02.0/mdev_supported_types/" t "/create"
#define A100_VGPU "6f1c0a2e-0000-4000-8000-00000000a100"
#define GVT_VGPU "4b5a2f1e-0000-4000-8000-0000000091e0"

FIXTURE(host) {
	char root[PATH_MAX];
	struct stk_host h;
	char err[1024];
	char out[8192], errout[8192];
	int rc;
};

FIXTURE_SETUP(host)
{
	snprintf(self->root, sizeof(self->root), "%s/gv-stk.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT_NE(NULL, mkdtemp(self->root));
	memset(&self->h, 0, sizeof(self->h));
}

FIXTURE_TEARDOWN(host)
{
	char cmd[PATH_MAX + 16];

	stk_free(&self->h);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->root);
	if (system(cmd))
		TH_LOG("could not remove %s", self->root);
}

/*
 * mktree.sh forks for every directory and link it makes, which adds up to
 * seconds a tree on a busy host. So each tree is built once per run, into
 * a template directory of the harness's own process, and every test that
 * wants it on an empty root gets a copy (cp -a keeps the relative links).
 * The tests run in forked children: they inherit the template's path, and
 * only the process that made it removes it, at its exit.
 */
static char tmpl_dir[PATH_MAX];
static pid_t tmpl_owner;

__attribute__((constructor)) static void tmpl_init(void)
{
	snprintf(tmpl_dir, sizeof(tmpl_dir), "%s/gv-stk-tmpl.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpl_dir))
		tmpl_dir[0] = '\0';
	tmpl_owner = getpid();
}

__attribute__((destructor)) static void tmpl_fini(void)
{
	char cmd[PATH_MAX + 16];

	if (!tmpl_dir[0] || getpid() != tmpl_owner)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl_dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", tmpl_dir);
}

/* Add fixture @name to the tree at @root, by running mktree.sh. */
static int mktree(const char *root, const char *name)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "'%s/mktree.sh' '%s/%s.stk' '%s'",
		 STK_FIXTURES, STK_FIXTURES, name, root);
	return system(cmd);
}

/*
 * Give the empty tree at @root the fixtures @names, in order, from the
 * template @key (built on first use); a tree that already holds something
 * gets them from mktree.sh on top of it.
 */
static int build_tree(const char *root, const char *key,
		      const char *const *names, size_t n)
{
	char tmpl[PATH_MAX + 64], done[PATH_MAX + 80], cmd[4 * PATH_MAX];
	bool empty = true;
	struct dirent *e;
	size_t i;
	DIR *d;

	d = opendir(root);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	if (!empty || !tmpl_dir[0]) {
		for (i = 0; i < n; i++)
			if (mktree(root, names[i]))
				return -1;
		return 0;
	}

	snprintf(tmpl, sizeof(tmpl), "%s/%s", tmpl_dir, key);
	snprintf(done, sizeof(done), "%s.done", tmpl);
	if (access(done, F_OK)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd) || mkdir(tmpl, 0755))
			return -1;
		for (i = 0; i < n; i++)
			if (mktree(tmpl, names[i]))
				return -1;
		if (mknod(done, S_IFREG | 0644, 0))
			return -1;
	}
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s'", tmpl, root);
	return system(cmd);
}

/* Add fixture @name to the tree at @root. */
static int build(const char *root, const char *name)
{
	return build_tree(root, name, &name, 1);
}

/* A host with every fixture: each stack next to the others. */
static int build_all(const char *root)
{
	static const char *const all[] = {
		"h100-nvvf", "a100-mdev", "gvtg", "sriov", "ours",
	};

	return build_tree(root, "all", all, sizeof(all) / sizeof(all[0]));
}

/* The whole content of @root/@rel, or "<missing>". */
static const char *slurp(const char *root, const char *rel, char *buf,
			 size_t len)
{
	char path[2 * PATH_MAX];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		return "<missing>";
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Run gpuvirtctl --sysfs-root ROOT @args; stdout, stderr, exit status. */
static void run(struct _test_data_host *self, const char *args)
{
	char cmd[4 * PATH_MAX], path[2 * PATH_MAX];
	int st;

	snprintf(cmd, sizeof(cmd),
		 "'%s' --sysfs-root '%s' %s >'%s/.out' 2>'%s/.err'",
		 GPUVIRTCTL, self->root, args, self->root, self->root);
	st = system(cmd);
	self->rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp(self->root, "/.out", self->out, sizeof(self->out));
	slurp(self->root, "/.err", self->errout, sizeof(self->errout));
	snprintf(path, sizeof(path), "%s/.out", self->root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/.err", self->root);
	unlink(path);
}

#define RUN(args) run(self, args)
#define FILE_IS(rel, want)						\
	do {								\
		char b_[256];						\
		EXPECT_STREQ(want, slurp(self->root, rel, b_, sizeof(b_))); \
	} while (0)

static const struct stk_dev *dev(const struct stk_host *h, const char *name)
{
	unsigned int i;

	for (i = 0; i < h->n_devs; i++)
		if (!strcmp(h->devs[i].name, name))
			return &h->devs[i];
	return NULL;
}

/* Discovery ------------------------------------------------------------------ */

TEST_F(host, h100_nvidia_vf)
{
	const struct stk_dev *d;
	const struct stk_vgpu *g;

	ASSERT_EQ(0, build(self->root, "h100-nvvf"));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
	ASSERT_EQ(1U, self->h.n_devs);
	d = &self->h.devs[0];
	EXPECT_EQ(STK_NVVF, (int)d->kind);
	EXPECT_STREQ(H100_PF, d->name);
	EXPECT_STREQ("nvidia", d->driver);
	EXPECT_EQ(5, d->numvfs);
	EXPECT_EQ(32, d->totalvfs);
	ASSERT_EQ(5U, d->n_vfs);
	EXPECT_STREQ("0000:41:00.4", d->vfs[0].bdf);
	EXPECT_EQ(0U, d->vfs[0].current);
	EXPECT_EQ(5U, d->vfs[0].n_creatable);
	EXPECT_EQ(1065U, d->vfs[1].current);
	EXPECT_EQ(1060U, d->vfs[2].current);
	EXPECT_EQ(3, d->vfs[2].gi);
	EXPECT_EQ(0, d->vfs[2].placement);
	EXPECT_EQ(-1, d->vfs[1].gi);
	EXPECT_FALSE(d->vfs[1].in_use);
	EXPECT_TRUE(d->vfs[3].in_use);
	EXPECT_STREQ("0000:41:01.0", d->vfs[4].bdf);

	/* the header is no type; names after the separator */
	ASSERT_EQ(5U, d->n_types);
	EXPECT_STREQ("1060", d->types[0].id);
	EXPECT_STREQ("NVIDIA H100-1-10C", d->types[0].name);
	EXPECT_STREQ("1065", d->types[2].id);
	EXPECT_STREQ("NVIDIA H100-4C", d->types[2].name);
	EXPECT_STREQ("1068", d->types[4].id);
	/* free VFs listing it: 00.4 (all types) and 01.0 (time-sliced) */
	EXPECT_EQ(1, d->types[0].available);
	EXPECT_EQ(2, d->types[2].available);
	EXPECT_EQ(2, d->types[4].available);

	ASSERT_EQ(3U, self->h.n_vgpus);
	g = stk_find_vgpu(&self->h, "41:00.6");
	ASSERT_NE(NULL, g);
	EXPECT_EQ(STK_NVVF, (int)g->kind);
	EXPECT_STREQ(H100_PF, g->dev);
	EXPECT_STREQ("1060", g->type_id);
	EXPECT_STREQ("NVIDIA H100-1-10C", g->type_name);
	EXPECT_EQ(3, g->gi);
	g = stk_find_vgpu(&self->h, "0000:41:00.7");
	ASSERT_NE(NULL, g);
	EXPECT_TRUE(g->in_use);
	EXPECT_EQ(NULL, stk_find_vgpu(&self->h, "0000:41:00.4"));
}

TEST_F(host, a100_vfs_are_mdev_parents)
{
	const struct stk_dev *d;
	struct stk_dev *t[4];

	ASSERT_EQ(0, build(self->root, "a100-mdev"));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
	/* the PF is listed through its VFs, not as plain SR-IOV */
	ASSERT_EQ(2U, self->h.n_devs);
	EXPECT_EQ(NULL, dev(&self->h, "0000:81:00.0"));
	d = dev(&self->h, "0000:81:00.4");
	ASSERT_NE(NULL, d);
	EXPECT_EQ(STK_MDEV, (int)d->kind);
	EXPECT_STREQ("0000:81:00.0", d->pf);
	ASSERT_EQ(3U, d->n_types);
	EXPECT_STREQ("nvidia-558", d->types[0].id);
	EXPECT_STREQ("GRID A100-4C", d->types[0].name);
	EXPECT_STREQ("vfio-pci", d->types[0].device_api);
	EXPECT_EQ(1, d->types[0].available);
	EXPECT_STREQ("nvidia-700", d->types[2].id);
	EXPECT_NE(NULL, strstr(d->types[0].description, "framebuffer=4096M"));
	d = dev(&self->h, "0000:81:00.5");
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, d->types[0].available);

	ASSERT_EQ(1U, self->h.n_vgpus);
	EXPECT_STREQ(A100_VGPU, self->h.vgpus[0].handle);
	EXPECT_STREQ("0000:81:00.5", self->h.vgpus[0].dev);
	EXPECT_STREQ("nvidia-558", self->h.vgpus[0].type_id);
	EXPECT_STREQ("GRID A100-4C", self->h.vgpus[0].type_name);
	EXPECT_FALSE(self->h.vgpus[0].in_use);

	/* "dev PF" stands for its VF parents */
	EXPECT_EQ(2U, stk_targets(&self->h, "81:00.0", t, 4));
}

TEST_F(host, gvtg_parent)
{
	const struct stk_dev *d;

	ASSERT_EQ(0, build(self->root, "gvtg"));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
	ASSERT_EQ(1U, self->h.n_devs);
	d = &self->h.devs[0];
	EXPECT_EQ(STK_MDEV, (int)d->kind);
	EXPECT_STREQ("0000:00:02.0", d->name);
	EXPECT_STREQ("", d->pf);
	EXPECT_EQ(-1, d->totalvfs);
	ASSERT_EQ(4U, d->n_types);
	EXPECT_STREQ("i915-GVTg_V5_1", d->types[0].id);
	EXPECT_STREQ("i915-GVTg_V5_8", d->types[3].id);
	EXPECT_EQ(6, d->types[3].available);
	/* one "key: value" a line, joined */
	EXPECT_STREQ("low_gm_size: 64MB, high_gm_size: 384MB, fence: 4, resolution: 1024x768, weight: 2",
		     d->types[3].description);
	ASSERT_EQ(1U, self->h.n_vgpus);
	EXPECT_TRUE(self->h.vgpus[0].in_use);
	EXPECT_STREQ("GVTg_V5_4", self->h.vgpus[0].type_name);
}

TEST_F(host, plain_sriov_gpu_not_nic)
{
	ASSERT_EQ(0, build(self->root, "sriov"));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
	ASSERT_EQ(1U, self->h.n_devs);
	EXPECT_EQ(STK_SRIOV, (int)self->h.devs[0].kind);
	EXPECT_STREQ("0000:c1:00.0", self->h.devs[0].name);
	EXPECT_EQ(2, self->h.devs[0].numvfs);
	EXPECT_EQ(31, self->h.devs[0].totalvfs);
	EXPECT_EQ(0U, self->h.devs[0].n_types);
	EXPECT_EQ(0U, self->h.n_vgpus);
}

TEST_F(host, mixed_host_leaves_ours_to_netlink)
{
	ASSERT_EQ(0, build_all(self->root));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
	/* GVT-g, two A100 VFs, the H100, the Flex; not sim0 */
	EXPECT_EQ(5U, self->h.n_devs);
	EXPECT_EQ(NULL, dev(&self->h, "sim0"));
	EXPECT_EQ(5U, self->h.n_vgpus);

	RUN("gpu show");
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->out,
		"stack nvidia-vf dev 0000:41:00.0 driver nvidia vfs 5 total-vfs 32 free-vfs 2 types 5 vgpus 3\n"));
	EXPECT_NE(NULL, strstr(self->out,
		"stack mdev dev 0000:81:00.4 pf 0000:81:00.0 driver nvidia types 3 vgpus 0\n"));
	EXPECT_NE(NULL, strstr(self->out,
		"stack mdev dev 0000:00:02.0 driver i915 types 4 vgpus 1\n"));
	EXPECT_NE(NULL, strstr(self->out,
		"stack sriov dev 0000:c1:00.0 driver i915 vfs 2 total-vfs 31\n"));
	EXPECT_EQ(NULL, strstr(self->out, "sim0"));

	RUN("-j gpu show stack sriov");
	EXPECT_EQ(0, self->rc);
	EXPECT_STREQ("{\"gpu\":[{\"stack\":\"sriov\",\"dev\":\"0000:c1:00.0\",\"driver\":\"i915\",\"vfs\":2,\"total-vfs\":31}]}\n",
		     self->out);

	RUN("type show dev 0000:81:00.0 name A100-1-5C");
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("stack mdev dev 0000:81:00.4 type nvidia-700 available 1 api vfio-pci name \"GRID A100-1-5C\" description num_heads=1, frl_config=60, framebuffer=4864M, max_resolution=4096x2160, max_instance=7\n",
		     self->out);

	RUN("-j vgpu show vf 41:00.6");
	EXPECT_EQ(0, self->rc);
	EXPECT_STREQ("{\"vgpu\":[{\"vf\":\"0000:41:00.6\",\"stack\":\"nvidia-vf\",\"dev\":\"0000:41:00.0\",\"type-id\":\"1060\",\"gi\":3,\"placement\":0,\"open\":false,\"type\":\"NVIDIA H100-1-10C\"}]}\n",
		     self->out);

	RUN("vgpu add dev sim0 type H200-35C");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "\"sim0\" is one of gpuvirt's GPUs: name it by \"gpu ID\""))
		TH_LOG("%s", self->errout);
	RUN("gpu show dev 0000:99:00.0");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "no vGPU-capable device \"0000:99:00.0\""));
}

/* Type names ------------------------------------------------------------------ */

FIXTURE(match) {
	struct stk_host h;
	char root[PATH_MAX];
	char err[2048];
};

FIXTURE_VARIANT(match) {
	const char *dev;
	const char *want;
	const char *id;		/* NULL: refused */
	int err;
	const char *msg;
};

#define MATCH(n, d, w, i) \
	FIXTURE_VARIANT_ADD(match, n) { .dev = d, .want = w, .id = i }
#define NOMATCH(n, d, w, e, m) \
	FIXTURE_VARIANT_ADD(match, n) { .dev = d, .want = w, .err = e, .msg = m }

MATCH(h100_short, H100_PF, "H100-4C", "1065");
MATCH(h100_full, H100_PF, "NVIDIA H100-4C", "1065");
MATCH(h100_number, H100_PF, "1068", "1068");
MATCH(h100_mig, H100_PF, "H100-1-10C", "1060");
MATCH(a100_mig, "0000:81:00.4", "A100-1-5C", "nvidia-700");
MATCH(a100_grid, "0000:81:00.4", "GRID A100-4C", "nvidia-558");
MATCH(a100_dir, "0000:81:00.4", "nvidia-559", "nvidia-559");
MATCH(gvt_name, "0000:00:02.0", "GVTg_V5_4", "i915-GVTg_V5_4");
MATCH(gvt_suffix, "0000:00:02.0", "V5_8", "i915-GVTg_V5_8");
NOMATCH(h100_unknown, H100_PF, "H100-3C", -ENOENT,
	"no type \"H100-3C\" on 0000:41:00.0 (nvidia-vf); the types: \"NVIDIA H100-1-10C\" (1060), \"NVIDIA H100-2-20C\" (1061), \"NVIDIA H100-4C\" (1065)");
NOMATCH(a100_other_gpu, "0000:81:00.4", "T4-1Q", -ENOENT, "\"GRID A100-4C\" (nvidia-558)");
NOMATCH(case_matters, H100_PF, "h100-4c", -ENOENT, "no type \"h100-4c\"");

FIXTURE_SETUP(match)
{
	snprintf(self->root, sizeof(self->root), "%s/gv-stk.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT_NE(NULL, mkdtemp(self->root));
	ASSERT_EQ(0, build_all(self->root));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
}

FIXTURE_TEARDOWN(match)
{
	char cmd[PATH_MAX + 16];

	stk_free(&self->h);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->root);
	if (system(cmd))
		TH_LOG("could not remove %s", self->root);
}

TEST_F_TIMEOUT(match, type_name, 120)
{
	const struct stk_dev *d = stk_find_dev(&self->h, variant->dev);
	int idx;

	ASSERT_NE(NULL, d);
	idx = stk_match_type(d, variant->want, self->err, sizeof(self->err));
	if (variant->id) {
		ASSERT_LE(0, idx) TH_LOG("%s", self->err);
		EXPECT_STREQ(variant->id, d->types[idx].id);
	} else {
		EXPECT_EQ(variant->err, idx);
		EXPECT_NE(NULL, strstr(self->err, variant->msg))
			TH_LOG("got: %s", self->err);
	}
}

/* Two names that end alike: both are named, neither is taken. */
TEST(match_ambiguous)
{
	struct stk_type types[] = {
		{ .id = "nvidia-222", .name = "GRID T4-1Q" },
		{ .id = "nvidia-322", .name = "NVIDIA T4-1Q" },
	};
	struct stk_dev d = {
		.kind = STK_MDEV, .name = "0000:3b:00.0",
		.types = types, .n_types = 2,
	};
	char err[512];

	EXPECT_EQ(-EEXIST, stk_match_type(&d, "T4-1Q", err, sizeof(err)));
	EXPECT_STREQ("type \"T4-1Q\" is ambiguous on 0000:3b:00.0 (mdev); the types: \"GRID T4-1Q\" (nvidia-222), \"NVIDIA T4-1Q\" (nvidia-322)",
		     err);
	/* the full name settles it */
	EXPECT_EQ(0, stk_match_type(&d, "GRID T4-1Q", err, sizeof(err)));
}

/* Writes ---------------------------------------------------------------------- */

TEST_F(host, nvvf_add_picks_a_free_vf_and_del_writes_zero)
{
	ASSERT_EQ(0, build_all(self->root));

	RUN("vgpu add dev 41:00.0 type H100-4C");
	ASSERT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("vf 0000:41:00.4 stack nvidia-vf dev 0000:41:00.0 type-id 1065 open false type \"NVIDIA H100-4C\"\n",
		     self->out);
	FILE_IS(VF("00.4"), "1065");
	FILE_IS(VF("00.5"), "1065\n");
	FILE_IS(VF("00.7"), "1065\n");
	FILE_IS(VF("01.0"), "0\n");

	/* 00.4 is taken now: the next one that lists the type */
	RUN("-j vgpu add dev 0000:41:00.0 type 1066");
	ASSERT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->out, "\"vf\":\"0000:41:01.0\""));
	FILE_IS(VF("01.0"), "1066");

	/* none left */
	RUN("vgpu add dev 41:00.0 type H100-10C");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "no free VF of 0000:41:00.0 lists type \"NVIDIA H100-10C\""))
		TH_LOG("%s", self->errout);

	RUN("vgpu del vf 0000:41:00.5");
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	FILE_IS(VF("00.5"), "0");
	FILE_IS(VF("00.6"), "1060\n");
}

TEST_F(host, nvvf_refusals_change_nothing)
{
	ASSERT_EQ(0, build_all(self->root));

	RUN("vgpu add dev 41:00.0 type H100-4C weight 200");
	EXPECT_EQ(2, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "\"weight\" is not offered by this stack (nvidia-vf)"));
	RUN("vgpu add dev 41:00.0 type H100-4C gi 3");
	EXPECT_EQ(2, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "\"gi\" is not offered by this stack (nvidia-vf)"));
	RUN("vgpu add dev 41:00.0 type H100-4C uuid 11111111-2222-4333-8444-555555555555");
	EXPECT_EQ(2, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "\"uuid\" is not offered by this stack (nvidia-vf)"));
	RUN("vgpu add dev 41:00.0 type H100-3C");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "the types: \"NVIDIA H100-1-10C\" (1060)"));
	/* a VF asked for that does not list the type */
	RUN("vgpu add dev 41:00.0 type H100-1-10C vf 41:01.0");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "its creatable_vgpu_types does not list it"));
	/* in use by a VMM */
	RUN("vgpu del vf 41:00.7");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "vGPU 0000:41:00.7 is in use"));
	RUN("vgpu del vf 41:00.4");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "no vGPU on VF 41:00.4"));

	FILE_IS(VF("00.4"), "0\n");
	FILE_IS(VF("00.5"), "1065\n");
	FILE_IS(VF("00.6"), "1060\n");
	FILE_IS(VF("00.7"), "1065\n");
	FILE_IS(VF("01.0"), "0\n");
}

TEST_F(host, vendor_refusal_shows_errno_and_file)
{
	char want[4 * PATH_MAX];
	FILE *f;
	char path[PATH_MAX + 32];

	ASSERT_EQ(0, build(self->root, "h100-nvvf"));
	/* the vendor's store refuses: ENOSPC from a /dev/full link */
	snprintf(path, sizeof(path), "%s/extra.stk", self->root);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("refuse sys/devices/pci0000:00/0000:41:00.4/nvidia/current_vgpu_type\n", f);
	fclose(f);
	snprintf(want, sizeof(want), "'%s/mktree.sh' '%s' '%s'", STK_FIXTURES,
		 path, self->root);
	ASSERT_EQ(0, system(want));

	RUN("vgpu add dev 41:00.0 type H100-2-20C");
	EXPECT_EQ(1, self->rc);
	snprintf(want, sizeof(want),
		 "writing \"1061\" to %s/sys/bus/pci/devices/0000:41:00.4/nvidia/current_vgpu_type failed: No space left on device (ENOSPC)",
		 self->root);
	EXPECT_NE(NULL, strstr(self->errout, want)) TH_LOG("%s", self->errout);
	EXPECT_STREQ("", self->out);
}

TEST_F(host, mdev_add_on_a_vf_parent_and_del)
{
	ASSERT_EQ(0, build_all(self->root));

	/* by the PF: the first VF parent with room */
	RUN("vgpu add dev 0000:81:00.0 type A100-4C uuid 11111111-2222-4333-8444-555555555555");
	ASSERT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("vgpu 11111111-2222-4333-8444-555555555555 stack mdev dev 0000:81:00.4 type-id nvidia-558 open false type \"GRID A100-4C\"\n",
		     self->out);
	FILE_IS(A100_T("4", "nvidia-558"), "11111111-2222-4333-8444-555555555555");
	FILE_IS(A100_T("5", "nvidia-558"), "");
	FILE_IS(A100_T("4", "nvidia-559"), "");

	/* a random UUID when none is given */
	RUN("-j vgpu add dev 0000:00:02.0 type V5_8");
	ASSERT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	{
		char b[256];
		const char *c = slurp(self->root, GVT_T("i915-GVTg_V5_8"), b, sizeof(b));

		EXPECT_EQ(36U, strlen(c));
		EXPECT_NE(NULL, strstr(self->out, c));
	}

	RUN("vgpu del uuid " A100_VGPU);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	FILE_IS("/sys/bus/mdev/devices/" A100_VGPU "/remove", "1");
}

TEST_F(host, mdev_refusals_change_nothing)
{
	ASSERT_EQ(0, build_all(self->root));

	RUN("vgpu add dev 0000:00:02.0 type V5_8 max 50");
	EXPECT_EQ(2, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "\"max\" is not offered by this stack (mdev)"));
	RUN("vgpu add dev 0000:00:02.0 type V5_8 vf 00:02.1");
	EXPECT_EQ(2, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "\"vf\" is not offered by this stack (mdev)"));
	RUN("vgpu add dev 0000:81:00.5 type A100-4C");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "available_instances is 0"));
	RUN("vgpu add dev 0000:c1:00.0 type anything");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "vGPUs are not offered by this stack (sriov)"));
	RUN("vgpu del uuid " GVT_VGPU);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "is in use"));
	RUN("vgpu del uuid 99999999-2222-4333-8444-555555555555");
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "no vGPU with UUID"));

	FILE_IS("/sys/bus/mdev/devices/" GVT_VGPU "/remove", "");
	FILE_IS(GVT_T("i915-GVTg_V5_8"), "");
	FILE_IS(A100_T("5", "nvidia-558"), "");
}

/* apply and assert --------------------------------------------------------------- */

/* Write @text to @root/@name. */
static int put(const char *root, const char *name, const char *text)
{
	char path[2 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The kernel's part of enabling VFs ----------------------------------------- */

/*
 * On a fixture tree, writing sriov_numvfs only writes a file. A stub of the
 * kernel runs beside gpuvirtctl in a child process: when a count is written
 * into PF's sriov_numvfs it builds what the fixture's "on-enable" part says
 * appears then (.on-enable/PF.stk, the PCI core's VFs, then, unless
 * @first_only, .on-enable/PF.later.stk, the vendor driver's files on them),
 * and when 0 is written it removes those VFs again. gpuvirtctl sees no
 * difference from the kernel: it writes the file and waits for the VFs.
 */
struct kstub {
	pid_t pid;
	int stop;	/* closed: settle on the last count written, then exit */
};

static int numvfs_of(const char *root, const char *pf)
{
	char path[2 * PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/sriov_numvfs",
		 root, pf);
	return atoi(slurp("", path, buf, sizeof(buf)));
}

static void kstub_build(const char *root, const char *pf, const char *part)
{
	char path[2 * PATH_MAX], cmd[5 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/.on-enable/%s%s.stk", root, pf, part);
	if (access(path, F_OK))
		return;
	snprintf(cmd, sizeof(cmd), "'%s/mktree.sh' '%s' '%s'", STK_FIXTURES,
		 path, root);
	if (system(cmd))
		fprintf(stderr, "# kstub: %s failed\n", cmd);
}

/* rm -rf every VF of the on-enable part, as the PCI core removes them. */
static void kstub_remove(const char *root, const char *pf)
{
	char path[2 * PATH_MAX], line[512], bdf[32], *cmd;
	size_t len = 16384, used;
	FILE *f;

	snprintf(path, sizeof(path), "%s/.on-enable/%s.stk", root, pf);
	f = fopen(path, "r");
	cmd = malloc(len);
	if (!f || !cmd)
		goto out;
	used = (size_t)snprintf(cmd, len, "rm -rf '%s/sys/devices/pci0000:00/%s'/virtfn*",
				root, pf);
	while (fgets(line, sizeof(line), f) && used < len)
		if (sscanf(line, "pci %31s", bdf) == 1)
			used += (size_t)snprintf(cmd + used, len - used,
				" '%s/sys/devices/pci0000:00/%s' '%s/sys/bus/pci/devices/%s' '%s/sys/class/mdev_bus/%s'",
				root, bdf, root, bdf, root, bdf);
	if (used < len && system(cmd))
		fprintf(stderr, "# kstub: removing the VFs of %s failed\n", pf);
out:
	free(cmd);
	if (f)
		fclose(f);
}

static void kstub_run(const char *root, const char *pf, bool first_only,
		      int ready, int stop)
{
	char path[2 * PATH_MAX], ev[4096];
	bool made = false;
	int in, n;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/sriov_numvfs",
		 root, pf);
	in = inotify_init1(IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, path, IN_CLOSE_WRITE) < 0)
		_exit(1);
	if (write(ready, "1", 1) != 1)
		_exit(1);
	close(ready);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = in, .events = POLLIN },
			{ .fd = stop, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0)
			continue;
		if ((p[0].revents & POLLIN) && read(in, ev, sizeof(ev)) < 0)
			_exit(1);
		n = numvfs_of(root, pf);
		if (n > 0 && !made) {
			kstub_build(root, pf, "");
			if (!first_only)
				kstub_build(root, pf, ".later");
			made = true;
		} else if (n == 0 && made) {
			kstub_remove(root, pf);
			made = false;
		}
		if (p[1].revents)
			_exit(0);
	}
}

static int kstub_start(struct kstub *k, const char *root, const char *pf,
		       bool first_only)
{
	int ready[2], stop[2];
	char c;

	if (pipe(ready) || pipe(stop))
		return -1;
	k->pid = fork();
	if (k->pid < 0)
		return -1;
	if (!k->pid) {
		close(ready[0]);
		close(stop[1]);
		kstub_run(root, pf, first_only, ready[1], stop[0]);
	}
	close(ready[1]);
	close(stop[0]);
	k->stop = stop[1];
	c = 0;
	if (read(ready[0], &c, 1) != 1)
		c = 0;
	close(ready[0]);
	return c == '1' ? 0 : -1;
}

static void kstub_stop(struct kstub *k)
{
	close(k->stop);
	waitpid(k->pid, NULL, 0);
}

static const char mixed_yaml[] =
	"gpus:\n"
	"  - device: 0000:41:00.0\n"
	"    vgpus:\n"
	"      - vf: 0000:41:00.4\n"
	"        type: H100-2-20C\n"
	"      - vf: 41:00.5\n"
	"        type: NVIDIA H100-4C\n"
	"  - device: 0000:81:00.0\n"
	"    vgpus:\n"
	"      - uuid: 11111111-2222-4333-8444-555555555555\n"
	"        type: A100-4C\n"
	"      - uuid: " A100_VGPU "\n"
	"        type: GRID A100-4C\n";

TEST_F(host, apply_dry_run_assert_apply_then_nothing_to_do)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build_all(self->root));
	ASSERT_EQ(0, put(self->root, "m.yaml", mixed_yaml));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/m.yaml' --dry-run", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("+ vgpu 0000:41:00.4 type 1061 on device 0000:41:00.0 stack nvidia-vf\n"
		     "+ vgpu 11111111-2222-4333-8444-555555555555 type nvidia-558 on device 0000:81:00.4 stack mdev\n",
		     self->out);
	FILE_IS(VF("00.4"), "0\n");
	FILE_IS(A100_T("4", "nvidia-558"), "");

	snprintf(cmd, sizeof(cmd), "assert -f '%s/m.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "differs from")) TH_LOG("%s", self->errout);

	snprintf(cmd, sizeof(cmd), "apply -f '%s/m.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	FILE_IS(VF("00.4"), "1061");
	FILE_IS(VF("00.5"), "1065\n");
	FILE_IS(A100_T("4", "nvidia-558"), "11111111-2222-4333-8444-555555555555");
	FILE_IS(A100_T("5", "nvidia-558"), "");

	/* the nvidia-vf part now holds: nothing to do for it */
	ASSERT_EQ(0, put(self->root, "nv.yaml",
			 "gpus:\n  - device: 0000:41:00.0\n    vgpus:\n"
			 "      - vf: 0000:41:00.4\n        type: H100-2-20C\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/nv.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc);
	EXPECT_STREQ("nothing to do\n", self->out);
	snprintf(cmd, sizeof(cmd), "assert -f '%s/nv.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
}

TEST_F(host, apply_refuses_the_whole_file)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build_all(self->root));
	ASSERT_EQ(0, put(self->root, "b.yaml",
		"gpus:\n"
		"  - device: 0000:41:00.0\n"		/* 2 */
		"    sched:\n"
		"      policy: weighted\n"
		"  - device: 0000:81:00.0\n"		/* 5 */
		"    vgpus:\n"
		"      - uuid: 33333333-2222-4333-8444-555555555555\n"	/* 7 */
		"        type: A100-4C\n"
		"        weight: 3\n"
		"      - vf: 0000:81:00.4\n"		/* 10 */
		"        type: A100-4C\n"
		"      - uuid: " A100_VGPU "\n"	/* 12 */
		"        type: A100-5C\n"
		"  - device: 0000:c1:00.0\n"		/* 14 */
		"    vgpus: [{uuid: 66666666-2222-4333-8444-555555555555, type: x}]\n"
		"  - device: 0000:00:02.0\n"		/* 16 */
		"    vgpus:\n"
		"      - uuid: 44444444-2222-4333-8444-555555555555\n"	/* 18 */
		"        type: GVTg_V5_3\n"
		"  - device: 0000:41:00.0\n"));
	ASSERT_EQ(0, put(self->root, "s.yaml",
		"gpus:\n  - device: sim0\n    vgpus:\n"
		"      - uuid: 55555555-2222-4333-8444-555555555555\n"
		"        type: H200-35C\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/s.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "s.yaml:2: device sim0 is one of gpuvirt's GPUs: name it by \"id\""))
		TH_LOG("%s", self->errout);
	snprintf(cmd, sizeof(cmd), "apply -f '%s/b.yaml'", self->root);
	RUN(cmd);
	/* a device listed twice is the file's own error */
	EXPECT_EQ(2, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "b.yaml:20:5: device 0000:41:00.0 is listed twice (first on line 2)"))
		TH_LOG("%s", self->errout);

	ASSERT_EQ(0, put(self->root, "b2.yaml", ""));
	snprintf(cmd, sizeof(cmd), "head -n 19 '%s/b.yaml' >'%s/b2.yaml'",
		 self->root, self->root);
	ASSERT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/b2.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "b2.yaml:2: \"sched\" is not offered by this stack (nvidia-vf)"));
	EXPECT_NE(NULL, strstr(self->errout, "b2.yaml:7: \"weight\" is not offered by this stack (mdev)"));
	EXPECT_NE(NULL, strstr(self->errout, "b2.yaml:10: \"vf\" is not offered by this stack (mdev)"));
	EXPECT_NE(NULL, strstr(self->errout, "b2.yaml:12: vGPU " A100_VGPU " exists with type GRID A100-4C (nvidia-558), not A100-5C"));
	EXPECT_NE(NULL, strstr(self->errout, "b2.yaml:14: device 0000:c1:00.0 has plain SR-IOV: vGPUs are not offered by this stack (sriov)"));
	EXPECT_NE(NULL, strstr(self->errout, "b2.yaml:18: no type \"GVTg_V5_3\" on 0000:00:02.0 (mdev); the types: \"GVTg_V5_1\" (i915-GVTg_V5_1)"));
	EXPECT_NE(NULL, strstr(self->errout, "nothing was changed"));
	EXPECT_STREQ("", self->out);
	FILE_IS(A100_T("4", "nvidia-558"), "");
	FILE_IS(GVT_T("i915-GVTg_V5_8"), "");
	FILE_IS(VF("00.4"), "0\n");
}

TEST_F(host, apply_undoes_in_reverse_when_the_vendor_refuses)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build_all(self->root));
	ASSERT_EQ(0, put(self->root, "r.stk",
		"refuse sys/devices/pci0000:00/0000:00:02.0/mdev_supported_types/i915-GVTg_V5_8/create\n"));
	snprintf(cmd, sizeof(cmd), "'%s/mktree.sh' '%s/r.stk' '%s'",
		 STK_FIXTURES, self->root, self->root);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, put(self->root, "u.yaml",
		"gpus:\n"
		"  - device: 0000:41:00.0\n"
		"    vgpus:\n"
		"      - vf: 0000:41:00.4\n"
		"        type: H100-5C\n"
		"      - vf: 0000:41:01.0\n"
		"        type: H100-10C\n"
		"  - device: 0000:00:02.0\n"
		"    vgpus:\n"
		"      - uuid: 44444444-2222-4333-8444-555555555555\n"
		"        type: V5_8\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/u.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "step 3 of 3 failed (+ vgpu 44444444-2222-4333-8444-555555555555 type i915-GVTg_V5_8 on device 0000:00:02.0)"))
		TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->errout, "i915-GVTg_V5_8/create failed: No space left on device (ENOSPC)"));
	EXPECT_NE(NULL, strstr(self->errout, "nothing was changed"));
	/* both VFs written, then written back to 0 */
	FILE_IS(VF("00.4"), "0");
	FILE_IS(VF("01.0"), "0");
}

TEST_F(host, apply_enables_vfs_once)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build_all(self->root));
	ASSERT_EQ(0, build(self->root, "sriov-off"));
	ASSERT_EQ(0, put(self->root, "v.yaml",
		"gpus:\n"
		"  - device: 61:00.0\n"
		"    vfs: 4\n"
		"  - device: 0000:41:00.0\n"
		"    vfs: 5\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/v.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("~ device 0000:61:00.0 vfs 0 -> 4 stack sriov\n", self->out);
	FILE_IS("/sys/bus/pci/devices/0000:61:00.0/sriov_numvfs", "4");
	FILE_IS("/sys/bus/pci/devices/0000:41:00.0/sriov_numvfs", "5\n");
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("nothing to do\n", self->out);

	/* another count only through 0; vGPUs of VFs this run enables */
	ASSERT_EQ(0, put(self->root, "w.yaml",
		"gpus:\n"
		"  - device: 0000:41:00.0\n"
		"    vfs: 6\n"
		"  - device: 0000:c1:00.0\n"
		"    vfs: 40\n"
		"  - device: mtty\n"
		"    vfs: 2\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/w.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "w.yaml:2: 0000:41:00.0 has 5 VFs, not 6: the kernel changes the count only through 0"))
		TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->errout, "w.yaml:4: 0000:c1:00.0 has at most 31 VFs (sriov_totalvfs), not 40"));
	EXPECT_NE(NULL, strstr(self->errout, "w.yaml:6: \"vfs\" is not offered by this stack (mdev)"));
	FILE_IS("/sys/bus/pci/devices/0000:41:00.0/sriov_numvfs", "5\n");
	FILE_IS("/sys/bus/pci/devices/0000:c1:00.0/sriov_numvfs", "2\n");
}

TEST_F(host, apply_prune_spares_what_is_in_use)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build_all(self->root));
	/* 00.6 is not listed: pruned; 00.7 is listed (in use), kept as is */
	ASSERT_EQ(0, put(self->root, "p.yaml",
		"gpus:\n"
		"  - device: 0000:41:00.0\n"
		"    vgpus:\n"
		"      - vf: 0000:41:00.5\n"
		"        type: H100-4C\n"
		"      - vf: 0000:41:00.7\n"
		"        type: H100-4C\n"));
	snprintf(cmd, sizeof(cmd), "apply --prune -f '%s/p.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("- vgpu 0000:41:00.6 type 1060 on device 0000:41:00.0 stack nvidia-vf\n",
		     self->out);
	FILE_IS(VF("00.6"), "0");
	FILE_IS(VF("00.5"), "1065\n");
	FILE_IS(VF("00.7"), "1065\n");

	/* without 00.7 in the file, --prune would touch a VF in use: refused */
	ASSERT_EQ(0, put(self->root, "p2.yaml",
		"gpus:\n"
		"  - device: 0000:41:00.0\n"
		"    vgpus:\n"
		"      - vf: 0000:41:00.5\n"
		"        type: H100-4C\n"));
	snprintf(cmd, sizeof(cmd), "apply --prune -f '%s/p2.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "vGPU 0000:41:00.7 of device 0000:41:00.0 is not in the file, but in use: not removed"));
	FILE_IS(VF("00.7"), "1065\n");
}

/* From a cold host: VFs enabled, waited for and typed in one run ---------- */

#define COLD_PF "0000:e1:00.0"
#define CV(x)	"/sys/bus/pci/devices/0000:e1:" x "/nvidia/current_vgpu_type"
#define NUMVFS(pf) "/sys/bus/pci/devices/" pf "/sriov_numvfs"

static const char cold_yaml[] =
	"gpus:\n"
	"  - device: " COLD_PF "\n"
	"    vfs: 32\n"
	"    vgpus:\n"
	"      - vf: 0000:e1:00.4\n"
	"        type: H100-4C\n"
	"      - vf: e1:04.3\n"
	"        type: 1119\n";

/* Run @args with the kernel's stand-in for PF @pf beside it. */
static void run_vfs(struct _test_data_host *self, const char *pf,
		    bool first_only, const char *args)
{
	struct kstub k;

	if (kstub_start(&k, self->root, pf, first_only)) {
		self->rc = -1;
		snprintf(self->errout, sizeof(self->errout), "kstub_start failed");
		return;
	}
	run(self, args);
	kstub_stop(&k);
}

TEST_F_TIMEOUT(host, cold_apply_enables_waits_and_types, 300)
{
	char cmd[3 * PATH_MAX], rec[512];

	ASSERT_EQ(0, build(self->root, "h100-cold"));
	ASSERT_EQ(0, put(self->root, "c.yaml", cold_yaml));

	/* the whole plan, the VF vGPUs included, and nothing changed */
	snprintf(cmd, sizeof(cmd), "apply -f '%s/c.yaml' --dry-run", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("~ device " COLD_PF " vfs 0 -> 32 stack nvidia-vf\n"
		     "+ vgpu 0000:e1:00.4 type H100-4C on device " COLD_PF " stack nvidia-vf\n"
		     "+ vgpu 0000:e1:04.3 type 1119 on device " COLD_PF " stack nvidia-vf\n",
		     self->out);
	FILE_IS(NUMVFS(COLD_PF), "0\n");
	snprintf(cmd, sizeof(cmd), "-j apply -f '%s/c.yaml' --dry-run", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->out, "{\"action\":\"add\",\"vgpu\":{\"vf\":\"0000:e1:00.4\",\"type\":\"H100-4C\",\"device\":\"" COLD_PF "\",\"stack\":\"nvidia-vf\"}}"))
		TH_LOG("%s", self->out);
	snprintf(cmd, sizeof(cmd), "assert -f '%s/c.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->out, "+ vgpu 0000:e1:04.3 type 1119 on device"));
	EXPECT_NE(NULL, strstr(self->errout, "differs from")) TH_LOG("%s", self->errout);

	/* one run: the VFs, then their types, by name and by number */
	snprintf(cmd, sizeof(cmd), "apply -f '%s/c.yaml'", self->root);
	run_vfs(self, COLD_PF, false, cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("", self->errout);
	FILE_IS(NUMVFS(COLD_PF), "32");
	FILE_IS(CV("00.4"), "1118");
	FILE_IS(CV("04.3"), "1119");
	FILE_IS(CV("00.5"), "0\n");
	FILE_IS(CV("04.2"), "0\n");
	/* the names it saw listed are on record */
	slurp(self->root, STK_KNOWN_FILE, rec, sizeof(rec));
	EXPECT_NE(NULL, strstr(rec, "10de:2331 550.54.10 1118 NVIDIA H100-4C\n")) TH_LOG("%s", rec);

	/* as the driver shows it once typed: the VFs list no H100-4C now */
	ASSERT_EQ(0, put(self->root, "sys/bus/pci/devices/0000:e1:00.4/nvidia/creatable_vgpu_types",
			 "ID    : vGPU Name\n"));
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("nothing to do\n", self->out);
	snprintf(cmd, sizeof(cmd), "assert -f '%s/c.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s%s", self->out, self->errout);
}

/* VFs that do not come up: a bounded wait, the PF named, all undone. */
TEST_F_TIMEOUT(host, cold_apply_vfs_that_never_come_up, 300)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build(self->root, "h100-cold"));
	ASSERT_EQ(0, put(self->root, "c.yaml", cold_yaml));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/c.yaml' --vf-timeout 1",
		 self->root);

	/* no VF at all */
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "the 32 VFs of " COLD_PF " did not all come up within 1 s: it has no VF 0 (no virtfn0)"))
		TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->errout, "step 1 of 3 failed (~ device " COLD_PF " vfs 32)"));
	EXPECT_NE(NULL, strstr(self->errout, "nothing was changed"));
	FILE_IS(NUMVFS(COLD_PF), "0");

	/* VFs that came up without NVIDIA's files: no vGPU manager */
	kstub_build(self->root, COLD_PF, "");
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "the 32 VFs of " COLD_PF " did not all come up within 1 s: VF 0000:e1:00.4 has no NVIDIA vGPU files (nvidia/current_vgpu_type)"))
		TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->errout, "nothing was changed"));
	FILE_IS(NUMVFS(COLD_PF), "0");
	FILE_IS(CV("00.4"), "<missing>");
}

/* A type the new VFs do not list: the run stops there and is undone. */
TEST_F_TIMEOUT(host, cold_apply_undone_when_a_type_is_missing, 300)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build(self->root, "h100-cold"));
	ASSERT_EQ(0, put(self->root, "m.yaml",
		"gpus:\n"
		"  - device: " COLD_PF "\n"
		"    vfs: 4\n"
		"    vgpus:\n"
		"      - {vf: 0000:e1:00.4, type: H100-5C}\n"
		"      - {vf: 0000:e1:00.5, type: H100-80C}\n"));
	/* the stand-in makes 32 VFs whatever the count: only 4 are waited for */
	snprintf(cmd, sizeof(cmd), "apply -f '%s/m.yaml'", self->root);
	run_vfs(self, COLD_PF, false, cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "no type \"H100-80C\" on " COLD_PF " (nvidia-vf); the types: \"NVIDIA H100-4C\" (1118)"))
		TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->errout, "step 3 of 3 failed (+ vgpu 0000:e1:00.5 type H100-80C on device " COLD_PF ")"));
	EXPECT_NE(NULL, strstr(self->errout, "nothing was changed"));
	FILE_IS(NUMVFS(COLD_PF), "0");
	FILE_IS("/sys/bus/pci/devices/0000:e1:00.4/class", "<missing>");
}

/* What the plan refuses of a cold PF, before anything changes. */
TEST_F(host, cold_apply_refusals)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build(self->root, "h100-cold"));
	ASSERT_EQ(0, put(self->root, "amd.stk",
		"pci 0000:62:00.0 class=0x030000 id=1002:7460 driver=amdgpu totalvfs=16 numvfs=0 offset=1 stride=1\n"));
	snprintf(cmd, sizeof(cmd), "'%s/mktree.sh' '%s/amd.stk' '%s'",
		 STK_FIXTURES, self->root, self->root);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, put(self->root, "r.yaml",
		"gpus:\n"
		"  - device: " COLD_PF "\n"			/* 2 */
		"    vfs: 4\n"
		"    vgpus:\n"
		"      - {vf: 0000:e1:01.0, type: H100-4C}\n"	/* 5 */
		"      - {vf: 0000:e1:00.5, type: H100-4C, weight: 3}\n"
		"      - {uuid: 11111111-2222-4333-8444-555555555555, type: H100-4C}\n"
		"  - device: 0000:62:00.0\n"			/* 8 */
		"    vfs: 2\n"
		"    vgpus:\n"
		"      - {vf: 0000:62:00.1, type: V620-4Q}\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/r.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "r.yaml:5: 0000:e1:01.0 is not one of the 4 VFs " COLD_PF " will have"))
		TH_LOG("%s", self->errout);
	EXPECT_NE(NULL, strstr(self->errout, "r.yaml:6: \"weight\" is not offered by this stack (nvidia-vf)"));
	EXPECT_NE(NULL, strstr(self->errout, "r.yaml:7: the VFs of " COLD_PF " will be either vGPUs named by \"vf\""));
	EXPECT_NE(NULL, strstr(self->errout, "r.yaml:8: device 0000:62:00.0 has plain SR-IOV (driver amdgpu): vGPUs are not offered by this stack (sriov)"));
	EXPECT_NE(NULL, strstr(self->errout, "nothing was changed"));
	EXPECT_STREQ("", self->out);
	FILE_IS(NUMVFS(COLD_PF), "0\n");
	FILE_IS(NUMVFS("0000:62:00.0"), "0\n");
}

/* Ampere: VFs that become mdev parents, the vGPU on the first with room. */
TEST_F_TIMEOUT(host, cold_apply_mdev_vf_parents, 300)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build(self->root, "a100-cold"));
	ASSERT_EQ(0, put(self->root, "a.yaml",
		"gpus:\n"
		"  - device: 0000:82:00.0\n"
		"    vfs: 2\n"
		"    vgpus:\n"
		"      - {uuid: 11111111-2222-4333-8444-555555555555, type: A100-5C}\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/a.yaml'", self->root);
	run_vfs(self, "0000:82:00.0", false, cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("~ device 0000:82:00.0 vfs 0 -> 2 stack mdev\n"
		     "+ vgpu 11111111-2222-4333-8444-555555555555 type A100-5C on device 0000:82:00.0 stack mdev\n",
		     self->out);
	FILE_IS(NUMVFS("0000:82:00.0"), "2");
	FILE_IS("/sys/class/mdev_bus/0000:82:00.4/mdev_supported_types/nvidia-559/create",
		"11111111-2222-4333-8444-555555555555");
	FILE_IS("/sys/class/mdev_bus/0000:82:00.5/mdev_supported_types/nvidia-559/create", "");

	/* the mdev core made it, and the parent has no room left: in place */
	ASSERT_EQ(0, put(self->root, "m.stk",
		"mdev 11111111-2222-4333-8444-555555555555 0000:82:00.4 nvidia-559\n"));
	ASSERT_EQ(0, put(self->root, "sys/class/mdev_bus/0000:82:00.4/mdev_supported_types/nvidia-559/available_instances", "0\n"));
	ASSERT_EQ(0, put(self->root, "sys/class/mdev_bus/0000:82:00.4/mdev_supported_types/nvidia-558/available_instances", "0\n"));
	snprintf(cmd, sizeof(cmd), "'%s/mktree.sh' '%s/m.stk' '%s'",
		 STK_FIXTURES, self->root, self->root);
	ASSERT_EQ(0, system(cmd));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/a.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("nothing to do\n", self->out);
	snprintf(cmd, sizeof(cmd), "assert -f '%s/a.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s%s", self->out, self->errout);
}

/* A full GPU ---------------------------------------------------------------- */

#define FULL_PF	"0000:a1:00.0"

/* The file of the full H100: its 20 vGPUs, by @type. */
static void full_yaml(const char *root, const char *name, const char *type)
{
	char text[8192], bdf[32];
	size_t used;
	int i;

	used = (size_t)snprintf(text, sizeof(text),
				"gpus:\n  - device: " FULL_PF "\n    vfs: 32\n    vgpus:\n");
	for (i = 0; i < 20; i++) {
		snprintf(bdf, sizeof(bdf), "0000:a1:%02x.%x", (4 + i) >> 3,
			 (4 + i) & 7);
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "      - {vf: %s, type: %s}\n", bdf, type);
	}
	put(root, name, text);
}

TEST_F_TIMEOUT(host, full_gpu_keeps_its_identity, 300)
{
	const struct stk_dev *d;
	const struct stk_vgpu *g;
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build(self->root, "h100-full"));
	ASSERT_EQ(0, stk_scan(self->root, &self->h, self->err, sizeof(self->err)));
	/* nvidia-vf by its VFs' nvidia/, though none lists a type */
	d = dev(&self->h, FULL_PF);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(STK_NVVF, (int)d->kind);
	EXPECT_EQ(32U, d->n_vfs);
	EXPECT_STREQ("10de:2331", d->pciid);
	EXPECT_STREQ("550.54.10", d->version);
	/* the typed VFs' type, by its number: no name is to be had */
	ASSERT_EQ(1U, d->n_types);
	EXPECT_STREQ("1118", d->types[0].id);
	EXPECT_STREQ("1118", d->types[0].name);
	EXPECT_TRUE(d->types[0].unnamed);
	EXPECT_EQ(0, d->types[0].available);
	EXPECT_EQ(20U, self->h.n_vgpus);
	g = stk_find_vgpu(&self->h, "0000:a1:02.7");
	ASSERT_NE(NULL, g);
	EXPECT_STREQ("1118", g->type_id);

	RUN("gpu show dev " FULL_PF);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("stack nvidia-vf dev " FULL_PF " driver nvidia vfs 32 total-vfs 32 free-vfs 12 types 1 vgpus 20\n",
		     self->out);

	/* by number: in place */
	full_yaml(self->root, "n.yaml", "1118");
	snprintf(cmd, sizeof(cmd), "assert -f '%s/n.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s%s", self->out, self->errout);
	snprintf(cmd, sizeof(cmd), "apply -f '%s/n.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("nothing to do\n", self->out);

	/* by name: no VF and no record names 1118, and assert says how */
	full_yaml(self->root, "h.yaml", "H100-4C");
	snprintf(cmd, sizeof(cmd), "assert -f '%s/h.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->out, "no type \"H100-4C\" on " FULL_PF " (nvidia-vf); the types: \"1118\" (1118) (a type that typed VFs hold and no VF lists, the GPU being full, goes by its number"))
		TH_LOG("%s", self->out);

	/* once the name was seen listed (the record of it), by name too */
	{
		char mk[2 * PATH_MAX];

		snprintf(mk, sizeof(mk), "mkdir -p '%s/var/lib/gpuvirt'",
			 self->root);
		ASSERT_EQ(0, system(mk));
	}
	ASSERT_EQ(0, put(self->root, "var/lib/gpuvirt/nvidia-vgpu-types",
			 "10de:2330 550.54.10 1118 NVIDIA H100-1-10C\n"
			 "10de:2331 535.104.06 1118 NVIDIA H100-2C\n"
			 "10de:2331 550.54.10 1118 NVIDIA H100-4C\n"));
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s%s", self->out, self->errout);
	snprintf(cmd, sizeof(cmd), "apply -f '%s/h.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("nothing to do\n", self->out);
	RUN("vgpu show vf a1:00.4");
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("vf 0000:a1:00.4 stack nvidia-vf dev " FULL_PF " type-id 1118 open false type \"NVIDIA H100-4C\"\n",
		     self->out);
	/* another type, though, is still a conflict */
	full_yaml(self->root, "x.yaml", "H100-5C");
	snprintf(cmd, sizeof(cmd), "assert -f '%s/x.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->out, "no type \"H100-5C\" on " FULL_PF)) TH_LOG("%s", self->out);
	FILE_IS("/sys/bus/pci/devices/0000:a1:00.4/nvidia/current_vgpu_type", "1118\n");
}

/* An mdev parent with no instance left, its vGPU listed: in place. */
TEST_F(host, full_mdev_parent_is_in_place)
{
	char cmd[3 * PATH_MAX];

	ASSERT_EQ(0, build_all(self->root));
	/* 81:00.5 holds A100_VGPU and has room for nothing (fixture) */
	ASSERT_EQ(0, put(self->root, "f.yaml",
		"gpus:\n"
		"  - device: 0000:81:00.0\n"
		"    vfs: 2\n"
		"    vgpus:\n"
		"      - uuid: " A100_VGPU "\n"
		"        type: A100-4C\n"));
	snprintf(cmd, sizeof(cmd), "assert -f '%s/f.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s%s", self->out, self->errout);
	snprintf(cmd, sizeof(cmd), "apply -f '%s/f.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(0, self->rc) TH_LOG("%s", self->errout);
	EXPECT_STREQ("nothing to do\n", self->out);
	/* another count, through the VF parents' PF, is refused */
	ASSERT_EQ(0, put(self->root, "g.yaml",
		"gpus:\n  - {device: 0000:81:00.0, vfs: 4}\n"));
	snprintf(cmd, sizeof(cmd), "apply -f '%s/g.yaml'", self->root);
	RUN(cmd);
	EXPECT_EQ(1, self->rc);
	EXPECT_NE(NULL, strstr(self->errout, "0000:81:00.0 has 2 VFs, not 4: the kernel changes the count only through 0"))
		TH_LOG("%s", self->errout);
}

/* The man page's field lists against the output --------------------------- */

#define MAN_FIELDS_MAX	16

/* One command's fields as gpuvirtctl(8) lists them, in order. */
struct man_fields {
	char cmd[32];				/* "gpu show" */
	char key[MAN_FIELDS_MAX][32];		/* the JSON member */
	char label[MAN_FIELDS_MAX][32];		/* its text label */
	unsigned int n;
};

/* The first word of a ".B" or ".BR" line, "\-" as "-": 0, or -1 if none. */
static int man_word(const char *line, char *out, size_t len)
{
	size_t n = 0;

	if (!strncmp(line, ".BR ", 4))
		line += 4;
	else if (!strncmp(line, ".B ", 3))
		line += 3;
	else
		return -1;
	for (; *line && *line != ' ' && *line != '\n' && n + 1 < len; line++)
		if (!(line[0] == '\\' && line[1] == '-'))
			out[n++] = *line;
	out[n] = '\0';
	return n ? 0 : -1;
}

/*
 * The "Fields of the other stacks' entries" of @page: per command a ".TP"
 * then ".B COMMAND", then its fields one ".B"/".BR" line each, a field's
 * text label after "(text:".
 */
static int man_parse(const char *page, struct man_fields *f, unsigned int max)
{
	char line[512], word[64];
	bool in = false, label = false;
	unsigned int n = 0;
	FILE *fp = fopen(page, "r");
	int tp = 0;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		if (!in) {
			in = !strncmp(line, "Fields of the other stacks' entries:", 36);
			continue;
		}
		if (!strncmp(line, ".RE", 3))
			break;
		if (!strncmp(line, ".TP", 3)) {
			tp = 1;
			continue;
		}
		if (!strncmp(line, "(text:", 6)) {
			label = true;
			continue;
		}
		if (man_word(line, word, sizeof(word)))
			continue;
		if (tp) {	/* ".B gpu show": the command */
			if (n == max)
				break;
			memset(&f[n], 0, sizeof(f[n]));
			snprintf(f[n].cmd, sizeof(f[n].cmd), "%.31s", line + 3);
			f[n].cmd[strcspn(f[n].cmd, "\n")] = '\0';
			n++;
			tp = 0;
		} else if (n && label && f[n - 1].n) {
			struct man_fields *c = &f[n - 1];

			snprintf(c->label[c->n - 1], sizeof(c->label[0]), "%s", word);
			label = false;
		} else if (n && f[n - 1].n < MAN_FIELDS_MAX) {
			struct man_fields *c = &f[n - 1];

			snprintf(c->key[c->n], sizeof(c->key[0]), "%s", word);
			snprintf(c->label[c->n], sizeof(c->label[0]), "%s", word);
			c->n++;
		}
	}
	fclose(fp);
	return (int)n;
}

static int man_index(const struct man_fields *f, const char *key)
{
	unsigned int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->key[i], key))
			return (int)i;
	return -1;
}

/*
 * The members of each object of the array in @json, a one-line document
 * {"gpu":[{...},...]} as gpuvirtctl -j prints it: @keys[obj][i]. Returns
 * the number of objects.
 */
static unsigned int json_keys(const char *json, char keys[][MAN_FIELDS_MAX][32],
			      unsigned int *nkeys, unsigned int max)
{
	unsigned int depth = 0, n = 0;
	const char *p, *q;

	for (p = json; *p; p++) {
		if (*p == '"') {
			q = strchr(p + 1, '"');
			while (q && q[-1] == '\\')
				q = strchr(q + 1, '"');
			if (!q)
				break;
			/* a member of an entry: depth 3 ({ [ {), then ':' */
			if (depth == 3 && q[1] == ':' && n && nkeys[n - 1] < MAN_FIELDS_MAX)
				snprintf(keys[n - 1][nkeys[n - 1]++], 32, "%.*s",
					 (int)(q - p - 1), p + 1);
			p = q;
		} else if (*p == '{' || *p == '[') {
			depth++;
			if (depth == 3 && *p == '{' && n < max)
				nkeys[n++] = 0;
		} else if (*p == '}' || *p == ']') {
			depth--;
		}
	}
	return n;
}

static void check_fields(struct __test_metadata *_metadata,
			 struct _test_data_host *self,
			 const struct man_fields *f, bool *seen)
{
	static char keys[64][MAN_FIELDS_MAX][32];
	unsigned int nkeys[64], n, i, j, line_no;
	char cmd[64], text[8192];
	const char *line, *at;
	int idx, last;

	snprintf(cmd, sizeof(cmd), "-j %s", f->cmd);
	RUN(cmd);
	ASSERT_EQ(0, self->rc) TH_LOG("%s: %s", cmd, self->errout);
	n = json_keys(self->out, keys, nkeys, 64);
	ASSERT_LT(0U, n) TH_LOG("%s: %s", cmd, self->out);
	RUN(f->cmd);
	ASSERT_EQ(0, self->rc) TH_LOG("%s: %s", f->cmd, self->errout);
	snprintf(text, sizeof(text), "%s", self->out);
	line = text;
	for (i = 0, line_no = 0; i < n; i++, line_no++) {
		char *eol = strchr(line, '\n');

		ASSERT_NE(NULL, eol) TH_LOG("%s: fewer lines than entries", f->cmd);
		*eol = '\0';
		last = -1;
		at = line;
		for (j = 0; j < nkeys[i]; j++) {
			char word[40];

			idx = man_index(f, keys[i][j]);
			/* every member is documented, in the documented order */
			EXPECT_LE(0, idx) TH_LOG("%s: \"%s\" is not in gpuvirtctl(8)",
						 f->cmd, keys[i][j]);
			if (idx < 0)
				continue;
			EXPECT_LT(last, idx) TH_LOG("%s: \"%s\" comes before \"%s\" in gpuvirtctl(8)",
						    f->cmd, keys[i][j], f->key[last]);
			last = idx;
			seen[idx] = true;
			/* and the text line has its label, in the same order */
			snprintf(word, sizeof(word), j ? " %s " : "%s ",
				 f->label[idx]);
			at = j ? strstr(at, word) : (!strncmp(at, word, strlen(word)) ? at : NULL);
			EXPECT_NE(NULL, at) TH_LOG("%s: line %u lacks \"%s\" where gpuvirtctl(8) puts it: %s",
						   f->cmd, line_no + 1, f->label[idx], line);
			if (!at)
				break;
			at += strlen(word) - 1;
		}
		line = eol + 1;
	}
	EXPECT_STREQ("", line) TH_LOG("%s: more lines than entries", f->cmd);
}

/*
 * gpuvirtctl(8) lists the fields of the other stacks' entries, in order,
 * with their text labels: each entry of the output has only those, in that
 * order, in JSON and in text, and each field listed is in some entry.
 */
TEST_F_TIMEOUT(host, man_page_field_lists_are_the_output, 120)
{
	struct man_fields f[4];
	bool seen[MAN_FIELDS_MAX];
	int n, i;
	unsigned int j;

	n = man_parse(GPUVIRTCTL_MAN, f, 4);
	ASSERT_EQ(3, n) TH_LOG("no field lists in %s", GPUVIRTCTL_MAN);
	EXPECT_STREQ("gpu show", f[0].cmd);
	EXPECT_STREQ("type show", f[1].cmd);
	EXPECT_STREQ("vgpu show", f[2].cmd);
	EXPECT_STREQ("vgpu", f[2].label[0]);	/* uuid, text: vgpu */
	ASSERT_EQ(0, build_all(self->root));
	for (i = 0; i < n; i++) {
		memset(seen, 0, sizeof(seen));
		check_fields(_metadata, self, &f[i], seen);
		for (j = 0; j < f[i].n; j++) {
			EXPECT_TRUE(seen[j]) TH_LOG("%s: gpuvirtctl(8) lists \"%s\", which no entry has",
						    f[i].cmd, f[i].key[j]);
		}
	}
}

/*
 * One line of creatable_vgpu_types, shared by the nvidia-vf stack and our
 * own SR-IOV GPUs: NVIDIA's padding, ours, and what is no type line.
 */
TEST(type_line)
{
	char a[] = "558   : NVIDIA H100-4C  \n", b[] = "3     : H200-35C",
	     c[] = "ID    : vGPU Name\n", d[] = "\n", e[] = "0 : H200-1C",
	     f[] = "12x : H200-2C", g[] = "7 :   \n", h[] = "  9:A100-4C";
	unsigned long id = 77;
	char *name = NULL;

	ASSERT_EQ(0, units_parse_type_line(a, &id, &name));
	EXPECT_EQ(558UL, id);
	EXPECT_STREQ("NVIDIA H100-4C", name);
	ASSERT_EQ(0, units_parse_type_line(b, &id, &name));
	EXPECT_EQ(3UL, id);
	EXPECT_STREQ("H200-35C", name);
	ASSERT_EQ(0, units_parse_type_line(h, &id, &name));
	EXPECT_EQ(9UL, id);
	EXPECT_STREQ("A100-4C", name);
	id = 77;
	EXPECT_EQ(-1, units_parse_type_line(c, &id, &name));	/* header */
	EXPECT_EQ(-1, units_parse_type_line(d, &id, &name));
	EXPECT_EQ(-1, units_parse_type_line(e, &id, &name));	/* id 0 */
	EXPECT_EQ(-1, units_parse_type_line(f, &id, &name));
	EXPECT_EQ(-1, units_parse_type_line(g, &id, &name));	/* no name */
	EXPECT_EQ(77UL, id);
}

TEST_HARNESS_MAIN
