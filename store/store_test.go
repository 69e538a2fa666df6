package store_test

import (
	"errors"
	"testing"

	"github.com/weftlang/weft/store"
)

// TestCheckSeqs checks the log shapes CheckSeqs accepts and the record it
// names for each it refuses: gaps, repeats, records out of order, a log
// cut short at its end or running past it, a pruned log that does not
// start at a snapshot.
func TestCheckSeqs(t *testing.T) {
	log := func(spec ...any) []*store.Record {
		var out []*store.Record
		for _, x := range spec {
			switch v := x.(type) {
			case int:
				out = append(out, &store.Record{ThreadID: "t", Seq: int64(v), Kind: store.Step})
			case string: // "sN": a snapshot
				var n int64
				for _, c := range v[1:] {
					n = n*10 + int64(c-'0')
				}
				out = append(out, &store.Record{ThreadID: "t", Seq: n, Kind: store.Snapshot})
			}
		}
		return out
	}
	cases := []struct {
		name        string
		from        int64
		recs        []*store.Record
		first, last int64
		bad         int64 // the Seq named; 0: no error
	}{
		{"empty", 1, nil, 0, 0, 0},
		{"empty, end unknown", 1, nil, 0, -1, 0},
		{"whole", 1, log("s1", 2, 3), 1, 3, 0},
		{"from 0", 0, log("s1", 2, 3), 1, 3, 0},
		{"from the middle", 2, log(2, 3), 1, 3, 0},
		{"past the end", 4, nil, 1, 3, 0},
		{"pruned", 1, log("s7", 8), 7, 8, 0},
		{"pruned, from inside", 8, log(8), 7, 8, 0},
		{"gap", 1, log("s1", 2, 4), 1, 4, 3},
		{"gap, end unknown", 1, log("s1", 2, 4), 1, -1, 3},
		{"two gaps", 1, log("s1", 3, 5), 1, 5, 2},
		{"gap at from", 2, log(3, 4), 1, 4, 2},
		{"first record gone", 1, log(2, 3), 2, 3, 1},
		{"snapshot of a pruned log gone", 1, log(8, 9), 8, 9, 7},
		{"repeat", 1, log("s1", 2, 2, 3), 1, 3, 2},
		{"out of order", 1, log("s1", 3, 2), 1, 3, 2},
		{"before from", 3, log(2, 3), 1, 3, 2},
		{"cut short", 1, log("s1", 2), 1, 4, 3},
		{"all after from gone", 3, nil, 1, 4, 3},
		{"past the log's end", 1, log("s1", 2, 3), 1, 2, 3},
	}
	for _, c := range cases {
		err := store.CheckSeqs("t", c.from, c.recs, c.first, c.last)
		if c.bad == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var ce *store.CorruptError
		if !errors.As(err, &ce) || ce.ThreadID != "t" || ce.Seq != c.bad || ce.Field != "seq" {
			t.Errorf("%s: got %v, want a *CorruptError of record %d, field seq", c.name, err, c.bad)
		}
	}
}

// TestCorruptErrorText: the message names the thread and the record, and
// leaves out a step or record the error has none of.
func TestCorruptErrorText(t *testing.T) {
	for _, c := range []struct {
		err  store.CorruptError
		want string
	}{
		{store.CorruptError{ThreadID: "t", Seq: 3, Step: 7, Field: "data", Detail: "bad"}, "store: thread t, record 3 (step 7), field data: bad"},
		{store.CorruptError{ThreadID: "t", Seq: 38, Field: "seq", Detail: "record missing"}, "store: thread t, record 38, field seq: record missing"},
		{store.CorruptError{ThreadID: "t", Field: "meta", Detail: "bad"}, "store: thread t, field meta: bad"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
