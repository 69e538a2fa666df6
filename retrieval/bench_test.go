package retrieval

import (
	"fmt"
	"testing"
)

// BenchmarkSearch runs the TAT-QA dev questions, in turn, against an
// in-memory index of the 278 dev contexts with the default options (top
// 10 hits, documents loaded).
func BenchmarkSearch(b *testing.B) {
	data := loadTATQA(b)
	ix := tatqaIndex(b, data)
	ctx := b.Context()
	i := 0
	for b.Loop() {
		q := data.Questions[i%len(data.Questions)]
		i++
		if _, err := ix.Search(ctx, Query{Text: q.Text}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchFile is BenchmarkSearch on an index file, with searches
// run in parallel.
func BenchmarkSearchFile(b *testing.B) {
	data := loadTATQA(b)
	ix, err := Open(b.Context(), b.TempDir()+"/tatqa.db", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Add(b.Context(), data.Documents...); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			q := data.Questions[i%len(data.Questions)]
			i++
			if _, err := ix.Search(ctx, Query{Text: q.Text}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdd adds the 278 TAT-QA dev contexts (about 0.6 MB of text)
// to an in-memory index in one call, under new IDs each time; it reports
// the time per document too.
func BenchmarkAdd(b *testing.B) {
	data := loadTATQA(b)
	ix := openMem(b, nil)
	ctx := b.Context()
	docs := make([]Document, len(data.Documents))
	n := 0
	for b.Loop() {
		for i, d := range data.Documents {
			d.ID = fmt.Sprintf("%s/%d", d.ID, n)
			docs[i] = d
		}
		n++
		if err := ix.Add(ctx, docs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*len(docs)), "ns/doc")
}
