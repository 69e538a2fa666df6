package componenttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/weftlang/weft/component"
	"github.com/weftlang/weft/component/componenttest"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
)

// recorder is a testing.TB that keeps the failures Run reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(f, args...))
}
func (r *recorder) Fatalf(f string, args ...any) { r.Errorf(f, args...); runtime.Goexit() }

func run(t *testing.T, reg *component.Registry, id, valid string) []string {
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		componenttest.Run(rec, reg, id, json.RawMessage(valid))
	}()
	<-done
	return rec.errs
}

// good is a search.* module that keeps the contract.
type good struct {
	Dir string `json:"dir"`
	b   *blevesearch.Backend
}

func (g *good) Provision(context.Context, *component.Context) error {
	b, err := blevesearch.New(blevesearch.Options{})
	g.b = b
	return err
}
func (g *good) Backend() search.Backend { return g.b }
func (g *good) Close() error {
	if g.b == nil {
		return nil
	}
	err := g.b.Close()
	g.b = nil
	return err
}

// shared is a search.* module whose New returns one value every time.
var sharedValue = &good{}

// twiceClosed fails a second Close.
type twiceClosed struct {
	good
	closed bool
}

func (c *twiceClosed) Close() error {
	if c.closed {
		return fmt.Errorf("already closed")
	}
	c.closed = true
	return c.good.Close()
}

func TestRunReportsBrokenModules(t *testing.T) {
	reg := component.NewRegistry()
	for _, m := range []component.Module{
		{ID: "search.good", New: func() component.Component { return &good{} }, Doc: "keeps the contract"},
		{ID: "search.shared", New: func() component.Component { return sharedValue }, Doc: "one value for all"},
		{ID: "search.twice", New: func() component.Component { return &twiceClosed{} }, Doc: "fails a second Close"},
		{ID: "search.nodoc", New: func() component.Component { return &good{} }},
	} {
		if err := reg.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	if errs := run(t, reg, "search.good", `{"dir":"x"}`); len(errs) != 0 {
		t.Errorf("search.good: %q, want no failures", errs)
	}
	for id, want := range map[string]string{
		"search.shared": "New returned the same value twice",
		"search.twice":  "a second Close = already closed",
		"search.nodoc":  "the module has no Doc",
		"search.absent": "not registered",
	} {
		errs := run(t, reg, id, `{"dir":"x"}`)
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("%s: failures %q, want one saying %q", id, errs, want)
		}
	}
}
