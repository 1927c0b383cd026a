/* e2e: scripted mode (perch -x FILE --json) over a real target: one JSON object per command,
 * compared with fixtures/golden/repl/ after normalizing pids, times and sample counts; the
 * recording it saves holds the target's known stack; a failing command gives its exit status
 * (the first failure's, also with --keep-going) and ends the script without --keep-going.
 * A session recording is perch record's (the shared record core); top's interval and total
 * columns; attach NAME lists an Android package's processes with uid and user. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "perch/base/strbuf.h"

#define GOLDEN "fixtures/golden/repl/script.jsonl"

/* Values that change from run to run: numbers become 0, strings "X". */
static const char *const volatile_keys[] = {
    "\"pid\":", "\"tid\":", "\"samples\":", "\"elapsed_s\":", "\"cpu\":"};

static void normalize(const char *in, const char *tmpdir, struct strbuf *out)
{
	size_t tl = strlen(tmpdir);

	strbuf_reset(out);
	while (*in) {
		size_t i, kl = 0;

		if (!strncmp(in, tmpdir, tl)) {
			strbuf_addstr(out, "TMP");
			in += tl;
			continue;
		}
		for (i = 0; i < sizeof(volatile_keys) / sizeof(volatile_keys[0]); i++) {
			kl = strlen(volatile_keys[i]);
			if (!strncmp(in, volatile_keys[i], kl))
				break;
		}
		if (i == sizeof(volatile_keys) / sizeof(volatile_keys[0])) {
			strbuf_addch(out, *in++);
			continue;
		}
		strbuf_add(out, in, kl);
		in += kl;
		if (*in == '"') {
			const char *end = strchr(in + 1, '"');

			strbuf_addstr(out, "\"X\"");
			in = end ? end + 1 : in + strlen(in);
		} else {
			strbuf_addch(out, '0');
			in += strspn(in, "-0123456789.");
		}
	}
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb, NULL);
}

static const char *write_script(const char *name, const char *text)
{
	const char *path = harness_tmpfile(name);
	FILE *f = fopen(path, "w");

	H_ASSERT(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	return path;
}

static int lines_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

START_TEST(json_golden)
{
	struct harness_proc *target, *perch;
	struct harness_folded f;
	struct strbuf norm = STRBUF_INIT;
	const char *script, *golden_path = GOLDEN;
	char *golden;
	pid_t pid;
	unsigned long all, f3;
	char states[64];

	target = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(target, 10);
	script = write_script(
	    "golden.perch",
	    harness_fmt("# a harness: attach, record while the test drives the program, save\n"
			"attach %d\n"
			"set rate 200\n"
			"set mode wall\n"
			"record -d 1 -o %s/rec.folded\n"
			"record status\n"
			"save %s/saved.folded\n"
			"save %s/saved.speedscope.json\n"
			"nonsense --flag\n"
			"detach\n"
			"threads\n"
			"help attach\n",
			pid, harness_tmpdir(), harness_tmpdir(), harness_tmpdir()));
	perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "-x", script, "--json", "--keep-going"));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch -x did not finish");
	/* the first failure (the unknown command: usage, 64) is the exit status */
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_USAGE,
		 "exit %d, want 64 (the first failing command's)", harness_proc_exit_code(perch));
	normalize(perch->out.buf, harness_tmpdir(), &norm);
	if (getenv("PERCH_UPDATE_GOLDEN")) {
		FILE *g = fopen(golden_path, "w");

		H_ASSERT(g && fputs(norm.buf, g) >= 0 && fclose(g) == 0, "cannot write %s",
			 golden_path);
	}
	golden = read_file(golden_path);
	H_ASSERT(golden, "cannot read %s (PERCH_UPDATE_GOLDEN=1 writes it)", golden_path);
	harness_context_add("normalized output:\n%s", norm.buf);
	H_ASSERT(!strcmp(norm.buf, golden), "the JSON results differ from %s", golden_path);

	/* what was recorded is the target's known stack */
	H_ASSERT(harness_folded_load(&f, harness_tmpfile("saved.folded")) == 0, "no saved.folded");
	H_ASSERT_FOLDED_VALID(&f);
	all = harness_folded_count(&f, NULL, harness_pred_any, NULL);
	f3 = harness_folded_count(&f, NULL, harness_pred_has, "f3");
	H_ASSERT(all >= 100 && f3 * 100 >= all * 80, "%lu of %lu samples in f3 (want >= 80%%)", f3,
		 all);
	harness_folded_release(&f);
	/* detached, and the target runs on */
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced");
	harness_task_states(pid, states, sizeof(states));
	H_ASSERT(!strchr(states, 't') && !strchr(states, 'T'), "target left stopped: %s", states);
	free(golden);
	strbuf_release(&norm);
}
END_TEST

