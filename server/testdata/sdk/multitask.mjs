// Concurrent runs on one thread with the real client: enqueue, reject,
// interrupt, rollback, and cancel, using the Sleepy workflow, whose nap
// the script starts and ends through the test server's /__test/ endpoints.
import { client, eq, ok, fails, events, started, release, main, step } from "./lib.mjs";

const sleepy = (text) => ({ input_text: text, nap: { out: `slept ${text}` } });

await main("multitask", async () => {
  const c = client();

  step("enqueue: a second run waits for the first, then runs");
  let th = await c.threads.create();
  const tid = th.thread_id;
  const a = await c.runs.create(tid, "Sleepy", { input: { input_text: "a" } });
  eq(await started(), "a", "the first nap");
  eq((await c.runs.get(tid, a.run_id)).status, "running", "a while it naps");
  eq((await c.threads.get(tid)).status, "busy", "the thread while a runs");
  const b = await c.runs.create(tid, "Sleepy", { input: { input_text: "b" }, multitaskStrategy: "enqueue" });
  eq(b.status, "pending", "b is enqueued");
  eq(b.multitask_strategy, "enqueue", "b's strategy");
  const bStream = events(c.runs.joinStream(tid, b.run_id)); // opened before b begins
  const byID = Object.fromEntries((await c.runs.list(tid)).map((r) => [r.run_id, r.status]));
  eq(byID, { [a.run_id]: "running", [b.run_id]: "pending" }, "list while a runs and b waits");

  step("reject: a run on the busy thread is a 422, and nothing is made");
  for (const [what, call] of [
    ["create", () => c.runs.create(tid, "Sleepy", { input: { input_text: "r" }, multitaskStrategy: "reject" })],
    ["wait", () => c.runs.wait(tid, "Sleepy", { input: { input_text: "r" }, multitaskStrategy: "reject" })],
    ["stream", () => c.runs.stream(tid, "Sleepy", { input: { input_text: "r" }, multitaskStrategy: "reject" }).next()],
  ]) {
    await fails(call(), 422, `reject by runs.${what}`, "already running");
  }
  eq((await c.runs.list(tid)).length, 2, "rejected runs are not listed");

  step("a ends, then b runs");
  await release();
  eq(await started(), "b", "the second nap, after the first ended");
  eq((await c.runs.get(tid, a.run_id)).status, "success", "a after its end");
  eq((await c.runs.join(tid, a.run_id)), sleepy("a"), "join of a");
  await release();
  eq(await c.runs.join(tid, b.run_id), sleepy("b"), "join of b");
  const bEvs = await bStream;
  eq(bEvs.map((e) => e.event), ["metadata", "values", "values"], "the stream of b, joined while it was enqueued");
  eq(bEvs.at(-1).data, sleepy("b"), "b's stream ends with its values");

  step("three runs.wait at once with enqueue run one at a time, each once");
  th = await c.threads.create();
  const waits = ["x", "y", "z"].map((t) => c.runs.wait(th.thread_id, "Sleepy", { input: { input_text: t }, multitaskStrategy: "enqueue" }));
  const order = [];
  for (let i = 0; i < 3; i++) {
    order.push(await started());
    const running = (await c.runs.list(th.thread_id)).filter((r) => r.status === "running");
    eq(running.length, 1, `one run at a time (nap ${order.at(-1)})`);
    await release();
  }
  eq([...order].sort(), ["x", "y", "z"], "each nap ran once");
  eq(await Promise.all(waits), ["x", "y", "z"].map(sleepy), "each wait answers its own run");
  eq((await c.threads.getState(th.thread_id)).values, sleepy(order[2]), "the thread holds the last run's values");
  eq((await c.runs.list(th.thread_id)).map((r) => r.status), ["success", "success", "success"], "three runs, all succeeded");

  step("four runs.create at once with reject on an idle thread: one runs, three are 422");
  th = await c.threads.create();
  const tries = await Promise.allSettled(["r1", "r2", "r3", "r4"].map((t) => c.runs.create(th.thread_id, "Sleepy", { input: { input_text: t }, multitaskStrategy: "reject" })));
  const won = tries.filter((r) => r.status === "fulfilled");
  const lost = tries.filter((r) => r.status === "rejected");
  ok(won.length === 1, "exactly one concurrent rejecting run is accepted", tries.map((r) => r.status === "fulfilled" ? r.value.run_id : r.reason.status));
  ok(lost.every((r) => r.reason.status === 422), "the others are 422", lost.map((r) => String(r.reason)));
  const first = await started();
  eq(won[0].value.kwargs?.input?.input_text ?? first, first, "the accepted run is the one that naps");
  await release();
  eq(await c.runs.join(th.thread_id, won[0].value.run_id), sleepy(first), "the accepted run's result");
  eq((await c.runs.list(th.thread_id)).length, 1, "one run on the thread");

  step("cancel a running run, and a pending one");
  th = await c.threads.create();
  const cr = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "c" } });
  eq(await started(), "c", "c naps");
  const pend = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "p" } });
  await c.runs.cancel(th.thread_id, pend.run_id);
  eq((await c.runs.get(th.thread_id, pend.run_id)).status, "interrupted", "the cancelled pending run");
  await c.runs.cancel(th.thread_id, cr.run_id, true);
  eq((await c.runs.get(th.thread_id, cr.run_id)).status, "interrupted", "the cancelled running run");
  eq((await c.threads.get(th.thread_id)).status, "idle", "the thread after the cancels");
  await c.runs.cancel(th.thread_id, cr.run_id);
  eq((await c.runs.get(th.thread_id, cr.run_id)).status, "interrupted", "cancelling an ended run changes nothing");
  await fails(c.runs.cancel(th.thread_id, "no-such-run"), 404, "cancel of an unknown run");
  const after = c.runs.wait(th.thread_id, "Sleepy", { input: { input_text: "d" } });
  eq(await started(), "d", "a run after the cancels naps (the pending one never did)");
  await release();
  eq(await after, sleepy("d"), "the run after the cancels");

  step("cancel with rollback deletes the run");
  const rb = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "e" } });
  eq(await started(), "e", "e naps");
  await c.runs.cancel(th.thread_id, rb.run_id, true, "rollback");
  await fails(c.runs.get(th.thread_id, rb.run_id), 404, "get of a rolled back run");
  eq((await c.threads.getState(th.thread_id)).values, sleepy("d"), "the state after the rollback: as before e began");
  eq((await c.threads.getHistory(th.thread_id, { limit: 1 }))[0].values, sleepy("d"), "the history starts at that state");
  eq((await c.threads.get(th.thread_id)).status, "idle", "the thread after the rollback");

  step("interrupt: a new run stops the one running");
  const f = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "f" } });
  eq(await started(), "f", "f naps");
  const g = c.runs.wait(th.thread_id, "Sleepy", { input: { input_text: "g" }, multitaskStrategy: "interrupt" });
  eq(await started(), "g", "g naps after interrupting f");
  eq((await c.runs.get(th.thread_id, f.run_id)).status, "interrupted", "f, interrupted by g");
  await release();
  eq(await g, sleepy("g"), "g's wait");

  step("rollback: a new run deletes the one running");
  const h = await c.runs.create(th.thread_id, "Sleepy", { input: { input_text: "h" } });
  eq(await started(), "h", "h naps");
  const i = c.runs.wait(th.thread_id, "Sleepy", { input: { input_text: "i" }, multitaskStrategy: "rollback" });
  eq(await started(), "i", "i naps after rolling h back");
  await fails(c.runs.get(th.thread_id, h.run_id), 404, "h, rolled back");
  eq((await c.threads.getState(th.thread_id)).values, { input_text: "i" }, "i starts from g's end, not h's");
  await release();
  eq(await i, sleepy("i"), "i's wait");
  const seen = (await c.threads.getHistory(th.thread_id)).map((s) => s.values.input_text);
  ok(!seen.includes("h") && !seen.includes("e"), "the history shows no rolled-back run", seen);
  eq((await c.runs.list(th.thread_id)).map((r) => r.kwargs.input.input_text).sort(), ["c", "d", "f", "g", "i", "p"], "the runs left");
});
