package owf

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/weftlang/weft/flow"
)

// op is a node's action, one per operator; "search" splits by era.
type op string

const (
	opGeneration         op = "owf.generation"
	opFunctionCalling    op = "owf.function_calling"
	opFunctionCallingRaw op = "owf.function_calling_raw"
	opWebSearch          op = "owf.web_search"  // the messages era's search operator
	opFileSearch         op = "owf.file_search" // the prompt era's search operator
	opCheck              op = "owf.check"
	opSample             op = "owf.sample"
	opEnd                op = "owf.end"
	opStart              op = "owf.start"
	opReturn             op = "owf.return"
	opFail               op = "owf.fail"
)

// taskOps are the actions that carry out a task.
var taskOps = []op{opGeneration, opFunctionCalling, opFunctionCallingRaw, opWebSearch, opFileSearch, opCheck, opSample, opEnd}

func opFor(o Operator, era Era) op {
	switch o {
	case Generation:
		return opGeneration
	case FunctionCalling:
		return opFunctionCalling
	case FunctionCallingRaw:
		return opFunctionCallingRaw
	case Search:
		if era == EraPrompt {
			return opFileSearch
		}
		return opWebSearch
	case Check:
		return opCheck
	case Sample:
		return opSample
	}
	return opEnd
}

// nodeSpec is what a task node's action needs: the task, the step it is
// the source of, and the workflow settings its operator reads. It travels
// as the node's "task" and "step" inputs, so a converted .wf file carries
// it too.
type nodeSpec struct {
	Op          op
	Task        *Task
	Step        *Step
	Tools       []string
	CustomTools []CustomTool
	MaxTokens   *int32
}

// The value forms of specs. Keys are written only when set.

func str(s string) flow.Value { return flow.StringValue(s) }

func obj(kv ...any) flow.Value {
	m := make(map[string]flow.Value, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(flow.Value)
	}
	return flow.ObjectValue(m)
}

func inputValueValue(v InputValue) flow.Value {
	m := map[string]flow.Value{"type": str(v.Type), "key": str(v.Key)}
	if v.Index != nil {
		m["index"] = flow.IntValue(int64(*v.Index))
	}
	return flow.ObjectValue(m)
}

func taskValue(s *nodeSpec) flow.Value {
	t := s.Task
	m := map[string]flow.Value{"id": str(t.ID), "operator": str(string(t.Operator))}
	if t.Name != "" {
		m["name"] = str(t.Name)
	}
	msgs := make([]flow.Value, len(t.Messages))
	for i, x := range t.Messages {
		msgs[i] = obj("role", str(x.Role), "content", str(x.Content))
	}
	m["messages"] = flow.ListValue(msgs...)
	if len(t.Inputs) > 0 {
		ins := make([]flow.Value, len(t.Inputs))
		for i, in := range t.Inputs {
			v := inputValueValue(in.Value).Object()
			v["name"] = str(in.Name)
			v["required"] = flow.BoolValue(in.Required)
			ins[i] = flow.ObjectValue(v)
		}
		m["inputs"] = flow.ListValue(ins...)
	}
	if len(t.Outputs) > 0 {
		outs := make([]flow.Value, len(t.Outputs))
		for i, o := range t.Outputs {
			outs[i] = obj("type", str(o.Type), "key", str(o.Key), "value", str(o.Value))
		}
		m["outputs"] = flow.ListValue(outs...)
	}
	if t.Schema != nil {
		m["schema"] = str(*t.Schema)
	}
	if s.MaxTokens != nil {
		m["max_tokens"] = flow.IntValue(int64(*s.MaxTokens))
	}
	if s.Op == opFunctionCalling || s.Op == opFunctionCallingRaw {
		m["tools"] = flow.StringList(s.Tools...)
		if len(s.CustomTools) > 0 {
			cts := make([]flow.Value, len(s.CustomTools))
			for i, ct := range s.CustomTools {
				cts[i] = customToolValue(ct)
			}
			m["custom_tools"] = flow.ListValue(cts...)
		}
	}
	return flow.ObjectValue(m)
}

