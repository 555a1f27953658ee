// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the passthrough preflight (user/pt_check.c): PCI address
 * parsing, and the facts and verdict of "gpuvirtctl pt check" on fake sysfs
 * trees. Each tree is built at run time by fixtures/pt/mktree.sh from a
 * one-fact-a-line description in fixtures/pt/<name>.pt (symlinks do not
 * live well in git), in a temporary directory removed afterwards.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "pt.h"

#ifndef PT_FIXTURES
#error "PT_FIXTURES: the directory of the fixture descriptions"
#endif

/* Addresses --------------------------------------------------------------- */

FIXTURE(bdf) {
	char out[PT_BDF_LEN];
	char err[256];
};

FIXTURE_VARIANT(bdf) {
	const char *in;
	const char *out;	/* NULL: refused */
	const char *err;	/* a part of the message */
};

#define BDF_OK(vname, i, o) \
	FIXTURE_VARIANT_ADD(bdf, vname) { .in = i, .out = o }
#define BDF_BAD(vname, i, e) \
	FIXTURE_VARIANT_ADD(bdf, vname) { .in = i, .err = e }

BDF_OK(full, "0000:01:00.0", "0000:01:00.0");
BDF_OK(short_form, "01:00.1", "0000:01:00.1");
BDF_OK(upper_case, "0000:AF:1F.7", "0000:af:1f.7");
BDF_BAD(digits_only, "10000", "is not a PCI address");
BDF_BAD(not_pci, "sim0", "\"sim0\" is not a PCI address");
BDF_BAD(uuid, "5a3c0001-0000-4000-8000-000000000001", "is not a PCI address");
BDF_BAD(empty, "", "\"\" is not a PCI address");
BDF_BAD(no_function, "0000:01:00", "is not a PCI address");
BDF_BAD(domain_short, "000:01:00.0", "the domain must be 4 hex digits");
BDF_BAD(bus_hex, "0000:0g:00.0", "the bus must be 2 hex digits");
BDF_BAD(device_range, "0000:01:20.0", "the device must be 2 hex digits from 00 to 1f");
BDF_BAD(function_range, "0000:01:00.8", "the function must be one digit from 0 to 7");
BDF_BAD(trailing, "0000:01:00.0x", "the function must be one digit");
BDF_BAD(path, "/sys/bus/pci/devices/0000:01:00.0", "the domain must be 4 hex digits");

FIXTURE_SETUP(bdf) {}
FIXTURE_TEARDOWN(bdf) {}

TEST_F(bdf, parse)
{
	int ret = pt_bdf_parse(variant->in, self->out, self->err,
			       sizeof(self->err));

	if (variant->out) {
		ASSERT_EQ(0, ret) TH_LOG("%s", self->err);
		EXPECT_STREQ(variant->out, self->out);
	} else if (variant->err) {
		ASSERT_EQ(-1, ret);
		EXPECT_NE(NULL, strstr(self->err, variant->err))
			TH_LOG("got: %s", self->err);
	} else {
		EXPECT_EQ(-1, ret);
	}
}

/* Fixture trees ----------------------------------------------------------- */

FIXTURE(tree) {
	char root[PATH_MAX];
	struct pt_report r;
	char err[PATH_MAX + 128];
};

FIXTURE_SETUP(tree)
{
	snprintf(self->root, sizeof(self->root), "%s/gv-pt.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT_NE(NULL, mkdtemp(self->root));
}

FIXTURE_TEARDOWN(tree)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->root);
	if (system(cmd))
		TH_LOG("could not remove %s", self->root);
}

/* Build fixture @name in the test's root. */
static int build(const char *root, const char *name)
{
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "'%s/mktree.sh' '%s/%s.pt' '%s'",
		 PT_FIXTURES, PT_FIXTURES, name, root);
	return system(cmd);
}

static int check(const char *root, const char *bdf, bool force, bool only,
		 struct pt_report *r, char *err, size_t len)
{
	struct pt_request req = { .force = force, .only = only };

	return pt_check(root, bdf, &req, r, err, len);
}

/* The number of reasons of @level, and whether one contains @text. */
static unsigned int n_level(const struct pt_report *r, enum pt_level level)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->n_reasons; i++)
		n += r->reasons[i].level == level;
	return n;
}

static bool has_reason(const struct pt_report *r, enum pt_level level,
		       const char *text)
{
	unsigned int i;

	for (i = 0; i < r->n_reasons; i++)
		if (r->reasons[i].level == level &&
		    strstr(r->reasons[i].text, text))
			return true;
	return false;
}

