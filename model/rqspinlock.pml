/*
 * Promela model of the rqspinlock protocol (src/lock.c, src/slowpath.c,
 * src/held.c, src/detect.c, src/tas.c, src/timeout.c, src/lockword.h,
 * src/report.c, include/rqspinlock/inline.h).
 *
 * Read docs/MODEL.md first: it explains the encoding, the properties and
 * the table that maps every labelled transition below to the C code.
 *
 * One Promela statement = one atomic step of the C code (one atomic load,
 * store or read-modify-write), except where a d_step groups steps that touch
 * only the context's own private state, or a CAS loop whose failed rounds
 * change nothing (those are equivalent to one step at the successful round).
 *
 * Configurations (spin -D...; programs in init, table in docs/MODEL.md):
 *   CFG_NOFAULT  T0, T1, T2 on A, the handler of T0 on B; no timeout ever
 *                expires: every lock() must return 0.
 *   CFG_QUEUE    three threads on A (T1 twice), T2 may stall: queues,
 *                FIFO teardown, tail reset.       (with -DTIMEOUTS)
 *   CFG_NEST     handler and its thread on A with T1 (may stall): AA,
 *                nested trylock fallback.         (with -DTIMEOUTS)
 *   CFG_ABBA     ABBA between T0 and T1, handler on B. (with -DTIMEOUTS)
 *   CFG_HANDOFF  a deadlocked queue head hands over.   (with -DTIMEOUTS)
 *   CFG_FROZEN   a cycle through a frozen context, with a third thread
 *                on its lock.                     (with -DTIMEOUTS)
 *   CFG_VANISH   three threads on A (T1 twice); T0 may vanish while
 *                queued (head or not): frozen for good, jumped out,
 *                forked away. Waiters behind it leave on their own
 *                deadlines.                       (with -DTIMEOUTS)
 * Broken variants (-DBROKEN_*) and the C code as it is where the model
 * corrects it (-DC_*) must produce counterexamples: model/check.sh.
 */

/* ---------------------------------------------------------------- sizes */
#define NTHR  3          /* threads = registry slots 0..2 */
#define HCTX  3          /* context 3 is the signal handler of thread 0 */
#define NCTX  4
#define NLOCK 3          /* locks 1 (A) and 2 (B); 0 = no lock */
#define NHELD 3          /* held-table entries per thread */
#define NWAIT 2          /* wait-stack depth (thread + its handler) */
#define MAXOPS 5         /* ops per context program */
#define NONE  255
#ifndef NCHK
#define NCHK  0
#endif
/* NCHK: periodic deadlock checks per wait after the first */

#define OK       0
#define EDEADLK  1
#define ETIMEOUT 2

/* held-table entry: lock id plus tag bits */
#define ACQ 4            /* RQ_ENTRY_ACQUIRING */
#define REL 8            /* RQ_ENTRY_RELEASING */
#define LOCKOF(e) ((e) & 3)

/* The fast path of a thread with an owner id (src/lock.c) writes its entry
 * untagged before its CAS and, after its unlock store, drops the count
 * below it without clearing it: the locked byte says whether it holds the
 * lock. TAGGED_FAST_PATH: the protocol with tags (ACQUIRING before the CAS,
 * marked after it, RELEASING before the unlock store, cleared after it),
 * which threads without an owner id still run (their fast path is the slow
 * entry): the configurations that model the anonymous owner's detection
 * rules (C_SCAN_HOLDERS), and those that model code from before the
 * untagged fast path (C_AA_EXACT, C_AA_REL). */
#if defined(C_SCAN_HOLDERS) || defined(C_AA_EXACT) || defined(C_AA_REL)
#define TAGGED_FAST_PATH
#define FP_TAG ACQ
#else
#define FP_TAG 0
#endif

/* MCS node states (rq_qnode::locked, its low bits) */
#define N_WAIT 0
#define N_HEAD 1
#define N_TIMEOUT 2
#define N_GONE 3         /* its waiter left by itself (rq_node_abandon) */
/* rq_qnode::next: 0, a successor's node id (1..NTHR), or MARK + verdict
 * (N_HEAD / N_TIMEOUT) left by a node that left first (rq_pass_on) */
#define MARK 8

#define thr(c) ((c) == HCTX -> 0 : (c))

/* --------------------------------------------------------------- shared */
/* the lock word, split in its three fields; index = lock id */
byte wl[NLOCK];          /* locked byte (0/1) */
byte wp[NLOCK];          /* pending byte (0/1) */
byte wt[NLOCK];          /* tail: 0 or (slot + 1); only node index 0 queues */

/* MCS nodes: node id t+1 is thread t's node index 0 */
byte nnext[NTHR + 1];
byte nlocked[NTHR + 1];
byte ngen[NTHR + 1];     /* generation: bumped by every rq_node_init */
byte nlgen[NTHR + 1];    /* generation the successor linked with */
byte ncount[NTHR];       /* rq_thread::node_count */

/* held-lock tables */
byte hcnt[NTHR];
byte hl[NTHR * NHELD];

/* wait stacks */
byte nwait[NTHR];
byte wgen[NTHR];
byte wlock[NTHR * NWAIT];
byte widx[NTHR * NWAIT];

bit intr;                /* thread 0 is interrupted by its handler */

/* programs: op L (1,2) = lock L, op 4+L = unlock L, 0 = end */
byte prog[NCTX * MAXOPS];
bit may_stall[NCTX];
bit may_vanish[NCTX];    /* CFG_VANISH: may stop for good while queued */
bit g_vanished[NTHR];    /* ghost: that thread stopped inside a queue wait */

/* ----------------------------------------------------------- ghost state */
byte g_owner[NLOCK];     /* context that holds the lock, NONE if free; its
                          * thread is what the locked byte names (owner ids):
                          * every step that sets or clears the locked bit sets
                          * or clears it too, so detection may read it as the
                          * byte (NAMED_OWNER) */
byte g_in[NCTX];         /* lock the context is inside lock() for, 0 = none */
byte g_done;             /* contexts that finished (or stalled) */
bit g_relw;              /* thread 0 is between a RELEASING tag and its unlock store */
bit t0done;              /* thread 0 finished: its handler can no longer run */
byte g_sw;               /* bit c: context c took its lock in the slow path and
                          * has not marked its entry yet (its entry is still
                          * the entry of its current wait) */

/* the lock word packed in a byte: tail * 4 + pending * 2 + locked */
byte W[NLOCK];
#define LK(v) ((v) & 1)
#define PD(v) (((v) >> 1) & 1)
#define TL(v) ((v) >> 2)
#define PENDING_VAL 2
#define MASK_ALL 255     /* ~0u: any bit */
#define MASK_L   1       /* RQ_LOCKED_MASK */
#define MASK_LP  3       /* RQ_LOCKED_PENDING_MASK */

