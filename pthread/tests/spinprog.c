/* SPDX-License-Identifier: MIT */
/*
 * An ordinary pthread program: it includes no rqspinlock header and links
 * only against libc/libpthread. run_case.sh runs it with and without
 * LD_PRELOAD=librqspinlock-pthread.so (and linked against the drop-in).
 *
 * usage: spinprog CASE | --list
 *   basic   counter under a lock from 8 threads, trylock EBUSY, init/destroy 0
 *   aa      lock a lock twice                              (drop-in: EDEADLK)
 *   abba    16 threads, 8 ABBA pairs, all meeting at once  (drop-in: EDEADLK,
 *           the loser backs off and retries; everyone finishes)
 *   exit    a thread exits holding the lock; main locks it (ETIMEDOUT)
 *   longhold another thread releases after 700 ms: with a larger timeout
 *           (RQSPINLOCK_PTHREAD_TIMEOUT_MS) the wait succeeds
 *   signal  a signal handler locks the lock its thread holds (EDEADLK)
 *   fork    process-shared lock in a shared file mapping: parent and a child
 *           count under it; a second process maps the file without calling
 *           init and counts too; a child killed holding it    (ETIMEDOUT)
 *   atfork  pthread_atfork handlers lock the lock before fork() and unlock
 *           it after, while 4 threads queue on it; in each child 4 new
 *           threads count under it: every lock call succeeds
 *   freed   a worker pool releases each object's memory after its last
 *           use while others wait behind it: every lock call succeeds
 * Exit status 0 when every result is the drop-in's documented one. With
 * glibc the deadlocking cases never return: the driver's watchdog kills them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rqu_clock.h"

#define NR_THREADS 16
#define NR_PAIRS   (NR_THREADS / 2)

/* The last line before a call that deadlocks on glibc: the driver checks
 * that the watchdog found the program waiting exactly there. */
static void announce(const char *what)
{
	printf("waiting: %s\n", what);
}

static int expect(const char *what, int got, int want)
{
	printf("%s: %s (want %s)\n", what, got ? strerror(got) : "0", want ? strerror(want) : "0");
	return got == want ? 0 : 1;
}

/* ---- basic ---- */
static pthread_spinlock_t basic_lock;
static long basic_count;

static void *basic_worker(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		if (pthread_spin_lock(&basic_lock))
			abort();
		basic_count++;
		pthread_spin_unlock(&basic_lock);
	}
	return arg;
}

static int case_basic(void)
{
	pthread_t th[8];
	int bad = expect("init", pthread_spin_init(&basic_lock, PTHREAD_PROCESS_PRIVATE), 0);

	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, basic_worker, NULL);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	printf("count %ld (want %ld)\n", basic_count, 8L * 20000);
	bad |= basic_count != 8L * 20000;
	bad |= expect("trylock free", pthread_spin_trylock(&basic_lock), 0);
	bad |= expect("trylock held", pthread_spin_trylock(&basic_lock), EBUSY);
	bad |= expect("unlock", pthread_spin_unlock(&basic_lock), 0);
	bad |= expect("destroy", pthread_spin_destroy(&basic_lock), 0);
	return bad;
}

/* ---- aa ---- */
static int case_aa(void)
{
	pthread_spinlock_t l;
	int bad;

	pthread_spin_init(&l, PTHREAD_PROCESS_PRIVATE);
	bad = expect("lock", pthread_spin_lock(&l), 0);
	announce("lock again");
	bad |= expect("lock again", pthread_spin_lock(&l), EDEADLK);
	bad |= expect("unlock", pthread_spin_unlock(&l), 0);
	bad |= expect("lock after", pthread_spin_lock(&l), 0);
	pthread_spin_unlock(&l);
	return bad;
}

/* ---- abba ---- */
static pthread_spinlock_t pair_lock[NR_PAIRS][2];
static pthread_barrier_t abba_barrier;
static int abba_deadlocks[NR_THREADS], abba_other[NR_THREADS];

