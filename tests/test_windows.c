/* SPDX-License-Identifier: MIT */
/*
 * White-box tests of the held-table windows seen from other threads.
 *
 * A signal handler can interrupt its thread inside lock or unlock, while the
 * thread's entry is in a window: on the fast path untagged, before the CAS
 * or after the unlock store (the locked byte tells whether the thread owns
 * the lock); on a slow path or for a thread without an owner id tagged
 * (ACQUIRING between push and mark, RELEASING between tag and clear). If
 * the handler then waits for a lock in a cycle, the interrupted context is
 * frozen: its entry is the only trace of a lock it may own. These windows
 * are a few instructions wide, so the tests build the frozen state directly
 * (they include the private header and write the thread's table and the
 * lock word as the library would at that instruction), then let the
 * handler and another thread close, or not close, a cycle:
 *
 *  - deadlock_window_{releasing,acquired,slow_acquired}: X owns H with its
 *    entry tagged (before its unlock store / after its CAS / after its
 *    slow-path acquisition, wait record still up), or blocks it as the
 *    pending waiter of the free lock (deadlock_window_pending); X's handler
 *    waits for B,
 *    held by Y, which waits for H. A real ABBA: it must end in -EDEADLK for
 *    one of the two within a fraction of the (long) timeout.
 *  - deadlock_window_{released,before_cas,waiting}: same states, but X does
 *    not own H (its unlock store is done / its CAS not yet / it still waits),
 *    Z does and lets go after a while. No deadlock: everyone must succeed,
 *    nobody gets -EDEADLK.
 *  - deadlock_window_fast_*: the same with the fast path's untagged entry.
 */
#include "slowpath.h"
#include "testutil.h"

#define TU_PENDING_BIT (1u << 8) /* the pending byte, see rqspinlock.h */

static rqspinlock_t lock_h = RQSPINLOCK_INIT, lock_b = RQSPINLOCK_INIT;

enum x_role {
	X_OWNS,    /* X holds H */
	X_PENDING, /* X waits for H holding its pending bit: nobody can take H */
	X_NOTHING, /* X neither owns nor blocks H; Z owns it for a while */
};

/* The scenario's knobs and results. */
static struct {
	uintptr_t tag;           /* tag on X's entry for H */
	bool in_slow_path;       /* X's entry is that of a published wait */
	enum x_role role;        /* what X's frozen context does to H */
	atomic_int y_holds_b;    /* Y holds B */
	atomic_int in_handler;   /* X's handler is about to wait for B */
	atomic_int go_y;         /* Y may now ask for H */
	atomic_int handler_done; /* X's handler returned */
	int handler_ret, y_ret;
	uint64_t handler_ns, y_ns;
} sc;

static void handler(int sig)
{
	uint64_t t0;

	(void)sig;
	atomic_store_explicit(&sc.in_handler, 1, memory_order_relaxed);
	t0 = rqu_now_ns();
	sc.handler_ret = res_spin_lock(&lock_b);
	sc.handler_ns = rqu_now_ns() - t0;
	if (sc.handler_ret == 0)
		res_spin_unlock(&lock_b);
}

/*
 * Put X's entry for H in the state of the simulated instruction: owning, it
 * takes H and tags its entry; not owning (Z does), it only pushes the entry,
 * as before its CAS or after its unlock store.
 */
static uint32_t freeze_entry(void)
{
	struct rq_thread *t = rq_self_get();
	uint32_t n;

	if (sc.role == X_OWNS)
		CHECK_EQ(res_spin_lock(&lock_h), 0);
	else
		(void)rq_held_push(t, &lock_h);
	n = atomic_load_explicit(&t->held.cnt, memory_order_relaxed);
	CHECK_GE(n, 1);
	atomic_store(&t->held.locks[n - 1], (uintptr_t)&lock_h | sc.tag);
	if (sc.in_slow_path)
		rq_wait_push(t, &lock_h, n - 1);
	if (sc.role == X_PENDING) { /* as rq_try_set_pending() + its note */
		atomic_fetch_or(&lock_h.val, TU_PENDING_BIT);
		rq_wait_note_pending(t, true);
	}
	return n;
}

/* Finish what the frozen context was doing, as the library would. */
static void thaw_entry(uint32_t n)
{
	struct rq_thread *t = rq_self;

	if (sc.role == X_PENDING) { /* the waiter gives up */
		atomic_fetch_and(&lock_h.val, ~TU_PENDING_BIT);
		rq_wait_note_pending(t, false);
	}
	if (sc.in_slow_path)
		rq_wait_pop(t);
	if (sc.role != X_OWNS) {
		rq_held_drop(t, n - 1);
		return;
	}
	atomic_store(&t->held.locks[n - 1], (uintptr_t)&lock_h);
	res_spin_unlock(&lock_h);
}