func stringMapValue(m map[string]string) flow.Value {
	out := make(map[string]flow.Value, len(m))
	for k, v := range m {
		out[k] = str(v)
	}
	return flow.ObjectValue(out)
}

func customToolValue(ct CustomTool) flow.Value {
	m := map[string]flow.Value{"name": str(ct.Name), "description": str(ct.Description), "mode": str(ct.Mode)}
	switch ct.Mode {
	case "custom":
		// The schema is kept as its JSON text: a .wf object literal could
		// not keep its key order or its number forms exactly.
		m["parameters"] = str(string(ct.Parameters))
	default:
		m["url"], m["method"] = str(ct.URL), str(ct.Method)
		if ct.Headers != nil {
			m["headers"] = stringMapValue(ct.Headers)
		}
		if ct.Body != nil {
			m["body"] = stringMapValue(ct.Body)
		}
	}
	return flow.ObjectValue(m)
}

func stepValue(st *Step) flow.Value {
	m := map[string]flow.Value{"target": str(st.Target)}
	if c := st.Condition; c != nil {
		cv := inputValueValue(c.Input).Object()
		cv["expression"] = str(c.Expression)
		cv["expected"] = str(c.Expected)
		cv["target_if_not"] = str(c.TargetIfNot)
		m["condition"] = flow.ObjectValue(cv)
	}
	if st.Fallback != nil {
		m["fallback"] = str(*st.Fallback)
	}
	return flow.ObjectValue(m)
}

func returnValueValue(r *ReturnValue) flow.Value {
	ins := make([]flow.Value, len(r.Inputs))
	for i, in := range r.Inputs {
		ins[i] = inputValueValue(in)
	}
	m := map[string]flow.Value{"inputs": flow.ListValue(ins...), "multiple": flow.BoolValue(r.Multiple)}
	if r.ToJSON {
		m["to_json"] = flow.BoolValue(true)
	}
	if len(r.PostProcess) > 0 {
		ps := make([]flow.Value, len(r.PostProcess))
		for i, p := range r.PostProcess {
			pm := map[string]flow.Value{"process_type": str(p.Type)}
			if p.LHS != nil {
				pm["lhs"] = str(*p.LHS)
			}
			if p.RHS != nil {
				pm["rhs"] = str(*p.RHS)
			}
			ps[i] = flow.ObjectValue(pm)
		}
		m["post_process"] = flow.ListValue(ps...)
	}
	return flow.ObjectValue(m)
}

func externalValue(ext []External) flow.Value {
	out := make([]flow.Value, len(ext))
	for i, e := range ext {
		items := make([]flow.Value, len(e.Items))
		for j, it := range e.Items {
			items[j] = it.Value()
		}
		out[i] = obj("key", str(e.Key), "stack", flow.BoolValue(e.Stack), "items", flow.ListValue(items...))
	}
	return flow.ListValue(out...)
}

// SpecError is a node input that does not describe a task, a step, a
// return value or external memory: a hand-edited converted workflow, say.
type SpecError struct {
	Node  string
	Field string // the input and the path inside it, e.g. task.inputs[0].type
	Msg   string
}

// Error names the node and field.
func (e *SpecError) Error() string {
	return fmt.Sprintf("node %s: input %s: %s", e.Node, e.Field, e.Msg)
}

// specReader decodes spec values, recording the first problem.
type specReader struct {
	node string
	err  *SpecError
}

