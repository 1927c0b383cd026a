/* fakeart: a process that looks to a profiler like an ART app (docs/design/android-art.md 1.5,
 * 2.1, 3, 5.1).
 *
 *   fakeart LAYOUT DEXFILE       LAYOUT: android2 (R+), android1 (P/Q), gdb (no magic)
 *
 * Built for x86-64 and aarch64 (fakeart) and for i386 (fakeart32, a 32-bit app: 32-bit
 * descriptor and entry layouts, ELF32 EM_386 symfiles, i386 JIT code and trampolines).
 *
 * - a JIT cache in a memfd named "jit-cache" mapped like ART's dual view: code r-x + rw-, data
 *   r-- + rw-; entries and symfiles live in the data part and are written through its rw view,
 *   the lists point at the r-- view;
 * - 16 code slots: slots 0-3 described by one packed symfile, 4-7 by a packed xz-compressed one,
 *   8-15 rewritten all the time by a manager thread (unregister, new code, register: single
 *   symfiles with CIE version 1 or 4 in turn, and every 16 rewrites all of them repacked into
 *   one packed, every other time compressed, symfile inserted before the singles are removed);
 *   freed symfile memory is scribbled over, so a reader that uses stale bytes sees garbage;
 * - the dex file DEXFILE (assembled with smali from fixtures/art/Interp.smali) registered in the
 *   dex list; an empty marker entry at the tail of the JIT list (ART's application tail);
 * - a worker thread running Java: Interp.outer (nterp trampoline, dex pc at its line 18) ->
 *   Interp.inner (switch trampoline, dex pc at its first instruction, line 42) -> jit_call ->
 *   JIT method <Class>.m<K> in a slot -> native spin<K>. The JIT code calls spin<K> with
 *   "sub rsp,8; movabs rax,spin<K>; call rax; add rsp,8; ret" (x86-64) or "str x30,[sp,#-16]!;
 *   ldr x16,=spin<K>; blr x16; ldr x30,[sp],#16; ret" (aarch64) or "sub esp,12; mov eax,spin<K>;
 *   call eax; add esp,12; ret" (i386): no frame pointer, so only its
 *   CFI unwinds it correctly (a frame-pointer step skips jit_call), and a profiler must show
 *   m<K> above spin<K> with the same K in every sample, whatever the manager does.
 * Prints "ready <pid>" when everything is registered and running. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakeart.h"
#include "fakeart_symfile.h"
#include "perch/art/dex.h"
#include "target_common.h"

#define CODE_SIZE   (64 * 1024)
#define DATA_SIZE   (512 * 1024)
#define ENTRY_AREA  (64 * 1024) /* entries at the start of the data part */
#define BLOCK	    4096	/* one symfile per block after them */
#define NR_BLOCKS   ((DATA_SIZE - ENTRY_AREA) / BLOCK)
#define NR_SLOTS    16
#define SLOT_SIZE   0x100
#define FIRST_CHURN 8
/* Pointers with a top-byte tag, as arm64 Android's heap hands them out (TBI: loads ignore the
 * byte): the dex list's entries (malloc'ed in ART) and the dex pcs the interpreter trampolines
 * report, so that a reader must strip it (docs/design/android-art.md 3.5, 7.8). None on x86-64. */
#if defined(__aarch64__)
#define PTR_TAG (0xb4ULL << 56)
#else
#define PTR_TAG 0ULL
#endif
#define UNTAG(p)  ((p) & ((1ULL << 56) - 1))
#define TAGGED(p) ((const void *)(uintptr_t)((uintptr_t)(p) | PTR_TAG))

