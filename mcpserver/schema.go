package mcpserver

import (
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/server"
)

// Schema is a JSON Schema (draft 2020-12) as a JSON object.
type Schema = server.Schema

// threadIDSchema is the schema of the optional thread_id argument.
var threadIDSchema = Schema{"type": "string", "description": "continue this thread (its variables carry over) instead of starting a new one"}

// InputSchema is the input schema of a workflow's tool: its parameters
// (input_text among them), each typed as server.TypeSchema types it,
// those without a default required (but input_text), and thread_id.
// Nothing else is allowed.
func InputSchema(plan *flow.Plan) Schema {
	props := Schema{}
	required := []string{}
	for _, p := range plan.Params {
		props[p.Name] = server.TypeSchema(p.Type)
		if p.Default == nil && p.Name != flow.InputText {
			required = append(required, p.Name)
		}
	}
	props["thread_id"] = threadIDSchema
	s := Schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// finalsSchema is the schema of the outputs of a plan's final nodes: the
// object of the one final's outputs, or, with several, anyOf the object
// of each (the result's "final" names the one that ended the run).
func finalsSchema(plan *flow.Plan) (Schema, []any) {
	var alts []any
	var names []any
	for _, pn := range plan.Nodes {
		if !pn.Final {
			continue
		}
		names = append(names, pn.Name)
		alts = append(alts, outputsSchema(pn, pn.Name))
	}
	switch len(alts) {
	case 0:
		return Schema{"type": "object"}, names
	case 1:
		return alts[0].(Schema), names
	}
	return Schema{"anyOf": alts}, names
}

// outputsSchema is the object of a node's outputs, all required.
func outputsSchema(pn *flow.PlanNode, title string) Schema {
	props := Schema{}
	required := []string{}
	for _, o := range pn.Outputs {
		t := server.TypeSchema(o.Type)
		if pn.Map != nil {
			t = Schema{"type": "array", "items": t}
		}
		props[o.Name] = t
		required = append(required, o.Name)
	}
	return Schema{"type": "object", "title": title, "properties": props, "required": required, "additionalProperties": false}
}

// OutputSchema is the output schema of a workflow's tool: the envelope
// every call returns (see Result), its outputs typed by the final nodes.
func OutputSchema(plan *flow.Plan) Schema {
	outs, finals := finalsSchema(plan)
	return envelope(outs, finals)
}

// envelope is the schema of a Result whose outputs are outs and whose
// final is one of finals (nil: any name).
func envelope(outs Schema, finals []any) Schema {
	final := Schema{"type": "string", "description": "the final node that ended the run"}
	if finals != nil {
		final["enum"] = finals
	}
	return Schema{
		"type": "object",
		"properties": Schema{
			"status":    Schema{"type": "string", "enum": []any{"completed", "waiting", "failed", "cancelled"}},
			"thread_id": Schema{"type": "string", "description": "the thread the run is kept in: give it to " + ResumeTool + ", or as thread_id to continue the thread"},
			"final":     final,
			"outputs":   outs,
			"questions": Schema{"type": "array", "description": "what a waiting run asks: answer with " + ResumeTool, "items": Schema{
				"type": "object",
				"properties": Schema{
					"id":       Schema{"type": "string"},
					"node":     Schema{"type": "string"},
					"question": Schema{},
					"answer":   Schema{"type": "object", "description": "the schema of an answer given as an object"},
				},
				"required": []any{"id", "node", "question"},
			}},
			"next":  Schema{"type": "string", "description": "for a waiting run, how to answer"},
			"error": Schema{"type": "object", "properties": Schema{"message": Schema{"type": "string"}, "kind": Schema{"type": "string"}}, "required": []any{"message"}},
		},
		"required": []any{"status", "thread_id"},
	}
}

// answerSchemas are the schemas of the answers to the human nodes of a
// plan and of its subworkflows, each titled "TOOL.NODE".
func answerSchemas(toolName string, plan *flow.Plan, prefix string) []any {
	var out []any
	for _, pn := range plan.Nodes {
		if pn.Sub != nil {
			out = append(out, answerSchemas(toolName, pn.Sub, prefix+pn.Name+"/")...)
		}
		if pn.Node != nil && pn.Node.Type == flow.Human {
			out = append(out, outputsSchema(pn, toolName+"."+prefix+pn.Name))
		}
	}
	return out
}

// resumeSchema is weft_resume's input schema: the thread, the question
// when it waits on several, and the answer, as text or as an object of
// the asking human node's outputs (anyOf the served ones).
func resumeSchema(humans []any) Schema {
	answer := []any{Schema{"type": "string", "description": "the answer as a person types it: the value of the node's one output, or a JSON object of its outputs"}}
	answer = append(answer, humans...)
	return Schema{
		"type": "object",
		"properties": Schema{
			"thread_id":   Schema{"type": "string", "description": "the thread_id a waiting result gave"},
			"question_id": Schema{"type": "string", "description": "the question's id, when the run waits on several"},
			"answer":      Schema{"anyOf": answer},
		},
		"required":             []any{"thread_id", "answer"},
		"additionalProperties": false,
	}
}
