// Seed 002's sqlanalyst served by `weft serve` (driven by
// TestServeSDKSQLAnalyst in cmd/weft/serve_sdk_test.go): two conversations
// of three turns each, at once, on two threads, with the real client. The
// third turn of each asks what was asked before, which the agent answers
// from its chat history (scenario B). Nothing of one thread may show in
// the other: answers, SQL, chat history, checkpoints, search.
import { client, eq, ok, main, step } from "../../../../server/testdata/sdk/lib.mjs";

const suite = `sqlanalyst-${process.pid}-${Date.now()}`;
const recall = "What did I ask you before?";

// Each conversation: its questions, what its answers must say, and what
// its SQL must read. The first sends input_text, the second a chat UI's
// messages.
const conversations = {
  albums: {
    input: (q) => ({ input_text: q }),
    turns: [
      { q: "Which artist has the most albums?", answer: "Iron Maiden", sql: "FROM Artist ar JOIN Album" },
      { q: "Which country spends the most?", answer: "USA", sql: "FROM Invoice GROUP BY BillingCountry" },
    ],
  },
  genres: {
    input: (q) => ({ messages: [{ role: "user", content: q }] }),
    turns: [
      { q: "Which genre has the most tracks?", answer: "Rock", sql: "JOIN Genre g" },
      { q: "Which employee supports the most customers?", answer: "Jane Peacock", sql: "c.SupportRepId" },
    ],
  },
};

// The nodes of the seed's paths, as the streamed updates name them.
const pathA = ["load_schema", "orchestrator", "extract_analytical_intent", "refine_intent", "next_tool",
  "create_sql_query_or_queries", "execute_sql_query", "next_tool", "generate_answer", "answer_a", "remember"];
const subSteps = ["start", "execute_sql_query", "create_query_analysis", "create_query_explanation", "done"].map((n) => `execute_sql_query[1]/${n}`);
const pathB = ["load_schema", "orchestrator", "generate_answer", "answer_b", "remember"];

// turn streams one run of the thread; it returns the nodes its updates
// name and the run's last values.
async function turn(c, name, tid, input) {
  const nodes = [];
  let values;
  let meta;
  for await (const ev of c.runs.stream(tid, "SQLAnalyst", { input, streamMode: ["updates", "values"] })) {
    if (ev.event === "metadata") meta = ev.data;
    else if (ev.event === "updates") nodes.push(...Object.keys(ev.data));
    else if (ev.event === "values") values = ev.data;
    else if (ev.event === "error") throw new Error(`${name}: the run failed: ${JSON.stringify(ev.data)}`);
  }
  ok(meta?.run_id, `${name}: the stream starts with the run's metadata`, meta);
  ok(values, `${name}: the stream sends values`);
  return { nodes, values };
}

// conversation runs the three turns of one conversation on its own thread.
async function conversation(c, name) {
  const conv = conversations[name];
  const th = await c.threads.create({ metadata: { suite, conversation: name } });
  const tid = th.thread_id;
  const history = [];
  for (const [i, t] of conv.turns.entries()) {
    const { nodes, values } = await turn(c, `${name} turn ${i + 1}`, tid, conv.input(t.q));
    eq(nodes, pathA, `${name} turn ${i + 1}: the updates name scenario A's path`);
    eq(values.input_text, t.q, `${name} turn ${i + 1}: input_text is its question`);
    eq(values.remember.scenario, "A", `${name} turn ${i + 1}: scenario`);
    ok(values.remember.answer.startsWith(`Answer to ${t.q} `) && values.remember.answer.includes(t.answer),
      `${name} turn ${i + 1}: the answer is to its question, from its result (${t.answer})`, values.remember.answer);
    ok(values.remember.sql.length === 1 && values.remember.sql[0].includes(t.sql),
      `${name} turn ${i + 1}: the SQL is its question's`, values.remember.sql);
    history.push({ question: t.q, response: values.remember.answer });
    eq(values.chat_history, history, `${name} turn ${i + 1}: the chat history holds this thread's turns`);
  }
  const { nodes, values } = await turn(c, `${name} turn 3`, tid, conv.input(recall));
  eq(nodes, pathB, `${name} turn 3: the updates name scenario B's path`);
  eq(values.remember.scenario, "B", `${name} turn 3: scenario`);
  eq(values.remember.answer, `You asked before: ${conv.turns.map((t) => t.q).join(" | ")}`,
    `${name} turn 3: the answer recalls this thread's questions, and only them`);
  eq(values.remember.sql, [], `${name} turn 3: no SQL`);
  history.push({ question: recall, response: values.remember.answer });
  eq(values.chat_history, history, `${name} turn 3: the chat history`);
  return { tid, history };
}

