/* Flame graph writer: one self-contained SVG (no external resources) with inline JavaScript
 * for click-to-zoom, search with highlight and details on hover. Our own layout and script
 * (not flamegraph.pl's); the static drawing is complete without the script. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perch/base/path.h"
#include "perch/base/strbuf.h"
#include "perch/base/xalloc.h"
#include "perch/out/json.h"
#include "perch/out/writers.h"
#include "perch/profile/diff.h"
#include "perch/profile/profile.h"

#define FG_WIDTH   1200
#define FG_PAD	   10
#define FG_FRAME_H 16
#define FG_TOP	   70 /* title, subtitle, buttons, legend */
#define FG_BOTTOM  30 /* details line */
#define FG_FONT	   12
#define FG_MIN_PX  0.1

/* node kinds beyond enum profile_frame_kind */
#define FG_KIND_ROOT   100
#define FG_KIND_THREAD 101
#define FG_TAIL_LOC    UINT32_MAX /* key_loc of a named tail-call frame */

struct fnode {
	char *name;		      /* display name (raw text; escaped when written) */
	uint32_t key_name, key_loc;   /* merge key: name string id (or 0 and the location) */
	uint32_t parent, child, next; /* node indexes; 0 = none (node 0 is the root) */
	uint32_t depth;
	uint8_t kind;
	uint64_t count, start;
	const struct diff_node *dn; /* diff mode: the call path it draws, else NULL */
};

struct fg {
	const struct profile *p;
	const struct diff *d; /* diff mode: NEW's shape, coloured by the change (p is NEW) */
	double scale;	      /* diff mode: the largest change drawn (strongest colour) */
	int multi;	      /* several processes: a level for each above its threads */
	struct fnode *v;
	size_t nr, alloc;
	uint32_t max_depth;
};

/* A new child of @parent (no lookup). */
static uint32_t fg_new(struct fg *g, uint32_t parent, uint32_t key_name, uint32_t key_loc,
		       uint8_t kind, const char *name_if_new)
{
	ALLOC_GROW(g->v, g->nr + 1, g->alloc);
	g->v[g->nr] =
	    (struct fnode){.name = xstrdup(name_if_new && *name_if_new ? name_if_new : "[unknown]"),
			   .key_name = key_name,
			   .key_loc = key_loc,
			   .parent = parent,
			   .next = g->v[parent].child,
			   .depth = g->v[parent].depth + 1,
			   .kind = kind};
	g->v[parent].child = (uint32_t)g->nr;
	if (g->v[g->nr].depth > g->max_depth)
		g->max_depth = g->v[g->nr].depth;
	return (uint32_t)g->nr++;
}

static uint32_t fg_child(struct fg *g, uint32_t parent, uint32_t key_name, uint32_t key_loc,
			 uint8_t kind, const char *name_if_new)
{
	uint32_t c;

	for (c = g->v[parent].child; c; c = g->v[c].next)
		if (g->v[c].key_name == key_name && g->v[c].kind == kind &&
		    g->v[c].key_loc == key_loc)
			return c;
	return fg_new(g, parent, key_name, key_loc, kind, name_if_new);
}

static void add_count(uint32_t thread, uint32_t stack, uint64_t count, void *arg)
{
	struct fg *g = arg;
	const struct profile *p = g->p;
	const struct profile_thread *t = profile_thread_get(p, thread);
	const uint32_t *locs;
	size_t n, i, nf, j;
	uint32_t node;
	char *tname;

	node = 0;
	if (g->multi && t && t->pid) {
		/* one process level above its threads (followed children) */
		const char *pname = profile_process_name(p, t->pid);

		tname = xasprintf("%s-%d", pname && *pname ? pname : "[unknown]", (int)t->pid);
		node = fg_child(g, 0, 0, (uint32_t)t->pid, FG_KIND_THREAD, tname);
		free(tname);
		g->v[node].count += count;
	}
	tname = xasprintf("%s-%d",
			  t && *profile_str(p, t->name) ? profile_str(p, t->name) : "[unknown]",
			  t ? (int)t->tid : -1);
	node = fg_child(g, node, 0, thread, FG_KIND_THREAD, tname);
	free(tname);
	g->v[0].count += count;
	g->v[node].count += count;
	locs = profile_stack(p, stack, &n);
	if (!n) {
		node = fg_child(g, node, 0, UINT32_MAX, PROFILE_FRAME_PSEUDO, "[no stack]");
		g->v[node].count += count;
	}
	for (i = n; i-- > 0;) {
		const uint32_t *fr = profile_location_frames(p, locs[i], &nf);

		if (!nf) {
			const struct profile_location *l = profile_location(p, locs[i]);
			char *name;

			if (l && l->module)
				name = xasprintf("[%s+0x%" PRIx64 "]",
						 path_base(profile_str(p, l->module)), l->addr);
			else
				name = xasprintf("0x%" PRIx64, l ? l->addr : 0);
			node = fg_child(g, node, 0, locs[i], PROFILE_FRAME_NATIVE, name);
			free(name);
			g->v[node].count += count;
		}
		for (j = nf; j-- > 0;) {
			const struct profile_frame *f = profile_frame(p, fr[j]);
			uint32_t nm = f ? f->name : 0;
			char *tail =
			    f && f->tailcall ? xasprintf("%s_[t]", profile_str(p, nm)) : NULL;

			/* a nameless frame merges only with frames of the same location, a
			 * tail-call frame ("_[t]", as in folded output) only with tail-call frames
			 */
			node = fg_child(g, node, nm, nm ? (tail ? FG_TAIL_LOC : 0) : locs[i],
					f ? f->kind : PROFILE_FRAME_NATIVE,
					tail ? tail
					: nm ? profile_str(p, nm)
					     : NULL);
			g->v[node].count += count;
			free(tail);
		}
	}
}

