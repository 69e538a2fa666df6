package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestMatcher checks filter semantics beyond the conformance suite:
// numbers past float64 compared exactly, operators mixed with fields
// refused, values that are not objects, nulls and booleans.
func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		filter, value string
		want          bool
	}{
		{`{"n": 1e400}`, `{"n": 10e399}`, true},
		{`{"n": 1e400}`, `{"n": 1e401}`, false},
		{`{"n": 9007199254740993}`, `{"n": 9007199254740992}`, false}, // equal as float64
		{`{"n": {"$gt": 9007199254740992}}`, `{"n": 9007199254740993}`, true},
		{`{"n": -0}`, `{"n": 0.0}`, true},
		{`{"b": true}`, `{"b": true}`, true},
		{`{"b": true}`, `{"b": 1}`, false},
		{`{"z": null}`, `{"z": null}`, true},
		{`{"z": null}`, `{}`, false},
		{`{"z": {"$ne": null}}`, `{}`, true},
		{`{"s": {"$lte": "b"}}`, `{"s": "ab"}`, true},
		{`{"o": {}}`, `{"o": {}}`, true},
		{`{"o": {}}`, `{"o": {"a": 1}}`, false},
		{`{"a": [1, {"x": 2.0}]}`, `{"a": [1.0, {"x": 2}]}`, true},
		{`{"a": [1, 2]}`, `{"a": [1, 2, 3]}`, false},
		{`{}`, `[1]`, true}, // no filter passes anything
		{`{"a": 1}`, `[1]`, false},
	} {
		var f map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.filter), &f); err != nil {
			t.Fatal(err)
		}
		q := store.ItemQuery{Filter: f}
		if err := q.Check(); err != nil {
			t.Fatalf("Check(%s): %v", tc.filter, err)
		}
		m, err := q.Matcher()
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match([]byte(tc.value)); got != tc.want {
			t.Errorf("filter %s on %s = %v, want %v", tc.filter, tc.value, got, tc.want)
		}
	}
	for _, bad := range []string{`{"$gt": 1, "x": 2}`, `{"$in": [1]}`, `1 2`} {
		q := store.ItemQuery{Filter: map[string]json.RawMessage{"f": json.RawMessage(bad)}}
		if err := q.Check(); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Check of filter %s: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestPrefixRange checks that the range of a prefix holds exactly the
// namespaces under it, in bytewise order, whatever the labels' bytes.
func TestPrefixRange(t *testing.T) {
	p, lo, hi := store.PrefixRange([]string{"a", "b"})
	in := func(ns string) bool { return ns == p || ns >= lo && ns < hi }
	for ns, want := range map[string]bool{
		"a.b": true, "a.b.c": true, "a.b.\xff": true, "a.b.-": true, "a.b./": true,
		"a.bc": false, "a.b-": false, "a.b/": false, "a": false, "a.c": false, "a.a.b": false, "b.a.b": false,
	} {
		if got := in(ns); got != want {
			t.Errorf("%q in the range of a.b: %v, want %v", ns, got, want)
		}
	}
}

// TestConflictErrors: both kinds of conflict match ErrConflict.
func TestConflictErrors(t *testing.T) {
	for _, err := range []error{&store.ConflictError{ThreadID: "t"}, &store.JobConflictError{ID: "j", Status: store.JobRunning}} {
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("errors.Is(%v, ErrConflict) = false", err)
		}
	}
}