static void *thread_x(void *arg)
{
	uint32_t n;

	(void)arg;
	n = freeze_entry();
	TU_WAIT_UNTIL(atomic_load(&sc.y_holds_b), TU_SETUP_MS);
	CHECK_EQ(raise(SIGUSR1), 0);
	atomic_store(&sc.handler_done, 1);
	thaw_entry(n);
	return NULL;
}

static void *thread_y(void *arg)
{
	uint64_t t0;

	(void)arg;
	CHECK_EQ(res_spin_lock(&lock_b), 0);
	atomic_store(&sc.y_holds_b, 1);
	TU_WAIT_UNTIL(atomic_load(&sc.go_y), TU_SETUP_MS);
	t0 = rqu_now_ns();
	sc.y_ret = res_spin_lock(&lock_h);
	sc.y_ns = rqu_now_ns() - t0;
	if (sc.y_ret == 0)
		res_spin_unlock(&lock_h);
	res_spin_unlock(&lock_b);
	return NULL;
}

/* Z owns H while X's entry is frozen without owning it. */
static void *thread_z(void *arg)
{
	atomic_int *release = arg;

	CHECK_EQ(res_spin_lock(&lock_h), 0);
	TU_WAIT_UNTIL(atomic_load(release), TU_SETUP_MS);
	res_spin_unlock(&lock_h);
	return NULL;
}

static void run_scenario(uintptr_t tag, bool in_slow_path, enum x_role role)
{
	struct sigaction sa;
	pthread_t x, y, z;
	atomic_int z_release = 0;
	struct rqspinlock_stats before, after;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	memset(&sc, 0, sizeof(sc));
	sc.tag = tag;
	sc.in_slow_path = in_slow_path;
	sc.role = role;
	sc.handler_ret = sc.y_ret = 1;
	res_spin_get_stats(&before);
	tu_thread_start(&y, thread_y, NULL);
	TU_WAIT_UNTIL(atomic_load(&sc.y_holds_b), TU_SETUP_MS);
	if (role == X_NOTHING) {
		tu_thread_start(&z, thread_z, &z_release);
		TU_WAIT_UNTIL(tu_word(&lock_h) != 0, TU_SETUP_MS);
	}
	tu_thread_start(&x, thread_x, NULL);
	TU_WAIT_UNTIL(atomic_load(&sc.in_handler), TU_SETUP_MS);
	tu_sleep_ms(20); /* X's handler now waits for B */
	atomic_store(&sc.go_y, 1);
	if (role == X_NOTHING) {
		tu_sleep_ms(300); /* hundreds of detection rounds on both sides */
		atomic_store(&z_release, 1);
		tu_thread_join(z);
	}
	tu_thread_join(x);
	tu_thread_join(y);
	res_spin_get_stats(&after);
	printf("# tag %lu, slow path %d, role %d: handler %d after %.3f ms, Y %d after %.3f ms\n",
	       (unsigned long)tag, in_slow_path, (int)role, sc.handler_ret,
	       (double)sc.handler_ns / 1e6, sc.y_ret, (double)sc.y_ns / 1e6);
	CHECK(sc.handler_ret != -ETIMEDOUT && sc.y_ret != -ETIMEDOUT);
	if (role != X_NOTHING) {
		/* One of them (or both) found the ABBA through X's frozen entry. */
		CHECK(sc.handler_ret == -EDEADLK || sc.y_ret == -EDEADLK);
		CHECK(sc.handler_ret == 0 || sc.handler_ret == -EDEADLK);
		CHECK(sc.y_ret == 0 || sc.y_ret == -EDEADLK);
		CHECK_LT(sc.handler_ns, TU_LONG_TIMEOUT_NS / 4);
		CHECK_LT(sc.y_ns, TU_LONG_TIMEOUT_NS / 4);
		CHECK_GT(after.deadlock_abba, before.deadlock_abba);
	} else {
		CHECK_EQ(sc.handler_ret, 0);
		CHECK_EQ(sc.y_ret, 0);
		CHECK_EQ(after.deadlock_abba, before.deadlock_abba);
	}
	CHECK_EQ(tu_word(&lock_h), 0);
	CHECK_EQ(tu_word(&lock_b), 0);
	res_spin_set_timeout_ns(0);
}

/* X interrupted between its RELEASING tag and its unlock store. */
static void test_window_releasing(void)
{
	run_scenario(RQ_ENTRY_RELEASING, false, X_OWNS);
}

