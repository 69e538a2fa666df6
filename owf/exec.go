package owf

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/owf/internal/canon"
	"github.com/weftlang/weft/owf/internal/split"
	"github.com/weftlang/weft/owf/tools"
)

// ErrNoModel is matched (errors.Is) by the *TaskError of a generation or
// function-calling task run with no Options.Model.
var ErrNoModel = errors.New("no model is configured")

// ErrNoEmbedder is the error of a task that embeds text (search,
// similarity) run with no Options.Embedder.
var ErrNoEmbedder = errors.New("no embedder is configured")

// TaskError is the failure of a task, named as the reference names it:
// InvalidInput, GenerationFailed, FunctionCallFailed, WebSearchFailed,
// SamplingError, InvalidGetAllError, VectorSearchFailed or
// StringCheckFailed. A step's fallback is taken on a TaskError; without
// one the run fails with a *WorkflowError carrying its text.
type TaskError struct {
	Kind string // the reference's variant name
	Msg  string // its message; "" for variants without one
	Err  error  // the cause, if any
}

// Error prints the error as the reference's debug form does:
// InvalidInput, GenerationFailed("...").
func (e *TaskError) Error() string {
	if e.Msg == "" && e.Err == nil {
		return e.Kind
	}
	msg := e.Msg
	if msg == "" {
		msg = e.Err.Error()
	}
	return e.Kind + "(" + rustDebug(msg) + ")"
}

// Unwrap returns the cause.
func (e *TaskError) Unwrap() error { return e.Err }

// RunError is a problem that fails the run whatever the step's fallback
// says: where the reference panics (a numeric condition on text that is
// not a number, HaveSimilar on an empty file system, an unknown tool, a
// non-text value inserted into the file system), weft stops the run with
// this error instead.
type RunError struct {
	Task string // the task at fault
	Msg  string
}

// Error names the task and the problem.
func (e *RunError) Error() string { return fmt.Sprintf("task %s: %s", e.Task, e.Msg) }

// WorkflowError is a failed run, with the reference's message:
// "Workflow execution failed: InvalidInput", "... Max steps reached",
// "... Max execution time exceeded", "... Task with id [X] not found".
type WorkflowError struct {
	Msg string // what follows "Workflow execution failed: "
}

// Error returns the reference's message.
func (e *WorkflowError) Error() string { return "Workflow execution failed: " + e.Msg }

// The reference's own run failures.
const (
	msgMaxSteps = "Max steps reached"
	msgMaxTime  = "Max execution time exceeded"
)

func notFound(id string) string { return "Task with id [" + id + "] not found" }

