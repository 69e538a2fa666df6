// The thread stream with the real client: client.threads.joinStream,
// joined before a thread's first run, sees that run's frames and its
// run_done, then the next run's, in order; joined again with an event's
// id (lastEventId) it gets exactly the rest; streamMode lifecycle sends
// the metadata and run_done frames only; an unknown thread is 404;
// deleting the thread ends the stream.
import { Client } from "../../../test/langgraph-sdk/index.mjs";
import { url, ok, eq, fails } from "./lib.mjs";

// A client whose fetch tells when a thread stream's answer has come (the
// client is joined): the runs are started only then.
let joined = () => {};
const nextJoin = () => new Promise((res) => (joined = res));
const c = new Client({
  apiUrl: url,
  apiKey: null,
  callerOptions: {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (/\/threads\/[^/]+\/stream(\?|$)/.test(String(input)) && res.ok) joined();
      return res;
    },
  },
});

/** take reads parts of gen until the n-th run_done, within 20 s. */
async function take(gen, n, what) {
  const out = [];
  const timer = setTimeout(() => {
    console.error(`${what}: no end after 20s, got ${JSON.stringify(out)}`);
    process.exit(1);
  }, 20000);
  let done = 0;
  for await (const p of gen) {
    out.push(p);
    if (p.event === "run_done" && ++done === n) break;
  }
  clearTimeout(timer);
  return out;
}

const short = (ps) => ps.map((p) => `${p.id} ${p.event}`);

await fails(c.threads.joinStream("no-such-thread").next(), 404, "joinStream of an unknown thread");

const thread = await c.threads.create();
const tid = thread.thread_id;
let isJoined = nextJoin();
const first = take(c.threads.joinStream(tid), 2, "the live stream");
await isJoined;

const r1 = await c.runs.create(tid, "Approval", { input: { input_text: "doc S" }, streamMode: ["values", "updates"] });
await c.runs.join(tid, r1.run_id);
const r2 = await c.runs.create(tid, "Approval", { command: { resume: "yes" } });
await c.runs.join(tid, r2.run_id);
const got = await first;

// Each run: metadata first, its frames, run_done; every id names its run.
const metas = got.filter((p) => p.event === "metadata").map((p) => p.data.run_id);
eq(metas, [r1.run_id, r2.run_id], "the runs the thread stream followed");
let run = null;
for (const p of got) {
  if (p.event === "metadata") run = p.data.run_id;
  ok(run !== null && p.id.startsWith(`${run}/`), `event ${p.id} ${p.event} is of its run ${run}`);
}
const dones = got.filter((p) => p.event === "run_done").map((p) => p.data);
eq(dones, [
  { run_id: r1.run_id, status: (await c.runs.get(tid, r1.run_id)).status },
  { run_id: r2.run_id, status: "success" },
], "the run_done frames");
ok(got[1].event === "values" && got[1].data.input_text === "doc S", "run 1's first values", got[1]);
const fin = got[got.length - 2];
ok(fin.event === "values" && fin.data.publish?.published === "doc S", "run 2's final values", fin);

// Joined again after the third event: exactly the rest.
const rest = await take(c.threads.joinStream(tid, { lastEventId: got[2].id }), 2, "the rejoined stream");
eq(short(rest), short(got.slice(3)), `rejoined after ${got[2].id}`);

// lifecycle, from the start ("-"): the metadata and run_done frames.
const life = await take(c.threads.joinStream(tid, { lastEventId: "-", streamMode: "lifecycle" }), 2, "lifecycle");
eq(short(life), short(got.filter((p) => p.event === "metadata" || p.event === "run_done")), "lifecycle frames");

// Deleting the thread ends a stream waiting for its next run at once
// (within 5 s, well before the 15 s keep-alive).
isJoined = nextJoin();
const ended = (async () => {
  const parts = [];
  for await (const p of c.threads.joinStream(tid)) parts.push(p);
  return parts;
})();
await isJoined;
await c.threads.delete(tid);
const after = await Promise.race([ended, new Promise((res) => setTimeout(() => res("timeout"), 5000).unref())]);
eq(after, [], "the stream after the thread's delete");
console.log(`thread stream: ${got.length} events over 2 runs; rejoined ${rest.length}; lifecycle ${life.length}`);
