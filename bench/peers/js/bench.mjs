// LangGraph.js side of weft's side-by-side engine-overhead benchmark.
//
//   node bench.mjs SHAPE N DIR [WARM_MS]
//
// SHAPE is one of S1, S2, S3, S4mem, S4sqlite (the shapes of
// shared/reference/peers.md, mirrored by bench/peers/harness). The shape is
// built once, invoked for WARM_MS (default 2000 ms, at least 3 times) as warm-up, then N times measured;
// every invocation checks its final state and a wrong one exits 1 with a
// message on stderr. On success exactly one JSON line goes to stdout.
// DIR is a scratch directory (created if missing) for the S4sqlite file.

import { readFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  Annotation,
  StateGraph,
  MemorySaver,
  START,
  END,
} from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

const SHAPES = ["S1", "S2", "S3", "S4mem", "S4sqlite"];

// S3 makes LangGraph.js add more than 10 abort listeners to one AbortSignal,
// and Node warns once per signal, that is once per invocation. Print each
// distinct warning once so stderr stays readable.
const warned = new Set();
process.removeAllListeners("warning");
process.on("warning", (w) => {
  const key = `${w.name}: ${w.message}`;
  if (warned.has(key)) return;
  warned.add(key);
  process.stderr.write(`(node) ${key} (repeats are not printed)\n`);
});

function fail(msg) {
  process.stderr.write(`bench.mjs: ${msg}\n`);
  process.exit(1);
}

const version = JSON.parse(
  readFileSync(
    new URL("./node_modules/@langchain/langgraph/package.json", import.meta.url),
    "utf8",
  ),
).version;

// The state of every shape: count keeps the last value written, log appends.
const State = Annotation.Root({
  count: Annotation(),
  log: Annotation({
    reducer: (left, right) => left.concat(right),
    default: () => [],
  }),
});

const CHAIN = Array.from({ length: 10 }, (_, i) => `n${i}`);
const BRANCHES = Array.from({ length: 100 }, (_, i) => `p${String(i).padStart(2, "0")}`);

// chain10: n0 -> n1 -> ... -> n9.
function chain10() {
  const g = new StateGraph(State);
  for (const name of CHAIN) {
    g.addNode(name, (state) => ({ count: state.count + 1, log: [name] }));
  }
  g.addEdge(START, CHAIN[0]);
  for (let i = 1; i < CHAIN.length; i++) g.addEdge(CHAIN[i - 1], CHAIN[i]);
  g.addEdge(CHAIN[CHAIN.length - 1], END);
  return g;
}