/* Timeouts: "the clock expired" is a nondeterministic choice of a waiter
 * that owns a deadline (pending waiter, queue head, trylock fallback), after
 * its first poll. It is enabled
 *  - when nothing else in the whole system can move (Spin's timeout): every
 *    waiter that can only wait does eventually time out. This covers an owner
 *    that stalls forever and every real deadlock;
 *  - at most TMO_BUDGET times per run at any other moment: a spurious
 *    timeout (a slow owner), racing with everything else.
 * Without TIMEOUTS (no fault) the clock never expires. */
#ifndef TMO_BUDGET
#define TMO_BUDGET 1
#endif
byte g_tmo;              /* spurious expiries so far */
bit g_stall;             /* an owner stalled forever */
#ifdef TIMEOUTS
#define CLOCK_EXPIRED (g_tmo < TMO_BUDGET || timeout)
#define EXPIRE if :: g_tmo < TMO_BUDGET -> g_tmo++ :: else -> skip fi
#else
#define CLOCK_EXPIRED false
#define EXPIRE skip
#endif

/* The context takes the lock: mutual exclusion is checked here. */
#define ACQUIRE(L) assert(g_owner[L] == NONE); g_owner[L] = c; g_in[c] = 0
/* ... in the slow path: until rq_held_mark_held it still looks waiting */
#define SACQUIRE(L) ACQUIRE(L); g_sw = g_sw | (1 << c)
/* The context decides to fail. For the ghost it stops waiting only at the
 * first step that shows it (rq_fail clearing its entry): until then no
 * detector can tell it from a waiter that has not decided yet. */
#define SETERR(e) ret = e

/* Steps of the table and wait-stack updates are split as in the C code only
 * for thread 0, the one a handler interrupts. For the others, the
 * intermediate states differ from the merged ones only in what remote
 * detectors cannot tell apart (a count above a cleared entry, or above the
 * untagged entry a fast unlock left, which the locked byte disowns), so
 * each pair runs as one step: SPLIT_OR(x) does x now unless split,
 * ONLY_SPLIT(x) does x as its own step only when split. */
#define SPLIT_OR(x) if :: c != 0 -> x :: else -> skip fi
#define ONLY_SPLIT(x) if :: c == 0 -> d_step { x } :: else -> skip fi

/* Locals of every context (Promela inlines have no locals of their own). */
#define LOCALS \
	byte t, pc, op, L, failed, ret, n, val, nidx, me, nx, chk, ok, i, j; \
	byte hop, want, s, found, gen0, gen1, gen2, dep0, dep1, dep2; \
	byte wi0, wi1, wi2, wt0, wt1, wt2, pt0, pt1, pt2, ph0, ph1, ph2; \
	byte x, o, vis, k, real, gen, dep, wid, wat; \
	byte fz, fz0, fz1, fz2, fzs, phs, fc, mt, mgen, mdep, mwid, mwat; \
	bit pend

/* ------------------------------------------------------ ghost: real deadlock
 * real = 1 when context c, wanting lock L, is in a real deadlock now:
 *  - AA: c's own thread holds L through another context (or c itself), or
 *    c is the handler and the interrupted thread is acquiring L (it either
 *    already holds L or waits for it in the lock word, where the handler can
 *    never overtake it; the handler cannot tell which, see docs/MODEL.md);
 *  - a waits-for chain from L (owner -> the lock it waits for -> ...) that
 *    comes back to c's thread or runs into a cycle. A thread interrupted by
 *    its handler waits for what the handler waits for, if it does.
 */
inline real_deadlock(c, L) {
	real = 0; vis = 0; k = 0; x = c; want = L;
	if
	:: g_owner[L] != NONE && thr(g_owner[L]) == thr(c) -> real = 1
	:: c == HCTX && g_in[0] == L -> real = 1
	:: else -> skip
	fi;
	do
	:: real || k > NCTX -> break
	:: else ->
		k++;
		vis = vis | (1 << x);
		o = g_owner[want];
		if
		:: o == NONE -> break
		:: else -> skip
		fi;
		if
		:: o == 0 && intr && g_in[HCTX] != 0 -> o = HCTX
		:: else -> skip	/* a handler that is not waiting returns */
		fi;
		if
		:: (vis & (1 << o)) != 0 || thr(o) == thr(c) -> real = 1; break
		:: else -> skip
		fi;
		want = g_in[o];
		if
		:: want == 0 -> break
		:: else -> x = o
		fi
	od;
	x = 0; o = 0; vis = 0; k = 0; want = 0
}

/* ---------------------------------------- held.c and detect.c helpers */
#define HE(s, i) hl[(s) * NHELD + (i)]

/* The thread the locked byte of lk names (every thread of the model has an
 * owner id; C_SCAN_HOLDERS models the rules for anonymous owners). */
#define NAMED_OWNER(lk) thr(g_owner[lk])
/* an untagged entry that claims the lock (untagged_entry_held): with an
 * owner id, while the locked byte names the thread. BROKEN_UNTAGGED_HELD:
 * any untagged entry, as for a thread without an id, but with the
 * untagged fast path (the table invariant fails: an entry of a context
 * before its CAS is taken for a held lock) */
#if defined(TAGGED_FAST_PATH) || defined(BROKEN_UNTAGGED_HELD)
#define HOLDS_ENTRY(s, i, lk) (HE(s, i) == lk)
#else
#define HOLDS_ENTRY(s, i, lk) (HE(s, i) == lk && LK(W[lk]) && NAMED_OWNER(lk) == s)
#endif
#define OWNER_INVARIANT (g_owner[lk] != NONE && thr(g_owner[lk]) == s)

/* Is entry i of s (for lk) the entry of the wait s is in right now
 * (entry_is_current_wait)? */
#define CUR_WAIT(s, lk, i) (nwait[s] > 0 && hcnt[s] == (i) + 1 && \
	widx[(s) * NWAIT + nwait[s] - 1] == (i) && \
	wlock[(s) * NWAIT + nwait[s] - 1] == (lk) && HE(s, i) == ((lk) | ACQ))

/* claim_below(s, lock, limit) into found: what s's entries below limit
 * claim about the lock: 2 held (HOLDS_ENTRY), 1 maybe (tagged, and not the
 * entry of the wait s is in right now), 0 none.
 * Also checks the invariant "untagged entry => that thread holds it". */
inline claim_below(s, lk, limit) {
	found = 0; i = 0;
	do
	:: found < 2 && i < hcnt[s] && i < limit && i < NHELD ->
		if
		:: HOLDS_ENTRY(s, i, lk) ->
			found = 2;
			assert(OWNER_INVARIANT)
		:: HE(s, i) != lk && LOCKOF(HE(s, i)) == lk && !CUR_WAIT(s, lk, i) ->
			found = 1
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	i = 0
}


