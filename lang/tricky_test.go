package lang

import "testing"

// Sources with comments and layouts in awkward places: each must format
// idempotently and keep its AST.
func TestFormatTricky(t *testing.T) {
	srcs := []string{
		"// only a comment\n",
		"\n\n# a\n\n\n# b\n",
		"workflow W { } // after\n// end\n",
		"workflow W { // c\n}\n",
		"workflow W {\n  // inside only\n}\n",
		"workflow W { parameters { // p\n } }\n",
		"workflow W { nodes { node a { inputs { x: 1 } // c\n } } }\n",
		"workflow W { nodes { node a { type: X; action: \"y\" // c\n } } }\n",
		"workflow W { edges { edge { to: b // t\n from: a // f\n } } }\n",
		"workflow W { edges { edge { condition: x // c\n from: a\n\n to: b\n update: { a = 1 } } } }\n",
		"workflow W { edges { edge { from: a; to: b; override: { s: 1 } // o\n } } }\n",
		"workflow W { edges { edge { from: a; to: b; override: {\n // inner\n s: 1 } } } }\n",
		"workflow W { edges { edge { from: a; to: [b, // x\n c]; join: c } } }\n",
		"workflow W { variables { x: List[Enum[\"a\", // c\n \"b\"]] = [] reduce append // r\n } }\n",
		"workflow W { description: \"\"\"\n    text\n      more\n    \"\"\" // d\n}\n",
		"workflow W { nodes { node a { prompt: \"\"\"x\n  y\"\"\"\n set: { v = \"\"\"\n   z\n   \"\"\" } } } }\n",
		"action a { prompt: \"\"\"\n\t\ttabbed\n\t\t  more\n\t\t\"\"\" }\n",
		"import \"a\" // one\n\n\nimport \"b\"\n# two\nimport \"c\"\n",
		"workflow W { nodes {\n\n  node a { }\n\n\n  node b { }\n\n } }\n",
		"workflow W { description: (a + // x\n b) // y\n }\n",
		"workflow W { edges { edge { from: a; to: b }; edge { from: b; to: a } // z\n } }\n",
		"workflow W { limits { max_steps: 1 // s\n max_time: 1s }; initial: a // i\n finals: [ a ] }\n",
		"workflow W { nodes { node a { inputs { x: {k: 1, // c\n \"j k\": [2]} } } } }\n",
		"workflow W { edges { edge { from: a; to: b\n ; note\n } } }\n",
		"workflow W { edges { edge { from: a; to: b; condition: x ; why not\n } } }\n",
	}
	for _, src := range srcs {
		f, ds := ParseFile("t.wf", []byte(src))
		if len(ds) > 0 {
			t.Errorf("%q: %v", src, ds)
			continue
		}
		out := checkFormat(t, "t.wf", []byte(src), f)
		if a, b := commentTexts(f), commentTexts(mustParse(t, "t.wf", out)); len(a) > 0 && len(b) == 0 {
			t.Errorf("%q: comments lost:\n%s", src, out)
		}
	}
}
