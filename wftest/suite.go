package wftest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/weftlang/weft/flow"
)

// Suite is one YAML test file: the workflow it tests and its cases.
type Suite struct {
	Path     string  // the test file, as given to Load
	Workflow string  // the .wf file under test, resolved against the test file's directory
	Cases    []*Case // in file order
}

// Case is one test case: how to run the workflow and what to expect.
type Case struct {
	Name   string
	Line   int                   // where the case starts in the test file
	Input  string                // the workflow input (input_text)
	Vars   map[string]flow.Value // parameter values and variables' starting values; nil when none
	Stubs  Stubs                 // action (or node) name -> replies, one per call, in order
	Expect Expect
}

// Expect is what a case checks. Nil maps and slices are not checked.
type Expect struct {
	// Status is "completed", "failed" or "waiting". Load fills it in when
	// the file leaves it out: "failed" if Error is set, "waiting" if Waiting
	// is set, else "completed".
	Status string
	// Path is the exact sequence of nodes the run executed.
	Path []string
	// Output is matched as a subset against the final node's outputs.
	Output map[string]flow.Value
	// Calls maps an action name to the inputs of its calls, in order, each
	// matched as a subset. A shorter list checks the first calls only; an
	// empty list asserts that the action was never called.
	Calls map[string][]map[string]flow.Value
	// Error is a substring of the failed run's error.
	Error string
	// Vars is matched as a subset against the variables at the end.
	Vars map[string]flow.Value
	// Waiting checks the question a waiting run asks; nil: not checked.
	Waiting *Waiting
}

// Waiting is the expected pending question of a waiting run.
type Waiting struct {
	Node     string      // the node that waits
	Question *flow.Value // the question it asks; nil: not checked
}

// The statuses a case may expect.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusWaiting   = "waiting"
)

// FileError is a problem in a test or stubs file, at a line and column
// when they are known.
type FileError struct {
	File string
	Line int // 1-based; 0 when unknown
	Col  int // 1-based; 0 when unknown
	Msg  string
	Err  error // the underlying error, if any
}

