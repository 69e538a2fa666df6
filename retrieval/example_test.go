package retrieval_test

import (
	"context"
	"fmt"
	"log"

	"github.com/weftlang/weft/retrieval"
)

func Example() {
	ctx := context.Background()
	ix, err := retrieval.Open(ctx, ":memory:", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	err = ix.Add(ctx,
		retrieval.Document{ID: "acme-2019", Text: "Acme's total sales were $1,496.5 million in 2019.", Meta: map[string]string{"company": "acme", "year": "2019"}},
		retrieval.Document{ID: "acme-2018", Text: "Acme's total sales were $1,202.9 million in 2018.", Meta: map[string]string{"company": "acme", "year": "2018"}},
		retrieval.Document{ID: "globex-2019", Text: "Globex's interest cost rose in 2019.", Meta: map[string]string{"company": "globex", "year": "2019"}},
	)
	if err != nil {
		log.Fatal(err)
	}
	// Any text is a valid query: quotes and operators are just words.
	hits, err := ix.Search(ctx, retrieval.Query{
		Text:   `What were Acme's "total sales" (2019)?`,
		K:      3,
		Filter: map[string][]string{"company": {"acme"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.Rank, h.ID)
	}
	// Output:
	// 1 acme-2019
	// 2 acme-2018
}
