/* ART's threads read from outside (see art-thread.h).
 *
 * The layout is Android 11's ART (android-platform-art 11.0.0+r48, 64-bit), from its sources
 * and checked against the instructions of Debian's libart.so.0 that use each field:
 *   art::Runtime::instance_ (exported)                 -> Runtime*
 *   Runtime::thread_list_   +0x1e0 (Runtime::DumpForSigQuit calls ThreadList::DumpForSigQuit)
 *   Runtime::monitor_pool_  +0x1d8 (Monitor::GetLockOwnerThreadId)
 *   ThreadList::list_       +0x2000, a std::list<Thread*> after the 8 KiB bitset of thread ids
 *                           (ThreadList::FindThreadByThreadId: node next +0, value +0x10)
 *   Thread (runtime/thread.h): tls32_ at 0: state_and_flags {u16 flags; u16 state} +0,
 *     thin_lock_thread_id +12, tid +16, daemon +20; tls64_ then tlsPtr_ at +160: self +0xe8,
 *     managed_stack.tagged_top_quick_frame_ +0xb8 (bit 0: a generic JNI frame), opeer +0xf0,
 *     jpeer +0xf8, monitor_enter_object +0x120, instrumentation_stack (a std::map*) +0x140
 * (Monitor::FetchState), name (std::string*) +0x160; wait_mutex_ +0x1a50, wait_monitor_ +0x1a60
 * (Monitor::FetchState) Monitor: owner_ (Thread*) +0x30, obj_ (a 32-bit GcRoot) +0x3c
 * mirror::Object: klass_ +0 and the lock word +4, both 32 bits (the heap is below 4 GiB) lock word
 * (runtime/lock_word.h): state in bits 30-31 (0 thin or unlocked, 1 fat, 2 hash, 3 forwarding),
 * thin owner in bits 0-15, a fat lock's monitor id in bits 0-27 -> MonitorPool (64-bit): off = id
 * << 3; chunk list [off >> 27], chunk [(off >> 12) & 0x7fff], monitor at chunk + (off & 0xff8)
 * mirror::Class: component_type_ +12, dex_cache_ +16, dex_type_idx_ +84; DexCache::dex_file_ +16;
 * DexFile::begin_ +8 (a class named by its dex type) Nothing is written and no lock of the runtime
 * is taken: a read races with the runtime, so each thread is checked (self pointer, state range,
 * tid) and a monitor is believed only when its object points back to it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perch/art/art-thread.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"

struct art_thread_layout {
	const char *name;
	uint32_t rt_thread_list, rt_monitor_pool, tl_list;
	uint32_t t_state, t_thin_id, t_tid, t_daemon, t_self, t_opeer, t_jpeer, t_monitor_enter;
	uint32_t t_name, t_top_quick_frame, t_instrumentation;
	uint32_t am_class, am_flags, am_index;
	uint32_t t_wait_monitor, m_owner, m_obj;
	uint32_t c_component, c_dex_cache, c_dex_type_idx, dc_dex_file, df_begin;
};

static const struct art_thread_layout layout_r64 = {
    .name = "Android 11 (R), 64-bit",
    .rt_thread_list = 0x1e0,
    .rt_monitor_pool = 0x1d8,
    .tl_list = 0x2000,
    .t_state = 2,
    .t_thin_id = 12,
    .t_tid = 16,
    .t_daemon = 20,
    .t_self = 0xe8,
    .t_opeer = 0xf0,
    .t_jpeer = 0xf8,
    .t_monitor_enter = 0x120,
    .t_top_quick_frame = 0xb8,
    .t_instrumentation = 0x140,
    .am_class = 0,
    .am_flags = 4,
    .am_index = 12,
    .t_name = 0x160,
    .t_wait_monitor = 0x1a60,
    .m_owner = 0x30,
    .m_obj = 0x3c,
    .c_component = 12,
    .c_dex_cache = 16,
    .c_dex_type_idx = 84,
    .dc_dex_file = 16,
    .df_begin = 8,
};

static const char *const state_names[] = {
    "Terminated",
    "Runnable",
    "TimedWaiting",
    "Sleeping",
    "Blocked",
    "Waiting",
    "WaitingForLockInflation",
    "WaitingForTaskProcessor",
    "WaitingForGcToComplete",
    "WaitingForCheckPointsToRun",
    "WaitingPerformingGc",
    "WaitingForDebuggerSend",
    "WaitingForDebuggerToAttach",
    "WaitingInMainDebuggerLoop",
    "WaitingForDebuggerSuspension",
    "WaitingForJniOnLoad",
    "WaitingForSignalCatcherOutput",
    "WaitingInMainSignalCatcherLoop",
    "WaitingForDeoptimization",
    "WaitingForMethodTracingStart",
    "WaitingForVisitObjects",
    "WaitingForGetObjectsAllocated",
    "WaitingWeakGcRootRead",
    "WaitingForGcThreadFlip",
    "NativeForAbort",
    "Starting",
    "Native",
    "Suspended",
};

/* One reader: the target's memory and the layout. */
struct reader {
	const struct perch_mem *mem;
	const struct art_thread_layout *l;
};

