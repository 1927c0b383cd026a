/* Java threads as ART sees them, read from the target's memory (no signal, no code run in the
 * target, nothing written): each attached thread's ThreadState, the monitor it waits to lock
 * and the thread holding it, the object it waits or sleeps on, its name and ART's thread id.
 * The offsets are those of one runtime version (src/art/art-thread.c: Android 11's ART,
 * 64-bit, as Debian's android-libart 11.0.0+r48 ships it) and every read is checked against
 * the target (each art::Thread points to itself, its state is a ThreadState, its tid is a
 * thread of the process): a runtime whose layout does not pass is "unknown", and callers fall
 * back to the kernel's wait reasons. */
#ifndef PERCH_ART_THREAD_H
#define PERCH_ART_THREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perch/arch.h"

struct strbuf;

#define ART_THREADS_MAX 4096 /* ART threads read from one list (ART allows 65535) */

/* ART's ThreadState (runtime/thread_state.h), the values of Android 11: kTerminated is 66 and
 * the rest follow in order. Only those perch acts on are named here. */
enum {
	ART_TS_TERMINATED = 66,
	ART_TS_RUNNABLE = 67,
	ART_TS_TIMED_WAITING = 68,
	ART_TS_SLEEPING = 69,
	ART_TS_BLOCKED = 70,
	ART_TS_WAITING = 71,
	ART_TS_LOCK_INFLATION = 72,
	ART_TS_NATIVE = 92,
	ART_TS_SUSPENDED = 93,
};

/* One art::Thread. */
struct art_thread {
	uint64_t self;	     /* the art::Thread* */
	pid_t tid;	     /* the kernel's thread id (tls32_.tid) */
	uint32_t thin_id;    /* ART's thread id: "tid=N" of its dump, a thin lock's owner */
	uint16_t state;	     /* ThreadState */
	int daemon;	     /* tls32_.daemon */
	int starting;	     /* no Java peer yet: ART says "(still starting up)" */
	char name[64];	     /* tlsPtr_.name ("main", "Signal Catcher"), "" when unreadable */
	uint64_t object;     /* Blocked: the object it waits to lock; Waiting, TimedWaiting,
				Sleeping: the object it waits on; else 0 */
	uint32_t owner_thin; /* Blocked: ART's id of the lock's owner, 0 unknown or none */
	pid_t owner_tid;     /* the owner's kernel tid, 0 unknown */
	char type[128];	     /* the object's class as ART prints it ("java.lang.Object",
				"java.lang.Class<Foo>"), "" unknown */
};

/* Every thread of the runtime's thread list. */
struct art_threads {
	struct art_thread *t;
	size_t nr;
	const char *layout; /* the runtime version read ("Android 11 (R), 64-bit") */
	uint64_t runtime;   /* the art::Runtime* */
};

/* Read the thread list of the runtime whose `art::Runtime::instance_` is at @instance_addr
 * through @mem (pointers of @is_64 bits). 0 with @out filled (free with art_threads_release()),
 * -ENOENT (no runtime yet: instance_ or its thread list is null), -EPROTO (a runtime of
 * another layout: the checks failed; nothing is filled), -EFAULT, -EAGAIN (the list changed
 * under the read: a thread started or exited; try again). */
int art_threads_read(const struct perch_mem *mem, uint64_t instance_addr, int is_64,
		     struct art_threads *out);
void art_threads_release(struct art_threads *ts);
/* The entry of kernel thread @tid, or NULL. */
const struct art_thread *art_threads_find(const struct art_threads *ts, pid_t tid);

/* Re-read the state (and the object and owner of its wait) of @t, an entry of @ts, for a
 * sample: 0, or -ESTALE when @t->self is no longer that thread (it exited: read the list
 * again), -EFAULT. */
int art_thread_refresh(const struct perch_mem *mem, const struct art_threads *ts,
		       struct art_thread *t);

