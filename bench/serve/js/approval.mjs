// The Approval graph of weft's server benchmark in LangGraph.js, the same
// graph as ../approval.wf: draft copies the input text to body; review asks a
// person "Approve this draft?" with interrupt(); "no" goes back to review
// (counting a round) while fewer than 2 rounds were taken, anything else
// goes on to publish, which copies body to published and the rounds to
// revisions.
import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";

const ApprovalState = Annotation.Root({
  input_text: Annotation(),
  body: Annotation(),
  verdict: Annotation(),
  rounds: Annotation(),
  published: Annotation(),
  revisions: Annotation(),
});

function draft(state) {
  return { body: state.input_text, rounds: state.rounds ?? 0 };
}

// interrupt() pauses the run the first time; when the run is resumed the
// node starts again and interrupt() returns the answer. Coming back here
// after a "no" is a new round.
function review(state) {
  const verdict = interrupt({ question: "Approve this draft?" });
  const rounds = (state.rounds ?? 0) + (state.verdict === "no" ? 1 : 0);
  return { verdict, rounds };
}

function afterReview(state) {
  return state.verdict === "no" && (state.rounds ?? 0) < 2 ? "review" : "publish";
}

function publish(state) {
  return { published: state.body, revisions: state.rounds ?? 0 };
}

export const graph = new StateGraph(ApprovalState)
  .addNode("draft", draft)
  .addNode("review", review)
  .addNode("publish", publish)
  .addEdge(START, "draft")
  .addEdge("draft", "review")
  .addConditionalEdges("review", afterReview, ["review", "publish"])
  .addEdge("publish", END)
  .compile();