static struct fg *sort_ctx;

static int cmp_node(const void *a, const void *b)
{
	const struct fnode *x = &sort_ctx->v[*(const uint32_t *)a];
	const struct fnode *y = &sort_ctx->v[*(const uint32_t *)b];
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->key_loc > y->key_loc) - (x->key_loc < y->key_loc);
}

/* Sort every child list by name and give each node its start (in samples from the left). */
static void layout(struct fg *g)
{
	uint32_t *kids = NULL, *stack = NULL;
	size_t alloc_k = 0, alloc_s = 0, nr_s = 0, nk, i;

	sort_ctx = g;
	ALLOC_GROW(stack, 1, alloc_s);
	stack[nr_s++] = 0;
	while (nr_s) {
		uint32_t n = stack[--nr_s], c;
		uint64_t at = g->v[n].start;

		for (nk = 0, c = g->v[n].child; c; c = g->v[c].next) {
			ALLOC_GROW(kids, nk + 1, alloc_k);
			kids[nk++] = c;
		}
		if (nk > 1)
			qsort(kids, nk, sizeof(*kids), cmp_node);
		g->v[n].child = nk ? kids[0] : 0;
		for (i = 0; i < nk; i++) {
			g->v[kids[i]].next = i + 1 < nk ? kids[i + 1] : 0;
			g->v[kids[i]].start = at;
			at += g->v[kids[i]].count;
			ALLOC_GROW(stack, nr_s + 1, alloc_s);
			stack[nr_s++] = kids[i];
		}
	}
	free(kids);
	free(stack);
}

/* XML text: entities for the five specials; control characters, U+FFFE/U+FFFF and invalid
 * UTF-8 become U+FFFD (XML 1.0 forbids them). At most @max characters, then "..". */
static void xml_add(struct strbuf *sb, const char *s, size_t max)
{
	size_t nchars = 0;

	while (s && *s) {
		size_t n;
		uint32_t cp = json_utf8_next(s, &n);

		if (++nchars > max) {
			strbuf_addstr(sb, "..");
			return;
		}
		s += n;
		switch (cp) {
		case '&':
			strbuf_addstr(sb, "&amp;");
			break;
		case '<':
			strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			strbuf_addstr(sb, "&gt;");
			break;
		case '"':
			strbuf_addstr(sb, "&quot;");
			break;
		case '\'':
			strbuf_addstr(sb, "&apos;");
			break;
		default:
			if (cp < 0x20 || cp == 0x7f || cp == 0xfffe || cp == 0xffff)
				cp = JSON_REPLACEMENT_CHAR;
			json_add_utf8(sb, cp);
		}
	}
}

static size_t utf8_len(const char *s)
{
	size_t n, len = 0;

	while (*s) {
		json_utf8_next(s, &n);
		s += n;
		len++;
	}
	return len;
}

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Fill colour of a node: a hue family per kind, varied by the name so neighbours differ. */
static void add_colour(struct strbuf *sb, const struct fnode *nd)
{
	uint32_t h = hash_name(nd->name);
	unsigned int a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;
	unsigned int r, g, bl;

	switch (nd->kind) {
	case FG_KIND_ROOT:
		r = g = bl = 200;
		break;
	case FG_KIND_THREAD:
		r = 150 + a % 20, g = 165 + a % 20, bl = 210 + a % 20;
		break;
	case PROFILE_FRAME_PSEUDO:
		r = g = bl = 165 + a % 30;
		break;
	case PROFILE_FRAME_KERNEL:
		r = 235 + a % 20, g = 150 + b % 30, bl = 185 + c % 30; /* pink: apart from native */
		break;
	case PROFILE_FRAME_JIT:
		r = 50 + a % 60, g = 185 + b % 45, bl = 50 + c % 50;
		break;
	case PROFILE_FRAME_INTERP:
		r = 60 + a % 50, g = 185 + b % 35, bl = 205 + c % 40;
		break;
	case PROFILE_FRAME_AOT:
		r = 160 + a % 40, g = 210 + b % 30, bl = 70 + c % 40;
		break;
	default: /* native: the classic warm palette, kept light enough for black text */
		r = 215 + a % 40, g = 80 + b % 150, bl = 40 + c % 50;
		break;
	}
	strbuf_addf(sb, "rgb(%u,%u,%u)", r, g, bl);
}

