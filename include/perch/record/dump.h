/* One snapshot of a process's threads, taken together: which threads, the state each had
 * before perch stopped it, its registers and whole stack while every thread is held stopped,
 * and afterwards its frames. `perch dump` (cmd-dump.c: attach, dump, detach) and the prompt's
 * `dump` (repl-cmds.c: on the session's attached tracee, resumed after) both use it; it owns
 * no output of its own but the text of a frame line and of a thread without a stack. */
#ifndef PERCH_DUMP_H
#define PERCH_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perch/proc/waitreason.h"
#include "perch/unwind/unwind.h"

struct art_thread;
struct perch_arch;
struct profile;
struct resolver;
struct strbuf;
struct tracee;

enum dump_taken {
	DUMP_NONE,
	DUMP_STOPPED, /* registers and stack from a ptrace-stop */
	DUMP_BLOCKED, /* from /proc: it is in uninterruptible sleep and cannot be stopped */
	DUMP_ASLEEP,  /* from /proc without a stop: asleep in a system call ('S') */
};

struct dump_thread {
	pid_t tid;
	char name[64];
	char state; /* the /proc letter before perch stopped it ('?' when unknown) */
	enum dump_taken taken;
	const char *why; /* no stack: why (a static string), or NULL */
	int asked;	 /* dump_collect() asked it to stop */
	/* why it waited when perch came ('S' or 'D'), as record's wait frames: "[lock futex]",
	 * "[sleep clock_nanosleep]"; "" when running or unknown */
	char wait[WAITREASON_PATH_MAX + 64];
	/* after dump_frames(): how its stack ended short of a thread's root, "" when it did not
	 * ("[stopped early: no CFI for libc.so]", "[truncated at 1024 frames]") */
	char end[160];
	struct unwind_snapshot snap;
};

/* dump_collect() flags */
#define DUMP_NEW_THREADS 0x1 /* stop and show the threads created while the dump is taken */

/* The states of @pid's threads now, before perch traces it (a stopped process's threads read
 * 't' once traced): an array of *@nr (tid and state set), for dump_threads()' @pre. */
struct dump_thread *dump_states(pid_t pid, size_t *nr);

/* The threads of @t's process to dump, ascending by tid: every one /proc lists (@only 0) or
 * the one @only; those perch does not trace come with their reason in why. A thread's state
 * is its entry's in @pre (@nr_pre of them, may be NULL) when there is one, else read now.
 * NULL with *@nr 0 when @only is not a thread of the process. Free with dump_release(). */
struct dump_thread *dump_threads(const struct tracee *t, pid_t only, const struct dump_thread *pre,
				 size_t nr_pre, size_t *nr);

/* Snapshot the traced threads among *@dts (*@nr of them), each with its whole stack: a thread
 * asleep in a system call ('S') or in uninterruptible sleep ('D') is read from /proc without a
 * stop, the others are interrupted and taken when their stop arrives, within
 * DUMP_STOP_TIMEOUT_MS. The interrupts persist (tracee_interrupt_persist()): a signal or a
 * clone that cancels one does not lose the thread. With DUMP_NEW_THREADS, threads created
 * meanwhile are added to *@dts (kept ascending by tid) and stopped too. The stopped threads
 * stay stopped: the caller resumes them (dump_resume()) or detaches. */
void dump_collect(struct tracee *t, const struct perch_arch *arch, struct dump_thread **dts,
		  size_t *nr, int flags);

/* Resume every thread of @t in a stop of perch's (after dump_collect(), when staying attached;
 * a stop that arrives later is the caller's to resume). */
void dump_resume(struct tracee *t);

/* One frame of a dumped stack, innermost first. */
struct dump_frame {
	size_t n; /* its number (#n) */
	uint64_t pc;
	const char *func, *detail; /* detail: "" or what follows the name (a Java signature) */
	const char *module;	   /* base name, "?" when unknown */
	const char *file;	   /* NULL when unknown */
	unsigned int line;
	int inlined, tailcall;
};

typedef void dump_frame_fn(void *arg, const struct dump_frame *f);

/* Unwind and name @dt's snapshot (it must be taken) through @r, calling @fn for each frame, and
 * set @dt->end. Returns 1 when the stack was cut at the resolver's frame limit, else 0. */
int dump_frames(struct profile *p, struct resolver *r, struct dump_thread *dt, dump_frame_fn *fn,
		void *arg);

/* perch dump's line of a frame, without the newline:
 *   #2  0x00007f3a2b4c5e6f do_futex_wait (libc.so.6) at sem_waitcommon.c:111 (tail call) */
void dump_frame_text(const struct dump_frame *f, struct strbuf *sb);

/* The note printed under a thread without a full stack ("(no stack: ...)", or its end
 * marker "[stopped early: ...]" after dump_frames()), or NULL. */
const char *dump_note(const struct dump_thread *dt, struct strbuf *sb);

void dump_release(struct dump_thread *dts, size_t nr);

/* ---- Java threads (dump-java.c): ART's view of a dumped thread (art-thread.h) ---- */

/* perch dump's line under an ART thread, without indent and newline:
 *   java: "main" tid=1 Blocked, waiting to lock <@addr=0x12c0a3b8> (a java.lang.Object)
 *   held by thread 5 (tid 20676) */
void dump_java_text(const struct art_thread *jt, struct strbuf *sb);
/* @dt in the layout of ART's own thread dump (`kill -3`), appended to @out:
 *   "main" prio=5 tid=1 Blocked
 *     | sysTid=20670 state=S self=0x5643fa8043c0
 *     at perch.realart.Deep.down(Deep.java:36)
 *     - waiting to lock <@addr=0x12c0a3b8> (a java.lang.Object) held by thread 5
 *     at perch.realart.Deep.down(Deep.java:31)
 *     ...
 * Java frames only (a frame whose line is unknown reads "(File.java:?)"), ART's "... repeated
 * N times" after three equal frames. */
void dump_anr_thread(struct profile *p, struct resolver *r, struct dump_thread *dt,
		     const struct art_thread *jt, struct strbuf *out);

#endif
