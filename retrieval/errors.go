package retrieval

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by the errors about a bad argument: an empty path,
// a document without an ID, a metadata pair with an empty key, an unknown
// Mode.
var ErrInvalid = errors.New("invalid argument")

// ErrNoEmbedder is wrapped by the error of a Vector or Hybrid search on an
// Index opened without an Embedder.
var ErrNoEmbedder = errors.New("the index has no embedder")

// SchemaError reports an index file written by a newer version of this
// package than the running one.
type SchemaError struct {
	// Version is the file's schema version.
	Version int
	// Known is the newest version this package knows (SchemaVersion).
	Known int
}

// Error says which versions disagree.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("retrieval: index schema version %d, this program knows up to %d", e.Version, e.Known)
}

// MigrationError reports a schema migration step that failed; the index
// is left at the version before the step.
type MigrationError struct {
	// Version and Name identify the step.
	Version int
	Name    string
	// Err is the cause.
	Err error
}

// Error names the step and its cause.
func (e *MigrationError) Error() string {
	return fmt.Sprintf("retrieval: migration %d (%s): %v", e.Version, e.Name, e.Err)
}

// Unwrap returns the cause.
func (e *MigrationError) Unwrap() error { return e.Err }

// EmbedError reports a failure of the Index's Embedder, in Add or in a
// search that needs the query's vector. Err is the Embedder's error (an
// *llm.Error for weft's providers) or says what was wrong with its reply.
type EmbedError struct {
	Err error
}

// Error says the embedder failed and why.
func (e *EmbedError) Error() string { return "retrieval: embed: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *EmbedError) Unwrap() error { return e.Err }
