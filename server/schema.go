package server

import (
	"github.com/weftlang/weft/flow"
)

// Schemas are the JSON Schemas of an assistant's graph, as GET
// /assistants/{id}/schemas sends them.
type Schemas struct {
	GraphID string `json:"graph_id"`
	// Input is what a run's input may set: the parameters, input_text
	// and the variables' starting values, plus "messages" (a chat's
	// messages; the last user message becomes input_text).
	Input Schema `json:"input_schema"`
	// Output is what a finished run returns: the state.
	Output Schema `json:"output_schema"`
	// State is the thread's state values (see the package docs): the
	// parameters, input_text, the variables and slots, and each node's
	// latest outputs under the node's name.
	State Schema `json:"state_schema"`
	// Config and Context are empty objects: weft workflows take their
	// configuration from the assistant's components.
	Config  Schema `json:"config_schema"`
	Context Schema `json:"context_schema"`
}

// Schema is a JSON Schema (draft 2020-12) as a JSON object.
type Schema = map[string]any

// TypeSchema is the JSON Schema of values of a weft type.
func TypeSchema(t flow.Type) Schema {
	switch t.Kind {
	case flow.KindBool:
		return Schema{"type": "boolean"}
	case flow.KindInt:
		return Schema{"type": "integer"}
	case flow.KindFloat:
		return Schema{"type": "number"}
	case flow.KindString:
		return Schema{"type": "string"}
	case flow.KindDuration:
		return Schema{"type": "string", "description": "a duration, as \"1m30s\""}
	case flow.KindEnum:
		vals := make([]any, len(t.Values))
		for i, v := range t.Values {
			vals[i] = v
		}
		return Schema{"type": "string", "enum": vals}
	case flow.KindList:
		return Schema{"type": "array", "items": TypeSchema(t.ElemType())}
	case flow.KindObject:
		return Schema{"type": "object"}
	}
	return Schema{}
}

// object is the schema of an object with these properties, none required
// but those in required.
func object(title string, props Schema, required []string) Schema {
	s := Schema{"type": "object", "title": title, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// SchemasOf derives the schemas of a compiled workflow.
func SchemasOf(plan *flow.Plan) Schemas {
	name := plan.Workflow.Name
	in := Schema{}
	var required []string
	for _, p := range plan.Params {
		in[p.Name] = TypeSchema(p.Type)
		if p.Default == nil && p.Name != "input_text" {
			required = append(required, p.Name)
		}
	}
	for _, v := range plan.Vars {
		in[v.Name] = TypeSchema(v.Type)
	}
	in["messages"] = Schema{"type": "array", "description": "chat messages; the last user (human) message is the run's input_text", "items": Schema{"type": "object"}}

	state := Schema{}
	add := func(n string, s Schema) { state[n] = s }
	for _, p := range plan.Params {
		add(p.Name, TypeSchema(p.Type))
	}
	for _, v := range plan.Vars {
		add(v.Name, TypeSchema(v.Type))
	}
	for _, v := range plan.Slots {
		add(v.Name, TypeSchema(v.Type))
	}
	for _, pn := range plan.Nodes {
		if len(pn.Outputs) == 0 {
			continue
		}
		props := Schema{}
		for _, o := range pn.Outputs {
			t := TypeSchema(o.Type)
			if pn.Map != nil {
				t = Schema{"type": "array", "items": t}
			}
			props[o.Name] = t
		}
		add(pn.Name, Schema{"type": "object", "properties": props})
	}
	return Schemas{
		Input:   object(name+"Input", in, required),
		Output:  object(name+"Output", state, nil),
		State:   object(name+"State", state, nil),
		Config:  Schema{"type": "object", "title": name + "Config", "properties": Schema{}},
		Context: Schema{"type": "object", "title": name + "Context", "properties": Schema{}},
	}
}
