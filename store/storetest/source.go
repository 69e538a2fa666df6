package storetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/weftlang/weft/store"
)

// testSources checks PutSource and Source: a source reads back as put,
// by its digest, and a copy; putting it again is no error; a digest
// that is not the source's is a *store.DigestError and stores nothing;
// a missing source is ErrNotFound.
func testSources(t *testing.T, s store.Store) {
	ctx := t.Context()
	src := []byte("workflow w {\n  step a\n}\n")
	d := store.Digest(src)
	if want := "sha256:"; d[:7] != want || len(d) != 7+64 {
		t.Fatalf("Digest = %q, want sha256:<64 hex>", d)
	}
	_, err := s.Source(ctx, d)
	wantNotFound(t, "Source before PutSource", err)
	if err := s.PutSource(ctx, d, src); err != nil {
		t.Fatalf("PutSource: %v", err)
	}
	if err := s.PutSource(ctx, d, bytes.Clone(src)); err != nil {
		t.Errorf("PutSource again: %v, want nil", err)
	}
	got, err := s.Source(ctx, d)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("Source = %q, %v; want %q", got, err, src)
	}
	got[0] = 'X'
	if again, err := s.Source(ctx, d); err != nil || !bytes.Equal(again, src) {
		t.Errorf("Source after changing a returned copy = %q, %v", again, err)
	}

	// A digest of other content, and one that is no digest at all.
	other := []byte("workflow v {}\n")
	for _, bad := range []string{store.Digest(other), "md5:abc", ""} {
		err := s.PutSource(ctx, bad, src)
		var de *store.DigestError
		if !errors.As(err, &de) || !errors.Is(err, store.ErrDigestMismatch) || de.Digest != bad || de.Actual != d {
			t.Errorf("PutSource(%q, src): %v, want a *DigestError{Digest: %q, Actual: %q}", bad, err, bad, d)
		}
	}
	_, err = s.Source(ctx, store.Digest(other))
	wantNotFound(t, "Source of a refused PutSource", err)

	// An empty source is a source.
	empty := store.Digest(nil)
	if err := s.PutSource(ctx, empty, nil); err != nil {
		t.Fatalf("PutSource(empty): %v", err)
	}
	if got, err := s.Source(ctx, empty); err != nil || len(got) != 0 {
		t.Errorf("Source(empty) = %q, %v", got, err)
	}
}

