/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Passthrough preflight: the facts about a PCI device and its IOMMU group
 * that decide whether it can be handed to a VM whole, and the verdict.
 *
 * pt_check() only reads files, all of them below a root prefix ("" for the
 * running system, a fixture tree in the unit tests):
 *
 *   ROOT/sys/bus/pci/devices/<bdf>/     class vendor device driver
 *                                       driver_override iommu_group
 *                                       reset_method boot_vga config
 *                                       sriov_totalvfs sriov_numvfs physfn
 *   ROOT/sys/kernel/iommu_groups/<n>/devices/
 *   ROOT/sys/class/iommu/               the IOMMU units
 *   ROOT/sys/class/vtconsole/<vtcon>/name, bind   is fbcon bound
 *   ROOT/sys/class/graphics/<fb>/device           which device each fb is on
 *   ROOT/proc/interrupts                "IR-" chips: interrupt remapping on
 *
 * It does no printing and no writing; pt.c does those for "gpuvirtctl pt"
 * and, through pt_assign() and pt_release(), for "gpuvirtctl apply".
 */
#ifndef GPUVIRTCTL_PT_H
#define GPUVIRTCTL_PT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_BDF_LEN	13	/* "dddd:bb:dd.f" and the NUL */
#define PT_NAME_LEN	64
#define PT_MAX_MEMBERS	32
#define PT_MAX_PORTS	16
#define PT_MAX_REASONS	48
#define PT_REASON_LEN	256

/* Drivers that hand a device to VFIO, or keep it from the host. */
#define PT_DRV_VFIO_PCI		"vfio-pci"
#define PT_DRV_GPUVIRT		"gpuvirt_vfio_pci"
#define PT_DRV_STUB		"pci-stub"

/* What a group member is to the request. */
enum pt_role {
	PT_ROLE_TARGET,		/* the device asked for */
	PT_ROLE_SLOT,		/* another function of the same bus:device */
	PT_ROLE_OTHER,		/* another endpoint of the group */
	PT_ROLE_BRIDGE,		/* a PCI bridge: stays where it is */
};

struct pt_dev {
	char bdf[PT_BDF_LEN];
	uint32_t class;		/* 0xBBSSPP */
	uint16_t vendor, device;
	char driver[PT_NAME_LEN];	/* "" when no driver is bound */
	char override[PT_NAME_LEN];	/* driver_override, "" when unset */
	int group;			/* -1 without an IOMMU group */
	enum pt_role role;
};

enum pt_acs {
	PT_ACS_UNKNOWN,		/* extended config space not readable */
	PT_ACS_NONE,		/* no ACS capability */
	PT_ACS_OFF,		/* capability present, not all enabled */
	PT_ACS_ON,		/* SV, RR, CR and UF enabled where offered */
};

enum pt_tristate { PT_UNKNOWN, PT_OFF, PT_ON };

/* How much a reason weighs in the verdict. */
enum pt_level {
	PT_LEVEL_NOTE,		/* worth knowing, changes nothing */
	PT_LEVEL_FORCE,		/* refused unless the admin says force */
	PT_LEVEL_BLOCK,		/* refused, force or not */
};

struct pt_reason {
	enum pt_level level;
	char text[PT_REASON_LEN];
};

struct pt_port {
	char bdf[PT_BDF_LEN];
	enum pt_acs acs;
};

struct pt_report {
	struct pt_dev dev;		/* the device asked for */

	bool iommu;			/* IOMMU groups exist */
	char units[PT_REASON_LEN];	/* "dmar0 dmar1", "" if none */
	enum pt_tristate irq_remap;

	int group;			/* -1: none */
	unsigned int n_members;
	struct pt_dev members[PT_MAX_MEMBERS];	/* sorted by address */

	unsigned int n_slot;		/* other functions of the slot */
	struct pt_dev slot[8];

	bool reset_file;		/* reset_method exists */
	char reset_methods[PT_NAME_LEN];	/* "flr bus", "" = none */

	bool boot_vga;
	char fb[PT_NAME_LEN];		/* "fb0" when a framebuffer is on it */
	bool console;			/* fbcon draws on it */
	bool host_driver;		/* bound to a non-VFIO driver */

	bool sriov;			/* SR-IOV capable (a PF) */
	unsigned int totalvfs, numvfs;
	char physfn[PT_BDF_LEN];	/* a VF: its PF, else "" */

	unsigned int n_ports;		/* upstream, nearest first */
	struct pt_port ports[PT_MAX_PORTS];

	bool assignable;
	unsigned int n_reasons;
	struct pt_reason reasons[PT_MAX_REASONS];
};

/* What the caller asks for; it changes the verdict, not the facts. */
struct pt_request {
	bool force;		/* accept PT_LEVEL_FORCE reasons */
	bool only;		/* move the device alone, not its group */
};

/*
 * Parse a PCI address, "dddd:bb:dd.f" or "bb:dd.f" (domain 0), into the
 * canonical lower-case form. Returns 0, or -1 with a message naming the bad
 * field in @err.
 */