/* X interrupted between its CAS and marking its entry held. */
static void test_window_acquired(void)
{
	run_scenario(RQ_ENTRY_ACQUIRING, false, X_OWNS);
}

/* X interrupted in its slow path after acquiring, before marking. */
static void test_window_slow_acquired(void)
{
	run_scenario(RQ_ENTRY_ACQUIRING, true, X_OWNS);
}

/* X interrupted as the pending waiter of a free H (it would take H next). */
static void test_window_pending(void)
{
	run_scenario(RQ_ENTRY_ACQUIRING, true, X_PENDING);
}

/* X interrupted after its unlock store; Z has taken H since. */
static void test_window_released(void)
{
	run_scenario(RQ_ENTRY_RELEASING, false, X_NOTHING);
}

/* X interrupted before its CAS; Z owns H. */
static void test_window_before_cas(void)
{
	run_scenario(RQ_ENTRY_ACQUIRING, false, X_NOTHING);
}

/* X interrupted while waiting for H in its slow path; Z owns H. */
static void test_window_waiting(void)
{
	run_scenario(RQ_ENTRY_ACQUIRING, true, X_NOTHING);
}

/* The fast path's untagged entry (a thread with an owner id), X past its
 * CAS: the byte names X. The detectors find X through the byte, so these
 * two scenarios keep the fast path's windows covered but do not tell the
 * untagged-entry rule apart from "untagged is held"; the AA tests below
 * (deadlock_aa_window_fast_*) do. */
static void test_window_fast_acquired(void)
{
	run_scenario(0, false, X_OWNS);
}

/* The fast path's untagged entry, X before its CAS (or past its unlock
 * store, the same state): the byte names Z. */
static void test_window_fast_before_cas(void)
{
	run_scenario(0, false, X_NOTHING);
}

/*
 * The alone head's claim (rq_head_take(), tail n): it succeeds only on the
 * exact word its acquire load read. That load synchronised with the last
 * unlock, and under the protocol nothing else can take the lock before the
 * claim, since the head holds the pending bit. After a res_spin_lock_init()
 * under waiters it may not: a stale pending-bit holder's take-over CAS
 * (*,1,0 -> *,0,1) or its drop on a timeout clears the bit the new head
 * took, the tail stays n, and a steal plus an unlock between the head's
 * load and its claim bring the word back to the value it read: (n,0,0) ->
 * (n,0,1) -> (n,0,0). The claim then succeeds on the stealer's unlock and
 * must synchronise with it. The window is a few instructions wide, so the
 * test builds it directly; with a relaxed claim ThreadSanitizer reports the
 * read of the stealer's write as a data race.
 */
static long aba_data; /* plain: protected by lock_h */
static atomic_int aba_done;

static void *aba_stealer(void *arg)
{
	_Atomic uint32_t *word = arg;

	CHECK(rq_try_steal(word, RQ_LOCKED_VAL));
	aba_data = 1;
	rq_store_unlocked(word);
	atomic_store_explicit(&aba_done, 1, memory_order_relaxed);
	return NULL;
}

static void test_window_head_take_aba(void)
{
	_Atomic uint32_t *word = &lock_h.val;
	uint32_t tail = rq_encode_tail((uint32_t)res_spin_thread_slot(), 0), val;
	pthread_t x;

	/* The head is alone (tail n) and believes it holds the pending bit,
	 * which a stale holder cleared; the owner has left: (n,0,0). */
	atomic_store_explicit(word, tail, memory_order_relaxed);
	atomic_store_explicit(&aba_done, 0, memory_order_relaxed);
	val = rq_load_word_acquire(word); /* the head's load */
	tu_thread_start(&x, aba_stealer, word);
	/* Relaxed: only the claim may order the stealer's section before ours. */
	TU_WAIT_UNTIL(atomic_load_explicit(&aba_done, memory_order_relaxed), TU_SETUP_MS);
	CHECK_EQ(rq_head_take(word, tail, val, rq_self_get()->held.owner), 1);
	CHECK_EQ(aba_data, 1);
	rq_store_unlocked(word);
	tu_thread_join(x);
	CHECK_EQ(tu_word(&lock_h), 0);
}

/* ---- AA through an entry of the interrupted context: owned or not ---- */

/* volatile: written by the handler on this thread, inside raise() */
static rqspinlock_t *volatile aa_lock;
static volatile int aa_ret;
static volatile uint64_t aa_ns;
static atomic_int aa_entered; /* the handler started: the releaser's cue */

