/* SPDX-License-Identifier: MIT */
/*
 * Layer 0: the library's version, as built (rqspinlock_version()). The
 * header's RQSPINLOCK_VERSION is what a program was compiled against; this is
 * what it runs with. CMake checks that both match project(VERSION).
 */
#include <rqspinlock.h>

#include "registry.h"

RQ_EXPORT const char *rqspinlock_version(void)
{
	return RQSPINLOCK_VERSION;
}
