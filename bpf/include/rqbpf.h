/* SPDX-License-Identifier: MIT */
/**
 * @file rqbpf.h
 * @brief rqbpf: load eBPF objects (clang -target bpf) and run their programs
 * in userspace on many threads, with no kernel BPF syscall.
 *
 * An object is opened from an ELF file or a memory image (parsed and linked:
 * map relocations, global data, helpers and kfuncs bound by name, .text
 * subprograms appended), then loaded (maps created, programs verified), then
 * its programs run with a context buffer, on any number of threads at once.
 * The four bpf_res_spin_lock kfuncs run on this project's rqspinlock.
 *
 * Errors: negative errno values; functions that take a struct rqbpf_error
 * also fill in a one-line message (which may be NULL when not wanted).
 * Thread safety: rqbpf_prog_run() and the map functions may be called from
 * any thread at once; open, load and close are not concurrent with anything
 * else on the same object.
 */
#ifndef RQBPF_H
#define RQBPF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this header: major, minor, patch, and as a string. */
#define RQBPF_VERSION_MAJOR 0
#define RQBPF_VERSION_MINOR 1
#define RQBPF_VERSION_PATCH 0
#define RQBPF_VERSION       "0.1.0"

/**
 * @brief The version of librqbpf the program runs with, "MAJOR.MINOR.PATCH"
 * (RQBPF_VERSION is the one it was compiled with).
 */
const char *rqbpf_version(void);

struct rqbpf_object;
struct rqbpf_prog;
struct rqbpf_map;

/** A one-line message describing the last error of a call. */
struct rqbpf_error {
	char msg[256]; /**< NUL-terminated; empty when there was no error */
};

/**
 * @brief Open and link the ELF object at @p path.
 * @return 0 and *@p out; -ENOENT/-EIO when the file cannot be read, -EINVAL
 *  for a malformed object (ELF, symbols, maps), -ENOMEM.
 *
 * A program that cannot be linked does not fail the open: its error (-ENOTSUP
 * for a construct rqbpf does not support, -EINVAL for a bad instruction or
 * relocation or a section that names no program type; the message names the
 * instruction index and what) is the program's, rqbpf_prog_error(), and is
 * returned when that program is loaded or verified, as libbpf reports such a
 * program only when it loads it. The object's other programs work.
 */
int rqbpf_object_open_file(const char *path, struct rqbpf_object **out, struct rqbpf_error *err);

/**
 * @brief As rqbpf_object_open_file(), from a memory image (copied).
 * @param name the object's name (libbpf uses it for data-section maps:
 *  "<name>.bss"); NULL means "obj".
 */
int rqbpf_object_open_mem(const void *buf, size_t size, const char *name, struct rqbpf_object **out,
                          struct rqbpf_error *err);

/** Flags for rqbpf_object_load(). */
enum rqbpf_load_flags {
	/** Skip the verifier. For tests of the runtime's own checks only. */
	RQBPF_LOAD_NO_VERIFY = 1u << 0,
};

/**
 * @brief Create the maps (data sections get their initial contents) and
 * verify every program whose autoload flag is set (by default those whose
 * section does not start with '?', as in libbpf).
 * @return 0; -EACCES when the verifier rejects a program (the message is
 *  "NAME: rejected: <verifier message> (insn <i>)"); the program's link error
 *  (-ENOTSUP or -EINVAL, the message "NAME: <rqbpf_prog_error()>") when an
 *  autoloaded program could not be linked (also one that uses a map rqbpf
 *  cannot create, a map type it lacks: "NAME: insn 4: map devs: map type
 *  devmap (14) is not supported"; such a map is never created, and the
 *  object's other programs load); -EALREADY if loaded; -ENOMEM.
 */
int rqbpf_object_load(struct rqbpf_object *obj, unsigned flags, struct rqbpf_error *err);

/** @brief Free @p obj, its programs and maps. NULL is a no-op. */
void rqbpf_object_close(struct rqbpf_object *obj);

