// The report's sample viewer. Data arrive as <script src> files that call HR.index / HR.page, because
// file:// pages may not fetch(). Everything taken from a run is put in the page with textContent, never as HTML.
"use strict";
var HR = (function () {
  var ROWS_PER_VIEW = 100, FOLD_CHARS = 1500;
  var viewers = {}, indexes = {}, pages = {}, waiting = {}, state = {rid: null, rows: [], view: 0};

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function load(src, key) {  // one script tag per file; resolves when its registration call has run
    if (!waiting[key]) {
      waiting[key] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = src;
        s.onload = function () { resolve(); };
        s.onerror = function () { reject(new Error("cannot load " + src)); };
        document.head.appendChild(s);
      });
    }
    return waiting[key];
  }

  function decided(c) { return "RWNTA".indexOf(c) >= 0; }

  var TESTS = {
    wrong: function (r) { return r[2].indexOf("W") >= 0; },
    no_answer: function (r) { return r[2].indexOf("N") >= 0; },
    truncated: function (r) { return r[2].indexOf("T") >= 0 || r[3] === "l"; },
    errors: function (r) { return /[GJ]/.test(r[2]) || r[3] === "e"; },
    disagree: function (r) {
      var d = r[2].split("").filter(decided);
      return d.indexOf("R") >= 0 && d.some(function (c) { return c !== "R"; });
    }
  };

  function applyFilters() {
    var idx = indexes[state.rid];
    if (!idx) return;
    var checked = Array.prototype.filter.call(document.querySelectorAll("[data-filter]"), function (b) { return b.checked; })
      .map(function (b) { return TESTS[b.getAttribute("data-filter")]; });
    var needle = document.getElementById("hr-item").value.trim();
    var exact = needle.charAt(0) === "=";
    if (exact) needle = needle.slice(1);
    state.rows = [];
    for (var i = 0; i < idx.rows.length; i++) {
      var r = idx.rows[i];
      if (needle && (exact ? r[0] !== needle : r[0].indexOf(needle) < 0)) continue;
      if (checked.length && !checked.some(function (t) { return t(r); })) continue;
      state.rows.push(i);
    }
    state.view = 0;
    renderList();
  }

  function renderList() {
    var idx = indexes[state.rid], body = document.querySelector("#hr-list tbody");
    body.textContent = "";
    var start = state.view * ROWS_PER_VIEW, end = Math.min(state.rows.length, start + ROWS_PER_VIEW);
    var frag = document.createDocumentFragment();
    for (var k = start; k < end; k++) {
      var pos = state.rows[k], r = idx.rows[pos], tr = document.createElement("tr");
      tr.setAttribute("data-pos", pos);
      tr.appendChild(el("td", r[0], "mono"));
      tr.appendChild(el("td", r[1], "num"));
      tr.appendChild(el("td", r[2], "mono verdicts"));
      tr.appendChild(el("td", {s: "stop", l: "length", e: "error", "-": "missing"}[r[3]] || r[3]));
      frag.appendChild(tr);
    }
    body.appendChild(frag);
    var pagesN = Math.max(1, Math.ceil(state.rows.length / ROWS_PER_VIEW));
    document.getElementById("hr-page").textContent = (state.view + 1) + " / " + pagesN;
    document.getElementById("hr-count").textContent = state.rows.length + " of " + idx.rows.length + " samples";
    if (!document.body.hasAttribute("data-hr-ready")) {  // first list on screen: the page is usable
      document.body.setAttribute("data-hr-ready", "1");
      document.body.setAttribute("data-hr-ready-ms", String(Math.round(performance.now())));
    }
  }

  function field(parent, label, value, cls) {
    var row = el("div", null, "field");
    row.appendChild(el("span", label, "label"));
    row.appendChild(el("span", value === null || value === undefined ? "-" : value, cls || ""));
    parent.appendChild(row);
  }

  function textBlock(text) {  // long text folded; <pre> keeps LaTeX and markdown exactly as written
    text = text === null || text === undefined ? "" : String(text);
    if (text.length <= FOLD_CHARS) return el("pre", text);
    var d = el("details", null, "fold");
    d.appendChild(el("summary", "show all " + text.length.toLocaleString() + " characters"));
    d.appendChild(el("pre", text));
    var box = el("div");
    box.appendChild(el("pre", text.slice(0, FOLD_CHARS) + " …", "preview"));
    box.appendChild(d);
    return box;
  }

  function renderDetail(rec, meta) {
    var box = document.getElementById("hr-detail");
    box.textContent = "";
    box.setAttribute("data-item", rec.item);
    box.setAttribute("data-sample", rec.sample);
    box.appendChild(el("h3", rec.item + " · sample " + rec.sample));
    field(box, "category", rec.category);
    field(box, "target", rec.target, "mono target");
    field(box, "finish", rec.finish + (rec.error ? " (" + rec.error + ")" : ""));
    if (rec.usage) field(box, "tokens", (rec.usage.prompt_tokens || 0) + " prompt, " + (rec.usage.completion_tokens || 0) + " completion");
    var judges = el("div", null, "judges");
    meta.judges.forEach(function (j) {
      var g = rec.grades[j], card = el("div", null, "judge");
      card.setAttribute("data-judge", j);
      card.appendChild(el("h4", j));
      if (!g) { card.appendChild(el("p", "not graded", "muted")); judges.appendChild(card); return; }
      var verdict = g.correct === true ? "right" : g.correct === false ? "wrong" : "no verdict";
      field(card, "verdict", verdict + " (" + g.status + ")", "verdict " + (g.correct === true ? "ok" : "bad"));
      field(card, "extracted", g.extracted, "mono extracted");
      var d = g.detail || {};
      var reason = d.reasoning || d.reason || d.error;
      if (reason) field(card, "reason", reason, "reason");
      if (d.confidence !== undefined) field(card, "confidence", d.confidence + "%");
      var more = el("details");
      more.appendChild(el("summary", "judge detail"));
      more.appendChild(el("pre", JSON.stringify(d, null, 2)));
      card.appendChild(more);
      judges.appendChild(card);
    });
    box.appendChild(judges);
    if (rec.reasoning) {  // a reasoning model's thinking, kept apart from the graded response: folded
      var think = el("details", null, "reasoning");
      think.appendChild(el("summary", "reasoning (" + rec.reasoning.length.toLocaleString() + " characters, not graded)"));
      think.appendChild(el("pre", rec.reasoning));
      box.appendChild(think);
    }
    box.appendChild(el("h4", "response"));
    var resp = textBlock(rec.response);
    resp.classList.add("response");
    box.appendChild(resp);
    box.appendChild(el("h4", "prompt"));
    rec.messages.forEach(function (m) {
      box.appendChild(el("div", m.role, "role"));
      box.appendChild(textBlock(m.content));
    });
  }

  function showSample(pos) {
    var meta = viewers[state.rid], rid = state.rid, p = Math.floor(pos / meta.page_size);
    var key = rid + "-p" + ("000" + p).slice(-4);
    return load("data/" + key + ".js", key).then(function () {
      renderDetail(pages[key][pos - p * meta.page_size], meta);
    });
  }

  function selectRun(rid) {
    state.rid = rid;
    document.getElementById("hr-count").textContent = "loading…";
    return load("data/" + rid + "-index.js", rid + "-index").then(applyFilters);
  }

  function showItem(item, rid) {  // a heat-map cell names its run: the viewer switches to it before filtering
    document.getElementById("hr-item").value = "=" + item;
    if (rid && viewers[rid] && rid !== state.rid) {
      document.getElementById("hr-run").value = rid;
      return selectRun(rid);
    }
    applyFilters();
    return Promise.resolve();
  }

  function init(list) {
    list.forEach(function (v) { viewers[v.rid] = v; });
    var select = document.getElementById("hr-run");
    select.addEventListener("change", function () { selectRun(select.value); });
    Array.prototype.forEach.call(document.querySelectorAll("[data-filter]"), function (b) {
      b.addEventListener("change", applyFilters);
    });
    document.getElementById("hr-item").addEventListener("input", applyFilters);
    document.getElementById("hr-prev").addEventListener("click", function () {
      if (state.view > 0) { state.view--; renderList(); }
    });
    document.getElementById("hr-next").addEventListener("click", function () {
      if ((state.view + 1) * ROWS_PER_VIEW < state.rows.length) { state.view++; renderList(); }
    });
    document.querySelector("#hr-list tbody").addEventListener("click", function (ev) {
      var tr = ev.target.closest("tr");
      if (!tr) return;
      Array.prototype.forEach.call(tr.parentNode.children, function (x) { x.classList.remove("selected"); });
      tr.classList.add("selected");
      showSample(Number(tr.getAttribute("data-pos")));
    });
    Array.prototype.forEach.call(document.querySelectorAll(".item-link, .cell-link"), function (a) {
      a.addEventListener("click", function () { showItem(a.getAttribute("data-item"), a.getAttribute("data-rid")); });
    });
    selectRun(select.value);
  }

  return {
    init: init, showSample: showSample, selectRun: selectRun, showItem: showItem,
    index: function (rid, meta, rows) { indexes[rid] = {meta: meta, rows: rows}; },
    page: function (rid, n, records) { pages[rid + "-p" + ("000" + n).slice(-4)] = records; }
  };
})();
