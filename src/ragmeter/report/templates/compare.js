/* The compare view's per-query table: every system's value of one metric side by side, the
   candidate's delta against the baseline, sorted by delta; "got worse" keeps the queries where
   the candidate is worse, worst first. Reads DATA.compare (report/compare_view.py: view_data)
   and DATA.queries (the baseline's questions and categories). Text only, never HTML. */
(function () {
  "use strict";
  var views = window.ragmeterViews = window.ragmeterViews || {};

  views.compare = function (root, DATA) {
    var kit = window.ragmeterKit, h = kit.h, fmt = kit.fmt;
    var C = DATA.compare, M = C.metrics, S = C.systems, base = C.baseline;
    var $ = function (id) { return root.querySelector("#" + id); };
    var info = {};
    (DATA.queries || []).forEach(function (q) { info[q.id] = q; });
    var rows = C.ids.map(function (id, i) {
      var q = info[id] || {};
      return {id: id, i: i, q: q.q || "", cat: q.d && q.d.category !== undefined ? String(q.d.category) : ""};
    });
    var others = S.map(function (s, i) { return i; }).filter(function (i) { return i !== base; });
    var state = {metric: 0, cand: others[0], sort: "worst", only: "", category: "", search: "", page: 0, size: 50, open: {}};

    function option(select, value, text) { select.appendChild(h("option", {value: value, text: text})); }
    M.forEach(function (m, i) { option($("c-metric"), i, m.name); });
    others.forEach(function (i) { option($("c-cand"), i, C.letters[i] + " " + S[i]); });
    var cats = {};
    rows.forEach(function (r) { if (r.cat) { cats[r.cat] = true; } });
    Object.keys(cats).forEach(function (c) { option($("c-category"), c, c); });
    if (!Object.keys(cats).length) { $("c-category").parentNode.hidden = true; }
    if (others.length < 2) { $("c-cand").parentNode.hidden = true; }
    if (!M.length) { $("c-status").textContent = "No quality metric has per-query values in every system."; return; }

    function value(m, s, r) { return C.values[m][s][r.i]; }
    /* The candidate's change, signed so that > 0 is better (null when either value is missing). */
    function gain(r, m, s) {
      var a = value(m, base, r), b = value(m, s, r);
      if (a === null || a === undefined || b === null || b === undefined) { return null; }
      return M[m].hi === false ? a - b : b - a;
    }
    function deltaText(m, d) {
      if (d === null) { return ""; }
      var text = fmt(Math.abs(d), M[m].unit);
      return (d > 0 ? "+" : d < 0 ? "−" : "") + text;
    }
    function shown() {
      var m = state.metric, s = state.cand, needle = state.search;
      var list = rows.filter(function (r) {
        if (state.category && r.cat !== state.category) { return false; }
        if (needle && (r.id + "\n" + r.q).toLowerCase().indexOf(needle) < 0) { return false; }
        var g = gain(r, m, s);
        if (state.only === "worse") { return g !== null && g < 0; }
        if (state.only === "better") { return g !== null && g > 0; }
        return true;
      });
      if (state.sort) {
        var sign = state.sort === "worst" ? 1 : -1;
        list = list.slice().sort(function (a, b) {
          var x = gain(a, m, s), y = gain(b, m, s);
          if (x === null || y === null) { return x === y ? a.i - b.i : (x === null ? 1 : -1); }
          return x === y ? a.i - b.i : sign * (x - y);
        });
      }
      return list;
    }
    function detail(r) {
      var head = [h("th", {text: "metric"})];
      S.forEach(function (name, i) { head.push(h("th", {"class": "num", text: C.letters[i] + " " + name})); });
      others.forEach(function (i) { head.push(h("th", {"class": "num", text: "Δ " + C.letters[i]})); });
      var body = M.map(function (metric, m) {
        var cells = [h("th", {text: metric.name})];
        S.forEach(function (name, i) { cells.push(h("td", {"class": "num", text: fmt(value(m, i, r), metric.unit)})); });
        others.forEach(function (i) {
          var g = gain(r, m, i), d = g === null ? null : (metric.hi === false ? -g : g);
          cells.push(h("td", {"class": "num" + (g > 0 ? " better" : g < 0 ? " worse" : ""), text: deltaText(m, d)}));
        });
        return h("tr", {}, cells);
      });
      return h("div", {"class": "drill"}, r.q ? h("p", {"class": "question", text: r.q}) : null,
        h("div", {"class": "table-wrap"}, h("table", {"class": "cmp-detail"}, h("thead", {}, h("tr", {}, head)), h("tbody", {}, body))));
    }
    function draw() {
      var m = state.metric, s = state.cand, list = shown(), metric = M[m];
      var pages = Math.max(1, Math.ceil(list.length / state.size));
      state.page = Math.min(state.page, pages - 1);
      var start = state.page * state.size, slice = list.slice(start, start + state.size);
      var head = [h("th", {"class": "id", text: "query"}), h("th", {"class": "q", text: "question"})];
      S.forEach(function (name, i) {
        head.push(h("th", {"class": "num sys" + (i === s ? " cand" : i === base ? "" : " other"), text: C.letters[i] + " " + name, title: name + (i === base ? " (baseline)" : "")}));
      });
      head.push(h("th", {"class": "num delta", text: "Δ " + C.letters[s] + " − " + C.letters[base], title: metric.name + ": " + S[s] + " − " + S[base]}));
      var thead = root.querySelector("#c-table thead"), tbody = root.querySelector("#c-table tbody");
      thead.textContent = "";
      thead.appendChild(h("tr", {}, head));
      tbody.textContent = "";
      slice.forEach(function (r) {
        var g = gain(r, m, s), d = g === null ? null : (metric.hi === false ? -g : g);
        var cells = [h("td", {"class": "id", text: r.id, title: r.id}), h("td", {"class": "q", text: r.q, title: r.q})];
        S.forEach(function (name, i) {
          var v = value(m, i, r);
          cells.push(h("td", {"class": "num" + (i === s ? " cand" : i === base ? "" : " other") + (v === null ? " empty" : ""), text: fmt(v, metric.unit)}));
        });
        cells.push(h("td", {"class": "num delta" + (g > 0 ? " better" : g < 0 ? " worse" : ""), text: deltaText(m, d), "data-gain": g === null ? "" : g}));
        var tr = h("tr", {"class": "row" + (state.open[r.id] ? " open" : ""), tabindex: "0", "data-id": r.id, "aria-expanded": state.open[r.id] ? "true" : "false"}, cells);
        function toggle() { if (state.open[r.id]) { delete state.open[r.id]; } else { state.open[r.id] = true; } draw(); }
        tr.addEventListener("click", toggle);
        tr.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
        tbody.appendChild(tr);
        if (state.open[r.id]) { tbody.appendChild(h("tr", {"class": "detail"}, h("td", {colspan: S.length + 3}, detail(r)))); }
      });
      var what = state.only === "worse" ? " got worse" : state.only === "better" ? " got better" : "";
      $("c-status").textContent = list.length + " of " + rows.length + " queries" + what + " (" + metric.name + ", " + S[s] + " against " + S[base] + ")"
        + (list.length ? "; showing " + (start + 1) + "–" + (start + slice.length) : "");
      var pager = $("c-pager");
      pager.textContent = "";
      if (pages > 1) {
        [["‹ previous", state.page - 1, state.page === 0], ["next ›", state.page + 1, state.page >= pages - 1]].forEach(function (b) {
          pager.appendChild(h("button", {type: "button", disabled: b[2], text: b[0], on: {click: function () { state.page = b[1]; draw(); }}}));
        });
        pager.appendChild(h("span", {text: "page " + (state.page + 1) + " of " + pages}));
      }
      $("c-worse").setAttribute("aria-pressed", state.only === "worse" ? "true" : "false");
      $("c-better").setAttribute("aria-pressed", state.only === "better" ? "true" : "false");
    }
    function bind(id, field, read) {
      $(id).addEventListener("input", function (e) { state[field] = read(e.target.value); state.page = 0; draw(); });
    }
    bind("c-metric", "metric", Number);
    bind("c-cand", "cand", Number);
    bind("c-sort", "sort", String);
    bind("c-category", "category", String);
    bind("c-search", "search", function (v) { return v.trim().toLowerCase(); });
    function only(which, sort) {
      return function () {
        state.only = state.only === which ? "" : which;
        if (state.only) { state.sort = sort; $("c-sort").value = sort; }
        state.page = 0;
        draw();
      };
    }
    $("c-worse").addEventListener("click", only("worse", "worst"));
    $("c-better").addEventListener("click", only("better", "best"));
    draw();
  };
})();
