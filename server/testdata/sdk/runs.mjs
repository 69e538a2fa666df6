// runs.create/stream/wait/list/get/join/joinStream/delete with the real
// client, and the stream modes values, updates, both, messages-tuple.
import { client, eq, ok, fails, events, main, step } from "./lib.mjs";

const interruptOnly = (d) => Array.isArray(d?.__interrupt__) && d.__interrupt__.length === 1 && Object.keys(d).length === 1;

// ordered checks that a stream's ids are <epoch>-0, <epoch>-1, ... in
// order, all of one epoch (the attempt at the run that sent them).
function ordered(evs, what) {
  const epoch = evs[0]?.id?.split("-")[0];
  ok(/^[0-9a-z]{8}$/.test(epoch ?? ""), `${what}: an epoch in the ids`, evs[0]?.id);
  eq(evs.map((e) => e.id), evs.map((_, i) => `${epoch}-${i}`), `${what}: event ids`);
}

await main("runs", async () => {
  const c = client();

  step("stream, default mode (values)");
  let th = await c.threads.create();
  let created = [];
  let evs = await events(c.runs.stream(th.thread_id, "Approval", { input: { input_text: "doc v" }, onRunCreated: (m) => created.push(m) }));
  eq(evs.map((e) => e.event), ["metadata", "values", "values", "values"], "default stream events");
  ordered(evs, "default stream");
  eq(created, [{ run_id: evs[0].data.run_id, thread_id: th.thread_id }], "onRunCreated: the run and thread of the metadata event");
  eq(evs[0].data, { run_id: created[0].run_id, attempt: 1 }, "metadata event");
  eq(evs[1].data, { input_text: "doc v", rounds: 0 }, "first values: the input");
  eq(evs[2].data, { input_text: "doc v", rounds: 0, draft: { body: "doc v" } }, "values after draft");
  ok(interruptOnly(evs[3].data), "last values: the interrupt only", evs[3].data);
  const qid = evs[3].data.__interrupt__[0].id;
  eq((await c.threads.getState(th.thread_id)).tasks[0].interrupts[0].id, qid, "the streamed interrupt is the state's");

  step("stream the answer, updates mode");
  evs = await events(c.runs.stream(th.thread_id, "Approval", { command: { resume: "yes" }, streamMode: "updates" }));
  eq(evs.map((e) => e.event), ["metadata", "updates", "updates"], "updates stream events");
  ordered(evs, "updates stream");
  eq(evs[1].data, { review: { verdict: "yes" } }, "the answer's update");
  eq(evs[2].data, { publish: { published: "doc v", revisions: 0 } }, "publish's update");

  step("stream values and updates at once, as the baseline's streamed variant");
  th = await c.threads.create();
  evs = await events(c.runs.stream(th.thread_id, "Approval", { input: { input_text: "doc 2" }, streamMode: ["values", "updates"] }));
  eq(evs.map((e) => e.event), ["metadata", "values", "updates", "values", "updates", "values"], "values+updates events");
  ordered(evs, "values+updates stream");
  eq(evs[1].data, { input_text: "doc 2", rounds: 0 }, "values+updates: input");
  eq(evs[2].data, { draft: { body: "doc 2" } }, "values+updates: draft's update");
  ok(interruptOnly(evs[4].data) && interruptOnly(evs[5].data), "values+updates: the interrupt in both modes", evs.slice(4));
  eq(evs[4].data, evs[5].data, "the same interrupt in both modes");

  step("messages-tuple: the tokens of Talky's node as AI message chunks");
  th = await c.threads.create();
  evs = await events(c.runs.stream(th.thread_id, "Talky", { input: { input_text: "hello" }, streamMode: "messages-tuple" }));
  const msgs = evs.filter((e) => e.event === "messages");
  eq(evs.map((e) => e.event), ["metadata", "messages", "messages", "messages"], "messages-tuple events");
  ordered(evs, "messages-tuple stream");
  for (const m of msgs) {
    ok(Array.isArray(m.data) && m.data.length === 2, "a messages-tuple event is [chunk, metadata]", m.data);
    const [chunk, md] = m.data;
    ok(typeof chunk.content === "string" && /^(ai|AIMessageChunk)$/.test(chunk.type), "the chunk is an AI message chunk", chunk);
    ok(chunk.id === msgs[0].data[0].id, "the chunks of one message share its id", chunk.id);
    ok(md.langgraph_node === "chat", "the chunk's metadata names the node", md);
    ok(md.thread_id === th.thread_id && md.run_id === evs[0].data.run_id, "the chunk's metadata names the thread and run", md);
  }
  eq(msgs.map((m) => m.data[0].content).join(""), "Hi you", "the tokens make the reply");
  evs = await events(c.runs.stream(th.thread_id, "Talky", { input: { input_text: "again" }, streamMode: ["messages-tuple", "values"] }));
  eq(evs.map((e) => e.event), ["metadata", "values", "messages", "messages", "messages", "values"], "messages-tuple with values");
  eq(evs.at(-1).data.chat, { reply: "Hi you" }, "the values after the tokens");

  step("a failing run: an error event, runs.wait throws, the run and thread are error");
  th = await c.threads.create();
  evs = await events(c.runs.stream(th.thread_id, "Talky", { input: { input_text: "fail" } }));
  eq(evs.map((e) => e.event), ["metadata", "values", "error"], "the failing run's stream");
  ok(typeof evs[2].data.error === "string" && evs[2].data.message.includes("talk: asked to fail"), "the error event names the failure", evs[2].data);
  let failed;
  try {
    failed = await c.runs.wait(th.thread_id, "Talky", { input: { input_text: "fail" } });
  } catch (e) {
    ok(e.status === undefined && e.message.includes("talk: asked to fail"), "runs.wait throws the run's error (not an HTTP error)", String(e));
  }
  ok(failed === undefined, "runs.wait of a failing run throws", failed);
  const raw = await c.runs.wait(th.thread_id, "Talky", { input: { input_text: "fail" }, raiseError: false });
  ok(raw.__error__?.message?.includes("talk: asked to fail"), "runs.wait with raiseError false: the __error__ reply", raw);
  eq((await c.runs.list(th.thread_id)).map((r) => r.status), ["error", "error", "error"], "the failed runs' status");
  eq((await c.threads.get(th.thread_id)).status, "error", "the thread after a failed run");

  step("background runs: create, join, get, list");
  th = await c.threads.create();
  const run = await c.runs.create(th.thread_id, "Approval", { input: { input_text: "doc b" }, metadata: { mine: 1 } });
  ok(run.thread_id === th.thread_id && typeof run.run_id === "string", "create: a run of the thread", run);
  ok(["pending", "running", "success"].includes(run.status), "create: its status", run.status);
  ok(run.metadata?.mine === 1, "create: the run keeps its metadata", run.metadata);
  const joined = await c.runs.join(th.thread_id, run.run_id);
  ok(interruptOnly(joined), "join: the interrupt", joined);
  const got = await c.runs.get(th.thread_id, run.run_id);
  ok(got.run_id === run.run_id && got.status === "success", "get after join", got);
  const run2 = await c.runs.create(th.thread_id, "Approval", { command: { resume: "yes" } });
  eq((await c.runs.join(th.thread_id, run2.run_id)).publish, { published: "doc b", revisions: 0 }, "join of the answer");
  let list = await c.runs.list(th.thread_id);
  eq(list.map((r) => r.run_id).sort(), [run.run_id, run2.run_id].sort(), "list: both runs");
  ok(list.every((r) => r.status === "success"), "list: both succeeded", list.map((r) => r.status));
  eq((await c.runs.list(th.thread_id, { limit: 1 })).length, 1, "list limit 1");
  eq((await c.runs.list(th.thread_id, { status: "pending" })).length, 0, "list of pending runs");
  await fails(c.runs.get(th.thread_id, "no-such-run"), 404, "get of an unknown run");
  await fails(c.runs.list("no-such-thread"), 404, "list of an unknown thread");

  step("joinStream: the whole stream of an ended run, and after a Last-Event-ID");
  evs = await events(c.runs.joinStream(th.thread_id, run.run_id));
  eq(evs.map((e) => e.event), ["metadata", "values", "values", "values"], "joinStream of an ended run");
  ordered(evs, "joinStream");
  eq(evs[0].data.run_id, run.run_id, "joinStream metadata names the run");
  const after = await events(c.runs.joinStream(th.thread_id, run.run_id, { lastEventId: evs[1].id }));
  eq(after.map((e) => e.id), [evs[2].id, evs[3].id], "joinStream after the second event's id");
  eq(after.map((e) => e.data), evs.slice(2).map((e) => e.data), "joinStream after id 1: the same events");
  const modes = await events(c.runs.joinStream(th.thread_id, run2.run_id, { streamMode: ["values"] }));
  eq(modes.at(-1).data.publish, { published: "doc b", revisions: 0 }, "joinStream of the answer ends with the final values");
  await fails(events(c.runs.joinStream(th.thread_id, "no-such-run")), 404, "joinStream of an unknown run");

  step("delete");
  await c.runs.delete(th.thread_id, run.run_id);
  await fails(c.runs.get(th.thread_id, run.run_id), 404, "get of a deleted run");
  list = await c.runs.list(th.thread_id);
  eq(list.map((r) => r.run_id), [run2.run_id], "list after delete");
  eq((await c.threads.getState(th.thread_id)).values.publish, { published: "doc b", revisions: 0 }, "deleting an ended run keeps the thread's state");

  step("stream_subgraphs: a subworkflow's events named mode|node:<task id>, as LangGraph's subgraphs");
  th = await c.threads.create();
  evs = await events(c.runs.stream(th.thread_id, "Nest", { input: { input_text: "x" }, streamMode: ["updates"], streamSubgraphs: true }));
  // As the SDK's StreamManager reads a namespace: the segments after the mode.
  const ns = evs.slice(1).map((e) => (e.event.includes("|") ? e.event.split("|").slice(1) : []));
  ok(evs.slice(1).every((e) => e.event === "updates" || e.event.startsWith("updates|")), "every event is an updates one", evs.map((e) => e.event));
  ok(ns.flat().every((seg) => /^[a-z]+:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(seg)), "segments are node:<uuid5>", ns);
  eq(ns.map((segs) => segs.map((seg) => seg.split(":")[0]).join("/")), ["", "inner", "inner/deeper", "inner", "", ""], "the namespaces' nodes");
  eq(evs.slice(1).map((e) => Object.keys(e.data)[0]), ["prep", "think", "leaf", "deeper", "inner", "fin"], "the updates' nodes");
  eq(new Set(ns.flat().filter((seg) => seg.startsWith("inner:"))).size, 1, "one task id for the inner execution");

  step("interrupt_before / interrupt_after: a run stops at the node, and input null continues it");
  const bt = await c.threads.create();
  const stopEvs = await events(c.runs.stream(bt.thread_id, "Approval", { input: { input_text: "doc B" }, interruptBefore: ["draft"], streamMode: ["values", "updates"] }));
  eq(stopEvs.map((e) => [e.event, e.data]).slice(1), [["values", { input_text: "doc B", rounds: 0 }], ["updates", { __interrupt__: [] }], ["values", { __interrupt__: [] }]], "the stream of a run stopped before draft");
  let bs = await c.threads.getState(bt.thread_id);
  eq([bs.next, bs.tasks.map((t) => [t.name, t.interrupts])], [["draft"], [["draft", []]]], "state stopped before draft: next and tasks");
  eq((await c.threads.get(bt.thread_id)).status, "interrupted", "the thread stopped before draft");
  eq(await c.runs.wait(bt.thread_id, "Approval", { input: null, interruptAfter: ["draft"] }), { __interrupt__: [] }, "continued with interrupt_after draft");
  bs = await c.threads.getState(bt.thread_id);
  eq([bs.values, bs.next], [{ input_text: "doc B", rounds: 0, draft: { body: "doc B" } }, ["review"]], "state stopped after draft");
  const asks = await c.runs.wait(bt.thread_id, "Approval", { input: null });
  eq(asks.__interrupt__?.[0]?.value?.question, "Approve this draft?", "continued: review asks");
  await fails(c.runs.wait(bt.thread_id, "Approval", { input: { input_text: "x" }, interruptBefore: ["draft", "reveiw"] }), 422, "an unknown node in interrupt_before", "$.interrupt_before[1]");
});
