/* SPDX-License-Identifier: MIT */
/*
 * Ring buffers (progs/ringbuf.bpf.c): producers on 8 threads against one
 * consumer, every record once and in reservation order per producer; a
 * small ring filled until it overflows, with discarded records skipped by
 * the consumer; the consumer API's errors; a record left reserved by a run
 * the verifier did not check is discarded at its end.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bpftest.h"

#define PRODUCERS 8

struct event {
	uint32_t producer;
	uint32_t seq;
	uint64_t check;
};

struct mt {
	struct rqbpf_object *obj;
	long per_producer;
	uint32_t next[PRODUCERS]; /* the consumer's: next seq expected */
	long seen, bad;
	atomic_int producing;
};

struct producer {
	struct mt *mt;
	uint32_t id;
	long full; /* runs that found the ring full */
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct rqbpf_prog *prog = bt_prog(p->mt->obj, "produce");

	for (uint32_t seq = 0; seq < (uint32_t)p->mt->per_producer;) {
		struct __sk_buff ctx = {.cb = {p->id, seq}};
		struct rqbpf_run_result res;

		if (rqbpf_prog_run(prog, &ctx, sizeof(ctx), &res) || res.retval > 1)
			tu_fail(__FILE__, __LINE__, "produce: %s", res.msg);
		if (res.retval == 0) {
			seq++;
		} else {
			p->full++;
			sched_yield();
		}
	}
	atomic_fetch_sub(&p->mt->producing, 1);
	return NULL;
}

static int check_event(void *ctx, void *data, size_t size)
{
	struct mt *mt = ctx;
	struct event e;

	if (size != sizeof(e)) {
		mt->bad++;
		return 0;
	}
	memcpy(&e, data, sizeof(e));
	if (e.producer >= PRODUCERS || e.seq != mt->next[e.producer] ||
	    e.check != (((uint64_t)e.producer << 32 | e.seq) ^ 0x5a5a5a5a5a5a5a5aull))
		mt->bad++;
	else
		mt->next[e.producer]++;
	mt->seen++;
	return 0;
}

static void test_ringbuf_threads(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct mt mt = {.per_producer = tu_scaled(20000)};
		struct producer p[PRODUCERS];
		pthread_t t[PRODUCERS];
		struct rqbpf_ring_buffer *rb;
		long full = 0;

		mt.obj = bt_load("ringbuf", *cc, 0);
		if (!mt.obj)
			continue;
		CHECK_EQ(rqbpf_ring_buffer_new(rqbpf_object_find_map(mt.obj, "events"), check_event,
		                               &mt, &rb),
		         0);
		atomic_store(&mt.producing, PRODUCERS);
		for (uint32_t i = 0; i < PRODUCERS; i++) {
			p[i] = (struct producer){&mt, i, 0};
			CHECK_EQ(pthread_create(&t[i], NULL, produce, &p[i]), 0);
		}
		while (atomic_load(&mt.producing) > 0)
			CHECK(rqbpf_ring_buffer_poll(rb, 100) >= 0);
		for (int i = 0; i < PRODUCERS; i++) {
			CHECK_EQ(pthread_join(t[i], NULL), 0);
			full += p[i].full;
		}
		CHECK(rqbpf_ring_buffer_consume(rb) >= 0);
		printf("# %s: %ld records from %d producers, %ld runs found the ring full\n", *cc,
		       mt.seen, PRODUCERS, full);
		CHECK_EQ(mt.bad, 0);
		CHECK_EQ(mt.seen, PRODUCERS * mt.per_producer);
		for (int i = 0; i < PRODUCERS; i++)
			CHECK_EQ(mt.next[i], (uint32_t)mt.per_producer);
		rqbpf_ring_buffer_free(rb);
		rqbpf_object_close(mt.obj);
	}
}

struct collected {
	uint64_t v[1024];
	int n;
	int stop_after; /* return -7 from this record on; 0: never */
};

static int collect(void *ctx, void *data, size_t size)
{
	struct collected *c = ctx;

	CHECK_EQ(size, 8);
	memcpy(&c->v[c->n++], data, 8);
	return c->stop_after && c->n >= c->stop_after ? -7 : 0;
}

/* 4096 bytes hold 255 records of 8 bytes (16 with the header) as in the
 * kernel: the producer may not reach the consumer's position. */
