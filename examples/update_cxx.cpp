// SPDX-License-Identifier: MIT
// The C example compiled as C++: the public header must serve both.
#include "update.c"
