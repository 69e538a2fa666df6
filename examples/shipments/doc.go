// Package shipments is seed 003, an Elasticsearch query agent for ocean
// container shipments, written with weft's typed Go API (package graph).
//
// Each turn starts with F01, Reiterate Intention: the model restates the
// user's message as an executable main goal, given the last five turns
// of the conversation (FormatHistory), and says whether the user pasted a
// query, refers to the previous results ("show me more") or wants the
// search run without questions. F01 replaces State.Question with the main
// goal and writes its sparse context, CompletedOutputs[0]: the previous
// turn's query and page (from its es_query artifact, FindPriorAgentQuery),
// the pasted query, force_execute.
//
// A deterministic planner, F02 (Plan), then dispatches one worker per
// round and reads the worker's slots back in the next: parse_user_query
// (a pasted query; invalid JSON is answered with its byte offset),
// build_query (F06: the model extracts a typed SearchIntent, BuildQuery
// turns it into query DSL; no criterion means a clarifying question),
// execute_query (F07: one page on a search.Backend, "show me more"
// continuing at the previous next_offset), summarize (the counts and the
// model's summary of the page), clarify; record_turn appends the
// TurnSummary with the es_query artifact the next turn's F01 finds.
//
//	reiterate_intention -> plan -> [task] -> parse_user_query | build_query | execute_query
//	                                         | summarize | clarify -> plan
//	                                         | record_turn -> END
//
// Every node returns its own update type, recovers from its LLM and search
// errors with fallbacks recorded in State.Errors, and logs its id and name
// through the logger in Deps. Dependencies are passed to New; nothing is
// global. Conversations run in threads (graph.Compiled.Threads):
// State.ConversationHistory has the append reducer, so it carries over
// from turn to turn.
//
// The program cmd/shipments runs it against a real model and a real
// Elasticsearch cluster or an embedded Bleve index of the generated
// dataset (package dataset), or offline from a recorded session; README.md
// maps the seed's rules to the code.
package shipments
