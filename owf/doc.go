// Package owf is weft's front-end for the JSON workflow format of
// ollama-workflows (seed 004), in both of its eras: the prompt era the seed
// documents (prompt, check, config.custom_tool, the search input op) and the
// messages era of the reference's HEAD (messages, custom_tools, search as a
// web search).
//
// Load parses a document into a Document; every problem is an *Error naming
// file, line, column and JSON path. Compile turns a Document into an
// ordinary flow.Workflow: the reference's memory (cache, stacks, file
// system) is workflow state, each task is a node whose action (registered by
// Register) carries out the task and its step's routing with the
// reference's semantics, and the routing between tasks is written out as
// edges. The workflow runs on weft's engine like any other, in durable
// threads too, and lang.FormatWorkflow prints it as .wf (weft convert).
//
// Executor is the short way to run a document:
//
//	doc, err := owf.LoadFile("workflow.json", nil)
//	x, err := owf.NewExecutor(owf.Options{Model: model, Embedder: embedder})
//	out, res, err := x.Execute(ctx, doc, &input, nil)
//
// A failed run returns a *WorkflowError with the reference's message
// ("Workflow execution failed: Max steps reached"). Where the reference
// panics, weft fails the run with an ordinary error instead; docs/ollama-workflows.md
// lists every divergence.
package owf
