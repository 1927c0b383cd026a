/* Unit tests for art-thread.c: ART's threads, monitors, native methods and ShadowFrames built
 * byte by byte in a fake address space with the offsets of Android 11's ART (64-bit) that
 * art-thread.c lists (and e2e-realart-states checks against the real runtime): a runtime, its
 * thread list of two threads, a thin lock and a fat lock (through the MonitorPool), a class
 * named through its dex file; then the same space broken in the ways a racing or foreign
 * runtime breaks it. What is expected here is our own reading of ART's sources; the oracle is
 * the e2e suite. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/art-thread.h"
#include "perch/base/strbuf.h"

#define BASE	 0x10000000ULL
#define MEM_SIZE (512 * 1024)

/* where things are */
#define INSTANCE (BASE + 0x0)
#define RUNTIME	 (BASE + 0x1000)
#define TLIST	 (BASE + 0x2000)
#define NODE1	 (BASE + 0x6000)
#define NODE2	 (BASE + 0x6100)
#define POOL	 (BASE + 0x7000)
#define CHUNKS	 (BASE + 0x7100)
#define CHUNK	 (BASE + 0x8000)
#define MONITOR	 (CHUNK + 16) /* monitor id 2: offset 2 << 3 in chunk 0 of list 0 */
#define T1	 (BASE + 0x10000)
#define T2	 (BASE + 0x20000)
#define STR1	 (BASE + 0x30000)
#define STR2	 (BASE + 0x30100)
#define OBJ1	 (BASE + 0x31000)
#define OBJ2	 (BASE + 0x31100)
#define CLASS	 (BASE + 0x32000)
#define DEXCACHE (BASE + 0x33000)
#define DEXFILE	 (BASE + 0x34000)
#define DEX	 (BASE + 0x40000)
#define METHOD	 (BASE + 0x50000)

static uint8_t *mem;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > MEM_SIZE || len > MEM_SIZE - (addr - BASE))
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static const struct perch_mem fake_mem = {fake_read, NULL};

static void put(uint64_t addr, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mem[addr - BASE + i] = (uint8_t)(v >> (8 * i));
}

static void put_thread(uint64_t t, uint16_t state, uint32_t thin, uint32_t tid, uint64_t name)
{
	put(t + 2, state, 2);
	put(t + 12, thin, 4);
	put(t + 16, tid, 4);
	put(t + 0xe8, t, 8);	      /* tlsPtr_.self */
	put(t + 0xf0, 0x12c00000, 8); /* a Java peer */
	put(t + 0x160, name, 8);      /* std::string* */
}

static void put_string(uint64_t at, const char *s)
{
	put(at, at + 32, 8);
	put(at + 8, strlen(s), 8);
	memcpy(mem + (at + 32 - BASE), s, strlen(s));
}

/* A dex file with one type, "Ljava/lang/Object;", and one method, "wait", of type 0. */
static void put_dex(void)
{
	static const char desc[] = "Ljava/lang/Object;";

	memcpy(mem + (DEX - BASE), "dex\n039", 8);
	put(DEX + 0x38, 2, 4);	  /* string_ids_size */
	put(DEX + 0x3c, 0x70, 4); /* string_ids_off */
	put(DEX + 0x40, 1, 4);	  /* type_ids_size */
	put(DEX + 0x44, 0x80, 4); /* type_ids_off */
	put(DEX + 0x58, 1, 4);	  /* method_ids_size */
	put(DEX + 0x5c, 0x88, 4); /* method_ids_off */
	put(DEX + 0x70, 0x100, 4);
	put(DEX + 0x74, 0x120, 4);
	put(DEX + 0x80, 0, 4); /* type 0: string 0 */
	put(DEX + 0x88, 0, 2); /* method 0: class 0 */
	put(DEX + 0x8c, 1, 4); /* name: string 1 */
	put(DEX + 0x100, strlen(desc), 1);
	memcpy(mem + (DEX + 0x101 - BASE), desc, strlen(desc));
	put(DEX + 0x120, 4, 1);
	memcpy(mem + (DEX + 0x121 - BASE), "wait", 4);
	put(CLASS + 16, DEXCACHE, 4);
	put(DEXCACHE + 16, DEXFILE, 8);
	put(DEXFILE + 8, DEX, 8);
}

