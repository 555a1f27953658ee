// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated GPUs are created and destroyed through the gpuvirt_sim bus,
 * and what the core registered (its debugfs) matches what the "hardware"
 * (the sim's debugfs) holds. Bad requests fail with a clear errno and log
 * message, and change nothing.
 */
#include "kselftest_harness.h"

#include "gpuvirt_test.h"

#define NEW	GV_SIM_BUS "/new_device"
#define DEL	GV_SIM_BUS "/del_device"

FIXTURE(sim) {
	int kmsg;
};

FIXTURE_SETUP(sim)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_unload_all());
	ASSERT_EQ(0, gv_module_load(GV_CORE));
	ASSERT_EQ(0, gv_module_load(GV_SIM));
	self->kmsg = gv_kmsg_open();
	ASSERT_LE(0, self->kmsg);
}

FIXTURE_TEARDOWN(sim)
{
	if (self->kmsg >= 0)
		close(self->kmsg);
	gv_unload_all();
}

static void gpu_paths(unsigned int id, char *dev, char *hw, char *info,
		      size_t len)
{
	snprintf(dev, len, GV_SIM_BUS "/devices/sim%u", id);
	snprintf(hw, len, GV_SIM_DEBUGFS "/sim%u/hw", id);
	snprintf(info, len, GV_DEBUGFS "/gpus/sim%u/info", id);
}

TEST_F(sim, add_remove_each_model)
{
	static const struct {
		const char *model;
		unsigned long long vram;
	} models[] = {
		{ "a100-40gb", 40ULL << 30 },
		{ "a100-80gb", 80ULL << 30 },
		{ "h100-80gb", 80ULL << 30 },
		{ "h200-141gb", 141ULL << 30 },
	};
	char dev[256], hw[256], info[256], cmd[64], val[64], link[256];
	char drv[300];
	unsigned int i;
	ssize_t n;

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		snprintf(cmd, sizeof(cmd), "%u %s\n", i, models[i].model);
		ASSERT_EQ(0, gv_write(NEW, cmd));
		gpu_paths(i, dev, hw, info, sizeof(dev));

		/* on the bus, bound to the sim driver (an mdev parent must be) */
		ASSERT_TRUE(gv_exists(dev));
		snprintf(drv, sizeof(drv), "%s/driver", dev);
		n = readlink(drv, link, sizeof(link) - 1);
		ASSERT_LT(0, n);
		link[n] = '\0';
		EXPECT_STREQ("gpuvirt_sim", strrchr(link, '/') + 1);

		/* the hardware... */
		EXPECT_EQ(models[i].vram, gv_kv_u64(hw, "vram_size"));
		EXPECT_EQ(7, gv_kv_u64(hw, "engines"));
		EXPECT_EQ(1, gv_kv_u64(hw, "registered"));
		/* ...and the core agree */
		EXPECT_EQ(i, gv_kv_u64(info, "id"));
		EXPECT_EQ(models[i].vram, gv_kv_u64(info, "vram_size"));
		EXPECT_EQ(7, gv_kv_u64(info, "engines"));
		ASSERT_EQ(0, gv_kv(info, "model", val, sizeof(val)));
		EXPECT_STREQ(models[i].model, val);
		ASSERT_EQ(0, gv_kv(info, "mode", val, sizeof(val)));
		EXPECT_STREQ("timesliced", val);
		ASSERT_EQ(0, gv_kv(info, "backend", val, sizeof(val)));
		EXPECT_STREQ("gpuvirt_sim", val);
	}

	for (i = 0; i < ARRAY_SIZE(models); i++) {
		snprintf(cmd, sizeof(cmd), "%u\n", i);
		ASSERT_EQ(0, gv_write(DEL, cmd));
		gpu_paths(i, dev, hw, info, sizeof(dev));
		EXPECT_FALSE(gv_exists(dev));
		EXPECT_FALSE(gv_exists(hw));
		EXPECT_FALSE(gv_exists(info));
	}
}