#if defined(__x86_64__)
#define JIT_MACHINE EM_X86_64
#define CODE_LEN    0x15 /* sub, movabs, call, add, ret */
#define CODE_GROW   4	 /* CFA rows (fakeart_symfile.h): after the sub, after the add */
#define CODE_SHRINK 0x14
#define CODE_FILL   0xcc /* int3 */
#elif defined(__aarch64__)
#define JIT_MACHINE EM_AARCH64
#define CODE_LEN    0x20 /* str, ldr (literal), blr, ldr, ret, nop, the literal */
#define CODE_GROW   4	 /* after the str, after the ldr x30 */
#define CODE_SHRINK 0x10
#define CODE_FILL   0x00 /* udf #0 */
#elif defined(__i386__)
#define JIT_MACHINE EM_386
#define CODE_LEN    0x0e /* sub, mov, call, add, ret */
#define CODE_GROW   3	 /* after the sub, after the add */
#define CODE_SHRINK 0x0d
#define CODE_FILL   0xcc /* int3 */
#else
#error "fakeart: no JIT code for this architecture"
#endif

#define JIT_IS_64 (sizeof(void *) == 8)

/* entry fields (fakeart.h, spec 1.3): the pointer-sized ones are written with atomic stores */
#define E_NEXT	    offsetof(struct fakeart_entry, next)
#define E_PREV	    offsetof(struct fakeart_entry, prev)
#define E_ADDR	    offsetof(struct fakeart_entry, symfile_addr)
#define E_SIZE	    offsetof(struct fakeart_entry, symfile_size)
#define E_TIMESTAMP offsetof(struct fakeart_entry, timestamp)
#define E_SEQLOCK   offsetof(struct fakeart_entry, seqlock)

enum layout { L_ANDROID2, L_ANDROID1, L_GDB };

static enum layout layout;
static size_t entry_stride;
static uint8_t *code_rx, *code_rw, *data_ro, *data_rw;
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- native code the JIT methods call ---- */

static volatile uint64_t sink;

#define SPIN(k)                                                                                    \
	__attribute__((noinline)) void spin##k(void);                                              \
	__attribute__((noinline)) void spin##k(void)                                               \
	{                                                                                          \
		for (int i = 0; i < 20000; i++)                                                    \
			sink += (uint64_t)i * (k + 1);                                             \
	}
SPIN(0)
SPIN(1)
SPIN(2)
SPIN(3)
static void (*const spins[4])(void) = {spin0, spin1, spin2, spin3};

/* ---- the list writer (ART's debugger_interface.cc, one lock per list) ---- */

struct list {
	struct fakeart_descriptor *d;
	void (**hook)(void);
	uint8_t *pool_rw; /* entries (written here) */
	uint64_t pool_ro; /* and the address readers see */
	uint64_t tag;	  /* the top byte of the entry addresses published (PTR_TAG or 0) */
	size_t nr_pool, cap_pool;
	uint64_t free_head; /* entries are recycled, never freed (ART does the same) */
};

static struct list jit_list, dex_list;
static int free_blocks[NR_BLOCKS], nr_free_blocks;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint8_t *entry_rw(const struct list *l, uint64_t ro)
{
	return l->pool_rw + (UNTAG(ro) - l->pool_ro);
}

static void put_ptr(uint8_t *p, uint64_t v)
{
	__atomic_store_n((uintptr_t *)p, (uintptr_t)v, __ATOMIC_RELEASE);
}

static uint64_t get_ptr(const uint8_t *p)
{
	return __atomic_load_n((const uintptr_t *)p, __ATOMIC_ACQUIRE);
}

/* symfile_size and timestamp: only 4-byte aligned on i386, written before the entry is
 * reachable (or inside the seqlock bracket) */
static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void seq_bump(uint32_t *s)
{
	__atomic_fetch_add(s, 1, __ATOMIC_SEQ_CST);
}

static uint64_t entry_alloc(struct list *l)
{
	uint64_t e = l->free_head;

	if (e) {
		/* the free list goes through next */
		l->free_head = get_ptr(entry_rw(l, e) + E_NEXT);
		return e;
	}
	if (l->nr_pool == l->cap_pool) {
		fprintf(stderr, "fakeart: out of entries\n");
		exit(1);
	}
	e = (l->pool_ro + l->nr_pool++ * entry_stride) | l->tag;
	/* a new entry starts invalid (odd seqlock) */
	if (layout == L_ANDROID2)
		__atomic_store_n((uint32_t *)(entry_rw(l, e) + E_SEQLOCK), 1, __ATOMIC_RELEASE);
	return e;
}

