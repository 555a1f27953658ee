/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-ins for the kernel definitions that kernel/pure.h gives
 * the pure-logic files, so that gpuvirtctl and the unit tests can build
 * those files. Only what those files use, with the kernel's names and
 * meanings.
 */
#ifndef GPUVIRT_PURE_USER_H
#define GPUVIRT_PURE_USER_H

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
#define SZ_1M 0x00100000
#define SZ_1G 0x40000000

/* linux/math64.h: the kernel needs helpers for 64-bit division */
static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

/*
 * linux/find.h, for a bitmap of one word (size <= BITS_PER_LONG), which is
 * all the pure files use
 */
static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	unsigned long w;

	if (offset >= size)
		return size;
	w = *addr & (~0UL << offset);
	if (size < 8 * sizeof(w))
		w &= (1UL << size) - 1;
	return w ? (unsigned long)__builtin_ctzl(w) : size;
}

#define for_each_set_bit(bit, addr, size) \
	for ((bit) = 0; \
	     (bit) = find_next_bit((addr), (size), (bit)), (bit) < (size); \
	     (bit)++)

#endif /* GPUVIRT_PURE_USER_H */
