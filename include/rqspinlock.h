/* SPDX-License-Identifier: MIT */
/**
 * @file rqspinlock.h
 * @brief Resilient queued spin lock for Linux userspace.
 *
 * A 4-byte, qspinlock-compatible spin lock that never hangs: res_spin_lock()
 * detects AA, ABBA and longer waits-for cycles, and gives up after a bounded
 * wait, returning a negative errno value. The lock stays usable afterwards.
 *
 * Userspace mapping of the kernel design: a CPU is a thread (a slot in the
 * library's thread registry), an interrupt/NMI is a signal handler, and
 * local_irq_save() is blocking signals (res_spin_lock_irqsave()).
 *
 * Error convention: negative errno values, as in the kernel, libbpf and
 * liburing. 0 means success.
 *
 * Thread safety: every function may be called from any thread. The lock and
 * unlock functions are async-signal-safe; a signal handler may take a lock,
 * including one its interrupted thread holds or waits for (it then gets
 * -EDEADLK or -ETIMEDOUT instead of hanging).
 *
 * Memory the library reads: only the locks passed to it, by the thread that
 * passed them, during the call. A lock's memory may be freed, unmapped or
 * reused as soon as no thread holds it, waits for it or is inside a call
 * with it, whatever other threads' deadlock detection is doing: detection
 * finds other threads' locks as addresses in their records, which it
 * compares but never reads through (docs/DESIGN.md, section 7, "Locks of
 * other threads").
 *
 * Bounded whatever others do: every waiter has a deadline of its own, also
 * one queued behind others, and leaves the queue by itself when it passes;
 * nobody waits for another thread to take a step (a successor to link, a
 * predecessor to hand over) beyond its own deadline. A thread that is
 * frozen, cancelled, jumped out of a call or forked away costs the others at
 * most their own bounds, and the lock works again afterwards, except where
 * noted under "Abandoned calls" below.
 *
 * Abandoned calls (the rules; the other threads never hang under any of them):
 *  - Cancellation: no function of the library is or calls a cancellation
 *    point. A deferred pthread_cancel() of a waiting thread takes effect at
 *    its next cancellation point after the call returned, possibly with the
 *    lock held (release it in a cleanup handler). Asynchronous cancellation
 *    (PTHREAD_CANCEL_ASYNCHRONOUS) inside a call is not supported (none of
 *    these functions is async-cancel-safe): it abandons the call as
 *    siglongjmp() does.
 *  - siglongjmp() (or longjmp()) out of a signal handler that interrupted a
 *    call of this library abandons that call. Not supported for the jumping
 *    thread: its record keeps the call (its later calls for that lock return
 *    -EDEADLK) and it should stop using that lock. For the others: waiters
 *    queued behind it leave on their own deadlines (-ETIMEDOUT) and the lock
 *    works again, unless the abandoned call held the lock itself; then
 *    every call for it returns -ETIMEDOUT until res_spin_lock_init() resets
 *    it. A pending bit that the abandoned call held is cleared once the
 *    jumping thread has exited (its record keeps the call until then), by
 *    the first wait that reaches its deadline (up to two timeouts), and the
 *    lock works again; not while a thread that found the registry full is
 *    alive (its waits are invisible: it could be the bit's holder).
 *  - fork() in a signal handler that interrupted a call: in the child the
 *    call goes on when the handler returns and returns within its own bound
 *    (-ETIMEDOUT if it waited for a thread that the child does not have).
 *    In a child, locks held by other threads of the parent stay held; a
 *    lock that was free, even with waiters of the parent on it, can be
 *    taken (the first wait may last two timeouts, clearing their pending
 *    bit). Until a res_spin_lock() has taken it so, res_spin_trylock()
 *    on such a lock returns -EBUSY: it never waits, so it never clears.
 *  - Process-shared memory: a lock in memory shared by several processes
 *    must be initialised with res_spin_lock_init_shared(), which marks it so
 *    that it never queues (the queue names per-process thread slots). An
 *    unmarked lock there is not supported; its calls still return within
 *    their bounds, typically -ETIMEDOUT under contention.
 *  - Thread exit: locks taken in thread-specific-data destructors that run
 *    after the library's own one work through the TAS slow path, without a
 *    registry slot, and are invisible to other threads' deadlock detection.
 *    A thread whose first call into this library is made in a destructor
 *    of glibc's last destructor round keeps its registry slot after it
 *    exits (nothing runs the library's destructor for it then).
 */