/* frozen_culprit(lk, cand) into fc, for the locked case: lk is locked and
 * its locked byte names cand. The pending case (lk free, its pending bit
 * noted in cand's frozen wait record, wr.pend) is not modelled: fc = 0
 * there, fewer links, never a wrong one. BROKEN_FROZEN_ANY_CLAIMANT: any
 * claimant of a locked lock is taken for its owner. C_FROZEN_CLAIMS: the
 * rule for an owner the byte cannot name (src/detect.c, RQ_OWNER_ANON): no
 * thread other than cand claims lk (has an entry for it other than the
 * entry of the wait it is in right now). */
inline frozen_culprit(lk, cand) {
	fc = LK(W[lk]);
#if !defined(BROKEN_FROZEN_ANY_CLAIMANT) && !defined(C_FROZEN_CLAIMS)
	fc = fc && NAMED_OWNER(lk) == cand
#elif defined(C_FROZEN_CLAIMS)
	x = 0;
	do
	:: fc && x < NTHR ->
		if
		:: x != cand ->
			claim_below(x, lk, NHELD);
			if
			:: found != 0 -> fc = 0
			:: else -> skip
			fi
		:: else -> skip
		fi;
		x++
	:: else -> break
	od;
	x = 0; found = 0
#endif
}

#ifdef C_READ_WAIT
#define AA_WAIT_OK(i) true
#else
/* fix (as WAIT_ENTRY_OK): a wait record counts only while its context's
 * entry is still there, tagged ACQUIRING */
#define AA_WAIT_OK(i) (HE(t, widx[t * NWAIT + (i)]) == (L | ACQ))
#endif

/* rq_check_aa(self, L, n): untagged entry below n, or a wait of an
 * interrupted context of this thread (wait_idx < n). */
inline check_aa() {
	i = 0;
	do
	:: i < n && i < NHELD ->
		if
#ifndef TAGGED_FAST_PATH
		/* any entry of ours counts while the locked byte names us: a
		 * context we interrupted is past its CAS and before its unlock
		 * store (one before its CAS or past its store does not own the
		 * lock; one waiting is the wait record's) */
		:: LOCKOF(HE(t, i)) == L && LK(W[L]) && NAMED_OWNER(L) == t ->
			SETERR(EDEADLK)
#else
		:: HE(t, i) == L -> SETERR(EDEADLK);
			/* table invariant (property 7), our own table */
			assert(g_owner[L] != NONE && thr(g_owner[L]) == t)
#endif
#if defined(C_AA_REL)
		/* the rule for an anonymous owner (src/detect.c), here applied
		 * to every owner: an entry tagged ACQUIRING or RELEASING (a
		 * context we interrupted) counts while the lock is taken;
		 * RELEASING gives a false AA (docs/MODEL.md, rule 2 of "Rules of the C code that the model found") */
		:: LOCKOF(HE(t, i)) == L && HE(t, i) != L && LK(W[L]) -> SETERR(EDEADLK)
#elif !defined(C_AA_EXACT) && defined(TAGGED_FAST_PATH)
		/* a tagged entry counts while the locked byte names us */
		:: LOCKOF(HE(t, i)) == L && HE(t, i) != L && LK(W[L]) && NAMED_OWNER(L) == t ->
			SETERR(EDEADLK)
#endif
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	i = 0;
	do
	:: i < nwait[t] && i < NWAIT ->
		if
		:: wlock[t * NWAIT + i] == L && widx[t * NWAIT + i] < n &&
		   AA_WAIT_OK(i) -> SETERR(EDEADLK)
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	i = 0
}

#ifdef C_READ_WAIT
/* src/detect.c without wait_entry_live (docs/MODEL.md, rule 3): depth and wait stack only */
#define WAIT_ENTRY_OK(s, wi) true
#else
/* fix: the waiting context's own entry must still be there, tagged
 * ACQUIRING (rq_fail clears it first; rq_held_mark_held untags it) */
#define WAIT_ENTRY_OK(s, wi) (HE(s, wi) == (wlock[(s) * NWAIT + nwait[s] - 1] | ACQ))
#endif


/* read_wait(s) into the path slot p (gen, depth, widx, waits) */
#define READ_WAIT(s, g, d, wi, wt) \
	g = wgen[s]; d = hcnt[s]; wt = 0; wi = 0; \
	if \
	:: nwait[s] > 0 && nwait[s] <= NWAIT -> \
		wi = widx[(s) * NWAIT + nwait[s] - 1]; \
		if \
		:: d == wi + 1 && WAIT_ENTRY_OK(s, wi) -> wt = wlock[(s) * NWAIT + nwait[s] - 1] \
		:: else -> skip \
		fi \
	:: else -> skip \
	fi

/* find_waiting_holder(want) into s (NONE when nobody), with s's read_wait
 * in (gen, dep, wid, wat) and fz = 1 for a frozen link: the first thread
 * that is stuck waiting (its innermost context waits: depth == waiting
 * entry + 1, that entry still ACQUIRING) and holds want untagged below its
 * waiting entry. Failing that, the only stuck thread with a tagged entry
 * for want below its waiting entry, if frozen_culprit() accepts it.
 * Threads that are not waiting are never links. A locked want has one
 * candidate, the thread its locked byte names (x bounds the scan);
 * C_SCAN_HOLDERS scans every thread, as the C code does for an anonymous
 * owner. */
inline find_waiting_holder() {
	s = 0; o = NONE; k = 0; mt = NONE; x = NTHR;
#ifndef C_SCAN_HOLDERS
	if
	:: LK(W[want]) -> s = NAMED_OWNER(want); x = s + 1
	:: else -> skip
	fi;
#endif
	do
	:: s < x && o == NONE ->
		READ_WAIT(s, gen, dep, wid, wat);
		found = 0;
		if
		:: wat != 0 -> claim_below(s, want, wid)
		:: else -> skip
		fi;
		if
		:: found == 2 -> o = s
		:: found == 1 ->
			k++;
			if
			:: k == 1 -> mt = s; mgen = gen; mdep = dep; mwid = wid; mwat = wat
			:: else -> skip
			fi;
			s++
		:: else -> s++
		fi
	:: else -> break
	od;
	x = 0; fz = 0;
	if
	:: o == NONE && k == 1 ->
		frozen_culprit(want, mt);
		if
		:: fc -> o = mt; fz = 1; gen = mgen; dep = mdep; wid = mwid; wat = mwat
		:: else -> skip
		fi
	:: else -> skip
	fi;
	s = o; o = 0; k = 0; mt = 0; fc = 0; found = 0;
	mgen = 0; mdep = 0; mwid = 0; mwat = 0
}

/* The closing link (we ourselves) may be frozen too: a context of our
 * thread below us (we are its handler), tagged, the lock's only claimant.
 * Fix (model): re-verify it and confirm the cycle as for any frozen link.
 * src/held.c does neither (chain_still_valid and frozen_signature cover
 * path[0..hop-1] only): -DC_FROZEN_SELF. */
