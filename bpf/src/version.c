/* SPDX-License-Identifier: MIT */
/*
 * rqbpf_version(): the version of the library as built; the header's
 * RQBPF_VERSION is what a program was compiled against. CMake checks that
 * both match project(VERSION).
 */
#include "rqbpf.h"

const char *rqbpf_version(void)
{
	return RQBPF_VERSION;
}
