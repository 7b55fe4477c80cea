/* SPDX-License-Identifier: MIT */
/*
 * rqmap_version(): the version of the library as built; the header's
 * RQMAP_VERSION is what a program was compiled against. CMake checks that
 * both match project(VERSION).
 */
#include <rqmap.h>

const char *rqmap_version(void)
{
	return RQMAP_VERSION;
}