#ifdef C_FROZEN_SELF
#define SELF_FROZEN skip
#else
#define SELF_FROZEN fzs = fz; phs = want
#endif
/* one hop of the path: the link found, the lock it holds, its wait */
#define SET_HOP(p, h, g, d, wi, wt, f) \
	p = s; h = want; g = gen; d = dep; wi = wid; wt = wat; f = fz

/* rq_check_cycle, walk part: the chain from L; ok = 1 when it comes back
 * to us after at least one hop (the verify step follows). */
inline cycle_walk() {
	want = L; hop = 0; ok = 0;
	do
	:: hop >= 3 -> break
	:: else ->
		find_waiting_holder();
		if
		:: s == NONE -> break
		:: s == t -> ok = (hop > 0); SELF_FROZEN; break
		:: (hop > 0 && pt0 == s) || (hop > 1 && pt1 == s) -> break
		:: else -> skip
		fi;
		if
		:: hop == 0 -> SET_HOP(pt0, ph0, gen0, dep0, wi0, wt0, fz0)
		:: hop == 1 -> SET_HOP(pt1, ph1, gen1, dep1, wi1, wt1, fz1)
		:: hop == 2 -> SET_HOP(pt2, ph2, gen2, dep2, wi2, wt2, fz2)
		fi;
		want = wat; hop++
	od;
	s = 0; want = 0; gen = 0; dep = 0; wid = 0; wat = 0; found = 0; fz = 0
}

/* chain_still_valid + report: re-read every hop after the walk
 * (link_still_holds: a frozen link must still pass frozen_culprit), one
 * loop so that pan.c holds one copy of the test, not one per hop. */
#define LOAD_HOP(p, g, d, wi, wt, h, f) \
	mt = p; mgen = g; mdep = d; mwid = wi; mwat = wt; want = h; fz = f
inline verify_chain() {
	k = 0;
	do
	:: ok && (k < hop || (k == hop && fzs)) ->
		if
		:: k == hop ->
			/* a frozen closing link: our own frozen entry cannot
			 * change while we run; the other threads' claims can */
			mt = t; want = phs; fz = 1
		:: else ->
			if
			:: k == 0 -> LOAD_HOP(pt0, gen0, dep0, wi0, wt0, ph0, fz0)
			:: k == 1 -> LOAD_HOP(pt1, gen1, dep1, wi1, wt1, ph1, fz1)
			:: k == 2 -> LOAD_HOP(pt2, gen2, dep2, wi2, wt2, ph2, fz2)
			fi;
			READ_WAIT(mt, gen, dep, wid, wat);
			if
			:: gen != mgen || dep != mdep || wat != mwat -> ok = 0
			:: else ->
				claim_below(mt, want, mwid);
				ok = (found == (fz -> 1 : 2))
			fi
		fi;
		if
		:: ok && fz -> frozen_culprit(want, mt); ok = fc
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	k = 0; mt = 0; mgen = 0; mdep = 0; mwid = 0; mwat = 0; want = 0; fz = 0;
	fc = 0; found = 0; gen = 0; dep = 0; wid = 0; wat = 0
}

/* The two-check confirmation of a cycle through a frozen link (the model
 * has no clock, see docs/MODEL.md): the cycle is reported only if a second
 * check a millisecond later finds it again. Assumed: a context that is not
 * frozen under a waiting handler does not stay that long between its
 * slow-path acquisition and its mark, the one state in which an owner does
 * not count as a claimant (its entry is still its current wait's). So the
 * confirmation fails exactly when such a context owns a frozen link's lock. */
#define SLOW_OWNER_RUNNING(lk) (g_owner[lk] != NONE && ((g_sw >> g_owner[lk]) & 1) && \
	!(g_owner[lk] == 0 && intr))
#define UNCONFIRMED(f, lk) ((f) && SLOW_OWNER_RUNNING(lk))

inline clear_path() {
	hop = 0; pt0 = 0; pt1 = 0; pt2 = 0; ph0 = 0; ph1 = 0; ph2 = 0;
	fz0 = 0; fz1 = 0; fz2 = 0; fz = 0; fzs = 0; phs = 0;
	gen0 = 0; gen1 = 0; gen2 = 0; dep0 = 0; dep1 = 0; dep2 = 0;
	wi0 = 0; wi1 = 0; wi2 = 0; wt0 = 0; wt1 = 0; wt2 = 0
}

/* -------------------------------------------------- timeout.c: run_checks */
inline run_checks(MASK) {
	/* "freed meanwhile?" then rq_check_aa: the first reads shared state,
	 * the rest only this thread's own table (private while we run) */
	d_step {
		ok = 1;
		if
		:: (W[L] & MASK) == 0 -> ok = 0
		:: else -> check_aa();
			if
			:: ret != OK -> ok = 0; real_deadlock(c, L); assert(real); real = 0
			:: else -> skip
			fi
		fi
	};
	if
	:: ok ->
		/* rq_check_cycle: walk the chain ... */
		d_step { cycle_walk() };
		if
		:: ok ->
			/* ... and verify it after a full fence, then report */
			d_step {
#ifndef BROKEN_NO_VERIFY
				verify_chain();
#endif
				if
				:: ok && (UNCONFIRMED(fz0, ph0) || (hop > 1 && UNCONFIRMED(fz1, ph1)) ||
				          (hop > 2 && UNCONFIRMED(fz2, ph2)) || UNCONFIRMED(fzs, phs)) -> ok = 0
				:: else -> skip
				fi;
				if
				:: ok ->
#ifdef PROBE_FROZEN
					/* reachability probe: a cycle through a frozen link
					 * is reported (a "counterexample" shows one) */
					assert(!(fz0 || fz1 || fz2 || fzs));
#endif
					/* no false deadlock: the cycle is real right now */
					real_deadlock(c, L);
					assert(real);
					real = 0;
					SETERR(EDEADLK)
				:: else -> skip
				fi;
				ok = 0
			}
		:: else -> skip
		fi;
		d_step { clear_path() }
	:: else -> skip
	fi;
	ok = 0
}

/* One bounded wait (rq_wait_start + rq_wait_poll loop). COND ends the wait
 * (ACT runs in the same step); the first poll runs the checks at once; later
 * polls may find the clock expired, or run the periodic checks (NCHK times). */
#define WAIT_LOOP(COND, MASK, ACT, V) \
	chk = 0; \
	do \
	:: atomic { COND -> ACT }; break \
	:: (V) && may_vanish[c] -> goto vanished \
	:: !(COND) && chk == 0 -> chk = 1; run_checks(MASK); \
		if :: ret != OK -> break :: else -> skip fi \
	:: atomic { !(COND) && chk > 0 && CLOCK_EXPIRED -> EXPIRE; SETERR(ETIMEOUT) }; break \
	:: !(COND) && chk > 0 && chk <= NCHK -> chk++; run_checks(MASK); \
		if :: ret != OK -> break :: else -> skip fi \
	od; \
	chk = 0