static uint64_t list_add(struct list *l, uint64_t symfile, uint64_t size)
{
	struct fakeart_descriptor *d = l->d;
	uint64_t e, head, ts;
	uint8_t *p;

	pthread_mutex_lock(&list_lock);
	e = entry_alloc(l);
	p = entry_rw(l, e);
	ts = now_ns();
	if (ts <= d->timestamp)
		ts = d->timestamp + 1;
	if (layout != L_GDB)
		seq_bump(&d->seqlock);
	head = d->first_entry;
	put_ptr(p + E_NEXT, head);
	put_ptr(p + E_PREV, 0);
	put_ptr(p + E_ADDR, symfile);
	put_u64(p + E_SIZE, size);
	if (layout != L_GDB)
		put_u64(p + E_TIMESTAMP, ts);
	if (layout == L_ANDROID2)
		seq_bump((uint32_t *)(p + E_SEQLOCK)); /* even: valid, before it is reachable */
	if (head)
		put_ptr(entry_rw(l, head) + E_PREV, e);
	__atomic_store_n(&d->first_entry, (uintptr_t)e, __ATOMIC_RELEASE);
	d->action_flag = 1;
	d->relevant_entry = (uintptr_t)e;
	if (layout != L_GDB) {
		d->timestamp = ts;
		seq_bump(&d->seqlock);
	}
	pthread_mutex_unlock(&list_lock);
	(*l->hook)();
	return e;
}

static void list_remove(struct list *l, uint64_t e)
{
	struct fakeart_descriptor *d = l->d;
	uint8_t *p = entry_rw(l, e);
	uint64_t next, prev, ts;

	pthread_mutex_lock(&list_lock);
	ts = now_ns();
	if (ts <= d->timestamp)
		ts = d->timestamp + 1;
	if (layout != L_GDB)
		seq_bump(&d->seqlock);
	next = get_ptr(p + E_NEXT);
	prev = get_ptr(p + E_PREV);
	if (prev)
		put_ptr(entry_rw(l, prev) + E_NEXT, next);
	else
		__atomic_store_n(&d->first_entry, (uintptr_t)next, __ATOMIC_RELEASE);
	if (next)
		put_ptr(entry_rw(l, next) + E_PREV, prev);
	if (layout == L_ANDROID2)
		seq_bump((uint32_t *)(p + E_SEQLOCK)); /* odd: deleted */
	d->action_flag = 2;
	d->relevant_entry = (uintptr_t)e;
	if (layout != L_GDB) {
		d->timestamp = ts;
		seq_bump(&d->seqlock);
	}
	put_ptr(p + E_ADDR, 0);
	put_ptr(p + E_NEXT, l->free_head);
	l->free_head = e;
	pthread_mutex_unlock(&list_lock);
	(*l->hook)();
}

/* ---- JIT symfiles in the data part ---- */

#if defined(__i386__)
/* No i386 liblzma on the build host: fakeart32-xz (fakeart_xz.c), a host program started next to
 * this one before anything runs, compresses for us. Request: five u64 (inner length, is_64,
 * machine, lo, hi) and the inner file; answer: a u64 length (0: failed) and the outer file. Only
 * main and then the manager thread call it, one at a time. When fakeart32 dies, the helper reads
 * EOF and exits. */
static int xz_to = -1, xz_from = -1;

