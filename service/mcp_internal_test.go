package service

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// checkInputs against a schema with every rule it reads: required
// properties, additionalProperties false, JSON types (one or a list).
func TestCheckInputsSchema(t *testing.T) {
	src := "workflow W {\n  parameters {\n    n: Int\n    tags: List[String]\n  }\n  nodes {\n    node a {\n      type: TOOL\n      tool: \"s__t\"\n      inputs {\n        count: n\n        labels: tags\n        name: 3.5\n        extra: \"x\"\n        any: n\n      }\n    }\n  }\n  initial: a\n  finals: [ a ]\n}\n"
	w, err := Open(context.Background(), Bytes("w.wf", []byte(src)), nil)
	if err != nil {
		t.Fatal(err)
	}
	pn := w.Plan.Nodes[0]
	schema := `{"type":"object","required":["count","path"],"additionalProperties":false,"properties":{
		"count":{"type":"integer"},"labels":{"type":"object"},"name":{"type":["string","null"]},"any":{"type":["number","string"]}}}`
	var got []string
	for _, p := range checkInputs(pn, []byte(schema)) {
		got = append(got, fmt.Sprintf("%s %s %s", p.pos, p.path, p.reason))
	}
	want := []string{
		`w.wf:7:5 /required the tool requires "path", which is not an input of the node`,
		"w.wf:12:9 /properties/labels/type input labels is List[String], the tool wants object",
		"w.wf:13:9 /properties/name/type input name is Float, the tool wants string or null",
		"w.wf:14:9 /additionalProperties input extra is not a property of the tool (properties: any, count, labels, name)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