static const char *kind_label(uint8_t kind)
{
	switch (kind) {
	case FG_KIND_ROOT:
		return "all";
	case FG_KIND_THREAD:
		return "thread";
	case PROFILE_FRAME_PSEUDO:
		return "pseudo";
	case PROFILE_FRAME_KERNEL:
		return "kernel";
	case PROFILE_FRAME_JIT:
		return "JIT";
	case PROFILE_FRAME_INTERP:
		return "interpreted";
	case PROFILE_FRAME_AOT:
		return "AOT";
	default:
		return "native";
	}
}

/* "12.3" for @part of @whole, in tenths of a percent (integers only: deterministic). */
static void add_percent(struct strbuf *sb, uint64_t part, uint64_t whole)
{
	uint64_t t = whole ? (part * 1000 + whole / 2) / whole : 0;

	strbuf_addf(sb, "%" PRIu64 ".%" PRIu64, t / 10, t % 10);
}

/* Fixed-point with two decimals, from a value in hundredths. */
static void add_px(struct strbuf *sb, uint64_t hundredths)
{
	strbuf_addf(sb, "%" PRIu64 ".%02" PRIu64, hundredths / 100, hundredths % 100);
}

/* The page script: reads the data-* attributes of the frames; no network, no eval. Kept free
 * of the CDATA terminator. */
