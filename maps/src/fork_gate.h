/* SPDX-License-Identifier: MIT */
/*
 * The fork() gate (fork_gate.c): the library's calls into liburcu's update
 * side count themselves, and fork() waits until none is in flight, so that
 * a child never inherits one of urcu's mutexes held by a thread it does
 * not have. Above sys.h; below the readers and the reclaim machinery,
 * which hook their own after-fork work into the gate's child handler.
 */
#ifndef RQMAP_FORK_GATE_H
#define RQMAP_FORK_GATE_H

#include <stdbool.h>
#include <stdint.h>

/* Counts a call into urcu's update side; false while a fork() is under
 * way. Only with every signal blocked. */
bool rqmap_urcu_enter_try(void);
/* The same, waiting for the fork() (bounded by its prepare handler). */
void rqmap_urcu_enter(void);
void rqmap_urcu_exit(void);
/* How many fork()s this process descends from (a call that a handler's
 * fork() interrupted sees, when it goes on, that it runs in a child). */
uint32_t rqmap_fork_generation(void);
/* This thread is inside fork() with the gate closed: neither it nor a
 * handler interrupting it may wait for a grace period or urcu's update side. */
extern _Thread_local bool rqmap_tls_forking;
/* Set in a child whose fork() gave up draining: it never uses urcu's update
 * side (docs/MAPS.md, rule 5). */
extern bool rqmap_urcu_unusable;
/* What a floor above the gate tells it. */
struct rqmap_fork_hooks {
	/* The forking thread is inside a read-side section (a grace period in
	 * flight then waits for it: the drain is bounded more tightly). NULL:
	 * never. */
	bool (*in_section)(void);
	/* In the child, after the gate's own reset of its counts and before it
	 * reopens: forget the parent's other threads. */
	void (*after_fork_child)(void);
};
/* Install the gate's atfork handlers (once) and @hooks (static storage;
 * each at most once; at most RQMAP_FORK_HOOKS). Normal context, signals
 * blocked. */
#define RQMAP_FORK_HOOKS 4
void rqmap_fork_gate_install(const struct rqmap_fork_hooks *hooks);

#endif /* RQMAP_FORK_GATE_H */