/* rq_leave_queue(word, node, tail, how) */
#define LEAVE_QUEUE(how) \
	d_step { \
		ok = 0; \
		if \
		:: TL(W[L]) == me -> TAIL_RESET; ok = 1 \
		:: else -> skip \
		fi \
	}; \
	if \
	:: !ok -> PASS_ON(how) \
	:: else -> skip \
	fi; \
	ok = 0

/* rq_pass_on: never waits for a successor to link. One atomic step on next
 * (the C code's load, then its CAS 0 -> mark): a successor's id, then
 * signal it; else a mark is left. */
#define PASS_ON(how) \
	d_step { \
		nx = nnext[me]; \
		if \
		:: nx == 0 -> nnext[me] = MARK + (how) \
		:: else -> skip \
		fi \
	}; \
	if \
	:: nx != 0 -> assert(nx < MARK); SIGNAL(how) \
	:: else -> skip \
	fi; \
	nx = 0

#ifdef BROKEN_NO_TAIL_RESET
#define TAIL_RESET skip                 /* broken: the tail stays ours */
#else
#define TAIL_RESET W[L] = W[L] & 3      /* rq_try_clear_tail */
#endif
/* rq_signal_node: a CAS for the generation the successor linked with */
#define SIGNAL_CAS(how) \
	d_step { \
		if \
		:: nlocked[nx] == N_WAIT && ngen[nx] == nlgen[me] -> nlocked[nx] = how \
		:: else -> skip \
		fi \
	}
#ifdef BROKEN_NO_SIGNAL
#define SIGNAL(how) if :: how == N_HEAD -> SIGNAL_CAS(how) :: else -> skip fi
#else
#define SIGNAL(how) SIGNAL_CAS(how)
#endif

/* rq_try_steal: take a lock with neither owner nor pending claimant, the
 * tail kept, (*,0,0) -> (*,0,1). Its relaxed load and the CAS it guards
 * are one step (a failed CAS changes nothing). ok = 1 when taken. */
#define STEAL \
	atomic { \
		if \
		:: (W[L] & 3) == 0 -> W[L] = W[L] | 1; SACQUIRE(L); ok = 1 \
		:: else -> ok = 0 \
		fi \
	}

/* The waits that take the pending bit before the lock (head_wait,
 * spin_trylock) can move on when: holding the bit, the owner left;
 * else, nobody holds the bit. */
#define PEND_GO (pend -> LK(W[L]) == 0 : PD(W[L]) == 0)

