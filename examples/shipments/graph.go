package shipments

import (
	"github.com/weftlang/weft/examples/internal/modelcall"
	"github.com/weftlang/weft/graph"
)

// GraphName is the compiled workflow's name.
const GraphName = "shipments_agent"

// The node names. F01 and F02 are the seed's ids; the workers carry the
// ids the seed's planner dispatches to where it names them (F06 builds a
// query, F07 executes it).
const (
	NodeReiterate  = "reiterate_intention" // F01
	NodePlan       = "plan"                // F02
	NodeParseQuery = "parse_user_query"
	NodeBuildQuery = "build_query"   // F06
	NodeExecute    = "execute_query" // F07
	NodeSummarize  = "summarize"
	NodeClarify    = "clarify"
	NodeRecordTurn = "record_turn"
)

// NodeIDs maps each node to the id it logs: the seed's F-numbers where the
// seed names the node, else a short tag.
func NodeIDs() map[string]string {
	return map[string]string{
		NodeReiterate:  "F01",
		NodePlan:       "F02",
		NodeParseQuery: "PQ",
		NodeBuildQuery: "F06",
		NodeExecute:    "F07",
		NodeSummarize:  "SUM",
		NodeClarify:    "CLR",
		NodeRecordTurn: "REC",
	}
}

// Workers are the nodes the planner dispatches, in the order of the
// conditional edge's targets.
func Workers() []string {
	return []string{NodeParseQuery, NodeBuildQuery, NodeExecute, NodeSummarize, NodeClarify, NodeRecordTurn}
}

// New builds and compiles the agent of seed 003 over deps:
//
//	reiterate_intention (F01) -> plan (F02) -> [task] -> parse_user_query | build_query | execute_query
//	                                                   | summarize | clarify  -> plan (next round)
//	                                                   | record_turn -> END
//
// F01 runs once per turn, at entry; the planner then dispatches one worker
// per round and reads its slots back in the next round, until the turn has
// a response, which record_turn appends to the conversation history with
// the turn's es_query artifact.
//
// Run a turn with Invoke (or Run, for the path and events) on a State
// holding the Question and the ConversationHistory; in a thread
// (Compiled.Threads) the history carries over by itself. Every node
// recovers from its own LLM and search errors (see State.Errors): a run
// fails only when its context is cancelled or a limit is hit.
func New(deps Deps) (*graph.Compiled[State], error) {
	s, err := deps.settings()
	if err != nil {
		return nil, err
	}
	n := &nodes{s: s, log: s.Logger, call: &modelcall.Caller{Model: s.Model, Name: s.ModelName, Timeout: s.CallTimeout, MaxRepairs: s.MaxRepairs}}
	g := graph.New[State](GraphName)
	g.Describe("Elasticsearch query agent for container shipments (seed 003): F01 restates the intent with the history, a deterministic planner dispatches parsing, query building, execution with pagination, summaries and clarifications.")
	graph.AddNode(g, NodeReiterate, n.reiterate,
		graph.WithDescription("F01: LLM (structured ReiterateResult) restates the intent as the main goal; writes question and completed_outputs[0]"))
	graph.AddNode(g, NodePlan, n.plan,
		graph.WithDescription("F02: deterministic planner; F01's flags in round 1, then the workers' slots"))
	graph.AddNode(g, NodeParseQuery, n.parseQuery,
		graph.WithDescription("parse the pasted query; invalid JSON is reported with its byte offset"))
	graph.AddNode(g, NodeBuildQuery, n.buildQuery,
		graph.WithDescription("F06: LLM (structured) search intent, then the deterministic query-DSL builder"))
	graph.AddNode(g, NodeExecute, n.execute,
		graph.WithDescription("F07: run the query's page on the search backend"))
	graph.AddNode(g, NodeSummarize, n.summarize,
		graph.WithDescription("LLM (plain) summary of the page, with the counts"))
	graph.AddNode(g, NodeClarify, n.clarify,
		graph.WithDescription("the clarifying question, no LLM"))
	graph.AddNode(g, NodeRecordTurn, n.recordTurn,
		graph.WithDescription("append the turn summary and its es_query artifact to the history"))

	g.SetEntry(NodeReiterate)
	g.AddEdge(NodeReiterate, NodePlan)
	g.AddConditionalEdges(NodePlan, RouteTask, Workers()...)
	for _, w := range Workers() {
		if w != NodeRecordTurn {
			g.AddEdge(w, NodePlan)
		}
	}
	g.AddEdge(NodeRecordTurn, graph.END)
	return g.Compile(graph.Options{MaxSteps: s.MaxSteps})
}

// RouteTask is the conditional edge after the planner: the worker of its
// task.
func RouteTask(s State) string {
	return s.Task.Worker
}