// rustDebug quotes s as Rust's Debug does for a str.
func rustDebug(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			if unicode.IsPrint(r) || r == ' ' {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u{%x}`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// executor carries out one task over a memory view.
type executor struct {
	opts *Options
	mem  *memory
	task *Task
	emit func(kind, msg string)
}

// execute runs the task: inputs, operator, outputs. It returns the
// rendered result.
func (x *executor) execute(ctx context.Context, spec *nodeSpec) (string, error) {
	t := spec.Task
	values := make(map[string]result, len(t.Inputs))
	for _, in := range t.Inputs {
		r, err := x.resolve(ctx, in.Value)
		if err != nil {
			return "", err
		}
		if in.Required && r.absent() {
			return "", &TaskError{Kind: "InvalidInput"}
		}
		values[in.Name] = r
	}
	var out Entry
	var err error
	switch spec.Op {
	case opGeneration:
		out, err = x.generation(ctx, spec, values)
	case opFunctionCalling, opFunctionCallingRaw:
		out, err = x.functionCalling(ctx, spec, values, spec.Op == opFunctionCallingRaw)
	case opWebSearch:
		out, err = x.webSearch(ctx, values)
	case opFileSearch:
		out, err = x.fileSearch(ctx, values)
	case opSample:
		out, err = x.sample(values)
	case opCheck:
		return "", x.check(values)
	case opEnd:
		return "", nil
	default:
		return "", &RunError{Task: t.ID, Msg: "unknown operator " + string(spec.Op)}
	}
	if err != nil {
		return "", err
	}
	for _, o := range t.Outputs {
		data := out
		if o.Value != resultKey {
			data = TryJSON(o.Value)
		}
		switch o.Type {
		case "write":
			x.mem.write(o.Key, data)
		case "push":
			x.mem.push(o.Key, data)
		case "insert":
			if err := x.insert(ctx, data); err != nil {
				return "", err
			}
		}
	}
	return out.Text, nil
}

// fill substitutes {name} with the rendering of the input called name, in
// one pass over the template: text an input brings in is not searched
// again, so the result does not depend on the order of the inputs. A
// placeholder without an input stays as it is; {{name}} becomes {value}.
func fill(tmpl string, values map[string]result) string {
	if len(values) == 0 || !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	i := 0
	for i < len(tmpl) {
		j := strings.IndexByte(tmpl[i:], '{')
		if j < 0 {
			b.WriteString(tmpl[i:])
			break
		}
		b.WriteString(tmpl[i : i+j])
		i += j
		k := strings.IndexByte(tmpl[i+1:], '}')
		if k >= 0 {
			name := tmpl[i+1 : i+1+k]
			if r, ok := values[name]; ok && !strings.Contains(name, "{") {
				b.WriteString(r.render())
				i += k + 2
				continue
			}
		}
		b.WriteByte('{')
		i++
	}
	return b.String()
}

func (x *executor) filled(values map[string]result) []Message {
	out := make([]Message, len(x.task.Messages))
	for i, m := range x.task.Messages {
		out[i] = Message{Role: m.Role, Content: fill(m.Content, values)}
	}
	return out
}

// lastContent is the filled content of the task's last message.
func (x *executor) lastContent(values map[string]result) string {
	if len(x.task.Messages) == 0 {
		return ""
	}
	return fill(x.task.Messages[len(x.task.Messages)-1].Content, values)
}

func (x *executor) generation(ctx context.Context, spec *nodeSpec, values map[string]result) (Entry, error) {
	if x.opts.Model == nil {
		return Entry{}, &TaskError{Kind: "GenerationFailed", Msg: ErrNoModel.Error(), Err: ErrNoModel}
	}
	req := &llm.Request{Model: x.opts.ModelName}
	for _, m := range x.filled(values) {
		req.Messages = append(req.Messages, llm.Message{Role: x.opts.role(m.Role), Content: m.Content})
	}
	switch x.opts.Dialect {
	case DialectOllama:
		req.MaxTokens = 250
		if spec.MaxTokens != nil {
			req.MaxTokens = int(*spec.MaxTokens)
		}
		if spec.Task.Schema != nil {
			hint, err := base64.StdEncoding.DecodeString(*spec.Task.Schema)
			if err != nil {
				return Entry{}, &TaskError{Kind: "GenerationFailed", Msg: "Schema format invalid"}
			}
			req.Messages = append([]llm.Message{{Role: llm.Assistant, Content: string(hint)}}, req.Messages...)
			req.Schema = json.RawMessage(`{}`)
		}
	case DialectOpenAI:
		if spec.Task.Schema != nil {
			s, err := strictSchema(*spec.Task.Schema)
			if err != nil {
				return Entry{}, &TaskError{Kind: "GenerationFailed", Msg: "Schema format invalid: " + err.Error()}
			}
			req.Schema, req.SchemaName = s, "structured_output"
		}
	default:
		if spec.MaxTokens != nil {
			req.MaxTokens = int(*spec.MaxTokens)
		}
		if spec.Task.Schema != nil && json.Valid([]byte(*spec.Task.Schema)) {
			req.Schema, req.SchemaName = json.RawMessage(*spec.Task.Schema), "structured_output"
		}
	}
	resp, err := x.opts.Model.Chat(ctx, req, nil)
	if err != nil {
		if ctx.Err() != nil {
			return Entry{}, ctx.Err()
		}
		return Entry{}, &TaskError{Kind: "GenerationFailed", Msg: err.Error(), Err: err}
	}
	return TryJSON(resp.Message.Content), nil
}

// strictSchema adds additionalProperties: false at the top of a JSON
// Schema, as the reference does for OpenAI.
func strictSchema(s string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	m["additionalProperties"] = json.RawMessage("false")
	return json.Marshal(m)
}

// toolName is the name a tool is declared under and matched by: lower
// case, spaces as underscores.
func toolName(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "_") }

func (x *executor) tools(spec *nodeSpec) ([]*tools.Tool, error) {
	ts, err := tools.Resolve(spec.Tools, x.opts.Tools)
	if err != nil {
		return nil, &RunError{Task: x.task.ID, Msg: err.Error()}
	}
	for _, ct := range spec.CustomTools {
		switch ct.Mode {
		case "custom":
			ts = append(ts, tools.NewCustomSchema(ct.Name, ct.Description, ct.Parameters))
		default:
			ts = append(ts, tools.NewCustomHTTP(tools.CustomHTTP{Name: ct.Name, Description: ct.Description, URL: ct.URL, Method: ct.Method, Headers: ct.Headers, Body: ct.Body}, x.opts.Tools))
		}
	}
	return ts, nil
}

func (x *executor) functionCalling(ctx context.Context, spec *nodeSpec, values map[string]result, raw bool) (Entry, error) {
	ts, err := x.tools(spec)
	if err != nil {
		return Entry{}, err
	}
	if x.opts.Model == nil {
		return Entry{}, &TaskError{Kind: "FunctionCallFailed", Msg: ErrNoModel.Error(), Err: ErrNoModel}
	}
	req := &llm.Request{Model: x.opts.ModelName, Messages: []llm.Message{{Role: llm.User, Content: x.lastContent(values)}}}
	for _, t := range ts {
		def := t.Def
		def.Name = toolName(def.Name)
		req.Tools = append(req.Tools, def)
	}
	resp, err := x.opts.Model.Chat(ctx, req, nil)
	if err != nil {
		if ctx.Err() != nil {
			return Entry{}, ctx.Err()
		}
		return Entry{}, &TaskError{Kind: "FunctionCallFailed", Msg: err.Error(), Err: err}
	}
	calls := resp.Message.ToolCalls
	var parts []string
	for _, c := range calls {
		args := strings.TrimSpace(string(c.Arguments))
		if args == "" {
			args = "{}"
		}
		ca, ok := canon.Canonical(args)
		if !ok {
			return Entry{}, &TaskError{Kind: "FunctionCallFailed", Msg: fmt.Sprintf("the arguments of the call of %s are not JSON: %s", c.Name, args)}
		}
		if raw {
			parts = append(parts, `{"arguments":`+ca+`,"name":`+canon.Quote(c.Name)+`}`)
			continue
		}
		for _, t := range ts {
			if toolName(t.Def.Name) != c.Name {
				continue
			}
			out, err := t.Call(ctx, json.RawMessage(args))
			if err != nil {
				if ctx.Err() != nil {
					return Entry{}, ctx.Err()
				}
				return Entry{}, &TaskError{Kind: "FunctionCallFailed", Msg: err.Error(), Err: err}
			}
			parts = append(parts, out)
		}
	}
	sep := "\n"
	if raw {
		sep = "\n\n"
	}
	return TryJSON(strings.Join(parts, sep)), nil
}

func (x *executor) webSearch(ctx context.Context, values map[string]result) (Entry, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(x.lastContent(values)), &args); err != nil {
		args = nil
	}
	var req tools.SearchRequest
	if err := json.Unmarshal(args["query"], &req.Query); err != nil || args["query"] == nil || !isJSONString(args["query"]) {
		return Entry{}, &TaskError{Kind: "WebSearchFailed", Msg: "Query parameter is required"}
	}
	if isJSONString(args["search_type"]) {
		_ = json.Unmarshal(args["search_type"], &req.SearchType)
	}
	if isJSONString(args["lang"]) {
		_ = json.Unmarshal(args["lang"], &req.Lang)
	}
	if n := bytes.TrimSpace(args["n_results"]); len(n) > 0 {
		if u, err := strconv.ParseUint(string(n), 10, 63); err == nil {
			req.NResults = int(u)
		}
	}
	out, err := tools.WebSearch(ctx, req, x.opts.Tools)
	if err != nil {
		if ctx.Err() != nil {
			return Entry{}, ctx.Err()
		}
		return Entry{}, &TaskError{Kind: "WebSearchFailed", Msg: err.Error(), Err: err}
	}
	return TryJSON(out), nil
}

func isJSONString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// fileSearch is the prompt era's search operator: the filled prompt is the
// query, the result the three best passages.
func (x *executor) fileSearch(ctx context.Context, values map[string]result) (Entry, error) {
	hits, err := x.searchFilesCtx(ctx, x.lastContent(values))
	if err != nil {
		if ctx.Err() != nil {
			return Entry{}, ctx.Err()
		}
		return Entry{}, &TaskError{Kind: "VectorSearchFailed", Msg: err.Error(), Err: err}
	}
	return TryJSON(listOf(hits).render()), nil
}

// searchFilesCtx embeds the query and returns the three passages most
// similar to it (true cosine similarity, best first) as JSON entries
// {"passage", "similarity"}.
func (x *executor) searchFilesCtx(ctx context.Context, query string) ([]Entry, error) {
	vec, err := x.embed(ctx, x.opts.QueryPrefix+query)
	if err != nil {
		return nil, err
	}
	type scored struct {
		text  string
		score float64
	}
	var all []scored
	for _, c := range x.mem.chunks() {
		all = append(all, scored{c.text, llm.Cosine(vec, c.vector)})
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var out []Entry
	for _, s := range all[:min(3, len(all))] {
		out = append(out, Entry{Text: `{"passage":` + canon.Quote(s.text) + `,"similarity":` + canon.FormatFloat(s.score) + `}`, JSON: true})
	}
	return out, nil
}

func (x *executor) embed(ctx context.Context, texts ...string) ([]float32, error) {
	vs, err := x.embedAll(ctx, texts)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

func (x *executor) embedAll(ctx context.Context, texts []string) ([][]float32, error) {
	if x.opts.Embedder == nil {
		return nil, ErrNoEmbedder
	}
	resp, err := x.opts.Embedder.Embed(ctx, &llm.EmbedRequest{Model: x.opts.EmbedModel, Input: texts})
	if err != nil {
		return nil, err
	}
	if len(resp.Vectors) != len(texts) {
		return nil, fmt.Errorf("the embedder returned %d vectors for %d texts", len(resp.Vectors), len(texts))
	}
	return resp.Vectors, nil
}

// minChunk is the size in bytes under which the reference drops a chunk.
const minChunk = 25

// insert adds text to the file system: split into chunks of at most 250
// characters, each embedded. Like the reference, a failing embedder loses
// the text but not the run (the task reports it as an event).
func (x *executor) insert(ctx context.Context, e Entry) error {
	text := e.Text
	if e.JSON {
		if !strings.HasPrefix(e.Text, `"`) {
			return &RunError{Task: x.task.ID, Msg: "insert: the file system stores text, not the JSON value " + abbreviate(e.Text)}
		}
		if err := json.Unmarshal([]byte(e.Text), &text); err != nil {
			return &RunError{Task: x.task.ID, Msg: "insert: " + err.Error()}
		}
	}
	var pieces []string
	for _, c := range split.Chunks(text, 250) {
		if len(c) >= minChunk {
			pieces = append(pieces, c)
		}
	}
	if len(pieces) == 0 {
		return nil
	}
	vs, err := x.embedAll(ctx, pieces)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		x.emit("warning", "insert: "+err.Error()+"; the text is not stored")
		return nil
	}
	for i, p := range pieces {
		x.mem.newFiles = append(x.mem.newFiles, chunk{text: p, vector: vs[i]})
	}
	return nil
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// sample appends, for each input in declaration order, ": " and a random
// element of the stack the input names.
func (x *executor) sample(values map[string]result) (Entry, error) {
	prompt := x.lastContent(values)
	seen := map[string]bool{}
	for _, in := range x.task.Inputs {
		if seen[in.Name] {
			continue
		}
		seen[in.Name] = true
		r := values[in.Name]
		if r.nonEmptyList() {
			return Entry{}, &TaskError{Kind: "InvalidGetAllError"}
		}
		s, ok := x.mem.stack(r.render())
		if !ok || len(s) == 0 {
			return Entry{}, &TaskError{Kind: "SamplingError"}
		}
		prompt += ": " + s[x.opts.intn(len(s))].Text
	}
	return TryJSON(prompt), nil
}

