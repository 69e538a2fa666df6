package owf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm/llmtest"
)

// TestSeedExample runs the "Simple" example of seed 004 verbatim: the
// documentation's format (prompt era), without a return_value.
func TestSeedExample(t *testing.T) {
	files, _ := filepath.Glob("../../shared/seeds/004_*.txt")
	if len(files) == 0 {
		t.Skip("seed 004 is not at ../../shared/seeds (it comes with ../shared)")
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, block := range strings.Split(string(src), "```json")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if strings.Contains(body, `"steps"`) {
			example = body
		}
	}
	if example == "" {
		t.Fatal("no workflow example in seed 004")
	}
	doc, err := Load("seed004.json", []byte(example), nil)
	if err != nil {
		t.Fatalf("the seed's example does not load: %v", err)
	}
	if doc.Era != EraPrompt || doc.Name != "Simple" {
		t.Errorf("era %s, name %q", doc.Era, doc.Name)
	}
	_, opts := fake(t, llmtest.Reply{Text: "Fairy chimneys at dawn"})
	out, res, err := run(t, example, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" || path(res) != "__start A __return" {
		t.Errorf("result %q, path %s; want the poem task run and an empty return value", out, path(res))
	}
}