static void aa_handler(int sig)
{
	uint64_t t0 = rqu_now_ns();

	(void)sig;
	atomic_store_explicit(&aa_entered, 1, memory_order_relaxed);
	aa_ret = res_spin_lock(aa_lock);
	aa_ns = rqu_now_ns() - t0;
	if (aa_ret == 0)
		res_spin_unlock(aa_lock);
}

/* Tells the holder to let go 50 ms after the handler started. */
static void *release_later(void *arg)
{
	struct tu_holder *z = arg;

	TU_WAIT_UNTIL(atomic_load_explicit(&aa_entered, memory_order_relaxed), TU_SETUP_MS);
	tu_sleep_ms(50);
	atomic_store_explicit(&z->release, 1, memory_order_relaxed);
	return NULL;
}

/* The handler, on the next SIGUSR2, asks for @l with a long timeout. */
static void aa_arm(rqspinlock_t *l)
{
	tu_install_handler(SIGUSR2, aa_handler);
	res_spin_set_timeout_ns(TU_LONG_TIMEOUT_NS);
	aa_lock = l;
	atomic_store_explicit(&aa_entered, 0, memory_order_relaxed);
}

/* The handler got -EDEADLK at once, well within its timeout. */
static void aa_check_deadlock(void)
{
	CHECK_EQ(aa_ret, -EDEADLK);
	CHECK_LT(aa_ns, TU_LONG_TIMEOUT_NS / 4);
}

/*
 * This thread's entry for @l carries @tag (0: untagged, as the fast path
 * writes it), as at the instruction the handler interrupts, and the thread
 * owns @l (past its CAS, before its unlock store) or does not (before its
 * CAS, or past its store) while Z holds @l until 50 ms after the handler
 * started. The handler asks for @l. Owned: -EDEADLK at once (the
 * interrupted context can never release it). Not owned: the locked byte
 * names Z, so the handler waits for Z and gets @l. (A rule that counts any
 * entry while the lock is taken reports -EDEADLK in both.)
 */
static void aa_window(rqspinlock_t *l, uintptr_t tag, bool owns)
{
	struct rq_thread *t = rq_self_get();
	struct tu_holder z;
	pthread_t releaser;
	uint32_t n;

	aa_arm(l);
	if (owns) {
		CHECK_EQ(res_spin_lock(l), 0);
	} else {
		tu_holder_start(&z, l, 0);
		(void)rq_held_push(t, l);
		CHECK(TU_LOCKED(tu_word(l)) != 0 && TU_LOCKED(tu_word(l)) != tu_owner());
		tu_thread_start(&releaser, release_later, &z);
	}
	n = atomic_load_explicit(&t->held.cnt, memory_order_relaxed);
	atomic_store(&t->held.locks[n - 1], (uintptr_t)l | tag);
	aa_ret = 1;
	CHECK_EQ(raise(SIGUSR2), 0);
	printf("# tag %lu, owned %d: handler %d after %.3f ms\n", (unsigned long)tag, owns, aa_ret,
	       (double)aa_ns / 1e6);
	if (owns) {
		aa_check_deadlock();
		atomic_store(&t->held.locks[n - 1], (uintptr_t)l);
		res_spin_unlock(l);
	} else {
		CHECK_EQ(aa_ret, 0);
		CHECK_GE(aa_ns, 50 * TU_NS_PER_MS); /* it waited for Z */
		rq_held_drop(t, n - 1);
		tu_thread_join(releaser);
		tu_holder_join(&z);
	}
	CHECK_EQ(TU_LOCKED(tu_word(l)), 0);
	CHECK_EQ(atomic_load_explicit(&t->held.cnt, memory_order_relaxed), 0);
	res_spin_set_timeout_ns(0);
}

/* Between the CAS and the mark: AA. */
static void test_aa_window_acquired(void)
{
	aa_window(&lock_h, RQ_ENTRY_ACQUIRING, true);
}

/* Between the RELEASING tag and the unlock store: AA. */
static void test_aa_window_releasing(void)
{
	aa_window(&lock_h, RQ_ENTRY_RELEASING, true);
}

/* Before the CAS, Z owning H: no AA, the handler waits for Z. */
static void test_aa_window_before_cas(void)
{
	aa_window(&lock_h, RQ_ENTRY_ACQUIRING, false);
}

/* After the unlock store (entry not yet cleared), Z having taken H since:
 * no AA (the false -EDEADLK of docs/MODEL.md finding 2 is gone). */
static void test_aa_window_retaken(void)
{
	aa_window(&lock_h, RQ_ENTRY_RELEASING, false);
}

