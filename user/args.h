/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Table-driven parsing of "keyword value" command arguments.
 *
 * Each command describes its arguments with an array of struct arg_spec,
 * indexed by a command-local enum and ended by an entry whose keyword is
 * NULL. The parser stores every value at its offset in the command's option
 * structure and sets bit ARG_BIT(index) in the returned mask. Besides the
 * value of each argument it checks how they go together: required ones, one
 * of a group, one that needs or excludes another. It does no I/O: on failure
 * it writes a message naming the offending field into the caller's buffer,
 * for the caller to print.
 *
 *	enum { SHOW_ID };
 *	struct show_opts { uint32_t id; };
 *	static const struct arg_spec show_args[] = {
 *		[SHOW_ID] = { "id", ARG_U32, offsetof(struct show_opts, id),
 *			      .meta = "ID" },
 *		{ .keyword = NULL }
 *	};
 */
#ifndef GPUVIRTCTL_ARGS_H
#define GPUVIRTCTL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum arg_type {
	ARG_U32,	/* uint32_t, decimal or 0x hex */
	ARG_U64,	/* uint64_t, decimal or 0x hex */
	ARG_SIZE,	/* uint64_t bytes; K, M, G, T binary suffixes */
	ARG_STRING,	/* const char *, points into argv */
	ARG_ENUM,	/* uint32_t, one of spec->enums */
	ARG_FLAG,	/* bool, keyword without a value */
	ARG_UUID,	/* char[UNITS_UUID_LEN], canonical lower case */
};

struct arg_enum {
	const char *name;
	uint32_t value;
};

#define ARG_REQUIRED	0x1	/* must be given */
#define ARG_ONE_OF	0x2	/* one or more of the table's ARG_ONE_OF
				 * arguments must be given */
#define ARG_ZERO	0x4	/* numbers: 0 is valid besides min..max */
#define ARG_POSITIONAL	0x8	/* the value may also come alone, as the
				 * first word that is no keyword: "pt check
				 * BDF" as well as "pt check dev BDF" */
#define ARG_REPEAT	0x10	/* ARG_STRING: may be given more than once;
				 * the destination is a struct arg_list. With
				 * ARG_POSITIONAL every word that is no
				 * keyword is one more value: "mig plan gpu
				 * 0 3g.71gb 1g.18gbx2" */

/* The values of an ARG_REPEAT argument, pointers into argv. */
#define ARG_LIST_MAX	16
struct arg_list {
	const char *val[ARG_LIST_MAX];
	unsigned int n;
};

struct arg_spec {
	const char *keyword;
	enum arg_type type;
	size_t offset;		/* of the destination in the option struct */
	unsigned int flags;	/* ARG_REQUIRED, ARG_ONE_OF, ARG_ZERO */
	const char *meta;	/* value placeholder in usage, e.g. "ID" */
	uint64_t min, max;	/* numbers and sizes; max 0 = the type's limit */
	const struct arg_enum *enums;	/* ARG_ENUM: ended by a NULL name */
	size_t max_len;		/* ARG_STRING: 0 = unlimited */
	uint64_t needs;		/* ARG_BIT()s of arguments it goes with only */
	uint64_t excludes;	/* ARG_BIT()s of arguments it cannot go with */
};

#define ARG_MAX_SPECS	64
#define ARG_BIT(i)	(1ULL << (i))

/*
 * Parse @argc words of @argv against @specs into @opts. Returns 0 and the
 * mask of given arguments in @given, or -1 with a message in @err.
 */
int args_parse(const struct arg_spec *specs, int argc, char *const *argv,
	       void *opts, uint64_t *given, char *err, size_t errlen);

/* "[ id ID ] name NAME ..." for a usage line; returns the wanted length. */
size_t args_usage(const struct arg_spec *specs, char *buf, size_t len);

#endif /* GPUVIRTCTL_ARGS_H */
