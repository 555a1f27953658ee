/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few definitions that the pure-logic files (catalogue, parsers, and
 * later the scheduler policy and MIG placement) need, in a form that builds
 * both in the kernel and in userspace, where the unit tests drive them. A
 * pure-logic file includes only this header and its own.
 */
#ifndef GPUVIRT_PURE_H
#define GPUVIRT_PURE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#define U32_MAX ((u32)~0U)
#define U64_MAX ((u64)~0ULL)
#endif

#define GPUVIRT_SZ_1M	(1ULL << 20)
#define GPUVIRT_SZ_1G	(1ULL << 30)

#endif /* GPUVIRT_PURE_H */