/* ------------------------------------------------ res_spin_lock(L) -> ret */
inline res_spin_lock() {
	ret = OK;
#ifndef BROKEN_ENTRY_AFTER_CAS
	/* count first, then the entry: untagged (inline.h), or tagged
	 * ACQUIRING (rq_held_push, TAGGED_FAST_PATH) */
hp_cnt:	d_step { n = hcnt[t]; hcnt[t] = n + 1; SPLIT_OR(HE(t, n) = L | FP_TAG; g_in[c] = L) };
hp_ent:	ONLY_SPLIT(assert(n < NHELD); HE(t, n) = L | FP_TAG; g_in[c] = L);
	/* fast path: rq_try_0_to_locked */
fp_cas:	d_step {
		val = W[L];
		if
		:: val == 0 -> W[L] = 1; ACQUIRE(L)
		:: else -> skip
		fi
	};
#else
	/* broken: the fast-path CAS first, the table entry afterwards */
fp_cas:	d_step {
		g_in[c] = L;
		val = W[L];
		if
		:: val == 0 -> W[L] = 1; ACQUIRE(L)
		:: else -> skip
		fi
	};
hp_cnt:	d_step { n = hcnt[t]; hcnt[t] = n + 1 };
hp_ent:	d_step { assert(n < NHELD); HE(t, n) = L | FP_TAG };
#endif
	if
	:: val == 0 ->
#ifdef TAGGED_FAST_PATH
fp_held:	HE(t, n) = L	/* rq_held_mark_held */
#else
		skip
#endif
	:: else ->
#ifndef TAGGED_FAST_PATH
		/* rq_held_mark_acquiring: the slow path's entry */
sp_tag:		HE(t, n) = L | ACQ;
#endif
		/* res_spin_lock_slow_abi: with no other lock held (no AA
		 * check to run), a steal on the word the fast path's CAS saw,
		 * rq_try_steal_seen: a CAS expecting val; no wait record */
		if
		:: n == 0 && (val & 3) == 0 ->
se_steal:		d_step {
				if
				:: W[L] == val -> W[L] = val | 1; ACQUIRE(L); ok = 1
				:: else -> ok = 0
				fi
			};
			if
			:: ok ->
se_held:			d_step { HE(t, n) = L; ok = 0 };	/* rq_held_mark_held */
				goto lk_done
			:: else -> skip
			fi
		:: else -> skip
		fi;
		/* rq_lock_slowpath: AA check before anything else */
sp_aa:		d_step {
			check_aa();
			/* no false deadlock, for AA too */
			if
			:: ret == EDEADLK -> real_deadlock(c, L); assert(real); real = 0
			:: else -> skip
			fi
		};
		if
		:: ret != OK -> goto sp_fail_entry
		:: else -> skip
		fi;
		/* rq_wait_push: entry, generation, depth */
wp_ent:		d_step {
			wlock[t * NWAIT + nwait[t]] = L; widx[t * NWAIT + nwait[t]] = hcnt[t] - 1;
			wgen[t]++; nwait[t]++
		};
		/* one poll, checks run at once (the C code runs them at the
		 * first poll of each wait phase: MODEL.md, Limits) */
		run_checks(MASK_ALL);
		if
		:: ret != OK -> goto sp_fail
		:: else -> skip
		fi;
		/* pending_wait: rq_wait_handover, then rq_try_set_pending */
pw_hand:	if
		:: val == PENDING_VAL -> val = W[L]
		:: else -> skip
		fi;
		if
		:: (val & ~1) != 0 -> goto pw_steal
		:: else -> skip
		fi;
pw_set:		d_step { val = W[L]; W[L] = W[L] | PENDING_VAL };
		if
		:: (val & ~1) != 0 ->
			if
			:: PD(val) == 0 ->
pw_undo:			W[L] = W[L] & ~PENDING_VAL
			:: else -> skip
			fi;
			goto pw_steal
		:: else -> skip
		fi;
		if
		:: LK(val) ->
pw_wait:		WAIT_LOOP(LK(W[L]) == 0, MASK_L, skip, 0);
			if
			:: ret != OK ->
pw_clear:			W[L] = W[L] & ~PENDING_VAL;
				goto sp_fail
			:: else -> skip
			fi
		:: else -> skip
		fi;
pw_take:	d_step { assert((W[L] & 3) == PENDING_VAL); W[L] = (W[L] & ~3) | 1; SACQUIRE(L) };	/* rq_take_unlocked: a CAS that cannot fail without re-init */
		goto sp_ok;
		/* pending_wait's two exits to the queue: a steal first */
pw_steal:	STEAL;
		if
		:: ok -> ok = 0; goto sp_ok
		:: else -> skip
		fi;

		/* queue_wait */
q_start:	atomic { nidx = ncount[t]; ncount[t]++ };
		if
		:: nidx > 0 || nnext[t + 1] >= MARK ->
			/* rq_trylock_fallback: nested context, or (pick_node)
			 * our node keeps a mark for a late successor; the C
			 * code first tries its thread's three other nodes */
			/* spin_trylock: a steal, or take the pending bit
			 * (rq_head_try_pending) and then the lock once the
			 * owner left (rq_pending_to_locked_noted); one
			 * timeout. The steal comes first in the C code; its
			 * pending CAS can still find a free word (the steal's
			 * CAS lost, the word came back), hence both */
fb_wait:		chk = 0;
			do
			:: /* fb_steal */ d_step { !pend && (W[L] & 3) == 0; W[L] = W[L] | 1; SACQUIRE(L) }; break
			:: /* fb_pend */ d_step { !pend && PD(W[L]) == 0; W[L] = W[L] | PENDING_VAL; pend = 1 }
			:: /* fb_take */ d_step { pend && LK(W[L]) == 0; assert(PD(W[L]) == 1);
				W[L] = (W[L] & ~3) | 1; SACQUIRE(L); pend = 0 }; break
			:: !PEND_GO && chk == 0 -> chk = 1; run_checks(MASK_ALL);
				if :: ret != OK -> break :: else -> skip fi
			:: atomic { !PEND_GO && chk > 0 && CLOCK_EXPIRED -> EXPIRE; SETERR(ETIMEOUT) }; break
			:: !PEND_GO && chk > 0 && chk <= NCHK -> chk++; run_checks(MASK_ALL);
				if :: ret != OK -> break :: else -> skip fi
			od;
			chk = 0;
			if
			:: pend ->
fb_drop:			d_step { W[L] = W[L] & ~PENDING_VAL; pend = 0 }	/* rq_drop_pending_noted */
			:: else -> skip
			fi;
			goto q_out
		:: else -> skip
		fi;
		me = t + 1;
q_init:		d_step { nlocked[me] = N_WAIT; nnext[me] = 0; ngen[me]++ };
q_try:		STEAL;
		if
		:: ok -> ok = 0; goto q_out
		:: else -> skip
		fi;
		/* rq_enqueue: xchg_tail, then link behind the old tail */
q_xchg:		d_step { val = W[L]; W[L] = (W[L] & 3) | (me << 2) };
		if
		:: TL(val) != 0 ->
			/* rq_link_behind: exchange, a mark means the
			 * predecessor already left */
q_link:			d_step {
				nx = nnext[TL(val)]; nnext[TL(val)] = me; nlgen[TL(val)] = ngen[me];
				assert(nx == 0 || nx > MARK)
			};
			if
			/* a timeout mark: we saw nothing of that stall, so we
			 * head the queue on our own deadline, as for a
			 * hand-off (queue_wait) */
			:: nx == MARK + N_TIMEOUT -> nx = 0; goto hw_wait
			:: nx == MARK + N_HEAD -> nx = 0; goto hw_wait
			:: else -> skip
			fi;
#ifndef BROKEN_NO_OWN_DEADLINE
			/* queued_wait: a deadline of our own; its checks run
			 * 1 ms in (the C code checked just before queueing),
			 * i.e. never with NCHK=0; we may vanish here */
q_node:			do
			:: atomic { nlocked[me] != N_WAIT -> skip }; break
			:: may_vanish[c] -> goto vanished
			:: atomic { nlocked[me] == N_WAIT && CLOCK_EXPIRED -> EXPIRE; SETERR(ETIMEOUT) }; break
			od;
			if
			:: ret != OK ->
				/* rq_node_abandon: WAIT -> GONE, or act on the
				 * signal that came first */
q_aband:			d_step {
					if
					:: nlocked[me] == N_WAIT -> nlocked[me] = N_GONE; ok = 1
					:: else -> ret = OK; ok = 0
					fi
				};
				if
				:: ok ->
q_leave:				LEAVE_QUEUE((ret == ETIMEOUT -> N_TIMEOUT : N_HEAD));
					goto q_out
				:: else -> skip
				fi
			:: else -> skip
			fi;
#else
			/* broken: a non-head waiter trusts its predecessor */
q_node:			nlocked[me] != N_WAIT;
#endif
			/* told to time out: fail with the teardown, or, when
			 * teardown_applies() says the stall is over or we came
			 * after it began (a check of the word and of our own
			 * time waited, either outcome here), head the queue */
			if
			:: nlocked[me] == N_TIMEOUT ->
				if
				:: d_step { SETERR(ETIMEOUT) };
q_tdown:				LEAVE_QUEUE(N_TIMEOUT);
					goto q_out
				:: goto hw_wait
				fi
			:: else -> skip
			fi
		:: else -> skip
		fi;
#ifndef BROKEN_HEAD_BLIND_SET
		/* head_wait: take the pending bit (rq_head_try_pending: a CAS
		 * *,0,* -> *,1,*, after a pending waiter that came before the
		 * queue), which stops new pending waiters and steals; then
		 * wait for the owner to leave and take the lock by CAS
		 * (rq_head_take). Two timeouts; a failed head gives the bit
		 * up first (rq_drop_pending_noted). It may vanish here, but
		 * not while it holds the bit (that loses the lock by design,
		 * rqspinlock.h "Abandoned calls") */
hw_wait:	chk = 0;
		do
		:: /* hw_pend */ d_step { !pend && PD(W[L]) == 0; W[L] = W[L] | PENDING_VAL; pend = 1 }
			/* rq_head_take, its load and the CAS(es) in one step (as
			 * the CAS loops above): alone, CAS n,1,0 -> 0,0,1;
			 * else rq_take_unlocked *,1,0 -> *,0,1, the tail kept.
			 * Holding the bit, no one else sets locked: without a
			 * re-init the take-over cannot fail (-1) */
		:: /* hc_take */ d_step { pend && LK(W[L]) == 0; assert(PD(W[L]) == 1);
				if
				:: TL(W[L]) == me -> W[L] = 1; ok = 1
				:: else -> W[L] = (W[L] & ~3) | 1; ok = 0
				fi;
				SACQUIRE(L); pend = 0 }; break
		:: !pend && may_vanish[c] -> goto vanished
		:: !PEND_GO && chk == 0 -> chk = 1; run_checks(MASK_LP);
			if :: ret != OK -> break :: else -> skip fi
		:: atomic { !PEND_GO && chk > 0 && CLOCK_EXPIRED -> EXPIRE; SETERR(ETIMEOUT) }; break
		:: !PEND_GO && chk > 0 && chk <= NCHK -> chk++; run_checks(MASK_LP);
			if :: ret != OK -> break :: else -> skip fi
		od;
		chk = 0;
		if
		:: pend ->
#ifndef BROKEN_HEAD_KEEP_PENDING
hw_drop:		d_step { W[L] = W[L] & ~PENDING_VAL; pend = 0 }	/* rq_drop_pending_noted */
#else
			/* broken: the failed head leaves its pending bit */
hw_drop:		pend = 0
#endif
		:: else -> skip
		fi;
		if
		:: ret == ETIMEOUT ->
hw_tdown:		LEAVE_QUEUE(N_TIMEOUT);
			goto q_out
		:: ret == EDEADLK ->
hw_hand:		LEAVE_QUEUE(N_HEAD);
			goto q_out
		:: else -> skip
		fi;
		if
		:: !ok ->
hc_next:		PASS_ON(N_HEAD)	/* rq_pass_on(node, RQ_NODE_HEAD) */
		:: else -> ok = 0
		fi;
#else
		/* broken: a head that never takes the pending bit waits for
		 * locked and pending to clear, then sets the locked byte with
		 * a store (the kernel's clear_pending_set_locked), not a CAS,
		 * beside the code's steals; alone, it then clears its tail */
hw_wait:	WAIT_LOOP((W[L] & 3) == 0, MASK_LP, skip, 1);
		if
		:: ret == ETIMEOUT ->
hw_tdown:		LEAVE_QUEUE(N_TIMEOUT);
			goto q_out
		:: ret == EDEADLK ->
hw_hand:		LEAVE_QUEUE(N_HEAD);
			goto q_out
		:: else -> skip
		fi;
hc_set:		d_step { W[L] = (W[L] & ~3) | 1; SACQUIRE(L) };
		d_step {
			ok = 0;
			if
			:: TL(W[L]) == me -> TAIL_RESET; ok = 1
			:: else -> skip
			fi
		};
		if
		:: !ok ->
hc_next:		PASS_ON(N_HEAD)
		:: else -> ok = 0
		fi;
#endif
q_out:		atomic { ncount[t]--; me = 0; nidx = 0 };	/* rq_node_put */
		if
		:: ret != OK -> goto sp_fail
		:: else -> skip
		fi;
sp_ok:		/* success: mark held, then pop the wait */
sp_held:	atomic { HE(t, n) = L; g_sw = g_sw & ~(1 << c) };
wo_dep1:	d_step { nwait[t]--; wgen[t]++ };
		goto lk_done;
sp_fail:	/* rq_fail: table first, then the wait record */
hd_ent:		atomic { HE(t, n) = 0; g_in[c] = 0; SPLIT_OR(hcnt[t] = n) };
hd_cnt:		ONLY_SPLIT(hcnt[t] = n);
wo_dep2:	d_step { nwait[t]--; wgen[t]++ };
		goto lk_out;
sp_fail_entry:	/* rq_fail without a wait record (AA at entry) */
hd_ent0:	atomic { HE(t, n) = 0; g_in[c] = 0; SPLIT_OR(hcnt[t] = n) };
hd_cnt0:	ONLY_SPLIT(hcnt[t] = n);
lk_out:		/* AA completeness: a handler never times out on a lock its own
		 * interrupted thread holds. The rules without an owner in the
		 * word (C_AA_EXACT, C_AA_REL) are excused while the thread releases it
		 * (RELEASING tag: without the owner in the word the handler
		 * cannot tell the lock from one re-taken after the unlock store) */
#if defined(C_AA_EXACT) || defined(C_AA_REL)
		assert(!(ret == ETIMEOUT && c == HCTX && g_owner[L] == 0 && !g_relw))
#else
		assert(!(ret == ETIMEOUT && c == HCTX && g_owner[L] == 0))
#endif
	fi;
lk_done:
	atomic { val = 0; n = 0; g_in[c] = 0 }
}