TEST_F(sim, custom_model)
{
	char val[64];

	ASSERT_EQ(0, gv_write(NEW, "9 custom 24G 3"));
	EXPECT_EQ(24ULL << 30, gv_kv_u64(GV_SIM_DEBUGFS "/sim9/hw", "vram_size"));
	EXPECT_EQ(3, gv_kv_u64(GV_SIM_DEBUGFS "/sim9/hw", "engines"));
	EXPECT_EQ(24ULL << 30, gv_kv_u64(GV_DEBUGFS "/gpus/sim9/info", "vram_size"));
	ASSERT_EQ(0, gv_kv(GV_DEBUGFS "/gpus/sim9/info", "model", val, sizeof(val)));
	EXPECT_STREQ("custom", val);
	EXPECT_EQ(0, gv_write(DEL, "9"));
}

TEST_F(sim, bad_requests_change_nothing)
{
	static const struct {
		const char *file, *in;
		int err;
		const char *log;
	} cases[] = {
		{ NEW, "0 h200-141gb", -EEXIST, "a GPU with id 0 exists" },
		{ NEW, "1 rtx-9090", -EINVAL, "unknown model \"rtx-9090\"" },
		{ NEW, "x h200-141gb", -EINVAL, "ID must be" },
		{ NEW, "1", -EINVAL, "expected \"ID MODEL\"" },
		{ NEW, "1 h200-141gb junk", -EINVAL, "unexpected text" },
		{ NEW, "1 custom 100M 1", -EINVAL, "custom VRAM" },
		{ NEW, "1 custom 8G 65", -EINVAL, "custom ENGINES" },
		{ DEL, "5", -ENOENT, "no GPU with id 5" },
		{ DEL, "zero", -EINVAL, "expected \"ID\"" },
	};
	unsigned int i;

	ASSERT_EQ(0, gv_write(NEW, "0 a100-40gb"));
	gv_kmsg_find(self->kmsg, "");	/* skip what is logged so far */

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		EXPECT_EQ(cases[i].err, gv_write(cases[i].file, cases[i].in))
			TH_LOG("writing \"%s\"", cases[i].in);
		EXPECT_TRUE(gv_kmsg_find(self->kmsg, cases[i].log))
			TH_LOG("no log line \"%s\"", cases[i].log);
	}

	/* GPU 0 is untouched and nothing else appeared */
	EXPECT_EQ(40ULL << 30, gv_kv_u64(GV_SIM_DEBUGFS "/sim0/hw", "vram_size"));
	EXPECT_TRUE(gv_exists(GV_DEBUGFS "/gpus/sim0/info"));
	EXPECT_FALSE(gv_exists(GV_SIM_BUS "/devices/sim1"));
	EXPECT_FALSE(gv_exists(GV_DEBUGFS "/gpus/sim1"));
	EXPECT_FALSE(gv_exists(GV_SIM_DEBUGFS "/sim1"));
}

TEST_F(sim, many_gpus)
{
	char cmd[64], path[256];
	unsigned int i;

	for (i = 0; i < 64; i++) {
		snprintf(cmd, sizeof(cmd), "%u custom 1G 1", 1000 + i);
		ASSERT_EQ(0, gv_write(NEW, cmd));
	}
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim%u/info", 1000 + i);
		EXPECT_EQ(1000 + i, gv_kv_u64(path, "id"));
	}
	for (i = 0; i < 64; i += 2) {
		snprintf(cmd, sizeof(cmd), "%u", 1000 + i);
		ASSERT_EQ(0, gv_write(DEL, cmd));
	}
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), GV_SIM_BUS "/devices/sim%u", 1000 + i);
		EXPECT_EQ(i % 2 == 1, gv_exists(path)) TH_LOG("sim%u", 1000 + i);
	}
	/* the remaining ones go with the module, in the teardown */
}

TEST_HARNESS_MAIN