static void setup(void)
{
	mem = calloc(1, MEM_SIZE);
	put(INSTANCE, RUNTIME, 8);
	put(RUNTIME + 0x1e0, TLIST, 8);
	put(RUNTIME + 0x1d8, POOL, 8);
	put(TLIST + 0x2000, NODE1, 8); /* the list's head node: next */
	put(NODE1, NODE2, 8);
	put(NODE1 + 16, T1, 8);
	put(NODE2, TLIST + 0x2000, 8);
	put(NODE2 + 16, T2, 8);
	put_string(STR1, "blocked");
	put_string(STR2, "holder");
	/* T1 waits to lock OBJ1, thin-locked by thread 2; T2 waits on OBJ2 (a fat lock) */
	put_thread(T1, ART_TS_BLOCKED, 1, 101, STR1);
	put(T1 + 0x120, OBJ1, 8);
	put_thread(T2, ART_TS_WAITING, 2, 102, STR2);
	put(T2 + 0x1a60, MONITOR, 8);
	put(OBJ1, CLASS, 4);
	put(OBJ1 + 4, 2, 4); /* thin, owner 2 */
	put(OBJ2, CLASS, 4);
	put(OBJ2 + 4, 1u << 30 | 2, 4); /* fat, monitor 2 */
	put(POOL, CHUNKS, 8);
	put(CHUNKS, CHUNK, 8);
	put(MONITOR + 0x3c, OBJ2, 4);
	put(MONITOR + 0x30, T1, 8);
	put_dex();
}

static void teardown(void)
{
	free(mem);
}

START_TEST(test_threads)
{
	struct art_threads ts;
	const struct art_thread *a, *b;
	struct strbuf sb = STRBUF_INIT;
	char buf[256];

	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), 0);
	ck_assert_uint_eq(ts.nr, 2);
	a = art_threads_find(&ts, 101);
	b = art_threads_find(&ts, 102);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_null(art_threads_find(&ts, 103));
	ck_assert_str_eq(a->name, "blocked");
	ck_assert_str_eq(art_thread_state_name(a->state), "Blocked");
	ck_assert_uint_eq(a->object, OBJ1);
	ck_assert_uint_eq(a->owner_thin, 2);
	ck_assert_int_eq(a->owner_tid, 102);
	ck_assert_str_eq(a->type, "java.lang.Object");
	ck_assert_str_eq(b->name, "holder");
	ck_assert_uint_eq(b->object, OBJ2);
	ck_assert_uint_eq(b->owner_thin, 0);
	art_thread_wait_frame(a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[java blocked on java.lang.Object held by tid 102]");
	art_thread_wait_frame(b, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[java waiting on java.lang.Object]");
	ck_assert_int_eq(art_thread_lock_text(a, &sb), 1);
	ck_assert_str_eq(sb.buf, "waiting to lock <@addr=0x10031000> (a java.lang.Object) held by "
				 "thread 2");
	strbuf_reset(&sb);
	ck_assert_int_eq(art_thread_lock_text(b, &sb), 1);
	ck_assert_str_eq(sb.buf, "waiting on <@addr=0x10031100> (a java.lang.Object)");
	/* the fat lock's owner: another blocked thread on OBJ2 would be held by thread 1 */
	put(T1 + 0x120, OBJ2, 8);
	ck_assert_int_eq(art_thread_refresh(&fake_mem, &ts, (struct art_thread *)a), 0);
	ck_assert_uint_eq(a->owner_thin, 1);
	ck_assert_int_eq(a->owner_tid, 101);
	/* a monitor whose object does not point back is not believed */
	put(MONITOR + 0x3c, OBJ1, 4);
	ck_assert_int_eq(art_thread_refresh(&fake_mem, &ts, (struct art_thread *)b), 0);
	ck_assert_uint_eq(b->object, 0);
	art_thread_wait_frame(b, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[java waiting on an unknown object]");
	/* a thread that exited: its Thread no longer points to itself */
	put(T2 + 0xe8, 0, 8);
	ck_assert_int_eq(art_thread_refresh(&fake_mem, &ts, (struct art_thread *)b), -ESTALE);
	art_threads_release(&ts);
	strbuf_release(&sb);
}
END_TEST

START_TEST(test_states)
{
	static const struct {
		uint16_t state;
		const char *name, *frame;
	} cases[] = {
	    {ART_TS_RUNNABLE, "Runnable", ""},
	    {ART_TS_NATIVE, "Native", ""},
	    {ART_TS_SLEEPING, "Sleeping", "[java sleeping]"},
	    {ART_TS_TIMED_WAITING, "TimedWaiting", "[java timed waiting on an unknown object]"},
	    {ART_TS_SUSPENDED, "Suspended", ""},
	    {ART_TS_TERMINATED, "Terminated", ""},
	    {65, "?", ""},
	    {94, "?", ""},
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct art_thread t = {.state = cases[i].state};

		ck_assert_str_eq(art_thread_state_name(cases[i].state), cases[i].name);
		art_thread_wait_frame(&t, buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i].frame);
	}
	ck_assert_int_eq(art_thread_state_java_wait(ART_TS_BLOCKED), 1);
	ck_assert_int_eq(art_thread_state_java_wait(ART_TS_NATIVE), 0);
}
END_TEST

/* A runtime that is not this layout, or not there: never a wrong answer. */
START_TEST(test_foreign)
{
	struct art_threads ts;

	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 0, &ts), -EPROTO);
	ck_assert_int_eq(art_threads_read(&fake_mem, BASE + MEM_SIZE, 1, &ts), -EFAULT);
	put(T2 + 2, 200, 2); /* no ThreadState */
	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), -EPROTO);
	ck_assert_uint_eq(ts.nr, 0);
	put(T2 + 2, ART_TS_WAITING, 2);
	put(T1 + 0xe8, T2, 8); /* self is another thread */
	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), -EPROTO);
	put(T1 + 0xe8, T1, 8);
	put(NODE2, NODE1, 8); /* a cycle */
	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), -EAGAIN);
	put(NODE2, BASE + MEM_SIZE + 64, 8); /* a node freed under the walk */
	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), -EAGAIN);
	put(RUNTIME + 0x1e0, 0, 8); /* not started */
	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), -ENOENT);
	put(INSTANCE, 0, 8);
	ck_assert_int_eq(art_threads_read(&fake_mem, INSTANCE, 1, &ts), -ENOENT);
}
END_TEST