/* A process-shared lock's byte names nobody: an entry while it is taken
 * stays AA, in every window of an owner. */
static void test_aa_window_shared(void)
{
	rqspinlock_t s;

	res_spin_lock_init_shared(&s);
	aa_window(&s, RQ_ENTRY_ACQUIRING, true);
	aa_window(&s, RQ_ENTRY_RELEASING, true);
	aa_window(&s, 0, true);
}

/* The fast path's untagged entry, past the CAS: AA. */
static void test_aa_window_fast_held(void)
{
	aa_window(&lock_h, 0, true);
}

/* The fast path's untagged entry before the CAS, Z owning H (the state
 * past the unlock store with Z having re-taken H is the same): no AA. */
static void test_aa_window_fast_before_cas(void)
{
	aa_window(&lock_h, 0, false);
}

/*
 * The price on a process-shared lock, whose byte names nobody, so that an
 * untagged entry counts while the word is locked: a context frozen with an
 * entry for such a lock that it no longer owns makes its handler's request
 * for the lock, held by Z, an AA. Past a fast unlock's store, or (here) in
 * a later push whose count covers the slot where a fast unlock left that
 * entry, before the push writes its own: one instruction wide on the fast
 * path, a few in rq_held_push().
 * docs/DESIGN.md, section 7 (AA), documents it; should it change, so must
 * this.
 */
static void test_aa_window_shared_stale(void)
{
	struct rq_thread *t = rq_self_get();
	struct tu_holder z;
	rqspinlock_t s;

	res_spin_lock_init_shared(&s);
	CHECK_EQ(res_spin_lock(&s), 0);
	res_spin_unlock(&s);
	CHECK_EQ(atomic_load(&t->held.cnt), 0);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)&s); /* left by the fast unlock */
	tu_holder_start(&z, &s, 0);
	aa_arm(&s);
	aa_ret = 1;
	atomic_store(&t->held.cnt, 1); /* a push's count store; its entry comes next */
	CHECK_EQ(raise(SIGUSR2), 0);
	aa_check_deadlock();
	atomic_store(&t->held.cnt, 0);
	tu_holder_join(&z);
	CHECK_EQ(TU_LOCKED(tu_word(&s)), 0);
	res_spin_set_timeout_ns(0);
}

/* A would-be pending waiter read the word locked and nothing else, and a
 * reset marked it shared (res_spin_lock_init_shared()) just before its
 * fetch_or: its bit lands beside the mark, and its undo must clear that bit
 * and nothing else, as must giving up a pending bit it held. */
static void test_pending_undo_keeps_mark(void)
{
	_Atomic uint32_t word = RQ_SHARED_MARK;
	uint32_t val = RQ_LOCKED_VAL;

	CHECK_EQ(rq_try_set_pending(&word, &val), 0);
	CHECK_EQ(atomic_load(&word), RQ_SHARED_MARK);
	atomic_store(&word, RQ_SHARED_MARK | RQ_PENDING_VAL | RQ_LOCKED_VAL);
	rq_clear_pending(&word);
	CHECK_EQ(atomic_load(&word), RQ_SHARED_MARK | RQ_LOCKED_VAL);
}

/*
 * The fast unlock drops the count and leaves its entry above it: the next
 * push overwrites the slot. Until then nothing reads it; in the one
 * instruction between a push's count store and its entry store a reader
 * finds it below the count, the state of an entry before its CAS, whose
 * handler and remote readers deadlock_aa_window_fast_before_cas and
 * deadlock_window_fast_before_cas check.
 */
static void test_fast_unlock_leaves_entry(void)
{
	rqspinlock_t a = RQSPINLOCK_INIT, b = RQSPINLOCK_INIT;
	struct rq_thread *t = rq_self_get();

	CHECK(rq_fast == rq_fast_table(t));
	CHECK_EQ(res_spin_lock(&a), 0);
	CHECK_EQ(res_spin_lock(&b), 0);
	res_spin_unlock(&b);
	CHECK_EQ(atomic_load(&t->held.cnt), 1);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)&a);
	CHECK_EQ(atomic_load(&t->held.locks[1]), (uintptr_t)&b);
	res_spin_unlock(&a);
	CHECK_EQ(atomic_load(&t->held.cnt), 0);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)&a);
	CHECK_EQ(res_spin_lock(&b), 0);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)&b);
	CHECK_EQ(res_spin_lock(&b), -EDEADLK);
	res_spin_unlock(&b);
	CHECK_EQ(tu_word(&a), 0);
	CHECK_EQ(tu_word(&b), 0);
}