static void xz_start(void)
{
	char exe[4096], *slash;
	int to[2], from[2];
	posix_spawn_file_actions_t fa;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	char *argv[] = {exe, NULL};
	pid_t pid;

	if (n <= 0 || !(slash = memrchr(exe, '/', (size_t)n))) {
		fprintf(stderr, "fakeart32: cannot find its own directory\n");
		exit(1);
	}
	strcpy(slash + 1, "fakeart32-xz");
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0) {
		perror("fakeart32: pipe");
		exit(1);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	errno = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (errno) {
		fprintf(stderr, "fakeart32: cannot start %s: %s\n", exe, strerror(errno));
		exit(1);
	}
	close(to[0]);
	close(from[1]);
	xz_to = to[1];
	xz_from = from[0];
}

/* sf_compress of fakeart_symfile.h, done by the helper */
static int sf_compress(struct sf_buf *out, const struct sf_buf *inner, uint64_t lo, uint64_t hi,
		       int is_64, unsigned int machine)
{
	uint64_t hdr[5] = {inner->len, (uint64_t)is_64, machine, lo, hi}, len;

	if (sf_pipe_io(xz_to, hdr, sizeof(hdr), 1) < 0 ||
	    sf_pipe_io(xz_to, inner->p, inner->len, 1) < 0 ||
	    sf_pipe_io(xz_from, &len, sizeof(len), 0) < 0 || !len || len > BLOCK)
		return -1;
	out->len = 0;
	sf_put(out, NULL, (size_t)len);
	return sf_pipe_io(xz_from, out->p, (size_t)len, 0);
}
#else
static void xz_start(void)
{
}
#endif

struct jit_reg {
	uint64_t entry;
	int block;
};

static struct jit_reg jit_register(const struct sf_buf *sf)
{
	struct jit_reg r;

	if (!nr_free_blocks || sf->len > BLOCK) {
		fprintf(stderr, "fakeart: no room for a %zu byte symfile\n", sf->len);
		exit(1);
	}
	r.block = free_blocks[--nr_free_blocks];
	memcpy(data_rw + ENTRY_AREA + (size_t)r.block * BLOCK, sf->p, sf->len);
	r.entry = list_add(&jit_list,
			   (uint64_t)(uintptr_t)(data_ro + ENTRY_AREA + (size_t)r.block * BLOCK),
			   sf->len);
	return r;
}

static void jit_unregister(struct jit_reg r)
{
	list_remove(&jit_list, r.entry);
	/* freed: the next symfile reuses the bytes; garbage until then */
	memset(data_rw + ENTRY_AREA + (size_t)r.block * BLOCK, 0xdd, BLOCK);
	free_blocks[nr_free_blocks++] = r.block;
}

/* ---- code slots ---- */

static int slot_k[NR_SLOTS];
static int slot_state[NR_SLOTS]; /* 0 idle, 1 running, 2 being rewritten */

static uint64_t slot_addr(int s)
{
	return (uint64_t)(uintptr_t)(code_rx + (size_t)s * SLOT_SIZE);
}

static void slot_write(int s, int k)
{
	uint8_t *p = code_rw + (size_t)s * SLOT_SIZE;
	uint64_t target = (uint64_t)(uintptr_t)spins[k];

#if defined(__x86_64__)
	memcpy(p, "\x48\x83\xec\x08\x48\xb8", 6); /* sub $8,%rsp; movabs $spin<k>,%rax */
	memcpy(p + 6, &target, 8);
	memcpy(p + 14, "\xff\xd0\x48\x83\xc4\x08\xc3", 7); /* call *%rax; add $8,%rsp; ret */
#elif defined(__i386__)
	uint32_t target32 = (uint32_t)target;

	memcpy(p, "\x83\xec\x0c\xb8", 4); /* sub $12,%esp; mov $spin<k>,%eax */
	memcpy(p + 4, &target32, 4);
	memcpy(p + 8, "\xff\xd0\x83\xc4\x0c\xc3", 6); /* call *%eax; add $12,%esp; ret */
#else
	static const uint32_t insns[6] = {
	    0xf81f0ffe, /* str x30, [sp, #-16]! */
	    0x580000b0, /* ldr x16, 0x18 (the literal below) */
	    0xd63f0200, /* blr x16 */
	    0xf84107fe, /* ldr x30, [sp], #16 */
	    0xd65f03c0, /* ret */
	    0xd503201f, /* nop (the literal is 8-byte aligned) */
	};

	memcpy(p, insns, sizeof(insns));
	memcpy(p + sizeof(insns), &target, 8);
#endif
	__builtin___clear_cache((char *)code_rx + (size_t)s * SLOT_SIZE,
				(char *)code_rx + (size_t)s * SLOT_SIZE + CODE_LEN);
	slot_k[s] = k;
}