/* Native methods at the top quick frame, checked against the snapshot's copy. */
START_TEST(test_native_method)
{
	const uint64_t frame = BASE + 0x60000;
	uint64_t method;
	char name[64];

	put(METHOD, CLASS, 4);
	put(METHOD + 4, 0x100 | 0x1, 4); /* native public */
	put(METHOD + 12, 0, 4);		 /* method 0: "wait" */
	put(T2 + 0xb8, frame | 1, 8);	 /* a generic JNI frame (tag bit) */
	put(frame, METHOD, 8);
	ck_assert_int_eq(art_thread_native_frame(&fake_mem, T2, &fake_mem, &method), 0);
	ck_assert_uint_eq(method, METHOD);
	ck_assert_int_eq(art_method_native_name(&fake_mem, method, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "java.lang.Object.wait");
	/* not native: no name */
	put(METHOD + 4, 0x1, 4);
	ck_assert_int_eq(art_method_native_name(&fake_mem, method, name, sizeof(name)), -ENOENT);
	/* the copy must hold the frame; the thread must still be itself */
	put(T2 + 0xb8, BASE + MEM_SIZE + 8, 8);
	ck_assert_int_eq(art_thread_native_frame(&fake_mem, T2, &fake_mem, &method), -ENOENT);
	put(T2 + 0xb8, frame, 8);
	put(T2 + 0xe8, T1, 8);
	ck_assert_int_eq(art_thread_native_frame(&fake_mem, T2, &fake_mem, &method), -ENOENT);
}
END_TEST

/* The ShadowFrames at the tops of the managed-stack fragments. */
START_TEST(test_callers)
{
	const uint64_t frag = BASE + 0x61000, sf1 = BASE + 0x62000, sf2 = BASE + 0x63000;
	struct art_shadow_frame out[4];
	uint64_t insns;

	put(METHOD, CLASS, 4);
	put(METHOD + 8, 0x200, 4);   /* code item offset */
	put(T2 + 0xb8 + 8, frag, 8); /* link_ */
	put(T2 + 0xb8 + 16, sf1, 8); /* top_shadow_frame_: one that runs, at dex pc 3 */
	put(sf1 + 8, METHOD, 8);
	put(sf1 + 32, DEX + 0x210, 8); /* dex_instructions_ */
	put(sf1 + 52, 3, 4);
	put(frag + 16, sf2, 8); /* a fragment whose ShadowFrame has not run yet */
	put(sf2 + 8, METHOD, 8);
	/* the running one has an interpreter frame of its own: only the other */
	ck_assert_int_eq(art_thread_callers(&fake_mem, T2, &fake_mem, out, 4), 1);
	ck_assert_uint_eq(out[0].sp, sf2);
	ck_assert_uint_eq(out[0].method, METHOD);
	ck_assert_uint_eq(out[0].pc, 0);
	ck_assert_int_eq(art_method_insns(&fake_mem, METHOD, &insns), 0);
	ck_assert_uint_eq(insns, DEX + 0x200 + 16); /* the method's first instruction */
	/* both, when neither runs yet */
	put(sf1 + 32, 0, 8);
	ck_assert_int_eq(art_thread_callers(&fake_mem, T2, &fake_mem, out, 4), 2);
	ck_assert_uint_eq(out[0].sp, sf1);
	ck_assert_uint_eq(out[0].pc, 3);
	ck_assert_uint_eq(out[1].sp, sf2);
	ck_assert_int_eq(art_thread_callers(&fake_mem, T2, &fake_mem, out, 1), 1);
	/* a compact dex: no guess at its code items */
	memcpy(mem + (DEX - BASE), "cdex001", 8);
	ck_assert_int_eq(art_method_insns(&fake_mem, METHOD, &insns), -ENOENT);
	/* a link outside the copy ends the walk */
	put(T2 + 0xb8 + 8, BASE + MEM_SIZE + 64, 8);
	ck_assert_int_eq(art_thread_callers(&fake_mem, T2, &fake_mem, out, 4), 1);
}
END_TEST

/* The instrumentation stack of method tracing: a std::map keyed by the stack slot, searched
 * from its root as libstdc++'s find() does. */
START_TEST(test_instrumentation)
{
	const uint64_t map = BASE + 0x64000, n1 = BASE + 0x64100, n2 = BASE + 0x64200,
		       n3 = BASE + 0x64300;
	uint64_t pc = 0;

	/* no tracing, then an empty map */
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x7000, &pc), -ENOENT);
	put(T2 + 0x140, map, 8);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x7000, &pc), -ENOENT);
	put(map + 16, n1, 8); /* the root */
	put(n1 + 16, n2, 8);  /* left */
	put(n1 + 24, n3, 8);  /* right */
	put(n1 + 32, 0x7000, 8);
	put(n1 + 56, 0x1111, 8);
	put(n2 + 32, 0x6000, 8);
	put(n2 + 56, 0x2222, 8);
	put(n3 + 32, 0x8000, 8);
	put(n3 + 56, 0x3333, 8);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x7000, &pc), 0);
	ck_assert_uint_eq(pc, 0x1111);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x6000, &pc), 0);
	ck_assert_uint_eq(pc, 0x2222);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x8000, &pc), 0);
	ck_assert_uint_eq(pc, 0x3333);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x7800, &pc), -ENOENT);
	/* a cycle is bounded; a node freed under the read says so */
	put(n3 + 24, n1, 8);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x9000, &pc), -EAGAIN);
	put(n3 + 24, BASE + MEM_SIZE + 64, 8);
	ck_assert_int_eq(art_thread_instrumentation_pc(&fake_mem, T2, 0x9000, &pc), -EAGAIN);
}
END_TEST

Suite *art_thread_suite(void)
{
	Suite *s = suite_create("art-thread");
	TCase *tc = tcase_create("threads");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_states);
	tcase_add_test(tc, test_foreign);
	tcase_add_test(tc, test_native_method);
	tcase_add_test(tc, test_callers);
	tcase_add_test(tc, test_instrumentation);
	suite_add_tcase(s, tc);
	return s;
}
