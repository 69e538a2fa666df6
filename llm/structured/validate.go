// Package structured asks a model for a JSON reply that matches a schema
// derived from a node's declared outputs, validates the reply, re-asks the
// model with the violations when it does not match, and falls back to typed
// defaults when it still does not (the node contract: catch, fall back,
// never crash the run).
//
// Validation uses github.com/santhosh-tekuri/jsonschema/v6, which reports
// every violation with its JSON pointer path, so one repair prompt can name
// all of them.
package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Violation is one way a reply fails its schema.
type Violation struct {
	Path    string `json:"path"`    // JSON pointer into the reply ("/intent", "/tags/2"); "" for the reply as a whole
	Message string `json:"message"` // what is wrong there
}

// String writes the violation as "/intent: value must be one of ...", or
// "(root): ..." for the reply as a whole.
func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "(root)"
	}
	return p + ": " + v.Message
}

// Extraction says where in a reply the JSON value was found.
type Extraction string

// The extractions.
const (
	Whole  Extraction = ""      // the reply was the JSON value and nothing else
	Fenced Extraction = "fence" // the JSON was inside a markdown code fence (```json ... ```)
	Prose  Extraction = "prose" // the JSON was surrounded by other text
)

// Describe says in words where the JSON was found; "" for Whole.
func (e Extraction) Describe() string {
	switch e {
	case Fenced:
		return "the JSON was extracted from a markdown code fence"
	case Prose:
		return "the JSON was extracted from surrounding text"
	}
	return ""
}

// Report is the outcome of validating one reply.
type Report struct {
	// JSON is the JSON value found in the reply (nil when none was found
	// or it was malformed).
	JSON json.RawMessage
	// Extraction says where the JSON was found.
	Extraction Extraction
	// Violations lists every problem; empty when the reply is valid.
	Violations []Violation
}

// Valid reports whether the reply matched the schema.
func (r *Report) Valid() bool { return len(r.Violations) == 0 && r.JSON != nil }

// SchemaError reports a JSON Schema that cannot be compiled.
type SchemaError struct {
	Err error
}

// Error describes the problem.
func (e *SchemaError) Error() string { return "structured: bad schema: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *SchemaError) Unwrap() error { return e.Err }

// Validator checks replies against one compiled JSON Schema. It is safe for
// concurrent use.
type Validator struct {
	schema  *jsonschema.Schema
	raw     json.RawMessage
	printer *message.Printer // writes the validator library's messages in English
}

// schemaURL names the schema resource inside the compiler; nothing is ever
// loaded from it.
const schemaURL = "urn:weft:structured:schema.json"

// Compile compiles a JSON Schema. Schemas without "$schema" are read as
// draft 2020-12. Nothing is loaded over the network: the metaschemas are
// embedded in the validator library.
func Compile(schema json.RawMessage) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &SchemaError{Err: err}
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	return &Validator{schema: s, raw: slices.Clone(schema), printer: message.NewPrinter(language.English)}, nil
}

// Schema returns the schema the Validator was compiled from.
func (v *Validator) Schema() json.RawMessage { return slices.Clone(v.raw) }

// Validate finds the JSON value in a model's reply and checks it against
// the schema. A reply wrapped in a markdown code fence, or with prose
// around the JSON object, is accepted and Report.Extraction says so.
// Malformed JSON is one violation that gives the byte offset (and line and
// column) of the error within the reply.
func (v *Validator) Validate(reply string) *Report {
	text, start, ext, found := Extract(reply)
	r := &Report{Extraction: ext}
	if !found {
		r.Violations = []Violation{{Message: "the reply contains no JSON object"}}
		return r
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		r.Violations = []Violation{{Message: malformed(reply, text, start, err)}}
		return r
	}
	r.JSON = json.RawMessage(text)
	if err := v.schema.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			r.Violations = []Violation{{Message: err.Error()}}
			return r
		}
		r.Violations = violations(ve, v.printer)
	}
	return r
}

// malformed describes a JSON syntax error at its place in the reply.
func malformed(reply, text string, start int, err error) string {
	var se *json.SyntaxError
	off := -1
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		off = int(se.Offset)
		msg = se.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = len(text) + 1 // the error is at the end of the text
	}
	if off < 0 {
		return "malformed JSON: " + msg
	}
	// The decoder's offset counts the bytes read, which ends just after the
	// offending one.
	if off > 0 {
		off--
	}
	at := start + off
	line, col := lineCol(reply, at)
	return fmt.Sprintf("malformed JSON at offset %d (line %d, column %d): %s", at, line, col, msg)
}