await main("sqlanalyst", async () => {
  const c = client();
  step("two conversations of three turns at once, on two threads");
  const [albums, genres] = await Promise.all([conversation(c, "albums"), conversation(c, "genres")]);
  ok(albums.tid !== genres.tid, "two threads", [albums.tid, genres.tid]);
  const own = { albums, genres };

  for (const [name, other] of [["albums", "genres"], ["genres", "albums"]]) {
    const { tid, history } = own[name];
    const foreign = [...conversations[other].turns.map((t) => t.q), ...own[other].history.map((h) => h.response)];

    step(`${name}: the thread's state, runs, history and search`);
    const th = await c.threads.get(tid);
    eq(th.status, "idle", `${name}: status`);
    eq(th.metadata.conversation, name, `${name}: metadata`);
    const st = await c.threads.getState(tid);
    eq(st.values.chat_history, history, `${name}: getState's chat history is this thread's three turns`);
    eq(st.values.input_text, recall, `${name}: getState's input_text is the last turn's`);
    eq(st.next, [], `${name}: nothing next`);
    const runs = await c.runs.list(tid);
    eq(runs.map((r) => r.status), ["success", "success", "success"], `${name}: three runs, all successful`);
    eq(new Set(runs.map((r) => r.thread_id)), new Set([tid]), `${name}: the runs are the thread's`);

    const hist = await c.threads.getHistory(tid, { limit: 1000 });
    ok(hist.length >= 3 * 5, `${name}: the history has the steps of three runs`, hist.length);
    const questions = new Set(hist.map((h) => h.values.input_text).filter((q) => q !== undefined));
    eq([...questions].sort(), [...conversations[name].turns.map((t) => t.q), recall].sort(),
      `${name}: the checkpoints' questions are this thread's`);
    const text = JSON.stringify(hist);
    for (const f of foreign) ok(!text.includes(f), `${name}: no checkpoint holds the other thread's ${JSON.stringify(f)}`);
    for (const h of hist) {
      ok(h.checkpoint.thread_id === tid && h.metadata.thread_id === tid && h.metadata.conversation === name,
        `${name}: every checkpoint is this thread's`, { checkpoint: h.checkpoint, metadata: h.metadata });
    }
    eq(new Set(hist.map((h) => h.checkpoint.checkpoint_id)).size, hist.length, `${name}: checkpoint ids are distinct`);
    // Steps only (a "loop" checkpoint without a node is a snapshot of the
    // state the engine took in the run's course); the steps of the mapped
    // ProcessQuery run are the parent's, named by the map element.
    const steps = hist.slice().reverse().filter((h) => h.metadata.source === "loop" && h.metadata.node).map((h) => `${h.metadata.run}:${h.metadata.node}`);
    const stepsA = pathA.flatMap((n) => n === "execute_sql_query" ? subSteps : [n]);
    eq(steps, [...stepsA.map((n) => `1:${n}`), ...stepsA.map((n) => `2:${n}`), ...pathB.map((n) => `3:${n}`)],
      `${name}: the history's steps, oldest first, are its three runs' paths, each step once`);

    const found = await c.threads.search({ metadata: { suite, conversation: name } });
    eq(found.map((t) => t.thread_id), [tid], `${name}: threads.search by metadata finds its thread only`);
    eq(found[0].values?.chat_history, history, `${name}: the found thread's values`);
  }

  step("threads.search by the suite's metadata finds both");
  const both = await c.threads.search({ metadata: { suite }, sortBy: "created_at", sortOrder: "asc" });
  eq(new Set(both.map((t) => t.thread_id)), new Set([albums.tid, genres.tid]), "search by the suite");
});
