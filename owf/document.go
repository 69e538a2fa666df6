package owf

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/owf/tools"
)

// Era is a version of the ollama-workflows format.
type Era int

// The eras. EraAuto picks one from the document: tasks with "messages" are
// EraMessages, tasks with "prompt" are EraPrompt.
const (
	EraAuto Era = iota
	// EraMessages is the format of the reference's HEAD (fe923ff, 2025):
	// "messages", "config.custom_tools", no "check", and "search" is a
	// web search.
	EraMessages
	// EraPrompt is the format seed 004 documents (d42618e, 2024-08, up to
	// 7dde4dc, 2024-11): "prompt", the "check" operator,
	// "config.custom_tool", the "search" input op, and "search" is a
	// search of the file system.
	EraPrompt
)

// String names the era.
func (e Era) String() string {
	switch e {
	case EraMessages:
		return "messages"
	case EraPrompt:
		return "prompt"
	}
	return "auto"
}

// Document is an ollama-workflows workflow, as loaded from JSON.
type Document struct {
	File        string // the file it was read from, for messages
	Era         Era    // never EraAuto once loaded
	Name        string // informational (ignored by the reference)
	Description string
	Config      Config
	External    []External // external_memory, in the order it is loaded (sorted by key)
	Tasks       []*Task
	Steps       []*Step
	Return      ReturnValue
	Warnings    []*Error // fields the reference ignores, which may be typos
}

// Config is the "config" object.
type Config struct {
	MaxSteps    uint32
	MaxTime     uint64 // seconds
	Tools       []string
	CustomTools []CustomTool
	MaxTokens   *int32
}

// CustomTool is an item of config.custom_tools (or the older single
// config.custom_tool, which is an HTTP tool).
type CustomTool struct {
	Name        string
	Description string
	Mode        string          // "custom" or "http_request"
	Parameters  json.RawMessage // mode custom: the JSON Schema shown to the model
	URL         string          // mode http_request
	Method      string
	Headers     map[string]string
	Body        map[string]string
}

// External is one key of external_memory.
type External struct {
	Key   string
	Stack bool    // an array: pushed element by element onto the stack Key
	Items []Entry // the array's elements, or the single cache entry
}

// Task is one task.
type Task struct {
	ID          string
	Name        string
	Description string
	Messages    []Message // in EraPrompt, the prompt as one user message
	Operator    Operator
	Inputs      []Input
	Outputs     []Output
	Schema      *string
	off         int
}

// Message is one message of a task.
type Message struct {
	Role    string
	Content string
}

// Operator is what a task does.
type Operator string

// The operators.
const (
	Generation         Operator = "generation"
	FunctionCalling    Operator = "function_calling"
	FunctionCallingRaw Operator = "function_calling_raw"
	Check              Operator = "check"  // EraPrompt only
	Search             Operator = "search" // a web search in EraMessages, a file-system search in EraPrompt
	Sample             Operator = "sample"
	End                Operator = "end"
)

// Input is a named memory read before a task runs.
type Input struct {
	Name     string
	Value    InputValue
	Required bool
}

// InputValue is a memory read: input, read, pop, peek, get_all, size,
// string, and in EraPrompt search.
type InputValue struct {
	Type  string
	Key   string
	Index *uint64
}

// Output is a memory write after a task succeeded: write, push or insert.
type Output struct {
	Type  string
	Key   string
	Value string // "__result" or a literal
}

// Step is an edge of the workflow.
type Step struct {
	Source    string
	Target    string
	Condition *Condition
	Fallback  *string
}

// Condition chooses a step's target after its source succeeded.
type Condition struct {
	Input       InputValue
	Expected    string
	Expression  string
	TargetIfNot string
}

// ReturnValue says what a run returns.
type ReturnValue struct {
	Inputs      []InputValue
	Multiple    bool // "input" was an array
	ToJSON      bool
	PostProcess []PostProcess
}

// PostProcess is one step of return_value.post_process.
type PostProcess struct {
	Type     string
	LHS, RHS *string
}

// Reserved names.
const (
	inputKey  = "__input"  // the cache entry holding the run's input
	resultKey = "__result" // an output value meaning the operator's result
	endID     = "__end"    // a step source that ends the run
)