/*
 * More locks than the table holds: the count stops at RQ_HELD_OVERFLOW and
 * deep has the number, so that the fast unlock's read of its top entry
 * lands on none_above and sends every unlock to the slow path until the
 * depth is back at RQ_NR_HELD. The tracked top, unlocked while the table is
 * overflowed, leaves a hole (the first untracked lock moves into it); the
 * untracked ones are released and uncounted; nothing counts as not held.
 */
#define OVERFLOW_LOCKS (RQ_NR_HELD + 3)

static void test_held_overflow(void)
{
	static rqspinlock_t l[OVERFLOW_LOCKS];
	struct rq_thread *t = rq_self_get();
	struct rqspinlock_stats before, after;
	uint32_t depth = OVERFLOW_LOCKS;

	tu_stats(&before);
	for (uint32_t i = 0; i < OVERFLOW_LOCKS; i++) {
		CHECK_EQ(res_spin_lock(&l[i]), 0);
		CHECK_EQ(rq_held_depth(t), i + 1);
		CHECK_EQ(atomic_load(&t->held.cnt), i < RQ_NR_HELD ? i + 1 : RQ_HELD_OVERFLOW);
	}
	CHECK_EQ(atomic_load(&t->deep), OVERFLOW_LOCKS);
	res_spin_unlock(&l[RQ_NR_HELD - 1]);
	CHECK_EQ(tu_word(&l[RQ_NR_HELD - 1]), 0);
	CHECK_EQ(rq_held_depth(t), --depth);
	CHECK_EQ(atomic_load(&t->held.locks[RQ_NR_HELD - 1]), RQ_ENTRY_NONE);
	for (int i = OVERFLOW_LOCKS - 1; i >= 0; i--) {
		if (i == RQ_NR_HELD - 1)
			continue;
		res_spin_unlock(&l[i]);
		CHECK_EQ(tu_word(&l[i]), 0);
		CHECK_EQ(rq_held_depth(t), --depth);
		CHECK_EQ(atomic_load(&t->held.cnt), depth <= RQ_NR_HELD ? depth : RQ_HELD_OVERFLOW);
	}
	CHECK_EQ(atomic_load(&t->held.none_below), RQ_ENTRY_NONE);
	CHECK_EQ(atomic_load(&t->held.none_above), RQ_ENTRY_NONE);
	tu_stats(&after);
	CHECK_EQ(after.unlock_not_held, before.unlock_not_held);
	CHECK_EQ(res_spin_lock(&l[0]), 0);
	CHECK_EQ(res_spin_lock(&l[0]), -EDEADLK);
	res_spin_unlock(&l[0]);
}

/* volatile: written by the handler on this thread, inside raise() */
static volatile uint32_t overflow_handler_depth[2];
static volatile int overflow_handler_err;

/* Takes two locks and releases them, noting the depth after each lock. */
static void overflow_handler(int sig)
{
	static rqspinlock_t extra[2];
	struct rq_thread *t = rq_self_peek();

	(void)sig;
	for (int i = 0; i < 2; i++) {
		overflow_handler_err |= res_spin_lock(&extra[i]);
		overflow_handler_depth[i] = rq_held_depth(t);
	}
	res_spin_unlock(&extra[1]);
	res_spin_unlock(&extra[0]);
}

/*
 * A handler that interrupts a 31 -> 32 push between its two stores (deep
 * written, the count not yet) sees 31 locks, goes past them itself, and
 * returns with the count at 31 and deep at 32, the value the push wrote:
 * the push's count store then makes the depth 32 (rq_held_set_depth_*()).
 * The test writes the push's two stores itself, around raise().
 */
static void test_held_overflow_window(void)
{
	static rqspinlock_t l[RQ_NR_HELD];
	struct rq_thread *t = rq_self_get();

	for (int i = 0; i < RQ_NR_HELD; i++)
		CHECK_EQ(res_spin_lock(&l[i]), 0);
	tu_install_handler(SIGUSR1, overflow_handler);
	atomic_store(&t->deep, RQ_HELD_OVERFLOW); /* the push's first store */
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(overflow_handler_err, 0);
	CHECK_EQ(overflow_handler_depth[0], RQ_NR_HELD + 1);
	CHECK_EQ(overflow_handler_depth[1], RQ_NR_HELD + 2);
	CHECK_EQ(atomic_load(&t->held.cnt), RQ_NR_HELD);
	CHECK_EQ(atomic_load(&t->deep), RQ_HELD_OVERFLOW);
	atomic_store(&t->held.cnt, RQ_HELD_OVERFLOW); /* its second */
	CHECK_EQ(rq_held_depth(t), RQ_NR_HELD + 1);
	atomic_store(&t->held.cnt, RQ_NR_HELD); /* undo the push */
	for (int i = RQ_NR_HELD - 1; i >= 0; i--) {
		res_spin_unlock(&l[i]);
		CHECK_EQ(tu_word(&l[i]), 0);
	}
	CHECK_EQ(atomic_load(&t->held.cnt), 0);
}