START_TEST(first_failure_ends_script)
{
	struct harness_proc *target, *perch;
	const char *script;
	pid_t pid;

	target = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(target, 10);
	script = write_script("fail.perch", harness_fmt("attach %d\n"
							"set rate -5\n"
							"threads\n",
							pid));
	/* text mode: "ok CMD ..." / "error CMD status=N error=..." lines */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "-x", script));
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch -x did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_USAGE, "exit %d, want 64",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->out.buf, "ok attach pid=") &&
		     strstr(perch->out.buf, "error set status=64 error=\"rate wants"),
		 "unexpected results:\n%s", perch->out.buf);
	H_ASSERT(!strstr(perch->out.buf, "ok threads"), "the script went on after a failure:\n%s",
		 perch->out.buf);
	H_ASSERT(!strchr(perch->out.buf, '\033'), "escape codes in scripted output");
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced after the script");
}
END_TEST

START_TEST(stdin_commands_and_attach_failure)
{
	struct harness_proc *perch;

	/* commands on a non-terminal stdin are a script too; attaching to nothing fails with
	 * the fatal status and the JSON says why */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "--json"));
	harness_proc_write(perch, "set\nattach no-such-process-name-x\nset\n");
	close(perch->in_fd);
	perch->in_fd = -1;
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL, "exit %d, want 2",
		 harness_proc_exit_code(perch));
	H_ASSERT(lines_of(perch->out.buf) == 2,
		 "want 2 result lines (no run after the failure):\n%s", perch->out.buf);
	H_ASSERT(strstr(perch->out.buf,
			"{\"line\":2,\"cmd\":\"attach\",\"ok\":false,\"status\":2,"
			"\"error\":\"no process matches 'no-such-process-name-x'\"}"),
		 "unexpected attach result:\n%s", perch->out.buf);
}
END_TEST

/* A failed attach keeps the current target: `attach 999999` then `threads` still lists the
 * earlier target's threads (--keep-going runs it after the failure). */
START_TEST(failed_attach_keeps_target)
{
	struct harness_proc *target, *perch;
	const char *script;
	pid_t pid, gone = 999999;

	while (kill(gone, 0) == 0 || errno != ESRCH)
		gone--;
	target = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(target, 10);
	script = write_script("keep.perch", harness_fmt("attach %d\n"
							"attach %d\n"
							"threads\n",
							pid, gone));
	perch = harness_spawn(
	    "perch", HARNESS_ARGV(harness_perch(), "-x", script, "--json", "--keep-going"));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch -x did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_FATAL, "exit %d, want 2",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->out.buf, harness_fmt("\"cmd\":\"attach\",\"ok\":false,\"status\":2,"
						    "\"error\":\"cannot attach to %d: no such "
						    "process (the current target is kept)\"",
						    gone)),
		 "unexpected attach result:\n%s", perch->out.buf);
	H_ASSERT(strstr(perch->out.buf, "\"cmd\":\"threads\",\"ok\":true"),
		 "threads failed after the failed attach:\n%s", perch->out.buf);
	H_ASSERT(strstr(perch->out.buf, harness_fmt("\"tid\":%d", pid)),
		 "threads does not list the target's main thread %d:\n%s", pid, perch->out.buf);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced after the script");
}
END_TEST