/** @brief Number of programs in @p obj. */
size_t rqbpf_object_prog_count(const struct rqbpf_object *obj);
/** @brief Program @p i (0-based) of @p obj, or NULL. */
struct rqbpf_prog *rqbpf_object_prog(const struct rqbpf_object *obj, size_t i);
/** @brief The program whose function is named @p name, or NULL. */
struct rqbpf_prog *rqbpf_object_find_prog(const struct rqbpf_object *obj, const char *name);

/** @brief The program's function name. */
const char *rqbpf_prog_name(const struct rqbpf_prog *prog);
/** @brief The program's ELF section ("tc", "?tc", ...). */
const char *rqbpf_prog_section(const struct rqbpf_prog *prog);
/** @brief Linked instruction count (main program plus its subprograms);
 *  0 when it could not be linked. */
size_t rqbpf_prog_insn_count(const struct rqbpf_prog *prog);
/** @brief Size of the context a run of this program expects by default
 *  (sizeof(struct __sk_buff) for tc programs; 0 when the type has none). */
size_t rqbpf_prog_ctx_size(const struct rqbpf_prog *prog);
/** @brief Why @p prog could not be linked ("insn 3: unknown helper ...",
 *  "unknown program type for section 'tc/egress'"), or NULL when it was. */
const char *rqbpf_prog_error(const struct rqbpf_prog *prog);
/** @brief Choose whether rqbpf_object_load() verifies and enables @p prog. */
int rqbpf_prog_set_autoload(struct rqbpf_prog *prog, int autoload);

/**
 * @brief Run the verifier on @p prog (opened; it need not be loaded).
 * @param log NULL, or a stream for the verifier's instruction-by-instruction log.
 * @param insns_processed NULL, or where the verifier's work count goes.
 * @return 0 when accepted; -EACCES when rejected, the message being
 *  "<verifier message> (insn <i>)", followed, when the object has BTF line
 *  info, by a newline, two spaces and the instruction's source line as the
 *  kernel's log shows it ("; r = f(x); @ prog.bpf.c:12"); the program's link error (-ENOTSUP or
 *  -EINVAL, the message rqbpf_prog_error()) when it could not be linked;
 *  -EINVAL. A program whose only error is a map rqbpf cannot create is
 *  linked in full and verified: the verdict is the kernel's, though the
 *  program does not load.
 */
int rqbpf_prog_verify(const struct rqbpf_prog *prog, FILE *log, uint64_t *insns_processed,
                      struct rqbpf_error *err);

/** The outcome of one run. */
struct rqbpf_run_result {
	uint64_t retval; /**< R0 at exit */
	uint64_t insns;  /**< instructions executed (all frames) */
	char msg[160];   /**< on a fault: what, where ("insn 12: ...") */
};

/**
 * @brief Run @p prog once on the calling thread.
 *
 * Registers and stack are the caller's (on its stack), so any number of
 * threads may run the same program at once; a signal handler may run a
 * program too (a nested run). Every memory access is bounds-checked against
 * the run's stack, @p ctx and the maps' values; locks a faulting run holds
 * are released.
 * @param ctx the context buffer (R1 at entry), may be NULL when @p ctx_size is 0.
 * @return 0 when the program reached its exit (res->retval); -EFAULT when it
 *  faulted (res->msg says why), -E2BIG when it ran past the instruction limit,
 *  -EPERM when @p prog was not loaded (res->msg gives its link error, if it
 *  has one), -EINVAL for bad arguments.
 */
int rqbpf_prog_run(const struct rqbpf_prog *prog, void *ctx, size_t ctx_size,
                   struct rqbpf_run_result *res);

/**
 * Input and output of rqbpf_prog_test_run(), as the kernel's
 * BPF_PROG_TEST_RUN (libbpf's struct bpf_test_run_opts) has them.
 */
struct rqbpf_test_run_opts {
	const void *data_in; /**< the packet (tc, socket filter, cgroup_skb, xdp) */
	uint32_t data_size_in;
	void *data_out;         /**< NULL, or where the packet goes after the runs */
	uint32_t data_size_out; /**< in: data_out's size; out: the packet's size */
	const void *ctx_in;     /**< NULL, or the context to start from */
	uint32_t ctx_size_in;
	void *ctx_out;                  /**< NULL, or where the context goes after the runs */
	uint32_t ctx_size_out;          /**< in: ctx_out's size; out: the context's size */
	uint32_t repeat;                /**< runs (0: one), on the same packet and context */
	uint32_t retval;                /**< out: the last run's return value (32 bits) */
	uint32_t duration;              /**< out: mean nanoseconds per run */
	struct rqbpf_run_result result; /**< out: the last run's result (its fault) */
};

