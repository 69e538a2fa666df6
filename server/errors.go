package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/weftlang/weft/engine"
)

// Error is an error with the HTTP status the server answers it with. Its
// body is {"detail": Detail}, as LangGraph's server writes errors; a
// request body that does not fit also names the JSON path of the field
// (Path, "$.input.n") in the detail.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Detail says what went wrong, for the client.
	Detail string
	// Path is the JSON path of the field at fault, or "".
	Path string
	// Err is the cause, for errors.Is and errors.As; it is not sent.
	Err error
}

// Error returns the detail, with the path when there is one.
func (e *Error) Error() string {
	if e.Path != "" {
		return e.Path + ": " + e.Detail
	}
	return e.Detail
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// errorf makes an *Error of status.
func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// invalid is a 422 naming the field at path.
func invalid(path, format string, args ...any) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Path: path, Detail: fmt.Sprintf(format, args...)}
}

// notFound is a 404 for a missing thread, run, assistant or item.
func notFound(what, id string) *Error {
	return errorf(http.StatusNotFound, "%s %s not found", what, id)
}

// statusOf is the HTTP status of err: an *Error's own, else the one its
// engine kind (engine.KindOf) maps to, as docs/ARCHITECTURE.md's "Error
// kinds" table gives it.
func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return http.StatusRequestEntityTooLarge
	}
	if errors.Is(err, ErrServerClosing) {
		return http.StatusServiceUnavailable
	}
	switch engine.KindOf(err) {
	case engine.KindNotFound:
		return http.StatusNotFound
	case engine.KindInvalidInput, engine.KindLimit:
		return http.StatusUnprocessableEntity
	case engine.KindConflict, engine.KindWaiting, engine.KindEnded, engine.KindMismatch, engine.KindCancelled:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// errorBody is the JSON body of an error reply.
type errorBody struct {
	Detail string `json:"detail"`
	// Kind is weft's machine-readable kind of the error (engine.Kind).
	Kind string `json:"kind,omitempty"`
}

// bodyError converts an error of decoding a request body into an *Error
// that names where the body is wrong: a 422 with the JSON path of a field
// of the wrong type, the offset of malformed JSON; a 413 for a body over
// the limit.
func bodyError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mb  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mb):
		return &Error{Status: http.StatusRequestEntityTooLarge, Detail: fmt.Sprintf("request body over %d bytes", mb.Limit), Err: err}
	case errors.As(err, &syn):
		return &Error{Status: http.StatusUnprocessableEntity, Detail: fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn), Err: err}
	case errors.As(err, &typ):
		path := "$"
		if typ.Field != "" {
			path += "." + typ.Field
		}
		return &Error{Status: http.StatusUnprocessableEntity, Path: path, Detail: fmt.Sprintf("expected %s, found a JSON %s", typeName(typ.Type.String()), typ.Value), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &Error{Status: http.StatusUnprocessableEntity, Detail: "malformed JSON: the body ends early", Err: err}
	}
	return &Error{Status: http.StatusUnprocessableEntity, Detail: "malformed request body: " + err.Error(), Err: err}
}

// typeName words a Go type as a JSON reader knows it.
func typeName(t string) string {
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "an object"
	}
	return t
}