/* The method of the top quick frame of thread @self (an art::Thread*), as the snapshot's copy
 * of the stack, read through @stack, holds it at that frame (so it is the snapshot's moment,
 * not a later one): 0 with *@method (an ArtMethod*), -ENOENT (no quick frame, or the copy does
 * not reach it). */
int art_thread_native_frame(const struct perch_mem *mem, uint64_t self,
			    const struct perch_mem *stack, uint64_t *method);
/* The ShadowFrame at the top of a managed-stack fragment: the interpreted method the runtime
 * was about to run or runs there (a method whose call made the runtime initialize its class
 * waits there at dex pc 0). */
struct art_shadow_frame {
	uint64_t sp;	 /* where the ShadowFrame is (on the stack) */
	uint64_t method; /* its ArtMethod* */
	uint32_t pc;	 /* its dex pc, in code units (art_method_insns() + 2 * pc) */
};

/* The address of ArtMethod @method's first instruction in its dex file (a standard dex): 0,
 * -ENOENT (no code, no dex file known, or a compact dex). */
int art_method_insns(const struct perch_mem *mem, uint64_t method, uint64_t *insns);

/* The top ShadowFrames of thread @self's managed-stack fragments that the runtime has not
 * started to interpret yet (no instructions set), innermost first, each read from the
 * snapshot's copy of the stack (@stack; a fragment outside it ends the walk): how many (up to
 * @max) were put in @out. */
int art_thread_callers(const struct perch_mem *mem, uint64_t self, const struct perch_mem *stack,
		       struct art_shadow_frame *out, size_t max);

/* The part of art::Thread @self that the per-sample reads above touch (its managed stack and
 * self pointer): a caller may read it once per sample and serve them from that copy. */
void art_thread_window(uint64_t self, uint64_t *addr, size_t *len);

/* The real return address that ART's method tracing keeps for stack slot @slot of thread
 * @self (Thread::tlsPtr_.instrumentation_stack, a map keyed by the slot, whose return address
 * the tracing exit routine replaced): 0 with it in *@pc, -ENOENT when the map has no such slot
 * (or there is no tracing), -EAGAIN when the map changed under the read. */
int art_thread_instrumentation_pc(const struct perch_mem *mem, uint64_t self, uint64_t slot,
				  uint64_t *pc);

/* "java.lang.Object.wait" for ArtMethod @method when it is a native method: 0, -ENOENT (not
 * native), -EFAULT. */
int art_method_native_name(const struct perch_mem *mem, uint64_t method, char *name, size_t size);

/* ART's own word for @state ("Blocked", "TimedWaiting", "Native"), as its thread dump
 * prints it; "?" for a value outside the enum. */
const char *art_thread_state_name(uint16_t state);
/* Is @state one that waits in Java (Blocked, Waiting, TimedWaiting, Sleeping, waiting for a
 * lock's inflation)? */
int art_thread_state_java_wait(uint16_t state);

/* The wait-reason frame of a Java thread in a Java wait, into @buf: "[java blocked on
 * java.lang.Object held by tid 7]", "[java waiting on java.lang.Object]", "[java timed waiting
 * on X]", "[java sleeping]", "[java waiting for lock inflation of X]"; "" for any other state.
 * The holder is the kernel tid (0: "held by an unknown thread"). */
void art_thread_wait_frame(const struct art_thread *t, char *buf, size_t size);

/* ART's lock line of a thread in its thread dump (runtime/thread.cc StackDumpVisitor), without
 * the leading "  - " and the newline: "waiting to lock <@addr=0x12c0a3b8> (a java.lang.Object)
 * held by thread 5", "waiting on <@addr=0x...> (a X)", "sleeping on ..."; the object is shown
 * by address (ART's own form when it cannot take the identity hash code). Appends nothing for
 * a thread without one and returns 0; 1 when a line was appended. */
int art_thread_lock_text(const struct art_thread *t, struct strbuf *sb);

#endif
