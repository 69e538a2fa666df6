package owf

import (
	"errors"
	"os"
	"testing"

	"github.com/weftlang/weft/lang"
)

// FuzzLoad checks that any input either loads, compiles to a plan and
// prints as .wf, or fails with an ErrorList of positioned errors; never a
// panic.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(oneTask(2, 10)))
	f.Add([]byte(popSample("0", "Z", "")))
	f.Add([]byte(cond("10", "GreaterThan", "9")))
	f.Add([]byte(`{"config":{"max_steps":1,"max_time":1},"tasks":[{"id":"A","prompt":"x","operator":"check","inputs":[]}],"steps":[],"return_value":{"input":[]}}`))
	if files, err := os.ReadDir(conformanceDir); err == nil {
		for _, e := range files {
			if src, err := os.ReadFile(conformanceDir + "/" + e.Name()); err == nil && !e.IsDir() {
				f.Add(src)
			}
		}
	}
	x, err := NewExecutor(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		doc, err := Load("fuzz.json", src, nil)
		if err != nil {
			var el ErrorList
			if !errors.As(err, &el) || len(el) == 0 {
				t.Fatalf("error %v is not an ErrorList", err)
			}
			for _, e := range el {
				if e.Line < 1 || e.Col < 1 {
					t.Fatalf("error without a position: %v", e)
				}
			}
			return
		}
		w, err := Compile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Plan(doc); err != nil {
			t.Fatalf("a loaded document does not compile: %v", err)
		}
		out, err := lang.FormatWorkflow(w)
		if err != nil {
			t.Fatalf("FormatWorkflow: %v", err)
		}
		if _, ds := lang.LoadSource("fuzz.wf", out, nil); ds.HasErrors() {
			t.Fatalf("the printed .wf does not load: %v\n%s", ds, out)
		}
	})
}
