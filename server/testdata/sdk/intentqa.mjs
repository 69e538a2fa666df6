// Seed 000's IntentQA (examples/intentqa, its model and retrieval
// actions stubbed in server/sdk_test.go) with the real client: an
// unclear request takes the ask_user route, a person answers over HTTP,
// and the answer drives the retrieval. A question and a summary request
// take their routes without asking.
import { client, eq, ok, fails, events, main, step } from "./lib.mjs";

await main("intentqa", async () => {
  const c = client();

  step("an unclear request: the run stops at ask_user with its question");
  const th = await c.threads.create({ metadata: { channel: "C1", thread_ts: "1700000000.000100" } });
  const first = await c.runs.wait(th.thread_id, "IntentQA", { input: { input_text: "numbers please" } });
  const q = first.__interrupt__;
  ok(Array.isArray(q) && q.length === 1, "the first wait ends at a question", first);
  ok(JSON.stringify(q[0].value).includes("Could you clarify your request?"), "the question is ask_user's", q[0].value);
  const st = await c.threads.getState(th.thread_id);
  eq(st.next, ["ask_user"], "next at the question");
  eq(st.values.identify_intent, { intent: "not_clear" }, "the intent in the state");
  eq((await c.threads.get(th.thread_id)).status, "interrupted", "the thread waits");

  step("a wrong answer is refused, naming the field");
  await fails(c.runs.wait(th.thread_id, "IntentQA", { command: { resume: { query: 42 } } }), 422, "a number for the query", "query");

  step("the answer, streamed: it drives the retrieval and the answer");
  const evs = await events(c.runs.stream(th.thread_id, "IntentQA", { command: { resume: "What was 2019 revenue?" }, streamMode: "updates" }));
  eq(evs.slice(1).map((e) => Object.keys(e.data)[0]), ["ask_user", "retrieve", "evaluate", "generate"], "the updates after the answer, node by node");
  eq(evs[1].data.ask_user.query, "What was 2019 revenue?", "the answer as ask_user's output");
  eq(evs[2].data.retrieve, { chunks: ["a chunk about: What was 2019 revenue?"] }, "the retrieval used the answer");
  eq(evs.at(-1).data.generate, { answer: "answered from a chunk about: What was 2019 revenue?" }, "the final answer");
  const end = await c.threads.getState(th.thread_id);
  eq(end.next, [], "nothing next after the answer");
  eq(end.values.rephraseCount, 0, "no rephrasing");
  eq((await c.threads.get(th.thread_id)).status, "idle", "the thread after the answer");

  step("a question and a summary take their routes without asking");
  const qa = await c.runs.wait(null, "IntentQA", { input: { input_text: "What was 2018 revenue?" } });
  eq(qa.generate, { answer: "answered from a chunk about: What was 2018 revenue?" }, "the qa route");
  const sum = await c.runs.wait(null, "IntentQA", { input: { input_text: "Summarize the report" } });
  eq(sum.generate, { answer: "answered from a summary of: Summarize the report" }, "the summary route");
  ok(!("ask_user" in qa) && !("ask_user" in sum), "neither asked", [qa, sum]);

  step("the conversation is found again by its Slack thread");
  const found = await c.threads.search({ metadata: { thread_ts: "1700000000.000100" } });
  eq(found.map((t) => t.thread_id), [th.thread_id], "search by thread_ts");
});
