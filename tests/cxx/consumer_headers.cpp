// SPDX-License-Identifier: MIT
// Compiled per C++ standard with -pedantic-errors (tests/cxx/CMakeLists.txt):
// the consumers' public headers, the maps' and rqbpf's, compile as strict
// C++ too, with the C layout.
#include <rqbpf.h>
#include <rqmap.h>

#include <cstddef>

static_assert(offsetof(struct rqmap_lpm_key, data) == 4, "the data follows the prefix length");
static_assert(sizeof(struct rqmap_lpm_key) == 4, "the data is a flexible array");