/**
 * @brief Run @p prog as BPF_PROG_TEST_RUN does: for a program type with a
 * packet (tc, socket filter, cgroup_skb: struct __sk_buff; xdp: struct
 * xdp_md), build the context from the packet and ctx_in with the kernel's
 * rules, run it with direct packet access (data, data_end, data_meta) and
 * LD_ABS/LD_IND, and give back the packet and the context the kernel gives
 * back. Any other type runs on a copy of ctx_in, zero-padded to
 * rqbpf_prog_ctx_size(), which ctx_out receives.
 *
 * Safe on any number of threads at once: each call has its own copies.
 * @return 0 when every run reached its exit; -EINVAL for input the kernel
 *  refuses (a packet shorter than an Ethernet header or longer than the
 *  kernel takes in one page, ctx_in fields the kernel requires to be zero,
 *  a packet for a type without one); -ENOSPC when data_out or ctx_out is
 *  too small (it gets what fits); a run's error (rqbpf_prog_run()) with
 *  opts->result.msg.
 */
int rqbpf_prog_test_run(const struct rqbpf_prog *prog, struct rqbpf_test_run_opts *opts);

/** What a map is. */
struct rqbpf_map_info {
	const char *name;     /**< libbpf's name ("counters", "obj.bss", ".data.A") */
	uint32_t type;        /**< BPF_MAP_TYPE_* */
	uint32_t key_size;    /**< bytes */
	uint32_t value_size;  /**< bytes */
	uint32_t max_entries; /**< capacity */
};

/** @brief Number of maps (BTF maps, then data sections) in @p obj. */
size_t rqbpf_object_map_count(const struct rqbpf_object *obj);
/** @brief Map @p i of @p obj, or NULL. */
struct rqbpf_map *rqbpf_object_map(const struct rqbpf_object *obj, size_t i);
/** @brief The map named @p name, or NULL. */
struct rqbpf_map *rqbpf_object_find_map(const struct rqbpf_object *obj, const char *name);
/** @brief Fill @p info for @p map. @return 0 or -EINVAL. */
int rqbpf_map_get_info(const struct rqbpf_map *map, struct rqbpf_map_info *info);

/**
 * @brief The number of possible CPUs of per-CPU maps (BPF_MAP_TYPE_PERCPU_ARRAY,
 * _PERCPU_HASH): each key has one value per possible CPU, a CPU being a
 * thread's registry slot (res_spin_thread_slot()), so threads whose slot is
 * below this number each have their own value. 64 by default; the
 * environment variable RQBPF_POSSIBLE_CPUS (1 to 16383) sets it, read once
 * at the first call (a map's load makes one). It stands for libbpf's
 * libbpf_num_possible_cpus(): size per-CPU buffers by it.
 */
int rqbpf_num_possible_cpus(void);

/**
 * @brief Bytes of a value buffer of the map API for @p map: value_size,
 * or for a per-CPU map rqbpf_num_possible_cpus() values of value_size
 * rounded up to 8 bytes, CPU 0's first, as bpf(2) and libbpf lay them out.
 * 0 for NULL.
 */
size_t rqbpf_map_value_bytes(const struct rqbpf_map *map);

/**
 * @brief Copy the value at @p key into @p value (value_size bytes; a
 * per-CPU map's every CPU's value, rqbpf_map_value_bytes()).
 * Needs a loaded object. A queue or a stack (key NULL) peeks: its oldest
 * or newest value; update pushes (BPF_EXIST: overwrite the oldest when
 * full, else -E2BIG); delete and get_next_key return -EINVAL, as in the
 * kernel. A ring buffer has none of these: -ENOTSUP.
 * @return 0, -ENOENT, -EINVAL, -EPERM (not loaded).
 */
