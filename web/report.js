/* perch report page: decodes the data block src/out/out-html.c writes (its header comment has the
 * format) and draws the summary, the thread timeline, the CPU and memory charts (uPlot), the
 * flame graph / icicle / left-heavy view, the top functions and callers/callees. A time range
 * (dragged on the timeline or a chart), the thread filter, the search and the zoom apply to
 * every view. window.perchReport.state() tells what is shown (perch's tests read it). */
"use strict";
(function () {
  var scriptStart = performance.now(); /* since navigation: the browser's parse of what is above */
  var FH = 16;                 /* flame graph row height, px */
  var LABEL_W = 170;           /* thread names left of the timeline (and the charts' y axis) */
  var ROW_H = 14, ROW_GAP = 3, AXIS_H = 18;
  var KINDS = ["native", "pseudo", "kernel", "JIT", "interpreted", "AOT"];
  var STATES = ["running", "runnable", "sleeping", "I/O", "lock", "binder", "Java monitor",
                "stopped", "unknown"];
  var STATE_COLOURS = ["#2e9e3a", "#b8d432", "#c9d6ea", "#f08c1e", "#d83a34", "#8e44c8", "#8b1a4a",
                       "#555555", "#bbbbbb"];
  var HIT = "rgb(230,0,230)";

  var D = null;                /* the decoded recording */
  var S = {                    /* what the user chose */
    range: null,               /* [a, b) in time units, or null: everything */
    filter: "all",             /* "all", "p:PID" or "t:INDEX" */
    view: "flame",
    search: "",
    zoomPath: null,            /* function ids from the root to the zoomed frame */
    func: -1                   /* the selected function */
  };
  var V = null;                /* what is shown: aggregation, tree, drawn frames */
  var charts = [];
  var timelineBase = null;     /* the timeline without the selection band */
  var $ = function (id) { return document.getElementById(id); };

  /* ------------------------------------------------------------------ decoding */

  /* @n unsigned LEB128 values of column @col ([offset, length] in @area); values < 2^32 */
  function varints(area, col, n) {
    var out = new Uint32Array(n), off = col[0], end = col[0] + col[1], i = 0;
    while (off < end && i < n) {
      var b = area[off++], v = b & 0x7f, mul = 128;
      while (b & 0x80) {
        b = area[off++];
        v += (b & 0x7f) * mul;
        mul *= 128;
      }
      out[i++] = v;
    }
    if (i !== n)
      throw new Error("a column is short: " + i + " of " + n + " values");
    return out;
  }

  /* The same for values of any size (counter values), as doubles. */
  function varints64(area, col, n) {
    var out = new Float64Array(n), off = col[0], end = col[0] + col[1], i = 0;
    while (off < end && i < n) {
      var b = area[off++], v = b & 0x7f, mul = 128;
      while (b & 0x80) {
        b = area[off++];
        v += (b & 0x7f) * mul;
        mul *= 128;
      }
      out[i++] = v;
    }
    if (i !== n)
      throw new Error("a column is short: " + i + " of " + n + " values");
    return out;
  }

  /* Runs of (count, value) pairs, expanded to @n values plus @add into @out. */
  function runs(area, col, n, out, add) {
    var pairs = varints(area, col, countVarints(area, col)), i = 0;
    for (var k = 0; k + 1 < pairs.length; k += 2) {
      var c = Math.min(pairs[k], n - i), v = pairs[k + 1] + add;
      if (c > 16) { /* long runs (a weight of 1 throughout, a thread asleep) natively */
        out.fill(v, i, i + c);
        i += c;
      } else {
        for (; c > 0; c--)
          out[i++] = v;
      }
    }
    if (i !== n)
      throw new Error("a run column holds " + i + " of " + n + " values");
    return out;
  }

  function countVarints(area, col) {
    var n = 0;
    for (var off = col[0], end = col[0] + col[1]; off < end; off++)
      if (!(area[off] & 0x80))
        n++;
    return n;
  }

  async function inflate(b64) {
    var bytes;
    if (Uint8Array.fromBase64) {
      bytes = Uint8Array.fromBase64(b64);
    } else {
      var bin = atob(b64), n = bin.length;
      bytes = new Uint8Array(n);
      for (var i = 0; i < n; i++)
        bytes[i] = bin.charCodeAt(i);
    }
    /* chunks read one by one and joined: Response.arrayBuffer() on the stream takes three
     * times as long in Chromium (300 against 100 ms for 12 MB) */
    var ds = new DecompressionStream("deflate"), w = ds.writable.getWriter();
    w.write(bytes).catch(function () {});
    w.close().catch(function () {});
    var reader = ds.readable.getReader(), chunks = [], size = 0;
    for (;;) {
      var r = await reader.read();
      if (r.done)
        break;
      chunks.push(r.value);
      size += r.value.length;
    }
    var out = new Uint8Array(size), at = 0;
    chunks.forEach(function (c) {
      out.set(c, at);
      at += c.length;
    });
    return out;
  }

  function fnvColour(name, kind) {
    var h = 2166136261, bytes = new TextEncoder().encode(name);
    for (var i = 0; i < bytes.length; i++)
      h = Math.imul(h ^ bytes[i], 16777619) >>> 0;
    var a = h & 0xff, b = (h >>> 8) & 0xff, c = (h >>> 16) & 0xff, r, g, bl;
    /* the same families as the SVG flame graph (src/out/out-flamegraph.c add_colour) */
    switch (kind) {
    case 1: r = g = bl = 165 + a % 30; break;                               /* pseudo */
    case 2: r = 235 + a % 20; g = 150 + b % 30; bl = 185 + c % 30; break;    /* kernel */
    case 3: r = 50 + a % 60; g = 185 + b % 45; bl = 50 + c % 50; break;      /* JIT */
    case 4: r = 60 + a % 50; g = 185 + b % 35; bl = 205 + c % 40; break;     /* interpreted */
    case 5: r = 160 + a % 40; g = 210 + b % 30; bl = 70 + c % 40; break;     /* AOT */
    case 100: r = g = bl = 200; break;                                      /* all */
    case 101: r = 150 + a % 20; g = 165 + a % 20; bl = 210 + a % 20; break;  /* process */
    default: r = 215 + a % 40; g = 80 + b % 150; bl = 40 + c % 50;          /* native */
    }
    return "rgb(" + r + "," + g + "," + bl + ")";
  }

  /* What the first view needs of each thread (the data block's thread entries; the first
   * block @area): {dict, dictWeight, spanStart, spanEnd, spanCls}. The node dictionary with
   * the weight of each entry over the whole recording (aggregate() adds these up when no range
   * is selected) and the timeline's spans of one state class each (perch classifies the
   * samples: src/out/out-html.c state_class). The per-sample columns are decoded on demand
   * (samplesOf). */
  function decodeThreads(area, threads, nn) {
    return threads.map(function (t) {
      var dict = varints(area, t.newnode, t.nodes), dw = varints64(area, t.dict_weight, t.nodes);
      for (var k = 0; k < dict.length; k++)
        if (dict[k] >= nn)
          throw new Error("thread " + t.tid + ": its node " + dict[k] + " is not in the call tree");
      var n = t.nr_spans, a = area, o = t.spans[0], end = o + t.spans[1], at = 0, b, v, mul, j;
      var s0 = new Float64Array(n), s1 = new Float64Array(n), cls = new Uint8Array(n), f = [0, 0, 0];
      for (var i = 0; i < n; i++) {
        for (j = 0; j < 3; j++) { /* (start - the last end, length, class) */
          b = a[o++];
          v = b & 0x7f;
          for (mul = 128; b & 0x80; mul *= 128) {
            b = a[o++];
            v += (b & 0x7f) * mul;
          }
          f[j] = v;
        }
        s0[i] = at + f[0];
        s1[i] = at = s0[i] + f[1];
        cls[i] = f[2] < STATES.length ? f[2] : STATES.length - 1;
      }
      if (o > end)
        throw new Error("thread " + t.tid + ": the span column is short");
      return {dict: dict, dictWeight: dw, spanStart: s0, spanEnd: s1, spanCls: cls};
    });
  }

  /* The per-sample columns of thread @t from the samples block @area (decoded once, when a
   * time range or a sample is first asked for): {times, nodes, states, weights}. */
  function decodeSamples(area, t, nn) {
    var i, n = t.n, dict = t.dict, nd = dict.length;
    var st = runs(area, t.state, n, new Uint8Array(n), 0);
    var w = runs(area, t.weight_col, n, new Uint32Array(n), 1);
    var tm = new Float64Array(n), codes = new Uint32Array(n);
    var a = area, to = t.time[0], tend = to + t.time[1];
    var no = t.node[0], nend = no + t.node[1], acc = 0, last = 0, b, v, mul;
    for (i = 0; i < n; i++) { /* the time and node columns, read in the loop that expands them */
      b = a[to++];
      v = b & 0x7f;
      for (mul = 128; b & 0x80; mul *= 128) {
        b = a[to++];
        v += (b & 0x7f) * mul;
      }
      acc += v;
      tm[i] = acc;
      b = a[no++];
      if (b !== 0) { /* 0: the node of the sample before; k: the dictionary's k-th */
        v = b & 0x7f;
        for (mul = 128; b & 0x80; mul *= 128) {
          b = a[no++];
          v += (b & 0x7f) * mul;
        }
        if (v > nd || dict[v - 1] >= nn)
          throw new Error("thread " + t.tid + ": sample " + i + " names no node");
        last = dict[v - 1];
      }
      codes[i] = last;
    }
    if (to > tend || no > nend)
      throw new Error("thread " + t.tid + ": a sample column is short");
    return {times: tm, nodes: codes, states: st, weights: w};
  }

  function decode(buf) {
    var dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    if (buf.length < 12 || String.fromCharCode(buf[0], buf[1], buf[2], buf[3]) !== "PRPT")
      throw new Error("not a perch report data block");
    if (dv.getUint32(4, true) !== 2)
      throw new Error("data block version " + dv.getUint32(4, true) + " is not 2");
    var jlen = dv.getUint32(8, true);
    var d = JSON.parse(new TextDecoder().decode(buf.subarray(12, 12 + jlen)));
    var area = buf.subarray(12 + jlen), i;
    var nf = d.funcs.name.length, nn = d.nodes.n;

    /* the time each part takes (perchReport.timing.decodeSteps, printed by make bench) */
    var mark = performance.now();
    var step = function (name) {
      var now = performance.now();
      d.steps[name] = now - mark;
      mark = now;
    };
    d.steps = {};
    d.fname = d.funcs.name;
    d.fmod = d.funcs.module;
    d.fkind = Uint8Array.from(d.funcs.kind);
    d.fcolour = new Array(nf);
    for (i = 0; i < nf; i++)
      d.fcolour[i] = fnvColour(d.fname[i], d.fkind[i]);
    /* the name order of functions, for the flame graph's children */
    var order = Array.from({length: nf}, function (_, k) { return k; });
    order.sort(function (x, y) {
      var a = d.fname[x], b = d.fname[y];
      return a < b ? -1 : a > b ? 1 : d.fkind[x] - d.fkind[y];
    });
    d.frank = new Uint32Array(nf);
    for (i = 0; i < nf; i++)
      d.frank[order[i]] = i;

    step("funcs");

    /* the call tree: parents come before their children (locals, not d's fields, in the
     * loops over every node and sample: this page spends most of its time here) */
    var parent = d.parent = new Int32Array(nn), func = d.func = new Int32Array(nn);
    var firstChild = d.firstChild = new Int32Array(nn).fill(-1);
    var nextSib = d.nextSib = new Int32Array(nn).fill(-1);
    var po = d.nodes.parent[0], pend = po + d.nodes.parent[1];
    var fo = d.nodes.func[0], fend = fo + d.nodes.func[1], b, v, mul, fv;
    parent[0] = -1;
    func[0] = -1;
    for (i = 1; i < nn; i++) { /* two varint columns: distance to the parent, function */
      b = area[po++];
      v = b & 0x7f;
      for (mul = 128; b & 0x80; mul *= 128) {
        b = area[po++];
        v += (b & 0x7f) * mul;
      }
      b = area[fo++];
      fv = b & 0x7f;
      for (mul = 128; b & 0x80; mul *= 128) {
        b = area[fo++];
        fv += (b & 0x7f) * mul;
      }
      if (v < 1 || v > i || fv >= nf)
        throw new Error("node " + i + " has no parent or function");
      parent[i] = i - v;
      func[i] = fv;
    }
    if (po > pend || fo > fend)
      throw new Error("the call tree's columns are short");
    for (i = nn - 1; i >= 1; i--) {
      nextSib[i] = firstChild[parent[i]];
      firstChild[parent[i]] = i;
    }
    /* the outermost node of its function on its path (a recursive function counts once):
     * a depth-first walk that counts the open nodes of each function */
    var top = d.top = new Uint8Array(nn);
    var open = new Uint32Array(nf), n = firstChild[0];
    while (n > 0) {
      top[n] = open[func[n]] === 0 ? 1 : 0;
      open[func[n]]++;
      if (firstChild[n] >= 0) {
        n = firstChild[n];
        continue;
      }
      while (n > 0) { /* leave n and the ancestors whose children are all done */
        open[func[n]]--;
        if (nextSib[n] >= 0) {
          n = nextSib[n];
          break;
        }
        n = parent[n];
      }
    }
    step("nodes");
    decodeThreads(area, d.threads, nn).forEach(function (c, k) {
      var t = Object.assign(d.threads[k], c);
      t.index = k;
      t.stalls = [];
      t.frames = [];
      t.samples = null; /* samplesOf(t) */
    });
    step("threads");
    d.series.forEach(function (s) {
      var tm = varints64(area, s.time, s.n), v = varints64(area, s.value, s.n);
      var i, acc = 0, val = 0;
      for (i = 0; i < s.n; i++) {
        acc += tm[i];
        tm[i] = acc;
        val += v[i] % 2 ? -(v[i] + 1) / 2 : v[i] / 2;
        v[i] = val / s.scale;
      }
      s.times = tm;
      s.values = v;
    });
    step("series");
    d.byTid = {};
    d.threads.forEach(function (t) { d.byTid[t.tid] = d.byTid[t.tid] || t; });
    d.stalls = d.stalls.map(function (v) {
      var st = {start: v[0], dur: v[1], tid: v[2], node: v[3], kind: v[4], cut: v[5], reason: v[6]};
      if (d.byTid[st.tid])
        d.byTid[st.tid].stalls.push(st);
      return st;
    });
    /* Android slow (1) and frozen (2) frames: on the main thread's row (tid = pid) */
    var ui = d.byTid[d.meta.pid] || d.threads[0];
    d.frames = (d.frames || []).map(function (v) {
      var fr = {start: v[0], dur: v[1], frozen: v[2] === 2};
      if (ui)
        ui.frames.push(fr);
      return fr;
    });
    /* processes in order of appearance; one row group each */
    d.processes = [];
    var seen = {};
    d.threads.forEach(function (t) {
      if (!(t.pid in seen)) {
        seen[t.pid] = d.processes.length;
        d.processes.push({pid: t.pid, threads: [], name: null});
      }
      var p = d.processes[seen[t.pid]];
      p.threads.push(t);
      if (t.tid === t.pid || p.name === null)
        p.name = t.name;
    });
    if (d.meta.comm && d.processes.length === 1)
      d.processes[0].name = d.meta.comm;
    d.unitS = d.unit_ns / 1e9;
    d.periodU = d.period_ns / d.unit_ns;
    d.end = Math.max(d.end, 1);
    step("rest");
    return d;
  }

  /* The per-sample columns of thread @t, decoded on first use (a time range, a sample under
   * the pointer); the samples block must be in (loadSamples). */
  function samplesOf(t) {
    if (!t.samples) {
      if (!D.sarea)
        throw new Error("the samples block is not in yet");
      t.samples = decodeSamples(D.sarea, t, D.nodes.n);
    }
    return t.samples;
  }

  /* The samples block, inflated once: the first view (the whole recording) does not need it,
   * so it is read after that is drawn, when the browser is idle or a range is first asked for. */
  function loadSamples() {
    if (!D.sareaP)
      D.sareaP = parsed().then(function () {
        return inflate($("perch-samples").textContent.trim());
      }).then(function (b) {
        D.sarea = b;
      });
    return D.sareaP;
  }

  /* The samples block comes after this script in the page: the browser parses it while the
   * first view is drawn (parsing the page takes about 60 ms a megabyte). */
  function parsed() {
    return new Promise(function (res) {
      if (document.readyState !== "loading")
        res();
      else
        document.addEventListener("DOMContentLoaded", function () { res(); });
    });
  }

  var idle = window.requestIdleCallback || function (fn) {
    return setTimeout(function () {
      var end = performance.now() + 10;
      fn({timeRemaining: function () { return end - performance.now(); }});
    }, 1);
  };

  /* In idle time after the first view: the samples block, then each thread's samples. */
  function warmSamples() {
    var k = 0;
    function next(deadline) {
      try {
        while (k < D.threads.length && deadline.timeRemaining() > 3)
          samplesOf(D.threads[k++]);
      } catch (e) {
        fail(e);
        return;
      }
      if (k < D.threads.length)
        idle(next);
    }
    idle(function () {
      loadSamples().then(function () { idle(next); }, fail);
    });
  }

  function fail(e) {
    if (window.perchReport)
      perchReport.error = String(e && e.stack || e);
    $("status").textContent = "cannot show this report: " + e;
    $("status").className = "error";
  }

  /* ------------------------------------------------------------------ formatting */

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"}[c];
    });
  }
  function pct(part, whole) { return whole ? (100 * part / whole).toFixed(1) : "0.0"; }
  function secs(u) { return (u * D.unitS).toFixed(3) + " s"; }
  function fmtDur(ns) {
    var s = ns / 1e9;
    return s >= 60 ? Math.floor(s / 60) + " min " + (s % 60).toFixed(1) + " s" : s.toFixed(2) + " s";
  }

  /* ------------------------------------------------------------------ selection */

  function filteredThreads() {
    var f = S.filter;
    if (f === "all")
      return D.threads;
    if (f.slice(0, 2) === "p:")
      return D.threads.filter(function (t) { return String(t.pid) === f.slice(2); });
    return [D.threads[+f.slice(2)]];
  }

  function lowerBound(a, x) {
    var lo = 0, hi = a.length;
    while (lo < hi) {
      var mid = (lo + hi) >>> 1;
      if (a[mid] < x)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  /* Self weight per call-tree node of the selected threads in the selected range. */
  function aggregate(threads) {
    var self = new Float64Array(D.nodes.n), total = 0;
    threads.forEach(function (t) {
      if (!S.range) { /* the whole recording: per node of the thread's dictionary */
        var dict = t.dict, dw = t.dictWeight;
        for (var k = 0; k < dict.length; k++)
          self[dict[k]] += dw[k];
        total += t.weight;
        return;
      }
      var sm = samplesOf(t), lo = lowerBound(sm.times, S.range[0]), hi = lowerBound(sm.times, S.range[1]);
      var nd = sm.nodes, w = sm.weights;
      for (var i = lo; i < hi; i++) {
        self[nd[i]] += w[i];
        total += w[i];
      }
    });
    return {self: self, total: total};
  }

  function totals(self) {
    var tot = Float64Array.from(self), parent = D.parent;
    for (var i = tot.length - 1; i >= 1; i--)
      tot[parent[i]] += tot[i];
    return tot;
  }

  /* A frame of the shown tree: call-tree node @n of one process group @g (its weights). Its
   * children are made by expand() only as far as they are wide enough to be seen: a tree of
   * a million call paths is never built whole. */
  function treeNode(g, n, depth, parent, name, kind) {
    return {f: n ? D.func[n] : -1, node: n, g: g, v: g.tot[n], s: n ? g.self[n] : 0, c: null,
            d: depth, p: parent, name: n ? D.fname[D.func[n]] : name,
            kind: n ? D.fkind[D.func[n]] : kind, minV: Infinity};
  }

  /* Make the children of @node (and theirs) that weigh at least @minV. */
  function expand(node, minV) {
    minV = Math.max(minV, 1e-9);
    if (node.fixed) {
      node.c.forEach(function (c) { expand(c, minV); });
      return;
    }
    if (node.c && node.minV <= minV)
      return;
    var tot = node.g.tot, kids = [];
    for (var c = D.firstChild[node.node]; c >= 0; c = D.nextSib[c])
      if (tot[c] >= minV)
        kids.push(treeNode(node.g, c, node.d + 1, node, null, 0));
    node.c = kids;
    node.minV = minV;
    kids.forEach(function (k) { expand(k, minV); });
  }

  /* The tree of the selection: one root; when the selection holds several processes, a level
   * per process under it (processes are kept apart). */
  function buildView() {
    var threads = filteredThreads(), byPid = {}, pids = [];
    threads.forEach(function (t) {
      if (!(t.pid in byPid)) {
        byPid[t.pid] = [];
        pids.push(t.pid);
      }
      byPid[t.pid].push(t);
    });
    var all = aggregate(threads), tot = totals(all.self), root;
    var g = {self: all.self, tot: tot};
    if (pids.length > 1) {
      root = {f: -1, node: 0, g: g, v: all.total, s: 0, c: [], d: 0, p: null, name: "all",
              kind: 100, fixed: true};
      pids.forEach(function (pid) {
        var a = aggregate(byPid[pid]);
        if (!a.total)
          return;
        var pr = D.processes.filter(function (p) { return p.pid === pid; })[0];
        root.c.push(treeNode({self: a.self, tot: totals(a.self)}, 0, 1, root,
                             (pr && pr.name || "?") + " (pid " + pid + ")", 101));
      });
    } else {
      root = treeNode(g, 0, 0, null, "all", 100);
    }
    V = {threads: threads, self: all.self, tot: tot, total: all.total, root: root};
    expand(root, all.total * 0.4 / flameWidth());
  }

  function flameWidth() {
    return Math.max(300, $("flame-wrap").clientWidth);
  }

  function layout(root, heavy) {
    (function place(n, x) {
      n.x = x;
      if (!n.c)
        return;
      if (heavy)
        n.c.sort(function (a, b) { return b.v - a.v || D.frank[a.f] - D.frank[b.f]; });
      else
        n.c.sort(function (a, b) {
          return a.f < 0 || b.f < 0 ? (a.name < b.name ? -1 : 1) : D.frank[a.f] - D.frank[b.f];
        });
      n.c.forEach(function (c) {
        place(c, x);
        x += c.v;
      });
    })(root, 0);
  }

  function pathOf(n) {
    var path = [];
    for (; n && n.p; n = n.p)
      path.unshift(n.name + "\u0000" + n.kind);
    return path;
  }

  function findPath(path) {
    var n = V.root;
    function child(m, key) {
      return (m.c || []).filter(function (c) { return c.name + "\u0000" + c.kind === key; })[0];
    }
    for (var i = 0; path && i < path.length; i++) {
      var c = child(n, path[i]);
      if (!c) {
        expand(n, 0); /* a frame too thin at this zoom: make them all */
        c = child(n, path[i]);
      }
      if (!c)
        break;
      n = c;
    }
    return n;
  }

  /* Samples whose stack has a function that @re matches (each sample once), from the whole
   * call tree of the selection: not only from the frames drawn. */
  function searchCount(match) {
    var n = D.nodes.n, above = new Uint8Array(n), m = 0;
    for (var i = 1; i < n; i++) {
      var hit = match[D.func[i]], up = above[D.parent[i]];
      if (hit && !up)
        m += V.tot[i];
      above[i] = up | hit;
    }
    return m;
  }

  /* ------------------------------------------------------------------ flame graph */

  function searchRe() {
    if (!S.search)
      return null;
    try {
      return new RegExp(S.search);
    } catch (e) {
      return new RegExp(S.search.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    }
  }

  function drawFlame() {
    var cv = $("flame"), W = flameWidth(), z = findPath(S.zoomPath), re = searchRe();
    var match = null;
    if (re) {
      match = new Uint8Array(D.fname.length);
      for (var k = 0; k < match.length; k++)
        match[k] = re.test(D.fname[k]) ? 1 : 0;
    }
    expand(z, z.v * 0.4 / W);
    layout(V.root, S.view === "left-heavy");
    var maxDepth = z.d;
    (function deepest(n) {
      if (n.d > maxDepth)
        maxDepth = n.d;
      (n.c || []).forEach(deepest);
    })(z);
    var inverted = S.view !== "flame", rows = maxDepth + 1;
    var H = rows * FH, dpr = window.devicePixelRatio || 1;
    cv.width = Math.round(W * dpr);
    cv.height = Math.round(H * dpr);
    cv.style.width = W + "px";
    cv.style.height = H + "px";
    var ctx = cv.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = "12px monospace";
    ctx.textBaseline = "middle";
    var charW = ctx.measureText("m").width || 7.2;
    V.drawn = [];
    V.zoomed = z;

    function hitOf(n) { return !!match && n.f >= 0 && match[n.f] === 1; }
    /* boxes of one colour filled together and the labels after them: the canvas state changes
     * once per colour, not per box (21,000 boxes of a large recording, 2,000 colours) */
    var byFill = new Map(), labels = [];
    function box(n, x, w, faded, hit) {
      var y = inverted ? n.d * FH : (rows - 1 - n.d) * FH;
      var fill = (faded ? "f" : "") + (hit ? HIT : n.f >= 0 ? D.fcolour[n.f] : fnvColour(n.name, n.kind));
      var list = byFill.get(fill);
      if (!list)
        byFill.set(fill, list = []);
      list.push(x, y, Math.max(w - 0.5, 0.5));
      var chars = Math.floor((w - 6) / charW);
      if (chars >= 3)
        labels.push(faded, n.name.length > chars ? n.name.slice(0, chars - 2) + ".." : n.name, x + 3,
                    y + FH / 2);
      V.drawn.push({n: n, x: x, y: y, w: w, faded: faded, hit: hit});
    }
    /* ancestors of the zoomed frame: full width, faded */
    for (var a = z.p; a; a = a.p)
      box(a, 0, W, true, hitOf(a));
    var scale = z.v ? W / z.v : 0;
    (function draw(n) {
      var x = (n.x - z.x) * scale, w = n.v * scale;
      if (w < 0.4)
        return;
      box(n, x, w, false, hitOf(n));
      (n.c || []).forEach(draw);
    })(z);
    byFill.forEach(function (list, fill) {
      var faded = fill.charAt(0) === "f";
      ctx.globalAlpha = faded ? 0.45 : 1;
      ctx.fillStyle = faded ? fill.slice(1) : fill;
      for (var i = 0; i < list.length; i += 3)
        ctx.fillRect(list[i], list[i + 1], list[i + 2], FH - 1);
    });
    ctx.fillStyle = "#000";
    for (var i = 0; i < labels.length; i += 4) {
      ctx.globalAlpha = labels[i] ? 0.45 : 1;
      ctx.fillText(labels[i + 1], labels[i + 2], labels[i + 3]);
    }
    ctx.globalAlpha = 1;
    var matched = match ? searchCount(match) : 0;
    V.matched = re ? matched : null;
    $("matched").textContent = re ? "Matched: " + pct(matched, V.total) + "% (" + matched +
      " samples)" : "";
    $("zoom-reset").disabled = z === V.root;
    $("zoom-info").textContent = z === V.root ? "" : "zoomed on " + z.name + " (" + z.v +
      " samples, " + pct(z.v, V.total) + "% of the selection)";
    $("flame-title").textContent = {flame: "Flame graph", icicle: "Icicle",
                                    "left-heavy": "Left-heavy"}[S.view];
  }

  function frameAt(ev) {
    var r = $("flame").getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    for (var i = V.drawn.length - 1; i >= 0; i--) {
      var b = V.drawn[i];
      if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + FH)
        return b;
    }
    return null;
  }

  function describe(n) {
    var s = n.name;
    if (n.f >= 0)
      s += "\n" + KINDS[D.fkind[n.f]] + (D.fmod[n.f] ? " in " + D.fmod[n.f] : "");
    s += "\n" + n.v + " samples, " + pct(n.v, V.total) + "% of the selection";
    if (n.s)
      s += "; self " + n.s + " (" + pct(n.s, V.total) + "%)";
    return s;
  }

  /* ------------------------------------------------------------------ tables */

  function funcTotals() {
    var nf = D.fname.length, self = new Float64Array(nf), tot = new Float64Array(nf);
    var func = D.func, top = D.top, vself = V.self, vtot = V.tot;
    for (var i = 1, nn = D.nodes.n; i < nn; i++) {
      var f = func[i];
      self[f] += vself[i];
      if (top[i])
        tot[f] += vtot[i];
    }
    V.fself = self;
    V.ftot = tot;
  }

  function chip(f) {
    return "<span class=\"kind\" title=\"" + KINDS[D.fkind[f]] + "\" style=\"background:" +
      D.fcolour[f] + "\"></span>";
  }

  function fillTable(id, rows, head) {
    var h = "<tr>" + head.map(function (c) {
      return "<th" + (c === "function" ? " class=\"fn\"" : "") + ">" + c + "</th>";
    }).join("") + "</tr>";
    rows.forEach(function (r) {
      h += "<tr class=\"row" + (r.f === S.func ? " sel" : "") + "\" data-f=\"" + r.f + "\">" +
        r.cells.map(function (c, k) {
          return k === r.cells.length - 1 ? "<td class=\"fn\">" + c + "</td>" : "<td>" + c + "</td>";
        }).join("") + "</tr>";
    });
    $(id).innerHTML = h;
  }

  function topRows(key, n) {
    var idx = [], v = key === "self" ? V.fself : V.ftot;
    for (var f = 0; f < v.length; f++)
      if (v[f] > 0)
        idx.push(f);
    idx.sort(function (a, b) { return v[b] - v[a] || D.frank[a] - D.frank[b]; });
    return idx.slice(0, n).map(function (f) {
      return {f: f, cells: [pct(V.fself[f], V.total), V.fself[f], pct(V.ftot[f], V.total), V.ftot[f],
                            chip(f) + esc(D.fname[f]) + (D.fmod[f] ? " <small>" + esc(D.fmod[f]) +
                            "</small>" : "")]};
    });
  }

  function peerRows(map, selfW) {
    var rows = Object.keys(map).map(function (k) { return {f: +k, v: map[k]}; });
    rows.sort(function (a, b) { return b.v - a.v; });
    rows = rows.slice(0, 30).map(function (r) {
      var name = r.f < 0 ? "[thread root]" : chip(r.f) + esc(D.fname[r.f]);
      return {f: r.f, cells: [pct(r.v, V.total), r.v, name]};
    });
    if (selfW)
      rows.unshift({f: -2, cells: [pct(selfW, V.total), selfW, "[self]"]});
    return rows;
  }

  function drawTables() {
    funcTotals();
    var head = ["self %", "self", "total %", "total", "function"];
    fillTable("top-self", topRows("self", 25), head);
    fillTable("top-total", topRows("total", 25), head);
    var F = S.func, callers = {}, callees = {};
    if (F >= 0) {
      for (var i = 1; i < D.nodes.n; i++) {
        if (D.func[i] !== F || !V.tot[i])
          continue;
        if (D.top[i]) {
          var pf = D.parent[i] > 0 ? D.func[D.parent[i]] : -1;
          callers[pf] = (callers[pf] || 0) + V.tot[i];
        }
        for (var c = D.firstChild[i]; c >= 0; c = D.nextSib[c])
          if (V.tot[c])
            callees[D.func[c]] = (callees[D.func[c]] || 0) + V.tot[c];
      }
    }
    var names = document.querySelectorAll(".selfn");
    for (var k = 0; k < names.length; k++)
      names[k].textContent = F >= 0 ? D.fname[F] : "(select a function)";
    fillTable("callers", F >= 0 ? peerRows(callers, 0) : [], ["%", "samples", "function"]);
    fillTable("callees", F >= 0 ? peerRows(callees, V.fself[F]) : [], ["%", "samples", "function"]);
  }

  function drawStalls() {
    var h = "<tr><th>start</th><th>duration</th><th>thread</th><th>kind</th><th class=\"fn\">reason</th></tr>";
    D.stalls.forEach(function (st, i) {
      var t = D.byTid[st.tid];
      h += "<tr class=\"row\" data-stall=\"" + i + "\"><td>" + secs(st.start) + "</td><td>" +
        (st.dur * D.unitS * 1000).toFixed(1) + " ms" + (st.cut ? " (cut)" : "") + "</td><td>" +
        esc((t ? t.name : "?") + " " + st.tid) + "</td><td>" + esc(st.kind) + "</td><td class=\"fn\">" +
        esc(st.reason) + "</td></tr>";
    });
    $("stalls").innerHTML = D.stalls.length ? h : "<tr><td class=\"fn\">none recorded</td></tr>";
  }

  /* ------------------------------------------------------------------ timeline */

  function plotBox() {
    /* the timeline's plot area lines up with the charts' */
    var W = Math.max(400, $("timeline-wrap").clientWidth);
    var c = charts[0], dpr = window.devicePixelRatio || 1;
    if (c && c.bbox.width > 0) {
      var left = c.bbox.left / dpr + c.root.getBoundingClientRect().left -
        $("timeline-wrap").getBoundingClientRect().left;
      return {left: left, width: c.bbox.width / dpr, W: W};
    }
    return {left: LABEL_W, width: W - LABEL_W - 20, W: W};
  }

  var ROW_RGB = [0xf0, 0xf0, 0xea]; /* a timeline row's background */

  function hexRgb(hex) {
    return [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];
  }

  function timelineRows() {
    var rows = [], y = AXIS_H;
    D.processes.forEach(function (p) {
      if (D.processes.length > 1) {
        rows.push({process: p, y: y});
        y += ROW_H + ROW_GAP;
      }
      p.threads.forEach(function (t) {
        rows.push({thread: t, y: y});
        y += ROW_H + ROW_GAP;
      });
    });
    return {rows: rows, height: y + 4};
  }

  function drawTimelineBase() {
    var cv = $("timeline"), pb = plotBox(), tr = timelineRows(), dpr = window.devicePixelRatio || 1;
    var W = pb.W, H = tr.height, span = D.end, scale = pb.width / span;
    var base = document.createElement("canvas");
    cv.width = base.width = Math.round(W * dpr);
    cv.height = base.height = Math.round(H * dpr);
    cv.style.width = W + "px";
    cv.style.height = H + "px";
    var ctx = base.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    /* time axis */
    ctx.fillStyle = "#555";
    var secsSpan = span * D.unitS, step = niceStep(secsSpan / 8);
    for (var s = 0; s <= secsSpan + 1e-9; s += step) {
      var x = pb.left + s / D.unitS * scale;
      ctx.fillRect(x, AXIS_H - 5, 1, 4);
      ctx.fillText(+s.toFixed(6) + " s", x + 2, AXIS_H / 2 - 1);
    }
    var px = Math.ceil(pb.width), X0 = Math.round(pb.left * dpr), DW = Math.ceil(pb.width * dpr);
    var DH = Math.round(ROW_H * dpr), row = ctx.createImageData(Math.max(DW, 1), Math.max(DH, 1));
    var stateRgb = STATE_COLOURS.map(hexRgb);
    tr.rows.forEach(function (r) {
      if (r.process) {
        ctx.fillStyle = "#222";
        ctx.font = "bold 11px system-ui, sans-serif";
        ctx.fillText(fitText(ctx, "process " + r.process.pid + " " + (r.process.name || ""), W - 4), 4,
          r.y + ROW_H / 2);
        ctx.font = "11px system-ui, sans-serif";
        return;
      }
      var t = r.thread;
      ctx.fillStyle = "#111";
      ctx.fillText(fitText(ctx, t.name + " " + t.tid, pb.left - 8), D.processes.length > 1 ? 14 : 4,
        r.y + ROW_H / 2);
      /* per pixel column, the state that took most of its time (from the thread's spans: perch
       * made them from the samples, each up to the next unless the thread was not seen for
       * longer than that one's weight accounts for) */
      var acc = new Float32Array(px * 8), n = t.nr_spans, s0 = t.spanStart, s1 = t.spanEnd;
      var cls = t.spanCls;
      for (var i = 0; i < n; i++) {
        var x0 = s0[i] * scale, x1 = s1[i] * scale, p = Math.floor(x0);
        if (x1 <= p + 1) { /* within one pixel: the common case */
          if (p < px)
            acc[p * 8 + cls[i]] += x1 - x0;
          continue;
        }
        for (; p < x1 && p < px; p++) {
          var cover = Math.min(x1, p + 1) - Math.max(x0, p);
          if (p >= 0 && cover > 0)
            acc[p * 8 + cls[i]] += cover;
        }
      }
      /* the colour of each column, blended over the row's background as a fillRect with
       * that alpha would be, written as pixels (50 rows of 1,000 fillRects each took 200 ms) */
      var pix = row.data;
      for (var dx = 0; dx < DW; dx++) {
        var q = Math.floor(dx / dpr), best = -1, bv = 0, sum = 0;
        for (var c = 0; c < 8 && q < px; c++) {
          sum += acc[q * 8 + c];
          if (acc[q * 8 + c] > bv) {
            bv = acc[q * 8 + c];
            best = c;
          }
        }
        var a = best >= 0 ? Math.min(1, 0.35 + sum) : 0, rgb = best >= 0 ? stateRgb[best] : ROW_RGB;
        for (var k = 0; k < 3; k++)
          pix[dx * 4 + k] = Math.round(rgb[k] * a + ROW_RGB[k] * (1 - a));
        pix[dx * 4 + 3] = 255;
      }
      for (var dy = 1; dy < DH; dy++)
        pix.copyWithin(dy * DW * 4, 0, DW * 4);
      ctx.putImageData(row, X0, Math.round(r.y * dpr));
      /* slow frames: an orange bar over the row (frozen: dark red), at least 2 px wide */
      t.frames.forEach(function (fr) {
        ctx.fillStyle = fr.frozen ? "#7a0010" : "#ff8c00";
        ctx.fillRect(pb.left + fr.start * scale, r.y, Math.max(2, fr.dur * scale), 3);
      });
      /* stalls: a red bar under the row, at least 2 px wide */
      ctx.fillStyle = "#e0001b";
      t.stalls.forEach(function (st) {
        ctx.fillRect(pb.left + st.start * scale, r.y + ROW_H - 3, Math.max(2, st.dur * scale), 3);
      });
    });
    timelineBase = {pb: pb, rows: tr.rows, scale: scale, W: W, H: H, image: base};
    drawTimelineSel();
  }

  function niceStep(x) {
    var p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1e-6)))), m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function fitText(ctx, s, w) {
    if (ctx.measureText(s).width <= w)
      return s;
    while (s.length > 1 && ctx.measureText(s + "..").width > w)
      s = s.slice(0, -1);
    return s + "..";
  }

  function drawTimelineSel(drag) {
    var b = timelineBase, ctx = $("timeline").getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, b.image.width, b.image.height);
    ctx.drawImage(b.image, 0, 0);
    var r = drag || S.range;
    if (!r)
      return;
    var dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    var x0 = b.pb.left + Math.min(r[0], r[1]) * b.scale, x1 = b.pb.left + Math.max(r[0], r[1]) * b.scale;
    ctx.fillStyle = "rgba(40,90,220,0.15)";
    ctx.fillRect(x0, AXIS_H, Math.max(x1 - x0, 1), b.H - AXIS_H);
    ctx.fillStyle = "rgba(40,90,220,0.9)";
    ctx.fillRect(x0, AXIS_H, 1, b.H - AXIS_H);
    ctx.fillRect(Math.max(x1 - 1, x0), AXIS_H, 1, b.H - AXIS_H);
  }

  function timelineUnits(ev) {
    var r = $("timeline").getBoundingClientRect(), b = timelineBase;
    var u = (ev.clientX - r.left - b.pb.left) / b.scale;
    return Math.max(0, Math.min(D.end, u));
  }

  function timelineHover(ev) {
    var r = $("timeline").getBoundingClientRect(), b = timelineBase, y = ev.clientY - r.top;
    var x = ev.clientX - r.left, row = b.rows.filter(function (q) { return y >= q.y && y < q.y + ROW_H; })[0];
    if (!row || !row.thread)
      return null;
    var t = row.thread, u = (x - b.pb.left) / b.scale;
    if (x < b.pb.left)
      return {text: t.name + " (tid " + t.tid + ", pid " + t.pid + "): " + t.n +
        " samples\nclick: only this thread", thread: t};
    var st = t.stalls.filter(function (s) { return u >= s.start - 2 / b.scale && u <= s.start + s.dur + 2 / b.scale; })[0];
    var k = Math.max(0, lowerBound(t.spanStart, u + 1e-9) - 1);
    var text = t.name + " " + t.tid + " at " + secs(u);
    if (t.nr_spans && u >= t.spanStart[k] - 2 * D.periodU && u < t.spanEnd[k] + 2 * D.periodU) {
      text += ": " + STATES[t.spanCls[k]];
      var sm = D.sarea ? samplesOf(t) : null, i = sm ? Math.max(0, lowerBound(sm.times, u + 1e-9) - 1) : 0;
      if (sm && t.n && Math.abs(sm.times[i] - u) < 2 * D.periodU)
        text += (sm.states[i] ? " (" + String.fromCharCode(sm.states[i]) + ")" : "") + "\n" +
          leafName(sm.nodes[i]);
    }
    if (st)
      text += "\nstall: " + (st.dur * D.unitS * 1000).toFixed(1) + " ms " + st.kind + " " + st.reason;
    return {text: text};
  }

  function leafName(node) {
    var names = [];
    for (var n = node; n > 0 && names.length < 6; n = D.parent[n])
      names.push(D.fname[D.func[n]]);
    return names.join(" <- ") || "[no stack]";
  }

  /* ------------------------------------------------------------------ charts */

  function seriesLabel(s) {
    var m = /^thread_cpu_usage\.(\d+)\.(.*)$/.exec(s.name);
    if (m)
      return m[2] + " " + m[1];
    return {cpu_usage: "process", cpu_usage_all_cores: "process (% of all cores)",
            system_cpu_usage: "system (% of all cores)", rss_bytes: "RSS", pss_bytes: "PSS",
            uss_bytes: "USS", swap_bytes: "swap"}[s.name] ||
      s.name.replace(/_bytes$/, "").replace(/_/g, " ");
  }

  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];

  function makeChart(el, list, stepped, toY) {
    if (!list.length) {
      el.classList.add("empty");
      return null;
    }
    var data = align(list, toY);
    var series = [{label: "time (s)", value: function (u, v) { return v == null ? "" : v.toFixed(3) + " s"; }}];
    list.forEach(function (s, i) {
      series.push({label: seriesLabel(s), stroke: PALETTE[i % PALETTE.length], width: 1.25,
                   spanGaps: true, show: i < 10, points: {show: false},
                   paths: stepped ? uPlot.paths.stepped({align: 1}) : undefined,
                   value: function (u, v) { return v == null ? "" : v.toFixed(1); }});
    });
    var opts = {
      width: Math.max(400, $("charts").clientWidth - 28), height: 170, series: series,
      scales: {x: {time: false, range: function () { return [0, D.end * D.unitS]; }}},
      axes: [{label: "", size: 28}, {size: 0}],
      cursor: {drag: {x: true, y: false, setScale: false}, sync: {key: "perch"}},
      legend: {live: true},
      hooks: {setSelect: [function (u) {
        if (u.select.width < 2)
          return;
        var a = u.posToVal(u.select.left, "x"), b = u.posToVal(u.select.left + u.select.width, "x");
        setRange([a / D.unitS, b / D.unitS]);
      }]}
    };
    opts.axes[1] = {size: LABEL_W, values: function (u, vals) { return vals.map(function (v) { return +v.toFixed(1); }); }};
    var chart = new uPlot(opts, data, el);
    chart.over.addEventListener("dblclick", function () { setRange(null); });
    return chart;
  }

  /* uPlot wants one x array: the union of the series' times, null where a series has no
   * point (drawn as steps across). uPlot.join does the same, more slowly. */
  function align(list, toY) {
    var all = [], i, k;
    list.forEach(function (s) { all.push(s.times); });
    var cat = new Float64Array(all.reduce(function (n, a) { return n + a.length; }, 0)), o = 0;
    all.forEach(function (a) { cat.set(a, o); o += a.length; });
    cat.sort();
    var xs = [];
    for (i = 0; i < cat.length; i++)
      if (!i || cat[i] !== cat[i - 1])
        xs.push(cat[i]);
    var data = [xs.map(function (u) { return u * D.unitS; })];
    list.forEach(function (s) {
      var ys = new Array(xs.length).fill(null);
      for (i = 0, k = 0; i < s.n; i++) {
        while (xs[k] < s.times[i])
          k++;
        ys[k] = toY(s.values[i]);
      }
      data.push(ys);
    });
    return data;
  }

  function drawCharts() {
    var cpu = D.series.filter(function (s) { return s.group === "cpu"; });
    var threads = D.series.filter(function (s) { return s.group === "thread"; });
    threads.sort(function (a, b) { return avg(b) - avg(a); });
    var mem = D.series.filter(function (s) { return s.group === "mem"; });
    var order = ["rss_bytes", "pss_bytes", "uss_bytes", "swap_bytes"];
    mem.sort(function (a, b) {
      var x = order.indexOf(a.name), y = order.indexOf(b.name);
      return (x < 0 ? 99 : x) - (y < 0 ? 99 : y) || (a.name < b.name ? -1 : 1);
    });
    charts = [makeChart($("cpu-chart"), cpu.concat(threads), true, function (v) { return v; }),
              makeChart($("mem-chart"), mem, false, function (v) { return v / 1048576; })]
      .filter(Boolean);
  }

  function avg(s) {
    var sum = 0;
    for (var i = 0; i < s.n; i++)
      sum += s.values[i];
    return s.n ? sum / s.n : 0;
  }

  function chartsShowRange() {
    charts.forEach(function (c) {
      if (!S.range) {
        c.setSelect({left: 0, top: 0, width: 0, height: 0}, false);
        return;
      }
      var l = c.valToPos(S.range[0] * D.unitS, "x"), r = c.valToPos(S.range[1] * D.unitS, "x");
      c.setSelect({left: l, top: 0, width: Math.max(1, r - l), height: c.over.clientHeight}, false);
    });
  }

  /* ------------------------------------------------------------------ summary */

  function drawSummary() {
    var m = D.meta, rows = [], procs = D.processes;
    var dur = m.duration_ns ? +m.duration_ns : D.end * D.unit_ns;
    document.title = "perch: " + (m.comm || (procs[0] && procs[0].name) || "report") +
      (m.pid ? " pid " + m.pid : "");
    $("title").textContent = document.title;
    rows.push(["target", procs.map(function (p) {
      return (p.name || "?") + " (pid " + p.pid + ", " + p.threads.length + " threads)";
    }).join("; ") || "none"]);
    if (m.start_time_ns)
      rows.push(["recorded", new Date(+m.start_time_ns / 1e6).toISOString().replace("T", " ").slice(0, 19) + " UTC"]);
    rows.push(["duration", fmtDur(dur)]);
    rows.push(["rate", (1e9 / D.period_ns).toFixed(D.period_ns % 1e6 ? 1 : 0) + " Hz (every " +
      (D.period_ns / 1e6) + " ms)"]);
    rows.push(["mode", m.mode ? m.mode + (m.mode === "cpu" ? " (running threads only)" :
      " (every thread at every tick)") : "unknown"]);
    rows.push(["samples", D.total + " in " + D.threads.length + " threads"]);
    rows.push(["unwind", m.unwind || "not in this recording"]);
    rows.push(["errors", m.errors || "not in this recording"]);
    rows.push(["stalls", D.stalls.length + (m.stall_ms ? " of " + m.stall_ms + " ms or longer" : "") +
      (m.stall_thread && D.byTid[m.stall_thread] ? " on " + D.byTid[m.stall_thread].name + " " +
       m.stall_thread : "")]);
    if (m.frame_counts) {
      var fc = m.frame_counts.split(" ");
      rows.push(["frames", fc[0] + " Android frames: " + fc[1] + " slow, " + fc[2] +
        " frozen (marked over the main thread)"]);
    }
    if (!D.timed)
      rows.push(["note", "no samples in time order: the timeline is empty"]);
    $("summary").innerHTML = rows.map(function (r) {
      return "<tr><th>" + esc(r[0]) + "</th><td>" + esc(r[1]) + "</td></tr>";
    }).join("");
    $("legend").innerHTML = STATES.map(function (s, i) {
      return "<span><i style=\"background:" + STATE_COLOURS[i] + "\"></i>" + s + "</span>";
    }).join("") + "<span><i style=\"background:#e0001b\"></i>stall</span>" +
      (D.frames.length ? "<span><i style=\"background:#ff8c00\"></i>slow frame</span>" : "") +
      KINDS.map(function (k, i) {
        return "<span><i style=\"background:" + fnvColour("", i) + "\"></i>" + k + " frame</span>";
      }).join("");
    var sel = $("thread-filter"), opts = "<option value=\"all\">all threads (" + D.threads.length + ")</option>";
    procs.forEach(function (p) {
      if (procs.length > 1)
        opts += "<option value=\"p:" + p.pid + "\">process " + p.pid + " " + esc(p.name || "") + "</option>";
      p.threads.forEach(function (t) {
        opts += "<option value=\"t:" + t.index + "\">" + (procs.length > 1 ? "\u00a0\u00a0" : "") +
          esc(t.name) + " " + t.tid + " (" + t.weight + " samples)</option>";
      });
    });
    sel.innerHTML = opts;
  }

  /* ------------------------------------------------------------------ updates */

  var waiting = 0; /* refreshes waiting for the samples block */

  function refresh() {
    if (S.range && !D.sarea) { /* a range needs the samples: once they are in */
      waiting++;
      $("range").textContent = "loading the samples...";
      loadSamples().then(function () {
        waiting--;
        refresh();
      }, fail);
      return;
    }
    var t = performance.now();
    buildView();
    V.timing = {aggregate: performance.now() - t};
    t = performance.now();
    drawFlame();
    V.timing.flame = performance.now() - t;
    t = performance.now();
    drawTables();
    V.timing.tables = performance.now() - t;
    $("range").textContent = S.range ? secs(S.range[0]) + " to " + secs(S.range[1]) + " (" +
      V.total + " samples)" : "whole recording (" + V.total + " samples)";
    $("range-reset").disabled = !S.range;
  }

  function setRange(r) {
    if (r) {
      r = [Math.max(0, Math.min(r[0], r[1])), Math.min(D.end, Math.max(r[0], r[1]))];
      if (r[1] - r[0] <= 0)
        r = null;
    }
    S.range = r;
    drawTimelineSel();
    chartsShowRange();
    refresh();
  }

  function setFilter(f) {
    S.filter = f;
    $("thread-filter").value = f;
    refresh();
  }

  function tooltip(ev, text) {
    var tip = $("tooltip");
    if (!text) {
      tip.hidden = true;
      return;
    }
    tip.textContent = text;
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }

  function bind() {
    var drag = null;
    var tl = $("timeline");
    tl.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0 || ev.clientX - tl.getBoundingClientRect().left < timelineBase.pb.left)
        return;
      drag = {a: timelineUnits(ev), x: ev.clientX};
      ev.preventDefault();
    });
    window.addEventListener("mousemove", function (ev) {
      if (drag) {
        drawTimelineSel([drag.a, timelineUnits(ev)]);
        return;
      }
    });
    window.addEventListener("mouseup", function (ev) {
      if (!drag)
        return;
      var d = drag;
      drag = null;
      if (Math.abs(ev.clientX - d.x) >= 3)
        setRange([d.a, timelineUnits(ev)]);
      else
        drawTimelineSel();
    });
    tl.addEventListener("mousemove", function (ev) {
      if (drag)
        return;
      var h = timelineHover(ev);
      tooltip(ev, h && h.text);
    });
    tl.addEventListener("mouseleave", function (ev) { tooltip(ev, null); });
    tl.addEventListener("click", function (ev) {
      var h = timelineHover(ev);
      if (h && h.thread)
        setFilter("t:" + h.thread.index);
    });
    tl.addEventListener("dblclick", function () { setRange(null); });
    $("range-reset").addEventListener("click", function () { setRange(null); });
    $("thread-filter").addEventListener("change", function (ev) { setFilter(ev.target.value); });
    $("view").addEventListener("change", function (ev) {
      S.view = ev.target.value;
      refresh();
    });
    $("search").addEventListener("input", function (ev) {
      S.search = ev.target.value;
      drawFlame();
    });
    var fl = $("flame");
    fl.addEventListener("mousemove", function (ev) {
      var b = frameAt(ev);
      $("details").textContent = b ? describe(b.n).replace(/\n/g, "; ") : "\u00a0";
      tooltip(ev, b && describe(b.n));
    });
    fl.addEventListener("mouseleave", function (ev) { tooltip(ev, null); });
    fl.addEventListener("click", function (ev) {
      var b = frameAt(ev);
      if (!b)
        return;
      S.zoomPath = b.n === V.root ? null : pathOf(b.n);
      if (b.n.f >= 0)
        S.func = b.n.f;
      drawFlame();
      drawTables();
    });
    $("zoom-reset").addEventListener("click", function () {
      S.zoomPath = null;
      drawFlame();
    });
    function pickRow(ev) {
      var tr = ev.target.closest("tr.row");
      if (!tr)
        return;
      if (tr.dataset.stall !== undefined) {
        var st = D.stalls[+tr.dataset.stall];
        setRange([st.start, st.start + Math.max(st.dur, 1)]);
        return;
      }
      var f = +tr.dataset.f;
      if (f >= 0) {
        S.func = f;
        drawTables();
      }
    }
    $("tables").addEventListener("click", pickRow);
    $("stalls").addEventListener("click", pickRow);
    window.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") {
        S.zoomPath = null;
        S.search = "";
        $("search").value = "";
        drawFlame();
      }
    });
    var pending = 0;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        charts.forEach(function (c) { c.setSize({width: Math.max(400, $("charts").clientWidth - 28), height: 170}); });
        drawTimelineBase();
        chartsShowRange();
        drawFlame();
      }, 150);
    });
  }

  function stateShares(t) {
    var out = {};
    t.classes.forEach(function (w, i) {
      if (w)
        out[STATES[i]] = w;
    });
    return out;
  }

  /* what is on the screen, for tests and for anyone scripting the page */
  function state() {
    function row(tbl) {
      return Array.from($(tbl).querySelectorAll("tr.row")).map(function (tr) {
        var cells = Array.from(tr.cells).map(function (c) { return c.textContent; });
        return {f: +tr.dataset.f, name: tr.dataset.f >= 0 ? D.fname[+tr.dataset.f] : cells[cells.length - 1],
                cells: cells};
      });
    }
    return {
      range: S.range ? [S.range[0] * D.unitS, S.range[1] * D.unitS] : null,
      filter: S.filter, view: S.view, search: S.search, samples: V.total, matched: V.matched,
      pending: waiting > 0,
      zoomed: V.zoomed === V.root ? null : V.zoomed.name, zoomedSamples: V.zoomed.v,
      func: S.func >= 0 ? D.fname[S.func] : null,
      frames: V.drawn.map(function (b) {
        return {name: b.n.name, kind: b.n.kind, samples: b.n.v, depth: b.n.d, x: b.x, y: b.y, w: b.w,
                faded: b.faded, hit: b.hit,
                colour: b.n.f >= 0 ? D.fcolour[b.n.f] : fnvColour(b.n.name, b.n.kind)};
      }),
      topSelf: row("top-self"), topTotal: row("top-total"), callers: row("callers"),
      callees: row("callees"),
      timeline: {plot: timelineBase.pb, rows: timelineBase.rows.map(function (r) {
        return r.thread ? {tid: r.thread.tid, pid: r.thread.pid, name: r.thread.name, y: r.y,
                           stalls: r.thread.stalls.length, states: stateShares(r.thread)}
          : {process: r.process.pid, y: r.y};
      })},
      charts: charts.map(function (c) {
        var r = c.over.getBoundingClientRect();
        return {left: r.left, width: r.width, series: c.series.length - 1};
      }),
      end: D.end * D.unitS, first: D.first * D.unitS, unit: D.unitS,
      processes: D.processes.length, threads: D.threads.length
    };
  }

  async function main() {
    var api = window.perchReport = {ready: false, error: null, state: state, colour: fnvColour,
                                     setRange: function (a, b) { setRange(a == null ? null : [a / D.unitS, b / D.unitS]); }};
    try {
      var t0 = performance.now();
      var buf = await inflate($("perch-data").textContent.trim());
      var t1 = performance.now();
      D = decode(buf);
      var t2 = performance.now();
      var steps = {}, last = t2;
      var step = function (name) {
        var now = performance.now();
        steps[name] = now - last;
        last = now;
      };
      drawSummary();
      drawCharts();
      step("charts");
      /* uPlot lays its charts out in a microtask (and runs its hooks in one more): the
       * timeline lines up with them after those, without waiting for a task (that lets the
       * browser render the half-drawn page first) */
      for (var m = 0; m < 3; m++)
        await Promise.resolve();
      step("charts-layout");
      drawTimelineBase();
      step("timeline");
      drawStalls();
      refresh();
      step("refresh");
      bind();
      $("status").textContent = "";
      await new Promise(function (res) { requestAnimationFrame(function () { requestAnimationFrame(res); }); });
      api.timing = {inflate: t1 - t0, decode: t2 - t1, decodeSteps: D.steps, draw: performance.now() - t2,
                    sinceStart: performance.now(), scriptStart: scriptStart, steps: steps, refresh: V.timing, nodes: D.nodes.n,
                    funcs: D.fname.length};
      api.ready = true;
      document.body.dataset.ready = "1";
      warmSamples();
    } catch (e) {
      api.error = String(e && e.stack || e);
      $("status").textContent = "cannot show this report: " + e;
      $("status").className = "error";
      document.body.dataset.ready = "error";
      throw e;
    }
  }
  main();
})();
