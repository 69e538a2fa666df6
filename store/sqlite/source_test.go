package sqlite

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestMigrateFromV5Sources writes a database at schema version 5 (before
// sources and run specs) with a thread, a run, its log and a question,
// then opens it: Open migrates to version 6, the old thread reads back
// with no source and no spec and its data unchanged, it can be given a
// source and a spec, and the foreign key refuses a source not stored.
func TestMigrateFromV5Sources(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v5.db")
	old, err := openAt(ctx, path, migrations()[:5])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Meta: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := old.PutRun(ctx, &store.Run{ID: "r", ThreadID: "t", Number: 1, Status: "waiting"}); err != nil {
		t.Fatal(err)
	}
	if err := old.Append(ctx, sized("t", 1, store.Snapshot, 300), sized("t", 2, store.Step, 40)); err != nil {
		t.Fatal(err)
	}
	if err := old.PutPending(ctx, &store.Pending{ID: "3", ThreadID: "t", RunID: "r", Node: "ask", Question: []byte(`"why?"`)}); err != nil {
		t.Fatal(err)
	}
	before, err := old.Records(ctx, "t", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a v5 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Fatalf("after Open, version %d, want %d", v, SchemaVersion)
	}
	checkSchema(t, s)
	th, err := s.Thread(ctx, "t")
	if err != nil || th.Workflow != "w" || th.Meta["a"] != "b" || th.Source != "" || th.Spec != nil {
		t.Fatalf("old thread after migration = %+v, %v; want workflow w, meta a=b, no source, no spec", th, err)
	}
	after, err := s.Records(ctx, "t", 1)
	if err != nil || len(after) != len(before) {
		t.Fatalf("records after migration: %d, %v; want %d", len(after), err, len(before))
	}
	for i := range after {
		if !bytes.Equal(after[i].Data, before[i].Data) || after[i].Seq != before[i].Seq {
			t.Errorf("record %d changed by the migration", before[i].Seq)
		}
	}
	if p, err := s.Pending(ctx, "t"); err != nil || len(p) != 1 || p[0].ID != "3" {
		t.Errorf("pending after migration: %+v, %v", p, err)
	}

	src := []byte("workflow w {}")
	d := store.Digest(src)
	missing := &store.Thread{ID: "t", Workflow: "w", Source: d}
	if err := s.UpdateThread(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateThread to a source not stored: %v, want ErrNotFound", err)
	}
	if err := s.PutSource(ctx, d, src); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Source: d, Spec: []byte(`{"x":1}`), Meta: th.Meta}); err != nil {
		t.Fatalf("UpdateThread after migration: %v", err)
	}
	if th, err := s.Thread(ctx, "t"); err != nil || th.Source != d || string(th.Spec) != `{"x":1}` {
		t.Errorf("thread given a source = %+v, %v", th, err)
	}
}