// check is the prompt era's check operator: __output and __expected must
// match after trimming, removing newlines and lower-casing.
func (x *executor) check(values map[string]result) error {
	norm := func(s string) string {
		return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "\n", ""))
	}
	out, ok1 := values["__output"]
	exp, ok2 := values["__expected"]
	if ok1 && ok2 && norm(out.render()) == norm(exp.render()) {
		return nil
	}
	return &TaskError{Kind: "StringCheckFailed"}
}

// route resolves the step's condition, with its side effects, and
// returns the id of the next step's source.
func (x *executor) route(ctx context.Context, st *Step) (string, error) {
	if st.Condition == nil {
		return st.Target, nil
	}
	c := st.Condition
	r, err := x.resolve(ctx, c.Input)
	if err != nil {
		return "", err
	}
	ok, err := x.evaluate(ctx, c, r.render())
	if err != nil {
		return "", err
	}
	if ok {
		return st.Target, nil
	}
	return c.TargetIfNot, nil
}

// similarity is the threshold of HaveSimilar.
const similarity = 0.95

func (x *executor) evaluate(ctx context.Context, c *Condition, value string) (bool, error) {
	switch c.Expression {
	case "Equal":
		return value == c.Expected, nil
	case "NotEqual":
		return value != c.Expected, nil
	case "Contains":
		return strings.Contains(value, c.Expected), nil
	case "NotContains":
		return !strings.Contains(value, c.Expected), nil
	case "GreaterThan", "LessThan", "GreaterThanOrEqual", "LessThanOrEqual":
		a, err := rustFloat(value)
		if err != nil {
			return false, &RunError{Task: x.task.ID, Msg: fmt.Sprintf("condition %s: the value %s is not a number", c.Expression, strconv.Quote(value))}
		}
		b, err := rustFloat(c.Expected)
		if err != nil {
			return false, &RunError{Task: x.task.ID, Msg: fmt.Sprintf("condition %s: the expected value %s is not a number", c.Expression, strconv.Quote(c.Expected))}
		}
		switch c.Expression {
		case "GreaterThan":
			return a > b, nil
		case "LessThan":
			return a < b, nil
		case "GreaterThanOrEqual":
			return a >= b, nil
		default:
			return a <= b, nil
		}
	case "HaveSimilar":
		chunks := x.mem.chunks()
		if len(chunks) == 0 {
			return false, &RunError{Task: x.task.ID, Msg: "condition HaveSimilar: the file system is empty"}
		}
		vec, err := x.embed(ctx, c.Expected)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, nil
		}
		best := math.Inf(-1)
		for _, ch := range chunks {
			best = max(best, llm.Cosine(vec, ch.vector))
		}
		return best > similarity, nil
	}
	return false, &RunError{Task: x.task.ID, Msg: "unknown expression " + c.Expression}
}

