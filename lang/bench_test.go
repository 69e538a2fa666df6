package lang

import (
	"os"
	"testing"
)

func BenchmarkParseSeed(b *testing.B) {
	src, err := os.ReadFile("testdata/intentqa.wf")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ds := ParseFile("intentqa.wf", src); len(ds) > 0 {
			b.Fatal(ds)
		}
	}
}

func BenchmarkFormatSeed(b *testing.B) {
	src, err := os.ReadFile("testdata/intentqa.wf")
	if err != nil {
		b.Fatal(err)
	}
	f, _ := ParseFile("intentqa.wf", src)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Format(f)
	}
}
