/* SPDX-License-Identifier: MIT */
/*
 * map_ringbuf.c: BPF_MAP_TYPE_RINGBUF as the kernel's (kernel/bpf/ringbuf.c
 * since 6.15), on rqspinlock, and its consumer (rqbpf.h's
 * rqbpf_ring_buffer_*, modelled on libbpf's ring_buffer__*).
 *
 * The data area, max_entries bytes (a power of two, a multiple of the page
 * size), is mapped twice in a row as the kernel maps it, so a record that
 * wraps past its end is still contiguous. A record is an 8-byte header
 * (length, with a busy and a discard bit; as the kernel's struct
 * bpf_ringbuf_hdr) and the data, rounded up to 8 bytes. Producers reserve
 * under the ring's res lock: it may fail (a deadlock, as a program run from
 * a signal handler that interrupted a reservation of its own thread; or a
 * timeout), and the reservation then returns NULL, as the kernel's does
 * when its raw_res_spin_lock_irqsave() fails. Commit and consume take no
 * lock. The consumer waits on a futex that a commit wakes when the
 * consumer had caught up with the committed record (or with
 * BPF_RB_FORCE_WAKEUP), never with BPF_RB_NO_WAKEUP: the kernel's rule.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rqspinlock.h>

#include "maps.h"

#define HDR_SZ         8u
#define BUSY_BIT       (1u << 31)
#define DISCARD_BIT    (1u << 30)
#define MAX_RECORD_SZ  (UINT32_MAX / 4) /* the kernel's RINGBUF_MAX_RECORD_SZ */
#define MAX_RING_BYTES (256ull << 20)   /* rqbpf's limit per map, as maps.c's */

/* Producers' fields on one cache line, the consumer's on the next. */
struct ringbuf {
	_Alignas(64) _Atomic uint64_t producer_pos;
	uint64_t pending_pos; /* under lock: the oldest record not committed */
	uint64_t mask;        /* data bytes - 1 */
	uint8_t *data;        /* the data area, mapped twice in a row */
	rqspinlock_t lock;    /* serialises reservations */
	_Alignas(64) _Atomic uint64_t consumer_pos;
	_Atomic uint32_t wake_seq; /* the consumer's futex */
	_Atomic uint32_t waiters;  /* consumers waiting on it */
	_Atomic int consuming;     /* a consume is running */
};

static struct ringbuf *ring_of(const struct rqbpf_map *m)
{
	return m->kind;
}

static _Atomic uint32_t *hdr_len(const struct ringbuf *rb, uint64_t pos)
{
	return (_Atomic uint32_t *)(void *)(rb->data + (pos & rb->mask));
}

static uint64_t rec_bytes(uint32_t len)
{
	return ((uint64_t)(len & ~(BUSY_BIT | DISCARD_BIT)) + HDR_SZ + 7) & ~7ull;
}

static void ringbuf_destroy(struct rqbpf_map *m)
{
	struct ringbuf *rb = ring_of(m);

	if (rb->data)
		munmap(rb->data, 2 * (rb->mask + 1));
	free(rb);
}

