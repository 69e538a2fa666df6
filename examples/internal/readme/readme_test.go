package readme

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	old := "# x\n" + Begin + "```mermaid\nold\n```\n" + End + "\ntail\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var stale *StaleError
	if err := Sync(path, "new\n", false); !errors.As(err, &stale) || !strings.Contains(stale.Want, "new") {
		t.Fatalf("stale: err = %v", err)
	}
	if err := Sync(path, "new\n", true); err != nil {
		t.Fatal(err)
	}
	if err := Sync(path, "new\n", false); err != nil {
		t.Fatalf("after update: %v", err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(data), End+"\ntail\n") || !strings.HasPrefix(string(data), "# x\n") {
		t.Errorf("update changed the rest: %q", data)
	}
	if err := os.WriteFile(path, []byte("no markers"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Sync(path, "new\n", true); err == nil || !strings.Contains(err.Error(), "lacks the markers") {
		t.Errorf("no markers: err = %v", err)
	}
}
