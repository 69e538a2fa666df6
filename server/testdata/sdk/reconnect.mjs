// Run streams whose connection the test server cuts before their second
// event, while the run naps (server/sdk_test.go ends each nap once the
// client has rejoined, and checks the rejoin requests): the real client
// rejoins at the Location header with Last-Event-ID, and its consumer
// sees every event exactly once, in order. The first cut is a dropped
// connection in the middle of an event; the second a reply that ends
// cleanly while the run goes on (the client asks the run's status, then
// rejoins).
import { client, eq, events, main, step } from "./lib.mjs";

await main("reconnect", async () => {
  const c = client();
  for (const [text, how] of [["a", "a connection dropped mid-event"], ["b", "a reply ended early"]]) {
    const th = await c.threads.create();
    const created = [];
    step(`stream a run through ${how}`);
    const t0 = Date.now();
    const evs = await events(c.runs.stream(th.thread_id, "Sleepy", {
      input: { input_text: text },
      streamMode: ["values", "updates"],
      onRunCreated: (m) => created.push(m),
    }));
    console.log(`  the stream, rejoined, took ${Date.now() - t0} ms`);
    const epoch = evs[0]?.id?.split("-")[0];
    eq(evs.map((e) => `${e.id} ${e.event}`), [`${epoch}-0 metadata`, `${epoch}-1 values`, `${epoch}-2 updates`, `${epoch}-3 values`], `${how}: every event once, in order`);
    eq(evs[0].data, { run_id: created[0]?.run_id, attempt: 1 }, `${how}: the metadata event`);
    eq(evs[1].data, { input_text: text }, `${how}: the event at the cut, whole`);
    eq(evs[2].data, { nap: { out: `slept ${text}` } }, `${how}: the update after the cut`);
    eq(evs[3].data, { input_text: text, nap: { out: `slept ${text}` } }, `${how}: the final values`);
    const runs = await c.runs.list(th.thread_id);
    eq(runs.map((r) => [r.run_id, r.status]), [[created[0].run_id, "success"]], `${how}: one run, ended once, successfully`);
  }
});