#ifndef RQSPINLOCK_H
#define RQSPINLOCK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "rqspinlock/word.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RQSPINLOCK_MUST_CHECK __attribute__((warn_unused_result))

/** The version of this header: major, minor, patch, and as a string. */
#define RQSPINLOCK_VERSION_MAJOR 0
#define RQSPINLOCK_VERSION_MINOR 1
#define RQSPINLOCK_VERSION_PATCH 0
#define RQSPINLOCK_VERSION       "0.1.0"

/**
 * @brief The version of the library the program runs with, as
 * "MAJOR.MINOR.PATCH" (RQSPINLOCK_VERSION is the one it was compiled with).
 */
const char *rqspinlock_version(void);

/**
 * @brief The lock: one 32-bit word.
 *
 * Layout (little endian): bits 0-7 locked byte, bits 8-15 pending byte,
 * bits 16-17 queue-node nesting index, bits 18-31 (registry slot + 1) of the
 * queue tail. All-zero bytes mean unlocked, so zeroed memory (calloc, static
 * storage, memset) is a valid unlocked lock. Bit 15 (the pending byte's top
 * bit) marks a process-shared lock (res_spin_lock_init_shared()), whose bits
 * 9-14 count its acquisitions. Treat the member as private.
 */
typedef struct rqspinlock {
	RQSPINLOCK_WORD val; /**< private: the lock word */
} rqspinlock_t;

RQSPINLOCK_STATIC_ASSERT(sizeof(rqspinlock_t) == 4 && RQSPINLOCK_ALIGNOF(rqspinlock_t) == 4,
                         "rqspinlock_t must be one aligned 32-bit word");

/** Static initializer: `rqspinlock_t l = RQSPINLOCK_INIT;` (C and C++). */
#define RQSPINLOCK_INIT                                                                            \
	{                                                                                          \
		0U                                                                                 \
	}

/** Default timeout for one critical section: 250 ms. */
#define RQSPINLOCK_DEFAULT_TIMEOUT_NS (250ULL * 1000 * 1000)
/** Smallest accepted timeout; smaller non-zero values are raised to it. */
#define RQSPINLOCK_MIN_TIMEOUT_NS (1000ULL)
/** Largest accepted timeout; larger values are lowered to it. */
#define RQSPINLOCK_MAX_TIMEOUT_NS (3600ULL * 1000 * 1000 * 1000)
/**
 * Locks per thread whose ownership is tracked for deadlock detection. A
 * thread may hold more. While it holds more than this many, or still holds
 * some it took beyond this many (after releasing older ones), an AA on any
 * lock is still found where the lock word names the thread
 * (docs/DESIGN.md section 7), and ends in -ETIMEDOUT where it cannot. (A
 * lock untracked for another reason, see res_spin_unlock(), is not found.)
 */
#define RQSPINLOCK_NR_HELD 31
/** Most live threads with a registry slot (the tail's 14 bits, minus 0). */
#define RQSPINLOCK_MAX_THREADS 16383

/**
 * @brief Initialize (or reset) @p lock to unlocked.
 *
 * Resetting a lock that other threads still call is the recovery for an
 * owner that is gone ("Abandoned calls" above): waiters that marked the old
 * word take the lock only when it is free, so at most one thread owns it
 * after the reset; calls in progress keep their usual results. Do not reset
 * a lock whose owner is alive: it would then share the lock with the next
 * thread to take it. A reset under queued waiters can leave a waiter's
 * queue node reserved for a successor that will never link to it
 * (docs/DESIGN.md section 5a); a thread slot whose four nodes are all
 * reserved so no longer queues, and its threads' contended calls take the
 * bounded trylock fallback (no FIFO order). Reset locks rarely, not as
 * routine flow control.
 */
void res_spin_lock_init(rqspinlock_t *lock);

/**
 * @brief Initialize (or reset) @p lock to unlocked, for use by several
 * processes (the lock lives in shared memory).
 *
 * The mark is in the lock word, so a process that only maps the memory (and
 * never calls an init function) still treats the lock as shared. Such a lock
 * never queues: its waiters spin with test-and-set, bounded by the timeout,
 * so every function above keeps its results; deadlock detection covers the
 * threads of the calling process only (a cycle through another process ends
 * in -ETIMEDOUT, as does an owner process that died holding the lock).
 * Costs: every acquisition takes the slow path's entry; no FIFO order.
 */
