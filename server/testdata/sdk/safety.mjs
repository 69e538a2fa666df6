// The API key, clients that go away mid-run, and requests of the wrong
// shape, with the real client. The server requires WEFT_API_KEY.
import { client, eq, ok, fails, started, release, main, step } from "./lib.mjs";

const key = process.env.WEFT_API_KEY;

// until polls cond (async) for up to 10 s.
async function until(what, cond) {
  for (let i = 0; i < 200; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not after 10 s`);
}

// firstEvents reads a stream until it has n events, then aborts it.
async function firstEvents(gen, ac, n) {
  const out = [];
  try {
    for await (const e of gen) {
      out.push(e);
      if (out.length === n) {
        ac.abort();
        break;
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") throw e;
  }
  return out;
}

await main("safety", async () => {
  const c = client(key);

  step("the API key: required, checked, never echoed");
  eq((await c.assistants.search()).length, 4, "search with the key");
  for (const [what, other] of [["no key", client(null)], ["a wrong key", client("wrong")], ["the key's prefix", client(key.slice(0, 5))]]) {
    const e = await fails(other.threads.create(), 401, `threads.create with ${what}`);
    ok(!e.text.includes(key), `the 401 with ${what} does not show the key`, e.text);
    await fails(other.runs.wait(null, "Approval", { input: { input_text: "x" } }), 401, `runs.wait with ${what}`);
  }
  eq(await c.threads.count(), 0, "refused requests made no thread");

  step("a stream's client goes away: the run goes on (on_disconnect continue, the default)");
  let th = await c.threads.create();
  let ac = new AbortController();
  const run = [];
  let evs = await firstEvents(c.runs.stream(th.thread_id, "Sleepy", { input: { input_text: "gone" }, signal: ac.signal, onRunCreated: (m) => run.push(m) }), ac, 2);
  eq(evs.map((e) => e.event), ["metadata", "values"], "the events before the client went");
  eq(await started(), "gone", "the nap started");
  await release();
  eq(await c.runs.join(th.thread_id, run[0].run_id), { input_text: "gone", nap: { out: "slept gone" } }, "the run ended without its client");
  eq((await c.runs.get(th.thread_id, run[0].run_id)).status, "success", "the run's status");

  step("a stream's client goes away with on_disconnect cancel: the run is cancelled");
  ac = new AbortController();
  run.length = 0;
  evs = await firstEvents(c.runs.stream(th.thread_id, "Sleepy", { input: { input_text: "cancel me" }, onDisconnect: "cancel", signal: ac.signal, onRunCreated: (m) => run.push(m) }), ac, 2);
  eq(await started(), "cancel me", "the nap started");
  await until("the run is cancelled once its client went", async () => (await c.runs.get(th.thread_id, run[0].run_id)).status === "interrupted");
  eq((await c.threads.get(th.thread_id)).status, "idle", "the thread after the cancel");

  step("a joinStream client goes away with cancelOnDisconnect: the run is cancelled");
  const bg = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "joined" } });
  eq(await started(), "joined", "the nap started");
  ac = new AbortController();
  evs = await firstEvents(c.runs.joinStream(th.thread_id, bg.run_id, { cancelOnDisconnect: true, signal: ac.signal }), ac, 2);
  eq(evs.map((e) => e.event), ["metadata", "values"], "the joined events before the client went");
  await until("the joined run is cancelled once its client went", async () => (await c.runs.get(th.thread_id, bg.run_id)).status === "interrupted");

  step("a joinStream client goes away without asking: the run goes on");
  const bg2 = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "kept" } });
  eq(await started(), "kept", "the nap started");
  ac = new AbortController();
  await firstEvents(c.runs.joinStream(th.thread_id, bg2.run_id, { signal: ac.signal }), ac, 2);
  await new Promise((r) => setTimeout(r, 200));
  eq((await c.runs.get(th.thread_id, bg2.run_id)).status, "running", "the joined run after its client went");
  await release();
  eq(await c.runs.join(th.thread_id, bg2.run_id), { input_text: "kept", nap: { out: "slept kept" } }, "the joined run's end");

  step("a runs.wait client goes away: the run goes on");
  ac = new AbortController();
  const w = c.runs.wait(th.thread_id, "Sleepy", { input: { input_text: "waited" }, signal: ac.signal });
  eq(await started(), "waited", "the nap started");
  const running = (await c.runs.list(th.thread_id, { status: "running" })).map((r) => r.run_id);
  eq(running.length, 1, "one run running");
  ac.abort();
  await w.then(() => { throw new Error("the aborted wait answered"); }, (e) => ok(e.name === "AbortError", "the aborted wait throws AbortError", String(e)));
  await release();
  const ended = await c.runs.join(th.thread_id, running[0]);
  eq(ended, { input_text: "waited", nap: { out: "slept waited" } }, "the run whose wait went away");

  step("requests of the wrong shape: 422 naming the field");
  th = await c.threads.create();
  await fails(c.runs.wait(th.thread_id, "Approval", { input: "just text" }), 422, "input as a string", "$.input");
  await fails(c.runs.wait(th.thread_id, "Approval", { input: { input_text: 7 } }), 422, "input_text as a number", "input_text");
  await fails(c.runs.stream(th.thread_id, "Approval", { input: { input_text: "x" }, streamMode: ["bogus"] }).next(), 422, "an unknown stream mode", "bogus");
  await fails(c.runs.wait(th.thread_id, "Approval", { input: { input_text: "x" }, multitaskStrategy: "sometimes" }), 422, "an unknown multitask strategy", "multitask_strategy");
  await fails(c.threads.update(th.thread_id, { metadata: "x" }), 422, "metadata as a string", "metadata");
  await fails(c.threads.search({ status: "asleep" }), 422, "an unknown thread status", "status");
  await fails(c.threads.create({ threadId: th.thread_id, ifExists: "sometimes" }), 422, "an unknown if_exists", "if_exists");
  await fails(c.runs.list(th.thread_id, { limit: -1 }), 422, "a negative limit", "limit");
  eq((await c.runs.list(th.thread_id)).length, 0, "wrong requests made no run");
});