// Error returns "file:line:col: message".
func (e *FileError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// The YAML shapes, decoded strictly: an unknown key is an error.

type rawSuite struct {
	Workflow string     `yaml:"workflow"`
	Cases    []*rawCase `yaml:"cases"`
}

type rawCase struct {
	Name   string         `yaml:"name"`
	Input  string         `yaml:"input"`
	Vars   map[string]any `yaml:"vars"`
	Stubs  rawStubs       `yaml:"stubs"`
	Expect rawExpect      `yaml:"expect"`
}

type rawStubs map[string][]map[string]any

type rawExpect struct {
	Status  string                      `yaml:"status"`
	Path    []string                    `yaml:"path"`
	Output  map[string]any              `yaml:"output"`
	Calls   map[string][]map[string]any `yaml:"calls"`
	Error   string                      `yaml:"error"`
	Vars    map[string]any              `yaml:"vars"`
	Waiting *rawWaiting                 `yaml:"waiting"`
}

type rawWaiting struct {
	Node     string `yaml:"node"`
	Question any    `yaml:"question"`
}

type rawStubsFile struct {
	Stubs rawStubs `yaml:"stubs"`
}

// knownKeys are every key of the format, for "did you mean" hints.
var knownKeys = []string{"workflow", "cases", "name", "input", "vars", "stubs", "expect", "status", "path", "output", "calls", "error", "waiting", "node", "question"}

// Load reads the test file at path. Errors are *FileError values that
// name the file, line and column: YAML syntax, unknown keys, values of the
// wrong type, a missing or unreadable workflow file, duplicate case names,
// an unknown status.
func Load(path string) (*Suite, error) {
	doc, err := parseYAML(path)
	if err != nil {
		return nil, err
	}
	var raw rawSuite
	if err := yaml.NodeToValue(doc.body, &raw, yaml.Strict()); err != nil {
		return nil, doc.yamlErr(err)
	}
	s := &Suite{Path: path}
	if raw.Workflow == "" {
		return nil, doc.errorf("missing workflow: the .wf file to test, relative to this file", "workflow")
	}
	s.Workflow = raw.Workflow
	if !filepath.IsAbs(s.Workflow) {
		s.Workflow = filepath.Join(filepath.Dir(path), s.Workflow)
	}
	if fi, err := os.Stat(s.Workflow); err != nil {
		e := doc.errorf(fmt.Sprintf("workflow %s: %v", raw.Workflow, unwrapPathErr(err)), "workflow")
		e.Err = err
		return nil, e
	} else if fi.IsDir() {
		return nil, doc.errorf(fmt.Sprintf("workflow %s is a directory, not a .wf file", raw.Workflow), "workflow")
	}
	if len(raw.Cases) == 0 {
		return nil, doc.errorf("no cases: write cases: [ {name: ..., input: ..., stubs: ..., expect: ...} ]", "cases")
	}
	seen := map[string]int{}
	for i, rc := range raw.Cases {
		c, err := doc.convertCase(i, rc)
		if err != nil {
			var fe *FileError
			if errors.As(err, &fe) && rc != nil && rc.Name != "" {
				fe.Msg = fmt.Sprintf("case %q: %s", rc.Name, fe.Msg)
			}
			return nil, err
		}
		if prev, dup := seen[c.Name]; dup {
			return nil, doc.errorf(fmt.Sprintf("case %q is already defined at line %d", c.Name, prev), "cases", i, "name")
		}
		seen[c.Name] = c.Line
		s.Cases = append(s.Cases, c)
	}
	return s, nil
}

// LoadStubs reads a stubs file: a YAML mapping with one key, stubs, that
// maps action names to lists of replies, as in a test case:
//
//	stubs:
//	  identify_user_intent: [{intent: qa}]
//	  evaluate_relevance: [{relevance: BAD}, {relevance: OK}]
func LoadStubs(path string) (Stubs, error) {
	doc, err := parseYAML(path)
	if err != nil {
		return nil, err
	}
	var raw rawStubsFile
	if err := yaml.NodeToValue(doc.body, &raw, yaml.Strict()); err != nil {
		return nil, doc.yamlErr(err)
	}
	if raw.Stubs == nil {
		return nil, doc.errorf("missing stubs: write stubs: {action: [{output: value}, ...]}", "stubs")
	}
	return doc.convertStubs(raw.Stubs, "stubs")
}

// yamlDoc is a parsed YAML file, kept for positions.
type yamlDoc struct {
	file string
	body ast.Node
}

func parseYAML(path string) (*yamlDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{File: path, Msg: unwrapPathErr(err).Error(), Err: err}
	}
	doc := &yamlDoc{file: path}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, doc.yamlErr(err)
	}
	var docs []*ast.DocumentNode
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d)
		}
	}
	switch {
	case len(docs) == 0:
		return nil, &FileError{File: path, Line: 1, Col: 1, Msg: "empty file"}
	case len(docs) > 1:
		l, c := nodePos(docs[1].Body)
		return nil, &FileError{File: path, Line: l, Col: c, Msg: "more than one YAML document; put every case under one cases: list"}
	}
	doc.body = docs[0].Body
	if _, ok := unwrapNode(doc.body).(*ast.MappingNode); !ok {
		if _, ok := unwrapNode(doc.body).(*ast.MappingValueNode); !ok {
			l, c := nodePos(doc.body)
			return nil, &FileError{File: path, Line: l, Col: c, Msg: "the file must be a YAML mapping"}
		}
	}
	return doc, nil
}

// yamlErr turns a go-yaml error into a *FileError with its position and a
// message that speaks of the file's keys rather than of Go types.
func (d *yamlDoc) yamlErr(err error) *FileError {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return &FileError{File: d.file, Msg: err.Error(), Err: err}
	}
	pos := ye.GetToken().Position
	msg := ye.GetMessage()
	var te *yaml.TypeError
	var ne *yaml.UnexpectedNodeTypeError
	var ue *yaml.UnknownFieldError
	field := ""
	if d.body != nil {
		if p := keyPath(d.body, pos.Line, pos.Column); p != "" {
			field = p + ": "
		}
	}
	switch {
	case errors.As(err, &te):
		msg = fmt.Sprintf("%swant %s, got %s", field, describeType(te.DstType), describeType(te.SrcType))
	case errors.As(err, &ne):
		msg = fmt.Sprintf("%swant %s, got %s", field, describeNode(ne.Expected), describeNode(ne.Actual))
	case errors.As(err, &ue):
		key := strings.TrimSuffix(strings.TrimPrefix(ue.Message, `unknown field "`), `"`)
		msg = field + msg + flow.Suggest(key, knownKeys)
	}
	return &FileError{File: d.file, Line: pos.Line, Col: pos.Column, Msg: msg, Err: err}
}