static const char script[] =
    "\"use strict\";\n"
    "(function () {\n"
    "  var svg = document.getElementById(\"perch-fg\");\n"
    "  var total = +svg.getAttribute(\"data-total\");\n"
    "  var W = +svg.getAttribute(\"data-width\"), PAD = +svg.getAttribute(\"data-pad\");\n"
    "  var USABLE = W - 2 * PAD, CHAR = 12 * 0.6;\n"
    "  var details = document.getElementById(\"details\");\n"
    "  var matchedText = document.getElementById(\"matched\");\n"
    "  var unzoomBtn = document.getElementById(\"unzoom\");\n"
    "  var searchBtn = document.getElementById(\"search\");\n"
    "  var els = document.querySelectorAll(\"g.f\");\n"
    "  var nodes = [], byId = {}, i;\n"
    "\n"
    "  for (i = 0; i < els.length; i++) {\n"
    "    var g = els[i], nd = {\n"
    "      g: g, id: +g.getAttribute(\"data-n\"), parent: +g.getAttribute(\"data-p\"),\n"
    "      start: +g.getAttribute(\"data-s\"), count: +g.getAttribute(\"data-c\"),\n"
    "      kind: g.getAttribute(\"data-k\"), name: g.getAttribute(\"data-name\"),\n"
    "      rect: g.querySelector(\"rect\"), text: g.querySelector(\"text\")\n"
    "    };\n"
    "    nd.fill = nd.rect.getAttribute(\"fill\");\n"
    "    nodes.push(nd);\n"
    "    byId[nd.id] = nd;\n"
    "  }\n"
    "  var root = byId[0], zoomed = root, query = null;\n"
    "  if (!root)\n"
    "    return;\n"
    "\n"
    "  function up(n) { return n.id === 0 ? null : byId[n.parent]; }\n"
    "  function isAncestor(a, b) { /* a is b or one of its ancestors */\n"
    "    for (var n = b; n; n = up(n))\n"
    "      if (n === a)\n"
    "        return true;\n"
    "    return false;\n"
    "  }\n"
    "  function pct(part, whole) { return whole ? (100 * part / whole).toFixed(1) : \"0.0\"; }\n"
    "  function place(nd, x, w) {\n"
    "    nd.rect.setAttribute(\"x\", x.toFixed(2));\n"
    "    nd.rect.setAttribute(\"width\", w.toFixed(2));\n"
    "    nd.text.setAttribute(\"x\", (x + 3).toFixed(2));\n"
    "    var chars = Math.floor((w - 6) / CHAR), label = \"\";\n"
    "    if (chars >= 3)\n"
    "      label = nd.name.length > chars ? nd.name.slice(0, chars - 2) + \"..\" : nd.name;\n"
    "    nd.text.textContent = label;\n"
    "  }\n"
    "  function zoom(z) {\n"
    "    zoomed = z;\n"
    "    nodes.forEach(function (nd) {\n"
    "      var cl = nd.g.classList;\n"
    "      cl.remove(\"hidden\");\n"
    "      cl.remove(\"faded\");\n"
    "      if (nd !== z && isAncestor(nd, z)) {\n"
    "        cl.add(\"faded\");\n"
    "        place(nd, PAD, USABLE);\n"
    "      } else if (isAncestor(z, nd)) {\n"
    "        place(nd, PAD + (nd.start - z.start) / z.count * USABLE,\n"
    "              nd.count / z.count * USABLE);\n"
    "      } else {\n"
    "        cl.add(\"hidden\");\n"
    "      }\n"
    "    });\n"
    "    unzoomBtn.classList.toggle(\"hidden\", z === root);\n"
    "  }\n"
    "  function describe(nd) {\n"
    "    var s = nd.name + \" (\" + nd.kind + \", \" + nd.count + \" samples, \" +\n"
    "      pct(nd.count, total) + \"% of all\";\n"
    "    if (zoomed !== root)\n"
    "      s += \", \" + pct(nd.count, zoomed.count) + \"% of zoomed\";\n"
    "    if (nd.g.getAttribute(\"data-diff\"))\n"
    "      s += \"; \" + nd.g.getAttribute(\"data-diff\");\n"
    "    return s + \")\";\n"
    "  }\n"
    "  function search(q) {\n"
    "    var re = null, matched = 0;\n"
    "    query = q ? q : null;\n"
    "    if (query) {\n"
    "      try {\n"
    "        re = new RegExp(query);\n"
    "      } catch (e) {\n"
    "        re = new RegExp(query.replace(/[.*+?^${}()|[\\]\\\\]/g, \"\\\\$&\"));\n"
    "      }\n"
    "    }\n"
    "    nodes.forEach(function (nd) {\n"
    "      nd.hit = !!re && nd !== root && re.test(nd.name);\n"
    "      nd.rect.setAttribute(\"fill\", nd.hit ? \"rgb(230,0,230)\" : nd.fill);\n"
    "    });\n"
    "    /* count a sample once even when several frames of its stack match */\n"
    "    nodes.forEach(function (nd) {\n"
    "      if (!nd.hit)\n"
    "        return;\n"
    "      for (var a = up(nd); a; a = up(a))\n"
    "        if (a.hit)\n"
    "          return;\n"
    "      matched += nd.count;\n"
    "    });\n"
    "    matchedText.textContent = query ? \"Matched: \" + pct(matched, total) + \"% (\" +\n"
    "      matched + \" samples)\" : \" \";\n"
    "    searchBtn.textContent = query ? \"Reset Search\" : \"Search\";\n"
    "    return matched;\n"
    "  }\n"
    "  function ask() {\n"
    "    var q = window.prompt(\"Search frames (regular expression)\", query || \"\");\n"
    "    if (q !== null)\n"
    "      search(q);\n"
    "  }\n"
    "\n"
    "  nodes.forEach(function (nd) {\n"
    "    nd.g.addEventListener(\"mouseover\", function () { details.textContent = describe(nd); "
    "});\n"
    "    nd.g.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
    "    nd.g.addEventListener(\"click\", function () { zoom(nd); });\n"
    "  });\n"
    "  unzoomBtn.addEventListener(\"click\", function () { zoom(root); });\n"
    "  searchBtn.addEventListener(\"click\", function () {\n"
    "    if (query)\n"
    "      search(null);\n"
    "    else\n"
    "      ask();\n"
    "  });\n"
    "  window.addEventListener(\"keydown\", function (e) {\n"
    "    if ((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\") || e.key === \"F3\") "
    "{\n"
    "      e.preventDefault();\n"
    "      ask();\n"
    "    } else if (e.key === \"Escape\") {\n"
    "      zoom(root);\n"
    "      search(null);\n"
    "    }\n"
    "  });\n"
    "  zoom(root);\n"
    "  svg.setAttribute(\"data-ready\", String(nodes.length));\n"
    "\n"
    "  /* \"file.svg#selftest=NAME/QUERY\": zoom on the first frame called NAME, search QUERY and\n"
    "   * report what the page shows (used by perch's tests in a headless browser) */\n"
    "  var m = /^#selftest=([^\\/]*)\\/(.*)$/.exec(decodeURIComponent(location.hash));\n"
    "  if (m) {\n"
    "    var target = nodes.filter(function (nd) { return nd.name === m[1]; })[0];\n"
    "    if (target)\n"
    "      zoom(target);\n"
    "    var hits = search(m[2]), shown = 0;\n"
    "    nodes.forEach(function (nd) {\n"
    "      if (!nd.g.classList.contains(\"hidden\"))\n"
    "        shown++;\n"
    "    });\n"
    "    svg.setAttribute(\"data-selftest\", \"zoomed=\" + zoomed.name + \";shown=\" + shown +\n"
    "      \";matched=\" + hits + \";width=\" + (target ? target.rect.getAttribute(\"width\") : "
    "\"\") +\n"
    "      \";text=\" + matchedText.textContent);\n"
    "  }\n"
    "})();\n";

/* ---- diff mode (out_flamegraph_diff_write) ---- */

#define FG_VANISHED_MAX 20 /* vanished call paths listed below the graph */

