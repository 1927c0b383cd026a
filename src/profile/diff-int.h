/* What the three files of the diff share (diff.c: keys, call tree, functions and the API;
 * diff-pair.c: which modules and threads of BASE and NEW are the same; diff-stat.c: the noise
 * tests). Included from src/profile alone. */
#ifndef PERCH_DIFF_INT_H
#define PERCH_DIFF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "perch/base/strarena.h"
#include "perch/base/u64map.h"
#include "perch/profile/diff.h"

#define NO_ID  UINT32_MAX
#define NR_REP DIFF_MAX_REPLICATES

/* What a frame key stands for: shown as name (module). */
struct key_info {
	const char *name, *module; /* in the arena */
	uint32_t mod;		   /* its module's pairing id (NO_ID: none, a pseudo frame) */
	uint8_t kind;
};

/* Strings to ids: texts in the arena, chained by hash. */
struct intern {
	struct u64map map; /* hash -> first id with that hash */
	char **text;
	uint32_t *next;
	size_t nr, alloc_text, alloc_next;
};

/* One recording of a side. */
struct rep {
	const struct profile *p;
	int side, idx;
	const char *exe;	      /* path of the main executable, NULL unknown */
	pid_t pid;		      /* the recorded process (meta "pid"), 0 unknown */
	struct u64map mod_of;	      /* module string id -> pairing id */
	uint32_t *group_of;	      /* per thread: its group */
	uint32_t *loc_first, *loc_nr; /* per location: its keys in loc_keys, outermost first */
	uint32_t *loc_keys;
	size_t nr_loc_keys, alloc_loc_keys;
};

/* One side being compared: its recordings. */
struct side {
	struct rep rep[NR_REP];
	size_t nr_rep;
	uint64_t total, compared;
	int ordered; /* kept samples cover every sample of every recording */
};

struct diff {
	struct diff_opts o;
	struct diff_map *map;  /* o.map, copied */
	int cur_side, cur_rep; /* where add_count() adds */
	char *label[2];
	struct side s[2];
	struct strarena arena;

	/* frame keys */
	struct intern keys;
	struct key_info *ki;
	size_t alloc_ki;
	uint32_t key_no_stack;

	/* modules as paired */
	struct intern mod_keys;
	struct diff_module *mods;
	size_t alloc_mods;

	/* thread groups (their keys: process role, 0x1f, thread key) */
	struct intern group_keys;
	struct diff_group *groups;
	size_t nr_groups, alloc_groups;
	uint32_t *group_node;
	size_t alloc_gnode;
	uint32_t *gbatch; /* (group * 2 + side) * DIFF_BATCHES + batch: samples */
	size_t alloc_gbatch;
	uint32_t *gnb;	 /* group * 2 + side: batches used */
	uint64_t *grank; /* group * 2 + side: samples placed so far */
	size_t alloc_gnb, alloc_grank;
	uint32_t *grep; /* (group * 2 + side) * NR_REP + rep: samples */
	size_t alloc_grep;
	double *gdisp; /* group * 2 + side: dispersion between the runs (0: one run) */
	uint32_t *gdf; /* group * 2 + side: its degrees of freedom */
	uint32_t *groups_sorted;

	/* call tree */
	struct diff_node *nodes;
	uint32_t *node_key;
	uint32_t *nbatch; /* (node * 2 + side) * DIFF_BATCHES + batch */
	size_t nr_nodes, alloc_nodes, alloc_nkey, alloc_nbatch;
	struct u64map child_map; /* parent << 32 | key -> node */

	/* functions */
	struct diff_fn *fns;
	uint32_t *fn_key, *fn_stamp;
	uint32_t *fbatch; /* ((fn * 2 + side) * 2 + self) * DIFF_BATCHES + batch */
	uint32_t *frep;	  /* ((fn * 2 + side) * 2 + self) * NR_REP + rep */
	size_t nr_fns, alloc_fns, alloc_fkey, alloc_fstamp, alloc_fbatch, alloc_frep;
	struct u64map fn_map; /* group << 32 | key -> fn */
	uint32_t *fns_sorted;
	uint32_t serial; /* the sample being added (functions count once per sample) */

	size_t nr_tests, nr_node_tests;
};

/* diff.c */
/* The id of @s in @in; *@added tells whether it is new (then copied into @a). */
uint32_t diff_intern(struct intern *in, struct strarena *a, const char *s, int *added);
/* A new call-tree node under @parent. */
uint32_t diff_node_new(struct diff *d, uint32_t parent, uint32_t key, const char *name,
		       uint8_t kind, uint32_t group);

/* diff-pair.c */
/* Set up @rp for pairing: its main executable and process. */
void pair_rep_init(struct diff *d, struct rep *rp);
/* The pairing id of module string @mod of @rp (a struct diff_module of d->mods); the base name
 * to show in *@base. */
uint32_t pair_module(struct diff *d, struct rep *rp, uint32_t mod, const char **base);
/* The group of thread @t of @rp. */
uint32_t pair_thread(struct diff *d, struct rep *rp, uint32_t t);
/* After both sides are added: the samples compared and each module's samples. */
void pair_count(struct diff *d);

/* diff-stat.c */
/* Every test of the function table and of the call tree, at the family-wise level. */
void stat_run_tests(struct diff *d);

#endif
