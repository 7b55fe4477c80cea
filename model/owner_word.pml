/*
 * A design model, not the library's protocol: the owner-in-the-word
 * proposal of docs/MODEL.md, "Design model: an owner in the lock word".
 * The locked byte names the owner thread and there is no fast-path
 * held-lock table. Two threads, two locks; each thread's outer context
 * takes its two locks in one order or the other, and may be interrupted
 * once, anywhere, by a signal handler that takes one lock or both (it runs
 * to its end before the outer context resumes). Detection reads a lock's owner
 * from its word and what a thread waits for from its wait records; a lock
 * taken on the slow path is recorded with the number of the thread's waits
 * active then. While a thread waits, its fast-path copy of its id is zero,
 * so a handler above the wait takes the slow path and is recorded.
 *
 * Checked: every reported deadlock is real (assertions against ghost
 * state), and none goes unreported (an unreported one leaves both threads
 * blocked: an invalid end state). Detection is one atomic step here; the
 * library's reads are not, and its verification by re-reading is not
 * modelled.
 *
 * Broken variants: NO_ZERO_ID (the handler keeps the fast path: a lock it
 * holds looks held by the waiting context, a false cycle), NO_DETECT (no
 * detection: a deadlock nobody reports).
 */
#define NT 2
#define NL 2

byte owner[NL];          /* 0: free, else the owning thread (1..NT) */
/* Per thread, per lock: 0, or 1 + the thread's active waits when it took
 * the lock on the slow path (cleared when its last wait ends). */
byte rl[(NT + 1) * NL];
byte waits[NT + 1];      /* active waits per thread */
byte wl[(NT + 1) * 2];   /* lock waited for, per thread and wait level */
bool fastid[NT + 1];     /* the fast path's copy of the id is valid */

/* ghost truth */
byte hctx[NL];                /* holder's context: 0 outer, 1 handler */
bool cwait[(NT + 1) * 2];     /* context (t, c) is inside a wait */
byte cwl[(NT + 1) * 2];       /* the lock it waits for */
byte reports;

/* Is context (t, c) unable to run: waiting, or frozen under a waiting handler? */
#define BLOCKED(t, c) (cwait[(t) * 2 + (c)] || ((c) == 0 && cwait[(t) * 2 + 1]))

inline take(t, c, l)
{
	owner[l] = t;
	hctx[l] = c
}

/* The slow path's record of a lock it took, and its end of a wait. */
inline record(t, l)
{
	rl[t * NL + l] = waits[t] + 1
}

inline end_wait(t)
{
	if
	:: waits[t] == 0 ->
		fastid[t] = true;
		rl[t * NL + 0] = 0;
		rl[t * NL + 1] = 0
	:: else
	fi
}

inline release(l)
{
	owner[l] = 0
}

/* A report by context (t, c) waiting for l: assert it is real. */
inline check_real(t, c, l)
{
	if
	:: owner[l] == t ->
		/* AA: held by this context or one it interrupted */
		assert(hctx[l] <= c)
	:: else ->
		o = owner[l];
		/* the holder cannot run, and what it waits for is ours */
		assert(BLOCKED(o, hctx[l]));
		k = (cwait[o * 2 + 1] -> 1 : 0);
		assert(cwait[o * 2 + k] && owner[cwl[o * 2 + k]] == t &&
		       hctx[cwl[o * 2 + k]] <= c)
	fi
}

/* Detection by a waiter of thread t for lock l: a deadlock to report? */
#define STUCK(o, l) (waits[o] > 0 && (rl[(o) * NL + (l)] == 0 || rl[(o) * NL + (l)] - 1 < waits[o]))
#define INNER(o)    (wl[(o) * 2 + waits[o] - 1])
#ifdef NO_DETECT
#define DEADLOCK(t, l) false
#else
#define DEADLOCK(t, l)                                                         \
	(owner[l] == t ||                                                      \
	 (owner[l] != 0 && STUCK(owner[l], l) && owner[INNER(owner[l])] == t))
#endif

/* Acquire l from context (t, c); ok: acquired, else failed (reported).
 * EXTRA: one more option in the wait loop (the outer context's: a signal
 * handler interrupts the wait). */
#define ACQUIRE(t, c, l, ok, EXTRA)                                            \
	ok = true;                                                             \
	if                                                                     \
	:: atomic { fastid[t] && owner[l] == 0 -> take(t, c, l) }              \
	:: else ->                                                             \
		atomic {                                                       \
			ZERO_ID(t);                                            \
			wl[t * 2 + waits[t]] = l;                              \
			waits[t]++;                                            \
			cwait[t * 2 + c] = true;                               \
			cwl[t * 2 + c] = l                                     \
		}                                                              \
		do                                                             \
		:: atomic { owner[l] == 0 ->                                   \
			cwait[t * 2 + c] = false;                              \
			waits[t]--;                                            \
			take(t, c, l);                                         \
			record(t, l);                                          \
			end_wait(t);                                           \
			break }                                                \
		:: atomic { DEADLOCK(t, l) ->                                  \
			check_real(t, c, l);                                   \
			reports++;                                             \
			cwait[t * 2 + c] = false;                              \
			waits[t]--;                                            \
			end_wait(t);                                           \
			ok = false;                                            \
			break }                                                \
		EXTRA                                                          \
		od                                                             \
	fi

#ifdef NO_ZERO_ID
#define ZERO_ID(t) skip
#else
#define ZERO_ID(t) fastid[t] = false
#endif

inline handler(t)
{
	hdone = true;
	if
	:: h = 0
	:: h = 1
	fi;
	ACQUIRE(t, 1, h, hok, );
	if
	:: hok ->
		/* and maybe the other lock too, while holding this one */
		if
		:: ACQUIRE(t, 1, 1 - h, hok2, );
			if
			:: hok2 -> release(1 - h)
			:: else
			fi
		:: skip
		fi;
		release(h)
	:: else
	fi
}

#define HANDLER_IN_WAIT :: !hdone -> handler(t)
#define MAYBE_HANDLER                                                          \
	if                                                                     \
	:: !hdone -> handler(t)                                                \
	:: skip                                                                \
	fi

proctype thread(byte t; byte a; byte b)
{
	bool hdone = false, hok, hok2, oka, okb;
	byte h, o, k;

	fastid[t] = true;
	MAYBE_HANDLER;
	ACQUIRE(t, 0, a, oka, HANDLER_IN_WAIT);
	if
	:: oka ->
		MAYBE_HANDLER;
		ACQUIRE(t, 0, b, okb, HANDLER_IN_WAIT);
		if
		:: okb ->
			MAYBE_HANDLER;
			release(b)
		:: else
		fi;
		release(a)
	:: else
	fi;
	MAYBE_HANDLER
}

init
{
	atomic {
		if
		:: run thread(1, 0, 1); run thread(2, 1, 0)
		:: run thread(1, 0, 1); run thread(2, 0, 1)
		fi
	}
}