void res_spin_lock_init_shared(rqspinlock_t *lock);

/**
 * @brief Acquire @p lock, waiting a bounded time.
 *
 * @return 0 when the lock is held by the caller;
 *  -EDEADLK when waiting could never succeed: the caller (or a context it
 *   interrupted) already holds the lock or waits for it (AA; in a thread
 *   the lock word cannot name, docs/DESIGN.md section 3, also when such a
 *   context is acquiring it while it is taken), or the wait
 *   closes a cycle of threads each waiting for a lock the next one holds
 *   (ABBA and longer cycles);
 *  -ETIMEDOUT when the owner did not release the lock in time (one timeout
 *   for the pending waiter, two for the queue head; queued waiters behind a
 *   timed-out waiter get -ETIMEDOUT with it if they waited at least one
 *   timeout themselves and the same owner still holds the lock, and head
 *   the queue otherwise), or when a waiter queued behind others was not
 *   handed the queue within three timeouts (its predecessor is frozen or
 *   gone). Time counts against a wait only while the owner
 *   (named by the lock word, or found from the held-lock tables) runs on
 *   a CPU or sleeps: when its deadline passes and the owner spent most of
 *   the last stretch runnable but waiting for a CPU
 *   (/proc/self/task/TID/schedstat), or waiting for another lock in this
 *   library all along (its own wait is bounded), or the caller itself spent
 *   most of it off CPU, the wait is extended, never past the wall-clock cap
 *   (res_spin_set_timeout_cap_ns()) from its start. An owner
 *   that cannot be identified gives no extension on its account (but see
 *   docs/DESIGN.md 6a: a lone fellow waiter may be taken for it). Without
 *   extensions a call waits at most five timeouts (three queued, two as the
 *   head), each phase plus an eighth of its duration as grace and up to
 *   one cap of its own time off CPU when the caller itself was off CPU;
 *   with them at most two caps on an idle CPU
 *   and four when the caller itself is starved of CPU (the cap counts its
 *   own time off CPU, up to one more cap per phase);
 *  -EINVAL when @p lock is NULL.
 * On any error the caller does not hold the lock and must not unlock it.
 */
#ifndef RQSPINLOCK_INLINE
RQSPINLOCK_MUST_CHECK int res_spin_lock(rqspinlock_t *lock);
#endif

/**
 * @brief Acquire @p lock only if it is free right now; never waits.
 * @return 0 on success, -EBUSY when the lock is taken or contended,
 *  -EINVAL when @p lock is NULL.
 */
RQSPINLOCK_MUST_CHECK int res_spin_trylock(rqspinlock_t *lock);

/**
 * @brief Release @p lock, which the caller must hold.
 *
 * Locks may be released in any order; the held-lock table removes the right
 * entry. Unlocking a lock the caller does not hold releases it anyway (like a
 * plain spin lock) and is counted in rqspinlock_stats::unlock_not_held. The
 * owner's table still lists the lock: the owner's own later calls for it
 * return -EDEADLK. Deadlock detection ignores a "held" entry for a lock that
 * is not taken, or whose lock word names another owner (or, where the word
 * cannot name its owner, that another thread lists too), so other threads
 * get no false -EDEADLK from it. A NULL @p lock releases nothing and is
 * counted in unlock_not_held. While the caller holds more than
 * RQSPINLOCK_NR_HELD locks, a lock missing from the table may be one of the
 * untracked ones: such an unlock is taken as the release of an untracked
 * lock, not counted. Two cases are not told apart: a signal handler that
 * unlocks a lock it does not hold while the context it interrupted is
 * taking that same lock (past its table entry, before its CAS) removes
 * that context's entry as its own, uncounted; the context then holds the
 * lock untracked, and an AA on it from a later handler ends in -ETIMEDOUT
 * instead of -EDEADLK. The same happens when the context is taking another
 * lock, past its count's increment and before its entry, and the slot
 * still names the lock the handler unlocks (left there by an earlier
 * unlock): the context's new lock is then untracked (an AA on it ends in
 * -ETIMEDOUT), and its own unlock is counted in unlock_not_held. Telling
 * them apart would cost every unlock a read of the lock word.
 */
#ifndef RQSPINLOCK_INLINE
void res_spin_unlock(rqspinlock_t *lock);
#endif