static struct sf_method slot_method(int s, const char *cls, char *name, size_t namesz)
{
	snprintf(name, namesz, "com.example.fakeart.%s.m%d", cls, slot_k[s]);
	return (struct sf_method){name, slot_addr(s), CODE_LEN, CODE_GROW, CODE_SHRINK, 1};
}

/* A packed symfile of slots [first, first + n), compressed or not. */
static struct jit_reg register_group(int first, int n, const char *cls, int compress, int cie)
{
	struct sf_method m[NR_SLOTS];
	char names[NR_SLOTS][64];
	struct sf_buf inner = {0}, outer = {0};
	struct jit_reg r;

	for (int i = 0; i < n; i++)
		m[i] = slot_method(first + i, cls, names[i], sizeof(names[i]));
	sf_build(&inner, m, (size_t)n, JIT_IS_64, JIT_MACHINE, cie);
	if (compress) {
		if (sf_compress(&outer, &inner, m[0].addr, m[n - 1].addr + m[n - 1].size, JIT_IS_64,
				JIT_MACHINE) < 0) {
			fprintf(stderr, "fakeart: xz failed\n");
			exit(1);
		}
		r = jit_register(&outer);
	} else {
		r = jit_register(&inner);
	}
	free(inner.p);
	free(outer.p);
	return r;
}

/* ---- the manager: JIT compiles, collects and repacks all the time ---- */

static struct jit_reg single[NR_SLOTS];
static int has_single[NR_SLOTS];
static struct jit_reg packed;
static int has_packed;

