// Package wftest runs workflow tests written in YAML against a workflow
// whose actions are stubbed.
//
// A test file (named *.test.yaml or *_test.yaml) names a .wf workflow and
// lists cases. Each case gives the workflow input, optional parameter
// values, canned replies for the actions the run calls (stubs), and what to
// expect: the run's status, the exact sequence of nodes, the final outputs,
// the inputs every action received, the error of a failed run, the final
// variables and the question a waiting run asks. Load reads a file; Run runs
// a file or a directory of files and returns a Report that Print renders.
//
// The stub machinery is usable outside tests too: LoadStubs reads a stubs
// file and NewStubRegistry makes a Registry that answers stubbed actions
// from it and records the inputs of every call in a Recorder. `weft run
// --stubs FILE` is built on it.
//
// docs/testing.md describes the file format in full.
package wftest