static void *abba_worker(void *arg)
{
	int id = (int)(long)arg, pair = id / 2, first = id % 2;
	pthread_spinlock_t *a = &pair_lock[pair][first], *b = &pair_lock[pair][!first];
	int round = 0;

	for (;;) {
		int err;

		if (pthread_spin_lock(a))
			abort();
		/* nonzero for one thread: PTHREAD_BARRIER_SERIAL_THREAD */
		if (round++ == 0 && pthread_barrier_wait(&abba_barrier) != 0)
			announce("ABBA, every thread holding its first lock");
		err = pthread_spin_lock(b);
		if (!err) {
			pthread_spin_unlock(b);
			pthread_spin_unlock(a);
			return NULL;
		}
		if (err == EDEADLK)
			abba_deadlocks[id]++;
		else
			abba_other[id]++;
		pthread_spin_unlock(a);
		usleep(1000 * (unsigned)(id % 2 + 1)); /* back off, then retry */
	}
}

static int case_abba(void)
{
	pthread_t th[NR_THREADS];
	int deadlocks = 0, other = 0;

	for (int p = 0; p < NR_PAIRS; p++)
		for (int i = 0; i < 2; i++)
			pthread_spin_init(&pair_lock[p][i], PTHREAD_PROCESS_PRIVATE);
	pthread_barrier_init(&abba_barrier, NULL, NR_THREADS);
	for (long i = 0; i < NR_THREADS; i++)
		pthread_create(&th[i], NULL, abba_worker, (void *)i);
	for (int i = 0; i < NR_THREADS; i++) {
		pthread_join(th[i], NULL);
		deadlocks += abba_deadlocks[i];
		other += abba_other[i];
	}
	printf("abba: all %d threads done, EDEADLK %d times, other errors %d\n", NR_THREADS,
	       deadlocks, other);
	return deadlocks >= NR_PAIRS && other == 0 ? 0 : 1;
}

/* ---- exit ---- */
static pthread_spinlock_t exit_lock;

static void *exit_holding(void *arg)
{
	pthread_spin_lock(&exit_lock);
	return arg; /* exits holding it */
}