var (
	operatorsMessages = []string{"generation", "function_calling", "function_calling_raw", "search", "sample", "end"}
	operatorsPrompt   = []string{"generation", "function_calling", "function_calling_raw", "check", "search", "sample", "end"}
	inputTypes        = []string{"input", "read", "pop", "peek", "get_all", "size", "string"}
	inputTypesPrompt  = []string{"input", "read", "pop", "peek", "get_all", "size", "string", "search"}
	outputTypes       = []string{"write", "insert", "push"}
	expressions       = []string{"Equal", "NotEqual", "Contains", "NotContains", "GreaterThan", "LessThan", "GreaterThanOrEqual", "LessThanOrEqual", "HaveSimilar"}
	processTypes      = []string{"replace", "append", "prepend", "trim", "trim_start", "trim_end", "to_lower", "to_upper"}
	toolModes         = []string{"custom", "http_request"}
)

// LoadOptions tune Load.
type LoadOptions struct {
	Era Era // EraAuto: decided by the document
}

// LoadFile reads and loads the workflow at path.
func LoadFile(path string, opts *LoadOptions) (*Document, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, src, opts)
}

// Load parses src, a workflow document named file, into a Document. Every
// problem is reported, up to ten, as an ErrorList of *Error, each naming the
// line, column and JSON path of the value at fault:
//
//	users.json:12:21: tasks[3].inputs[0].value.type: unknown type "peak"; did you mean "peek"?
//
// Fields the reference ignores are ignored here too, and listed in
// Document.Warnings.
func Load(file string, src []byte, opts *LoadOptions) (*Document, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	text := string(src)
	d := &decoder{file: file, src: text}
	root, err := parseJSON(text)
	if err != nil {
		se := err.(*syntaxError)
		line, col := lineCol(text, se.off)
		return nil, ErrorList{{File: file, Line: line, Col: col, Msg: "invalid JSON: " + se.msg}}
	}
	doc := &Document{File: file, Era: opts.Era}
	d.document(root, doc)
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	doc.Warnings = d.warns
	return doc, nil
}

// Error is a problem in a workflow document.
type Error struct {
	File      string
	Line, Col int    // 1-based; 0 when unknown
	Path      string // the JSON path of the value, e.g. tasks[3].inputs[0].value.type; "" for the document
	Msg       string
}

// Error formats the problem as file:line:col: path: message.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is the problems of one document, in source order.
type ErrorList []*Error

// Error joins the problems, one a line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap lets errors.As find each *Error.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Diagnostic is the problem as a flow.Diagnostic, for tools that print
// those (weft validate).
func (e *Error) Diagnostic(sev flow.Severity) flow.Diagnostic {
	msg := e.Msg
	if e.Path != "" {
		msg = e.Path + ": " + msg
	}
	return flow.Diagnostic{Pos: flow.Pos{File: e.File, Line: e.Line, Col: e.Col}, Severity: sev, Code: "owf", Msg: msg}
}

// Diagnostics returns the problems as errors.
func (l ErrorList) Diagnostics() flow.Diagnostics {
	out := make(flow.Diagnostics, len(l))
	for i, e := range l {
		out[i] = e.Diagnostic(flow.Error)
	}
	return out
}

const maxErrors = 10

type decoder struct {
	file, src string
	era       Era
	errs      ErrorList
	warns     []*Error
}

func (d *decoder) at(n *jnode, path string, msg string) *Error {
	e := &Error{File: d.file, Path: path, Msg: msg}
	if n != nil {
		e.Line, e.Col = lineCol(d.src, n.off)
	}
	return e
}

func (d *decoder) errorf(n *jnode, path, format string, args ...any) {
	if len(d.errs) < maxErrors {
		d.errs = append(d.errs, d.at(n, path, fmt.Sprintf(format, args...)))
	}
}

