package builtin_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/builtin"
	"github.com/weftlang/weft/component/componenttest"
	"github.com/weftlang/weft/internal/pgtest"
	"github.com/weftlang/weft/search"
	"github.com/weftlang/weft/sqltool"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/tools"
)

// call runs the tool name of p with args and decodes its result into out.
func call(t *testing.T, p component.ToolProvider, name, args string, out any) error {
	t.Helper()
	ts, err := p.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range ts {
		if tl.Def.Name == name {
			res, err := tl.Call(context.Background(), json.RawMessage(args))
			if err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(res), out); err != nil {
				t.Fatal(err)
			}
			return nil
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestSQLToolOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE fruit(name TEXT, price REAL); INSERT INTO fruit VALUES ('apple', 1.5), ('pear', 2.25)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	x, err := registry(t).Load(context.Background(), component.Spec{ID: "tool.sql", Config: json.RawMessage(`{"db":"` + path + `","max_rows":1}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.(interface{ Close() error }).Close()
	var res tools.SQLResult
	if err := call(t, x.(component.ToolProvider), tools.SQLQuery, `{"sql":"SELECT name, price FROM fruit ORDER BY price DESC"}`, &res); err != nil {
		t.Fatal(err)
	}
	// max_rows reached the database options: one row, marked truncated.
	if len(res.Rows) != 1 || res.Rows[0][0] != "pear" || res.Rows[0][1] != 2.25 || !res.Truncated {
		t.Errorf("sql_query = %+v, want pear alone, truncated", res)
	}
}

func TestESToolOnBleve(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	r := registry(t)
	// Fill an index through a search.bleve component...
	x, err := r.Load(ctx, component.Spec{ID: "search.bleve", Config: json.RawMessage(`{"dir":"` + dir + `"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := x.(component.SearchProvider).Backend()
	im := b.(search.IndexManager)
	if err := im.CreateIndex(ctx, "boats", search.Schema{Fields: map[string]search.Field{"kind": {Type: search.Keyword}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Index(ctx, "boats", []search.Doc{{ID: "b1", Source: json.RawMessage(`{"kind":"ferry"}`)}, {ID: "b2", Source: json.RawMessage(`{"kind":"tug"}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := x.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	// ...then search it with tool.es, given the backend both ways.
	for _, cfg := range []string{
		`{"backend":"bleve:` + dir + `"}`,
		`{"search":{"id":"search.bleve","config":{"dir":"` + dir + `"}}}`,
	} {
		x, err := r.Load(ctx, component.Spec{ID: "tool.es", Config: json.RawMessage(cfg)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var res tools.ESResult
		if err := call(t, x.(component.ToolProvider), tools.ESSearch, `{"index":"boats","body":{"query":{"term":{"kind":"tug"}}}}`, &res); err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if res.Total != 1 || len(res.IDs) != 1 || res.IDs[0] != "b2" {
			t.Errorf("%s: es_search = %+v, want b2 alone", cfg, res)
		}
		if err := x.(interface{ Close() error }).Close(); err != nil {
			t.Errorf("%s: Close = %v", cfg, err)
		}
	}
}

// TestPostgres runs store.postgres's conformance on a throwaway cluster
// (skipped without the server binaries), with the password given by
// reference, and checks tool.sql's unsafe-role switch.
func TestPostgres(t *testing.T) {
	db := pgtest.New(t)
	u, err := url.Parse(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	if pw, ok := u.User.Password(); ok {
		vars["TEST_PG_PASSWORD"] = pw
		u.User = url.User(u.User.Username())
	}
	var mu sync.Mutex
	var warnings []string
	e := &component.Env{
		Getenv: func(k string) string { return vars[k] },
		Warn:   func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() },
	}
	cfg := `{"dsn":"` + u.String() + `"}`
	if vars["TEST_PG_PASSWORD"] != "" {
		cfg = `{"dsn":"` + u.String() + `","password":{"env":"TEST_PG_PASSWORD"}}`
	}
	r := registry(t)
	componenttest.Run(t, r, "store.postgres", json.RawMessage(cfg), componenttest.WithEnv(e),
		componenttest.Invalid(`{"dsn":"postgres://u:literal@h/db"}`, component.ErrProvision),
		componenttest.Invalid(`{"dsn":"postgres://u@h/db","password":{"env":"UNSET_PW"}}`, component.ErrSecret))

	x, err := r.Load(context.Background(), component.Spec{ID: "store.postgres", Config: json.RawMessage(cfg)}, e)
	if err != nil {
		t.Fatal(err)
	}
	st := x.(component.StoreProvider).Store()
	if err := st.CreateThread(context.Background(), &store.Thread{ID: "t-pg", Workflow: "w"}); err != nil {
		t.Fatal(err)
	}
	if th, err := st.Thread(context.Background(), "t-pg"); err != nil || th.Workflow != "w" {
		t.Errorf("Thread = %+v, %v", th, err)
	}
	x.(interface{ Close() error }).Close()

	// The test role may write: tool.sql refuses it unless allowed.
	sqlCfg := strings.Replace(cfg, `"dsn"`, `"db"`, 1)
	x, err = r.Load(context.Background(), component.Spec{ID: "tool.sql", Config: json.RawMessage(sqlCfg)}, e)
	if err != nil {
		t.Fatal(err)
	}
	var res tools.SQLResult
	err = call(t, x.(component.ToolProvider), tools.SQLQuery, `{"sql":"SELECT 1 AS one"}`, &res)
	x.(interface{ Close() error }).Close()
	if !errors.Is(err, sqltool.ErrUnsafeRole) {
		t.Fatalf("sql_query as a writing role = %v, want ErrUnsafeRole", err)
	}
	allowed := strings.Replace(sqlCfg, `{`, `{"allow_unsafe_role":true,`, 1)
	x, err = r.Load(context.Background(), component.Spec{ID: "tool.sql", Config: json.RawMessage(allowed)}, e)
	if err != nil {
		t.Fatal(err)
	}
	defer x.(interface{ Close() error }).Close()
	if err := call(t, x.(component.ToolProvider), tools.SQLQuery, `{"sql":"SELECT 1 AS one"}`, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != float64(1) {
		t.Errorf("sql_query = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) == 0 || !strings.HasPrefix(warnings[0], "tool.sql: ") {
		t.Errorf("warnings = %q, want the role's, prefixed with tool.sql", warnings)
	}
}

// TestToolsCheckTheirResources: the tool components are
// component.Checkers that report what they work on and is not there (a
// file deleted after Provision included), each as a *ResourceError whose
// cause errors.Is finds, and nothing for a resource that is fine or left
// to its first connection.
func TestToolsCheckTheirResources(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs.json")
	if err := os.WriteFile(docs, []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	load := func(id, config string) component.Checker {
		t.Helper()
		x, err := registry(t).Load(context.Background(), component.Spec{ID: id, Config: json.RawMessage(config)}, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", id, config, err)
		}
		t.Cleanup(func() { component.CloseAll(x) })
		c, ok := x.(component.Checker)
		if !ok {
			t.Fatalf("%s (%T) is not a component.Checker", id, x)
		}
		return c
	}
	retrieve := load("tool.retrieve", `{"docs":"`+docs+`"}`)
	for _, c := range []struct {
		name  string
		check component.Checker
		field string
		cause error
	}{
		{"sql file missing", load("tool.sql", `{"db":"`+missing+`.sqlite"}`), "db", fs.ErrNotExist},
		{"es not a URL", load("tool.es", `{"backend":"localhost:9200"}`), "backend", builtin.ErrNotURL},
		{"es bleve dir missing", load("tool.es", `{"backend":"bleve:`+missing+`"}`), "backend", fs.ErrNotExist},
	} {
		err := c.check.Check(context.Background())
		var re *builtin.ResourceError
		if !errors.As(err, &re) || re.Field != c.field || !errors.Is(err, c.cause) {
			t.Errorf("%s: Check = %v; want a *ResourceError of %s that errors.Is finds %v", c.name, err, c.field, c.cause)
		}
	}
	for _, c := range []struct {
		name  string
		check component.Checker
	}{
		{"docs there", retrieve},
		{"sql postgres URL", load("tool.sql", `{"db":"postgres://u@localhost:1/db"}`)},
		{"es URL", load("tool.es", `{"backend":"http://localhost:9200"}`)},
	} {
		if err := c.check.Check(context.Background()); err != nil {
			t.Errorf("%s: Check = %v, want nil", c.name, err)
		}
	}
	// The documents go away after Provision: Check sees it.
	if err := os.Remove(docs); err != nil {
		t.Fatal(err)
	}
	err := retrieve.Check(context.Background())
	var re *builtin.ResourceError
	if !errors.As(err, &re) || re.Field != "docs" || re.Name != docs || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("docs removed: Check = %v; want docs %s not there", err, docs)
	}
}