/* The leaf frame starts with @arg. */
static int leaf_starts(const struct harness_folded_line *l, const void *arg)
{
	const char *prefix = arg;

	return l->nr_frames && !strncmp(l->frames[l->nr_frames - 1], prefix, strlen(prefix));
}

/* Any frame contains @arg. */
static int frame_contains(const struct harness_folded_line *l, const void *arg)
{
	for (size_t i = 0; i < l->nr_frames; i++)
		if (strstr(l->frames[i], arg))
			return 1;
	return 0;
}

/* A session recording is a `perch record` recording (the same core): wait frames (with the
 * reason a sleeper perch interrupted resumes under, not restart_syscall: the dump before it
 * breaks off the sleeper's 5 s nanosleep, which the recording then finds restarted), the
 * CPU/memory timeline and stall summary, a .perch written while sampling that `report FILE.perch`
 * renders through perch report; stat runs during a background recording, target attached. */
START_TEST(session_record_is_perch_record)
{
	const char *fifo = harness_tmpfile("waits.fifo"), *script, *out;
	struct harness_proc *target, *perch;
	struct harness_folded f;
	unsigned long all, hit;
	pid_t pid;

	H_ASSERT(mkfifo(fifo, 0600) == 0, "cannot make a FIFO at %s", fifo);
	target = harness_spawn("target", HARNESS_ARGV(harness_target("waits"), "8", fifo, "5000"));
	pid = harness_proc_wait_ready(target, 10);
	script = write_script(
	    "core.perch",
	    harness_fmt("attach %d\n"
			"set stall 100\n"
			"dump\n"
			"record -F 200 -d 1.5 --cpu-interval 50 -o %s/w.folded -o %s/w.perch\n"
			"record start -d 20\n"
			"stat -d 0.3\n"
			"mem\n"
			"record stop\n"
			"report --format folded %s/w.perch\n"
			"detach\n",
			pid, harness_tmpdir(), harness_tmpdir(), harness_tmpdir()));
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "-x", script));
	H_ASSERT(harness_proc_wait(perch, 40) == 0, "perch -x did not finish");
	out = perch->out.buf;
	harness_context_add("perch's results:\n%s\nstderr:\n%s", out, perch->err.buf);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "exit %d, want 0",
		 harness_proc_exit_code(perch));
	/* the summary of perch record, with the timeline and the stalls */
	H_ASSERT(strstr(out, "  unwound to root: ") && strstr(out, "  CPU: process avg") &&
		     strstr(out, "stalls of thread"),
		 "no record summary with CPU timeline and stalls in the record result");
	H_ASSERT(strstr(out, "wrote ") && strstr(out, "w.perch (perch)"), "no w.perch written");
	/* stat and mem ran while the background recording went on, and it was not disturbed */
	H_ASSERT(strstr(out, "ok stat") && strstr(out, "ok mem"), "stat or mem failed");
	H_ASSERT(strstr(out, "ok record running=false") && strstr(out, "stop=request"),
		 "the background recording did not end by request");
	/* report FILE.perch is perch report on the file */
	H_ASSERT(strstr(out, ";[lock futex] ") && strstr(out, "ok report"),
		 "report w.perch did not render the recording");

	H_ASSERT(harness_folded_load(&f, harness_tmpfile("w.folded")) == 0, "no w.folded");
	H_ASSERT_FOLDED_VALID(&f);
	all = harness_folded_count(&f, "sleeper", harness_pred_any, NULL);
	hit = harness_folded_count(&f, "sleeper", leaf_starts, "[sleep ");
	if (hit * 100 < all * 90)
		harness_folded_context(&f, "sleeper", 10);
	H_ASSERT(all >= 100 && hit * 100 >= all * 90,
		 "sleeper: %lu of %lu samples end in [sleep ...] (want >= 90%%)", hit, all);
	H_ASSERT(harness_folded_count(&f, NULL, frame_contains, "restart_syscall") == 0,
		 "a wait frame says restart_syscall, not the call it restarts");
	all = harness_folded_count(&f, "locker", harness_pred_any, NULL);
	hit = harness_folded_count(&f, "locker", leaf_starts, "[lock futex]");
	H_ASSERT(all >= 100 && hit * 100 >= all * 90,
		 "locker: %lu of %lu samples end in [lock futex] (want >= 90%%)", hit, all);
	harness_folded_release(&f);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced");
}
END_TEST