int rqbpf_map_lookup(struct rqbpf_map *map, const void *key, void *value);
/** @brief Set @p key to @p value (a per-CPU map: every CPU's value, as
 *  rqbpf_map_lookup() reads them); @p flags BPF_ANY/BPF_NOEXIST/BPF_EXIST,
 *  with BPF_F_LOCK to copy under the value's bpf_spin_lock.
 *  A lock field in the value is left as it is.
 *  @return 0, -E2BIG (index out of range), -EEXIST, -ENOENT, -EINVAL (also
 *  BPF_F_LOCK without a bpf_spin_lock in the value: a bpf_res_spin_lock
 *  does not serve, as in the kernel), -EPERM. */
int rqbpf_map_update(struct rqbpf_map *map, const void *key, const void *value, uint64_t flags);
/**
 * @brief Copy the value at @p key into @p value and remove it: for a queue
 * or a stack (key NULL, as their other calls take), pop the oldest or the
 * newest value. @return 0, -ENOENT (empty: @p value zeroed), -EBUSY (the
 * map's lock failed), -ENOTSUP (another map type), -EINVAL, -EPERM.
 */
int rqbpf_map_lookup_and_delete(struct rqbpf_map *map, const void *key, void *value);
/** @brief Delete @p key. @return 0, -ENOENT, -EINVAL (arrays cannot delete), -EPERM. */
int rqbpf_map_delete(struct rqbpf_map *map, const void *key);
/**
 * @brief The key after @p key (the first key when @p key is NULL).
 * @return 0, -ENOENT after the last key, -EINVAL, -EPERM.
 */
int rqbpf_map_get_next_key(struct rqbpf_map *map, const void *key, void *next_key);

/**
 * @name Ring buffer consumer
 * Records that programs reserve and submit (bpf_ringbuf_reserve/submit,
 * bpf_ringbuf_output) into a BPF_MAP_TYPE_RINGBUF map, read in the order
 * they were reserved, as libbpf's ring_buffer__new/consume/poll read a
 * kernel ring. Discarded records are skipped.
 * @{
 */
struct rqbpf_ring_buffer;

/**
 * Called for each record: @p data, @p size bytes, valid until the call
 * returns. A negative return stops the consumption (the record counts as
 * consumed) and is returned by rqbpf_ring_buffer_consume()/_poll().
 */
typedef int (*rqbpf_ring_buffer_sample_fn)(void *ctx, void *data, size_t size);

/**
 * @brief A consumer of ring buffer @p map (of a loaded object), calling
 * @p fn with @p ctx for each record.
 * @return 0 and *@p out; -EINVAL (no map, not a ring buffer, no @p fn),
 *  -EPERM (the object is not loaded), -ENOMEM.
 */
int rqbpf_ring_buffer_new(struct rqbpf_map *map, rqbpf_ring_buffer_sample_fn fn, void *ctx,
                          struct rqbpf_ring_buffer **out);

/**
 * @brief Read every record submitted so far, in order, up to the first one
 * still reserved (a later one waits for it, as in the kernel's ring).
 * One consumer at a time per map: not from the callback.
 * @return the number of records passed to the callback (discarded ones
 *  not counted), the callback's negative return, -EBUSY when another
 *  consume of the same map is running, -EINVAL.
 */
int rqbpf_ring_buffer_consume(struct rqbpf_ring_buffer *rb);

/**
 * @brief As rqbpf_ring_buffer_consume(), waiting up to @p timeout_ms
 * milliseconds (-1: no limit, 0: no wait) for a record when there is none.
 * A submit wakes the waiting consumer when it had read everything before
 * that record (or with BPF_RB_FORCE_WAKEUP), never with BPF_RB_NO_WAKEUP,
 * as the kernel's ring wakes an epoll waiter; the wait is a futex (no
 * system call for a producer unless a consumer waits).
 * @return as rqbpf_ring_buffer_consume(); 0 when the time ran out.
 */
int rqbpf_ring_buffer_poll(struct rqbpf_ring_buffer *rb, int timeout_ms);

/** @brief Free @p rb (before the object is closed). NULL is a no-op. */
void rqbpf_ring_buffer_free(struct rqbpf_ring_buffer *rb);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* RQBPF_H */
