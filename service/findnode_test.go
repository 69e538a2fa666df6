package service

import (
	"testing"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

// TestFindNodeFramePath: the node a question inside a subworkflow is
// asked at is named by its path, with the element of a map over the
// WORKFLOW node ("each[2]/ask"): both find the inner node.
func TestFindNodeFramePath(t *testing.T) {
	const src = `
workflow Outer {
  parameters {
    xs: List[String] = ["a"]
  }
  nodes {
    node each {
      type: WORKFLOW
      workflow: Inner
      map: xs
      as: x
      outputs {
        note: String
      }
    }
  }
  initial: each
  finals: [ each ]
}

workflow Inner {
  nodes {
    node ask {
      type: HUMAN
      question: "?"
      outputs {
        note: String
      }
    }
  }
  initial: ask
  finals: [ ask ]
}
`
	m, ds := lang.LoadSource("outer.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(m.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for _, path := range []string{"each/ask", "each[2]/ask"} {
		if pn := FindNode(plan, path); pn == nil || pn.Name != "ask" || pn.Node.Type != flow.Human {
			t.Errorf("FindNode(%q) = %v", path, pn)
		}
	}
	if pn := FindNode(plan, "each[2]"); pn != nil {
		t.Errorf("FindNode(each[2]) = %s, want none", pn.Name)
	}
}
