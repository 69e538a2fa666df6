package viz_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/weftlang/weft/viz"
)

func ExampleMermaid() {
	g := &viz.Graph{
		Nodes: []viz.Node{
			{ID: "ask", Detail: "LLM", Kind: viz.LLM, Initial: true},
			{ID: "check", Detail: "validate_answer"},
			{ID: "done", Final: true},
		},
		Edges: []viz.Edge{
			{From: "ask", To: "check"},
			{From: "check", To: "done", Kind: viz.Conditional, Label: `status == "ok"`},
			{From: "check", To: "ask", Kind: viz.Error, Label: "retry", Note: "attempts += 1"},
		},
	}
	if err := viz.Mermaid(os.Stdout, g); err != nil {
		fmt.Println(err)
	}
	// Output:
	// flowchart TD
	//     ask{{"ask<br/>LLM"}}
	//     check("check<br/>validate_answer")
	//     done("done")
	//     start_ask((" ")) --> ask
	//     ask --> check
	//     check -->|"status == #quot;ok#quot;"| done
	//     check -.->|"retry<br/>attempts += 1"| ask
	//     classDef vizTask fill:#E8F1FA,stroke:#0072B2,color:#1A1A1A
	//     classDef vizLLM fill:#F7E6F0,stroke:#CC79A7,color:#1A1A1A
	//     classDef vizHuman fill:#FDF0D5,stroke:#E69F00,color:#1A1A1A
	//     classDef vizTool fill:#DDF2EA,stroke:#009E73,color:#1A1A1A
	//     classDef vizSubflow fill:#EEEEEE,stroke:#666666,color:#1A1A1A
	//     classDef vizJoin fill:#FAF6CC,stroke:#B5A300,color:#1A1A1A
	//     classDef vizMap fill:#E4F3FB,stroke:#56B4E9,color:#1A1A1A
	//     classDef vizFinal stroke-width:4px
	//     classDef vizStart fill:#222222,stroke:#222222
	//     class check,done vizTask
	//     class ask vizLLM
	//     class done vizFinal
	//     class start_ask vizStart
	//     linkStyle 3 stroke:#D55E00,stroke-width:1.6px
}

func ExampleLayout() {
	g := &viz.Graph{
		Nodes: []viz.Node{{ID: "a", Initial: true}, {ID: "b"}, {ID: "a"}},
		Edges: []viz.Edge{{From: "a", To: "c"}},
	}
	_, err := viz.Layout(g)
	fmt.Println(strings.ReplaceAll(err.Error(), "\n", "; "))
	// Output:
	// viz: duplicate node ID "a" (nodes 0 and 2); viz: edge 0 ("a" -> "c") has unknown target "c"
}