/*
 * An unlock of @l, which another thread holds, that the top check takes
 * for the caller's own (the misuse res_spin_unlock() documents): @l is
 * released, the count drops to @cnt_after, and nothing is counted.
 */
static void unlock_taken_for_own(struct rq_thread *t, rqspinlock_t *l, uint32_t cnt_after)
{
	struct rqspinlock_stats before, after;

	tu_stats(&before);
	res_spin_unlock(l);
	CHECK_EQ(atomic_load(&t->held.cnt), cnt_after);
	CHECK_EQ(TU_LOCKED(tu_word(l)), 0);
	tu_stats(&after);
	CHECK_EQ(after.unlock_not_held, before.unlock_not_held);
}

/*
 * The misuse that res_spin_unlock() documents as not told apart: an unlock
 * of a lock the caller does not hold (Z holds it), made while the caller's
 * interrupted context sits between its fast-path entry for that lock and
 * its CAS (here the state is built directly, as the inline lock leaves
 * it; the unlock is made from the same thread, as its handler would). The
 * address-only top check takes the context's entry for the caller's own:
 * the lock is released, the count drops below the entry, and nothing is
 * counted. Should unlock ever tell the two apart, this test fails and the
 * documentation changes with it.
 */
static void test_misuse_unlock_pre_cas_entry(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct tu_holder z;
	struct rq_thread *t;
	uint32_t n;

	tu_holder_start(&z, &l, 0);
	t = rq_self_get();
	CHECK(rq_thread_has_owner_id(t));
	n = atomic_load(&t->held.cnt);
	atomic_store(&t->held.cnt, n + 1);
	atomic_store(&t->held.locks[n], (uintptr_t)&l); /* untagged, before the CAS */
	unlock_taken_for_own(t, &l, n);
	tu_holder_join(&z); /* Z's own unlock of the released lock */
	CHECK_EQ(tu_word(&l), 0);
	tu_check_lock_usable(&l, 2, tu_scaled(1000));
}

/*
 * The second case res_spin_unlock() documents: the handler unlocks X,
 * which Z holds, while its context is in a push for Y, past the count's
 * store and before the entry's, over the slot where the context's earlier
 * unlock of X left its entry. The top check takes that slot for the
 * caller's own: X is released, the count drops, nothing is counted. The
 * context's Y, taken next, is then untracked, and its unlock is counted in
 * unlock_not_held. Should unlock ever tell these apart, this test fails
 * and the documentation changes with it.
 */
static void test_misuse_unlock_stale_slot(void)
{
	rqspinlock_t x = RQSPINLOCK_INIT, y = RQSPINLOCK_INIT;
	struct rq_thread *t = rq_self_get();
	struct rqspinlock_stats before, after;
	struct tu_holder z;
	uint32_t free_word = 0;

	CHECK(rq_thread_has_owner_id(t));
	CHECK_EQ(res_spin_lock(&x), 0);
	res_spin_unlock(&x);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)&x); /* left in place */
	tu_holder_start(&z, &x, 0);
	atomic_store(&t->held.cnt, 1);  /* the context's push for Y: count first */
	unlock_taken_for_own(t, &x, 0); /* the handler's */
	/* The context goes on: its entry (now above the count) and its CAS. */
	atomic_store(&t->held.locks[0], (uintptr_t)&y);
	CHECK(atomic_compare_exchange_strong(&y.val, &free_word, t->held.owner));
	tu_stats(&before);
	res_spin_unlock(&y);
	CHECK_EQ(tu_word(&y), 0);
	tu_stats(&after);
	CHECK_EQ(after.unlock_not_held, before.unlock_not_held + 1);
	tu_holder_join(&z); /* Z's own unlock of the released lock */
	CHECK_EQ(tu_word(&x), 0);
	tu_check_lock_usable(&x, 2, tu_scaled(1000));
	tu_check_lock_usable(&y, 2, tu_scaled(1000));
}

/* ---- which threads run the untagged fast path ---- */