static int case_exit(void)
{
	pthread_t th;

	pthread_spin_init(&exit_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_create(&th, NULL, exit_holding, NULL);
	pthread_join(th, NULL);
	announce("lock held by an exited thread");
	return expect("lock held by an exited thread", pthread_spin_lock(&exit_lock), ETIMEDOUT);
}

/* ---- longhold: a slow owner, not a deadlock ---- */
static pthread_spinlock_t slow_lock;
static pthread_barrier_t slow_taken;

static void *slow_owner(void *arg)
{
	pthread_spin_lock(&slow_lock);
	pthread_barrier_wait(&slow_taken);
	usleep(700 * 1000); /* longer than the default timeout, twice over */
	pthread_spin_unlock(&slow_lock);
	return arg;
}

/* Run with RQSPINLOCK_PTHREAD_TIMEOUT_MS above the hold: the wait succeeds. */
static int case_longhold(void)
{
	pthread_t th;
	int err;

	pthread_spin_init(&slow_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_barrier_init(&slow_taken, NULL, 2);
	pthread_create(&th, NULL, slow_owner, NULL);
	pthread_barrier_wait(&slow_taken);
	err = pthread_spin_lock(&slow_lock);
	if (!err)
		pthread_spin_unlock(&slow_lock);
	pthread_join(th, NULL);
	return expect("lock held 700 ms by a slow owner", err, 0);
}

/* ---- signal ---- */
static pthread_spinlock_t sig_lock;
static volatile sig_atomic_t sig_result = -1;

static void handler(int sig)
{
	int err = pthread_spin_lock(&sig_lock);

	(void)sig;
	if (!err)
		pthread_spin_unlock(&sig_lock);
	sig_result = err;
}

static int case_signal(void)
{
	struct sigaction sa;
	int bad;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_spin_init(&sig_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_lock(&sig_lock);
	announce("lock from a handler, lock held");
	raise(SIGUSR1);
	bad = expect("lock from a handler, lock held", sig_result, EDEADLK);
	pthread_spin_unlock(&sig_lock);
	raise(SIGUSR1);
	bad |= expect("lock from a handler, lock free", sig_result, 0);
	return bad;
}

/* ---- fork ---- */
struct shared_area {
	pthread_spinlock_t lock;
	long count;
};

#define FORK_ITERS   10000
#define FORK_THREADS 4 /* per process: waiters would queue, were they allowed to */

static void *count_thread(void *arg)
{
	struct shared_area *s = arg;

	for (int i = 0; i < FORK_ITERS; i++) {
		int err = pthread_spin_lock(&s->lock);

		if (err) {
			fprintf(stderr, "pid %d: pthread_spin_lock: %s\n", (int)getpid(),
			        strerror(err));
			_exit(3);
		}
		/* a non-atomic read-modify-write with a window: lost updates
		 * show any breach of mutual exclusion */
		long c = s->count;

		for (volatile int k = 0; k < 50; k++)
			;
		s->count = c + 1;
		pthread_spin_unlock(&s->lock);
	}
	return NULL;
}

static void count_under_lock(struct shared_area *s)
{
	pthread_t th[FORK_THREADS];

	for (int i = 0; i < FORK_THREADS; i++)
		pthread_create(&th[i], NULL, count_thread, s);
	for (int i = 0; i < FORK_THREADS; i++)
		pthread_join(th[i], NULL);
}

static struct shared_area *map_area(const char *path)
{
	int fd = open(path, O_RDWR);
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(NULL, sizeof(struct shared_area), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static int wait_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A separate program image maps the file and uses the lock, no init. */
static int case_fork_mapper(const char *path)
{
	struct shared_area *s = map_area(path);

	if (!s)
		return 2;
	count_under_lock(s);
	return 0;
}

static int case_fork(const char *self)
{
	char path[] = "/tmp/spinprog-XXXXXX";
	int fd = mkstemp(path), bad = 0, ready[2];
	struct shared_area *s;
	pid_t counter, mapper, holder;
	char c;

	if (fd < 0 || ftruncate(fd, sizeof(*s)) || pipe(ready))
		return 2;
	close(fd);
	s = map_area(path);
	if (!s)
		return 2;
	bad |= expect("init shared", pthread_spin_init(&s->lock, PTHREAD_PROCESS_SHARED), 0);
	counter = fork();
	if (counter == 0) {
		count_under_lock(s);
		_exit(0);
	}
	mapper = fork();
	if (mapper == 0) {
		execl(self, self, "fork-mapper", path, (char *)NULL);
		_exit(4);
	}
	count_under_lock(s);
	bad |= !wait_ok(counter) || !wait_ok(mapper);
	printf("count %ld (want %ld)\n", s->count, 3L * FORK_THREADS * FORK_ITERS);
	bad |= s->count != 3L * FORK_THREADS * FORK_ITERS;

	holder = fork();
	if (holder == 0) {
		pthread_spin_lock(&s->lock);
		(void)!write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		return 2;
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	announce("lock held by a killed process");
	bad |= expect("lock held by a killed process", pthread_spin_lock(&s->lock), ETIMEDOUT);
	bad |= expect("trylock held by a killed process", pthread_spin_trylock(&s->lock), EBUSY);
	unlink(path);
	return bad;
}

/* ---- atfork: the lock handlers guard fork() with, while threads queue ---- */
#define ATFORK_THREADS 4 /* the child's threads reuse the parent's ones' slots */
#define ATFORK_FORKS   8
#define ATFORK_ITERS   1000

static pthread_spinlock_t af_lock, af_reg[ATFORK_THREADS];
static pthread_barrier_t af_ready;
static atomic_int af_stop;
static volatile long af_count;

static void af_prepare(void)
{
	if (pthread_spin_lock(&af_lock))
		abort();
	usleep(20 * 1000); /* the other threads queue behind us */
}

static void af_release(void)
{
	pthread_spin_unlock(&af_lock);
}

static void *af_hammer(void *arg)
{
	while (!atomic_load_explicit(&af_stop, memory_order_relaxed))
		if (!pthread_spin_lock(&af_lock))
			pthread_spin_unlock(&af_lock);
	return arg;
}

static void *af_child_thread(void *arg)
{
	pthread_spinlock_t *reg = &af_reg[(long)arg];

	/* A first call (any lock) gives the thread its identity before the
	 * others queue. */
	if (!pthread_spin_trylock(reg))
		pthread_spin_unlock(reg);
	pthread_barrier_wait(&af_ready);
	for (int i = 0; i < ATFORK_ITERS; i++) {
		int err = pthread_spin_lock(&af_lock);

		if (err) {
			printf("child %d: pthread_spin_lock: %s (want 0)\n", (int)getpid(),
			       strerror(err));
			_exit(3);
		}
		long c = af_count;

		af_count = c + 1;
		pthread_spin_unlock(&af_lock);
	}
	return NULL;
}

static int case_atfork(void)
{
	pthread_t th[ATFORK_THREADS];
	int bad = 0;

	pthread_spin_init(&af_lock, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < ATFORK_THREADS; i++)
		pthread_spin_init(&af_reg[i], PTHREAD_PROCESS_PRIVATE);
	/* main first: the hammers' identities are the next ones */
	pthread_spin_lock(&af_lock);
	pthread_spin_unlock(&af_lock);
	pthread_atfork(af_prepare, af_release, af_release);
	for (int i = 0; i < ATFORK_THREADS; i++)
		pthread_create(&th[i], NULL, af_hammer, NULL);
	for (int f = 0; f < ATFORK_FORKS; f++) {
		pid_t pid = fork();

		if (pid == 0) {
			pthread_t ct[ATFORK_THREADS];

			pthread_barrier_init(&af_ready, NULL, ATFORK_THREADS);
			for (int i = 0; i < ATFORK_THREADS; i++)
				pthread_create(&ct[i], NULL, af_child_thread, (void *)(long)i);
			for (int i = 0; i < ATFORK_THREADS; i++)
				pthread_join(ct[i], NULL);
			_exit(af_count == (long)ATFORK_THREADS * ATFORK_ITERS ? 0 : 4);
		}
		bad |= pid < 0 || !wait_ok(pid);
	}
	atomic_store_explicit(&af_stop, 1, memory_order_relaxed);
	for (int i = 0; i < ATFORK_THREADS; i++)
		pthread_join(th[i], NULL);
	return expect("children locking a lock their atfork handler released", bad ? EIO : 0, 0);
}

#ifdef RQ_SANITIZE_THREAD
#define SPINPROG_TSAN_BUILD 1
#else
#define SPINPROG_TSAN_BUILD 0
#endif

/*
 * ---- freed: object locks released after their last use ----
 * A worker pool (the shape of test_freed.c in the core suite): a worker
 * locks the table lock, then an object's lock, which a second thread holds
 * for a moment; it unlocks both and at once makes the object's page
 * inaccessible (its memory is gone). Two threads each lock a private lock,
 * then the table lock, behind the worker. 4000 idle threads that locked
 * once take the first registry slots. Correct on glibc; the drop-in must
 * never read the object's lock after the worker released it.
 */
#if SPINPROG_TSAN_BUILD
#define FREED_IDLE 300 /* ThreadSanitizer keeps a few thousand threads at most */
#else
#define FREED_IDLE 4000
#endif
#define FREED_PAGES 8
#define FREED_MS    2000

static struct {
	pthread_spinlock_t table;
	char *pages;
	long page;
	_Atomic(pthread_spinlock_t *) obj;
	atomic_int round, phase, queued, stop, bad;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int idle_ready, idle_go;
	int rounds; /* the worker's */
} fr = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *freed_idle(void *arg)
{
	pthread_spinlock_t mine;

	(void)arg;
	pthread_spin_init(&mine, PTHREAD_PROCESS_PRIVATE);
	if (pthread_spin_lock(&mine) || pthread_spin_unlock(&mine))
		atomic_store(&fr.bad, 1);
	pthread_mutex_lock(&fr.mu);
	fr.idle_ready++;
	while (!fr.idle_go)
		pthread_cond_wait(&fr.cv, &fr.mu);
	pthread_mutex_unlock(&fr.mu);
	return NULL;
}

/* Spin (yielding now and then) until @p phase or the end. */
static void freed_until(int phase)
{
	for (unsigned i = 0; atomic_load(&fr.phase) < phase && !atomic_load(&fr.stop); i++)
		if (i % 64 == 63)
			sched_yield();
}

/* Both waiters called lock on the table lock and, under the drop-in, wait
 * (the word read for observation only: an int on glibc, never so). */
static int freed_table_waited(void)
{
	unsigned w = (unsigned)__atomic_load_n(&fr.table, __ATOMIC_RELAXED);

	return atomic_load(&fr.queued) >= 2 && (w >> 8 & 0xffu) && (w >> 16);
}

static void *freed_holder(void *arg)
{
	int seen = 0;

	(void)arg;
	while (!atomic_load(&fr.stop)) {
		pthread_spinlock_t *o;
		uint64_t t0, t;

		if (atomic_load(&fr.round) == seen) {
			sched_yield();
			continue;
		}
		seen++;
		o = atomic_load(&fr.obj);
		if (pthread_spin_lock(o))
			atomic_store(&fr.bad, 1);
		atomic_store(&fr.phase, 1);
		/* until both waiters wait for the table lock (2 ms at most;
		 * under the drop-in the word shows one holding its pending
		 * byte and the other its queue's tail), then 3 us more */
		t0 = rqu_now_ns();
		do {
			sched_yield();
			t = rqu_now_ns();
		} while (!freed_table_waited() && !atomic_load(&fr.stop) && t - t0 < 2000000);
		do
			t0 = rqu_now_ns();
		while (t0 - t < 3000);
		pthread_spin_unlock(o);
	}
	return NULL;
}

static void *freed_waiter(void *arg)
{
	pthread_spinlock_t mine;
	int seen = 0;

	(void)arg;
	pthread_spin_init(&mine, PTHREAD_PROCESS_PRIVATE);
	while (!atomic_load(&fr.stop)) {
		if (atomic_load(&fr.round) == seen) {
			sched_yield();
			continue;
		}
		seen++;
		freed_until(2);
		if (pthread_spin_lock(&mine))
			atomic_store(&fr.bad, 1);
		atomic_fetch_add(&fr.queued, 1);
		if (pthread_spin_lock(&fr.table))
			atomic_store(&fr.bad, 1);
		else
			pthread_spin_unlock(&fr.table);
		pthread_spin_unlock(&mine);
		atomic_fetch_add(&fr.queued, 1);
	}
	return NULL;
}

static int freed_round(int round)
{
	char *page = fr.pages + (round % FREED_PAGES) * fr.page;
	pthread_spinlock_t *o = (pthread_spinlock_t *)(void *)page;

	if (mprotect(page, (size_t)fr.page, PROT_READ | PROT_WRITE))
		return 1;
	pthread_spin_init(o, PTHREAD_PROCESS_PRIVATE);
	atomic_store(&fr.queued, 0);
	atomic_store(&fr.phase, 0);
	atomic_store(&fr.obj, o);
	atomic_store(&fr.round, round + 1);
	freed_until(1);
	if (pthread_spin_lock(&fr.table))
		return 1;
	atomic_store(&fr.phase, 2);
	if (pthread_spin_lock(o)) /* waits, holding the table lock */
		return 1;
	pthread_spin_unlock(o);
	pthread_spin_unlock(&fr.table);
	if (mprotect(page, (size_t)fr.page, PROT_NONE)) /* its last use is over */
		return 1;
	while (atomic_load(&fr.queued) < 4)
		sched_yield();
	return 0;
}

/* The worker: a thread of its own, which locks first after the idle ones
 * (the main thread may have a registry slot from before). */
static void *freed_worker(void *arg)
{
	uint64_t t0 = rqu_now_ns(), t;
	int bad = 0;

	(void)arg;
	do {
		bad |= freed_round(fr.rounds++);
		t = rqu_now_ns();
	} while (!bad && t - t0 < (uint64_t)FREED_MS * 1000000);
	if (bad)
		atomic_store(&fr.bad, 1);
	atomic_store(&fr.stop, 1);
	return NULL;
}

static int case_freed(void)
{
	static pthread_t idle[FREED_IDLE];
	pthread_t holder, worker, waiters[2];
	pthread_attr_t small;

	fr.page = sysconf(_SC_PAGESIZE);
	fr.pages = mmap(NULL, (size_t)(FREED_PAGES * fr.page), PROT_NONE,
	                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fr.pages == MAP_FAILED)
		return expect("mmap", errno, 0);
	pthread_spin_init(&fr.table, PTHREAD_PROCESS_PRIVATE);
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, (size_t)128 * 1024);
	for (int i = 0; i < FREED_IDLE; i++)
		if (pthread_create(&idle[i], &small, freed_idle, NULL))
			return expect("pthread_create", EAGAIN, 0);
	for (int ready = 0; ready < FREED_IDLE; usleep(1000)) {
		pthread_mutex_lock(&fr.mu);
		ready = fr.idle_ready;
		pthread_mutex_unlock(&fr.mu);
	}
	pthread_create(&holder, NULL, freed_holder, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&waiters[i], NULL, freed_waiter, NULL);
	pthread_create(&worker, NULL, freed_worker, NULL);
	pthread_join(worker, NULL);
	pthread_join(holder, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(waiters[i], NULL);
	pthread_mutex_lock(&fr.mu);
	fr.idle_go = 1;
	pthread_cond_broadcast(&fr.cv);
	pthread_mutex_unlock(&fr.mu);
	for (int i = 0; i < FREED_IDLE; i++)
		pthread_join(idle[i], NULL);
	printf("freed: %d rounds\n", fr.rounds);
	return expect("every lock call on objects released after their last use",
	              atomic_load(&fr.bad) ? EIO : 0, 0);
}

static const char *self_path; /* argv[0], for the fork case's second process */

static int case_fork_self(void)
{
	return case_fork(self_path);
}

/*
 * The cases, and what CTest registers: `spinprog --list` prints one line
 * per case, its name and the environment its runs need (VAR=value ...);
 * pthread/tests/CMakeLists.txt reads that listing after the build.
 */
/* ThreadSanitizer does not support starting threads in the child of a
 * multi-threaded fork(), which "atfork" does: TSan builds do not list it. */
#ifdef RQ_SANITIZE_THREAD
#define SPINPROG_TSAN 1
#else
#define SPINPROG_TSAN 0
#endif

static const struct {
	const char *name;
	int (*run)(void);
	const char *env;
} cases[] = {
    {"basic", case_basic, ""},
    {"aa", case_aa, ""},
    {"abba", case_abba, ""},
    {"exit", case_exit, ""},
    /* a slow owner is not a deadlock: with a timeout above its hold, no error */
    {"longhold", case_longhold, "RQSPINLOCK_PTHREAD_TIMEOUT_MS=10000"},
    {"signal", case_signal, ""},
    {"fork", case_fork_self, ""},
    {"atfork", case_atfork, ""},
    {"freed", case_freed, ""},
};

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	const size_t n = sizeof(cases) / sizeof(cases[0]);

	self_path = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(c, "--list")) {
		for (size_t i = 0; i < n; i++)
			if (!SPINPROG_TSAN || cases[i].run != case_atfork)
				printf("%s%s%s\n", cases[i].name, *cases[i].env ? " " : "",
				       cases[i].env);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(c, cases[i].name))
			return cases[i].run();
	if (!strcmp(c, "fork-mapper") && argc > 2)
		return case_fork_mapper(argv[2]);
	fprintf(stderr, "usage: %s CASE | --list (the cases and their environment)\n", argv[0]);
	return 2;
}