func describeNode(t ast.NodeType) string {
	switch t {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.StringType, ast.LiteralType:
		return "a string"
	case ast.IntegerType:
		return "an integer"
	case ast.FloatType:
		return "a number"
	case ast.BoolType:
		return "a boolean"
	case ast.NullType:
		return "null"
	}
	return strings.ToLower(t.String())
}

// keyPath returns the path ("cases[0].stubs.classify") of the value that
// starts at line:col, or "".
func keyPath(n ast.Node, line, col int) string {
	var walk func(n ast.Node, path string) (string, bool)
	walk = func(n ast.Node, path string) (string, bool) {
		if n == nil {
			return "", false
		}
		n = unwrapNode(n)
		if l, c := nodePos(n); l == line && c == col && path != "" {
			if _, isMap := n.(*ast.MappingNode); !isMap {
				return path, true
			}
		}
		var values []*ast.MappingValueNode
		switch x := n.(type) {
		case *ast.MappingNode:
			values = x.Values
		case *ast.MappingValueNode:
			values = []*ast.MappingValueNode{x}
		case *ast.SequenceNode:
			for i, v := range x.Values {
				if p, ok := walk(v, fmt.Sprintf("%s[%d]", path, i)); ok {
					return p, true
				}
			}
		}
		for _, mv := range values {
			if l, c := nodePos(mv.Key); l == line && c == col && path != "" {
				return path, true // a key: name the mapping that holds it
			}
			p := mapKey(mv.Key)
			if path != "" {
				p = path + "." + p
			}
			if mv.Value != nil {
				if tk := mv.Value.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line == line && tk.Position.Column == col {
					return p, true
				}
			}
			if r, ok := walk(mv.Value, p); ok {
				return r, true
			}
		}
		return "", false
	}
	p, _ := walk(n, "")
	return p
}

