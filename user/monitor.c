// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpuvirtctl monitor: print the notifications of the "monitor" multicast
 * group as they come, one line (or one JSON document) per event.
 */
#include <errno.h>
#include <string.h>

#include <uapi/linux/gpuvirt.h>

#include "gpuvirtctl.h"
#include "nl.h"
#include "print.h"
#include "pt.h"

/* One notification: its command, the object it is about and what happened. */
struct ntf {
	uint8_t cmd;
	const char *object;	/* JSON key of the object and text tag */
	const char *event;
	int (*print)(const struct nlmsghdr *nlh);
};

static const struct ntf ntfs[] = {
	{ GPUVIRT_CMD_GPU_ADD_NTF, "gpu", "add", gpu_print },
	{ GPUVIRT_CMD_GPU_DEL_NTF, "gpu", "del", gpu_print },
	{ GPUVIRT_CMD_VGPU_ADD_NTF, "vgpu", "add", vgpu_print },
	{ GPUVIRT_CMD_VGPU_DEL_NTF, "vgpu", "del", vgpu_print },
	{ GPUVIRT_CMD_VGPU_CHANGE_NTF, "vgpu", "change", vgpu_print },
	{ GPUVIRT_CMD_SCHED_CHANGE_NTF, "sched", "change", sched_print },
	{ GPUVIRT_CMD_GPU_CHANGE_NTF, "gpu", "change", gpu_print },
	{ GPUVIRT_CMD_GI_ADD_NTF, "gi", "add", gi_print },
	{ GPUVIRT_CMD_GI_DEL_NTF, "gi", "del", gi_print },
	{ GPUVIRT_CMD_PT_OPEN_NTF, "pt", "open", pt_print },
	{ GPUVIRT_CMD_PT_CLOSE_NTF, "pt", "close", pt_print },
	{ GPUVIRT_CMD_PT_QUARANTINE_NTF, "pt", "quarantine", pt_print },
};

struct monitor_state {
	uint16_t family;
};

static const uint8_t ctrl_policy[CTRL_ATTR_FAMILY_NAME + 1] = {
	[CTRL_ATTR_FAMILY_NAME] = MNL_TYPE_NUL_STRING,
};

/* Did the nlctrl message @nlh announce that our family went away? */
static bool family_gone(const struct nlmsghdr *nlh)
{
	const struct nlattr *tb[CTRL_ATTR_FAMILY_NAME + 1];

	if (nl_genl_cmd(nlh) != CTRL_CMD_DELFAMILY ||
	    nl_parse(nlh, ctrl_policy, CTRL_ATTR_FAMILY_NAME, tb) ||
	    !tb[CTRL_ATTR_FAMILY_NAME])
		return false;
	return !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_FAMILY_NAME]),
		       GPUVIRT_FAMILY_NAME);
}

static int print_event(const struct ntf *n, const struct nlmsghdr *nlh)
{
	pr_open_object(NULL);
	if (pr_is_json()) {
		pr_string("event", NULL, n->event);
	} else {
		char tag[64];

		snprintf(tag, sizeof(tag), "[%s %s]", n->object, n->event);
		pr_text(tag);
	}
	pr_open_object(n->object);
	/* A malformed event is reported and skipped; the next may be fine. */
	n->print(nlh);
	pr_close_object();
	pr_close_object();
	pr_eol();
	if (pr_flush()) {
		err_print("cannot write the output: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

static int monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct monitor_state *st = data;
	size_t i;
	int cmd;

	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		if (!family_gone(nlh))
			return 0;
		err_print("the gpuvirt netlink family went away; was the gpuvirt module unloaded?");
		return -ENOENT;
	}
	if (nlh->nlmsg_type != st->family)
		return 0;

	cmd = nl_genl_cmd(nlh);
	for (i = 0; i < sizeof(ntfs) / sizeof(ntfs[0]); i++)
		if (ntfs[i].cmd == cmd)
			return print_event(&ntfs[i], nlh);
	return 0;	/* a notification this version does not know */
}

static const struct arg_spec monitor_args[] = {
	{ .keyword = NULL }
};

static int monitor_run(struct ctx *ctx, const void *opts, uint64_t given)
{
	struct monitor_state st;
	int ret;

	(void)opts;
	(void)given;

	ret = ctx_nl(ctx);
	if (ret)
		return ret;
	st.family = ctx->nl->fam.id;

	if (nl_join_group(ctx->nl, GPUVIRT_MCGRP_MONITOR, false)) {
		nl_perror(ctx->nl, NULL);
		return EXIT_RUNTIME;
	}
	/* Best effort: learn that the module went away rather than hang. */
	nl_join_group(ctx->nl, "notify", true);

	ret = nl_listen(ctx->nl, monitor_cb, &st);
	if (ret < 0 && ctx->nl->error.err)
		nl_perror(ctx->nl, NULL);
	return EXIT_RUNTIME;
}

static const struct cmd monitor_cmd = {
	"monitor", monitor_args, 0, monitor_run,
};

const struct object monitor_object = {
	.name = "monitor",
	.bare = &monitor_cmd,
};
