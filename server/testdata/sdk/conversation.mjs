// The conversation of the LangGraph server baseline (load.mjs of
// ../shared/reference/langgraph-server-baseline.md) with the real client:
// a run to the human question, the state, the answer, the final values;
// a wrong answer; the "no" loop; stateless runs.
import { client, eq, ok, fails, events, main, step } from "./lib.mjs";

// conversation is one conversation of the baseline's load script.
async function conversation(c, i) {
  const input_text = `doc ${i}`;
  const th = await c.threads.create();
  const first = await c.runs.wait(th.thread_id, "Approval", { input: { input_text } });
  ok(first?.__interrupt__?.[0]?.value?.question === "Approve this draft?", `conversation ${i}: the first wait ends at the question`, first);
  eq(Object.keys(first), ["__interrupt__"], `conversation ${i}: the first wait answers the interrupt only`);
  const st = await c.threads.getState(th.thread_id);
  eq(st.next, ["review"], `conversation ${i}: next at the question`);
  const done = await c.runs.wait(th.thread_id, "Approval", { command: { resume: "yes" } });
  eq(done, { input_text, rounds: 0, draft: { body: input_text }, review: { verdict: "yes" }, publish: { published: input_text, revisions: 0 } }, `conversation ${i}: the final values`);
  return th.thread_id;
}

await main("conversation", async () => {
  const c = client();

  step("the baseline conversation, one at a time");
  const tid = await conversation(c, 1);
  const th = await c.threads.get(tid);
  ok(th.status === "idle", "the thread is idle after the answer", th.status);
  const st = await c.threads.getState(tid);
  eq(st.next, [], "next after the end");
  eq(st.values.publish, { published: "doc 1", revisions: 0 }, "state values after the end");
  const runs = await c.runs.list(tid);
  eq(runs.map((r) => r.status), ["success", "success"], "both runs succeeded");

  step("ten conversations at once on one client");
  const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => conversation(c, 100 + i)));
  eq(new Set(ids).size, 10, "ten threads");

  step("a wrong answer is a 422 naming the field, and changes nothing");
  const w = await c.threads.create();
  await c.runs.wait(w.thread_id, "Approval", { input: { input_text: "doc w" } });
  await fails(c.runs.wait(w.thread_id, "Approval", { command: { resume: "maybe" } }), 422, "resume with maybe", "command.resume");
  await fails(c.runs.wait(w.thread_id, "Approval", { command: { resume: { verdict: 3 } } }), 422, "resume with a number", "verdict");
  await fails(c.runs.stream(w.thread_id, "Approval", { command: { resume: "maybe" } }).next(), 422, "a streamed resume with maybe", "command.resume");
  await fails(c.runs.create(w.thread_id, "Approval", { command: { resume: "maybe" } }), 422, "a background resume with maybe", "command.resume");
  eq((await c.threads.getState(w.thread_id)).next, ["review"], "still at the question after wrong answers");
  eq((await c.runs.list(w.thread_id)).length, 1, "wrong answers make no run");

  step("no, no, then the loop ends: published with two revisions");
  let r = await c.runs.wait(w.thread_id, "Approval", { command: { resume: "no" } });
  ok(r.__interrupt__?.length === 1, "after the first no: asked again", r);
  r = await c.runs.wait(w.thread_id, "Approval", { command: { resume: { verdict: "no" } } });
  ok(r.__interrupt__?.length === 1, "after the second no (as an object): asked again", r);
  r = await c.runs.wait(w.thread_id, "Approval", { command: { resume: "no" } });
  eq(r.publish, { published: "doc w", revisions: 2 }, "after the third no: published");

  step("errors of runs");
  await fails(c.runs.wait(w.thread_id, "Nope", { input: { input_text: "x" } }), 404, "a run of an unknown assistant");
  await fails(c.runs.wait("no-such-thread", "Approval", { input: { input_text: "x" } }), 404, "a run on an unknown thread");
  await fails(c.runs.wait(w.thread_id, "Approval", { input: { input_txt: "x" } }), 422, "an unknown input field", "input_txt");
  const made = await c.runs.wait("3f4c9b3e-0000-4000-8000-0000000000aa", "Approval", { input: { input_text: "x" }, ifNotExists: "create" });
  ok(made.__interrupt__?.length === 1, "ifNotExists create runs on a new thread", made);

  step("stateless runs.wait and runs.stream keep no thread");
  const before = await c.threads.count();
  const sw = await c.runs.wait(null, "Approval", { input: { input_text: "s" } });
  ok(sw.__interrupt__?.[0]?.value?.question === "Approve this draft?", "stateless wait to the question", sw);
  const created = [];
  const evs = await events(c.runs.stream(null, "Approval", { input: { input_text: "s2" }, streamMode: "updates", onRunCreated: (m) => created.push(m) }));
  eq(evs.map((e) => e.event), ["metadata", "updates", "updates"], "stateless stream events");
  ok(evs[0].data.run_id === created[0]?.run_id && created[0].thread_id === undefined, "onRunCreated of a stateless run: its run id, no thread", created);
  eq(evs[1].data, { draft: { body: "s2" } }, "stateless stream: the draft update");
  ok(evs[2].data.__interrupt__?.length === 1, "stateless stream: the interrupt update", evs[2].data);
  eq(await c.threads.count(), before, "stateless runs leave no thread");
});