/* @p size bytes of one memory file, mapped at *@p out and right after it. */
static int map_twice(size_t size, uint8_t **out)
{
	int fd = memfd_create("rqbpf-ringbuf", MFD_CLOEXEC);
	uint8_t *area;
	int ret = 0;

	if (fd < 0)
		return -errno;
	area = ftruncate(fd, (off_t)size)
	           ? MAP_FAILED
	           : mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		ret = -errno;
	} else if (mmap(area, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	               MAP_FAILED ||
	           mmap(area + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	               MAP_FAILED) {
		ret = -errno;
		munmap(area, 2 * size);
	} else {
		*out = area;
	}
	close(fd);
	return ret;
}

static int ringbuf_create(struct rqbpf_map *m, struct rqbpf_error *err)
{
	const struct rqbpf_map_desc *d = &m->desc;
	long page = sysconf(_SC_PAGESIZE);
	struct ringbuf *rb;
	int ret;

	if (d->key_size || d->value_size || !d->max_entries ||
	    (d->max_entries & (d->max_entries - 1)) || d->max_entries % (uint32_t)page)
		return rqbpf_fail(err, -EINVAL,
		                  "map %s: a ring buffer needs key and value size 0 and "
		                  "max_entries a power of 2 and a multiple of %ld",
		                  m->name, page);
	if (d->max_entries > MAX_RING_BYTES)
		return rqbpf_fail(err, -E2BIG, "map %s: %u bytes exceed rqbpf's limit of %llu MiB",
		                  m->name, d->max_entries, MAX_RING_BYTES >> 20);
	rb = m->kind = calloc(1, sizeof(*rb));
	if (!rb)
		return rqbpf_fail(err, -ENOMEM, "out of memory");
	res_spin_lock_init(&rb->lock);
	rb->mask = d->max_entries - 1u;
	ret = map_twice(d->max_entries, &rb->data);
	return ret ? rqbpf_fail(err, ret, "map %s: cannot map the ring (%s)", m->name,
	                        strerror(-ret))
	           : 0;
}

/* The kernel's __bpf_ringbuf_reserve(). */
static void *ringbuf_reserve(struct rqbpf_map *m, uint64_t size)
{
	struct ringbuf *rb = ring_of(m);
	uint64_t len = ((size + HDR_SZ + 7) & ~7ull), cons_pos, prod_pos, pend_pos, new_prod;
	_Atomic uint32_t *hdr;

	if (size > MAX_RECORD_SZ || len > rb->mask + 1)
		return NULL;
	/* acquire: pairs with the consumer's store after it read a record;
	 * the space it freed is written below only after that read */
	cons_pos = atomic_load_explicit(&rb->consumer_pos, memory_order_acquire);
	if (res_spin_lock(&rb->lock))
		return NULL;
	pend_pos = rb->pending_pos;
	prod_pos = atomic_load_explicit(&rb->producer_pos, memory_order_relaxed);
	new_prod = prod_pos + len;
	while (pend_pos < prod_pos) {
		/* acquire: pairs with the commit's exchange of this header */
		uint32_t l = atomic_load_explicit(hdr_len(rb, pend_pos), memory_order_acquire);

		if (l & BUSY_BIT)
			break;
		pend_pos += rec_bytes(l);
	}
	rb->pending_pos = pend_pos;
	if (new_prod - cons_pos > rb->mask || new_prod - pend_pos > rb->mask) {
		res_spin_unlock(&rb->lock);
		return NULL;
	}
	hdr = hdr_len(rb, prod_pos);
	atomic_store_explicit(hdr, (uint32_t)size | BUSY_BIT, memory_order_relaxed);
	memset((uint8_t *)hdr + 4, 0, 4); /* the kernel's pg_off: unused here */
	/* release: pairs with the consumer's acquire load of producer_pos;
	 * the busy header is written first */
	atomic_store_explicit(&rb->producer_pos, new_prod, memory_order_release);
	res_spin_unlock(&rb->lock);
	return (uint8_t *)hdr + HDR_SZ;
}

static void wake_consumer(struct ringbuf *rb)
{
	/* seq_cst with the consumer's waiters increment: either it sees the
	 * new sequence number or this sees it waiting */
	atomic_fetch_add(&rb->wake_seq, 1);
	if (atomic_load(&rb->waiters))
		syscall(SYS_futex, &rb->wake_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The kernel's bpf_ringbuf_commit(). */
static void ringbuf_commit(struct rqbpf_map *m, void *rec, uint64_t flags, bool discard)
{
	struct ringbuf *rb = ring_of(m);
	_Atomic uint32_t *hdr = (_Atomic uint32_t *)(void *)((uint8_t *)rec - HDR_SZ);
	uint64_t rec_pos = (uint64_t)((uint8_t *)hdr - rb->data) & rb->mask, cons_pos;
	uint32_t len = atomic_load_explicit(hdr, memory_order_relaxed) ^ BUSY_BIT;

	if (discard)
		len |= DISCARD_BIT;
	/* seq_cst: publishes the record to the consumer (its acquire load of
	 * the header), and with the consumer_pos load below against the
	 * consumer's store of it and load of this header (seq_cst both): one
	 * of the two sees the other, so a caught-up consumer is woken */
	atomic_exchange(hdr, len);
	cons_pos = atomic_load(&rb->consumer_pos) & rb->mask;
	if ((flags & BPF_RB_FORCE_WAKEUP) || (cons_pos == rec_pos && !(flags & BPF_RB_NO_WAKEUP)))
		wake_consumer(rb);
}

/* The kernel's bpf_ringbuf_query(). */
static uint64_t ringbuf_query(struct rqbpf_map *m, uint64_t flags)
{
	struct ringbuf *rb = ring_of(m);
	/* acquire: as the kernel's smp_load_acquire() of both positions */
	uint64_t cons = atomic_load_explicit(&rb->consumer_pos, memory_order_acquire);
	uint64_t prod = atomic_load_explicit(&rb->producer_pos, memory_order_acquire);

	switch (flags) {
	case BPF_RB_AVAIL_DATA:
		return prod - cons;
	case BPF_RB_RING_SIZE:
		return rb->mask + 1;
	case BPF_RB_CONS_POS:
		return cons;
	case BPF_RB_PROD_POS:
		return prod;
	default:
		return 0;
	}
}

/* No element API, as the kernel's (which returns -ENOTSUPP). */
static void *ringbuf_lookup_value(struct rqbpf_map *m, const void *key)
{
	(void)m;
	(void)key;
	return NULL;
}

static int ringbuf_lookup(struct rqbpf_map *m, const void *key, void *value)
{
	(void)m;
	(void)key;
	(void)value;
	return -ENOTSUP;
}

static int ringbuf_update(struct rqbpf_map *m, const void *key, const void *value, uint64_t flags)
{
	(void)value;
	(void)flags;
	return ringbuf_lookup(m, key, NULL);
}

static int ringbuf_delete(struct rqbpf_map *m, const void *key)
{
	return ringbuf_lookup(m, key, NULL);
}

static int ringbuf_next_key(struct rqbpf_map *m, const void *key, void *next_key)
{
	(void)next_key;
	return ringbuf_lookup(m, key, NULL);
}

/* Records are the run's (runtime.c finds them), not values. */
static bool ringbuf_value_at(const struct rqbpf_map *m, uintptr_t addr, struct rqbpf_region *out)
{
	(void)m;
	(void)addr;
	(void)out;
	return false;
}

const struct rqbpf_map_ops rqbpf_ringbuf_map_ops = {
    .type = BPF_MAP_TYPE_RINGBUF,
    .indexed = false,
    .rcu = false,
    .create = ringbuf_create,
    .destroy = ringbuf_destroy,
    .lookup_value = ringbuf_lookup_value,
    .lookup = ringbuf_lookup,
    .update = ringbuf_update,
    .delete = ringbuf_delete,
    .next_key = ringbuf_next_key,
    .value_at = ringbuf_value_at,
    .reserve = ringbuf_reserve,
    .commit = ringbuf_commit,
    .query = ringbuf_query,
};

/* --- the consumer (rqbpf.h) ------------------------------------------- */

struct rqbpf_ring_buffer {
	struct rqbpf_map *map;
	struct ringbuf *rb;
	rqbpf_ring_buffer_sample_fn fn;
	void *ctx;
};

int rqbpf_ring_buffer_new(struct rqbpf_map *map, rqbpf_ring_buffer_sample_fn fn, void *ctx,
                          struct rqbpf_ring_buffer **out)
{
	struct rqbpf_ring_buffer *c;

	if (!map || !fn || !out || map->desc.type != BPF_MAP_TYPE_RINGBUF)
		return -EINVAL;
	if (!map->kind)
		return -EPERM;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct rqbpf_ring_buffer){map, ring_of(map), fn, ctx};
	*out = c;
	return 0;
}

void rqbpf_ring_buffer_free(struct rqbpf_ring_buffer *c)
{
	free(c);
}

/* libbpf's ringbuf_process_ring(): every committed record in order, the
 * discarded ones skipped, up to the first busy one. */
static int64_t consume_ring(struct rqbpf_ring_buffer *c)
{
	struct ringbuf *rb = c->rb;
	/* relaxed: only consumers write it, one at a time (consuming) */
	uint64_t cons = atomic_load_explicit(&rb->consumer_pos, memory_order_relaxed), prod;
	int64_t cnt = 0;
	bool got;

	do {
		got = false;
		/* acquire: pairs with the reservation's release store; the
		 * busy header of every record below it is visible */
		prod = atomic_load_explicit(&rb->producer_pos, memory_order_acquire);
		while (cons < prod) {
			/* seq_cst: pairs with the commit's exchange (the record's
			 * bytes), and orders against its consumer_pos load */
			uint32_t len = atomic_load(hdr_len(rb, cons));
			int err;

			if (len & BUSY_BIT)
				return cnt;
			got = true;
			err = len & DISCARD_BIT
			          ? 0
			          : c->fn(c->ctx, rb->data + (cons & rb->mask) + HDR_SZ,
			                  len & ~DISCARD_BIT);
			cons += rec_bytes(len);
			/* seq_cst: releases the record's space to the producers
			 * (their acquire load) after the callback read it, and
			 * against the commit's loads (wake-up) */
			atomic_store(&rb->consumer_pos, cons);
			if (err < 0)
				return err;
			cnt += !(len & DISCARD_BIT);
		}
	} while (got);
	return cnt;
}

int rqbpf_ring_buffer_consume(struct rqbpf_ring_buffer *c)
{
	int64_t n;

	if (!c)
		return -EINVAL;
	/* acquire: pairs with the release below of the previous consumer */
	if (atomic_exchange_explicit(&c->rb->consuming, 1, memory_order_acquire))
		return -EBUSY;
	n = consume_ring(c);
	/* release: this consume's consumer_pos stores before the next one */
	atomic_store_explicit(&c->rb->consuming, 0, memory_order_release);
	return n > INT_MAX ? INT_MAX : (int)n;
}

int rqbpf_ring_buffer_poll(struct rqbpf_ring_buffer *c, int timeout_ms)
{
	struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
	uint32_t seq;
	int n;

	if (!c)
		return -EINVAL;
	/* acquire: a wake-up after this load changes it */
	seq = atomic_load_explicit(&c->rb->wake_seq, memory_order_acquire);
	n = rqbpf_ring_buffer_consume(c);
	if (n || timeout_ms == 0)
		return n;
	/* seq_cst: against the commit's wake_seq increment and waiters load */
	atomic_fetch_add(&c->rb->waiters, 1);
	if (atomic_load(&c->rb->wake_seq) == seq)
		syscall(SYS_futex, &c->rb->wake_seq, FUTEX_WAIT_PRIVATE, seq,
		        timeout_ms < 0 ? NULL : &ts, NULL, 0);
	atomic_fetch_sub_explicit(&c->rb->waiters, 1, memory_order_relaxed); /* done waiting */
	return rqbpf_ring_buffer_consume(c);
}
