package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// SyntaxError reports a request body that is not well-formed JSON.
type SyntaxError struct {
	// Offset is the 0-based byte offset in the body of the offending byte.
	Offset int64
	// Line and Column locate the same byte, 1-based.
	Line, Column int
	// Msg describes the problem.
	Msg string
	// Err is the underlying decoder error, if any.
	Err error
}

// Error implements the error interface.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("search: malformed JSON at byte offset %d (line %d, column %d): %s", e.Offset, e.Line, e.Column, e.Msg)
}

// Unwrap returns the underlying decoder error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// QueryError reports a well-formed request that is invalid: a value of the
// wrong type, a missing parameter, an unknown option value, a page beyond
// MaxResultWindow, a sort on a text field, and the like.
type QueryError struct {
	// Path locates the offending value in the request, for example
	// "query.bool.filter[0].range.departure_date.gte"; "" is the whole body.
	Path string
	// Msg describes the problem.
	Msg string
}

// Error implements the error interface.
func (e *QueryError) Error() string {
	if e.Path == "" {
		return "search: invalid request: " + e.Msg
	}
	return fmt.Sprintf("search: invalid request at %s: %s", e.Path, e.Msg)
}

// UnsupportedError reports a construct of the query DSL that is valid in
// Elasticsearch but outside the subset a backend implements (see DSL.md).
type UnsupportedError struct {
	// Path locates the construct, for example "query.bool.must[1].fuzzy" or
	// "aggs".
	Path string
	// Detail optionally says what is supported instead.
	Detail string
}

// Error implements the error interface.
func (e *UnsupportedError) Error() string {
	msg := fmt.Sprintf("search: %s is not supported by this backend (see search/DSL.md)", e.Path)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// IndexNotFoundError reports an index that does not exist.
type IndexNotFoundError struct {
	Index string
}

// Error implements the error interface.
func (e *IndexNotFoundError) Error() string {
	return fmt.Sprintf("search: no such index [%s]", e.Index)
}

// SchemaError reports an invalid Schema, or a CreateIndex whose schema
// conflicts with an existing index.
type SchemaError struct {
	// Field is the offending field path, "" for the schema as a whole.
	Field string
	// Msg describes the problem.
	Msg string
}

// Error implements the error interface.
func (e *SchemaError) Error() string {
	if e.Field == "" {
		return "search: invalid schema: " + e.Msg
	}
	return fmt.Sprintf("search: invalid schema: field %q: %s", e.Field, e.Msg)
}

// DocError describes one document rejected by Backend.Index.
type DocError struct {
	// ID is the document's ID ("" when it had none).
	ID string `json:"id"`
	// Position is the document's index in the slice given to Index.
	Position int `json:"position"`
	// Type is a short machine-readable kind, using Elasticsearch's names
	// where they exist (for example "mapper_parsing_exception").
	Type string `json:"type"`
	// Reason is a human-readable description.
	Reason string `json:"reason"`
}

// BulkError reports documents rejected by Backend.Index.
type BulkError struct {
	Index string
	// Failed lists the rejected documents, in input order.
	Failed []DocError
	// Total is the number of documents in the request.
	Total int
}

// Error implements the error interface.
func (e *BulkError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "search: %d of %d documents rejected by index [%s]", len(e.Failed), e.Total, e.Index)
	if len(e.Failed) > 0 {
		f := e.Failed[0]
		fmt.Fprintf(&b, "; first: document %d (id %q): %s: %s", f.Position, f.ID, f.Type, f.Reason)
	}
	return b.String()
}

// NewSyntaxError describes err, an error of encoding/json while decoding
// body, as a *SyntaxError whose Offset is the 0-based position of the
// offending byte (the end of the body for a truncated one), with its line and
// column.
func NewSyntaxError(body []byte, err error) *SyntaxError {
	off := int64(len(body))
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(body)) {
		off = se.Offset - 1
	}
	msg := err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "unexpected end of JSON input"
	}
	return newSyntaxErrorAt(body, off, msg, err)
}

func newSyntaxErrorAt(body []byte, off int64, msg string, err error) *SyntaxError {
	line, col := 1, 1
	for _, c := range body[:min(off, int64(len(body)))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: msg, Err: err}
}

// TrailingDataError is the *SyntaxError for data after the top-level JSON
// value of body, which starts at off.
func TrailingDataError(body []byte, off int64) *SyntaxError {
	return newSyntaxErrorAt(body, off, "unexpected data after the top-level JSON value", nil)
}