static void *manager(void *arg)
{
	unsigned int seed = 12345, rewrites = 0, cie = 1, repacks = 0;

	(void)arg;
	for (;;) {
		int s = FIRST_CHURN + (int)(rand_r(&seed) % (NR_SLOTS - FIRST_CHURN));
		int zero = 0;

		if (!__atomic_compare_exchange_n(&slot_state[s], &zero, 2, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		if (has_packed) {
			/* the group loses a method: the others get single entries first */
			for (int t = FIRST_CHURN; t < NR_SLOTS; t++) {
				if (t == s)
					continue;
				single[t] = register_group(t, 1, "Jit", 0, cie);
				has_single[t] = 1;
			}
			jit_unregister(packed);
			has_packed = 0;
		}
		if (has_single[s]) {
			jit_unregister(single[s]);
			has_single[s] = 0;
		}
		slot_write(s, (int)(rand_r(&seed) % 4));
		cie = cie == 1 ? 4 : 1;
		single[s] = register_group(s, 1, "Jit", 0, cie);
		has_single[s] = 1;
		__atomic_store_n(&slot_state[s], 0, __ATOMIC_RELEASE);
		if (++rewrites % 16 == 0) {
			/* repack: the packed entry is inserted before the singles go */
			packed = register_group(FIRST_CHURN, NR_SLOTS - FIRST_CHURN, "Jit",
						repacks++ & 1, cie);
			has_packed = 1;
			for (int t = FIRST_CHURN; t < NR_SLOTS; t++) {
				if (has_single[t])
					jit_unregister(single[t]);
				has_single[t] = 0;
			}
		}
		usleep(2000);
	}
	return NULL;
}

/* ---- the worker: Java code, interpreted and JIT compiled ---- */

static const uint8_t *outer_pc, *inner_pc;

__attribute__((noinline)) void jit_call(void);
__attribute__((noinline)) void jit_call(void)
{
	static unsigned int seed = 777;

	for (;;) {
		int s = (int)(rand_r(&seed) % NR_SLOTS), zero = 0;

		if (!__atomic_compare_exchange_n(&slot_state[s], &zero, 1, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		((void (*)(void))(uintptr_t)slot_addr(s))();
		__atomic_store_n(&slot_state[s], 0, __ATOMIC_RELEASE);
		return;
	}
}

__attribute__((noinline)) void inner_body(void *arg);
__attribute__((noinline)) void inner_body(void *arg)
{
	(void)arg;
	jit_call();
}

__attribute__((noinline)) void outer_body(void *arg);
__attribute__((noinline)) void outer_body(void *arg)
{
	fakeart_switch_interp(TAGGED(inner_pc), inner_body, arg);
}

__attribute__((noinline)) void *worker(void *arg);
__attribute__((noinline)) void *worker(void *arg)
{
	for (;;)
		fakeart_nterp(TAGGED(outer_pc), outer_body, arg);
	return NULL;
}

/* ---- set-up ---- */

static void setup_memfd(void)
{
	int fd = memfd_create("jit-cache", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, CODE_SIZE + DATA_SIZE) < 0) {
		perror("fakeart: memfd");
		exit(1);
	}
	code_rx = mmap(NULL, CODE_SIZE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	code_rw = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	data_ro = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, CODE_SIZE);
	data_rw = mmap(NULL, DATA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, CODE_SIZE);
	if (code_rx == MAP_FAILED || code_rw == MAP_FAILED || data_ro == MAP_FAILED ||
	    data_rw == MAP_FAILED) {
		perror("fakeart: mmap");
		exit(1);
	}
	close(fd);
	memset(code_rw, CODE_FILL, CODE_SIZE);
	for (int i = NR_BLOCKS - 1; i >= 0; i--)
		free_blocks[nr_free_blocks++] = i;
}

static void setup_layout(const char *name)
{
	struct fakeart_descriptor *ds[2] = {fakeart_descriptor(0), fakeart_descriptor(1)};

	/* the public entry sizes (spec 1.3): 48/40/32 on 64-bit, 32/28/20 on i386 */
	if (!strcmp(name, "android2")) {
		layout = L_ANDROID2;
		entry_stride = sizeof(struct fakeart_entry);
	} else if (!strcmp(name, "android1")) {
		layout = L_ANDROID1;
		entry_stride = E_SEQLOCK;
	} else if (!strcmp(name, "gdb")) {
		layout = L_GDB;
		entry_stride = E_TIMESTAMP;
	} else {
		fprintf(stderr, "usage: fakeart android2|android1|gdb DEXFILE\n");
		exit(64);
	}
	for (int i = 0; i < 2; i++) {
		if (layout == L_ANDROID1) {
			memcpy(ds[i]->magic, "Android1", 8);
			ds[i]->sizeof_entry = (uint32_t)entry_stride;
		} else if (layout == L_GDB) {
			memset(ds[i]->magic, 0, 8);
			ds[i]->sizeof_descriptor = 0;
			ds[i]->sizeof_entry = 0;
			ds[i]->timestamp = 0;
		}
	}
}

/* The dex pcs the interpreter reports: Interp.outer and Interp.inner in the dex (or the 041
 * container) whose @len bytes start at @span. */
static void find_interp(const uint8_t *span, size_t len)
{
	struct dex_file *df;
	struct dex_method m;

	if (dex_open(span, len, &df) < 0)
		return;
	for (size_t i = 0; i < dex_method_count(df); i++) {
		uint32_t n;

		if (dex_method_get(df, i, &m, &n) < 0)
			continue;
		if (!strcmp(m.name, "com.example.fakeart.Interp.outer"))
			outer_pc = span + m.code_offset + 2; /* code unit 1: the invoke, line 18 */
		else if (!strcmp(m.name, "com.example.fakeart.Interp.inner"))
			inner_pc = span + m.code_offset;
	}
	dex_close(df);
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Map @path, register it in the dex list the way ART registers what it holds, and find the
 * dex pcs the interpreter reports:
 *   a dex file: one entry, the file;
 *   compact dex files sharing a data section as in a vdex (scripts/dex-convert.py vdex): one
 *     entry per dex with the header's file_size, as Android 10/11 registered them, so that
 *     their code (in the shared section) lies outside every entry;
 *   a dex 041 container: one entry per dex, its own header and file_size (ART 15). */
static void setup_dex(const char *path)
{
	struct stat st;
	uint8_t *dex;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t size;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 0x70) {
		fprintf(stderr, "fakeart: cannot read %s\n", path);
		exit(1);
	}
	size = (size_t)st.st_size;
	dex = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (dex == MAP_FAILED) {
		fprintf(stderr, "fakeart: cannot map %s\n", path);
		exit(1);
	}
	if (!memcmp(dex, "perch-vdex-like", 16)) {
		for (size_t h = 16; h + 0x88 <= size && !memcmp(dex + h, "cdex001", 8);
		     h = (h + rd32(dex + h + 32) + 3) & ~(size_t)3) {
			struct dex_header_info info;

			if (dex_header_info(dex + h, size - h, &info) < 0 || info.size > size - h)
				break;
			find_interp(dex + h, (size_t)info.size);
			list_add(&dex_list, (uint64_t)(uintptr_t)(dex + h), rd32(dex + h + 32));
		}
	} else if (!memcmp(dex, "dex\n041", 8) && rd32(dex + 112) <= size) {
		find_interp(dex, rd32(dex + 112));
		for (size_t h = 0; h + 0x78 <= rd32(dex + 112) && rd32(dex + h + 32) >= 0x78;
		     h += rd32(dex + h + 32))
			list_add(&dex_list, (uint64_t)(uintptr_t)(dex + h), rd32(dex + h + 32));
	} else {
		find_interp(dex, size);
		list_add(&dex_list, (uint64_t)(uintptr_t)dex, (uint64_t)size);
	}
	if (!outer_pc || !inner_pc) {
		fprintf(stderr, "fakeart: %s has no Interp.outer/inner\n", path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	pthread_t w, m;
	uint8_t *dex_pool;

	if (argc != 3) {
		fprintf(stderr, "usage: fakeart android2|android1|gdb DEXFILE\n");
		return 64;
	}
	target_allow_ptrace();
	setup_layout(argv[1]);
	xz_start();
	setup_memfd();
	jit_list = (struct list){.d = fakeart_descriptor(0),
				 .hook = fakeart_hook(0),
				 .pool_rw = data_rw,
				 .pool_ro = (uint64_t)(uintptr_t)data_ro,
				 .cap_pool = ENTRY_AREA / entry_stride};
	/* dex entries are malloc'ed in ART */
	dex_pool = calloc(64, entry_stride);
	dex_list = (struct list){.d = fakeart_descriptor(1),
				 .hook = fakeart_hook(1),
				 .pool_rw = dex_pool,
				 .pool_ro = (uint64_t)(uintptr_t)dex_pool,
				 .tag = PTR_TAG,
				 .cap_pool = 64};
	setup_dex(argv[2]);
	/* an empty marker entry that stays at the tail (ART's application tail) */
	list_add(&jit_list, 0, 0);
	for (int s = 0; s < NR_SLOTS; s++)
		slot_write(s, s % 4);
	register_group(0, 4, "Packed", 0, 1);
	register_group(4, 4, "Compressed", 1, 4);
	for (int s = FIRST_CHURN; s < NR_SLOTS; s++) {
		single[s] = register_group(s, 1, "Jit", 0, 1);
		has_single[s] = 1;
	}
	if (pthread_create(&w, NULL, worker, NULL) || pthread_create(&m, NULL, manager, NULL)) {
		fprintf(stderr, "fakeart: pthread_create failed\n");
		return 1;
	}
	target_ready();
	pthread_join(w, NULL);
	return 0;
}