int pt_bdf_parse(const char *in, char out[PT_BDF_LEN], char *err,
		 size_t errlen);

/*
 * Gather the facts about @bdf (canonical) below @root and decide. Returns 0
 * with @r filled (assignable or not), or -1 with a message in @err when the
 * device does not exist or cannot be read at all.
 */
int pt_check(const char *root, const char *bdf, const struct pt_request *req,
	     struct pt_report *r, char *err, size_t errlen);

/* Is @drv a driver that keeps a device away from the host (VFIO, stub)? */
bool pt_driver_is_vfio(const char *drv);
__attribute__((format(printf, 3, 4)))
int path_fmt(char *buf, size_t len, const char *fmt, ...);

/* Is @class a PCI-to-PCI bridge, which stays with the host? */
bool pt_class_is_bridge(uint32_t class);

/* Names for printing. */
const char *pt_role_name(enum pt_role role);
const char *pt_acs_name(enum pt_acs acs);
const char *pt_level_name(enum pt_level level);
const char *pt_tristate_name(enum pt_tristate t);

/*
 * The members that move in an assignment: every endpoint of the group
 * (bridges stay), or only the device with @only. Fills @idx with indices
 * into r->members and returns how many.
 */
unsigned int pt_moving(const struct pt_report *r, bool only,
		       unsigned int idx[PT_MAX_MEMBERS]);

/* pt.c: assignments, for "pt assign" and "pt release" and for "apply". */

/* One member of an assignment, as its state file records it. */
struct pt_member_state {
	char bdf[PT_BDF_LEN];
	char driver[PT_NAME_LEN];	/* the original driver, "" for none */
	char override[PT_NAME_LEN];	/* the original driver_override */
};

/* An assignment: the state file of its device. */
struct pt_state {
	char device[PT_BDF_LEN];
	char driver[PT_NAME_LEN];	/* the VFIO driver given to */
	bool persistent;
	unsigned int n;
	struct pt_member_state m[PT_MAX_MEMBERS];
};

struct pt_assign_req {
	const char *bdf;		/* canonical */
	const char *driver;		/* PT_DRV_GPUVIRT or PT_DRV_VFIO_PCI */
	bool force;			/* accept PT_LEVEL_FORCE reasons */
	bool only;			/* the device alone, not its group */
	bool persistent;		/* and a udev rule for the next boot */
	unsigned long fail_at;		/* fail the Nth sysfs write; 0: none */
	/*
	 * Optional: makes counted sysfs write number @step (from 1, in the
	 * order GPUVIRT_PT_FAIL_AT counts them) of @val to @path in place of
	 * sysfs_write(), and returns 0 or -errno the same way. The
	 * fault-injection sweep (selftests/debug/gv_failnth.c, path
	 * pt-assign) arms fail-nth around exactly the write() of one step
	 * with it. NULL: sysfs_write(). The rollback's writes are not counted
	 * and never go through it.
	 */
	int (*step_write)(void *data, unsigned long step, const char *path,
			  const char *val);
	void *step_data;
};

/* Where an assignment is recorded. */
struct pt_paths {
	char state[PATH_MAX];
	char rule[PATH_MAX];		/* "" without a udev rule */
};

#define PT_ALREADY	1

/*
 * Give the group of @req->bdf to @req->driver, all or nothing, below @root
 * ("" for the running system). Returns 0 with the moves in @st, PT_ALREADY
 * when the state file says it is done and its members are bound, or -1.
 * Errors and refusals go to stderr (err_print), each naming its device and
 * step; nothing goes to stdout.
 */
int pt_assign(const char *root, const struct pt_assign_req *req,
	      struct pt_state *st, struct pt_paths *paths);

/*
 * Give the devices of the assignment @bdf is part of (its device or a
 * member) back to their original drivers; the state file and the udev rule
 * go. Returns 0 with the assignment that was in @st, or -1 (reported).
 */
int pt_release(const char *root, const char *bdf, struct pt_state *st,
	       struct pt_paths *paths);

/* The state file naming @bdf as its device or a member: 0 or -ENOENT. */
int pt_state_lookup(const char *bdf, struct pt_state *st, char *path,
		    size_t len);

/* Every well-formed state file; free(*list). 0 or -errno. */
int pt_state_list(struct pt_state **list, size_t *n);

/* Does the udev rule of the assignment of @device exist? */
bool pt_rule_exists(const char *device);

/* The driver bound to @bdf now, "" for none. */
void pt_driver_of(const char *root, const char *bdf, char *buf, size_t len);

/* GPUVIRT_PT_FAIL_AT, 0 when unset. */
unsigned long pt_fail_at(void);

struct ctx;
struct nlmsghdr;

/* pt_show.c: "pt show" through netlink, and the members of a pt message. */
int pt_show_run(struct ctx *ctx, const char *bdf);
int pt_print(const struct nlmsghdr *nlh);

#endif /* GPUVIRTCTL_PT_H */
