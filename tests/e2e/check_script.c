/* e2e: scripted mode (perch -x FILE --json) over a real target: one JSON object per command,
 * compared with fixtures/golden/repl/ after normalizing pids, times and sample counts; the
 * recording it saves holds the target's known stack; a failing command gives its exit status
 * (the first failure's, also with --keep-going) and ends the script without --keep-going. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "perch/strbuf.h"

#define GOLDEN "fixtures/golden/repl/script.jsonl"

/* Values that change from run to run: numbers become 0, strings "X". */
static const char *const volatile_keys[] = { "\"pid\":", "\"tid\":", "\"samples\":",
					     "\"elapsed_s\":", "\"cpu\":" };

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
	perch = harness_spawn("perch", HARNESS_ARGV(harness_perch(), "-x", script, "--json",
						    "--keep-going"));
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
	H_ASSERT(harness_folded_load(&f, harness_tmpfile("saved.folded")) == 0,
		 "no saved.folded");
	H_ASSERT_FOLDED_VALID(&f);
	all = harness_folded_count(&f, NULL, harness_pred_any, NULL);
	f3 = harness_folded_count(&f, NULL, harness_pred_has, "f3");
	H_ASSERT(all >= 100 && f3 * 100 >= all * 80, "%lu of %lu samples in f3 (want >= 80%%)",
		 f3, all);
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
	H_ASSERT(lines_of(perch->out.buf) == 2, "want 2 result lines (no run after the failure):\n%s",
		 perch->out.buf);
	H_ASSERT(strstr(perch->out.buf, "{\"line\":2,\"cmd\":\"attach\",\"ok\":false,\"status\":2,"
					"\"error\":\"no process matches 'no-such-process-name-x'\"}"),
		 "unexpected attach result:\n%s", perch->out.buf);
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
	suite_add_tcase(s, tc);
	return s;
}