/*
 * The irqsave pair takes a POSIX sigset_t, which <signal.h> declares only
 * at a POSIX or GNU feature level (_POSIX_C_SOURCE, _GNU_SOURCE, gcc's
 * default -std=gnu*, any C++ compiler on Linux). Under a strict ISO C mode
 * without one (-std=c11 alone) the rest of this header still compiles and
 * the pair is left out.
 */
#ifdef SIG_BLOCK
/**
 * @brief Block all maskable signals, saving the old mask in @p flags, then
 * acquire @p lock. On failure the old mask is restored before returning.
 * @return as res_spin_lock(); -EINVAL when @p flags is NULL.
 */
RQSPINLOCK_MUST_CHECK int res_spin_lock_irqsave(rqspinlock_t *lock, sigset_t *flags);

/** @brief Release @p lock (as res_spin_unlock()), then restore the signal mask
 * saved in @p flags (none when @p flags is NULL). */
void res_spin_unlock_irqrestore(rqspinlock_t *lock, const sigset_t *flags);
#endif

/**
 * @brief Set the process-wide timeout for one critical section.
 *
 * 0 restores RQSPINLOCK_DEFAULT_TIMEOUT_NS; other values are clamped to
 * [RQSPINLOCK_MIN_TIMEOUT_NS, RQSPINLOCK_MAX_TIMEOUT_NS]. Waits that already
 * started keep their deadline.
 * @return the previous timeout in nanoseconds.
 */
uint64_t res_spin_set_timeout_ns(uint64_t ns);

/** @brief The current process-wide timeout in nanoseconds. */
uint64_t res_spin_get_timeout_ns(void);

/**
 * @brief Set the process-wide wall-clock cap of one wait phase.
 *
 * A wait whose deadline passes while the lock's owner is runnable but not
 * running (preempted under CPU overload) is extended, since the owner would
 * release the lock once it runs, as is one whose owner waits for another
 * lock (that wait is bounded itself); the cap ends such a wait however often it
 * was extended: -ETIMEDOUT at the latest at the cap after the phase
 * started (or at its own duration, when that is longer), plus the caller's
 * own time off CPU in that phase, which counts up to one more cap: a call
 * (at most two phases: queued, then queue head) returns within four caps
 * even when it is starved of CPU itself, within two on an idle CPU. 0 restores the
 * default, RQSPINLOCK_DEFAULT_CAP_FACTOR times the current timeout (it
 * follows res_spin_set_timeout_ns()); other values are clamped to
 * [RQSPINLOCK_MIN_TIMEOUT_NS, RQSPINLOCK_MAX_TIMEOUT_NS]. A cap at or below
 * the timeout turns extensions off. Waits that already started keep theirs.
 * @return the previous cap in nanoseconds (0: it was the default).
 */
uint64_t res_spin_set_timeout_cap_ns(uint64_t ns);

/** @brief The cap in force in nanoseconds (the default resolved). */
uint64_t res_spin_get_timeout_cap_ns(void);

/** Default cap: this many timeouts (res_spin_set_timeout_cap_ns()). */
#define RQSPINLOCK_DEFAULT_CAP_FACTOR 8

/**
 * @brief This thread's registry slot, registering the thread if needed.
 *
 * Slots are small integers, unique among live threads and recycled when a
 * thread exits; consumers use them to index per-thread data (the maps'
 * per-thread freelists do). Async-signal-safe.
 * The environment variable `RQSPINLOCK_SLOTS=N` (decimal, 1 to
 * RQSPINLOCK_MAX_THREADS) lowers the capacity, for tests; any other value is
 * reported on stderr and ignored.
 * @return the slot in [0, RQSPINLOCK_MAX_THREADS), or -ENOSPC when every slot
 *  is taken (locks still work for such threads, through the TAS slow path).
 */
int res_spin_thread_slot(void);

/** @brief One more than the highest slot handed out so far (a bound for loops). */
int res_spin_thread_slot_bound(void);

/** Slow-path algorithms, selectable for the whole process. */
enum rqspinlock_mode {
	RQSPINLOCK_MODE_QUEUED = 0, /**< pending bit + MCS queue (default) */
	RQSPINLOCK_MODE_TAS = 1,    /**< resilient test-and-set (the kernel's
	                               virtualization fallback) */
};

/**
 * @brief Select the slow path for the whole process.
 *
 * Also settable at start-up with the environment variable
 * `RQSPINLOCK_MODE=tas` (or `queued`; either in any case). Any other value
 * is reported on stderr and ignored (queued). Switching while other threads are
 * waiting is safe: both slow paths take the lock only by a CAS that finds
 * the locked byte clear, and the pending bit clear unless the taker holds
 * it, so mutual exclusion holds; waiters already queued finish in the mode
 * they started in.
 * @return 0, or -EINVAL for an unknown mode.
 */
