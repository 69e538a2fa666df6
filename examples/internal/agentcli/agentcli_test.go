package agentcli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMessages(t *testing.T) {
	got := slices.Collect(Messages("", strings.NewReader("first\n\n  second  \n\t\nthird")))
	if !slices.Equal(got, []string{"first", "second", "third"}) {
		t.Errorf("lines = %q", got)
	}
	got = slices.Collect(Messages("only this", strings.NewReader("ignored\n")))
	if !slices.Equal(got, []string{"only this"}) {
		t.Errorf("input = %q", got)
	}
	for range Messages("", strings.NewReader("a\nb\n")) {
		break // stopping early must not panic
	}
}

func TestOpenModel(t *testing.T) {
	noenv := func(string) string { return "" }
	if _, _, err := OpenModel("replay:"+filepath.Join(t.TempDir(), "missing.jsonl"), "", time.Second, noenv); err == nil {
		t.Error("a missing recording opened")
	}
	if _, _, err := OpenModel("", "", time.Second, noenv); err == nil {
		t.Error("no spec and no WEFT_LLM opened a model")
	}
	rec := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(rec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.jsonl")
	m, closeRec, err := OpenModel("", out, time.Second, func(k string) string {
		if k == "WEFT_LLM" {
			return "replay:" + rec
		}
		return ""
	})
	if err != nil || m == nil {
		t.Fatalf("WEFT_LLM replay: %v", err)
	}
	if err := closeRec(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the recording was not created: %v", err)
	}
}