// object checks that n is an object and warns of keys outside known.
func (d *decoder) object(n *jnode, path string, known ...string) bool {
	if n.kind != jObject {
		d.errorf(n, path, "expected an object, found %s", n.kind)
		return false
	}
	for i, k := range n.keys {
		if !slices.Contains(known, k) {
			msg := fmt.Sprintf("unknown field %q is ignored", k) + flow.Suggest(k, known)
			d.warns = append(d.warns, d.at(n.vals[i], join(path, k), msg))
		}
	}
	return true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// member returns the field name of object n, reporting it when required
// and missing.
func (d *decoder) member(n *jnode, path, name string, required bool) *jnode {
	v := n.field(name)
	if v == nil && required {
		d.errorf(n, path, "missing field %q", name)
	}
	return v
}

func (d *decoder) str(n *jnode, path, name string, required bool) (string, bool) {
	v := d.member(n, path, name, required)
	if v == nil {
		return "", false
	}
	if v.kind != jString {
		d.errorf(v, join(path, name), "expected a string, found %s", v.kind)
		return "", false
	}
	return v.s, true
}

func (d *decoder) boolean(n *jnode, path, name string, required bool) (bool, bool) {
	v := d.member(n, path, name, required)
	if v == nil {
		return false, false
	}
	if v.kind != jBool {
		d.errorf(v, join(path, name), "expected true or false, found %s", v.kind)
		return false, false
	}
	return v.b, true
}

// uint reads an unsigned integer of at most bits bits.
func (d *decoder) uint(n *jnode, path, name string, required bool, bits int) (uint64, bool) {
	v := d.member(n, path, name, required)
	if v == nil {
		return 0, false
	}
	p := join(path, name)
	if v.kind != jNumber {
		d.errorf(v, p, "expected a non-negative integer, found %s", v.kind)
		return 0, false
	}
	if strings.HasPrefix(v.s, "-") {
		d.errorf(v, p, "expected a non-negative integer, found %s", v.s)
		return 0, false
	}
	u, err := strconv.ParseUint(v.s, 10, bits)
	if err != nil {
		if strings.ContainsAny(v.s, ".eE") {
			d.errorf(v, p, "expected an integer, found %s", v.s)
		} else {
			d.errorf(v, p, "%s is out of range (at most %d bits)", v.s, bits)
		}
		return 0, false
	}
	return u, true
}

// enum reads a string that must be one of values.
func (d *decoder) enum(n *jnode, path, name, what string, values []string) (string, bool) {
	s, ok := d.str(n, path, name, true)
	if !ok {
		return "", false
	}
	if !slices.Contains(values, s) {
		msg := fmt.Sprintf("unknown %s %q", what, s)
		if sg := flow.Suggest(s, values); sg != "" {
			msg += sg
		} else {
			msg += fmt.Sprintf(" (expected one of %s)", strings.Join(values, ", "))
		}
		d.errorf(n.field(name), join(path, name), "%s", msg)
		return "", false
	}
	return s, true
}

func (d *decoder) array(n *jnode, path, name string, required bool) []*jnode {
	v := d.member(n, path, name, required)
	if v == nil {
		return nil
	}
	if v.kind == jNull && !required {
		return nil
	}
	if v.kind != jArray {
		d.errorf(v, join(path, name), "expected an array, found %s", v.kind)
		return nil
	}
	return v.arr
}

func (d *decoder) document(root *jnode, doc *Document) {
	if !d.object(root, "", "name", "description", "config", "external_memory", "tasks", "steps", "return_value") {
		return
	}
	doc.Name, _ = d.str(root, "", "name", false)
	doc.Description, _ = d.str(root, "", "description", false)
	d.era = doc.Era
	if d.era == EraAuto {
		d.era = detectEra(root)
	}
	doc.Era = d.era
	if c := d.member(root, "", "config", true); c != nil {
		d.config(c, "config", &doc.Config)
	}
	if m := root.field("external_memory"); m != nil && m.kind != jNull {
		doc.External = d.external(m, "external_memory")
	}
	for i, t := range d.array(root, "", "tasks", true) {
		if task := d.task(t, index("tasks", i)); task != nil {
			doc.Tasks = append(doc.Tasks, task)
		}
	}
	for i, s := range d.array(root, "", "steps", true) {
		if st := d.step(s, index("steps", i)); st != nil {
			doc.Steps = append(doc.Steps, st)
		}
	}
	// The reference requires return_value; its documentation's own example
	// (seed 004) has none, so the prompt era, which that documentation
	// describes, takes it as optional (the run then returns "").
	if r := d.member(root, "", "return_value", d.era != EraPrompt); r != nil {
		d.returnValue(r, "return_value", &doc.Return)
	}
}

// detectEra looks at the tasks: "prompt" without "messages" is EraPrompt.
func detectEra(root *jnode) Era {
	tasks := root.field("tasks")
	if tasks == nil || tasks.kind != jArray {
		return EraMessages
	}
	for _, t := range tasks.arr {
		if t.kind != jObject {
			continue
		}
		if t.field("messages") != nil {
			return EraMessages
		}
		if t.field("prompt") != nil {
			return EraPrompt
		}
	}
	return EraMessages
}

func (d *decoder) config(n *jnode, path string, c *Config) {
	known := []string{"max_steps", "max_time", "tools", "custom_tools", "max_tokens"}
	if d.era == EraPrompt {
		known = append(known, "custom_tool")
	}
	if !d.object(n, path, known...) {
		return
	}
	if u, ok := d.uint(n, path, "max_steps", true, 32); ok {
		c.MaxSteps = uint32(u)
	}
	if u, ok := d.uint(n, path, "max_time", true, 64); ok {
		c.MaxTime = u
	}
	for i, t := range d.array(n, path, "tools", false) {
		if t.kind != jString {
			d.errorf(t, index(join(path, "tools"), i), "expected a tool name, found %s", t.kind)
			continue
		}
		c.Tools = append(c.Tools, t.s)
	}
	if len(c.Tools) > 0 {
		// The reference finds an unknown tool only when a function-calling
		// task runs (and panics); say so at load time.
		if _, err := tools.Resolve(c.Tools, tools.Options{}); err != nil {
			d.warns = append(d.warns, d.at(n.field("tools"), join(path, "tools"), err.Error()+" (a function-calling task fails when it runs)"))
		}
	}
	for i, t := range d.array(n, path, "custom_tools", false) {
		if ct, ok := d.customTool(t, index(join(path, "custom_tools"), i)); ok {
			c.CustomTools = append(c.CustomTools, ct)
		}
	}
	if d.era == EraPrompt {
		if t := n.field("custom_tool"); t != nil && t.kind != jNull {
			if ct, ok := d.oldCustomTool(t, join(path, "custom_tool")); ok {
				c.CustomTools = append(c.CustomTools, ct)
			}
		}
	}
	if v := n.field("max_tokens"); v != nil && v.kind != jNull {
		p := join(path, "max_tokens")
		i, err := strconv.ParseInt(v.s, 10, 32)
		if v.kind != jNumber || err != nil {
			d.errorf(v, p, "expected a 32-bit integer, found %s", v.raw)
		} else {
			m := int32(i)
			c.MaxTokens = &m
		}
	}
}

func (d *decoder) stringMap(n *jnode, path, name string) map[string]string {
	v := n.field(name)
	if v == nil || v.kind == jNull {
		return nil
	}
	p := join(path, name)
	if v.kind != jObject {
		d.errorf(v, p, "expected an object of strings, found %s", v.kind)
		return nil
	}
	m := make(map[string]string, len(v.keys))
	for i, k := range v.keys {
		if v.vals[i].kind != jString {
			d.errorf(v.vals[i], join(p, k), "expected a string, found %s", v.vals[i].kind)
			continue
		}
		m[k] = v.vals[i].s
	}
	return m
}

func (d *decoder) customTool(n *jnode, path string) (CustomTool, bool) {
	var ct CustomTool
	if !d.object(n, path, "name", "description", "mode", "parameters", "url", "method", "headers", "body") {
		return ct, false
	}
	ct.Name, _ = d.str(n, path, "name", true)
	ct.Description, _ = d.str(n, path, "description", true)
	mode, ok := d.enum(n, path, "mode", "mode", toolModes)
	if !ok {
		return ct, false
	}
	ct.Mode = mode
	switch mode {
	case "custom":
		if p := d.member(n, path, "parameters", true); p != nil {
			ct.Parameters = json.RawMessage(p.raw)
		}
	case "http_request":
		ct.URL, _ = d.str(n, path, "url", true)
		ct.Method, _ = d.str(n, path, "method", true)
		ct.Headers = d.stringMap(n, path, "headers")
		ct.Body = d.stringMap(n, path, "body")
	}
	return ct, true
}

// oldCustomTool reads the single config.custom_tool of d42618e: every field
// required, HTTP only.
func (d *decoder) oldCustomTool(n *jnode, path string) (CustomTool, bool) {
	ct := CustomTool{Mode: "http_request"}
	if !d.object(n, path, "name", "description", "url", "method", "headers", "body") {
		return ct, false
	}
	ct.Name, _ = d.str(n, path, "name", true)
	ct.Description, _ = d.str(n, path, "description", true)
	ct.URL, _ = d.str(n, path, "url", true)
	ct.Method, _ = d.str(n, path, "method", true)
	d.member(n, path, "headers", true)
	d.member(n, path, "body", true)
	ct.Headers = d.stringMap(n, path, "headers")
	ct.Body = d.stringMap(n, path, "body")
	return ct, true
}

func (d *decoder) external(n *jnode, path string) []External {
	if n.kind != jObject {
		d.errorf(n, path, "expected a map, found %s", n.kind)
		return nil
	}
	// serde_json's Map is sorted by key; the last of duplicate keys wins.
	last := map[string]int{}
	for i, k := range n.keys {
		last[k] = i
	}
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []External
	for _, k := range keys {
		v := n.vals[last[k]]
		p := join(path, k)
		switch v.kind {
		case jArray:
			e := External{Key: k, Stack: true}
			for i, it := range v.arr {
				switch it.kind {
				case jString:
					e.Items = append(e.Items, plainEntry(it.s))
				case jObject:
					e.Items = append(e.Items, jsonEntry(it.raw))
				default:
					d.errorf(it, index(p, i), "invalid entry format: expected a string or an object, found %s", it.kind)
				}
			}
			out = append(out, e)
		case jString:
			out = append(out, External{Key: k, Items: []Entry{plainEntry(v.s)}})
		case jObject:
			out = append(out, External{Key: k, Items: []Entry{jsonEntry(v.raw)}})
		default:
			d.errorf(v, p, "invalid entry format: expected an array, a string or an object, found %s", v.kind)
		}
	}
	return out
}

func (d *decoder) task(n *jnode, path string) *Task {
	known := []string{"id", "name", "description", "messages", "operator", "inputs", "outputs", "schema"}
	if d.era == EraPrompt {
		known[3] = "prompt"
	}
	if !d.object(n, path, known...) {
		return nil
	}
	t := &Task{off: n.off}
	t.ID, _ = d.str(n, path, "id", true)
	t.Name, _ = d.str(n, path, "name", false)
	t.Description, _ = d.str(n, path, "description", false)
	if d.era == EraPrompt {
		if p, ok := d.str(n, path, "prompt", true); ok {
			t.Messages = []Message{{Role: "user", Content: p}}
		}
	} else {
		for i, m := range d.array(n, path, "messages", true) {
			mp := index(join(path, "messages"), i)
			if !d.object(m, mp, "role", "content") {
				continue
			}
			role, _ := d.str(m, mp, "role", true)
			content, _ := d.str(m, mp, "content", true)
			t.Messages = append(t.Messages, Message{Role: role, Content: content})
		}
	}
	ops := operatorsMessages
	if d.era == EraPrompt {
		ops = operatorsPrompt
	}
	if op, ok := d.str(n, path, "operator", true); ok {
		if !slices.Contains(ops, op) {
			msg := fmt.Sprintf("unknown operator %q", op)
			switch {
			case op == "check":
				msg += " (the check operator exists only in the prompt era; this document uses messages)"
			case flow.Suggest(op, ops) != "":
				msg += flow.Suggest(op, ops)
			default:
				msg += fmt.Sprintf(" (expected one of %s)", strings.Join(ops, ", "))
			}
			d.errorf(n.field("operator"), join(path, "operator"), "%s", msg)
		}
		t.Operator = Operator(op)
	}
	for i, in := range d.array(n, path, "inputs", false) {
		ip := index(join(path, "inputs"), i)
		if !d.object(in, ip, "name", "value", "required") {
			continue
		}
		var x Input
		x.Name, _ = d.str(in, ip, "name", true)
		if v := d.member(in, ip, "value", true); v != nil {
			x.Value, _ = d.inputValue(v, join(ip, "value"))
		}
		x.Required, _ = d.boolean(in, ip, "required", true)
		t.Inputs = append(t.Inputs, x)
	}
	for i, out := range d.array(n, path, "outputs", false) {
		op := index(join(path, "outputs"), i)
		if !d.object(out, op, "type", "key", "value") {
			continue
		}
		var o Output
		o.Type, _ = d.enum(out, op, "type", "type", outputTypes)
		o.Key, _ = d.str(out, op, "key", true)
		o.Value, _ = d.str(out, op, "value", true)
		t.Outputs = append(t.Outputs, o)
	}
	if v := n.field("schema"); v != nil && v.kind != jNull {
		if v.kind != jString {
			d.errorf(v, join(path, "schema"), "expected a string, found %s", v.kind)
		} else {
			s := v.s
			t.Schema = &s
		}
	}
	return t
}

func (d *decoder) inputValue(n *jnode, path string) (InputValue, bool) {
	var v InputValue
	// "required" inside a value is a common slip in the reference's own
	// files (_history/d42618e/search.json); it is ignored there too.
	if !d.object(n, path, "type", "key", "index", "search_query", "required") {
		return v, false
	}
	types := inputTypes
	if d.era == EraPrompt {
		types = inputTypesPrompt
	}
	var ok bool
	if v.Type, ok = d.enum(n, path, "type", "type", types); !ok {
		return v, false
	}
	v.Key, _ = d.str(n, path, "key", true)
	if x := n.field("index"); x != nil && x.kind != jNull {
		if u, ok := d.uint(n, path, "index", false, 64); ok {
			v.Index = &u
		}
	}
	if q := n.field("search_query"); q != nil && q.kind != jNull {
		// Parsed and never used by the reference.
		d.inputValue(q, join(path, "search_query"))
	}
	return v, true
}

func (d *decoder) step(n *jnode, path string) *Step {
	if !d.object(n, path, "source", "target", "condition", "fallback") {
		return nil
	}
	s := &Step{}
	s.Source, _ = d.str(n, path, "source", true)
	s.Target, _ = d.str(n, path, "target", true)
	if c := n.field("condition"); c != nil && c.kind != jNull {
		cp := join(path, "condition")
		if d.object(c, cp, "input", "expected", "expression", "target_if_not") {
			cond := &Condition{}
			if in := d.member(c, cp, "input", true); in != nil {
				cond.Input, _ = d.inputValue(in, join(cp, "input"))
			}
			cond.Expected, _ = d.str(c, cp, "expected", true)
			if e := c.field("expression"); e != nil && e.kind == jString && !slices.Contains(expressions, e.s) {
				if i := slices.IndexFunc(expressions, func(x string) bool { return strings.EqualFold(x, e.s) }); i >= 0 {
					d.errorf(e, join(cp, "expression"), "unknown expression %q; expressions are PascalCase: %q", e.s, expressions[i])
				} else {
					d.enum(c, cp, "expression", "expression", expressions)
				}
			} else {
				cond.Expression, _ = d.enum(c, cp, "expression", "expression", expressions)
			}
			cond.TargetIfNot, _ = d.str(c, cp, "target_if_not", true)
			s.Condition = cond
		}
	}
	if f := n.field("fallback"); f != nil && f.kind != jNull {
		if fb, ok := d.str(n, path, "fallback", false); ok {
			s.Fallback = &fb
		}
	}
	return s
}

func (d *decoder) returnValue(n *jnode, path string, r *ReturnValue) {
	if !d.object(n, path, "input", "to_json", "post_process") {
		return
	}
	if in := d.member(n, path, "input", true); in != nil {
		ip := join(path, "input")
		switch in.kind {
		case jArray:
			r.Multiple = true
			for i, x := range in.arr {
				if v, ok := d.inputValue(x, index(ip, i)); ok {
					r.Inputs = append(r.Inputs, v)
				}
			}
		default:
			if v, ok := d.inputValue(in, ip); ok {
				r.Inputs = []InputValue{v}
			}
		}
	}
	if v := n.field("to_json"); v != nil && v.kind != jNull {
		r.ToJSON, _ = d.boolean(n, path, "to_json", false)
	}
	for i, p := range d.array(n, path, "post_process", false) {
		pp := index(join(path, "post_process"), i)
		if !d.object(p, pp, "process_type", "lhs", "rhs") {
			continue
		}
		var x PostProcess
		x.Type, _ = d.enum(p, pp, "process_type", "process_type", processTypes)
		if l := p.field("lhs"); l != nil && l.kind != jNull {
			if s, ok := d.str(p, pp, "lhs", false); ok {
				x.LHS = &s
			}
		}
		if rh := p.field("rhs"); rh != nil && rh.kind != jNull {
			if s, ok := d.str(p, pp, "rhs", false); ok {
				x.RHS = &s
			}
		}
		r.PostProcess = append(r.PostProcess, x)
	}
}
