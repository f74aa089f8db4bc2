/* The report's script: inlined as is. It reads the JSON in #report-data and draws the query table
   (filters, sorting, paging) and a query's drill-down when it is opened. Data is only ever put
   into the page as text nodes, never as HTML.

   Views: every element with data-view="NAME" is handed to views.NAME(root, DATA) once the page
   is parsed; a later script may register more views (window.ragmeterViews) before that, using
   the element builder and number format of this one (window.ragmeterKit). */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var views = window.ragmeterViews = window.ragmeterViews || {};
  window.ragmeterKit = {h: h, fmt: fmt};  /* for the views of later scripts (compare.js) */

  function h(tag, props) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (key) {
      var value = props[key];
      if (value === null || value === undefined || value === false) { return; }
      if (key === "text") { node.textContent = value; } else if (key === "on") {
        Object.keys(value).forEach(function (ev) { node.addEventListener(ev, value[ev]); });
      } else { node.setAttribute(key, value === true ? "" : value); }
    });
    for (var i = 2; i < arguments.length; i++) { append(node, arguments[i]); }
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) { return; }
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function trim(text) { return text.indexOf(".") >= 0 ? text.replace(/0+$/, "").replace(/\.$/, "") : text; }
  function grouped(x, digits) {
    return x.toLocaleString("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits});
  }
  /* The same formats as ragmeter/report/units.py. */
  function fmt(value, unit) {
    if (value === null || value === undefined) { return ""; }
    if (typeof value === "boolean") { return value ? "yes" : "no"; }
    var x = value * unit.scale, text;
    if (unit.style === "fixed4") { text = x.toFixed(4); }
    else if (unit.style === "int") { text = grouped(Math.round(x), 0); }
    else if (unit.style === "percent") { text = x.toFixed(1); }
    else if (unit.style === "usd") { text = Math.abs(x) >= 0.01 ? grouped(x, 4) : (x ? trim(x.toPrecision(2)) : "0"); }
    else { text = grouped(x, Math.abs(x) < 10 ? 2 : Math.abs(x) < 100 ? 1 : 0); }
    return unit.suffix ? text + " " + unit.suffix : text;
  }
  function str(i) { return i === null || i === undefined ? null : DATA.strings[i]; }
  /* A file and heading path, given as indexes into DATA.strings. */
  function place(path, heading) {
    return [h("span", {"class": "path", text: str(path) || ""}), str(heading) ? h("span", {"class": "heading", text: " › " + str(heading)}) : null];
  }
  function absent(text) { return h("span", {"class": "absent", text: text}); }
  function kv(pairs) {
    var box = h("div", {"class": "kv"});
    pairs.forEach(function (p) { if (p[1] !== null && p[1] !== undefined && p[1] !== "") { append(box, [h("span", {text: p[0]}), h("span", {}, p[1])]); } });
    return box.childNodes.length ? box : null;
  }

  /* ---------- which queries fail, and how they sort ---------- */
  var M = DATA.metrics;
  function fails(q, i, threshold) {
    var v = q.v[i];
    if (v === null || v === undefined) { return false; }
    var lowerBetter = M[i].hi === false;
    if (threshold === null) { return lowerBetter ? v > 0 : v <= 0; }
    return lowerBetter ? v > threshold : v < threshold;
  }
  function failsAny(q) {
    for (var i = 0; i < M.length; i++) { if (!M[i].op && fails(q, i, null)) { return true; } }
    return false;
  }
  function reasonOf(q, i) {
    var found = (q.u || []).filter(function (pair) { return pair[0] === i; })[0];
    return found ? str(found[1]) : (M[i].skip || "not scored");
  }

  /* ---------- the drill-down ---------- */
  function metricValues(q) {
    var box = h("div", {"class": "values"});
    M.forEach(function (m, i) {
      var v = q.v[i];
      append(box, h("div", {}, h("span", {text: m.name}),
        v === null || v === undefined ? h("span", {"class": "why", text: "not scored: " + reasonOf(q, i)}) : h("b", {text: fmt(v, m.unit)})));
    });
    return box;
  }
  function goldList(q) {
    if (q.g) {
      return h("ol", {}, q.g.map(function (g) {
        var found = g[3] > 0;
        return h("li", {}, h("span", {"class": "mark " + (found ? "hit" : "miss"), text: found ? "✓" : "✗"}), place(g[0], g[1]),
          g[2].length ? h("div", {"class": "muted", text: "snippet: " + g[2].map(function (s) { return "“" + s + "”"; }).join(" or ")}) : null,
          h("span", {"class": "tag" + (found ? "" : " gold-miss"), text: found ? "first at rank " + g[3] : "not retrieved"}));
      }));
    }
    if (q.gi) {
      return h("ol", {}, q.gi.map(function (g) {
        var found = g[2] > 0;
        return h("li", {}, h("span", {"class": "mark " + (found ? "hit" : "miss"), text: found ? "✓" : "✗"}), h("span", {"class": "path", text: g[0]}),
          h("span", {"class": "muted", text: " gain " + g[1]}), h("span", {"class": "tag" + (found ? "" : " gold-miss"), text: found ? "rank " + g[2] : "not retrieved"}));
      }));
    }
    if (q.d && q.d.answerable === false) { return absent("None: the question is marked unanswerable."); }
    return absent("Not available (see the notes above the table).");
  }
  function chunkItem(entry, rank, k) {
    var c = DATA.chunks[entry[0]], gain = entry[2], golds = entry[3];
    var relevant = (gain !== null && gain !== undefined && gain > 0) || golds.length > 0;
    var text = c[3];
    return h("li", {"class": k && rank > k ? "beyond" : null, value: rank},
      h("span", {"class": "mark " + (relevant ? "hit" : ""), text: relevant ? "✓" : "·", title: gain === null || gain === undefined ? null : "gain " + gain}),
      c[1] !== null && c[1] !== undefined ? place(c[1], c[2]) : h("span", {"class": "path", text: c[0] || "(no id)"}),
      c[0] && c[1] !== null && c[1] !== undefined ? h("span", {"class": "muted", text: " id " + c[0]}) : null,
      entry[1] !== null && entry[1] !== undefined ? h("span", {"class": "muted", text: " score " + entry[1]}) : null,
      golds.map(function (g) { return h("span", {"class": "tag", text: "gold #" + (g + 1)}); }),
      text ? h("details", {"class": "text"}, h("summary", {text: "show text"}), h("blockquote", {text: text})) : null);
  }
  function retrievedList(q) {
    if (!q.r) { return absent("Not available (see the notes above the table)."); }
    if (!q.r.length) { return absent(q.e ? "Nothing retrieved (the call failed)." : "Nothing retrieved."); }
    return [h("ol", {}, q.r.map(function (entry, i) { return chunkItem(entry, i + 1, q.k); })),
      q.rn ? h("div", {"class": "muted", text: "top " + q.r.length + " of " + q.rn + " shown"}) : null];
  }
  function answerBlock(q) {
    var parts = [q.a ? h("blockquote", {text: q.a}) : absent(q.e ? "No answer: the call failed." : "No answer recorded.")];
    parts.push(kv([["abstained", q.ab === undefined ? null : (q.ab ? "yes" : "no") + (q.abs ? " (decided by " + q.abs + ")" : "")],
      ["error", q.e], ["timed out", q.to ? "yes" : null], ["expected", q.ex && q.ex.length ? q.ex.join(" · ") : null]]));
    if (q.rf && q.rf.length) {
      parts.push(h("h4", {text: "References (" + q.rf.length + ")"}), h("ol", {}, q.rf.map(function (r) {
        return h("li", {}, place(r[0], r[1]), r[2].length ? r[2].map(function (g) { return h("span", {"class": "tag", text: "gold #" + (g + 1)}); })
          : (q.g ? h("span", {"class": "tag gold-miss", text: "not a gold support"}) : null));
      })));
    }
    return parts;
  }
  function judgeBlock(j) {
    var verdict = j.v !== undefined ? "score " + j.v : "not scored: " + (j.why || j.c || "no reason recorded") + (j.c && j.why ? " (" + j.c + ")" : "");
    var raw = (j.raw || []).filter(function (r) { return r !== null; });
    var details = Object.keys(j.d || {}).map(function (key) {
      var value = j.d[key];
      if (Array.isArray(value)) { value = value.filter(function (v) { return v !== null; }); }
      return [key.replace(/_/g, " "), Array.isArray(value) ? (value.length ? value.join(" · ") : "none") : value];
    });
    return h("div", {"class": "judge"},
      h("div", {}, h("b", {text: j.n || "judge"}), j.m && j.m !== j.n ? " → " + j.m : "", ": ", h("span", {"class": "verdict", text: verdict}),
        j.sp ? h("span", {"class": "tag", text: "spot-check"}) : null, j.src ? h("span", {"class": "muted", text: " (" + j.src + ")"}) : null,
        j.mo !== undefined ? h("span", {"class": "muted", text: " · " + str(j.mo)}) : null),
      j.ra ? h("blockquote", {text: j.ra}) : null,
      kv(details),
      raw.length ? h("details", {}, h("summary", {text: "raw repl" + (raw.length > 1 ? "ies (" + raw.length + ")" : "y")}),
        raw.map(function (r) { return h("pre", {text: r}); }))
        : (j.raw && j.raw.length ? absent("Raw replies left out to keep this file small (they are in per_query.jsonl).")
          : (j.src ? null : absent("No raw reply recorded."))));
  }
  function traceBlock(t) {
    var parts = [h("h4", {text: "Trace"}), kv([["status", t.st], ["why", t.rs], ["where", t.w], ["search iterations", t.n],
      ["IterationsForAllGoodResults", t.it !== undefined ? String(t.it) : (t.itr ? "undefined: " + t.itr : null)],
      ["good results known", t.gk === undefined ? null : (t.gk ? "yes" : "no (all good results the trace found)")],
      ["duplicates by key", t.dk ? Object.keys(t.dk).map(function (k) { return k + " " + t.dk[k]; }).join(" · ") : null],
      ["unscored results", t.un || null]])];
    var names = Object.keys(t.s || {});
    if (names.length) {
      var n = Math.min(30, t.s[names[0]].length), head = [h("th", {text: "series"})];
      for (var i = 1; i <= n; i++) { head.push(h("th", {"class": "num", text: "i=" + i})); }
      parts.push(h("h4", {text: "Series by iteration"}), h("div", {"class": "table-wrap"}, h("table", {"class": "series"},
        h("thead", {}, h("tr", {}, head)),
        h("tbody", {}, names.map(function (name) {
          return h("tr", {}, h("th", {text: name}), t.s[name].slice(0, n).map(function (v) { return h("td", {"class": "num", text: v === null ? "" : String(v)}); }));
        })))));
    }
    if (t.sq && t.sq.length) {
      parts.push(h("h4", {text: "Searches by iteration"}), h("ol", {}, t.sq.map(function (queries) { return h("li", {text: queries.join(" · ")}); })));
    }
    return parts;
  }
  function drill(q) {
    var box = h("div", {"class": "drill"});
    append(box, q.q !== undefined ? h("p", {"class": "question", text: q.q}) : absent("No question text recorded."));
    if (q.x) { append(box, kv(Object.keys(q.x).map(function (key) { return [key, q.x[key]]; }))); }
    var dims = Object.keys(q.d || {}).map(function (key) { return [key, String(q.d[key])]; });
    if (q.t) { dims.push(["tags", q.t.join(", ")]); }
    append(box, kv(dims));
    append(box, [h("h4", {text: "Values"}), metricValues(q)]);
    if (q.ag) { append(box, traceBlock(q.ag)); return box; }
    append(box, h("div", {"class": "cols"},
      h("div", {"class": "gold"}, h("h4", {text: "Gold supports" + (q.g ? " (" + q.g.length + ")" : q.gi ? " (" + q.gi.length + ")" : "")}), goldList(q)),
      h("div", {"class": "retrieved"}, h("h4", {text: "Retrieved" + (q.k ? " (k = " + q.k + ")" : "")}), retrievedList(q))));
    if (q.r || q.a !== undefined || q.e || q.ex) { append(box, [h("h4", {text: "Answer"}), answerBlock(q)]); }
    if (q.j) { append(box, [h("h4", {text: "Judges (" + q.j.length + ")"}), q.j.map(judgeBlock)]); }
    return box;
  }

  /* ---------- the query table ---------- */
  views.queries = function (root, D) {
    var queries = D.queries, byId = {};
    queries.forEach(function (q, i) { q._i = i; byId[q.id] = q; });
    var $ = function (id) { return root.querySelector("#" + id); };
    var state = {search: "", category: "", tag: "", fail: "", threshold: null, sort: "", page: 0, size: 50, dims: {}, open: {}};
    var shown = queries;

    function options(select, values, label) {
      values.forEach(function (v) { append(select, h("option", {value: v, text: label ? label(v) : v})); });
    }
    var categories = {}, tags = {};
    queries.forEach(function (q) {
      if (q.d && q.d.category !== undefined) { categories[q.d.category] = true; }
      (q.t || []).forEach(function (t) { tags[t] = true; });
    });
    options($("q-category"), Object.keys(categories));
    options($("q-tag"), Object.keys(tags).sort());
    if (!Object.keys(categories).length) { $("q-category").parentNode.hidden = true; }
    if (!Object.keys(tags).length) { $("q-tag").parentNode.hidden = true; }
    var ranked = M.map(function (m, i) { return i; }).filter(function (i) { return M[i].hi !== null; });
    options($("q-fail"), ranked.filter(function (i) { return !M[i].op; }), function (i) { return M[i].name; });
    ranked.forEach(function (i) {
      append($("q-sort"), [h("option", {value: "w" + i, text: "worst first: " + M[i].name}), h("option", {value: "b" + i, text: "best first: " + M[i].name})]);
    });

    function matches(q) {
      if (state.search) {
        if (q._hay === undefined) { q._hay = (q.id + "\n" + (q.q || "") + "\n" + (q.a || "")).toLowerCase(); }
        if (q._hay.indexOf(state.search) < 0) { return false; }
      }
      if (state.category && !(q.d && String(q.d.category) === state.category)) { return false; }
      if (state.tag && (q.t || []).indexOf(state.tag) < 0) { return false; }
      for (var dim in state.dims) {
        var want = state.dims[dim];
        var have = dim === "tag" ? (q.t || []) : [q.d && q.d[dim] !== undefined ? String(q.d[dim]) : null];
        if (have.indexOf(want) < 0) { return false; }
      }
      if (state.fail === "*") { return failsAny(q); }
      if (state.fail !== "") { return fails(q, +state.fail, state.threshold); }
      return true;
    }
    function sortKey() {
      if (!state.sort) { return null; }
      var i = +state.sort.slice(1), worst = state.sort[0] === "w", lowerBetter = M[i].hi === false;
      var ascending = worst !== lowerBetter;
      return function (a, b) {
        var x = a.v[i], y = b.v[i];
        var xn = x === null || x === undefined, yn = y === null || y === undefined;
        if (xn || yn) { return xn === yn ? a._i - b._i : (xn ? 1 : -1); }
        return x === y ? a._i - b._i : ((x < y) === ascending ? -1 : 1);
      };
    }
    function columns() {
      var cols = D.headline.slice();
      [state.sort ? +state.sort.slice(1) : null, state.fail !== "" && state.fail !== "*" ? +state.fail : null].forEach(function (i) {
        if (i !== null && cols.indexOf(i) < 0) { cols.push(i); }
      });
      return cols;
    }
    function head(cols) {
      var hasCat = queries.some(function (q) { return q.d && q.d.category !== undefined; }) || D.kind === "agentic";
      var cells = [h("th", {"class": "id", text: D.kind === "agentic" ? "trace" : "query"}),
        h("th", {"class": "q", text: D.kind === "agentic" ? "task" : "question"}),
        hasCat ? h("th", {"class": "cat", text: D.kind === "agentic" ? "status" : "category"}) : null];
      cols.forEach(function (i) { cells.push(h("th", {"class": "num metric", text: M[i].name, title: M[i].name})); });
      var thead = root.querySelector("#q-table thead");
      thead.textContent = "";
      append(thead, h("tr", {}, cells));
      return hasCat;
    }
    function row(q, cols, hasCat) {
      var failIndex = state.fail !== "" && state.fail !== "*" ? +state.fail : null;
      var tr = h("tr", {"class": "row" + (state.open[q.id] ? " open" : ""), tabindex: "0", "data-id": q.id, "aria-expanded": state.open[q.id] ? "true" : "false"},
        h("td", {"class": "id", text: q.id, title: q.id}),
        h("td", {"class": "q", text: q.q || "", title: q.q || ""}),
        hasCat ? h("td", {"class": "cat", text: D.kind === "agentic" ? (q.ag && q.ag.st) || "" : (q.d && q.d.category) || ""}) : null);
      cols.forEach(function (i) {
        var v = q.v[i], none = v === null || v === undefined;
        append(tr, h("td", {"class": "num" + (none ? " unscored empty" : "") + (i === failIndex && fails(q, i, state.threshold) ? " fail" : ""),
          title: none ? "not scored: " + reasonOf(q, i) : null, text: none ? "" : fmt(v, M[i].unit)}));
      });
      function toggle() {
        if (state.open[q.id]) { delete state.open[q.id]; } else { state.open[q.id] = true; remember(q.id); }
        draw();
        var again = root.querySelector("tr.row[data-id=\"" + CSS.escape(q.id) + "\"]");
        if (again) { again.focus({preventScroll: true}); }
      }
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
      return tr;
    }
    function remember(id) {
      try { history.replaceState(null, "", "#q=" + encodeURIComponent(id)); } catch (e) { /* file:// may refuse */ }
    }
    function pagerButton(label, page, disabled) {
      return h("button", {type: "button", disabled: disabled, text: label, on: {click: function () { state.page = page; draw(); }}});
    }
    function draw() {
      var cols = columns(), hasCat = head(cols);
      var pages = Math.max(1, Math.ceil(shown.length / state.size));
      state.page = Math.min(state.page, pages - 1);
      var start = state.page * state.size, slice = shown.slice(start, start + state.size);
      var tbody = root.querySelector("#q-table tbody");
      tbody.textContent = "";
      slice.forEach(function (q) {
        append(tbody, row(q, cols, hasCat));
        if (state.open[q.id]) { append(tbody, h("tr", {"class": "detail"}, h("td", {colspan: cols.length + 3}, drill(q)))); }
      });
      $("q-status").textContent = shown.length === queries.length
        ? queries.length.toLocaleString("en-US") + " " + (D.kind === "agentic" ? "traces" : "queries")
        : shown.length.toLocaleString("en-US") + " of " + queries.length.toLocaleString("en-US") + " match";
      if (shown.length) { $("q-status").textContent += "; showing " + (start + 1) + "–" + (start + slice.length); }
      var pager = $("q-pager");
      pager.textContent = "";
      if (pages > 1) {
        append(pager, [pagerButton("« first", 0, state.page === 0), pagerButton("‹ previous", state.page - 1, state.page === 0),
          h("span", {text: "page " + (state.page + 1) + " of " + pages}),
          pagerButton("next ›", state.page + 1, state.page >= pages - 1), pagerButton("last »", pages - 1, state.page >= pages - 1)]);
      }
      var size = h("select", {"aria-label": "rows per page", on: {change: function (e) { state.size = +e.target.value; state.page = 0; draw(); }}});
      [25, 50, 100, 200].forEach(function (n) { append(size, h("option", {value: n, text: n + " per page", selected: n === state.size})); });
      append(pager, size);
      chips();
    }
    function chips() {
      var box = $("q-chips");
      box.textContent = "";
      Object.keys(state.dims).forEach(function (dim) {
        append(box, h("span", {"class": "chip"}, dim + " = " + state.dims[dim],
          h("button", {type: "button", title: "remove this filter", text: "×", on: {click: function () { delete state.dims[dim]; refilter(); }}})));
      });
    }
    function refilter() {
      shown = queries.filter(matches);
      var key = sortKey();
      if (key) { shown = shown.slice().sort(key); }
      state.page = 0;
      draw();
    }
    function bind(id, field, read) {
      $(id).addEventListener("input", function (e) { state[field] = read ? read(e.target.value) : e.target.value; refilter(); });
    }
    bind("q-search", "search", function (v) { return v.trim().toLowerCase(); });
    bind("q-category", "category");
    bind("q-tag", "tag");
    bind("q-fail", "fail");
    bind("q-threshold", "threshold", function (v) { return v === "" || isNaN(+v) ? null : +v; });
    bind("q-sort", "sort");
    $("q-worst").addEventListener("click", function () {
      var i = state.fail !== "" && state.fail !== "*" ? +state.fail : state.sort ? +state.sort.slice(1) : D.headline[0];
      if (i === undefined || M[i].hi === null) { i = ranked[0]; }
      if (i === undefined) { return; }
      state.sort = "w" + i;
      $("q-sort").value = state.sort;
      refilter();
    });
    var known = {tag: Object.keys(tags).length > 0};
    queries.forEach(function (q) { Object.keys(q.d || {}).forEach(function (dim) { known[dim] = true; }); });
    document.querySelectorAll("th.group-head").forEach(function (th) {
      if (!known[th.getAttribute("data-dim")]) {  /* the rows do not say (doc_type): nothing to list */
        th.classList.remove("group-head");
        th.removeAttribute("title");
        return;
      }
      th.addEventListener("click", function () {
        state.dims[th.getAttribute("data-dim")] = th.getAttribute("data-value");
        refilter();
        root.scrollIntoView();
      });
    });
    var wanted = /^#q=(.+)$/.exec(location.hash);
    var target = wanted ? byId[decodeURIComponent(wanted[1])] : null;
    refilter();
    if (target) {
      state.open[target.id] = true;
      state.page = Math.floor(shown.indexOf(target) / state.size);
      draw();
      var opened = root.querySelector("tr.row.open");
      if (opened) { opened.scrollIntoView(); }
    }
  };

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-view]").forEach(function (root) {
      var view = views[root.getAttribute("data-view")];
      if (view) { view(root, DATA); }
    });
  });
})();