/* One "%Own %Total OwnTime TotalTime Function" row of the top table for @fn. */
static int top_row(const char *table, const char *fn, double *own, double *total, double *own_s,
		   double *total_s)
{
	const char *line = table;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		char name[128];

		if (sscanf(line, " %lf%% %lf%% %lfs %lfs %127s", own, total, own_s, total_s,
			   name) == 5 &&
		    !strcmp(name, fn))
			return 1;
		line = eol ? eol + 1 : NULL;
	}
	return 0;
}

/* top shows the last second's shares and the time since it started, like py-spy top: in a
 * script (one table at the end) and as perch top (a table every second). */
START_TEST(top_interval_and_totals)
{
	struct harness_proc *target, *perch;
	double own, total, own_s, total_s;
	const char *script, *t;
	int tables = 0;
	pid_t pid;

	target = harness_spawn("target", HARNESS_ARGV(harness_target("chain-fp"), "30"));
	pid = harness_proc_wait_ready(target, 10);
	script = write_script("top.perch", harness_fmt("attach %d\ntop -d 2.5 -n 5 -F 100\n", pid));
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "-x", script));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch -x did not finish");
	harness_context_add("perch's results:\n%s", perch->out.buf);
	H_ASSERT(harness_proc_exit_code(perch) == 0, "exit %d", harness_proc_exit_code(perch));
	H_ASSERT(strstr(perch->out.buf, "%Own  %Total    OwnTime  TotalTime  Function (module)"),
		 "no top table header");
	H_ASSERT(top_row(perch->out.buf, "spin", &own, &total, &own_s, &total_s),
		 "no row for spin");
	/* the last interval (0.5 s) is nearly all spin; the times cover the 2.5 s */
	H_ASSERT(own >= 80 && total >= own && total <= 100, "spin: %%Own %.1f %%Total %.1f", own,
		 total);
	H_ASSERT(own_s >= 1.5 && own_s <= 3.0 && total_s >= own_s,
		 "spin: OwnTime %.2f s TotalTime %.2f s after 2.5 s at 100 Hz", own_s, total_s);
	H_ASSERT(top_row(perch->out.buf, "f3", &own, &total, &own_s, &total_s) && own == 0 &&
		     total >= 80,
		 "f3 is not on the stack of the samples (%%Own %.1f %%Total %.1f)", own, total);

	/* perch top: a table after every second, each saying how many samples it covers */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "top", "-p",
						    harness_fmt("%d", pid), "-d", "2.5"));
	H_ASSERT(harness_proc_wait(perch, 30) == 0, "perch top did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0, "perch top exit %d",
		 harness_proc_exit_code(perch));
	for (t = perch->out.buf; (t = strstr(t, " in the last ")); t++)
		tables++;
	H_ASSERT(tables >= 2, "perch top printed %d tables in 2.5 s:\n%s", tables, perch->out.buf);
	H_ASSERT(top_row(perch->out.buf, "spin", &own, &total, &own_s, &total_s) && own >= 80,
		 "perch top: no spin row at >= 80%%:\n%s", perch->out.buf);
	H_ASSERT(harness_tracer_pid(pid) == 0, "the target is still traced after perch top");
}
END_TEST

