// threads.create/get/update/delete/search/count/copy/getState with the
// real client.
import { client, eq, ok, fails, main, step } from "./lib.mjs";

await main("threads", async () => {
  const c = client();

  step("create with metadata; get");
  const t1 = await c.threads.create({ metadata: { user: "u1", n: 1 } });
  ok(typeof t1.thread_id === "string" && t1.thread_id.length > 0, "create: a thread id", t1);
  ok(t1.status === "idle", "a new thread is idle", t1.status);
  eq(t1.metadata, { user: "u1", n: 1 }, "create: metadata");
  eq(t1.values ?? {}, {}, "a new thread has no values yet");
  const g1 = await c.threads.get(t1.thread_id);
  eq(g1, t1, "get of a new thread");
  ok(!Number.isNaN(Date.parse(g1.created_at)) && !Number.isNaN(Date.parse(g1.updated_at)), "timestamps parse", g1);

  step("create with a thread id; ifExists");
  const mine = "3f4c9b3e-0000-4000-8000-000000000001";
  const t2 = await c.threads.create({ threadId: mine, metadata: { user: "u2" }, graphId: "Approval" });
  ok(t2.thread_id === mine, "create with threadId keeps it", t2.thread_id);
  eq(t2.metadata, { user: "u2", graph_id: "Approval" }, "create with graphId: graph_id in metadata");
  await fails(c.threads.create({ threadId: mine }), 409, "create of an existing id");
  const again = await c.threads.create({ threadId: mine, ifExists: "do_nothing", metadata: { user: "other" } });
  eq(again.metadata, t2.metadata, "ifExists do_nothing returns the thread unchanged");

  step("update merges metadata");
  const u = await c.threads.update(t1.thread_id, { metadata: { n: 2, tag: "x" } });
  eq(u.metadata, { user: "u1", n: 2, tag: "x" }, "update: merged metadata");
  eq((await c.threads.get(t1.thread_id)).metadata, u.metadata, "get after update");
  ok(Date.parse(u.updated_at) >= Date.parse(t1.updated_at), "update moves updated_at on", [t1.updated_at, u.updated_at]);

  step("getState of a thread that never ran");
  const s0 = await c.threads.getState(t1.thread_id);
  eq(s0.values ?? {}, {}, "state values of a new thread");
  eq(s0.next, [], "state next of a new thread");
  eq(s0.tasks, [], "state tasks of a new thread");

  step("a run to the question: state, status");
  const r = await c.runs.wait(t1.thread_id, "Approval", { input: { input_text: "doc t" } });
  ok(Array.isArray(r.__interrupt__) && r.__interrupt__.length === 1, "wait to the question", r);
  const s1 = await c.threads.getState(t1.thread_id);
  eq(s1.next, ["review"], "state next at the question");
  eq(s1.values, { input_text: "doc t", rounds: 0, draft: { body: "doc t" } }, "state values at the question");
  ok(s1.tasks.length === 1 && s1.tasks[0].name === "review", "state tasks at the question", s1.tasks);
  const q = s1.tasks[0].interrupts;
  ok(q.length === 1 && q[0].id === r.__interrupt__[0].id && q[0].value.question === "Approve this draft?", "the task's interrupt is the run's", q);
  ok(s1.checkpoint && typeof s1.checkpoint.checkpoint_id === "string", "state has a checkpoint", s1.checkpoint);
  const th = await c.threads.get(t1.thread_id);
  ok(th.status === "interrupted", "thread status at the question", th.status);
  ok(th.metadata.graph_id === "Approval" && th.metadata.user === "u1", "a run labels the thread with its graph, keeping metadata", th.metadata);
  eq(th.values, s1.values, "thread values are the state's");

  step("search and count");
  const t3 = await c.threads.create({ metadata: { user: "u1", n: 3 } });
  const byUser = await c.threads.search({ metadata: { user: "u1" } });
  eq(byUser.map((t) => t.thread_id).sort(), [t1.thread_id, t3.thread_id].sort(), "search by metadata");
  eq((await c.threads.search({ metadata: { user: "u1", n: 3 } })).map((t) => t.thread_id), [t3.thread_id], "search by two metadata keys");
  eq((await c.threads.search({ status: "interrupted" })).map((t) => t.thread_id), [t1.thread_id], "search by status");
  eq((await c.threads.search({ values: { input_text: "doc t" } })).map((t) => t.thread_id), [t1.thread_id], "search by values");
  const all = await c.threads.search();
  eq(all.map((t) => t.thread_id).sort(), [t1.thread_id, t2.thread_id, t3.thread_id].sort(), "search of all");
  const asc = await c.threads.search({ sortBy: "created_at", sortOrder: "asc" });
  eq(asc.map((t) => t.thread_id), [t1.thread_id, t2.thread_id, t3.thread_id], "search sorted by created_at asc");
  const page = await c.threads.search({ limit: 2, offset: 1, sortBy: "created_at", sortOrder: "asc" });
  eq(page.map((t) => t.thread_id), [t2.thread_id, t3.thread_id], "search limit 2 offset 1");
  eq(await c.threads.count(), 3, "count of all");
  eq(await c.threads.count({ metadata: { user: "u1" } }), 2, "count by metadata");
  eq(await c.threads.count({ status: "interrupted" }), 1, "count by status");
  eq(await c.threads.count({ status: "busy" }), 0, "count of busy threads");

  step("copy: a new thread with the state and metadata");
  const cp = await c.threads.copy(t1.thread_id);
  ok(cp.thread_id !== t1.thread_id, "copy has a new id", cp.thread_id);
  ok(cp.metadata.user === "u1" && cp.metadata.graph_id === "Approval", "copy keeps the metadata", cp.metadata);
  const scp = await c.threads.getState(cp.thread_id);
  eq(scp.values, s1.values, "copy's state values");
  eq(scp.next, ["review"], "copy's next");
  step("the copy answers on its own; the original still waits");
  const done = await c.runs.wait(cp.thread_id, "Approval", { command: { resume: "yes" } });
  eq(done.publish, { published: "doc t", revisions: 0 }, "the copy's resume");
  eq((await c.threads.getState(t1.thread_id)).next, ["review"], "the original still waits after its copy answered");
  const cpEmpty = await c.threads.copy(t3.thread_id);
  eq(cpEmpty.metadata, { user: "u1", n: 3 }, "copy of a thread that never ran");

  step("delete");
  await c.threads.delete(t3.thread_id);
  await fails(c.threads.get(t3.thread_id), 404, "get of a deleted thread");
  await fails(c.threads.getState(t3.thread_id), 404, "state of a deleted thread");
  await fails(c.threads.delete(t3.thread_id), 404, "delete of a deleted thread");
  eq(await c.threads.count({ metadata: { user: "u1" } }), 3, "count after delete (t1 and its two copies)");
  await fails(c.threads.get("no-such-thread"), 404, "get of an unknown thread");
  await fails(c.threads.update("no-such-thread", { metadata: { a: 1 } }), 404, "update of an unknown thread");
  await fails(c.threads.copy("no-such-thread"), 404, "copy of an unknown thread");
});