int res_spin_set_mode(enum rqspinlock_mode mode);

/** @brief The current slow-path mode. */
enum rqspinlock_mode res_spin_get_mode(void);

/**
 * @brief Event counters, process-wide, like the kernel's lockevents.
 *
 * Counted per thread on the slow paths only (the fast path counts nothing):
 * each thread's counters are written only by that thread and its signal
 * handlers, with no locked instruction on x86-64, and summed on read; they
 * are kept when threads exit. Threads without a registry slot count into
 * one shared set with an atomic add, which every reader sees at once.
 */
struct rqspinlock_stats {
	uint64_t lock_slowpath; /**< entries into the MCS path (a steal before linking included) */
	uint64_t lock_pending;  /**< acquisitions won as the pending waiter */
	/* lock_use_node2..4: the resilient lock never queues a nested context
	 * (it takes the trylock fallback, counted in lock_no_node), so these
	 * stay 0; kept for parity with the kernel's lockevents. */
	uint64_t lock_use_node2;  /**< queued with nesting index 1 */
	uint64_t lock_use_node3;  /**< queued with nesting index 2 */
	uint64_t lock_use_node4;  /**< queued with nesting index 3 */
	uint64_t lock_no_node;    /**< trylock fallback: nodes busy/exhausted */
	uint64_t lock_tas;        /**< entries into the TAS slow path */
	uint64_t timeout;         /**< -ETIMEDOUT returned */
	uint64_t deadlock_aa;     /**< -EDEADLK, AA */
	uint64_t deadlock_abba;   /**< -EDEADLK, two-thread cycle */
	uint64_t deadlock_cycle;  /**< -EDEADLK, cycle of three or more */
	uint64_t queue_handoff;   /**< deadlocked heads that handed the queue on */
	uint64_t yields;          /**< sched_yield() calls while waiting */
	uint64_t no_slot;         /**< threads that found the registry full */
	uint64_t unlock_not_held; /**< unlocks of locks not in the table */
	/* Appended: older binaries see a prefix of this struct. */
	/** deadlines moved: the owner was runnable but not running or
	 *  waited for another lock, the waiter itself was off CPU, or a new
	 *  owner is being watched */
	uint64_t deadline_extensions;
	/* The three below add up to timeout: the owner as last read. */
	uint64_t timeout_owner_running; /**< owner running (state R) */
	uint64_t timeout_owner_blocked; /**< owner sleeping or stopped */
	uint64_t timeout_owner_unknown; /**< no owner found, /proc unreadable, or not a deadline */
};

/** @brief Sum the counters into @p out. @return 0, or -EINVAL if NULL. */
int res_spin_get_stats(struct rqspinlock_stats *out);

/**
 * @brief Start the counters from zero: later res_spin_get_stats() calls show
 * the events since this call. Writes no other thread's counters (it records
 * the current sums, which later reads subtract), so it is safe while other
 * threads lock; an event counted at the same time may land on either side.
 */
void res_spin_reset_stats(void);

/** What a report is about. */
enum rqspinlock_event {
	RQSPINLOCK_EV_AA = 1,      /**< lock already held/acquired by this thread */
	RQSPINLOCK_EV_ABBA = 2,    /**< two-thread lock-order inversion */
	RQSPINLOCK_EV_CYCLE = 3,   /**< waits-for cycle of three or more threads */
	RQSPINLOCK_EV_TIMEOUT = 4, /**< owner did not release in time */
};

/** Most threads a report describes besides the reporting one. */
#define RQSPINLOCK_REPORT_MAX_PEERS 8
/** Most return addresses in a report's stack trace. */
#define RQSPINLOCK_REPORT_MAX_FRAMES 32

/** One thread as seen by the detector. */
struct rqspinlock_thread_info {
	const void *waits_for; /**< lock it is waiting for, or NULL */
	int32_t tid;           /**< kernel thread id (gettid()) */
	uint32_t nr_held;      /**< entries in held[] */
	/** Held locks, oldest first: the thread's untagged table entries. One
	 *  may be a lock that a context the thread's signal handler
	 *  interrupted was about to take (its entry is written before its
	 *  CAS) or has just released. */
	const void *held[RQSPINLOCK_NR_HELD];
};

