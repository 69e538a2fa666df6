package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/llm/llmtest"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/searchtest"
)

const esWF = `
workflow Find {
  nodes {
    node find {
      type: TOOL
      tool: "es_search"
      inputs {
        index: "shipments"
        body: {query: {bool: {filter: [{term: {carrier: "Maersk"}}]}}, sort: [{weight_kg: "desc"}], size: 1}
      }
      outputs {
        total: Int
        hits: List[Object]
      }
    }
  }
  initial: find
  finals: [ find ]
}
`

// The es_search tool runs a query-DSL body on the embedded Bleve indexes of
// --es bleve:DIR.
func TestESSearchToolOnBleve(t *testing.T) {
	dir := t.TempDir()
	b, err := blevesearch.New(blevesearch.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	searchtest.LoadShipments(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(t.TempDir(), "find.wf")
	if err := os.WriteFile(wf, []byte(esWF), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weft(t, []string{"run", wf, "--es", "bleve:" + dir, "--json"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, `"total": 2`) || !strings.Contains(r.stdout, `"weight_kg": 5000`) || strings.Contains(r.stdout, "1200") {
		t.Errorf("stdout = %s", r.stdout)
	}
	r = weft(t, []string{"run", wf})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "node find calls the es_search tool, which needs --es URL|bleve:DIR") {
		t.Errorf("stderr = %q", r.stderr)
	}
}

// With --embed, the retrieve tool embeds the documents and the query
// through the embedding model and searches by BM25 and vectors.
func TestRetrieveHybridWithEmbed(t *testing.T) {
	docs := datadir.Require(t, "tatqa/tatqa_dataset_dev.json")
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	getenv := func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.BaseURL()
		}
		return ""
	}
	wf := filepath.Join(t.TempDir(), "find.wf")
	if err := os.WriteFile(wf, []byte(retrieveWF), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weft(t, []string{"run", wf, "--docs", docs, "--embed", "ollama:fake-embed", "--input", "What is the amount of total sales in 2019?", "--json"},
		func(e *env) { e.getenv = getenv })
	r.wantCode(t, 0)
	var res struct {
		Outputs struct{ Sources []string } `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Outputs.Sources) != 5 {
		t.Fatalf("sources = %v, %v: want 5\n%s", res.Outputs.Sources, err, r.stdout)
	}
	// The fake embedder's hashed bag of words is no semantic model, so
	// the ranking is not checked here: only that both halves ran.
	plain := weft(t, []string{"run", wf, "--docs", docs, "--input", "What is the amount of total sales in 2019?", "--json"})
	plain.wantCode(t, 0)
	if plain.stdout == r.stdout {
		t.Error("the hybrid search ranked exactly as BM25 alone")
	}
	texts := 0
	for _, req := range srv.Requests() {
		if req.Embed != nil {
			texts += len(req.Embed.Input)
		}
	}
	if texts != 278+1 {
		t.Errorf("the embedder was given %d texts, want the 278 contexts and the query", texts)
	}
}

const retrieveWF = `
workflow Find {
  nodes {
    node find {
      type: TOOL
      tool: "retrieve"
      inputs {
        query: input_text
      }
      outputs {
        chunks: List[String]
        sources: List[String]
      }
    }
  }
  initial: find
  finals: [ find ]
}
`