static int rd(const struct reader *r, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	return r->mem->read(r->mem->ctx, addr, buf, len);
}

static uint64_t rd64(const struct reader *r, uint64_t addr)
{
	uint64_t v = 0;

	return rd(r, addr, &v, 8) == 0 ? v : 0;
}

static uint32_t rd32(const struct reader *r, uint64_t addr)
{
	uint32_t v = 0;

	return rd(r, addr, &v, 4) == 0 ? v : 0;
}

const char *art_thread_state_name(uint16_t state)
{
	if (state < ART_TS_TERMINATED ||
	    (size_t)(state - ART_TS_TERMINATED) >= ARRAY_SIZE(state_names))
		return "?";
	return state_names[state - ART_TS_TERMINATED];
}

int art_thread_state_java_wait(uint16_t state)
{
	return state >= ART_TS_TIMED_WAITING && state <= ART_TS_LOCK_INFLATION;
}

/* ---- objects and their classes ---- */

/* The Monitor* of a fat lock word (MonitorPool of 64-bit ART), 0 when unreadable. */
static uint64_t fat_monitor(const struct reader *r, uint64_t runtime, uint32_t lw)
{
	uint64_t off = (uint64_t)(lw & 0x0fffffffu) << 3;
	uint64_t pool = rd64(r, runtime + r->l->rt_monitor_pool);
	uint64_t list = pool ? rd64(r, pool + ((off >> 27) << 3)) : 0;
	uint64_t chunk = list ? rd64(r, list + (((off >> 12) & 0x7fff) << 3)) : 0;

	return chunk ? chunk + (off & 0xff8) : 0;
}

/* The ART thread id of the owner of @obj's lock: a thin lock names it, a fat one through its
 * monitor's owner. 0 when unlocked or unknown. */
static uint32_t lock_owner(const struct reader *r, uint64_t runtime, uint64_t obj)
{
	uint32_t lw, st;
	uint64_t mon, owner;

	if (rd(r, obj + 4, &lw, 4) < 0)
		return 0;
	st = lw >> 30;
	if (st == 0)
		return lw & 0xffff;
	if (st != 1)
		return 0;
	mon = fat_monitor(r, runtime, lw);
	if (!mon || rd32(r, mon + r->l->m_obj) != (uint32_t)obj)
		return 0; /* a monitor that does not point back: not believed */
	owner = rd64(r, mon + r->l->m_owner);
	return owner ? rd32(r, owner + r->l->t_thin_id) : 0;
}

static int dex_string(const struct reader *r, uint64_t dex, uint32_t idx, struct strbuf *sb);