/* ---------------------------------------------------- res_spin_unlock(L) */
inline res_spin_unlock() {
	assert(g_owner[L] == c);
	if
	/* hcnt[t] > 0: for an empty table the library reads the slot below
	 * the table (none_below), which names no lock */
	:: hcnt[t] > 0 && HE(t, hcnt[t] - 1) == L ->
		n = hcnt[t];
#ifndef BROKEN_CLEAR_BEFORE_UNLOCK
#ifdef TAGGED_FAST_PATH
ul_tag:		d_step { HE(t, n - 1) = L | REL; g_relw = (g_relw || c == 0) };
#endif
ul_store:	d_step { W[L] = W[L] & ~1; g_owner[L] = NONE; g_relw = (g_relw && c != 0) };
#ifdef TAGGED_FAST_PATH
ul_clear:	d_step { HE(t, n - 1) = 0; SPLIT_OR(hcnt[t] = n - 1) };
ul_cnt:		ONLY_SPLIT(hcnt[t] = n - 1)
#else
		/* the entry stays, above the count, until the next push
		 * overwrites it: past the store it claims nothing */
ul_cnt:		hcnt[t] = n - 1
#endif
#else
		/* broken: entry dropped before the unlock store */
ul_clear:	HE(t, n - 1) = 0;
ul_cnt:		hcnt[t] = n - 1;
ul_store:	d_step { W[L] = W[L] & ~1; g_owner[L] = NONE }
#endif
	:: else ->
		/* rq_unlock_slow: out-of-order unlock */
		d_step {
			n = hcnt[t]; j = n;
			do
			:: j > 0 && HE(t, j - 1) != L -> j--
			:: else -> break
			od;
			assert(j > 0)
		};
us_tag:		d_step { HE(t, j - 1) = L | REL; g_relw = (g_relw || c == 0) };
us_store:	d_step { W[L] = W[L] & ~1; g_owner[L] = NONE; g_relw = (g_relw && c != 0) };
		/* held_remove_at: copy down, clear the top, drop the count */
		j = j - 1;
us_shift:	do
		:: j + 1 < n -> HE(t, j) = HE(t, j + 1); j++
		:: else -> break
		od;
us_top:		HE(t, n - 1) = 0;
us_cnt:		hcnt[t] = n - 1
	fi;
	d_step { n = 0; j = 0 }
}