static void test_ringbuf_overflow(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_load("ringbuf", *cc, 0);
		struct collected c = {.stop_after = 10};
		struct rqbpf_ring_buffer *rb;
		int kept = 0;

		if (!obj)
			continue;
		CHECK_EQ(bt_run(obj, "reserve_flags"), 0);
		CHECK_EQ(bt_run(obj, "reserve_too_big"), 0);
		CHECK_EQ(bt_run(obj, "fill"), 255);
		CHECK_EQ(bt_run(obj, "avail"), 255 * 16);
		CHECK_EQ(bt_run(obj, "positions"), 255 * 16 * 10000 + 1);
		CHECK_EQ(bt_run(obj, "output_full"), -EAGAIN);
		CHECK_EQ(bt_run(obj, "output_bad_flags"), -EINVAL);
		CHECK_EQ(
		    rqbpf_ring_buffer_new(rqbpf_object_find_map(obj, "small"), collect, &c, &rb),
		    0);
		/* the callback's error stops the consumption after its record */
		CHECK_EQ(rqbpf_ring_buffer_consume(rb), -7);
		CHECK_EQ(c.n, 10);
		c.stop_after = 0;
		CHECK_EQ(rqbpf_ring_buffer_consume(rb), 255 - 85 - 10);
		for (int i = 0; i < 255; i++)
			if (i % 3 != 2)
				CHECK_EQ(c.v[kept++], (uint64_t)i);
		CHECK_EQ(c.n, kept);
		CHECK_EQ(bt_run(obj, "avail"), 0);
		/* consumed: room again */
		CHECK_EQ(bt_run(obj, "output_full"), 0);
		CHECK_EQ(rqbpf_ring_buffer_poll(rb, 0), 1);
		CHECK_EQ(c.v[c.n - 1], 77);
		CHECK_EQ(rqbpf_ring_buffer_poll(rb, 20), 0); /* times out */
		rqbpf_ring_buffer_free(rb);
		rqbpf_object_close(obj);
	}
}

static int count(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	++*(int *)ctx;
	return 0;
}

static void test_ringbuf_api(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("ringbuf", *cc);
		struct rqbpf_map *small;
		struct rqbpf_ring_buffer *rb;
		struct rqbpf_error err;
		uint32_t k = 0;
		uint64_t v = 0;
		int n = 0;

		if (!obj)
			continue;
		small = rqbpf_object_find_map(obj, "small");
		CHECK_EQ(rqbpf_ring_buffer_new(small, count, &n, &rb), -EPERM); /* not loaded */
		CHECK_EQ(rqbpf_object_load(obj, 0, &err), 0);
		CHECK_EQ(rqbpf_ring_buffer_new(NULL, count, &n, &rb), -EINVAL);
		CHECK_EQ(rqbpf_ring_buffer_new(small, NULL, &n, &rb), -EINVAL);
		CHECK_EQ(rqbpf_ring_buffer_consume(NULL), -EINVAL);
		CHECK_EQ(rqbpf_ring_buffer_poll(NULL, 0), -EINVAL);
		rqbpf_ring_buffer_free(NULL);
		/* no element API, as in the kernel */
		CHECK_EQ(rqbpf_map_lookup(small, &k, &v), -ENOTSUP);
		CHECK_EQ(rqbpf_map_update(small, &k, &v, 0), -ENOTSUP);
		CHECK_EQ(rqbpf_map_delete(small, &k), -ENOTSUP);
		CHECK_EQ(rqbpf_map_get_next_key(small, NULL, &k), -ENOTSUP);
		CHECK_EQ(rqbpf_ring_buffer_new(small, count, &n, &rb), 0);
		CHECK_EQ(rqbpf_ring_buffer_consume(rb), 0);
		rqbpf_ring_buffer_free(rb);
		rqbpf_object_close(obj);
	}
}

/* Unverified runs: one that exits with a record reserved faults, and the
 * record is discarded (the consumer goes past it); a submit of memory that
 * is no record faults. */
static void test_ringbuf_unverified(void)
{
	for (const char *const *cc = bt_compilers; *cc; cc++) {
		struct rqbpf_object *obj = bt_open("ringbuf", *cc);
		struct rqbpf_ring_buffer *rb;
		struct rqbpf_run_result res;
		struct rqbpf_error err;
		struct __sk_buff ctx = {0};
		int n = 0;

		if (!obj)
			continue;
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "leak"), 1), 0);
		CHECK_EQ(rqbpf_prog_set_autoload(bt_prog(obj, "submit_stack"), 1), 0);
		CHECK_EQ(rqbpf_object_load(obj, RQBPF_LOAD_NO_VERIFY, &err), 0);
		CHECK_EQ(rqbpf_ring_buffer_new(rqbpf_object_find_map(obj, "small"), count, &n, &rb),
		         0);
		CHECK_EQ(rqbpf_prog_run(bt_prog(obj, "leak"), &ctx, sizeof(ctx), &res), -EFAULT);
		BT_CHECK_STREQ(res.msg, "exit with 1 ring buffer record reserved (discarded)");
		CHECK_EQ(bt_run(obj, "avail"), 16);
		CHECK_EQ(bt_run(obj, "output_full"), 0);
		CHECK_EQ(rqbpf_ring_buffer_consume(rb), 1);
		CHECK_EQ(bt_run(obj, "avail"), 0);
		CHECK_EQ(rqbpf_prog_run(bt_prog(obj, "submit_stack"), &ctx, sizeof(ctx), &res),
		         -EFAULT);
		CHECK(strstr(res.msg, "ringbuf_submit: R1 is not a record this run reserved") !=
		      NULL);
		rqbpf_ring_buffer_free(rb);
		rqbpf_object_close(obj);
	}
}

static const struct tu_test tests[] = {
    TU_TEST("bpf_ringbuf_threads", test_ringbuf_threads, 120, 0),
    TU_TEST("bpf_ringbuf_overflow", test_ringbuf_overflow, 60, 0),
    TU_TEST("bpf_ringbuf_api", test_ringbuf_api, 60, 0),
    TU_TEST("bpf_ringbuf_unverified", test_ringbuf_unverified, 60, 0),
};

TU_MAIN(tests)