func (r *specReader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = &SpecError{Node: r.node, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *specReader) object(v flow.Value, field string) map[string]flow.Value {
	if v.Kind() != flow.KindObject {
		r.fail(field, "expected an object, found %s", v.Kind())
		return nil
	}
	return v.Object()
}

func (r *specReader) str(m map[string]flow.Value, field, key string, required bool) string {
	v, ok := m[key]
	if !ok || v.IsNull() {
		if required {
			r.fail(field+"."+key, "missing")
		}
		return ""
	}
	if v.Kind() != flow.KindString {
		r.fail(field+"."+key, "expected a string, found %s", v.Kind())
		return ""
	}
	return v.Str()
}

func (r *specReader) optStr(m map[string]flow.Value, field, key string) *string {
	if v, ok := m[key]; !ok || v.IsNull() {
		return nil
	}
	s := r.str(m, field, key, false)
	return &s
}

func (r *specReader) list(m map[string]flow.Value, field, key string) []flow.Value {
	v, ok := m[key]
	if !ok || v.IsNull() {
		return nil
	}
	if v.Kind() != flow.KindList {
		r.fail(field+"."+key, "expected a list, found %s", v.Kind())
		return nil
	}
	return v.List()
}

func (r *specReader) boolean(m map[string]flow.Value, field, key string) bool {
	v, ok := m[key]
	if !ok || v.IsNull() {
		return false
	}
	if v.Kind() != flow.KindBool {
		r.fail(field+"."+key, "expected true or false, found %s", v.Kind())
	}
	return v.Bool()
}

func (r *specReader) inputValue(m map[string]flow.Value, field string) InputValue {
	iv := InputValue{Type: r.str(m, field, "type", true), Key: r.str(m, field, "key", true)}
	if !slices.Contains(inputTypesPrompt, iv.Type) && r.err == nil {
		r.fail(field+".type", "unknown type %q", iv.Type)
	}
	if v, ok := m["index"]; ok && !v.IsNull() {
		if v.Kind() != flow.KindInt || v.Int() < 0 {
			r.fail(field+".index", "expected a non-negative Int, found %s", v)
		} else {
			u := uint64(v.Int())
			iv.Index = &u
		}
	}
	return iv
}

func (r *specReader) task(v flow.Value) *Task {
	m := r.object(v, "task")
	if m == nil {
		return nil
	}
	t := &Task{ID: r.str(m, "task", "id", true), Name: r.str(m, "task", "name", false), Operator: Operator(r.str(m, "task", "operator", true))}
	for i, mv := range r.list(m, "task", "messages") {
		f := fmt.Sprintf("task.messages[%d]", i)
		if mm := r.object(mv, f); mm != nil {
			t.Messages = append(t.Messages, Message{Role: r.str(mm, f, "role", true), Content: r.str(mm, f, "content", true)})
		}
	}
	for i, iv := range r.list(m, "task", "inputs") {
		f := fmt.Sprintf("task.inputs[%d]", i)
		if im := r.object(iv, f); im != nil {
			t.Inputs = append(t.Inputs, Input{Name: r.str(im, f, "name", true), Value: r.inputValue(im, f), Required: r.boolean(im, f, "required")})
		}
	}
	for i, ov := range r.list(m, "task", "outputs") {
		f := fmt.Sprintf("task.outputs[%d]", i)
		if om := r.object(ov, f); om != nil {
			o := Output{Type: r.str(om, f, "type", true), Key: r.str(om, f, "key", true), Value: r.str(om, f, "value", true)}
			if !slices.Contains(outputTypes, o.Type) {
				r.fail(f+".type", "unknown type %q", o.Type)
			}
			t.Outputs = append(t.Outputs, o)
		}
	}
	t.Schema = r.optStr(m, "task", "schema")
	return t
}

func (r *specReader) nodeSpec(o op, task, step flow.Value) *nodeSpec {
	s := &nodeSpec{Op: o, Task: r.task(task)}
	if r.err != nil {
		return nil
	}
	m := task.Object()
	if v, ok := m["max_tokens"]; ok && !v.IsNull() {
		if v.Kind() != flow.KindInt {
			r.fail("task.max_tokens", "expected an Int, found %s", v.Kind())
		} else {
			n := int32(v.Int())
			s.MaxTokens = &n
		}
	}
	for i, tv := range r.list(m, "task", "tools") {
		if tv.Kind() != flow.KindString {
			r.fail(fmt.Sprintf("task.tools[%d]", i), "expected a string, found %s", tv.Kind())
			continue
		}
		s.Tools = append(s.Tools, tv.Str())
	}
	for i, cv := range r.list(m, "task", "custom_tools") {
		f := fmt.Sprintf("task.custom_tools[%d]", i)
		cm := r.object(cv, f)
		if cm == nil {
			continue
		}
		ct := CustomTool{Name: r.str(cm, f, "name", true), Description: r.str(cm, f, "description", false), Mode: r.str(cm, f, "mode", true)}
		switch ct.Mode {
		case "custom":
			p := r.str(cm, f, "parameters", true)
			if !json.Valid([]byte(p)) {
				r.fail(f+".parameters", "not JSON")
			}
			ct.Parameters = json.RawMessage(p)
		case "http_request":
			ct.URL, ct.Method = r.str(cm, f, "url", true), r.str(cm, f, "method", true)
			ct.Headers, ct.Body = r.stringMap(cm, f, "headers"), r.stringMap(cm, f, "body")
		default:
			r.fail(f+".mode", "unknown mode %q", ct.Mode)
		}
		s.CustomTools = append(s.CustomTools, ct)
	}
	sm := r.object(step, "step")
	if sm == nil {
		return nil
	}
	st := &Step{Source: s.Task.ID, Target: r.str(sm, "step", "target", true), Fallback: r.optStr(sm, "step", "fallback")}
	if cv, ok := sm["condition"]; ok && !cv.IsNull() {
		if cm := r.object(cv, "step.condition"); cm != nil {
			c := &Condition{Input: r.inputValue(cm, "step.condition"), Expression: r.str(cm, "step.condition", "expression", true),
				Expected: r.str(cm, "step.condition", "expected", true), TargetIfNot: r.str(cm, "step.condition", "target_if_not", true)}
			if !slices.Contains(expressions, c.Expression) {
				r.fail("step.condition.expression", "unknown expression %q", c.Expression)
			}
			st.Condition = c
		}
	}
	s.Step = st
	if r.err != nil {
		return nil
	}
	return s
}

func (r *specReader) stringMap(m map[string]flow.Value, field, key string) map[string]string {
	v, ok := m[key]
	if !ok || v.IsNull() {
		return nil
	}
	om := r.object(v, field+"."+key)
	out := make(map[string]string, len(om))
	for _, k := range slices.Sorted(maps.Keys(om)) {
		if om[k].Kind() != flow.KindString {
			r.fail(field+"."+key+"."+k, "expected a string, found %s", om[k].Kind())
			continue
		}
		out[k] = om[k].Str()
	}
	return out
}

func (r *specReader) returnValue(v flow.Value) *ReturnValue {
	m := r.object(v, "return")
	if m == nil {
		return nil
	}
	rv := &ReturnValue{Multiple: r.boolean(m, "return", "multiple"), ToJSON: r.boolean(m, "return", "to_json")}
	for i, iv := range r.list(m, "return", "inputs") {
		f := fmt.Sprintf("return.inputs[%d]", i)
		if im := r.object(iv, f); im != nil {
			rv.Inputs = append(rv.Inputs, r.inputValue(im, f))
		}
	}
	for i, pv := range r.list(m, "return", "post_process") {
		f := fmt.Sprintf("return.post_process[%d]", i)
		if pm := r.object(pv, f); pm != nil {
			p := PostProcess{Type: r.str(pm, f, "process_type", true), LHS: r.optStr(pm, f, "lhs"), RHS: r.optStr(pm, f, "rhs")}
			if !slices.Contains(processTypes, p.Type) {
				r.fail(f+".process_type", "unknown process_type %q", p.Type)
			}
			rv.PostProcess = append(rv.PostProcess, p)
		}
	}
	if r.err != nil {
		return nil
	}
	return rv
}

func (r *specReader) external(v flow.Value) []External {
	if v.IsNull() {
		return nil
	}
	if v.Kind() != flow.KindList {
		r.fail("external", "expected a list, found %s", v.Kind())
		return nil
	}
	var out []External
	for i, ev := range v.List() {
		f := fmt.Sprintf("external[%d]", i)
		em := r.object(ev, f)
		if em == nil {
			continue
		}
		e := External{Key: r.str(em, f, "key", true), Stack: r.boolean(em, f, "stack")}
		for j, it := range r.list(em, f, "items") {
			en, ok := entryOf(it)
			if !ok {
				r.fail(fmt.Sprintf("%s.items[%d]", f, j), "expected a string or {json: text}, found %s", it)
				continue
			}
			e.Items = append(e.Items, en)
		}
		out = append(out, e)
	}
	return out
}