/** The owner of the lock at a timeout, as its waiter last saw it. */
struct rqspinlock_owner_info {
	int32_t tid;           /**< kernel thread id; 0: no owner identified */
	uint32_t slot;         /**< its registry slot */
	char state;            /**< /proc state: 'R' running or runnable, 'S'/'D' sleeping,
	                          'T'/'t' stopped, '?' unreadable */
	uint64_t window_ns;    /**< wall time over which the two figures below were taken */
	uint64_t on_cpu_ns;    /**< owner's time on a CPU in that window */
	uint64_t run_queue_ns; /**< owner's time runnable but waiting for a CPU */
};

/** A failed acquisition, passed to the report hook. */
struct rqspinlock_report {
	enum rqspinlock_event event; /**< what happened */
	int error;                   /**< value returned: -EDEADLK or -ETIMEDOUT */
	int nested;        /**< nonzero: interrupted its own lock operation (signal handler) */
	uint32_t nr_peers; /**< entries in peers[] */
	const rqspinlock_t *lock;           /**< lock that could not be taken */
	uint32_t nr_frames;                 /**< entries in frames[] (0 if unavailable) */
	struct rqspinlock_thread_info self; /**< the failing thread */
	/** Cycle members, in waits-for order; waits_for is what the detector
	 *  saw, the held lists are read when the report is made. */
	struct rqspinlock_thread_info peers[RQSPINLOCK_REPORT_MAX_PEERS];
	/** Return addresses, innermost first; where the library is a shared
	 *  object of its own, its frames are left out (the first is its
	 *  caller's). */
	void *frames[RQSPINLOCK_REPORT_MAX_FRAMES];
	/** Appended. Timeouts: the owner and what it was doing (tid 0: none
	 *  identified, or the timeout did not come from a deadline). */
	struct rqspinlock_owner_info owner;
};

/**
 * @brief Report callback.
 *
 * Called on the failing thread after the lock attempt has been fully undone
 * and before res_spin_lock() returns; the library holds no internal lock then,
 * and cancellation is disabled during the call. The caller's errno is
 * restored after it, whatever the hook sets.
 * Because the failing call may run inside a signal handler, the hook must be
 * async-signal-safe (write(2), no malloc, no stdio) unless the application
 * never takes locks from signal handlers. It must not take the lock named in
 * the report. @p report is valid only during the call.
 */
typedef void (*rqspinlock_report_fn)(const struct rqspinlock_report *report, void *arg);

/**
 * @brief Install @p fn (NULL: none) as the report hook.
 *
 * The default hook is off; setting `RQSPINLOCK_REPORT=1` in the environment
 * installs res_spin_report_stderr() at start-up. It may be called while
 * other threads fail: each report goes to one hook that was installed,
 * with that hook's own @p arg (a failure that races with a change stalled
 * for a whole timeout, its thread stopped or forked away in the middle, is
 * not reported).
 */
void res_spin_set_report_hook(rqspinlock_report_fn fn, void *arg);

/**
 * @brief The stock reporter: @p report on stderr, a one-line summary first
 * (event, lock and its symbol, thread, function and file:line), then what
 * this thread and each cycle member hold and wait for, then the stack
 * trace, symbolized with file:line where elfutils' libdw (loaded with
 * dlopen() when needed) can be used: not in a signal handler, where the
 * report is formatted without allocation and written with write(2) only,
 * with addresses (async-signal-safe).
 *
 * A stderr whose reader has gone loses the report, nothing more: SIGPIPE
 * is blocked during the writes and one they raise is discarded (a SIGPIPE
 * already pending stays pending).
 */
void res_spin_report_stderr(const struct rqspinlock_report *report, void *arg);

#ifdef __cplusplus
}
#endif

/*
 * Opt-in inline fast path: `#define RQSPINLOCK_INLINE` before including this
 * header makes res_spin_lock() and res_spin_unlock() static inline (same
 * results). The program then depends on the library's per-thread record
 * layout: see <rqspinlock/inline.h> for the ABI caveat.
 */
#ifdef RQSPINLOCK_INLINE
#include "rqspinlock/inline.h"

static inline RQSPINLOCK_MUST_CHECK int res_spin_lock(rqspinlock_t *lock)
{
	return res_spin_inline_lock(lock);
}

static inline void res_spin_unlock(rqspinlock_t *lock)
{
	res_spin_inline_unlock(lock);
}
#endif

#endif /* RQSPINLOCK_H */
