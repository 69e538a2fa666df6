package sqlite

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestUnknownRunStatus stores a run status that is none of store.Status's
// behind the store's back: Run and Runs refuse it with a
// *store.CorruptError of Field "status" naming the thread and the run,
// never map it to another status.
func TestUnknownRunStatus(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: store.Completed}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `UPDATE runs SET status = 'done' WHERE id = 'r'`); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		var ce *store.CorruptError
		if !errors.As(err, &ce) || ce.Field != "status" || ce.ThreadID != "t" || ce.Detail != `run r has status "done", not a run status` {
			t.Errorf("%s of a run with status done: %v, want a *CorruptError of field status", what, err)
		}
	}
	_, err = s.Run(ctx, "r")
	check("Run", err)
	_, err = s.Runs(ctx, "t")
	check("Runs", err)
}
