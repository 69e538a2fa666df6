package adaptiverag

import (
	"context"
	"testing"

	"github.com/weftlang/weft/internal/datadir"
)

// The FTS5 index behind IndexRetriever honours the agent's filters and
// finds an empty result for an unknown company, which the graph's
// fallback then widens.
func TestIndexRetrieverFilters(t *testing.T) {
	ctx := context.Background()
	ix, err := OpenIndex(ctx, "testdata/docs.json")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := IndexRetriever{Index: ix}
	all, err := r.Search(ctx, "revenue", Filters{}, 20)
	if err != nil || len(all) == 0 {
		t.Fatalf("unfiltered: %d hits, %v", len(all), err)
	}
	company := all[0].Company
	if company == "" {
		t.Fatalf("the first hit has no company: %+v", all[0])
	}
	only, err := r.Search(ctx, "revenue", Filters{Company: company}, 20)
	if err != nil || len(only) == 0 || len(only) > len(all) {
		t.Fatalf("filtered: %d hits, %v", len(only), err)
	}
	for _, p := range only {
		if p.Company != company {
			t.Errorf("filter %q let through %+v", company, p)
		}
	}
	none, err := r.Search(ctx, "revenue", Filters{Company: "Nonexistent Corp"}, 20)
	if err != nil || len(none) != 0 {
		t.Errorf("unknown company: %d hits, %v", len(none), err)
	}
}

func TestOpenIndexReadsTATQA(t *testing.T) {
	path := datadir.Require(t, "tatqa/tatqa_dataset_dev.json")
	ctx := context.Background()
	ix, err := OpenIndex(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ps, err := IndexRetriever{Index: ix}.Search(ctx, "What is the amount of total sales in 2019?", Filters{Year: 2019}, 3)
	if err != nil || len(ps) == 0 {
		t.Fatalf("%d hits, %v", len(ps), err)
	}
	if ps[0].Year != 2019 || ps[0].ID != "3ffd9053-a45d-491c-957a-1b2fa0af0570" {
		t.Errorf("first hit = %s (year %d), want the sales-by-contract-type table of 2019", ps[0].ID, ps[0].Year)
	}
}