/* NEW's call paths of the diff as the tree (paths NEW does not have are left out). */
static void fg_from_diff(struct fg *g)
{
	size_t nn = diff_nr_nodes(g->d);
	uint32_t *map = xcalloc(nn ? nn : 1, sizeof(*map)); /* diff node -> fnode, 0: none */

	g->v[0].count = diff_samples(g->d, DIFF_NEW);
	g->v[0].dn = diff_node(g->d, 0);
	for (uint32_t n = 1; n < nn; n++) {
		const struct diff_node *dn = diff_node(g->d, n);
		uint32_t c;

		if (!dn->st.x[DIFF_NEW] || (dn->parent && !map[dn->parent]))
			continue;
		c = fg_new(g, map[dn->parent], 0, n,
			   dn->kind == DIFF_NODE_THREAD ? FG_KIND_THREAD : dn->kind, dn->name);
		g->v[c].count = dn->st.x[DIFF_NEW];
		g->v[c].dn = dn;
		map[n] = c;
		if (dn->depth >= 2 && dn->st.tested && fabs(dn->st.change) > g->scale)
			g->scale = fabs(dn->st.change);
	}
	free(map);
}

/* White to red (grew) or blue (shrank) by the change relative to the largest one drawn:
 * strong beyond noise, pale within; grey for the root, threads and what is not compared. */
static void add_diff_colour(struct strbuf *sb, const struct diff_node *dn, double scale)
{
	const struct diff_stat *st = &dn->st;
	double s = scale > 0 ? fabs(st->change) / scale : 0;
	const double from[3] = {238, 238, 238}, red[3] = {225, 40, 40}, blue[3] = {50, 90, 225};
	const double *to = st->change > 0 ? red : blue;
	int c[3];

	if (dn->depth < 2 || !st->tested) {
		strbuf_addstr(sb, dn->depth < 2 ? "rgb(200,200,200)" : "rgb(215,215,195)");
		return;
	}
	s = s > 1 ? 1 : s;
	s = st->beyond_noise ? 0.3 + 0.7 * s : 0.15 * s;
	for (int i = 0; i < 3; i++)
		c[i] = (int)(from[i] + s * (to[i] - from[i]) + 0.5);
	strbuf_addf(sb, "rgb(%d,%d,%d)", c[0], c[1], c[2]);
}

static void add_diff_legend(struct strbuf *sb)
{
	static const struct {
		const char *text;
		double change;
		int beyond;
	} items[] = {{"grew", 1, 1},
		     {"shrank", -1, 1},
		     {"grew, within noise", 1, 0},
		     {"shrank, within noise", -1, 0}};

	for (size_t i = 0; i < ARRAY_SIZE(items); i++) {
		struct diff_node dn = {.depth = 2,
				       .st = {.tested = 1,
					      .change = items[i].change,
					      .beyond_noise = items[i].beyond}};
		int x = FG_PAD + (int)i * 200;

		strbuf_addf(sb, "<rect x=\"%d\" y=\"50\" width=\"12\" height=\"12\" fill=\"", x);
		add_diff_colour(sb, &dn, 1);
		strbuf_addf(sb, "\"/><text x=\"%d\" y=\"60\">%s</text>\n", x + 16, items[i].text);
	}
}

/* "BASE 5.00%, NEW 10.00% of the thread, change +5.00 ±1.20 points, beyond noise" */
static void add_diff_text(struct strbuf *sb, const struct diff_node *dn)
{
	const struct diff_stat *st = &dn->st;

	if (dn->depth < 2) {
		strbuf_addf(sb, "; BASE %" PRIu64 " samples, NEW %" PRIu64 " samples", st->x[0],
			    st->x[1]);
	} else if (!st->tested) {
		strbuf_addf(sb, "; thread only in %s", st->n[0] ? "BASE" : "NEW");
	} else {
		strbuf_addf(sb,
			    "; BASE %.2f%%, NEW %.2f%% of the thread, change %+.2f ±%.2f "
			    "points, %s",
			    100 * st->share[0], 100 * st->share[1], 100 * st->change,
			    100 * st->margin, st->beyond_noise ? "beyond noise" : "within noise");
	}
}

static void add_diff_subtitle(struct strbuf *sb, const struct fg *g)
{
	strbuf_addf(sb,
		    "<text id=\"subtitle\" x=\"%d\" y=\"40\">NEW's shape (%" PRIu64
		    " samples); colour: change of share of the thread, strong beyond noise (%g%% "
		    "over %zu paths); click to zoom, Ctrl-F to search</text>\n",
		    FG_WIDTH / 2, g->v[0].count, 100 * diff_alpha(g->d), diff_nr_node_tests(g->d));
}

static const struct diff *vanished_d;

static double vanished_share(const struct diff_node *dn)
{
	return dn->st.n[DIFF_BASE] ? (double)dn->st.x[DIFF_BASE] / (double)dn->st.n[DIFF_BASE] : 0;
}

