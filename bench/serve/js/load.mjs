// SDK-driven load for weft's server benchmark (see ../README.md).
//
//   node load.mjs --url http://127.0.0.1:PORT --pid SERVER_PID --c C --n N
//                 [--mode wait|stream] [--warmup W]
//
// A conversation, on the Approval graph, with the unmodified
// @langchain/langgraph-sdk Client:
//   1. threads.create()
//   2. runs.wait with input {input_text: "doc K"} (mode stream: runs.stream
//      with streamMode ["values","updates"], read to its end); it must stop
//      at the review interrupt asking "Approve this draft?"
//   3. threads.getState: next must be ["review"]
//   4. runs.wait with command {resume: "yes"}: published must be "doc K",
//      verdict "yes", revisions 0.
// W warm-up conversations (at concurrency min(C, 10), checked, not timed)
// come first; then C workers share N timed conversations. The script reads
// the server process's CPU time (utime+stime of /proc/PID/stat, in clock
// ticks) just before and after the timed part, samples its VmRSS and
// RssAnon (/proc/PID/status) every 100 ms from the start of the warm-up to
// the end of the timed part, and once more at the end, and prints one JSON
// object on stdout. It exits 1 when any conversation failed.
import { Client } from "@langchain/langgraph-sdk";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    url: { type: "string" },
    pid: { type: "string", default: "0" },
    c: { type: "string", default: "1" },
    n: { type: "string", default: "20" },
    mode: { type: "string", default: "wait" },
    warmup: { type: "string", default: "10" },
    graph: { type: "string", default: "Approval" },
  },
});
if (!opt.url) throw new Error("--url is required");
if (opt.mode !== "wait" && opt.mode !== "stream") throw new Error(`--mode ${opt.mode}: want wait or stream`);
const pid = Number(opt.pid);
const C = Number(opt.c);
const N = Number(opt.n);
const W = Number(opt.warmup);
const graph = opt.graph;
const client = new Client({ apiUrl: opt.url, apiKey: null });

// cpuTicks is the server process's utime+stime; 0 without a pid.
function cpuTicks() {
  if (!pid) return 0;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]); // fields 14 and 15 of proc(5)
}

// memKiB is the server process's resident set (VmRSS) and the anonymous
// part of it (RssAnon: its private memory, heap and stacks, as opposed to
// the file-backed pages of its executable and libraries, RssFile, and
// shared memory, RssShmem), in KiB; zeros without a pid.
function memKiB() {
  if (!pid) return { rss: 0, anon: 0 };
  const st = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(st);
    return m ? Number(m[1]) : 0;
  };
  return { rss: field("VmRSS"), anon: field("RssAnon") };
}

// peak holds the largest VmRSS and RssAnon seen, in KiB.
const peak = { rss: 0, anon: 0 };
function sample() {
  const m = memKiB();
  peak.rss = Math.max(peak.rss, m.rss);
  peak.anon = Math.max(peak.anon, m.anon);
}

class CheckError extends Error {}
function check(cond, what, got) {
  if (!cond) throw new CheckError(`${what}: got ${JSON.stringify(got)}`);
}

// out reads a node's output from a run's final values: LangGraph keeps it
// at the top level of the state ({published}), weft under the node's name
// ({publish: {published}}).
function out(values, node, name) {
  return values?.[name] ?? values?.[node]?.[name];
}

const QUESTION = "Approve this draft?";

// conversation runs conversation k and returns its timings in ms.
async function conversation(k) {
  const text = `doc ${k}`;
  const t0 = performance.now();
  const thread = await client.threads.create();
  const tid = thread.thread_id;
  const tr = performance.now(); // the first run's latency runs from here
  let ttfe = null;
  if (opt.mode === "wait") {
    const r = await client.runs.wait(tid, graph, { input: { input_text: text } });
    check(r?.__interrupt__?.[0]?.value?.question === QUESTION, "first run's interrupt", r);
  } else {
    let interrupted = false;
    let sawValues = false;
    const ts = performance.now(); // time to first event runs from here
    for await (const ev of client.runs.stream(tid, graph, {
      input: { input_text: text },
      streamMode: ["values", "updates"],
    })) {
      if (ttfe === null) ttfe = performance.now() - ts;
      if (ev.event === "error") throw new CheckError(`stream error event: ${JSON.stringify(ev.data)}`);
      if (ev.event === "values") sawValues = true;
      if (ev.event === "updates" && ev.data?.__interrupt__?.[0]?.value?.question === QUESTION) interrupted = true;
    }
    check(sawValues, "values event in the stream", sawValues);
    check(interrupted, "updates event with the interrupt", interrupted);
  }
  const t1 = performance.now();
  const state = await client.threads.getState(tid);
  check(JSON.stringify(state.next) === '["review"]', "state.next", state.next);
  const fin = await client.runs.wait(tid, graph, { command: { resume: "yes" } });
  const ok =
    out(fin, "publish", "published") === text &&
    out(fin, "review", "verdict") === "yes" &&
    out(fin, "publish", "revisions") === 0;
  check(ok, "final values", fin);
  const t2 = performance.now();
  return { conv: t2 - t0, first: t1 - tr, ttfe };
}

// drive runs count conversations numbered from base on conc workers.
async function drive(base, count, conc, results) {
  let next = 0;
  const errors = [];
  async function worker() {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      try {
        const r = await conversation(base + i);
        r.done = performance.now();
        results.push(r);
      } catch (e) {
        errors.push(String(e?.stack ?? e));
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(conc, count) }, worker));
  return errors;
}

// pct is the nearest-rank percentile p of xs.
function pct(xs, p) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
}

sample();
const sampler = setInterval(sample, 100);
const warm = [];
const warmErrors = await drive(1_000_000, W, Math.min(C, 10), warm);
const timed = [];
const cpu0 = cpuTicks();
const w0 = performance.now();
const errors = await drive(0, N, C, timed);
const wall = (performance.now() - w0) / 1000;
const cpu1 = cpuTicks();
clearInterval(sampler);
sample();

const conv = timed.map((x) => x.conv);
const first = timed.map((x) => x.first);
const ttfe = timed.map((x) => x.ttfe).filter((x) => x !== null);
const all = [...warmErrors, ...errors];
// Throughput over the first and the second half of the completions: the
// stores grow during a load.
const ends = timed.map((x) => x.done).sort((a, b) => a - b);
const half = Math.floor(ends.length / 2);
const halves =
  half > 0 && ends.length - half > 0
    ? [half / ((ends[half - 1] - w0) / 1000), (ends.length - half) / ((ends[ends.length - 1] - ends[half - 1]) / 1000)]
    : [null, null];
const res = {
  mode: opt.mode,
  c: C,
  n: N,
  ok: timed.length,
  errors: all.length,
  first_error: all[0] ?? null,
  wall_s: wall,
  conv_per_s: timed.length / wall,
  conv_per_s_first_half: halves[0],
  conv_per_s_second_half: halves[1],
  conv_p50_ms: pct(conv, 50),
  conv_p99_ms: pct(conv, 99),
  first_run_p50_ms: pct(first, 50),
  first_run_p99_ms: pct(first, 99),
  ttfe_p50_ms: opt.mode === "stream" ? pct(ttfe, 50) : null,
  ttfe_p99_ms: opt.mode === "stream" ? pct(ttfe, 99) : null,
  server_cpu_ticks: cpu1 - cpu0,
  server_rss_peak_kib: peak.rss,
  server_rss_anon_peak_kib: peak.anon,
  client_cpu_s: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
};
console.log(JSON.stringify(res));
process.exit(all.length ? 1 : 0);
