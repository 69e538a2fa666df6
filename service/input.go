package service

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
)

// ParseValue reads a value typed as text (a command-line flag, a form
// field) for type t: as JSON when it parses as JSON and fits t (numbers,
// booleans, lists, objects, quoted strings), else as text. An error says
// why neither fits.
func ParseValue(text string, t flow.Type) (flow.Value, error) {
	var v flow.Value
	jerr := json.Unmarshal([]byte(text), &v)
	if jerr == nil {
		if cv, err := flow.Conform(v, t); err == nil {
			return cv, nil
		}
	}
	cv, serr := flow.Conform(flow.StringValue(text), t)
	if serr == nil {
		return cv, nil
	}
	if jerr == nil {
		_, err := flow.Conform(v, t)
		return flow.Null, err
	}
	return flow.Null, serr
}

// AnswerError is an answer that does not fit the outputs of the human
// node that asked.
type AnswerError struct {
	Node   string // the node that asked
	Output string // the output at fault, or "" for the answer as a whole
	Want   string // the node's outputs, "name: Type, ..."
	Reason string
	Err    error // the conversion's error, if one
}

// Error names the node, the output and what the node wants.
func (e *AnswerError) Error() string {
	switch {
	case e.Output != "" && e.Err != nil:
		return fmt.Sprintf("output %s: %v", e.Output, e.Err)
	case e.Reason != "":
		return e.Reason
	}
	return fmt.Sprintf("node %s: the answer does not fit (want %s)", e.Node, e.Want)
}

// Unwrap returns the conversion's error.
func (e *AnswerError) Unwrap() error { return e.Err }

// Is reports the mismatch kind (engine.KindOf): the answer does not fit
// the question.
func (e *AnswerError) Is(target error) bool { return target == engine.ErrMismatch }

// ParseAnswer turns a person's answer, as text, into the outputs of the
// human node pn: the text itself for a single String output, a typed
// value for a single output of another type (as ParseValue reads it), a
// JSON object naming every output when there are several. An answer that
// does not fit is an *AnswerError.
func ParseAnswer(pn *flow.PlanNode, text string) (map[string]flow.Value, error) {
	switch len(pn.Outputs) {
	case 0:
		return map[string]flow.Value{}, nil
	case 1:
		o := pn.Outputs[0]
		if o.Type.Kind == flow.KindString {
			return map[string]flow.Value{o.Name: flow.StringValue(text)}, nil
		}
		v, err := ParseValue(text, o.Type)
		if err != nil {
			return nil, &AnswerError{Node: pn.Name, Output: o.Name, Want: OutputList(pn), Err: err}
		}
		return map[string]flow.Value{o.Name: v}, nil
	}
	var obj map[string]flow.Value
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, &AnswerError{Node: pn.Name, Want: OutputList(pn), Reason: fmt.Sprintf("node %s has %d outputs (%s): answer with a JSON object", pn.Name, len(pn.Outputs), OutputList(pn))}
	}
	return AnswerOutputs(pn, obj)
}

// AnswerOutputs checks an answer given as values by output name (a JSON
// object) against the outputs of the human node pn, converting each to its
// output's type: every output must be there, and nothing else. A misfit is
// an *AnswerError.
func AnswerOutputs(pn *flow.PlanNode, obj map[string]flow.Value) (map[string]flow.Value, error) {
	out := make(map[string]flow.Value, len(pn.Outputs))
	for _, o := range pn.Outputs {
		v, ok := obj[o.Name]
		if !ok {
			return nil, &AnswerError{Node: pn.Name, Output: o.Name, Want: OutputList(pn), Reason: fmt.Sprintf("the answer has no %s (want %s)", o.Name, OutputList(pn))}
		}
		cv, err := flow.Conform(v, o.Type)
		if err != nil {
			return nil, &AnswerError{Node: pn.Name, Output: o.Name, Want: OutputList(pn), Err: err}
		}
		out[o.Name] = cv
	}
	for k := range obj {
		if _, ok := out[k]; !ok {
			return nil, &AnswerError{Node: pn.Name, Output: k, Want: OutputList(pn), Reason: fmt.Sprintf("node %s has no output %s (want %s)", pn.Name, k, OutputList(pn))}
		}
	}
	return out, nil
}

// OutputList formats a node's outputs as "name: Type, ...".
func OutputList(pn *flow.PlanNode) string {
	var parts []string
	for _, o := range pn.Outputs {
		parts = append(parts, o.Name+": "+o.Type.String())
	}
	return strings.Join(parts, ", ")
}

// FindNode finds a node of plan by the name events and questions use:
// "name", or "sub/inner" inside a subworkflow ("each[2]/inner" inside the
// frame of a map's element); nil if there is none.
func FindNode(plan *flow.Plan, name string) *flow.PlanNode {
	head, rest, nested := strings.Cut(name, "/")
	if i := strings.IndexByte(head, '['); i > 0 && nested {
		head = head[:i] // a map element's frame: "outer[2]/inner"
	}
	for _, pn := range plan.Nodes {
		if pn.Name != head {
			continue
		}
		if !nested {
			return pn
		}
		if pn.Sub != nil {
			return FindNode(pn.Sub, rest)
		}
	}
	return nil
}

// SplitInput sorts the values a run starts with into the plan's
// parameters (input_text among them) and the starting values of its
// variables. A name that is neither is left among the parameters, for
// the engine to refuse with an *engine.InputError that names it; the
// engine checks types and required parameters too.
func SplitInput(plan *flow.Plan, values map[string]flow.Value) (params, init map[string]flow.Value) {
	params = make(map[string]flow.Value, len(values))
	for name, v := range values {
		if plan.Param(name) == nil && plan.Var(name) != nil {
			if init == nil {
				init = map[string]flow.Value{}
			}
			init[name] = v
			continue
		}
		params[name] = v
	}
	return params, init
}