// lineCol returns the 1-based line and column (in characters) of byte
// offset off in s.
func lineCol(s string, off int) (line, col int) {
	off = min(off, len(s))
	before := s[:off]
	line = strings.Count(before, "\n") + 1
	lastNL := strings.LastIndexByte(before, '\n')
	col = len([]rune(before[lastNL+1:])) + 1
	return line, col
}

// violations flattens a validation error tree into its leaves: one
// Violation per failed keyword, sorted by path. A missing required
// property, and a property that is not allowed, are reported at the
// property's own path.
func violations(ve *jsonschema.ValidationError, p *message.Printer) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := pointer(e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, name := range k.Missing {
				out = append(out, Violation{Path: at + "/" + escape(name), Message: "required property is missing"})
			}
		case *kind.AdditionalProperties:
			for _, name := range k.Properties {
				out = append(out, Violation{Path: at + "/" + escape(name), Message: "property is not allowed (not in the schema)"})
			}
		case *kind.Enum:
			out = append(out, Violation{Path: at, Message: enumMessage(k.Want, e.ErrorKind.LocalizedString(p))})
		default:
			out = append(out, Violation{Path: at, Message: e.ErrorKind.LocalizedString(p)})
		}
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b Violation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.Compact(out)
}

// enumMessage lists the allowed values as JSON ("qa", "not_clear"), which
// a model reads more reliably than the validator's single quotes; other
// enums keep the validator's message.
func enumMessage(want []any, other string) string {
	vals := make([]string, len(want))
	for i, w := range want {
		switch w.(type) {
		case []any, map[string]any:
			return other
		}
		b, err := json.Marshal(w)
		if err != nil {
			return other
		}
		vals[i] = string(b)
	}
	if len(vals) == 1 {
		return "value must be " + vals[0]
	}
	return "value must be one of " + strings.Join(vals, ", ")
}

// pointer writes a JSON pointer from its reference tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

// escape escapes one JSON pointer reference token (RFC 6901).
func escape(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// Extract finds the JSON object in a model's reply. It returns the JSON
// text, its byte offset in reply, where it was found, and whether a
// candidate was found at all. The candidate may still be malformed: it is
// then the most plausible text (from the first "{" of the reply or of the
// first code fence), so that the decoder's error describes it.
func Extract(reply string) (text string, start int, ext Extraction, found bool) {
	trimmed := strings.TrimSpace(reply)
	lead := strings.Index(reply, trimmed)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		if json.Valid([]byte(trimmed)) {
			return trimmed, lead, Whole, true
		}
	}
	// A markdown code fence: ```json\n{...}\n``` (any info string).
	if body, at, ok := fence(reply); ok {
		b := strings.TrimSpace(body)
		if strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
			return b, at + strings.Index(body, b), Fenced, true
		}
	}
	// A JSON object inside prose: try each "{" in turn (up to
	// maxCandidates of them, which bounds the work on a pathological
	// reply) for a balanced, valid object.
	first := -1
	tried := 0
	for i := 0; i < len(reply) && tried < maxCandidates; i++ {
		if reply[i] != '{' {
			continue
		}
		tried++
		end := balanced(reply, i)
		if end < 0 {
			if first < 0 {
				first = i
			}
			continue
		}
		if json.Valid([]byte(reply[i:end])) {
			if i == lead && end == lead+len(trimmed) {
				return reply[i:end], i, Whole, true
			}
			return reply[i:end], i, Prose, true
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return "", 0, Whole, false
	}
	// Nothing valid: hand back the first candidate so the error is about it.
	cand := strings.TrimSpace(reply[first:])
	if end := balanced(reply, first); end >= 0 {
		cand = reply[first:end]
	}
	if first == lead {
		return cand, first, Whole, true
	}
	return cand, first, Prose, true
}

// maxCandidates bounds how many "{" Extract tries in a reply.
const maxCandidates = 64

// fence returns the body of the first markdown code fence in s and its
// byte offset.
func fence(s string) (body string, at int, ok bool) {
	open := strings.Index(s, "```")
	if open < 0 {
		return "", 0, false
	}
	rest := s[open+3:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return "", 0, false
	}
	info := strings.TrimSpace(rest[:nl])
	if strings.ContainsAny(info, "{[") { // ```{"a":1}``` on one line
		nl = -1
	}
	bodyStart := open + 3 + nl + 1
	end := strings.Index(s[bodyStart:], "```")
	if end < 0 {
		return s[bodyStart:], bodyStart, true // an unclosed fence: take the rest
	}
	return s[bodyStart : bodyStart+end], bodyStart, true
}

// balanced returns the offset just past the "}" that closes the "{" at
// s[open], skipping braces inside JSON strings, or -1.
func balanced(s string, open int) int {
	depth := 0
	inStr, esc := false, false
	for i := open; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
