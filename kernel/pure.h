/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few definitions that the pure-logic files (catalogue, parsers, and
 * later the scheduler policy and MIG placement) need. In the kernel they
 * come from the kernel's headers; in user space (gpuvirtctl, which builds
 * the MIG placement and the catalogue, and the unit tests) the same names
 * come from include/gpuvirt/pure_user.h. A pure-logic file includes only
 * this header and its own.
 */
#ifndef GPUVIRT_PURE_H
#define GPUVIRT_PURE_H

#ifdef __KERNEL__
#include <linux/bitmap.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <gpuvirt/pure_user.h>
#endif

#endif /* GPUVIRT_PURE_H */
