/* perch's exit codes, one set for every command (eu-stack's policy, plus the diff gate's).
 * Only the commands exit; lower modules return them where a result is an exit decision
 * (report's filters, the diff's --fail-if rules). */
#ifndef PERCH_EXITCODE_H
#define PERCH_EXITCODE_H

enum perch_exit {
	PERCH_EXIT_OK = 0,
	PERCH_EXIT_SAMPLE_ERRORS = 1, /* finished, but some samples failed */
	PERCH_EXIT_FATAL = 2,
	PERCH_EXIT_REGRESSION = 3, /* report --diff: a --fail-if rule tripped */
	PERCH_EXIT_PARTIAL = 4,	   /* record: perch served too few of its ticks (outputs written;
				    * --allow-partial accepts them) */
	PERCH_EXIT_EMPTY = 5,	   /* report: the filters (--thread, --tid, --start/--end, --mode)
				    * match no sample of the recording (nothing written) */
	PERCH_EXIT_USAGE = 64,
};

#endif
