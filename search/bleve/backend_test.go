package blevesearch_test

import (
	"testing"

	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/searchtest"
)

func newMem(t *testing.T) search.Backend {
	t.Helper()
	b, err := blevesearch.New(blevesearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestConformanceMemory(t *testing.T) {
	searchtest.Run(t, newMem)
}

func TestConformanceDir(t *testing.T) {
	dir := t.TempDir()
	searchtest.Run(t, func(t *testing.T) search.Backend {
		b, err := blevesearch.New(blevesearch.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}
