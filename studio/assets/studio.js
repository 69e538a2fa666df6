// weft studio: live updates and actions, in plain JavaScript. Every page
// reads without it; with it, runs are followed as they go.
"use strict";
(function () {
  const prefix = document.body.dataset.prefix || "/studio/";
  const api = function (path) { return prefix + "api/" + path.replace(/^\//, ""); };
  // stats are the live view's counters, read by the tests: frames
  // received from the stream, frames applied to the page, the most
  // frames waiting for one animation frame, and how far behind the
  // newest applied frame was (ms, the last and the most).
  // execs counts the node executions the run has had (shown or not).
  const stats = { received: 0, applied: 0, flushes: 0, maxBacklog: 0, msBehind: 0, maxMsBehind: 0, tokens: 0, execs: 0 };
  window.weftStudio = { prefix: prefix, api: api, stats: stats };

  const live = document.getElementById("live");
  if (live) { follow(live); }

  // follow runs the live view of a thread page: the run named by ?run=,
  // or the one in progress.
  function follow(live) {
    const TEXT_CAP = 20000;   // characters of streamed text kept per node execution
    const EVENTS_CAP = 200;   // tool calls and other events kept per node execution
    const ROWS_EVERY = 250;   // ms between redraws of running durations and bars
    const ROWS_PER_NODE = 50; // executions of one node drawn; earlier ones are summed up in one row
    const sect = document.getElementById("thread");
    let threadID = sect && sect.dataset.thread;
    if (!threadID) {
      const m = /\/threads\/([^/?#]+)/.exec(location.pathname);
      threadID = m ? decodeURIComponent(m[1]) : "";
    }
    if (!threadID) { return; }
    const el = {
      status: document.getElementById("live-status"),
      body: document.getElementById("live-body"),
      rows: document.querySelector("#timeline tbody"),
      execs: document.getElementById("live-nodes"),
      output: document.querySelector("#live-output code") || document.getElementById("live-output"),
      failedOnly: document.getElementById("failed-only"),
    };
    const graphNodes = new Map();
    function findNodes() {
      document.querySelectorAll(".graph g[data-node]").forEach(function (g) { graphNodes.set(g.getAttribute("data-node"), g); });
    }
    findNodes();
    // drawGraph fetches the graph of a page opened before its thread
    // named a workflow, once a run shows one (the server draws it, marked
    // with the thread's progress so far; frames mark the rest).
    let drawing = false;
    function drawGraph() {
      const box = document.getElementById("graph-box");
      if (graphNodes.size > 0 || drawing || !box) { return; }
      drawing = true;
      fetch(location.pathname + "?partial=graph", { headers: { Accept: "text/html" } }).then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.text();
      }).then(function (html) {
        box.innerHTML = html;
        findNodes();
        stats.graphFetched = graphNodes.size;
      }).catch(function (err) {
        stats.graphError = String(err);
        box.textContent = "The graph of this thread's workflow could not be fetched: " + err.message;
      }).finally(function () { drawing = false; });
    }
    if (el.failedOnly) {
      el.failedOnly.addEventListener("change", function () { el.rows.parentNode.classList.toggle("failed-only", el.failedOnly.checked); });
    }
    const tpath = "threads/" + encodeURIComponent(threadID);

    let run, queue = [], scheduled = false, es = null;

    function reset(id) {
      run = {
        id: id, status: "pending", attempt: 0, t0: null, end: null, execs: [], byId: new Map(),
        lastStarted: null, lastDone: null, waiting: null, error: null, output: null, ended: false,
        dirty: new Set(), nodes: new Set(), edges: [], statusDirty: true, lastRows: 0, tokenExec: null,
        threadStatus: null, unmarked: false, perNode: new Map(),
      };
      el.rows.textContent = "";
      el.execs.textContent = "";
      if (el.earlier) { el.earlier.textContent = ""; }
      el.output.textContent = "The run has not ended.";
    }

    // unmark clears the graph's marks the server drew from the thread's
    // state, once the followed run sends its first step: from then on the
    // run's own frames mark it. (A run that sends none, having ended
    // before the page came, leaves the server's marks.)
    function unmark() {
      if (run.unmarked) { return; }
      run.unmarked = true;
      graphNodes.forEach(function (g) { g.classList.remove("current", "done", "failed", "waiting"); });
      document.querySelectorAll(".graph path.taken").forEach(function (p) { p.classList.remove("taken"); });
    }

    function say(text, cls) {
      if (fallback) {
        text += " (Live updates: the thread's stream failed, so the page looks for its next run every 3 s.)";
        cls = cls || "waiting";
      }
      el.status.textContent = text;
      el.status.className = "live-status" + (cls ? " " + cls : "");
    }

    // ---- finding the run -------------------------------------------------
    // fallback is set when the thread's stream cannot be had: the page
    // then looks for the thread's runs every few seconds, and says so.
    let fallback = false;
    const wanted = new URLSearchParams(location.search).get("run");
    if (wanted) {
      open(wanted);
    } else {
      watch();
    }

    // watch follows the thread's stream (GET /threads/{id}/stream, through
    // the studio's API proxy): each run of the thread as it goes, from the
    // one in progress on, whoever started it; every frame goes the way a
    // run stream's do, and each run_done ends its run. EventSource
    // reconnects with the last event's id by itself; a stream refused
    // (an error answer) falls back to looking.
    function watch() {
      stats.threadStream = "connecting";
      live.dataset.watch = "stream";
      const ts = new EventSource(api(tpath + "/stream"));
      let following = null; // the run the stream is in, as frames arrive
      ts.addEventListener("open", function () {
        stats.threadStream = "open";
        if (!run) { idle(); }
      });
      ts.addEventListener("metadata", function (e) {
        let d = {};
        try { d = JSON.parse(e.data); } catch (err) { /* apply reports it */ }
        if (d.run_id && d.run_id !== following) {
          following = d.run_id;
          stats.threadRuns = (stats.threadRuns || 0) + 1;
          take("__run__", JSON.stringify(d.run_id));
          drawGraph();
        }
        take("metadata", e.data);
      });
      ["values", "updates", "messages", "custom", "tasks", "debug"].forEach(function (name) {
        ts.addEventListener(name, function (e) { take(name, e.data); });
      });
      ts.addEventListener("run_done", function (e) {
        let d = {};
        try { d = JSON.parse(e.data); } catch (err) { /* ended unknown */ }
        take("__end__", JSON.stringify(d.status || "unknown"));
      });
      ts.addEventListener("error", function (e) {
        if (e.data !== undefined) { take("error", e.data); return; } // an error frame
        if (ts.readyState !== EventSource.CLOSED) { stats.threadStream = "reconnecting"; return; }
        stats.threadStream = "failed";
        fallback = true;
        live.dataset.watch = "poll";
        if (!run || run.ended) { look(); } else { say(el.status.textContent); }
      });
    }

    // idle says, while no run is followed, how the thread's last run ended.
    function idle() {
      fetch(api(tpath + "/runs?limit=1")).then(function (r) { return r.ok ? r.json() : []; }).then(function (runs) {
        if (run) { return; }
        say(runs.length ? "No run in progress; the last one ended " + runs[0].status + ". A new run shows here as it starts." : "No run yet. A run shows here as it starts.");
      }).catch(function () { /* the stream says the rest */ });
    }

    // look (the fallback) finds the thread's run in progress, and looks
    // again every few seconds while there is none.
    function look() {
      fetch(api(tpath + "/runs?limit=10")).then(function (r) {
        if (!r.ok) { return r.text().then(function (t) { throw new Error(r.status + " " + t); }); }
        return r.json();
      }).then(function (runs) {
        const going = runs.filter(function (r) { return r.status === "running" || r.status === "pending"; });
        if (going.length) {
          going.sort(function (a, b) { return a.created_at < b.created_at ? -1 : 1; });
          open(going[0].run_id);
          return;
        }
        say(runs.length ? "No run in progress; the last one ended " + runs[0].status + "." : "No run yet.");
        setTimeout(look, 3000);
      }).catch(function (err) {
        say("Looking for the thread's runs failed: " + err.message, "bad");
        setTimeout(look, 5000);
      });
    }

    // open follows run id's stream.
    function open(id) {
      reset(id);
      el.body.hidden = false;
      say("Following run " + id + "…");
      const url = api(tpath + "/runs/" + encodeURIComponent(id) + "/stream");
      es = new EventSource(url);
      ["metadata", "values", "updates", "messages", "custom", "tasks", "debug"].forEach(function (name) {
        es.addEventListener(name, function (e) { take(name, e.data); });
      });
      es.addEventListener("error", function (e) {
        if (e.data !== undefined) { take("error", e.data); return; } // the run's error frame
        check(id);
      });
    }

    // check asks the run's status when its stream closes: an ended run's
    // stream is done; a run still going is joined again (EventSource
    // reconnects with Last-Event-ID; a stream refused is opened anew).
    function check(id) {
      fetch(api(tpath + "/runs/" + encodeURIComponent(id))).then(function (r) {
        if (!r.ok) { return r.text().then(function (t) { throw new Error(r.status + " " + t); }); }
        return r.json();
      }).then(function (j) {
        if (run.id !== id) { return; }
        if (j.status === "pending" || j.status === "running") {
          if (es.readyState === EventSource.CLOSED) { setTimeout(function () { if (run.id === id && !run.ended) { open(id); } }, 1000); }
          return;
        }
        es.close();
        take("__end__", JSON.stringify(j.status));
      }).catch(function (err) {
        es.close();
        say("The run's stream broke and its status could not be read: " + err.message, "bad");
      });
    }

    // ---- taking frames in, applying them once an animation frame ----------
    function take(type, data) {
      stats.received++;
      queue.push({ type: type, data: data, at: performance.now() });
      if (!scheduled) {
        scheduled = true;
        if (document.hidden) { setTimeout(flush, 200); } else { requestAnimationFrame(flush); }
      }
    }

    function flush() {
      scheduled = false;
      const q = queue;
      queue = [];
      if (!q.length) { return; }
      stats.flushes++;
      if (q.length > stats.maxBacklog) { stats.maxBacklog = q.length; }
      for (let i = 0; i < q.length; i++) { apply(q[i]); }
      const behind = performance.now() - q[0].at;
      stats.msBehind = Math.round(behind);
      if (behind > stats.maxMsBehind) { stats.maxMsBehind = Math.round(behind); }
      render();
      stats.applied += q.length;
      if (!run.ended) { tick(); }
    }

    // tick redraws the durations of running executions now and then.
    let ticking = false;
    function tick() {
      if (ticking || run.ended) { return; }
      ticking = true;
      setTimeout(function () {
        ticking = false;
        if (run.ended) { return; }
        let any = false;
        run.execs.forEach(function (x) { if (x.status === "running") { run.dirty.add(x); any = true; } });
        if (any) { requestAnimationFrame(function () { render(); tick(); }); }
      }, ROWS_EVERY);
    }

    function apply(f) {
      let d;
      try { d = JSON.parse(f.data); } catch (err) { run.error = { error: "BadFrame", message: f.type + ": " + err.message }; run.statusDirty = true; return; }
      switch (f.type) {
        case "metadata":
          run.status = "running"; run.attempt = d.attempt; run.statusDirty = true;
          break;
        case "debug":
          if (d.type === "task" && d.payload && d.payload.retry) { retrying(d.payload, Date.parse(d.timestamp)); }
          else if (d.type === "task") { started(d.payload, Date.parse(d.timestamp), d.step); }
          else if (d.type === "task_result") { finished(d.payload, Date.parse(d.timestamp)); }
          break;
        case "tasks":
          // The server's time of the task's start or end when the
          // frame has it (weft's "time"), else when the page got it.
          // A task's start sent again with "retry" (weft's) says that an
          // attempt failed and the next is under way.
          if (d.retry) { retrying(d, stamp(d)); } else if ("input" in d) { started(d, stamp(d), null); } else { finished(d, stamp(d)); }
          break;
        case "updates":
          for (const k in d) {
            if (k === "__interrupt__") { interrupted(d[k]); }
          }
          break;
        case "values":
          if (d && d.__interrupt__) { interrupted(d.__interrupt__); } else { run.values = d; }
          break;
        case "messages":
          token(d[1] || {}, d[0] && d[0].content);
          break;
        case "custom":
          custom(d);
          break;
        case "error":
          run.error = d; run.status = "error"; run.statusDirty = true;
          run.execs.forEach(function (x) { if (x.status === "running") { x.status = "failed"; x.error = d.message; x.end = x.end || Date.now(); touch(x); } });
          break;
        case "__end__":
          ended(d);
          break;
        case "__run__":
          // The thread's stream moved on to its next run.
          reset(d);
          el.body.hidden = false;
          say("Following run " + d + "…");
          break;
      }
    }

    function touch(x) { run.dirty.add(x); run.nodes.add(x.name); }

    function stamp(d) {
      const t = d && d.time ? Date.parse(d.time) : NaN;
      return isNaN(t) ? Date.now() : t;
    }

    function started(p, t, step) {
      if (!p || run.byId.has(p.id)) { return; }
      unmark();
      // Times are the browser's: when it took the frame (tasks frames
      // carry none).
      const x = { id: p.id, name: p.name, step: step, start: t, seen: Date.now(), end: null, status: "running", text: "", cut: false, events: [], dropped: 0, notes: [], error: null, attempt: 1, failures: [], n: run.execs.length + 1 };
      if (run.t0 === null || t < run.t0) { run.t0 = t; }
      const from = run.lastDone || run.lastStarted;
      if (from && from !== p.name) { run.edges.push([from, p.name]); }
      run.lastStarted = p.name;
      run.execs.push(x);
      stats.execs = run.execs.length;
      run.byId.set(p.id, x);
      let per = run.perNode.get(p.name);
      if (!per) { per = { shown: [], hidden: 0, hiddenFailed: 0, hiddenRetried: 0, row: null, li: null }; run.perNode.set(p.name, per); }
      per.shown.push(x);
      run.status = "running";
      run.statusDirty = true;
      touch(x);
    }

    function finished(p, t) {
      let x = run.byId.get(p.id);
      if (!x) { started({ id: p.id, name: p.name, input: {} }, t, null); x = run.byId.get(p.id); }
      x.end = t;
      if (p.error) { x.status = "failed"; x.error = p.error; } else { x.status = "done"; x.result = p.result; run.lastDone = x.name; }
      if (p.attempts > 1) { x.attempts = p.attempts; x.notes.push("retried: " + p.attempts + " attempts"); }
      run.statusDirty = true;
      touch(x);
    }

    // retrying takes a task's start sent again because its attempt
    // p.retry.attempt failed: the execution shows the attempt under way
    // and the failed one, with its error.
    function retrying(p, t) {
      let x = run.byId.get(p.id);
      if (!x) { started(p, t, null); x = run.byId.get(p.id); }
      x.attempt = p.attempt || x.attempt + 1;
      x.failures.push({ attempt: p.retry.attempt, error: p.retry.error || "", at: t });
      x.status = "running";
      run.statusDirty = true;
      touch(x);
    }

    // execOf is the newest execution of node (at step, if given).
    function execOf(node, step) {
      for (let i = run.execs.length - 1; i >= 0; i--) {
        const x = run.execs[i];
        if (x.name === node && (step == null || x.step == null || x.step === step)) { return x; }
      }
      return null;
    }

    function token(md, text) {
      if (typeof text !== "string") { return; }
      let x = run.tokenExec;
      if (!x || x.name !== md.langgraph_node || (x.step != null && x.step !== md.langgraph_step)) {
        x = execOf(md.langgraph_node, md.langgraph_step);
        if (!x) { started({ id: "msg:" + md.langgraph_node + ":" + md.langgraph_step, name: md.langgraph_node }, Date.now(), md.langgraph_step); x = execOf(md.langgraph_node, md.langgraph_step); }
        run.tokenExec = x;
      }
      stats.tokens++;
      x.text += text;
      if (x.text.length > TEXT_CAP) { x.text = x.text.slice(x.text.length - (TEXT_CAP * 3 >> 2)); x.cut = true; }
      run.dirty.add(x);
    }

    function custom(d) {
      let x = execOf(d.node, null);
      if (!x) { started({ id: "custom:" + d.node, name: d.node }, Date.now(), null); x = execOf(d.node, null); }
      if (d.kind === "fallback" || d.kind === "truncated") {
        const data = d.data || {};
        x.notes.push(d.kind === "fallback" ? "fell back: " + (data.error || data.message || "") : "truncated: " + (data.message || ""));
        if (d.kind === "fallback") { x.fellBack = true; }
      } else {
        x.events.push(d);
        if (x.events.length > EVENTS_CAP) { x.events.shift(); x.dropped++; }
      }
      run.dirty.add(x);
    }

    function interrupted(list) {
      run.waiting = list || [];
      run.statusDirty = true;
      (list || []).forEach(function (q) {
        const v = q.value || {};
        if (!v.node) { return; }
        let x = execOf(v.node, null);
        if (!x || (x.status !== "running" && x.status !== "waiting")) { started({ id: "wait:" + q.id, name: v.node }, Date.now(), null); x = execOf(v.node, null); }
        x.status = "waiting"; x.question = v.question;
        touch(x);
      });
    }

    function ended(status) {
      run.ended = true;
      run.status = status;
      run.end = Date.now();
      run.statusDirty = true;
      run.execs.forEach(function (x) { run.dirty.add(x); });
      if (status === "success" && !run.waiting) {
        run.execs.forEach(function (x) { if (x.status === "running") { x.status = "done"; touch(x); } });
      }
      fetch(api(tpath + "/runs/" + encodeURIComponent(run.id) + "/join")).then(function (r) { return r.text(); }).then(function (t) {
        let v; try { v = JSON.parse(t); } catch (e) { v = t; }
        run.output = v;
        if (v && v.__error__ && !run.error) { run.error = v.__error__; }
        return fetch(api(tpath)).then(function (r) { return r.json(); });
      }).then(function (th) {
        run.threadStatus = th.status;
        run.statusDirty = true;
        render();
        document.dispatchEvent(new CustomEvent("weft:run-end", { detail: { run: run.id, status: run.status, thread: threadID, threadStatus: th.status } }));
        if (fallback && !wanted) { setTimeout(look, 3000); } // the next run, by looking
      }).catch(function (err) {
        say("The run ended " + status + "; reading its output failed: " + err.message, "bad");
      });
    }

    // ---- drawing -----------------------------------------------------------
    function fmtMs(ms) {
      if (ms == null || isNaN(ms)) { return ""; }
      return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
    }

    function render() {
      // Graph: each touched node takes the state of its newest execution.
      run.nodes.forEach(function (name) {
        const g = graphNodes.get(name);
        const x = execOf(name, null);
        if (!g || !x) { return; }
        const st = x.status === "running" ? "current" : x.status;
        ["current", "done", "failed", "waiting"].forEach(function (c) { g.classList.toggle(c, c === st); });
      });
      run.nodes.clear();
      while (run.edges.length) {
        const e = run.edges.shift();
        document.querySelectorAll('.graph path[data-from="' + CSS.escape(e[0]) + '"][data-to="' + CSS.escape(e[1]) + '"]').forEach(function (p) { p.classList.add("taken"); });
      }
      const now = Date.now();
      let redrawBars = run.ended || now - run.lastRows >= ROWS_EVERY;
      run.dirty.forEach(function (x) { if (!x.gone && drawExec(x, now) && run.execs.length <= 500) { redrawBars = true; } });
      run.dirty.clear();
      run.perNode.forEach(cap);
      if (redrawBars) { run.lastRows = now; bars(now); }
      // After every write: keep streaming text scrolled to its end.
      run.scroll && run.scroll.forEach(function (pre) { pre.scrollTop = pre.scrollHeight; });
      run.scroll = null;
      if (run.statusDirty) { run.statusDirty = false; drawStatus(); }
    }

    function drawExec(x, now) {
      if (!x.row) {
        const tr = document.createElement("tr");
        tr.innerHTML = "<th scope=row></th><td></td><td></td><td></td><td></td><td class=bar-col><span class=bar></span></td>";
        tr.cells[0].textContent = x.name;
        tr.cells[1].textContent = x.n;
        tr.cells[2].textContent = run.t0 === null ? "" : "+" + fmtMs(x.start - run.t0);
        tr.cells[2].title = new Date(x.start).toISOString();
        x.row = tr;
        el.rows.appendChild(tr);
        const li = document.createElement("li");
        li.className = "exec";
        li.innerHTML = "<div class=exec-head><strong></strong> <span class=meta></span> <span class=badge></span></div><ul class=attempts hidden></ul><pre class=tokens tabindex=0 hidden></pre><ul class=events tabindex=0 hidden></ul><p class=notes hidden></p>";
        li.querySelector("strong").textContent = x.name;
        li.querySelector(".meta").textContent = x.step == null ? "" : "step " + x.step;
        x.li = li;
        x.pre = li.querySelector(".tokens");
        x.ul = li.querySelector(".events");
        x.notesEl = li.querySelector(".notes");
        x.attemptsEl = li.querySelector(".attempts");
        x.shownFailures = 0;
        x.shownText = 0;
        x.shownEvents = 0;
        x.shownDropped = 0;
        el.execs.appendChild(li);
        x.drawn = "new";
      }
      const label = x.status === "running" ? "running" : x.status === "waiting" ? "waits for a person" : x.status;
      const dur = x.end != null ? x.end - x.start : x.status === "running" && !run.ended ? now - x.seen : null;
      const moved = x.drawn !== x.status;
      x.drawn = x.status;
      x.row.className = "exec-" + x.status + (x.fellBack ? " exec-fellback" : "");
      x.row.cells[3].textContent = dur == null ? "" : fmtMs(dur) + (x.end == null ? "…" : "");
      const retry = x.status === "running" && x.attempt > 1 ? "attempt " + x.attempt : "";
      x.row.className += x.failures.length ? " exec-retried" : "";
      x.row.cells[4].textContent = (retry ? retry + " running" : label) + (x.attempts ? " (" + x.attempts + " attempts)" : "") + (x.fellBack ? " (fell back)" : "") + (x.error ? ": " + x.error : "");
      if (retry && x.failures.length) {
        const f = x.failures[x.failures.length - 1];
        const span = document.createElement("span");
        span.className = "bad";
        span.textContent = "attempt " + f.attempt + " failed: " + f.error;
        x.row.cells[4].appendChild(document.createElement("br"));
        x.row.cells[4].appendChild(span);
      }
      x.li.className = "exec exec-" + x.status + (retry ? " exec-retrying" : "");
      x.li.querySelector(".badge").textContent = retry || label;
      if (x.failures.length > x.shownFailures) {
        x.attemptsEl.hidden = false;
        for (let i = x.shownFailures; i < x.failures.length; i++) {
          const li = document.createElement("li");
          li.className = "bad";
          li.textContent = "attempt " + x.failures[i].attempt + " failed: " + x.failures[i].error;
          x.attemptsEl.appendChild(li);
        }
        x.shownFailures = x.failures.length;
      }
      if (x.text.length !== x.shownText || x.cut) {
        x.pre.hidden = false;
        x.pre.textContent = (x.cut ? "…" : "") + x.text;
        x.shownText = x.text.length;
        (run.scroll = run.scroll || []).push(x.pre);
      }
      if (x.dropped > x.shownDropped) {
        for (let i = x.shownDropped; i < x.dropped && x.ul.firstChild; i++) { x.ul.removeChild(x.ul.firstChild); x.shownEvents--; }
        x.shownDropped = x.dropped;
      }
      if (x.events.length > x.shownEvents) {
        const frag = document.createDocumentFragment();
        for (let i = x.shownEvents; i < x.events.length; i++) { frag.appendChild(eventItem(x.events[i])); }
        x.shownEvents = x.events.length;
        x.ul.appendChild(frag);
        x.ul.hidden = false;
      }
      if (x.notes.length || x.question || x.error) {
        x.notesEl.hidden = false;
        x.notesEl.textContent = x.notes.concat(x.question ? ["asks: " + (typeof x.question === "string" ? x.question : JSON.stringify(x.question))] : [], x.error ? ["error: " + x.error] : []).join(" · ");
      }
      return moved; // a new execution, or one whose status changed: the bars move
    }

    // cap keeps the last ROWS_PER_NODE executions of a node drawn, in the
    // timeline and the list; the earlier ones leave the page, summed up
    // in one row (and one item) of the node's: how many, failed, retried.
    // A running or waiting execution stays.
    function cap(per, name) {
      let moved = false;
      while (per.shown.length > ROWS_PER_NODE) {
        const x = per.shown[0];
        if (x.status === "running" || x.status === "waiting") { break; }
        per.shown.shift();
        per.hidden++;
        if (x.status === "failed") { per.hiddenFailed++; }
        if (x.failures.length) { per.hiddenRetried++; }
        if (x.row) { x.row.remove(); x.li.remove(); }
        x.gone = true;
        x.row = x.li = x.pre = x.ul = x.notesEl = x.attemptsEl = null;
        x.text = ""; x.events = [];
        moved = true;
      }
      if (!moved) { return; }
      if (!per.row) {
        per.row = document.createElement("tr");
        per.row.className = "exec-earlier";
        per.row.innerHTML = "<th scope=row></th><td colspan=5></td>";
        per.row.cells[0].textContent = name;
        earlierBody().appendChild(per.row);
        per.li = document.createElement("li");
        per.li.className = "exec exec-earlier";
        el.execs.insertBefore(per.li, el.execs.firstChild);
      }
      const text = per.hidden + " earlier execution" + (per.hidden === 1 ? "" : "s") + " not shown" +
        (per.hiddenFailed ? ", " + per.hiddenFailed + " failed" : "") + (per.hiddenRetried ? ", " + per.hiddenRetried + " retried" : "") +
        "; the last " + per.shown.length + " follow";
      per.row.cells[1].textContent = text;
      per.row.classList.toggle("exec-failed", per.hiddenFailed > 0);
      per.li.textContent = name + ": " + text + ".";
    }

    // earlierBody is the timeline's first body, for the summary rows.
    function earlierBody() {
      if (!el.earlier) {
        el.earlier = document.createElement("tbody");
        el.earlier.className = "earlier";
        el.rows.parentNode.insertBefore(el.earlier, el.rows);
      }
      return el.earlier;
    }

    function eventItem(d) {
      const li = document.createElement("li");
      li.className = "ev ev-" + String(d.kind).replace(/[^a-z0-9_-]/gi, "");
      const k = document.createElement("span");
      k.className = "ev-kind";
      k.textContent = d.kind;
      li.appendChild(k);
      const v = d.data || {};
      let text;
      if (d.kind === "tool_call") { text = (v.name || "") + "(" + (v.arguments || "") + ")"; }
      else if (d.kind === "tool_result") { text = (v.name || "") + " → " + (v.error ? "error: " + v.error : v.content) + (v.duration_ms != null ? " (" + fmtMs(v.duration_ms) + ")" : ""); if (v.error) { li.classList.add("bad"); } }
      else { text = typeof v === "string" ? v : JSON.stringify(v); }
      li.appendChild(document.createTextNode(" " + text));
      return li;
    }

    // bars places each execution's bar on the run's time axis.
    function bars(now) {
      if (run.t0 === null) { return; }
      const end = run.ended ? Math.max.apply(null, run.execs.map(function (x) { return x.end || x.start; }).concat([run.t0 + 1])) : Math.max(now, run.t0 + 1);
      const span = end - run.t0;
      run.execs.forEach(function (x) {
        if (!x.row) { return; }
        const b = x.row.cells[5].firstChild;
        const left = Math.max(0, (x.start - run.t0) / span);
        const stop = x.end != null ? x.end : run.ended ? x.start : now;
        b.style.left = (left * 100).toFixed(2) + "%";
        b.style.width = Math.max(0.5, ((stop - x.start) / span) * 100).toFixed(2) + "%";
      });
    }

    function drawStatus() {
      const cur = run.execs.filter(function (x) { return x.status === "running"; }).map(function (x) { return x.name; });
      let text, cls = "";
      if (run.error) {
        text = "Run " + run.id + " failed: " + (run.error.error ? run.error.error + ": " : "") + (run.error.message || "");
        cls = "bad";
      } else if (run.waiting && run.waiting.length) {
        const q = run.waiting[0].value || {};
        text = "Run " + run.id + " waits for a person" + (q.node ? " at " + q.node : "") + (q.question ? ": " + (typeof q.question === "string" ? q.question : JSON.stringify(q.question)) : "");
        if (!/[.?!]$/.test(text)) { text += "."; }
        cls = "waiting";
      } else if (run.ended) {
        text = "Run " + run.id + " ended " + run.status + ".";
        cls = run.status === "success" ? "ok" : "bad";
      } else if (run.waiting) {
        text = "Run " + run.id + " stopped at a breakpoint.";
        cls = "waiting";
      } else {
        text = "Run " + run.id + " is " + run.status + (cur.length ? ": " + cur.join(", ") : "") + "…";
      }
      say(text, cls);
      if (run.ended) {
        if (run.output !== null) { el.output.textContent = typeof run.output === "string" ? run.output : JSON.stringify(run.output, null, 2); }
        if (run.threadStatus) {
          if (sect) { sect.dataset.status = run.threadStatus; }
          const badge = document.querySelector("h1 .status");
          if (badge) { badge.textContent = run.threadStatus; badge.className = "status status-" + run.threadStatus; }
          live.dataset.status = run.threadStatus;
          if (run.threadStatus !== "busy") {
            // Nothing runs now: the page's cancel button has nothing to cancel.
            document.querySelectorAll("form.cancel-form").forEach(function (f) { f.hidden = true; });
          }
          const a = document.createElement("a");
          a.href = location.pathname;
          a.textContent = run.threadStatus === "interrupted" ? "Reload the page to answer" : "Reload the page for the thread's state and history";
          el.status.appendChild(document.createTextNode(" "));
          el.status.appendChild(a);
        }
      }
    }
  }
})();
