// A run streamed by the real client while its `weft serve` is SIGKILLed
// and restarted on the same address (driven by TestServeSDKSIGKILL in
// cmd/weft/serve_sdk_test.go, which kills and restarts the server). The
// client reconnects by itself to the run's Location with Last-Event-ID;
// the restarted server resumes the run from its last recorded step; join
// returns the final values; the thread's history has every step once.
import { Client } from "../../../../test/langgraph-sdk/index.mjs";
import { url, eq, ok, main, step } from "../../../../server/testdata/sdk/lib.mjs";

const thread = process.env.THREAD;
const n = Number(process.env.N);
const want = Number(process.env.WANT_ACC);

await main("sigkill", async () => {
  // Every request the client sends, with its Last-Event-ID.
  const sent = [];
  const c = new Client({
    apiUrl: url,
    apiKey: null,
    onRequest: (u, init) => {
      sent.push(`${init.method ?? "GET"} ${new URL(u).pathname} ${new Headers(init.headers).get("last-event-id") ?? ""}`.trim());
      return init;
    },
  });
  await c.threads.create({ threadId: thread });

  step(`a run of ${n} steps, streamed; the server is killed and restarted under it`);
  let run;
  const seen = []; // the i of each values event the client got
  let last;
  let streamError;
  try {
    for await (const ev of c.runs.stream(thread, "Crash", {
      input: { n },
      streamMode: ["values", "updates"],
      onRunCreated: (m) => { run = m.run_id; },
    })) {
      if (ev.event === "values") { seen.push(ev.data.i); last = ev.data; }
      if (ev.event === "error") streamError = ev.data;
    }
  } catch (e) {
    streamError = String(e);
  }
  ok(run, "onRunCreated gave the run id");
  const rejoins = sent.filter((s) => s.startsWith(`GET /threads/${thread}/runs/${run}/stream`));
  console.log(`  the client's stream: ${seen.length} values events, i from ${seen[0]} to ${seen.at(-1)}; rejoins: ${JSON.stringify(rejoins)}; error: ${JSON.stringify(streamError ?? null)}`);
  ok(rejoins.length >= 1 && rejoins.every((r) => /\d+$/.test(r)),
    "the client saw the stream cut and rejoined the run's stream with Last-Event-ID", sent);

  step("the client's stream lost nothing silently");
  // The killed server's events are gone with it: a rejoin from one of
  // its ids either gets every step after it (a resumed step may come
  // again) or is told, with an error event, that those events are no
  // longer kept. It never silently gets a stream with steps missing.
  if (streamError === undefined) {
    for (let k = 1; k < seen.length; k++) {
      ok(seen[k] <= seen[k - 1] + 1, `values events skip no step: after i=${seen[k - 1]} came i=${seen[k]}`, seen);
    }
    eq(seen.at(-1), n - 1, "the stream's last values are the last step's");
  } else {
    ok(streamError.error === "CursorExpired" && /restarted/.test(streamError.message),
      "the stream ends with an error saying the events of the killed server are gone", streamError);
  }

  step("join gives the final values; the run succeeded, once");
  const final = await c.runs.join(thread, run);
  eq(final.acc, want, "the final acc");
  eq(final.i, n - 1, "the final i");
  if (streamError === undefined) eq(last, final, "the stream's last values are the final values");
  step("joinStream from the start gives the resumed run's events, to the final values");
  const joined = [];
  for await (const ev of c.runs.joinStream(thread, run)) joined.push(ev);
  eq(joined[0]?.event, "metadata", "the joined stream starts with the metadata");
  const jv = joined.filter((e) => e.event === "values").map((e) => e.data);
  ok(jv.length > 0 && joined.every((e) => e.event !== "error"), "the joined stream has values and no error", joined.map((e) => e.event));
  for (let k = 1; k < jv.length; k++) ok(jv[k].i <= jv[k - 1].i + 1, `the joined stream skips no step after i=${jv[k - 1].i}`, jv.map((v) => v.i));
  eq(jv.at(-1), final, "the joined stream's last values are the final values");
  ok(jv[0].i <= seen.at(-1) + 1, `the joined stream starts where the resumed run did, at most one step after the last the client saw (${seen.at(-1)})`, jv[0].i);
  const got = await c.runs.get(thread, run);
  eq(got.status, "success", "the run's status");
  eq((await c.runs.list(thread)).map((r) => r.run_id), [run], "one run in the thread");
  eq((await c.threads.get(thread)).status, "idle", "the thread's status");

  step("the history has every step once");
  const hist = await c.threads.getHistory(thread, { limit: 100000 });
  eq(new Set(hist.map((h) => h.checkpoint.checkpoint_id)).size, hist.length, "checkpoint ids are distinct");
  const steps = hist.slice().reverse().filter((h) => h.metadata.node === "step");
  eq(steps.map((h) => h.metadata.step), Array.from({ length: n }, (_, k) => k + 1), "the steps of the history, oldest first");
  eq(new Set(steps.map((h) => h.metadata.run)), new Set([1]), "every step is of the one run");
});