static void dump(struct __test_metadata *_metadata, const struct pt_report *r)
{
	unsigned int i;

	for (i = 0; i < r->n_reasons; i++)
		TH_LOG("%s: %s", pt_level_name(r->reasons[i].level),
		       r->reasons[i].text);
}

#define CHECK(bdf, force, only)						\
	do {								\
		ASSERT_EQ(0, check(self->root, bdf, force, only, &self->r, \
				   self->err, sizeof(self->err)))	\
			TH_LOG("%s", self->err);			\
	} while (0)

/* A GPU with its HDMI audio: one group, both move, the audio with it. */
TEST_F(tree, gpu_with_hdmi_audio)
{
	struct pt_report *r = &self->r;
	unsigned int idx[PT_MAX_MEMBERS];

	ASSERT_EQ(0, build(self->root, "gpu-hdmi"));
	CHECK("0000:01:00.0", false, false);

	EXPECT_TRUE(r->iommu);
	EXPECT_STREQ("dmar0", r->units);
	EXPECT_EQ(PT_ON, (int)r->irq_remap);
	EXPECT_EQ(12, r->group);
	ASSERT_EQ(2U, r->n_members);
	EXPECT_STREQ("0000:01:00.0", r->members[0].bdf);
	EXPECT_EQ(PT_ROLE_TARGET, (int)r->members[0].role);
	EXPECT_STREQ("nouveau", r->members[0].driver);
	EXPECT_EQ(0x030000U, r->members[0].class);
	EXPECT_EQ(0x10de, r->members[0].vendor);
	EXPECT_EQ(0x2204, r->members[0].device);
	EXPECT_STREQ("0000:01:00.1", r->members[1].bdf);
	EXPECT_EQ(PT_ROLE_SLOT, (int)r->members[1].role);
	EXPECT_STREQ("snd_hda_intel", r->members[1].driver);
	ASSERT_EQ(1U, r->n_slot);
	EXPECT_STREQ("0000:01:00.1", r->slot[0].bdf);
	EXPECT_EQ(12, r->slot[0].group);
	EXPECT_STREQ("flr bus", r->reset_methods);
	EXPECT_FALSE(r->boot_vga);
	EXPECT_FALSE(r->console);
	EXPECT_TRUE(r->host_driver);
	EXPECT_FALSE(r->sriov);
	ASSERT_EQ(1U, r->n_ports);
	EXPECT_STREQ("0000:00:01.0", r->ports[0].bdf);
	EXPECT_EQ(PT_ACS_ON, (int)r->ports[0].acs);

	EXPECT_TRUE(r->assignable) dump(_metadata, r);
	EXPECT_EQ(0U, n_level(r, PT_LEVEL_BLOCK));
	EXPECT_EQ(0U, n_level(r, PT_LEVEL_FORCE));
	EXPECT_TRUE(has_reason(r, PT_LEVEL_NOTE,
			       "in use by host driver nouveau"));
	ASSERT_EQ(2U, pt_moving(r, false, idx));
	EXPECT_EQ(0U, idx[0]);
	EXPECT_EQ(1U, idx[1]);

	/* Asking for the GPU alone would split the pair: refused, even forced. */
	CHECK("0000:01:00.0", true, true);
	EXPECT_FALSE(r->assignable);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_BLOCK,
			       "0000:01:00.1 is in the same IOMMU group 12 and would stay bound to snd_hda_intel"));
	ASSERT_EQ(1U, pt_moving(r, true, idx));

	/* From the audio function's side, the same group and the same move. */
	CHECK("0000:01:00.1", false, false);
	EXPECT_TRUE(r->assignable);
	EXPECT_EQ(PT_ROLE_SLOT, (int)r->members[0].role);
	EXPECT_EQ(PT_ROLE_TARGET, (int)r->members[1].role);
	EXPECT_STREQ("flr", r->reset_methods);
}

/* A bridge in the group stays and does not block; the bridge itself does. */
TEST_F(tree, bridge_in_group)
{
	struct pt_report *r = &self->r;
	unsigned int idx[PT_MAX_MEMBERS];

	ASSERT_EQ(0, build(self->root, "bridge"));
	CHECK("0000:03:00.0", false, false);
	EXPECT_EQ(7, r->group);
	ASSERT_EQ(2U, r->n_members);
	EXPECT_EQ(PT_ROLE_BRIDGE, (int)r->members[0].role);
	EXPECT_EQ(PT_ROLE_TARGET, (int)r->members[1].role);
	EXPECT_TRUE(r->assignable) dump(_metadata, r);
	ASSERT_EQ(1U, pt_moving(r, false, idx));
	EXPECT_EQ(1U, idx[0]);
	/* Nearest port first; the PCIe-to-PCI bridge has no ACS. */
	ASSERT_EQ(2U, r->n_ports);
	EXPECT_STREQ("0000:02:00.0", r->ports[0].bdf);
	EXPECT_EQ(PT_ACS_NONE, (int)r->ports[0].acs);
	EXPECT_STREQ("0000:00:1c.0", r->ports[1].bdf);
	EXPECT_EQ(PT_ACS_ON, (int)r->ports[1].acs);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_NOTE,
			       "upstream port 0000:02:00.0 has ACS none"));
	EXPECT_STREQ("bus", r->reset_methods);

	CHECK("0000:02:00.0", true, false);
	EXPECT_FALSE(r->assignable);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_BLOCK,
			       "0000:02:00.0 is a PCI bridge (class 0x060401): bridges stay with the host"));
}

