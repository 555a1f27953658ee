// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of gpuvirtctl's configuration parser (user/config.c,
 * libyaml underneath), with ASan and UBSan (make fuzz). Any input must
 * parse or be refused with a "NAME:LINE:COLUMN: message" error, and
 * config_free() must release everything either way (LeakSanitizer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[256] = "";
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	ret = config_parse("fuzz", (const char *)data, size, &cfg, err, sizeof(err));
	if (ret) {
		if (ret != -1 || strncmp(err, "fuzz:", 5)) {
			fprintf(stderr, "fuzz_config: returned %d, message '%s'\n", ret, err);
			abort();
		}
	} else {
		config_find_sim(&cfg, 0);
		config_find_gpu(&cfg, 0);
	}
	config_free(&cfg);
	return 0;
}
