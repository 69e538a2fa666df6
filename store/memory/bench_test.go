package memory

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/weftlang/weft/store"
)

// BenchmarkAppend appends one ~300-byte record per op to one thread.
func BenchmarkAppend(b *testing.B) {
	s := New()
	defer s.Close()
	ctx := b.Context()
	if err := s.CreateThread(ctx, &store.Thread{ID: "t"}); err != nil {
		b.Fatal(err)
	}
	data := fmt.Appendf(nil, `{"node":"step","inputs":{"query":"%s"},"outputs":{"answer":"%s"},"vars":{"turn":1},"route":"next"}`,
		bytes.Repeat([]byte("q"), 100), bytes.Repeat([]byte("a"), 100))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := range b.N {
		r := &store.Record{ThreadID: "t", RunID: "r", Seq: int64(i + 1), Step: i + 1, Kind: store.Step, Data: data}
		if err := s.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "data-B/record")
}