static int cmp_vanished(const void *a, const void *b)
{
	double x = vanished_share(diff_node(vanished_d, *(const uint32_t *)a));
	double y = vanished_share(diff_node(vanished_d, *(const uint32_t *)b));

	if (x != y)
		return x > y ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) -
	       (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* The call paths of BASE that NEW does not have (the topmost node of each), largest share
 * first, into *@out; their number. */
static size_t vanished_list(const struct diff *d, uint32_t **out)
{
	size_t n = 0, nn = diff_nr_nodes(d);
	uint32_t *v = xmalloc((nn ? nn : 1) * sizeof(*v));

	for (uint32_t i = 1; i < nn; i++) {
		const struct diff_node *dn = diff_node(d, i);

		if (!dn->st.x[DIFF_NEW] && dn->st.x[DIFF_BASE] &&
		    (dn->depth == 1 || diff_node(d, dn->parent)->st.x[DIFF_NEW]))
			v[n++] = i;
	}
	vanished_d = d;
	qsort(v, n, sizeof(*v), cmp_vanished);
	*out = v;
	return n;
}

/* Lines of text from @y: the vanished paths (thread;frame;...;frame) and their share. */
static void add_vanished(struct strbuf *sb, const struct diff *d, const uint32_t *v, size_t n,
			 size_t y)
{
	struct strbuf path = STRBUF_INIT, line = STRBUF_INIT;

	strbuf_addf(sb, "<text class=\"vanished\" x=\"%d\" y=\"%zu\">%s</text>\n", FG_PAD, y,
		    n ? "In BASE, not in NEW (vanished), largest first:"
		      : "Nothing of BASE vanished: every call path of BASE is in NEW.");
	for (size_t i = 0; i < n && i < FG_VANISHED_MAX; i++) {
		const struct diff_node *dn = diff_node(d, v[i]);

		strbuf_reset(&path);
		for (const struct diff_node *a = dn; a->depth >= 1; a = diff_node(d, a->parent)) {
			/* leaf last: prepend */
			strbuf_reset(&line);
			strbuf_addstr(&line, a->name);
			if (path.len)
				strbuf_addch(&line, ';');
			strbuf_add(&line, path.buf, path.len);
			strbuf_reset(&path);
			strbuf_add(&path, line.buf, line.len);
		}
		strbuf_reset(&line);
		if (dn->depth == 1)
			strbuf_addf(&line, "thread only in BASE (%" PRIu64 " samples): ",
				    dn->st.x[DIFF_BASE]);
		else
			strbuf_addf(&line, "%6.2f%% of its thread: ", 100 * vanished_share(dn));
		strbuf_addf(sb, "<text class=\"vanished\" x=\"%d\" y=\"%zu\">", FG_PAD + 10,
			    y + (i + 1) * FG_FRAME_H);
		xml_add(sb, line.buf, SIZE_MAX);
		/* keep the leaf end of a long path */
		{
			size_t chars = utf8_len(path.buf), skip = chars > 130 ? chars - 128 : 0;
			const char *s = path.buf;

			for (size_t k = 0, step; k < skip && *s; k++, s += step)
				json_utf8_next(s, &step);
			if (skip)
				strbuf_addstr(sb, "..");
			xml_add(sb, s, SIZE_MAX);
		}
		strbuf_addstr(sb, "</text>\n");
	}
	if (n > FG_VANISHED_MAX)
		strbuf_addf(
		    sb, "<text class=\"vanished\" x=\"%d\" y=\"%zu\">... and %zu more</text>\n",
		    FG_PAD + 10, y + (FG_VANISHED_MAX + 1) * FG_FRAME_H, n - FG_VANISHED_MAX);
	strbuf_release(&path);
	strbuf_release(&line);
}

/* Lines the vanished list takes. */
static size_t vanished_lines(size_t n)
{
	return 1 + (n > FG_VANISHED_MAX ? FG_VANISHED_MAX + 1 : n);
}

/* The document's start, up to the frames: the HTML or XML prologue, the <svg> element, its
 * style, the title, subtitle, buttons and legend. */
static void fg_header(struct strbuf *sb, const struct fg *g, const char *title, int html,
		      size_t height, uint64_t total, uint64_t period)
{
	static const uint8_t legend[] = {
	    PROFILE_FRAME_NATIVE, PROFILE_FRAME_KERNEL, PROFILE_FRAME_JIT, PROFILE_FRAME_INTERP,
	    PROFILE_FRAME_AOT,	  PROFILE_FRAME_PSEUDO, FG_KIND_THREAD};
	const struct diff *d = g->d;
	size_t i;

	if (html) {
		strbuf_addstr(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
				  "<meta charset=\"utf-8\">\n<title>");
		xml_add(sb, title, 200);
		strbuf_addstr(sb, "</title>\n<style>body { margin: 0; "
				  "background: rgb(250,250,245); }</style>\n</head>\n<body>\n");
	} else {
		strbuf_addstr(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	}
	strbuf_addf(sb,
		    "<svg id=\"perch-fg\" version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "width=\"%d\" "
		    "height=\"%zu\" viewBox=\"0 0 %d %zu\" data-total=\"%" PRIu64 "\" "
		    "data-width=\"%d\" data-pad=\"%d\" data-frame-h=\"%d\" data-top=\"%d\" "
		    "data-depth=\"%" PRIu32 "\">\n",
		    FG_WIDTH, height, FG_WIDTH, height, total, FG_WIDTH, FG_PAD, FG_FRAME_H, FG_TOP,
		    g->max_depth);
	strbuf_addf(sb,
		    "<style>\n"
		    "text { font-family: monospace; font-size: %dpx; fill: rgb(0,0,0); }\n"
		    "#title { font-size: 17px; text-anchor: middle; }\n"
		    "#subtitle { fill: rgb(90,90,90); text-anchor: middle; }\n"
		    ".f text { pointer-events: none; }\n"
		    ".f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.8; cursor: pointer; }\n"
		    ".btn { cursor: pointer; fill: rgb(40,40,160); }\n"
		    ".btn:hover { text-decoration: underline; }\n"
		    ".hidden { display: none; }\n"
		    ".faded rect { opacity: 0.45; }\n"
		    "</style>\n",
		    FG_FONT);
	strbuf_addf(sb,
		    "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%zu\" "
		    "fill=\"rgb(250,250,245)\"/>\n",
		    FG_WIDTH, height);
	strbuf_addf(sb, "<text id=\"title\" x=\"%d\" y=\"22\">", FG_WIDTH / 2);
	xml_add(sb, title, 200);
	strbuf_addstr(sb, "</text>\n");
	if (d)
		add_diff_subtitle(sb, g);
	else
		strbuf_addf(sb,
			    "<text id=\"subtitle\" x=\"%d\" y=\"40\">%" PRIu64 " samples, %" PRIu64
			    ".%03" PRIu64 " ms each; click a frame to zoom, "
			    "Ctrl-F to search</text>\n",
			    FG_WIDTH / 2, total, period / 1000000, period / 1000 % 1000);
	strbuf_addf(sb,
		    "<text id=\"unzoom\" class=\"btn hidden\" x=\"%d\" y=\"22\">"
		    "Reset Zoom</text>\n",
		    FG_PAD);
	strbuf_addf(sb,
		    "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"22\" "
		    "text-anchor=\"end\">Search</text>\n",
		    FG_WIDTH - FG_PAD);
	/* legend: the colour of each kind (diff mode: of each kind of change) */
	if (d)
		add_diff_legend(sb);
	for (i = 0; !d && i < ARRAY_SIZE(legend); i++) {
		struct fnode nd = {.name = (char *)"", .kind = legend[i]};
		int x = FG_PAD + (int)i * 110;

		strbuf_addf(sb, "<rect x=\"%d\" y=\"50\" width=\"12\" height=\"12\" fill=\"", x);
		add_colour(sb, &nd);
		strbuf_addf(sb, "\"/><text x=\"%d\" y=\"60\">%s</text>\n", x + 16,
			    kind_label(legend[i]));
	}
}

/* The frames, depth first with children in name order; those too thin to see are left out. */
static void fg_frames(struct strbuf *sb, const struct fg *g, uint64_t total)
{
	const uint64_t usable = (FG_WIDTH - 2 * FG_PAD) * 100; /* in hundredths of a pixel */
	struct strbuf dtext = STRBUF_INIT;
	uint32_t *stack = NULL;
	size_t nr_s = 0, alloc_s = 0, i;

	strbuf_addstr(sb, "<g id=\"frames\">\n");
	ALLOC_GROW(stack, 1, alloc_s);
	stack[nr_s++] = 0;
	while (total && nr_s) {
		uint32_t n = stack[--nr_s], c, nk = 0;
		const struct fnode *nd = &g->v[n];
		uint64_t x = FG_PAD * 100 + nd->start * usable / total;
		uint64_t w = nd->count * usable / total;
		uint64_t y = FG_TOP + (uint64_t)(g->max_depth - nd->depth) * FG_FRAME_H;
		size_t chars = w > 600 ? (size_t)((w - 600) / (FG_FONT * 60)) : 0;

		if ((double)nd->count * (usable / 100) / (double)total < FG_MIN_PX)
			continue;
		strbuf_addf(
		    sb,
		    "<g class=\"f\" data-n=\"%" PRIu32 "\" data-p=\"%" PRIu32 "\" data-s=\"%" PRIu64
		    "\" data-c=\"%" PRIu64 "\" data-d=\"%" PRIu32 "\" data-k=\"%s\" data-name=\"",
		    n, n ? nd->parent : 0, nd->start, nd->count, nd->depth, kind_label(nd->kind));
		xml_add(sb, nd->name, SIZE_MAX);
		if (nd->dn) {
			strbuf_reset(&dtext);
			add_diff_text(&dtext, nd->dn);
			strbuf_addstr(sb, "\" data-diff=\"");
			xml_add(sb, dtext.buf + 2, SIZE_MAX);
		}
		strbuf_addstr(sb, "\"><title>");
		xml_add(sb, nd->name, SIZE_MAX);
		strbuf_addf(sb, " (%s, %" PRIu64 " samples, ", kind_label(nd->kind), nd->count);
		add_percent(sb, nd->count, total);
		strbuf_addch(sb, '%');
		if (nd->dn)
			xml_add(sb, dtext.buf, SIZE_MAX);
		strbuf_addstr(sb, ")</title><rect x=\"");
		add_px(sb, x);
		strbuf_addf(sb, "\" y=\"%" PRIu64 "\" width=\"", y);
		add_px(sb, w);
		strbuf_addf(sb, "\" height=\"%d\" rx=\"2\" fill=\"", FG_FRAME_H - 1);
		if (nd->dn)
			add_diff_colour(sb, nd->dn, g->scale);
		else
			add_colour(sb, nd);
		strbuf_addstr(sb, "\"/><text x=\"");
		add_px(sb, x + 300);
		strbuf_addf(sb, "\" y=\"%" PRIu64 "\">", y + FG_FRAME_H - 4);
		if (chars >= 3)
			xml_add(sb, nd->name, utf8_len(nd->name) > chars ? chars - 2 : chars);
		strbuf_addstr(sb, "</text></g>\n");
		/* push children in reverse so they come out in name order */
		for (c = nd->child; c; c = g->v[c].next)
			nk++;
		ALLOC_GROW(stack, nr_s + nk, alloc_s);
		nr_s += nk;
		for (c = nd->child, i = 1; c; c = g->v[c].next, i++)
			stack[nr_s - i] = c;
	}
	strbuf_addstr(sb, "</g>\n");
	free(stack);
	strbuf_release(&dtext);
}

/* The SVG document, or (@html) an HTML page with the SVG inline and the script after it.
 * Diff mode when @d is set (@p is then its NEW profile). */
static int fg_write(const struct profile *p, const struct diff *d, FILE *f, int html)
{
	struct fg g = {.p = p, .multi = profile_multi_process(p)};
	struct strbuf sb = STRBUF_INIT;
	const char *pid = profile_meta(p, "pid"), *comm = profile_meta(p, "comm");
	uint64_t total, period = out_period_ns(p);
	size_t i, height;
	char *title;
	uint32_t *vanished = NULL;
	size_t nr_vanished = 0, vh = 0; /* diff mode: the vanished list, its height below */
	int ret = 0;

	ALLOC_GROW(g.v, 1, g.alloc);
	g.v[0] = (struct fnode){.name = xstrdup("all"), .kind = FG_KIND_ROOT};
	g.nr = 1;
	g.d = d;
	if (d)
		fg_from_diff(&g);
	else
		profile_foreach_count(p, add_count, &g);
	layout(&g);
	total = g.v[0].count;
	height = FG_TOP + (g.max_depth + 1) * FG_FRAME_H + FG_BOTTOM;
	if (d) {
		nr_vanished = vanished_list(d, &vanished);
		vh = vanished_lines(nr_vanished) * FG_FRAME_H + 10;
		height += vh;
	}

	if (d)
		title = xasprintf("perch diff: %s \xe2\x86\x92 %s", diff_label(d, DIFF_BASE),
				  diff_label(d, DIFF_NEW));
	else if (pid)
		title = xasprintf("perch: %s%spid %s", comm ? comm : "", comm ? " " : "", pid);
	else
		title = xasprintf("perch%s%s", comm ? ": " : "", comm ? comm : "");
	fg_header(&sb, &g, title, html, height, total, period);
	fg_frames(&sb, &g, total);
	strbuf_addf(&sb, "<text id=\"details\" x=\"%d\" y=\"%zu\"> </text>\n", FG_PAD,
		    height - vh - 10);
	strbuf_addf(&sb, "<text id=\"matched\" x=\"%d\" y=\"%zu\" text-anchor=\"end\"> </text>\n",
		    FG_WIDTH - FG_PAD, height - vh - 10);
	if (d)
		add_vanished(&sb, d, vanished, nr_vanished, height - vh + 12);
	if (html)
		strbuf_addf(&sb, "</svg>\n<script>\n%s</script>\n</body>\n</html>\n", script);
	else
		strbuf_addf(&sb,
			    "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
			    script);

	errno = 0;
	if (fwrite(sb.buf, 1, sb.len, f) != sb.len || fflush(f) || ferror(f))
		ret = errno ? -errno : -EIO;
	for (i = 0; i < g.nr; i++)
		free(g.v[i].name);
	free(g.v);
	free(title);
	free(vanished);
	strbuf_release(&sb);
	return ret;
}

int out_flamegraph_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	return fg_write(p, NULL, f, 0);
}

int out_flamegraph_html_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	/* the script holds no "</": it cannot end the HTML <script> element early */
	return fg_write(p, NULL, f, 1);
}

int out_flamegraph_diff_write(const struct diff *d, const struct output_opts *o, FILE *f)
{
	return fg_write(diff_profile(d, DIFF_NEW), d, f, 0);
}

int out_flamegraph_diff_html_write(const struct diff *d, const struct output_opts *o, FILE *f)
{
	return fg_write(diff_profile(d, DIFF_NEW), d, f, 1);
}
