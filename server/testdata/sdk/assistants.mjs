// assistants.search/get/getGraph/getSchemas/count with the real client.
import { client, eq, ok, fails, main, step } from "./lib.mjs";

await main("assistants", async () => {
  const c = client();
  const approvalID = process.env.APPROVAL_ID;

  step("search: every served workflow, one assistant each");
  const all = await c.assistants.search();
  eq(all.map((a) => a.graph_id).sort(), ["Approval", "IntentQA", "Sleepy", "Talky"], "search() graph ids");
  for (const a of all) {
    ok(a.name === a.graph_id, `assistant ${a.graph_id}: name is the graph id`, a.name);
    ok(/^[0-9a-f-]{36}$/.test(a.assistant_id), `assistant ${a.graph_id}: a UUID id`, a.assistant_id);
  }
  const found = await c.assistants.search({ graphId: "Approval" });
  ok(found.length === 1 && found[0].assistant_id === approvalID, "search({graphId: Approval}) finds its assistant", found);
  eq(await c.assistants.search({ graphId: "Nope" }), [], "search of an unknown graph");
  const page = await c.assistants.search({ limit: 2, offset: 0 });
  ok(page.length === 2, "search limit 2", page.length);
  const rest = await c.assistants.search({ limit: 2, offset: 2 });
  ok(rest.length === 2, "search offset 2", rest.length);
  eq([...page, ...rest].map((a) => a.graph_id).sort(), ["Approval", "IntentQA", "Sleepy", "Talky"], "the pages cover every assistant once");

  step("count");
  eq(await c.assistants.count(), 4, "count()");
  eq(await c.assistants.count({ graphId: "Sleepy" }), 1, "count({graphId: Sleepy})");

  step("get by graph id and by UUID");
  const byName = await c.assistants.get("Approval");
  const byID = await c.assistants.get(approvalID);
  eq(byName, byID, "get(Approval) and get(uuid)");
  ok(byName.assistant_id === approvalID && byName.graph_id === "Approval", "get(Approval)", byName);
  ok(byName.description === "Draft, review by a person, publish.", "the description is the workflow's", byName.description);
  await fails(c.assistants.get("Nope"), 404, "get of an unknown assistant");

  step("getGraph: LangGraph's nodes and edges");
  const g = await c.assistants.getGraph("Approval");
  eq(g.nodes.map((n) => n.id), ["__start__", "draft", "review", "publish", "__end__"], "graph nodes");
  const edges = g.edges.map((e) => `${e.source}>${e.target}${e.conditional ? "?" : ""}`).sort();
  eq(edges, ["__start__>draft", "draft>review", "publish>__end__", "review>publish?", "review>review?"].sort(), "graph edges");
  const gx = await c.assistants.getGraph("Approval", { xray: true });
  eq(gx.nodes.map((n) => n.id), g.nodes.map((n) => n.id), "graph with xray (no subgraphs: the same nodes)");

  step("getSchemas: JSON Schemas of the workflow's types");
  const sc = await c.assistants.getSchemas("Approval");
  ok(sc.graph_id === "Approval", "schemas graph_id", sc.graph_id);
  for (const k of ["input_schema", "output_schema", "state_schema"]) {
    ok(sc[k] && typeof sc[k] === "object", `schemas.${k} is an object`, sc[k]);
  }
  ok(sc.input_schema.properties?.input_text?.type === "string", "input_schema has input_text: string", sc.input_schema);
  eq(sc.state_schema.properties?.review?.properties?.verdict?.enum, ["yes", "no"], "state_schema review.verdict");
  await fails(c.assistants.getSchemas("Nope"), 404, "schemas of an unknown assistant");
});