static void *anonymous_fn(void *arg)
{
	rqspinlock_t *l = arg;
	struct rq_thread *t;

	CHECK_EQ(res_spin_lock(l), 0);
	t = rq_self;
	/* No owner id: the fast path's record is the sentinel, and the slow
	 * entry did the work on the thread's own record. */
	CHECK(!rq_thread_has_owner_id(t));
	CHECK(rq_fast == rq_fast_table(&rq_unregistered));
	CHECK_EQ(atomic_load(&t->held.cnt), 1);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)l);
	CHECK_EQ(res_spin_lock(l), -EDEADLK);
	res_spin_unlock(l);
	CHECK_EQ(atomic_load(&t->held.cnt), 0);
	CHECK_EQ(atomic_load(&t->held.locks[0]), RQ_ENTRY_NONE);
	return NULL;
}

/*
 * A thread whose byte names it runs the fast path on its own record; one
 * the byte cannot name (here without a slot: RQSPINLOCK_SLOTS=1, the main
 * thread has the only one; slots from 254 on are the same case) keeps the
 * sentinel, so every lock and unlock goes through the tagged slow entries.
 */
static void test_fast_record_named_only(void)
{
	rqspinlock_t l = RQSPINLOCK_INIT;
	struct rq_thread *t = rq_self_get();
	pthread_t x;

	CHECK(rq_thread_has_owner_id(t));
	CHECK(rq_thread_has_owner_id(rq_thread_at(RQ_NR_OWNER_IDS - 1)));
	CHECK(!rq_thread_has_owner_id(rq_thread_at(RQ_NR_OWNER_IDS)));
	CHECK(rq_fast == rq_fast_table(t));
	CHECK_EQ(res_spin_lock(&l), 0);
	CHECK_EQ(atomic_load(&t->held.locks[0]), (uintptr_t)&l);
	res_spin_unlock(&l);
	tu_thread_start(&x, anonymous_fn, &l);
	tu_thread_join(x);
	CHECK_EQ(tu_word(&l), 0);
}

static const struct tu_test tests[] = {
    TU_TEST("deadlock_window_releasing", test_window_releasing, 40, TU_TAS),
    TU_TEST("deadlock_window_acquired", test_window_acquired, 40, TU_TAS),
    TU_TEST("deadlock_window_slow_acquired", test_window_slow_acquired, 40, TU_TAS),
    TU_TEST("deadlock_window_pending", test_window_pending, 40, TU_TAS),
    TU_TEST("deadlock_window_released", test_window_released, 40, TU_TAS),
    TU_TEST("deadlock_window_before_cas", test_window_before_cas, 40, TU_TAS),
    TU_TEST("deadlock_window_waiting", test_window_waiting, 40, TU_TAS),
    TU_TEST("deadlock_window_fast_acquired", test_window_fast_acquired, 40, TU_TAS),
    TU_TEST("deadlock_window_fast_before_cas", test_window_fast_before_cas, 40, TU_TAS),
    TU_TEST("core_window_head_take_aba", test_window_head_take_aba, 20, 0),
    TU_TEST("deadlock_aa_window_acquired", test_aa_window_acquired, 20, TU_TAS),
    TU_TEST("deadlock_aa_window_releasing", test_aa_window_releasing, 20, TU_TAS),
    TU_TEST("deadlock_aa_window_before_cas", test_aa_window_before_cas, 20, TU_TAS),
    TU_TEST("deadlock_aa_window_retaken", test_aa_window_retaken, 20, TU_TAS),
    TU_TEST("deadlock_aa_window_shared", test_aa_window_shared, 60, TU_TAS),
    TU_TEST("deadlock_aa_window_fast_held", test_aa_window_fast_held, 20, TU_TAS),
    TU_TEST("deadlock_aa_window_fast_before_cas", test_aa_window_fast_before_cas, 20, TU_TAS),
    TU_TEST("deadlock_aa_window_shared_stale", test_aa_window_shared_stale, 20, 0),
    TU_TEST("core_pending_undo_keeps_mark", test_pending_undo_keeps_mark, 20, 0),
    TU_TEST("core_fast_unlock_leaves_entry", test_fast_unlock_leaves_entry, 20, 0),
    TU_TEST("core_held_overflow", test_held_overflow, 20, 0),
    TU_TEST("core_held_overflow_window", test_held_overflow_window, 20, 0),
    TU_TEST("misuse_unlock_pre_cas_entry", test_misuse_unlock_pre_cas_entry, 20, TU_TAS),
    TU_TEST("misuse_unlock_stale_slot", test_misuse_unlock_stale_slot, 20, TU_TAS),
    TU_TEST("core_fast_record_named_only", test_fast_record_named_only, 20, 0,
            .env = "RQSPINLOCK_SLOTS=1"),
};

TU_MAIN(tests)
