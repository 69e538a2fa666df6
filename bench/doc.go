// Package bench holds weft's engine benchmarks: the shapes of
// ../shared/reference/peers.md, each written twice, with the typed Go API
// (sub-benchmark /go) and in the .wf language (/wf), both run by the same
// engine with trivial node bodies, so what is measured is engine overhead.
//
//	S1 chain10:   10 nodes in a line; state {count, log (append)}; each node adds 1 and appends its name.
//	S2 loop1000:  nodes A and B, A->B, B->A while count < 1000 (each adds 1), then end: cost per node-step.
//	S3 fanout100: start -> 100 parallel nodes each appending its name -> join -> end.
//
// Besides those: BenchmarkS4Checkpointed (S1 with a checkpoint per step,
// per store and durability), BenchmarkResumeWaiting, BenchmarkWaitingThreads
// (100,000 threads waiting for a person in one SQLite file: storage and
// heap per thread, resuming one at random) and BenchmarkLLMBound (1,000
// concurrent runs of a workflow of LLM calls against the fake Ollama
// server, over HTTP and in process). The same shapes run against Eino,
// langgraphgo and LangGraph.js in bench/peers (docs/PERFORMANCE.md).
//
// Run them with
//
//	go test ./bench -run '^$' -bench . -benchmem
//
// Besides ns/op and allocs/op, each reports cpu-ns/op (process CPU time, which
// holds up better than wall time on a loaded machine) and, where a step is the
// unit, ns/step, cpu-ns/step and allocs/step.
package bench
