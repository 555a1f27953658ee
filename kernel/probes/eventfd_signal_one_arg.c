// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: eventfd_signal() takes only the context. It lost its count
 * argument in v6.8; v6.1 still takes (ctx, n).
 */
#include <linux/eventfd.h>

static void __maybe_unused probe_eventfd_signal(struct eventfd_ctx *ctx)
{
	eventfd_signal(ctx);
}
