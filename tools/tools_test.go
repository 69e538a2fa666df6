package tools_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/llm/tool"
	"github.com/weftlang/weft/retrieval"
	blevesearch "github.com/weftlang/weft/search/bleve"
	"github.com/weftlang/weft/search/searchtest"
	"github.com/weftlang/weft/tools"
)

// sampleDocs are the in-repository sample reports of examples/intentqa.
var sampleDocs = filepath.Join("..", "examples", "intentqa", "docs", "reports.json")

func newSet(t *testing.T, cfg tools.Config) *tools.Set {
	t.Helper()
	s, err := tools.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// call runs the tool name of s with args and decodes its JSON result into out.
func call(t *testing.T, s *tools.Set, name, args string, out any) error {
	t.Helper()
	reg, err := s.Registry()
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s in %v", name, reg.Names())
	}
	content, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(content), out); err != nil {
		t.Fatalf("%s returned %s: %v", name, content, err)
	}
	return nil
}

func TestRetrieveSampleDocs(t *testing.T) {
	s := newSet(t, tools.Config{Docs: sampleDocs})
	var r tools.RetrieveResult
	if err := call(t, s, tools.Retrieve, `{"query":"battery-electric ferry delivered","k":2}`, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Chunks) != 2 || len(r.Sources) != 2 {
		t.Fatalf("got %d chunks, %d sources, want 2 each: %+v", len(r.Chunks), len(r.Sources), r)
	}
	if !strings.HasPrefix(r.Sources[0], "halvorsen-marine-fleet") || !strings.Contains(r.Chunks[0], "MS Lundeby") {
		t.Errorf("best passage = %s: %q, want Halvorsen Marine's fleet and MS Lundeby", r.Sources[0], r.Chunks[0])
	}
	// Without k, DefaultRetrieveK passages.
	if err := call(t, s, tools.Retrieve, `{"query":"revenue"}`, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Chunks) != tools.DefaultRetrieveK {
		t.Errorf("got %d passages without k, want %d", len(r.Chunks), tools.DefaultRetrieveK)
	}
}

// The descriptions the model sees name no domain, and the arguments'
// descriptions reach the schema.
func TestDescriptionsDomainNeutral(t *testing.T) {
	s := newSet(t, tools.Config{})
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Def.Name)
		for _, text := range []string{tl.Def.Description, string(tl.Def.Parameters)} {
			for _, word := range []string{"financial", "report", "fiscal"} {
				if strings.Contains(strings.ToLower(text), word) {
					t.Errorf("%s: %q names a domain (%s)", tl.Def.Name, text, word)
				}
			}
		}
	}
	if !slices.Equal(names, tools.Names()) {
		t.Errorf("tools = %v, want %v", names, tools.Names())
	}
	want := map[string]string{
		tools.Retrieve: `"query":{"description":"what to search for","type":"string"}`,
		tools.SQLQuery: `"sql":{"description":"one read-only SELECT statement","type":"string"}`,
		tools.ESSearch: `"index":{"description":"the index to search","type":"string"}`,
	}
	for _, tl := range s.Tools() {
		if w, ok := want[tl.Def.Name]; ok && !strings.Contains(string(tl.Def.Parameters), w) {
			t.Errorf("%s parameters = %s, want %s", tl.Def.Name, tl.Def.Parameters, w)
		}
	}
}

// A tool without its resource fails its calls with a ResourceError that
// wraps ErrNotConfigured, and says nothing of any command's flags.
func TestNotConfigured(t *testing.T) {
	s := newSet(t, tools.Config{})
	for _, c := range []struct {
		tool, args string
		res        tools.Resource
	}{
		{tools.Retrieve, `{"query":"x"}`, tools.Documents},
		{tools.SQLQuery, `{"sql":"SELECT 1"}`, tools.Database},
		{tools.SQLSchema, `{}`, tools.Database},
		{tools.ESSearch, `{"index":"i","body":{}}`, tools.SearchBackend},
	} {
		if s.Configured(c.tool) {
			t.Errorf("Configured(%s) = true", c.tool)
		}
		err := call(t, s, c.tool, c.args, new(any))
		var re *tools.ResourceError
		if !errors.Is(err, tools.ErrNotConfigured) || !errors.As(err, &re) || re.Tool != c.tool || re.Resource != c.res {
			t.Errorf("%s: err = %#v, want a ResourceError{%s, %s} wrapping ErrNotConfigured", c.tool, err, c.tool, c.res)
			continue
		}
		if want := c.tool + ": " + string(c.res) + ": not configured"; err.Error() != want {
			t.Errorf("%s: %q, want %q", c.tool, err, want)
		}
	}
	if !s.Configured("http_request") {
		t.Error("Configured(http_request) = false; it is no built-in tool of the set")
	}
}

func TestRetrieveMissingDocs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone.json")
	s := newSet(t, tools.Config{Docs: missing})
	if !s.Configured(tools.Retrieve) {
		t.Error("Configured(retrieve) = false")
	}
	err := call(t, s, tools.Retrieve, `{"query":"x"}`, new(any))
	var re *tools.ResourceError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &re) || re.Resource != tools.Documents {
		t.Errorf("err = %v, want a documents ResourceError wrapping fs.ErrNotExist", err)
	}
}

func TestSQLTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL);
		INSERT INTO item VALUES (1, 'kettle', 24.5), (2, 'toaster', NULL);`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := newSet(t, tools.Config{DB: path})
	var q tools.SQLResult
	if err := call(t, s, tools.SQLQuery, `{"sql":"SELECT name, price FROM item ORDER BY id"}`, &q); err != nil {
		t.Fatal(err)
	}
	if want := "name | price\nkettle | 24.5\ntoaster | NULL"; q.Text != want || q.RowCount != 2 || q.Truncated {
		t.Errorf("sql_query = %+v, want text %q and 2 rows", q, want)
	}
	if err := call(t, s, tools.SQLQuery, `{"sql":"DELETE FROM item"}`, &q); err == nil {
		t.Error("sql_query ran a DELETE")
	}
	var sc tools.SchemaResult
	if err := call(t, s, tools.SQLSchema, `{}`, &sc); err != nil {
		t.Fatal(err)
	}
	if sc.Dialect != "sqlite" || !strings.Contains(sc.Schema, "item") || !strings.Contains(sc.Schema, "price") {
		t.Errorf("sql_schema = %+v", sc)
	}
}

func TestESSearchOnBleve(t *testing.T) {
	dir := t.TempDir()
	b, err := blevesearch.New(blevesearch.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	searchtest.LoadShipments(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	s := newSet(t, tools.Config{Search: "bleve:" + dir})
	var r tools.ESResult
	err = call(t, s, tools.ESSearch, `{"index":"shipments","body":{"query":{"bool":{"filter":[{"term":{"carrier":"Maersk"}}]}},"sort":[{"weight_kg":"desc"}],"size":1}}`, &r)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 2 || len(r.Hits) != 1 || !slices.Equal(r.IDs, []string{"c"}) || !strings.Contains(string(r.Hits[0]), `"weight_kg":5000`) {
		t.Errorf("es_search = %+v", r)
	}

	// A missing directory is a ResourceError of the search backend.
	s2 := newSet(t, tools.Config{Search: "bleve:" + filepath.Join(dir, "gone")})
	err = call(t, s2, tools.ESSearch, `{"index":"shipments","body":{}}`, new(any))
	var re *tools.ResourceError
	if !errors.As(err, &re) || re.Resource != tools.SearchBackend || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want a search backend ResourceError wrapping fs.ErrNotExist", err)
	}
}

// After Close, a call fails with ErrClosed rather than opening anew.
func TestClosed(t *testing.T) {
	s := newSet(t, tools.Config{Docs: sampleDocs})
	var r tools.RetrieveResult
	if err := call(t, s, tools.Retrieve, `{"query":"ferry"}`, &r); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := call(t, s, tools.Retrieve, `{"query":"ferry"}`, &r); !errors.Is(err, tools.ErrClosed) {
		t.Errorf("retrieve after Close: %v, want ErrClosed", err)
	}
}

// The tools run concurrently, each resource opened once (run with -race).
func TestConcurrentCalls(t *testing.T) {
	s := newSet(t, tools.Config{Docs: sampleDocs})
	reg, err := s.Registry(tool.HTTP(nil, tool.HTTPOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := reg.Get(tools.Retrieve)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := tl.Call(context.Background(), json.RawMessage(`{"query":"ferry","k":1}`))
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// Config.IndexOptions is asked once, at the first call: with an embedder,
// retrieve embeds the documents and each query; its error is returned as
// it is.
func TestRetrieveIndexOptions(t *testing.T) {
	srv := llmtest.NewOllamaServer()
	defer srv.Close()
	asked := 0
	s := newSet(t, tools.Config{Docs: sampleDocs, IndexOptions: func() (*retrieval.Options, error) {
		asked++
		em, err := providers.OpenEmbedder("ollama:fake-embed", func(k string) string {
			if k == "OLLAMA_HOST" {
				return srv.BaseURL()
			}
			return ""
		})
		return &retrieval.Options{Embedder: em}, err
	}})
	var r tools.RetrieveResult
	for range 2 {
		if err := call(t, s, tools.Retrieve, `{"query":"ferry","k":1}`, &r); err != nil {
			t.Fatal(err)
		}
	}
	var inputs []string
	for _, req := range srv.Requests() {
		if req.Embed != nil {
			inputs = append(inputs, req.Embed.Input...)
		}
	}
	if asked != 1 || len(inputs) < 3 || inputs[len(inputs)-1] != "ferry" || inputs[len(inputs)-2] != "ferry" {
		t.Errorf("IndexOptions asked %d times, embedder given %q: want once, the documents then the query twice", asked, inputs)
	}

	boom := errors.New("no embedder")
	s2 := newSet(t, tools.Config{Docs: sampleDocs, IndexOptions: func() (*retrieval.Options, error) { return nil, boom }})
	if err := call(t, s2, tools.Retrieve, `{"query":"ferry"}`, &r); !errors.Is(err, boom) {
		t.Errorf("err = %v, want IndexOptions' error", err)
	}
}
