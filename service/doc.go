// Package service is weft's runtime as a library: the one way a workflow
// is opened, configured and run, shared by the weft command, the server
// and the workers.
//
// Open loads a workflow from a file, bytes, an fs.FS, its canonical
// source kept in a store, or a Go-built graph, and compiles it with
// weft's standard options. The Workflow it returns carries the plan, the
// canonical source (every file of the module, named relative to the
// root's directory) and its digest, which names the source in a store so
// that any process on any machine can load the exact plan a thread runs.
package service