/* ------------------------------------------------------------ contexts */
/* prog: L = lock L, 4 + L = unlock L (skipped if the lock failed), 0 = end */
inline ctx_body() {
	t = thr(c);
	do
	:: pc < MAXOPS && prog[c * MAXOPS + pc] != 0 ->
		d_step { op = prog[c * MAXOPS + pc]; pc++ };
		if
		:: op < 4 ->
			L = op;
			res_spin_lock();
#ifndef TIMEOUTS
			/* no fault: every acquisition succeeds, but a handler's
			 * genuine AA */
			assert(ret == OK || (c == HCTX && ret == EDEADLK));
#endif
			if
			:: ret == OK ->
				if
				:: may_stall[c] -> g_stall = 1; goto stalled
				:: true -> skip
				fi
			:: else -> failed = failed | (1 << L)
			fi;
			d_step { ret = 0; L = 0 }
		:: else ->
			L = op - 4;
			if
			:: failed & (1 << L) -> failed = failed & ~(1 << L)
			:: else -> res_spin_unlock()
			fi;
			L = 0
		fi
	:: else -> break
	od;
stalled:
	skip;
	goto body_end;
vanished:
	/* stops for good inside a queue wait: its node, wait record and
	 * table entry stay as they are */
	g_vanished[t] = 1;
body_end:
	skip
}

proctype Thread0() provided (!intr)
{
	byte c = 0;
	LOCALS;
	ctx_body();
	d_step { t0done = 1; g_done++ }
}

proctype Thread(byte c)
{
	LOCALS;
	ctx_body();
	g_done++
}

/* The signal handler of thread 0: arrives at any step of thread 0 (which
 * cannot run until it returns, see "provided" above), runs its program. */
proctype Handler()
{
	byte c = HCTX;
	LOCALS;
	if
	:: atomic { !t0done && prog[HCTX * MAXOPS] != 0 -> intr = 1 };
		ctx_body();
		intr = 0
	:: atomic { t0done || prog[HCTX * MAXOPS] == 0 -> skip }
	fi;
	g_done++
}

/* After everyone finished (or stalled): the locks are usable again. */
proctype Monitor()
{
	byte l, s2;
end_wait:
	(g_done == NCTX) ->
	d_step {
		l = 1;
		do
		:: l < NLOCK ->
			/* free, or held (plainly) by a stalled owner; a tail
			 * may only name the node of a vanished thread */
			assert((W[l] & 3) == (g_owner[l] != NONE -> 1 : 0));
			assert(TL(W[l]) == 0 || g_vanished[TL(W[l]) - 1]);
			l++
		:: else -> break
		od;
		s2 = 0;
		do
		:: s2 < NTHR ->
			assert(g_vanished[s2] || (nwait[s2] == 0 && ncount[s2] == 0));
			s2++
		:: else -> break
		od
	}
}

#define P(ctx, k, v) prog[(ctx) * MAXOPS + (k)] = v

init {
	atomic {
		g_owner[0] = NONE; g_owner[1] = NONE; g_owner[2] = NONE;
#if defined(CFG_NOFAULT)
		/* no deadlock in the programs; every lock() returns 0 except
		 * the handler's genuine AA */
		P(0, 0, 1); P(0, 1, 5);
		P(1, 0, 1); P(1, 1, 5);
#ifdef NF_NEST
		P(2, 0, 2); P(2, 1, 1); P(2, 2, 5); P(2, 3, 6);
#else
		P(2, 0, 1); P(2, 1, 5);
#endif
#ifndef NOHANDLER
		P(3, 0, 2); P(3, 1, 6);
#endif
#elif defined(CFG_QUEUE)
		/* three threads on lock A, T1 twice (so that it can queue behind
		 * a head): owner, pending waiter, head and non-head waiters, FIFO
		 * teardown; T2 may stall holding A */
		P(0, 0, 1); P(0, 1, 5);
		P(1, 0, 1); P(1, 1, 5); P(1, 2, 1); P(1, 3, 5);
		P(2, 0, 1); P(2, 1, 5);
		may_stall[2] = 1;
#elif defined(CFG_NEST)
		/* the handler and its thread on lock A with T1 (who may stall):
		 * AA on the thread's own lock, the nested trylock fallback while
		 * the thread is queued; T2 takes B. NEST_RELOCK: the thread
		 * takes A twice, so that its second push covers the entry its
		 * first unlock left (the handler can arrive between that push's
		 * count and its entry) */
#ifdef NEST_RELOCK
		P(0, 0, 1); P(0, 1, 5); P(0, 2, 1); P(0, 3, 5);
#else
		P(0, 0, 1); P(0, 1, 5);
#endif
		P(1, 0, 1); P(1, 1, 5);
		P(2, 0, 2); P(2, 1, 6);
		P(3, 0, 1); P(3, 1, 5);
		may_stall[1] = 1;
#elif defined(CFG_HANDOFF)
		/* T2 takes the pending bit of A, so T0 queues on A as head while
		 * holding B, and T1 holds A and waits for B: the deadlocked head
		 * hands the queue over (no handler) */
		P(0, 0, 2); P(0, 1, 1); P(0, 2, 5); P(0, 3, 6);
		P(1, 0, 1); P(1, 1, 2); P(1, 2, 6); P(1, 3, 5);
		P(2, 0, 1); P(2, 1, 5);
#elif defined(CFG_ABBA)
		/* ABBA between T0 and T1; the handler takes B (a cycle through
		 * the interrupted thread) */
		P(0, 0, 1); P(0, 1, 2); P(0, 2, 6); P(0, 3, 5);
		P(1, 0, 2); P(1, 1, 1); P(1, 2, 5); P(1, 3, 6);
		P(3, 0, 2); P(3, 1, 6);
#elif defined(CFG_FROZEN)
		/* frozen claimants: T0 takes A; its handler takes B, held by
		 * T1, who then waits for A; T2 takes A too, so that A can have
		 * an owner other than T0's frozen context. T1 and T2 keep their
		 * locks (with -DFROZEN_UNLOCKS they unlock them: about 30
		 * million states, outside the CI budget) */
		P(0, 0, 1); P(0, 1, 5);
		P(1, 0, 2); P(1, 1, 1);
		P(2, 0, 1);
#ifdef FROZEN_UNLOCKS
		P(1, 2, 5); P(1, 3, 6);
		P(2, 1, 5);
#endif
		P(3, 0, 2); P(3, 1, 6);
#elif defined(CFG_VANISH)
		/* as CFG_QUEUE, but T0 may vanish while queued, as head or
		 * behind others, and nobody stalls */
		P(0, 0, 1); P(0, 1, 5);
		P(1, 0, 1); P(1, 1, 5); P(1, 2, 1); P(1, 3, 5);
		P(2, 0, 1); P(2, 1, 5);
		may_vanish[0] = 1;
#else
#error "choose a configuration: -DCFG_NOFAULT, -DCFG_QUEUE, -DCFG_NEST, -DCFG_ABBA, -DCFG_HANDOFF, -DCFG_FROZEN or -DCFG_VANISH"
#endif
		run Thread0(); run Thread(1); run Thread(2); run Handler(); run Monitor()
	}
}
