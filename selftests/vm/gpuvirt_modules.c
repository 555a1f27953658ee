// SPDX-License-Identifier: GPL-2.0-only
/*
 * The three gpuvirt modules load and unload cleanly, in order, with GPUs
 * present, and the dependency order is enforced. The runner fails the test
 * if the kernel logs a WARNING, BUG, Oops or lockdep report meanwhile.
 */
#include "kselftest_harness.h"

#include "gpuvirt_test.h"

FIXTURE(mods) {
	int unused;
};

FIXTURE_SETUP(mods)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_unload_all());
}

FIXTURE_TEARDOWN(mods)
{
	gv_unload_all();
}

TEST_F(mods, load_unload_each)
{
	ASSERT_EQ(0, gv_module_load(GV_CORE));
	EXPECT_TRUE(gv_module_loaded(GV_CORE));
	EXPECT_TRUE(gv_exists(GV_DEBUGFS "/gpus"));

	ASSERT_EQ(0, gv_module_load(GV_SIM));
	EXPECT_TRUE(gv_exists(GV_SIM_BUS "/new_device"));
	EXPECT_TRUE(gv_exists(GV_SIM_BUS "/del_device"));
	EXPECT_TRUE(gv_exists(GV_SIM_BUS "/drivers/gpuvirt_sim"));
	EXPECT_TRUE(gv_exists(GV_SIM_DEBUGFS));

	ASSERT_EQ(0, gv_module_load(GV_VFIO_PCI));
	EXPECT_TRUE(gv_exists("/sys/bus/pci/drivers/gpuvirt_vfio_pci"));

	/* Loading twice is refused, and does not disturb the loaded copy. */
	EXPECT_EQ(-EEXIST, gv_module_load(GV_CORE));

	EXPECT_EQ(0, gv_module_unload(GV_VFIO_PCI));
	EXPECT_FALSE(gv_exists("/sys/bus/pci/drivers/gpuvirt_vfio_pci"));
	EXPECT_EQ(0, gv_module_unload(GV_SIM));
	EXPECT_FALSE(gv_exists(GV_SIM_BUS));
	EXPECT_FALSE(gv_exists(GV_SIM_DEBUGFS));
	EXPECT_EQ(0, gv_module_unload(GV_CORE));
	EXPECT_FALSE(gv_exists(GV_DEBUGFS));
	EXPECT_FALSE(gv_module_loaded(GV_CORE));
}

TEST_F(mods, sim_needs_core)
{
	/* gpuvirt_sim uses the core's symbols: without it, it cannot load. */
	EXPECT_EQ(-ENOENT, gv_module_load(GV_SIM));
	EXPECT_FALSE(gv_module_loaded(GV_SIM));

	ASSERT_EQ(0, gv_module_load(GV_CORE));
	ASSERT_EQ(0, gv_module_load(GV_SIM));
	/* ...and the core cannot go while the sim uses it. */
	EXPECT_EQ(-EWOULDBLOCK, gv_module_unload(GV_CORE));
	EXPECT_TRUE(gv_module_loaded(GV_CORE));
	EXPECT_TRUE(gv_exists(GV_SIM_BUS "/new_device"));
}

TEST_F(mods, vfio_pci_needs_core)
{
	/*
	 * gpuvirt_vfio_pci reports its devices and events through the core's
	 * netlink family: it needs the core's symbols too.
	 */
	EXPECT_EQ(-ENOENT, gv_module_load(GV_VFIO_PCI));
	EXPECT_FALSE(gv_module_loaded(GV_VFIO_PCI));

	ASSERT_EQ(0, gv_module_load(GV_CORE));
	ASSERT_EQ(0, gv_module_load(GV_VFIO_PCI));
	EXPECT_EQ(-EWOULDBLOCK, gv_module_unload(GV_CORE));
	EXPECT_EQ(0, gv_module_unload(GV_VFIO_PCI));
	EXPECT_EQ(0, gv_module_unload(GV_CORE));
}

TEST_F(mods, unload_with_gpus)
{
	unsigned int cycle;
	char buf[64];

	for (cycle = 0; cycle < 3; cycle++) {
		ASSERT_EQ(0, gv_module_load(GV_CORE));
		ASSERT_EQ(0, gv_module_load(GV_SIM));
		ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", "0 a100-40gb"));
		ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", "1 h200-141gb"));
		ASSERT_EQ(0, gv_write(GV_SIM_BUS "/new_device", "2 custom 8G 2"));
		EXPECT_TRUE(gv_exists(GV_DEBUGFS "/gpus/sim2/info"));

		/* Unloading the backend takes its GPUs out of the core. */
		ASSERT_EQ(0, gv_module_unload(GV_SIM));
		EXPECT_FALSE(gv_exists(GV_DEBUGFS "/gpus/sim0"));
		EXPECT_FALSE(gv_exists(GV_DEBUGFS "/gpus/sim1"));
		EXPECT_FALSE(gv_exists(GV_DEBUGFS "/gpus/sim2"));
		ASSERT_EQ(0, gv_module_unload(GV_CORE));
		snprintf(buf, sizeof(buf), "cycle %u", cycle);
		TH_LOG("%s done", buf);
	}
}

TEST_HARNESS_MAIN
