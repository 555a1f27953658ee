// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirtctl pt show BDF: what the kernel knows of a device for
 * passthrough (netlink pt-get): its IOMMU group as the IOMMU core has it,
 * whether the PCI core can reset it, whether it is the boot VGA device,
 * and, when it is bound to gpuvirt_vfio_pci, that driver's state: open,
 * quarantined, the last opener and its counters. The same members print
 * the pt notifications of "monitor".
 */
#include <errno.h>
#include <stdio.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "pt.h"

static const struct nl_attr_names pt_names = PT_ATTR_NAMES(NULL);

static void pr_hex4(const char *key, uint32_t v, unsigned int digits)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%0*x", digits, v);
	pr_string(key, NULL, buf);
}

static int pt_print_members(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_PT_MEMBER_MAX + 1];
	const struct nlattr *a;
	bool open = false;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) != GPUVIRT_A_PT_MEMBERS)
			continue;
		if (nl_parse_nested(a, pt_member_policy,
				    GPUVIRT_A_PT_MEMBER_MAX, tb) ||
		    !tb[GPUVIRT_A_PT_MEMBER_BDF]) {
			err_print("malformed pt message from the kernel");
			return -EINVAL;
		}
		if (!open) {
			pr_open_array("members");
			open = true;
		}
		pr_open_object(NULL);
		pr_string("bdf", pr_is_json() ? NULL : "member",
			  mnl_attr_get_str(tb[GPUVIRT_A_PT_MEMBER_BDF]));
		pr_string("driver", NULL, tb[GPUVIRT_A_PT_MEMBER_DRIVER] ?
			  mnl_attr_get_str(tb[GPUVIRT_A_PT_MEMBER_DRIVER]) :
			  "none");
		if (tb[GPUVIRT_A_PT_MEMBER_CLASS])
			pr_hex4("class",
				mnl_attr_get_u32(tb[GPUVIRT_A_PT_MEMBER_CLASS]), 6);
		if (tb[GPUVIRT_A_PT_MEMBER_BRIDGE])
			pr_bool("bridge", NULL,
				mnl_attr_get_u8(tb[GPUVIRT_A_PT_MEMBER_BRIDGE]));
		pr_close_object();
	}
	if (open)
		pr_close_array();
	return 0;
}

/* The members of one pt reply or notification. */
int pt_print(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[GPUVIRT_A_PT_MAX + 1];

	if (nl_parse(nlh, pt_policy, GPUVIRT_A_PT_MAX, tb) ||
	    !tb[GPUVIRT_A_PT_BDF]) {
		err_print("malformed pt message from the kernel");
		return -EINVAL;
	}
	pr_string("bdf", NULL, mnl_attr_get_str(tb[GPUVIRT_A_PT_BDF]));
	if (tb[GPUVIRT_A_PT_VENDOR])
		pr_hex4("vendor", mnl_attr_get_u32(tb[GPUVIRT_A_PT_VENDOR]), 4);
	if (tb[GPUVIRT_A_PT_DEVICE])
		pr_hex4("device", mnl_attr_get_u32(tb[GPUVIRT_A_PT_DEVICE]), 4);
	if (tb[GPUVIRT_A_PT_CLASS])
		pr_hex4("class", mnl_attr_get_u32(tb[GPUVIRT_A_PT_CLASS]), 6);
	pr_string("driver", NULL, tb[GPUVIRT_A_PT_DRIVER] ?
		  mnl_attr_get_str(tb[GPUVIRT_A_PT_DRIVER]) : "none");
	if (tb[GPUVIRT_A_PT_IOMMU_GROUP])
		pr_uint("iommu-group", "group",
			mnl_attr_get_u32(tb[GPUVIRT_A_PT_IOMMU_GROUP]));
	else
		pr_string("iommu-group", "group", "none");
	if (tb[GPUVIRT_A_PT_BOOT_VGA])
		pr_bool("boot-vga", NULL,
			mnl_attr_get_u8(tb[GPUVIRT_A_PT_BOOT_VGA]));
	if (tb[GPUVIRT_A_PT_RESET])
		pr_bool("reset", NULL, mnl_attr_get_u8(tb[GPUVIRT_A_PT_RESET]));
	pr_bool("bound", NULL, tb[GPUVIRT_A_PT_BOUND] &&
		mnl_attr_get_u8(tb[GPUVIRT_A_PT_BOUND]));
	if (tb[GPUVIRT_A_PT_OPEN])
		pr_bool("open", NULL, mnl_attr_get_u8(tb[GPUVIRT_A_PT_OPEN]));
	if (tb[GPUVIRT_A_PT_QUARANTINED])
		pr_bool("quarantined", NULL,
			mnl_attr_get_u8(tb[GPUVIRT_A_PT_QUARANTINED]));
	if (tb[GPUVIRT_A_PT_REASON])
		pr_string("reason", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_PT_REASON]));
	if (tb[GPUVIRT_A_PT_OPENS])
		pr_uint("opens", NULL, mnl_attr_get_u64(tb[GPUVIRT_A_PT_OPENS]));
	if (tb[GPUVIRT_A_PT_CLOSES])
		pr_uint("closes", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_PT_CLOSES]));
	if (tb[GPUVIRT_A_PT_REFUSED])
		pr_uint("refused", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_PT_REFUSED]));
	if (tb[GPUVIRT_A_PT_RESETS])
		pr_uint("resets", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_PT_RESETS]));
	if (tb[GPUVIRT_A_PT_FAILURES])
		pr_uint("failures", NULL,
			mnl_attr_get_u64(tb[GPUVIRT_A_PT_FAILURES]));
	if (tb[GPUVIRT_A_PT_OPENER_PID])
		pr_uint("opener-pid", "opener",
			mnl_attr_get_u32(tb[GPUVIRT_A_PT_OPENER_PID]));
	if (tb[GPUVIRT_A_PT_OPENER_COMM])
		pr_string("opener-comm", NULL,
			  mnl_attr_get_str(tb[GPUVIRT_A_PT_OPENER_COMM]));
	return pt_print_members(nlh);
}

/* pt show BDF */
int pt_show_run(struct ctx *ctx, const char *bdf)
{
	struct nlmsghdr *nlh;
	int ret;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	nlh = nl_msg_start(ctx->nl, GPUVIRT_CMD_PT_GET, 0);
	mnl_attr_put_strz(nlh, GPUVIRT_A_PT_BDF, bdf);
	return show_exchange(ctx, "pt", pt_print, &pt_names);
}
