package sqlite

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// TestMigrateFromV4Leases writes a database at schema version 4 (before
// leases) with a thread and its log, then opens it: Open migrates to
// version 5, the old records read back unchanged with fence 0, the old
// thread has no lease, can be claimed, and then refuses unfenced and
// stale appends.
func TestMigrateFromV4Leases(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v4.db")
	old, err := openAt(ctx, path, migrations()[:4])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.CreateThread(ctx, &store.Thread{ID: "t", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := old.Append(ctx, sized("t", 1, store.Snapshot, 1300), sized("t", 2, store.Step, 40)); err != nil {
		t.Fatal(err)
	}
	if err := old.Append(ctx, sized("t", 3, store.Step, 300)); err != nil {
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
		t.Fatalf("Open of a v4 database: %v", err)
	}
	defer s.Close()
	if v, _ := version(ctx, s.writer); v != SchemaVersion {
		t.Fatalf("after Open, version %d, want %d", v, SchemaVersion)
	}
	checkSchema(t, s)
	got, err := s.Records(ctx, "t", 1)
	if err != nil || len(got) != len(before) {
		t.Fatalf("Records after migration: %d records, %v; want %d", len(got), err, len(before))
	}
	for i, g := range got {
		w := before[i]
		if g.Seq != w.Seq || g.Fence != 0 || !bytes.Equal(g.Data, w.Data) || g.Checksum != w.Checksum || !g.Time.Equal(w.Time) {
			t.Errorf("record %d after migration = %+v, before %+v", w.Seq, g, w)
		}
	}
	// No lease yet: an unfenced append goes in.
	if err := s.Append(ctx, sized("t", 4, store.Step, 10)); err != nil {
		t.Fatalf("unfenced Append after migration: %v", err)
	}
	l, err := s.Claim(ctx, "t", "A", time.Minute)
	if err != nil || l.Fence != 1 {
		t.Fatalf("Claim after migration: %+v, %v; want fence 1", l, err)
	}
	if err := s.Append(ctx, sized("t", 5, store.Step, 10)); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("unfenced Append while leased: %v, want ErrLeaseHeld", err)
	}
	r := sized("t", 5, store.Step, 10)
	r.Fence = l.Fence
	if err := s.Append(ctx, r); err != nil {
		t.Errorf("fenced Append: %v", err)
	}
	r = sized("t", 6, store.Step, 10)
	r.Fence = l.Fence + 1
	if err := s.Append(ctx, r); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("Append with a fence not granted: %v, want ErrLeaseLost", err)
	}
}

// TestTriggerRefusesFence: the schema itself refuses a record whose fence
// the thread's lease does not allow, whoever inserts it (here, SQL behind
// the store's back), so a writer that skips the store's checks cannot
// write either.
func TestTriggerRefusesFence(t *testing.T) {
	s, _ := openTemp(t)
	ctx := t.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	seq := int64(0)
	ins := func(fence int64) error {
		_, err := s.writer.ExecContext(ctx, `INSERT INTO records (thread_id, seq, run_id, step, kind, data, checksum, time, fence) VALUES ('t', ?, '', 0, 'step', x'', 0, ?, ?)`,
			seq+1, unix(now()), fence)
		if err == nil {
			seq++
		}
		return err
	}
	check := func(what string, fence int64, ok bool) {
		t.Helper()
		err := ins(fence)
		if (err == nil) != ok || err != nil && code(err) != sqliteConstraint {
			t.Errorf("%s: INSERT with fence %d: %v, want ok=%v", what, fence, err, ok)
		}
	}
	check("no lease", 0, true)
	check("no lease", 1, false) // a fence no lease was granted
	a, err := s.Claim(ctx, "t", "A", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	check("leased", 0, false)
	check("leased", a.Fence+1, false)
	check("leased", a.Fence, true)
	b, err := s.Claim(ctx, "t", "B", time.Minute)
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("second Claim: %+v, %v", b, err)
	}
	if err := s.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	check("released", a.Fence, false)
	check("released", 0, true)
	if b, err = s.Claim(ctx, "t", "B", time.Second); err != nil {
		t.Fatal(err)
	}
	check("taken over", a.Fence, false)
	check("taken over", b.Fence, true)
	time.Sleep(time.Second + 50*time.Millisecond)
	check("expired", b.Fence, false)
	check("expired", 0, true)
	got, err := s.Records(ctx, "t", 1)
	if err != nil || len(got) != 5 {
		t.Fatalf("Records: %d records, %v; want 5", len(got), err)
	}
	for i, want := range []int64{0, a.Fence, 0, b.Fence, 0} {
		if got[i].Fence != want {
			t.Errorf("record %d has fence %d, want %d", got[i].Seq, got[i].Fence, want)
		}
	}
}
