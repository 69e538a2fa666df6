package lang_test

import (
	"strings"
	"testing"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

const passWF = `workflow P {
  parameters {
    input_text: String
    n: Int = 1
  }
  nodes {
    node copy {
      type: FUNCTION
      action: "pass"
      inputs {
        count: n
        label: input_text
      }
      outputs {
        %s
      }
    }
  }
  initial: copy
  finals: [ copy ]
}
`

// TestPassTypesCheckedAtCompileTime: a node whose action sets its outputs
// from its inputs, in order (the built-in pass), is checked when it is
// compiled: each input's type must fit its output's, and there must be an
// input for each output.
func TestPassTypesCheckedAtCompileTime(t *testing.T) {
	opts := &flow.CompileOptions{OutputsFromInputs: func(a string) bool { return a == "pass" }}
	for _, tc := range []struct {
		outputs string
		want    string // "" when it compiles
	}{
		{"total: Int\n        name: String", ""},
		{"total: Float\n        name: Enum[\"a\",\"b\"]", ""}, // Int widens; a String is checked against the Enum at run time
		{"total: String\n        name: String", `node copy: action "pass" sets output total (String) from input count, of type Int`},
		{"total: Int\n        name: List[String]", `node copy: action "pass" sets output name (List[String]) from input label, of type String`},
		{"total: Int\n        name: String\n        extra: String\n        more: Int", `node copy: action "pass" sets its 4 outputs from its inputs, in order, but it has 3 (count, label, input_text)`},
	} {
		src := strings.Replace(passWF, "%s", tc.outputs, 1)
		m, ds := lang.LoadSource("p.wf", []byte(src), nil)
		if ds.HasErrors() {
			t.Fatalf("%s:\n%v", tc.outputs, ds)
		}
		_, ds = flow.Compile(m.Main(), opts)
		switch {
		case tc.want == "" && ds.HasErrors():
			t.Errorf("outputs %q: %v; want it to compile", tc.outputs, ds)
		case tc.want != "" && !strings.Contains(ds.Error(), tc.want):
			t.Errorf("outputs %q: diagnostics %q; want %q", tc.outputs, ds.Error(), tc.want)
		}
		// Without the option, nothing is known of the action.
		if _, ds := flow.Compile(m.Main(), nil); ds.HasErrors() {
			t.Errorf("outputs %q without OutputsFromInputs: %v", tc.outputs, ds)
		}
	}
}