func describeType(t reflect.Type) string {
	if t == nil {
		return "null"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return t.String()
}

// errorf makes a *FileError at the node the path leads to (keys and list
// indexes from the top), or at the closest ancestor that exists.
func (d *yamlDoc) errorf(msg string, path ...any) *FileError {
	l, c := d.pos(path...)
	return &FileError{File: d.file, Line: l, Col: c, Msg: msg}
}

// pos returns the line and column of the node path leads to. A string
// step ending in "=" (as in "name=") gives the position of the key rather
// than of its value.
func (d *yamlDoc) pos(path ...any) (int, int) {
	n := d.body
	l, c := nodePos(n)
	for _, step := range path {
		next := child(n, step)
		if next == nil {
			break
		}
		n = next
		l, c = nodePos(n)
	}
	return l, c
}

func nodePos(n ast.Node) (int, int) {
	if n == nil {
		return 0, 0
	}
	if mv, ok := n.(*ast.MappingNode); ok && len(mv.Values) > 0 {
		return nodePos(mv.Values[0].Key)
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		return nodePos(mv.Key)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

func unwrapNode(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.TagNode:
			n = x.Value
		case *ast.AnchorNode:
			n = x.Value
		default:
			return n
		}
	}
}

// child returns the value under a mapping key (a string; "key=" returns
// the key node itself) or a list element (an int), or nil.
func child(n ast.Node, step any) ast.Node {
	n = unwrapNode(n)
	switch s := step.(type) {
	case string:
		key, wantKey := strings.CutSuffix(s, "=")
		var values []*ast.MappingValueNode
		switch m := n.(type) {
		case *ast.MappingNode:
			values = m.Values
		case *ast.MappingValueNode:
			values = []*ast.MappingValueNode{m}
		}
		for _, mv := range values {
			if mv.Key == nil || mapKey(mv.Key) != key {
				continue
			}
			if wantKey {
				return mv.Key
			}
			if mv.Value == nil || isNull(mv.Value) {
				return mv.Key
			}
			return mv.Value
		}
	case int:
		if seq, ok := n.(*ast.SequenceNode); ok && s >= 0 && s < len(seq.Values) {
			return seq.Values[s]
		}
	}
	return nil
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return ok
}

func mapKey(k ast.MapKeyNode) string {
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

func (d *yamlDoc) convertCase(i int, rc *rawCase) (*Case, error) {
	at := func(p ...any) []any { return append([]any{"cases", i}, p...) }
	l, _ := d.pos(at()...)
	if rc == nil {
		return nil, d.errorf(fmt.Sprintf("case %d is empty", i+1), at()...)
	}
	c := &Case{Name: rc.Name, Line: l, Input: rc.Input}
	if c.Name == "" {
		return nil, d.errorf(fmt.Sprintf("case %d has no name", i+1), at()...)
	}
	var err error
	if rc.Vars != nil {
		if _, ok := rc.Vars[flow.InputText]; ok {
			return nil, d.errorf("vars: input_text is the workflow input; set it with input:", at("vars", "input_text=")...)
		}
		if c.Vars, err = d.values(rc.Vars, at("vars")); err != nil {
			return nil, err
		}
	}
	if c.Stubs, err = d.convertStubs(rc.Stubs, at("stubs")...); err != nil {
		return nil, err
	}
	re, e := &rc.Expect, &c.Expect
	e.Path, e.Error = re.Path, re.Error
	if e.Output, err = d.values(re.Output, at("expect", "output")); err != nil {
		return nil, err
	}
	if e.Vars, err = d.values(re.Vars, at("expect", "vars")); err != nil {
		return nil, err
	}
	if re.Calls != nil {
		e.Calls = map[string][]map[string]flow.Value{}
		for name, calls := range re.Calls {
			list := make([]map[string]flow.Value, len(calls))
			for j, call := range calls {
				if list[j], err = d.values(call, at("expect", "calls", name, j)); err != nil {
					return nil, err
				}
				if list[j] == nil {
					list[j] = map[string]flow.Value{}
				}
			}
			e.Calls[name] = list
		}
	}
	if re.Waiting != nil {
		if re.Waiting.Node == "" {
			return nil, d.errorf("expect.waiting: missing node: the node the run waits at", at("expect", "waiting")...)
		}
		e.Waiting = &Waiting{Node: re.Waiting.Node}
		if child(child(child(child(child(d.body, "cases"), i), "expect"), "waiting"), "question=") != nil {
			q, err := d.value(re.Waiting.Question, at("expect", "waiting", "question"))
			if err != nil {
				return nil, err
			}
			e.Waiting.Question = &q
		}
	}
	switch re.Status {
	case "":
		switch {
		case e.Error != "":
			e.Status = StatusFailed
		case e.Waiting != nil:
			e.Status = StatusWaiting
		default:
			e.Status = StatusCompleted
		}
	case StatusCompleted, StatusFailed, StatusWaiting:
		e.Status = re.Status
	default:
		return nil, d.errorf(fmt.Sprintf("expect.status: want completed, failed or waiting, got %q", re.Status), at("expect", "status")...)
	}
	if e.Error != "" && e.Status != StatusFailed {
		return nil, d.errorf(fmt.Sprintf("expect.error checks failed runs, but the status expected is %s", e.Status), at("expect", "error")...)
	}
	if e.Waiting != nil && e.Status != StatusWaiting {
		return nil, d.errorf(fmt.Sprintf("expect.waiting checks waiting runs, but the status expected is %s", e.Status), at("expect", "waiting")...)
	}
	return c, nil
}

// convertStubs converts stub replies to values and checks error replies.
func (d *yamlDoc) convertStubs(raw rawStubs, path ...any) (Stubs, error) {
	if raw == nil {
		return nil, nil
	}
	out := make(Stubs, len(raw))
	for name, replies := range raw {
		list := make([]map[string]flow.Value, len(replies))
		for j, r := range replies {
			rp := append(slices.Clone(path), name, j)
			m, err := d.values(r, rp)
			if err != nil {
				return nil, err
			}
			if m == nil {
				m = map[string]flow.Value{}
			}
			if ev, ok := m[errorKey]; ok {
				if ev.Kind() != flow.KindString {
					return nil, d.errorf(fmt.Sprintf("stubs.%s[%d].error: an error reply's message must be a string, got %s", name, j, ev), append(rp, errorKey)...)
				}
				if len(m) > 1 {
					return nil, d.errorf(fmt.Sprintf("stubs.%s[%d]: a reply with error fails the call and can have no other keys", name, j), rp...)
				}
			}
			list[j] = m
		}
		out[name] = list
	}
	return out, nil
}

// values converts a decoded YAML mapping to values; nil stays nil.
func (d *yamlDoc) values(m map[string]any, path []any) (map[string]flow.Value, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]flow.Value, len(m))
	for k, x := range m {
		v, err := d.value(x, append(slices.Clone(path), k))
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func (d *yamlDoc) value(x any, path []any) (flow.Value, error) {
	v, err := flow.FromGo(x)
	if err != nil {
		e := d.errorf(err.Error(), path...)
		e.Err = err
		return flow.Null, e
	}
	return v, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