/* pci-stub holds a device away from the host: no host driver, fine. */
TEST_F(tree, pci_stub)
{
	struct pt_report *r = &self->r;

	ASSERT_EQ(0, build(self->root, "stub"));
	CHECK("0000:05:00.0", false, false);
	EXPECT_EQ(3, r->group);
	ASSERT_EQ(2U, r->n_members);
	EXPECT_STREQ("pci-stub", r->members[0].driver);
	EXPECT_STREQ("pci-stub", r->members[1].driver);
	EXPECT_FALSE(r->host_driver);
	EXPECT_TRUE(r->assignable) dump(_metadata, r);
	EXPECT_EQ(0U, r->n_reasons) dump(_metadata, r);
	/* Config space beyond 64 bytes unreadable: ACS unknown, no note. */
	ASSERT_EQ(1U, r->n_ports);
	EXPECT_EQ(PT_ACS_UNKNOWN, (int)r->ports[0].acs);

	/* Alone, it leaves its stubbed audio behind: allowed. */
	CHECK("0000:05:00.0", false, true);
	EXPECT_TRUE(r->assignable) dump(_metadata, r);
}

/* Another device in the group with a host driver: refused unless forced. */
TEST_F(tree, foreign_driver_in_group)
{
	struct pt_report *r = &self->r;

	ASSERT_EQ(0, build(self->root, "stub"));
	CHECK("0000:06:00.0", false, false);
	EXPECT_FALSE(r->assignable);
	EXPECT_EQ(1U, n_level(r, PT_LEVEL_FORCE)) dump(_metadata, r);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_FORCE,
			       "0000:06:01.0 (class 0x020000) shares IOMMU group 9 but is another device, used by host driver e1000e"));
	EXPECT_EQ(PT_ROLE_OTHER, (int)r->members[1].role);
	CHECK("0000:06:00.0", true, false);
	EXPECT_TRUE(r->assignable);

	/* The q35 chipset group: the LPC bridge keeps it with the host. */
	CHECK("0000:00:1f.2", false, false);
	EXPECT_FALSE(r->assignable);
	EXPECT_EQ(3U, r->n_members);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_FORCE,
			       "0000:00:1f.0 is a chipset ISA/LPC bridge (class 0x060100, lpc_ich)"));
	EXPECT_TRUE(has_reason(r, PT_LEVEL_NOTE,
			       "no reset method (no reset_method file)"));
}

/* The boot VGA device that fbcon draws on: refused unless forced. */
TEST_F(tree, boot_vga)
{
	struct pt_report *r = &self->r;

	ASSERT_EQ(0, build(self->root, "boot-vga"));
	CHECK("0000:00:02.0", false, false);
	EXPECT_TRUE(r->boot_vga);
	EXPECT_STREQ("fb0", r->fb);
	EXPECT_TRUE(r->console);
	EXPECT_EQ(0U, r->n_ports);
	EXPECT_FALSE(r->assignable);
	EXPECT_EQ(2U, n_level(r, PT_LEVEL_FORCE)) dump(_metadata, r);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_FORCE,
			       "0000:00:02.0 is the boot VGA device"));
	EXPECT_TRUE(has_reason(r, PT_LEVEL_FORCE,
			       "the host console (fbcon) draws on 0000:00:02.0 through fb0"));
	CHECK("0000:00:02.0", true, false);
	EXPECT_TRUE(r->assignable);

	/* A second framebuffer: fbcon draws on the first one only. */
	CHECK("0000:00:03.0", false, false);
	EXPECT_STREQ("fb1", r->fb);
	EXPECT_FALSE(r->console);
	EXPECT_TRUE(r->assignable) dump(_metadata, r);

	/* Another device of the same host: nothing of the console. */
	CHECK("0000:00:14.0", false, false);
	EXPECT_FALSE(r->boot_vga);
	EXPECT_FALSE(r->console);
	EXPECT_TRUE(r->assignable) dump(_metadata, r);
}