// testThreadSource checks a thread's Source and Spec: kept by
// CreateThread and UpdateThread, read back as written, a Source the
// store does not hold refused with ErrNotFound, a malformed Source or
// Spec with ErrInvalid; and a source outlives the threads that name it
// (Prune and DeleteThread keep it).
func testThreadSource(t *testing.T, s store.Store) {
	ctx := t.Context()
	src1, src2 := []byte("workflow w { one }"), []byte("workflow w { two }")
	d1, d2 := store.Digest(src1), store.Digest(src2)
	if err := s.PutSource(ctx, d1, src1); err != nil {
		t.Fatal(err)
	}
	spec := []byte(`{"workflow":"` + d1 + `","components":{"llm":{"id":"llm.ollama"}},"secrets":{"key":"$API_KEY"}}`)
	th := &store.Thread{ID: "t", Workflow: "w", Source: d1, Spec: spec, Created: base(), Updated: base(), Meta: map[string]string{"a": "1"}}
	if err := s.CreateThread(ctx, th); err != nil {
		t.Fatalf("CreateThread with a stored source: %v", err)
	}
	got, err := s.Thread(ctx, "t")
	if err != nil || got.Source != d1 || !bytes.Equal(got.Spec, spec) || got.Workflow != "w" {
		t.Fatalf("Thread = %+v (spec %s), %v; want source %s and spec %s", got, got.Spec, err, d1, spec)
	}
	got.Spec[0] = 'X'
	if again, _ := s.Thread(ctx, "t"); !bytes.Equal(again.Spec, spec) {
		t.Errorf("Spec changed through a returned copy: %s", again.Spec)
	}
	// A thread without a source or spec reads back without.
	mustThread(t, s, "plain", base())
	if p, err := s.Thread(ctx, "plain"); err != nil || p.Source != "" || p.Spec != nil {
		t.Errorf("thread without a source = source %q, spec %q, %v; want empty", p.Source, p.Spec, err)
	}

	// A source the store does not hold.
	err = s.CreateThread(ctx, &store.Thread{ID: "u", Workflow: "w", Source: d2})
	wantNotFound(t, "CreateThread with a source not stored", err)
	_, err = s.Thread(ctx, "u")
	wantNotFound(t, "thread refused for its source", err)
	for name, bad := range map[string]*store.Thread{
		"a source that is no digest": {ID: "v", Source: "sha256:xyz"},
		"a spec that is not JSON":    {ID: "v", Spec: []byte("{not json")},
	} {
		if err := s.CreateThread(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateThread with %s: %v, want ErrInvalid", name, err)
		}
		if err := s.UpdateThread(ctx, &store.Thread{ID: "t", Source: bad.Source, Spec: bad.Spec}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("UpdateThread with %s: %v, want ErrInvalid", name, err)
		}
	}

	// UpdateThread: a later run with another source and spec.
	err = s.UpdateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Source: d2, Spec: []byte(`{"v":2}`)})
	wantNotFound(t, "UpdateThread to a source not stored", err)
	if got, _ := s.Thread(ctx, "t"); got.Source != d1 || !bytes.Equal(got.Spec, spec) {
		t.Errorf("thread after a refused UpdateThread: source %s, spec %s; want unchanged", got.Source, got.Spec)
	}
	if err := s.PutSource(ctx, d2, src2); err != nil {
		t.Fatal(err)
	}
	at := base().Add(time.Hour)
	up := &store.Thread{ID: "t", Workflow: "w2", Source: d2, Spec: []byte(`{"v":2}`), Updated: at, Meta: map[string]string{"b": "2"}}
	if err := s.UpdateThread(ctx, up); err != nil {
		t.Fatalf("UpdateThread: %v", err)
	}
	got, err = s.Thread(ctx, "t")
	if err != nil || got.Workflow != "w2" || got.Source != d2 || string(got.Spec) != `{"v":2}` || !sameTime(got.Created, base()) ||
		!sameTime(got.Updated, at) || len(got.Meta) != 1 || got.Meta["b"] != "2" {
		t.Errorf("Thread after UpdateThread = %+v (spec %s), %v", got, got.Spec, err)
	}
	if !sameTime(up.Created, base()) {
		t.Errorf("UpdateThread set Created = %v, want the stored %v", up.Created, base())
	}
	// Clearing the source and spec; a zero Updated is the store's time.
	before := time.Now()
	clear := &store.Thread{ID: "t", Workflow: "w2"}
	if err := s.UpdateThread(ctx, clear); err != nil {
		t.Fatalf("UpdateThread clearing: %v", err)
	}
	if got, _ := s.Thread(ctx, "t"); got.Source != "" || got.Spec != nil || got.Updated.Before(before.Add(-timeSlack)) || !sameTime(got.Updated, clear.Updated) {
		t.Errorf("Thread after clearing = %+v (spec %q), Updated want about %v", got, got.Spec, clear.Updated)
	}
	wantNotFound(t, "UpdateThread(missing)", s.UpdateThread(ctx, &store.Thread{ID: "missing"}))

	// Sources outlive the threads and runs that named them.
	if err := s.UpdateThread(ctx, &store.Thread{ID: "t", Workflow: "w", Source: d1}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "t", "r1", 1)
	mustRun(t, s, "t", "r2", 2)
	mustAppend(t, s, rec("t", "r1", 1, 1, store.Snapshot), rec("t", "r2", 2, 1, store.Snapshot))
	if _, err := s.Prune(ctx, "t", store.PruneOptions{KeepRuns: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d   string
		src []byte
	}{{d1, src1}, {d2, src2}} {
		if got, err := s.Source(ctx, c.d); err != nil || !bytes.Equal(got, c.src) {
			t.Errorf("Source(%s) after Prune and DeleteThread = %q, %v; want %q", c.d, got, err, c.src)
		}
	}
}