static unsigned uleb(const uint8_t **p, const uint8_t *end)
{
	unsigned v = 0, shift = 0;

	while (*p < end && shift < 35) {
		uint8_t b = *(*p)++;

		v |= (unsigned)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* The descriptor ("Ljava/lang/Object;") of type @idx of the dex file at @dex, into @sb. */
static int dex_type_descriptor(const struct reader *r, uint64_t dex, uint32_t idx,
			       struct strbuf *sb)
{
	uint32_t hdr[2];

	/* type_ids_size, type_ids_off at 0x40 */
	if (rd(r, dex + 0x40, hdr, sizeof(hdr)) < 0 || idx >= hdr[0])
		return -EFAULT;
	return dex_string(r, dex, rd32(r, dex + hdr[1] + 4ull * idx), sb);
}

/* String @idx of the dex file at @dex, appended to @sb. */
static int dex_string(const struct reader *r, uint64_t dex, uint32_t idx, struct strbuf *sb)
{
	uint32_t hdr[2], data;
	uint8_t buf[136];
	const uint8_t *p = buf;
	unsigned len;

	if (rd(r, dex + 0x38, hdr, sizeof(hdr)) < 0 || idx >= hdr[0] ||
	    rd(r, dex + hdr[1] + 4ull * idx, &data, 4) < 0 || rd(r, dex + data, buf, 8) < 0)
		return -EFAULT;
	len = uleb(&p, buf + 8);
	if (!len || len > 128 || rd(r, dex + data + (uint64_t)(p - buf), buf, len) < 0)
		return -EFAULT;
	strbuf_add(sb, (const char *)buf, len);
	return 0;
}

/* "Ljava/lang/Object;" -> "java.lang.Object", "[I" -> "int[]" (ART's PrettyDescriptor). */
static void pretty_descriptor(const char *d, struct strbuf *sb)
{
	static const char prims[] = "ZBCSIJFDV";
	static const char *const prim_names[] = {"boolean", "byte",  "char",   "short", "int",
						 "long",    "float", "double", "void"};
	int dims = 0;
	const char *p;

	while (*d == '[')
		dims++, d++;
	if (*d == 'L') {
		for (d++; *d && *d != ';'; d++)
			strbuf_addf(sb, "%c", *d == '/' ? '.' : *d);
	} else if (*d && (p = strchr(prims, *d)) != NULL) {
		strbuf_addstr(sb, prim_names[p - prims]);
	} else {
		strbuf_addstr(sb, d);
	}
	while (dims--)
		strbuf_addstr(sb, "[]");
}

/* The class at @klass as ART names it (PrettyClass without "java.lang.Class<>"): through its
 * dex file and type index, an array through its component type. */
static uint64_t class_dex(const struct reader *r, uint64_t klass);

static int class_name(const struct reader *r, uint64_t klass, struct strbuf *sb, int depth)
{
	const struct art_thread_layout *l = r->l;
	uint32_t component = rd32(r, klass + l->c_component);
	uint64_t begin;
	struct strbuf d = STRBUF_INIT;
	int ret = -EFAULT;

	if (component && depth < 8) {
		ret = class_name(r, component, sb, depth + 1);
		if (ret == 0)
			strbuf_addstr(sb, "[]");
		return ret;
	}
	begin = class_dex(r, klass);
	if (begin && dex_type_descriptor(r, begin, rd32(r, klass + l->c_dex_type_idx), &d) == 0) {
		pretty_descriptor(d.buf, sb);
		ret = 0;
	}
	strbuf_release(&d);
	return ret;
}

/* ART's PrettyTypeOf(obj): the class's name, "java.lang.Class<Foo>" for a class object. */
static void object_type(const struct reader *r, uint64_t obj, char *out, size_t size)
{
	struct strbuf sb = STRBUF_INIT, kname = STRBUF_INIT;
	uint32_t klass = obj ? rd32(r, obj) : 0;

	out[0] = 0;
	if (!klass || class_name(r, klass, &kname, 0) < 0)
		goto out;
	if (!strcmp(kname.buf, "java.lang.Class")) {
		strbuf_addstr(&sb, "java.lang.Class<");
		if (class_name(r, obj, &sb, 0) < 0)
			goto out;
		strbuf_addstr(&sb, ">");
	} else {
		strbuf_addstr(&sb, kname.buf);
	}
	snprintf(out, size, "%s", sb.buf);
out:
	strbuf_release(&sb);
	strbuf_release(&kname);
}

/* The dex file (its first byte in the target) of class @klass, 0 when unknown. */
static uint64_t class_dex(const struct reader *r, uint64_t klass)
{
	uint32_t dex_cache = rd32(r, klass + r->l->c_dex_cache);
	uint64_t dex_file = dex_cache ? rd64(r, dex_cache + r->l->dc_dex_file) : 0;

	return dex_file ? rd64(r, dex_file + r->l->df_begin) : 0;
}

/* "java.lang.Object.wait": the class and name of ArtMethod @method, when it is native. */
static int native_method_name(const struct reader *r, uint64_t method, char *out, size_t size)
{
	uint32_t f[4], ids[2], name_idx;
	struct strbuf sb = STRBUF_INIT;
	uint64_t dex;
	int ret = -ENOENT;

	if (rd(r, method, f, sizeof(f)) < 0 || !(f[r->l->am_flags / 4] & 0x100) ||
	    !f[r->l->am_class / 4])
		return -ENOENT;
	dex = class_dex(r, f[r->l->am_class / 4]);
	/* method_ids_size, method_ids_off at 0x58; an id is {u16 class, u16 proto, u32 name} */
	if (!dex || rd(r, dex + 0x58, ids, sizeof(ids)) < 0 || f[r->l->am_index / 4] >= ids[0] ||
	    rd(r, dex + ids[1] + 8ull * f[r->l->am_index / 4] + 4, &name_idx, 4) < 0)
		return -EFAULT;
	if (class_name(r, f[r->l->am_class / 4], &sb, 0) == 0) {
		strbuf_addstr(&sb, ".");
		if (dex_string(r, dex, name_idx, &sb) == 0) {
			snprintf(out, size, "%s", sb.buf);
			ret = 0;
		}
	}
	strbuf_release(&sb);
	return ret;
}

int art_thread_native_frame(const struct perch_mem *mem, uint64_t self,
			    const struct perch_mem *stack, uint64_t *method)
{
	struct reader r = {mem, &layout_r64};
	uint64_t w[8], frame;
	size_t at = r.l->t_top_quick_frame, n = (r.l->t_self - at) / 8;

	*method = 0;
	/* one read from the top quick frame to the self pointer (tlsPtr_, in that order) */
	if (n >= 8 || rd(&r, self + at, w, (n + 1) * 8) < 0)
		return -EFAULT;
	frame = w[0] & ~(uint64_t)3;
	/* still that thread (a Thread freed at its exit no longer points to itself); the frame
	 * as the snapshot copied it: the method must be there, at that moment */
	if (!frame || w[n] != self || stack->read(stack->ctx, frame, method, 8) < 0 || !*method)
		return -ENOENT;
	return 0;
}

/* The address of the first instruction of ArtMethod @method in its dex file (a standard dex
 * code item: 16 bytes of header, then the instructions), 0 when unknown. */
static uint64_t method_insns(const struct reader *r, uint64_t method);

int art_method_insns(const struct perch_mem *mem, uint64_t method, uint64_t *insns)
{
	struct reader r = {mem, &layout_r64};

	*insns = method_insns(&r, method);
	return *insns ? 0 : -ENOENT;
}

static uint64_t method_insns(const struct reader *r, uint64_t method)
{
	uint32_t f[4];
	uint64_t dex;
	char magic[4];

	if (rd(r, method, f, sizeof(f)) < 0 || !f[r->l->am_class / 4] || !f[2])
		return 0;
	dex = class_dex(r, f[r->l->am_class / 4]);
	if (!dex || rd(r, dex, magic, 4) < 0 || memcmp(magic, "dex\n", 4))
		return 0; /* a compact dex lays its code items out otherwise */
	return dex + f[2] + 16;
}

int art_thread_callers(const struct perch_mem *mem, uint64_t self, const struct perch_mem *stack,
		       struct art_shadow_frame *out, size_t max)
{
	struct reader r = {mem, &layout_r64};
	/* ManagedStack: tagged_top_quick_frame_, link_, top_shadow_frame_ (the current one in
	 * the Thread, the others locals of the runtime's calls on this stack: in the copy) */
	uint64_t ms[3], sf[5];
	uint32_t pc;
	size_t n = 0;

	if (rd(&r, self + r.l->t_top_quick_frame, ms, sizeof(ms)) < 0)
		return 0;
	for (int hops = 0; hops < 64 && n < max; hops++) {
		/* ShadowFrame: link_, method_, result_register_, dex_pc_ptr_, dex_instructions_,
		 * lock_count_data_, u32 number_of_vregs_, u32 dex_pc_ (art-interp.c) */
		/* only one the runtime has not run yet (no instructions set): one that runs has
		 * an interpreter frame of its own, named from it */
		if (ms[2] && stack->read(stack->ctx, ms[2], sf, sizeof(sf)) == 0 && sf[1] &&
		    !sf[4] && !sf[3] && stack->read(stack->ctx, ms[2] + 52, &pc, 4) == 0) {
			out[n].sp = ms[2];
			out[n].method = sf[1];
			out[n++].pc = pc;
		}
		if (!ms[1] || stack->read(stack->ctx, ms[1], ms, sizeof(ms)) < 0)
			break;
	}
	return (int)n;
}

void art_thread_window(uint64_t self, uint64_t *addr, size_t *len)
{
	*addr = self + layout_r64.t_top_quick_frame;
	*len = layout_r64.t_self + 8 - layout_r64.t_top_quick_frame;
}

/* The map's height bounds a lookup; a longer path is a map changing under the read (or a
 * cycle). A red-black tree of 2^32 entries is at most 64 high. */
#define INSTRUMENTATION_DEPTH 64

int art_thread_instrumentation_pc(const struct perch_mem *mem, uint64_t self, uint64_t slot,
				  uint64_t *pc)
{
	struct reader r = {mem, &layout_r64};
	uint64_t map = rd64(&r, self + r.l->t_instrumentation), node[8];

	/* std::map (libstdc++ _Rb_tree): the header node at +8, its parent (the root) at +16;
	 * a node: colour, parent, left +16, right +24, then the pair: key +32, and the
	 * InstrumentationStackFrame's this_object_ +40, method_ +48, return_pc_ +56 */
	uint64_t at = map ? rd64(&r, map + 16) : 0;

	for (int depth = 0; at; depth++) {
		if (depth == INSTRUMENTATION_DEPTH || rd(&r, at, node, sizeof(node)) < 0)
			return -EAGAIN; /* changed or freed under the read */
		if (node[4] == slot) {
			*pc = node[7];
			return 0;
		}
		at = slot < node[4] ? node[2] : node[3];
	}
	return -ENOENT;
}

int art_method_native_name(const struct perch_mem *mem, uint64_t method, char *name, size_t size)
{
	struct reader r = {mem, &layout_r64};

	name[0] = 0;
	return native_method_name(&r, method, name, size);
}

/* ---- threads ---- */

/* The thread's name: a std::string (libstdc++: pointer, length). */
static void thread_name(const struct reader *r, uint64_t self, char *out, size_t size)
{
	uint64_t s = rd64(r, self + r->l->t_name), str[2] = {0, 0};
	size_t n;

	out[0] = 0;
	if (!s || rd(r, s, str, sizeof(str)) < 0 || str[1] > 4096)
		return;
	n = str[1] < size - 1 ? (size_t)str[1] : size - 1;
	if (rd(r, str[0], out, n) < 0)
		n = 0;
	out[n] = 0;
}

/* The object of the thread's wait: monitor_enter_object when Blocked, the wait monitor's
 * object when waiting (believed only when that object's fat lock is this monitor). */
static uint64_t wait_object(const struct reader *r, uint64_t runtime, const struct art_thread *t)
{
	uint64_t mon, obj;
	uint32_t lw = 0;

	if (t->state == ART_TS_BLOCKED || t->state == ART_TS_LOCK_INFLATION)
		return rd64(r, t->self + r->l->t_monitor_enter);
	if (!art_thread_state_java_wait(t->state))
		return 0;
	mon = rd64(r, t->self + r->l->t_wait_monitor);
	obj = mon ? rd32(r, mon + r->l->m_obj) : 0;
	if (!obj || rd(r, obj + 4, &lw, 4) < 0 || lw >> 30 != 1 ||
	    fat_monitor(r, runtime, lw) != mon)
		return 0;
	return obj;
}

/* Read the state and tid of the thread at @self; -EPROTO unless it is a thread of this
 * layout. */
static int read_thread(const struct reader *r, uint64_t self, struct art_thread *t)
{
	uint32_t tls32[6];

	memset(t, 0, sizeof(*t));
	if (rd(r, self, tls32, sizeof(tls32)) < 0)
		return -EFAULT;
	t->self = self;
	t->state = (uint16_t)(tls32[0] >> 16);
	t->thin_id = tls32[r->l->t_thin_id / 4];
	t->tid = (pid_t)tls32[r->l->t_tid / 4];
	t->daemon = tls32[r->l->t_daemon / 4] != 0;
	if (rd64(r, self + r->l->t_self) != self || !strcmp(art_thread_state_name(t->state), "?") ||
	    t->tid <= 0 || t->thin_id > 0xffff)
		return -EPROTO;
	return 0;
}

static void read_wait(const struct reader *r, uint64_t runtime, struct art_thread *t)
{
	t->object = wait_object(r, runtime, t);
	if (!t->object)
		return;
	if (t->state == ART_TS_BLOCKED || t->state == ART_TS_LOCK_INFLATION)
		t->owner_thin = lock_owner(r, runtime, t->object);
	object_type(r, t->object, t->type, sizeof(t->type));
}

/* Kernel tids of the lock owners, from the list itself. */
static void owner_tids(struct art_threads *ts)
{
	for (size_t i = 0; i < ts->nr; i++)
		for (size_t k = 0; ts->t[i].owner_thin && k < ts->nr; k++)
			if (ts->t[k].thin_id == ts->t[i].owner_thin)
				ts->t[i].owner_tid = ts->t[k].tid;
}

static int walk_list(const struct reader *r, uint64_t runtime, uint64_t head,
		     struct art_threads *out)
{
	size_t alloc = 0;
	uint64_t node = rd64(r, head);

	for (; node && node != head; node = rd64(r, node)) {
		struct art_thread t;
		int ret;

		if (out->nr >= ART_THREADS_MAX)
			return -EAGAIN; /* a cycle: the list changed under the walk */
		ret = read_thread(r, rd64(r, node + 16), &t);
		if (ret < 0)
			return ret;
		thread_name(r, t.self, t.name, sizeof(t.name));
		t.starting = !rd64(r, t.self + r->l->t_opeer) && !rd64(r, t.self + r->l->t_jpeer);
		/* ART prints "daemon" from the Java peer: none without one */
		t.daemon = t.daemon && rd64(r, t.self + r->l->t_opeer);
		read_wait(r, runtime, &t);
		ALLOC_GROW(out->t, out->nr + 1, alloc);
		out->t[out->nr++] = t;
	}
	return node ? 0 : -EAGAIN;
}

int art_threads_read(const struct perch_mem *mem, uint64_t instance_addr, int is_64,
		     struct art_threads *out)
{
	struct reader r = {mem, &layout_r64};
	uint64_t runtime, list;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!is_64)
		return -EPROTO; /* 32-bit layouts are not known */
	if (rd(&r, instance_addr, &runtime, 8) < 0)
		return -EFAULT;
	list = runtime ? rd64(&r, runtime + r.l->rt_thread_list) : 0;
	if (!list)
		return -ENOENT;
	ret = walk_list(&r, runtime, list + r.l->tl_list, out);
	if (ret == 0 && !out->nr)
		ret = -EPROTO; /* a live runtime has at least the thread that started it */
	if (ret < 0) {
		art_threads_release(out);
		return ret == -EFAULT ? -EAGAIN : ret;
	}
	out->layout = r.l->name;
	out->runtime = runtime;
	owner_tids(out);
	return 0;
}

void art_threads_release(struct art_threads *ts)
{
	free(ts->t);
	memset(ts, 0, sizeof(*ts));
}

const struct art_thread *art_threads_find(const struct art_threads *ts, pid_t tid)
{
	for (size_t i = 0; ts && i < ts->nr; i++)
		if (ts->t[i].tid == tid)
			return &ts->t[i];
	return NULL;
}

int art_thread_refresh(const struct perch_mem *mem, const struct art_threads *ts,
		       struct art_thread *t)
{
	struct reader r = {mem, &layout_r64};
	struct art_thread now;
	int ret = read_thread(&r, t->self, &now);

	if (ret == -EPROTO || (ret == 0 && now.tid != t->tid))
		return -ESTALE;
	if (ret < 0)
		return ret;
	memcpy(now.name, t->name, sizeof(now.name));
	now.starting = t->starting;
	read_wait(&r, ts->runtime, &now);
	for (size_t k = 0; now.owner_thin && k < ts->nr; k++)
		if (ts->t[k].thin_id == now.owner_thin)
			now.owner_tid = ts->t[k].tid;
	*t = now;
	return 0;
}

/* ---- text ---- */

void art_thread_wait_frame(const struct art_thread *t, char *buf, size_t size)
{
	const char *type = t->type[0] ? t->type : "an unknown object";

	buf[0] = 0;
	switch (t->state) {
	case ART_TS_BLOCKED:
		if (t->owner_tid)
			snprintf(buf, size, "[java blocked on %s held by tid %d]", type,
				 (int)t->owner_tid);
		else
			snprintf(buf, size, "[java blocked on %s]", type);
		break;
	case ART_TS_LOCK_INFLATION:
		snprintf(buf, size, "[java waiting for lock inflation of %s]", type);
		break;
	case ART_TS_WAITING:
		snprintf(buf, size, "[java waiting on %s]", type);
		break;
	case ART_TS_TIMED_WAITING:
		snprintf(buf, size, "[java timed waiting on %s]", type);
		break;
	case ART_TS_SLEEPING:
		snprintf(buf, size, "[java sleeping]");
		break;
	}
}

int art_thread_lock_text(const struct art_thread *t, struct strbuf *sb)
{
	const char *what;

	switch (t->state) {
	case ART_TS_BLOCKED:
		what = "waiting to lock ";
		break;
	case ART_TS_LOCK_INFLATION:
		what = "waiting for lock inflation of ";
		break;
	case ART_TS_WAITING:
	case ART_TS_TIMED_WAITING:
		what = "waiting on ";
		break;
	case ART_TS_SLEEPING:
		what = "sleeping on ";
		break;
	default:
		return 0;
	}
	if (!t->object)
		strbuf_addf(sb, "%san unknown object", what);
	else
		strbuf_addf(sb, "%s<@addr=0x%llx> (a %s)", what, (unsigned long long)t->object,
			    t->type[0] ? t->type : "?");
	if (t->owner_thin)
		strbuf_addf(sb, " held by thread %u", t->owner_thin);
	return 1;
}