// loop1000: a -> b, b -> a while count < 1000, else END.
function loop1000() {
  return new StateGraph(State)
    .addNode("a", (state) => ({ count: state.count + 1 }))
    .addNode("b", (state) => ({ count: state.count + 1 }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addConditionalEdges("b", (state) => (state.count < 1000 ? "a" : END), ["a", END]);
}

// fanout100: start -> p00..p99 in parallel -> join -> END.
function fanout100() {
  const g = new StateGraph(State);
  g.addNode("start", () => ({}));
  for (const name of BRANCHES) g.addNode(name, () => ({ log: [name] }));
  g.addNode("join", () => ({}));
  g.addEdge(START, "start");
  for (const name of BRANCHES) g.addEdge("start", name);
  g.addEdge(BRANCHES, "join");
  g.addEdge("join", END);
  return g;
}

function checkChain(out) {
  if (out.count !== 10) throw new Error(`chain10: count ${out.count}, want 10`);
  if (out.log.length !== CHAIN.length || out.log.some((v, i) => v !== CHAIN[i])) {
    throw new Error(`chain10: log ${JSON.stringify(out.log)}, want ${JSON.stringify(CHAIN)}`);
  }
}

function checkLoop(out) {
  if (out.count !== 1000) throw new Error(`loop1000: count ${out.count}, want 1000`);
}

function checkFanout(out) {
  const seen = new Set(out.log);
  if (out.log.length !== BRANCHES.length || seen.size !== BRANCHES.length ||
      BRANCHES.some((b) => !seen.has(b))) {
    throw new Error(`fanout100: log has ${out.log.length} entries (${seen.size} distinct), want each of ${BRANCHES.length} once`);
  }
}

// prepare builds shape once; it returns run(i) for invocation i and close().
function prepare(shape, dir) {
  switch (shape) {
    case "S1": {
      const app = chain10().compile();
      return {
        run: async () => checkChain(await app.invoke({ count: 0, log: [] })),
        close: () => {},
      };
    }
    case "S2": {
      const app = loop1000().compile();
      return {
        run: async () => checkLoop(await app.invoke({ count: 0, log: [] }, { recursionLimit: 2500 })),
        close: () => {},
      };
    }
    case "S3": {
      const app = fanout100().compile();
      return {
        run: async () => checkFanout(await app.invoke({ count: 0, log: [] })),
        close: () => {},
      };
    }
    case "S4mem": {
      const app = chain10().compile({ checkpointer: new MemorySaver() });
      return {
        run: async (i) =>
          checkChain(await app.invoke({ count: 0, log: [] }, { configurable: { thread_id: String(i) } })),
        close: () => {},
      };
    }
    case "S4sqlite": {
      const path = join(dir, "langgraphjs-s4.sqlite");
      for (const p of [path, `${path}-wal`, `${path}-shm`]) rmSync(p, { force: true });
      const saver = SqliteSaver.fromConnString(path);
      const app = chain10().compile({ checkpointer: saver });
      return {
        run: async (i) =>
          checkChain(await app.invoke({ count: 0, log: [] }, { configurable: { thread_id: String(i) } })),
        // Average stored size of one checkpoint row (checkpoint blob + metadata).
        checkpointBytes: () => {
          const row = saver.db
            .prepare("SELECT COUNT(*) AS n, AVG(LENGTH(checkpoint) + LENGTH(metadata)) AS avg FROM checkpoints")
            .get();
          if (!row || !row.n) throw new Error("S4sqlite: no checkpoint rows written");
          return Math.round(row.avg);
        },
        close: () => saver.db.close(),
      };
    }
    default:
      throw new Error(`unknown shape ${shape}`);
  }
}

async function main() {
  const [shape, nArg, dir, warmArg] = process.argv.slice(2);
  if (!SHAPES.includes(shape) || !nArg || !dir) {
    fail(`usage: node bench.mjs SHAPE N DIR [WARM_MS]  (SHAPE one of ${SHAPES.join(", ")})`);
  }
  const n = Number(nArg);
  if (!Number.isInteger(n) || n < 1) fail(`N must be a positive integer, got ${nArg}`);
  mkdirSync(dir, { recursive: true });

  const bench = prepare(shape, dir);
  // Warm-up: V8 needs many invocations before its optimizing compiler has
  // seen the hot paths (S1 costs 35 ms per invocation after 20, 13 ms
  // after 1,000), so run for WARM_MS milliseconds (default 2000) and at
  // least 3 invocations before measuring.
  const warmMs = warmArg === undefined ? 2000 : Number(warmArg);
  if (!Number.isFinite(warmMs) || warmMs < 0) fail(`WARM_MS must be a number of milliseconds, got ${warmArg}`);
  let i = 0; // numbers every invocation, so S4 starts a new thread each time
  const warmEnd = process.hrtime.bigint() + BigInt(Math.round(warmMs * 1e6));
  while (i < 3 || process.hrtime.bigint() < warmEnd) await bench.run(i++);

  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < n; k++) await bench.run(i++);
  const t1 = process.hrtime.bigint();
  const cpu = process.cpuUsage(cpu0); // microseconds, user and system

  const checkpointBytes = bench.checkpointBytes ? bench.checkpointBytes() : 0;
  bench.close();

  const result = {
    engine: "langgraphjs",
    version,
    shape,
    n,
    ns_per_op: Math.round(Number(t1 - t0) / n),
    cpu_ns_per_op: Math.round(((cpu.user + cpu.system) * 1000) / n),
    max_rss: process.resourceUsage().maxRSS * 1024, // maxRSS is in kilobytes
    checkpoint_bytes: checkpointBytes,
  };
  process.stdout.write(JSON.stringify(result) + "\n");
}

main().catch((err) => fail(err && err.stack ? err.stack : String(err)));