/* Empty reset_method, and none at all: notes, not refusals. */
TEST_F(tree, empty_reset_method)
{
	struct pt_report *r = &self->r;

	ASSERT_EQ(0, build(self->root, "no-reset"));
	CHECK("0000:00:05.0", false, false);
	EXPECT_TRUE(r->reset_file);
	EXPECT_STREQ("", r->reset_methods);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_NOTE,
			       "0000:00:05.0 has no reset method (reset_method is empty)"));
	EXPECT_TRUE(r->assignable) dump(_metadata, r);
	EXPECT_EQ(2U, r->n_members);

	CHECK("0000:00:07.0", false, false);
	EXPECT_FALSE(r->reset_file);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_NOTE, "(no reset_method file)"));
	EXPECT_TRUE(r->assignable);
}

/* No IOMMU: refused whatever else, and force does not help. */
TEST_F(tree, iommu_off)
{
	struct pt_report *r = &self->r;

	ASSERT_EQ(0, build(self->root, "iommu-off"));
	CHECK("0000:01:00.0", true, false);
	EXPECT_FALSE(r->iommu);
	EXPECT_STREQ("", r->units);
	EXPECT_EQ(-1, r->group);
	EXPECT_EQ(0U, r->n_members);
	EXPECT_EQ(PT_OFF, (int)r->irq_remap);
	EXPECT_FALSE(r->assignable);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_BLOCK,
			       "the IOMMU is off (no IOMMU groups): boot with intel_iommu=on or amd_iommu=on"));
	/* Interrupt remapping is only worth a note with an IOMMU. */
	EXPECT_FALSE(has_reason(r, PT_LEVEL_NOTE, "interrupt remapping"));
	ASSERT_EQ(1U, r->n_ports);
	EXPECT_EQ(PT_ACS_OFF, (int)r->ports[0].acs);
	/* The slot is still reported without groups. */
	ASSERT_EQ(1U, r->n_slot);
	EXPECT_EQ(-1, r->slot[0].group);
}

/* An SR-IOV PF with VFs enabled is refused; a VF is fine on its own. */
TEST_F(tree, sriov_pf_with_vfs)
{
	struct pt_report *r = &self->r;
	unsigned int idx[PT_MAX_MEMBERS];

	ASSERT_EQ(0, build(self->root, "sriov"));
	CHECK("0000:41:00.0", true, false);
	EXPECT_STREQ("dmar0 dmar1", r->units);
	EXPECT_TRUE(r->sriov);
	EXPECT_EQ(16U, r->totalvfs);
	EXPECT_EQ(4U, r->numvfs);
	EXPECT_STREQ("", r->physfn);
	EXPECT_FALSE(r->assignable);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_BLOCK,
			       "0000:41:00.0 has 4 SR-IOV virtual functions enabled"));
	/* The VFs share the slot but not the group: nothing moves with it. */
	EXPECT_EQ(1U, r->n_members);
	EXPECT_EQ(4U, r->n_slot);
	EXPECT_EQ(1U, pt_moving(r, false, idx));

	CHECK("0000:41:00.6", false, false);
	EXPECT_FALSE(r->sriov);
	EXPECT_STREQ("0000:41:00.0", r->physfn);
	EXPECT_EQ(34, r->group);
	EXPECT_TRUE(r->assignable) dump(_metadata, r);
	EXPECT_TRUE(has_reason(r, PT_LEVEL_NOTE,
			       "0000:41:00.6 is an SR-IOV virtual function of 0000:41:00.0"));
}

/* Nonexistent devices are errors, not reports. */
TEST_F(tree, no_such_device)
{
	ASSERT_EQ(0, build(self->root, "gpu-hdmi"));
	ASSERT_EQ(-1, check(self->root, "0000:09:00.0", false, false,
			    &self->r, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "no PCI device 0000:09:00.0"));
}

/* The interrupt remapping reading: "IR-" chips or not, or no file. */
TEST_F(tree, interrupt_remapping)
{
	struct pt_report *r = &self->r;
	char path[PATH_MAX + 32];

	ASSERT_EQ(0, build(self->root, "no-reset"));
	CHECK("0000:00:07.0", false, false);
	EXPECT_EQ(PT_ON, (int)r->irq_remap);
	snprintf(path, sizeof(path), "%s/proc/interrupts", self->root);
	ASSERT_EQ(0, unlink(path));
	CHECK("0000:00:07.0", false, false);
	EXPECT_EQ(PT_UNKNOWN, (int)r->irq_remap);
	EXPECT_FALSE(has_reason(r, PT_LEVEL_NOTE, "interrupt remapping"));
}

TEST_HARNESS_MAIN