/* attach NAME with an Android package: the package's processes under several users and its
 * pkg:name secondary process all match and are listed with uid and user. */
START_TEST(attach_lists_package_processes)
{
	const char *chain = harness_target("chain-fp");
	struct harness_proc *perch;
	pid_t pids[3];
	char *json;

	/* argv[0] as Android's zygote sets it: the package name, or pkg:name */
	pids[0] = harness_proc_wait_ready(
	    harness_spawn("app",
			  HARNESS_ARGV("/bin/bash", "-c",
				       harness_fmt("exec -a com.example.chain %s 30", chain))),
	    10);
	pids[1] = harness_proc_wait_ready(
	    harness_spawn("remote", HARNESS_ARGV("/bin/bash", "-c",
						 harness_fmt("exec -a com.example.chain:remote "
							     "%s 30",
							     chain))),
	    10);
	/* the same package for user 10: uid 10 * 100000 + app id 10123 */
	pids[2] = harness_proc_wait_ready(
	    harness_spawn("user10",
			  HARNESS_ARGV("/usr/bin/setpriv", "--reuid=1010123", "--regid=1010123",
				       "--clear-groups", "/bin/bash", "-c",
				       harness_fmt("exec -a com.example.chain %s 30", chain))),
	    10);
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "--json"));
	harness_proc_write(perch, "attach com.example.chain\n");
	close(perch->in_fd);
	perch->in_fd = -1;
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	json = perch->out.buf;
	harness_context_add("perch's result:\n%s", json);
	H_ASSERT(harness_proc_exit_code(perch) == HARNESS_EXIT_USAGE, "exit %d, want 64",
		 harness_proc_exit_code(perch));
	H_ASSERT(strstr(json, "\"error\":\"3 processes match 'com.example.chain': attach one by "
			      "pid\""),
		 "not the ambiguity error");
	H_ASSERT(strstr(json, harness_fmt("{\"pid\":%d,\"comm\":\"chain-fp\",\"cmdline\":"
					  "\"com.example.chain\",\"uid\":0,\"user\":0}",
					  pids[0])),
		 "no candidate for user 0's process");
	H_ASSERT(strstr(json, harness_fmt("{\"pid\":%d,\"comm\":\"chain-fp\",\"cmdline\":"
					  "\"com.example.chain:remote\",\"uid\":0,\"user\":0}",
					  pids[1])),
		 "no candidate for the :remote process");
	H_ASSERT(strstr(json, harness_fmt("{\"pid\":%d,\"comm\":\"chain-fp\",\"cmdline\":"
					  "\"com.example.chain\",\"uid\":1010123,\"user\":10}",
					  pids[2])),
		 "no candidate for user 10's process");
	/* the secondary process by its own name is one process: attached */
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "--json"));
	harness_proc_write(perch, "attach com.example.chain:remote\ndetach\n");
	close(perch->in_fd);
	perch->in_fd = -1;
	H_ASSERT(harness_proc_wait(perch, 20) == 0, "perch did not finish");
	H_ASSERT(harness_proc_exit_code(perch) == 0 &&
		     strstr(perch->out.buf, harness_fmt("\"pid\":%d", pids[1])),
		 "attach com.example.chain:remote:\n%s", perch->out.buf);
}
END_TEST

Suite *script_suite(void)
{
	Suite *s = suite_create("e2e-script");
	TCase *tc = tcase_create("script");

	harness_tcase_init(tc, 60);
	tcase_add_test(tc, json_golden);
	tcase_add_test(tc, first_failure_ends_script);
	tcase_add_test(tc, stdin_commands_and_attach_failure);
	tcase_add_test(tc, failed_attach_keeps_target);
	tcase_add_test(tc, session_record_is_perch_record);
	tcase_add_test(tc, top_interval_and_totals);
	tcase_add_test(tc, attach_lists_package_processes);
	suite_add_tcase(s, tc);
	return s;
}
