package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/memory"
)

// fixture is a server over an in-memory store serving testdata/approval.wf.
type fixture struct {
	t   *testing.T
	srv *server.Server
	ts  *httptest.Server
	st  store.Store
	svc *service.Service
	wf  *service.Workflow
}

func newFixture(t *testing.T, edit func(*server.Options)) *fixture {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, svc, st, wf, edit)
}

// serve serves wf of svc over st.
func serve(t *testing.T, svc *service.Service, st store.Store, wf *service.Workflow, edit func(*server.Options)) *fixture {
	t.Helper()
	opts := server.Options{Service: svc, Store: st, Assistants: []server.Assistant{{Workflow: wf}}}
	if edit != nil {
		edit(&opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return &fixture{t: t, srv: srv, ts: ts, st: st, svc: svc, wf: wf}
}

// do sends a request and returns the status and the body.
func (f *fixture) do(method, path, body string, hdr ...string) (int, string) {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, r)
	if err != nil {
		f.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// json sends a request, checks the status and decodes the body.
func (f *fixture) json(method, path, body string, want int, out any) {
	f.t.Helper()
	code, b := f.do(method, path, body)
	if code != want {
		f.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, code, want, b)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(b), out); err != nil {
			f.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

func TestOkAndInfo(t *testing.T) {
	f := newFixture(t, nil)
	code, body := f.do("GET", "/ok", "")
	if code != 200 || strings.TrimSpace(body) != `{"ok":true}` {
		t.Fatalf("GET /ok = %d %s", code, body)
	}
	var info map[string]any
	f.json("GET", "/info", "", 200, &info)
	if info["version"] != "weft" || info["flags"] == nil {
		t.Fatalf("GET /info = %v", info)
	}
	f = newFixture(t, func(o *server.Options) { o.Version = "weft v1.2.3" })
	f.json("GET", "/info", "", 200, &info)
	if info["version"] != "weft v1.2.3" {
		t.Fatalf("GET /info with a version = %v", info)
	}
}

func TestAssistants(t *testing.T) {
	f := newFixture(t, nil)
	wantID := server.AssistantID("Approval")
	var list []map[string]any
	f.json("POST", "/assistants/search", `{"graph_id":"Approval"}`, 200, &list)
	if len(list) != 1 || list[0]["assistant_id"] != wantID || list[0]["graph_id"] != "Approval" || list[0]["name"] != "Approval" {
		t.Fatalf("search = %v", list)
	}
	if list[0]["description"] != "Draft, review by a person, publish." {
		t.Errorf("description = %v", list[0]["description"])
	}
	f.json("POST", "/assistants/search", `{"graph_id":"Other"}`, 200, &list)
	if len(list) != 0 {
		t.Fatalf("search of another graph = %v", list)
	}
	var n int
	f.json("POST", "/assistants/count", `{}`, 200, &n)
	if n != 1 {
		t.Fatalf("count = %d", n)
	}
	for _, id := range []string{wantID, "Approval"} {
		var a map[string]any
		f.json("GET", "/assistants/"+id, "", 200, &a)
		if a["assistant_id"] != wantID {
			t.Fatalf("GET /assistants/%s = %v", id, a)
		}
	}
	code, body := f.do("GET", "/assistants/nope", "")
	if code != 404 || !strings.Contains(body, `"detail":"assistant nope not found"`) {
		t.Fatalf("unknown assistant: %d %s", code, body)
	}
}

// The id LangGraph's server gives a graph's default assistant.
func TestAssistantIDIsLangGraphs(t *testing.T) {
	// uuid5(NAMESPACE_GRAPH, "agent"), as langgraph_api computes it.
	if got, want := server.AssistantID("agent"), "fe096781-5601-53d2-b2f6-0d3403f7e9ca"; got != want {
		t.Fatalf("AssistantID(agent) = %s, want %s", got, want)
	}
}

func TestAssistantGraph(t *testing.T) {
	f := newFixture(t, nil)
	var g server.Graph
	f.json("GET", "/assistants/Approval/graph", "", 200, &g)
	var ids []string
	for _, n := range g.Nodes {
		ids = append(ids, n.ID)
	}
	if got := strings.Join(ids, " "); got != "__start__ draft review publish __end__" {
		t.Fatalf("nodes = %s", got)
	}
	var edges []string
	for _, e := range g.Edges {
		s := e.Source + ">" + e.Target
		if e.Conditional {
			s += "?"
		}
		edges = append(edges, s)
	}
	if got := strings.Join(edges, " "); got != "draft>review review>review? review>publish? __start__>draft publish>__end__" {
		t.Fatalf("edges = %s", got)
	}
}

func TestAssistantSchemas(t *testing.T) {
	f := newFixture(t, nil)
	var sc struct {
		GraphID string         `json:"graph_id"`
		Input   map[string]any `json:"input_schema"`
		State   map[string]any `json:"state_schema"`
	}
	f.json("GET", "/assistants/Approval/schemas", "", 200, &sc)
	if sc.GraphID != "Approval" {
		t.Fatalf("graph_id = %q", sc.GraphID)
	}
	props := sc.State["properties"].(map[string]any)
	review, _ := json.Marshal(props["review"])
	if string(review) != `{"properties":{"verdict":{"enum":["yes","no"],"type":"string"}},"type":"object"}` {
		t.Errorf("state.review = %s", review)
	}
	rounds, _ := json.Marshal(props["rounds"])
	if string(rounds) != `{"type":"integer"}` {
		t.Errorf("state.rounds = %s", rounds)
	}
	in := sc.Input["properties"].(map[string]any)
	if in["input_text"] == nil || in["rounds"] == nil || in["messages"] == nil {
		t.Errorf("input properties = %v", in)
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, func(o *server.Options) { o.MaxBody = 64 })
	for _, c := range []struct {
		body string
		code int
		want string
	}{
		{`{"graph_id":`, 422, "malformed JSON"},
		{`{"limit":"ten"}`, 422, `$.limit: expected a number, found a JSON string`},
		{`{"offset":-1}`, 422, `$.offset: must not be negative`},
		{`{"graph_id":"` + strings.Repeat("x", 100) + `"}`, 413, "request body over 64 bytes"},
	} {
		code, body := f.do("POST", "/assistants/search", c.body)
		var e struct{ Detail string }
		_ = json.Unmarshal([]byte(body), &e)
		if code != c.code || !strings.Contains(e.Detail, c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.body, code, body, c.code, c.want)
		}
	}
	code, body := f.do("GET", "/no/such/path", "")
	if code != 404 {
		t.Errorf("unknown path: %d %s", code, body)
	}
}

func TestAPIKey(t *testing.T) {
	f := newFixture(t, func(o *server.Options) { o.APIKey = "s3cret" })
	if code, _ := f.do("GET", "/ok", ""); code != 200 {
		t.Fatalf("/ok needs no key: %d", code)
	}
	if code, body := f.do("GET", "/info", ""); code != 401 || strings.Contains(body, "s3cret") {
		t.Fatalf("no key: %d %s", code, body)
	}
	if code, _ := f.do("GET", "/info", "", "X-Api-Key", "wrong"); code != 401 {
		t.Fatalf("wrong key: %d", code)
	}
	if code, _ := f.do("GET", "/info", "", "x-api-key", "s3cret"); code != 200 {
		t.Fatalf("right key: %d", code)
	}
}

func TestCORS(t *testing.T) {
	f := newFixture(t, func(o *server.Options) { o.CORSOrigins = []string{"http://ui.example"} })
	req, _ := http.NewRequest("OPTIONS", f.ts.URL+"/threads", nil)
	req.Header.Set("Origin", "http://ui.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://ui.example" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ = http.NewRequest("GET", f.ts.URL+"/ok", nil)
	req.Header.Set("Origin", "http://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin allowed: %v", resp.Header)
	}
}