var rustFloatSyntax = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// rustFloat parses s as Rust's f64::from_str does: no blanks, an optional
// sign, "1.", ".5", exponents, inf, infinity and nan in any case.
func rustFloat(s string) (float64, error) {
	t := strings.TrimLeft(s, "+-")
	switch strings.ToLower(t) {
	case "inf", "infinity":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	if !rustFloatSyntax.MatchString(s) {
		return 0, fmt.Errorf("invalid float literal %q", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	return f, nil
}

// returnValue computes the run's result.
func (x *executor) returnValue(ctx context.Context, rv *ReturnValue) (string, error) {
	var r result
	if rv.Multiple {
		rs := make([]result, 0, len(rv.Inputs))
		for _, in := range rv.Inputs {
			one, err := x.resolve(ctx, in)
			if err != nil {
				return "", err
			}
			rs = append(rs, one)
		}
		r = multipleOf(rs)
	} else if len(rv.Inputs) == 1 {
		var err error
		if r, err = x.resolve(ctx, rv.Inputs[0]); err != nil {
			return "", err
		}
	}
	if rv.ToJSON {
		if j, ok := r.jsonForm(); ok {
			return j, nil
		}
	}
	s := r.render()
	for _, p := range rv.PostProcess {
		switch p.Type {
		case "replace":
			if p.LHS == nil || p.RHS == nil {
				x.emit("warning", "post_process replace needs lhs and rhs; skipped")
				continue
			}
			s = strings.ReplaceAll(s, *p.LHS, *p.RHS)
		case "append":
			if p.RHS == nil {
				x.emit("warning", "post_process append needs rhs; skipped")
				continue
			}
			s += *p.RHS
		case "prepend":
			if p.LHS == nil {
				x.emit("warning", "post_process prepend needs lhs; skipped")
				continue
			}
			s = *p.LHS + s
		case "trim":
			s = strings.TrimFunc(s, unicode.IsSpace)
		case "trim_start":
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
		case "trim_end":
			s = strings.TrimRightFunc(s, unicode.IsSpace)
		case "to_lower":
			s = strings.ToLower(s)
		case "to_upper":
			s = strings.ToUpper(s)
		}
	}
	return s, nil
}
