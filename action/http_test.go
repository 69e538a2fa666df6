package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
)

// httpCall makes the Call of a node with the given inputs (sorted by
// name) and declared outputs.
func httpCall(in map[string]flow.Value, outs ...flow.PlanOutput) *engine.Call {
	pn := &flow.PlanNode{Name: "n", Node: &flow.Node{Name: "n"}, Outputs: outs}
	c := &engine.Call{Node: pn, Outputs: make([]flow.Value, len(outs))}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		pn.Inputs = append(pn.Inputs, flow.PlanInput{Name: k})
		c.Inputs = append(c.Inputs, in[k])
	}
	return c
}

func out(name string, t flow.Type) flow.PlanOutput { return flow.PlanOutput{Name: name, Type: t} }

// bindHTTP binds an HTTP action with the given settings.
func bindHTTP(t *testing.T, client *http.Client, cfg map[string]flow.Value) *action.HTTPAction {
	t.Helper()
	a, err := action.NewHTTP(&flow.Binding{Name: "call_api", Type: flow.Tool, Config: cfg}, client)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func str(s string) flow.Value { return flow.StringValue(s) }

// seen is what a test server received.
type seen struct {
	mu      sync.Mutex
	method  string
	path    string // escaped
	query   string // raw
	header  http.Header
	body    string
	request int
}

func (s *seen) get() seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return seen{method: s.method, path: s.path, query: s.query, header: s.header, body: s.body, request: s.request}
}

// recorder returns a server that records each request and answers with
// contentType and reply.
func recorder(t *testing.T, contentType, reply string) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.method, s.path, s.query, s.header, s.body = r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)
		s.request++
		s.mu.Unlock()
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func TestHTTPTemplatedURL(t *testing.T) {
	srv, got := recorder(t, "application/json", `{"name": "Ada"}`)
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{
		"url": str(srv.URL + "/users/{{id}}/{{org.slug}}?q={{q}}&n={{n}}"),
	})
	c := httpCall(map[string]flow.Value{
		"id":  str("a b/c"),
		"org": flow.ObjectValue(map[string]flow.Value{"slug": str("R&D 100%")}),
		"q":   str("x&y=z?#"),
		"n":   flow.IntValue(3),
	}, out("name", flow.TString))
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	s := got.get()
	if s.method != http.MethodGet {
		t.Errorf("method = %s, want GET without a body", s.method)
	}
	if s.path != "/users/a%20b%2Fc/R%26D%20100%25" {
		t.Errorf("path = %s", s.path)
	}
	if s.query != "q=x%26y%3Dz%3F%23&n=3" {
		t.Errorf("query = %s", s.query)
	}
	if s.body != "" || s.header.Get("Content-Type") != "" {
		t.Errorf("a GET sent a body %q (%s)", s.body, s.header.Get("Content-Type"))
	}
	if c.Outputs[0].Str() != "Ada" {
		t.Errorf("name = %v", c.Outputs[0])
	}
}

func TestHTTPPostsInputsAsJSON(t *testing.T) {
	srv, got := recorder(t, "application/json; charset=utf-8", `{"ok": true, "count": 3, "extra": [1]}`)
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL + "/orders"), "method": str("post")})
	c := httpCall(map[string]flow.Value{"id": flow.IntValue(7), "tags": flow.StringList("a", "<b>")},
		out("ok", flow.TBool), out("count", flow.TInt))
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	s := got.get()
	if s.method != http.MethodPost || s.header.Get("Content-Type") != "application/json" {
		t.Errorf("%s with Content-Type %q", s.method, s.header.Get("Content-Type"))
	}
	if s.body != `{"id":7,"tags":["a","<b>"]}` {
		t.Errorf("body = %s", s.body)
	}
	if !c.Outputs[0].Bool() || c.Outputs[1].Int() != 3 {
		t.Errorf("outputs = %v", c.Outputs)
	}
}

func TestHTTPBodyTemplateAndHeaders(t *testing.T) {
	srv, got := recorder(t, "text/plain", "done")
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{
		"url":  str(srv.URL + "/search"),
		"body": str(`{"query": {{json q}}}`),
		"headers": flow.ObjectValue(map[string]flow.Value{
			"authorization": str("Bearer {{token}}"),
			"X-Count":       flow.IntValue(2),
		}),
	})
	c := httpCall(map[string]flow.Value{"q": str(`say "hi"`), "token": str("s3cret")}, out("text", flow.TString))
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	s := got.get()
	if s.method != http.MethodPost {
		t.Errorf("method = %s, want POST with a body", s.method)
	}
	if s.body != `{"query": "say \"hi\""}` || s.header.Get("Content-Type") != "application/json" {
		t.Errorf("body = %s (%s)", s.body, s.header.Get("Content-Type"))
	}
	if s.header.Get("Authorization") != "Bearer s3cret" || s.header.Get("X-Count") != "2" {
		t.Errorf("headers = %v", s.header)
	}
	if c.Outputs[0].Str() != "done" {
		t.Errorf("text = %v", c.Outputs[0])
	}

	// A text body is text/plain; a header set in the binding wins.
	a = bindHTTP(t, srv.Client(), map[string]flow.Value{
		"url": str(srv.URL), "method": str("PUT"), "body": str("hello {{q}}"),
	})
	if err := a.Run(context.Background(), httpCall(map[string]flow.Value{"q": str("you")})); err != nil {
		t.Fatal(err)
	}
	if s := got.get(); s.method != http.MethodPut || s.body != "hello you" || !strings.HasPrefix(s.header.Get("Content-Type"), "text/plain") {
		t.Errorf("%s %q (%s)", s.method, s.body, s.header.Get("Content-Type"))
	}
	a = bindHTTP(t, srv.Client(), map[string]flow.Value{
		"url": str(srv.URL), "body": str("a,b"), "headers": flow.ObjectValue(map[string]flow.Value{"Content-Type": str("text/csv")}),
	})
	if err := a.Run(context.Background(), httpCall(nil)); err != nil {
		t.Fatal(err)
	}
	if ct := got.get().header.Get("Content-Type"); ct != "text/csv" {
		t.Errorf("Content-Type = %s", ct)
	}

	// A missing value is an error before any request.
	before := got.get().request
	a = bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL + "/{{id}}")})
	if err := a.Run(context.Background(), httpCall(nil)); err == nil || !strings.Contains(err.Error(), `no value for "id"`) {
		t.Errorf("missing url input: %v", err)
	}
	if got.get().request != before {
		t.Error("a request was sent without its url input")
	}
}

func TestHTTPIdempotencyKey(t *testing.T) {
	srv, got := recorder(t, "", "")
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL), "method": str("POST")})
	c := httpCall(map[string]flow.Value{"x": flow.IntValue(1)})
	c.Key = "th-1/run-2/3/4"
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if k := got.get().header.Values("Idempotency-Key"); len(k) != 1 || k[0] != "th-1/run-2/3/4" {
		t.Errorf("Idempotency-Key = %q", k)
	}
	// Again, as after a crash: the same key.
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if k := got.get().header.Get("Idempotency-Key"); k != "th-1/run-2/3/4" {
		t.Errorf("re-run Idempotency-Key = %q", k)
	}
	c.Key = ""
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if k, ok := got.get().header["Idempotency-Key"]; ok {
		t.Errorf("Idempotency-Key %q sent without a key", k)
	}
}

func TestHTTPOutputsDecoded(t *testing.T) {
	srv, _ := recorder(t, "application/json", `{"score": 2, "wait": "1m30s", "label": "qa", "rows": [{"a": 1}], "big": 12345678901234}`)
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL)})
	c := httpCall(nil, out("score", flow.TFloat), out("wait", flow.TDuration), out("label", flow.EnumOf("qa", "other")),
		out("rows", flow.ListOf(flow.TObject)), out("big", flow.TInt))
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if v := c.Outputs[0]; v.Kind() != flow.KindFloat || v.Float() != 2 {
		t.Errorf("score = %v (%s), want the Float 2", v, v.Kind())
	}
	if c.Outputs[1].Duration() != 90*time.Second || c.Outputs[2].Str() != "qa" || c.Outputs[4].Int() != 12345678901234 {
		t.Errorf("outputs = %v", c.Outputs)
	}
	if rows := c.Outputs[3].List(); len(rows) != 1 || rows[0].Object()["a"].Int() != 1 {
		t.Errorf("rows = %v", c.Outputs[3])
	}

	// A missing output is named; so is one of the wrong type.
	c = httpCall(nil, out("score", flow.TFloat), out("answer", flow.TString), out("why", flow.TString))
	err := a.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "no field for output answer, why") {
		t.Errorf("missing outputs: %v", err)
	}
	c = httpCall(nil, out("score", flow.TString), out("wait", flow.TDuration))
	var te *flow.TypeError
	if err := a.Run(context.Background(), c); !errors.As(err, &te) || !strings.Contains(err.Error(), "output score") {
		t.Errorf("mistyped output: %v", err)
	}
}

func TestHTTPSingleOutputWholeBody(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		out                     flow.PlanOutput
		want                    string // the output's JSON
	}{
		{"field", "application/json", `{"answer": 42, "other": 1}`, out("answer", flow.TInt), `42`},
		{"object without the field", "application/json", `{"a": 1}`, out("data", flow.TObject), `{"a":1}`},
		{"list", "application/json", `[1, 2]`, out("ids", flow.ListOf(flow.TInt)), `[1,2]`},
		{"text", "text/plain", "hello there\n", out("text", flow.TString), `"hello there\n"`},
		{"JSON string", "application/json", `"hi"`, out("text", flow.TString), `"hi"`},
		{"JSON as text", "application/json", `{"a": 1}`, out("text", flow.TString), `"{\"a\": 1}"`},
		{"unlabelled JSON", "text/plain", `7`, out("n", flow.TInt), `7`},
		{"empty", "", "", out("text", flow.TString), `""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := recorder(t, tc.contentType, tc.body)
			a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL)})
			c := httpCall(nil, tc.out)
			if err := a.Run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			if got, _ := c.Outputs[0].MarshalJSON(); string(got) != tc.want {
				t.Errorf("output = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestHTTPStatusError(t *testing.T) {
	long := strings.Repeat("overloaded ", 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, long)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://bob:pw@", 1)
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(u + "/jobs"), "method": str("DELETE")})
	err := a.Run(context.Background(), httpCall(nil, out("x", flow.TString)))
	var he *action.HTTPError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v, want an *HTTPError", err)
	}
	if he.Action != "call_api" || he.Method != "DELETE" || he.StatusCode != 503 || he.Status != "503 Service Unavailable" {
		t.Errorf("HTTPError = %+v", he)
	}
	if len(he.Body) != action.HTTPErrorBodyLen || !strings.HasPrefix(long, he.Body) {
		t.Errorf("body = %d bytes", len(he.Body))
	}
	if strings.Contains(he.URL, "pw") || !strings.HasSuffix(he.URL, "/jobs") {
		t.Errorf("URL = %s, want it with the password redacted", he.URL)
	}
	for _, want := range []string{"call_api", "DELETE", "/jobs", "503 Service Unavailable", "overloaded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// A 3xx that is not followed is not a success either.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) }))
	defer srv2.Close()
	a = bindHTTP(t, srv2.Client(), map[string]flow.Value{"url": str(srv2.URL)})
	if err := a.Run(context.Background(), httpCall(nil)); !errors.As(err, &he) || he.StatusCode != 304 {
		t.Errorf("304: %v", err)
	}
}

func TestHTTPMalformedJSON(t *testing.T) {
	srv, _ := recorder(t, "application/json", `{"answer": `)
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL)})
	err := a.Run(context.Background(), httpCall(nil, out("answer", flow.TString)))
	if err == nil || !strings.Contains(err.Error(), "malformed JSON") || !strings.Contains(err.Error(), "call_api") {
		t.Errorf("malformed JSON: %v", err)
	}
	// Not labelled JSON: one String output takes the text, two outputs
	// need an object.
	srv, _ = recorder(t, "text/html", `<p>{"answer": </p>`)
	a = bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL)})
	c := httpCall(nil, out("answer", flow.TString))
	if err := a.Run(context.Background(), c); err != nil || c.Outputs[0].Str() != `<p>{"answer": </p>` {
		t.Errorf("text body: %v, %v", err, c.Outputs[0])
	}
	err = a.Run(context.Background(), httpCall(nil, out("a", flow.TString), out("b", flow.TString)))
	if err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("two outputs from text: %v", err)
	}
	// A node with no outputs ignores the body.
	if err := a.Run(context.Background(), httpCall(nil)); err != nil {
		t.Errorf("no outputs: %v", err)
	}
}

func TestHTTPCancellation(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL)})

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := a.Run(ctx, httpCall(nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if err := a.Run(ctx, httpCall(nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %v", err)
	}
}

func TestHTTPOversizedBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := strings.Repeat("x", 64<<10)
		for n := 0; n <= action.MaxHTTPResponse; n += len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL)})
	err := a.Run(context.Background(), httpCall(nil, out("text", flow.TString)))
	if err == nil || !strings.Contains(err.Error(), "larger than 4194304 bytes") {
		t.Errorf("oversized body: %v", err)
	}
}

func TestHTTPBindErrors(t *testing.T) {
	cases := []struct {
		cfg  map[string]flow.Value
		want string
	}{
		{map[string]flow.Value{"url": flow.IntValue(1)}, "url must be a non-empty string"},
		{map[string]flow.Value{"url": str("http://x/{{json q}}")}, "only {{name}} placeholders"},
		{map[string]flow.Value{"url": str("http://x/{{q")}, "unclosed {{"},
		{map[string]flow.Value{"url": str("http://x"), "method": str("GE T")}, "method must be an HTTP method"},
		{map[string]flow.Value{"url": str("http://x"), "headers": str("X: y")}, "headers must be an object"},
		{map[string]flow.Value{"url": str("http://x"), "headers": flow.ObjectValue(map[string]flow.Value{"Bad Name": str("y")})}, "not a valid header name"},
		{map[string]flow.Value{"url": str("http://x"), "headers": flow.ObjectValue(map[string]flow.Value{"X": flow.StringList("y")})}, "X must be a string"},
		{map[string]flow.Value{"url": str("http://x"), "body": flow.IntValue(1)}, "body must be a string template"},
	}
	for _, tc := range cases {
		_, err := action.NewHTTP(&flow.Binding{Name: "api", Type: flow.Tool, Config: tc.cfg}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "api") {
			t.Errorf("%v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}

	// Bind and Binder.Bind make HTTP actions of TOOL bindings with a url
	// and of HTTP bindings; a TOOL binding without a url still needs a
	// provider.
	for _, bd := range []*flow.Binding{
		{Name: "a", Type: flow.Tool, Config: map[string]flow.Value{"url": str("http://x")}},
		{Name: "b", Type: action.HTTPType, Config: map[string]flow.Value{"url": str("http://x")}},
	} {
		for _, bind := range []engine.BindFunc{action.Bind, (&action.Binder{}).Bind} {
			if a, err := bind(bd); err != nil {
				t.Errorf("%s: %v", bd.Name, err)
			} else if _, ok := a.(*action.HTTPAction); !ok {
				t.Errorf("%s: bound a %T", bd.Name, a)
			}
		}
	}
	if _, err := action.Bind(&flow.Binding{Name: "t", Type: flow.Tool, Config: map[string]flow.Value{"tool": str("x")}}); err == nil {
		t.Error("a TOOL binding without a url was bound")
	}

	// A URL that renders to something other than http(s) fails the call.
	a := bindHTTP(t, nil, map[string]flow.Value{"url": str("{{base}}/x")})
	if err := a.Run(context.Background(), httpCall(map[string]flow.Value{"base": str("file:///etc")})); err == nil || !strings.Contains(err.Error(), "not an absolute http or https URL") {
		t.Errorf("non-http url: %v", err)
	}
}

// A node's own settings override the binding's.
func TestHTTPNodeOverridesBinding(t *testing.T) {
	srv, got := recorder(t, "", "ok")
	a := bindHTTP(t, srv.Client(), map[string]flow.Value{"url": str(srv.URL + "/binding")})
	c := httpCall(nil)
	c.Config = map[string]flow.Value{"url": str(srv.URL + "/node"), "method": str("PATCH")}
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if s := got.get(); s.path != "/node" || s.method != http.MethodPatch || s.body != "{}" {
		t.Errorf("%s %s %q", s.method, s.path, s.body)
	}
	c.Config = map[string]flow.Value{"url": str(srv.URL + "/binding")}
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if s := got.get(); s.path != "/binding" || s.method != http.MethodGet {
		t.Errorf("%s %s", s.method, s.path)
	}
}

const httpWF = `
action create_ticket {
  type: HTTP
  url: "BASE/tenants/{{tenant}}/tickets"
  method: POST
  headers: { "Authorization": "Bearer {{token}}", "X-Source": "weft" }
}

action get_ticket {
  type: HTTP
  url: "BASE/tickets/{{id}}"
}

workflow Tickets {
  parameters {
    input_text: String
    tenant: String = "acme corp"
  }
  nodes {
    node file {
      action: "create_ticket"
      inputs {
        tenant: tenant
        token: "t0k"
        title: input_text
      }
      outputs {
        id: Int
        status: Enum["open", "closed"]
      }
      timeout: 5s
    }
    node fetch {
      type: HTTP
      action: "get_ticket"
      headers: { "X-Source": "node" }
      inputs {
        id: file.id
      }
      outputs {
        summary: String
      }
    }
  }
  edges {
    edge { from: file; to: fetch }
  }
  initial: file
  finals: [ fetch ]
}
`

func TestHTTPWorkflow(t *testing.T) {
	var mu sync.Mutex
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Source"))
		mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/tenants/acme corp/tickets":
			var in map[string]any
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in["title"] != "printer on fire" || in["token"] != "t0k" {
				http.Error(w, "bad input", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id": 41, "status": "open"}`)
		case r.Method == http.MethodGet && r.URL.Path == "/tickets/41":
			io.WriteString(w, "Ticket 41: printer on fire")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	src := strings.ReplaceAll(httpWF, "BASE", srv.URL)
	mod, ds := lang.LoadSource("tickets.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(mod.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	b := &action.Binder{HTTPClient: srv.Client()}
	var events []string
	r := &engine.Runner{Registry: engine.NewRegistry(), Bind: b.Bind}
	res, err := r.Run(context.Background(), plan, map[string]flow.Value{"input_text": str("printer on fire")},
		engine.ObserverFunc(func(e engine.Event) {
			if e.Type == engine.ActionEvent && e.Kind == "http" {
				d := e.Data.Object()
				events = append(events, e.Node+":"+d["method"].Str()+":"+d["status"].String())
			}
		}))
	if err != nil {
		t.Fatalf("%v (requests: %q)", err, log)
	}
	if got := res.Output("summary").Str(); got != "Ticket 41: printer on fire" {
		t.Errorf("summary = %q", got)
	}
	want := []string{
		"POST /tenants/acme%20corp/tickets Bearer t0k weft",
		"GET /tickets/41  node",
	}
	if !slices.Equal(log, want) {
		t.Errorf("requests = %q, want %q", log, want)
	}
	if strings.Join(events, " ") != "file:POST:200 fetch:GET:200" {
		t.Errorf("http events = %v", events)
	}
}

// TestHTTPInlineNode runs an HTTP call written on the node itself, with no
// action binding.
func TestHTTPInlineNode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/items/7" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name": "seven"}`)
	}))
	defer srv.Close()
	src := strings.ReplaceAll(`workflow Inline {
  nodes {
    node get {
      type: HTTP
      url: "BASE/items/{{id}}"
      inputs {
        id: 7
      }
      outputs {
        name: String
      }
    }
  }
  initial: get
  finals: [ get ]
}
`, "BASE", srv.URL)
	mod, ds := lang.LoadSource("inline.wf", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	plan, ds := flow.Compile(mod.Main(), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	b := &action.Binder{HTTPClient: srv.Client()}
	res, err := (&engine.Runner{Registry: engine.NewRegistry(), Bind: b.Bind}).Run(context.Background(), plan, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Output("name").Str(); got != "seven" {
		t.Errorf("name = %q", got)
	}
}

// TestHTTPErrorRedactsCredentials checks that a server (or a proxy) that
// quotes the request's credentials in its error reply, or a transport
// error naming the URL, shows none of them: not the credential headers,
// not a secret query value, not the URL's password.
func TestHTTPErrorRedactsCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "denied: Authorization=%q X-Api-Key=%q url=%s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.URL)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://bob:pw-SECRET-3@", 1) + "/jobs?api_key=qs-SECRET-4&page=2"
	cfg := map[string]flow.Value{"url": str(u), "headers": flow.ObjectValue(map[string]flow.Value{
		"Authorization": str("Bearer tok-SECRET-1"), "X-Api-Key": str("hdr-SECRET-2"), "X-Source": str("weft-app"),
	})}
	a := bindHTTP(t, srv.Client(), cfg)
	err := a.Run(context.Background(), httpCall(nil, out("x", flow.TString)))
	var he *action.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 {
		t.Fatalf("err = %v, want an *HTTPError of 401", err)
	}
	s := err.Error()
	if strings.Contains(s, "SECRET") {
		t.Errorf("error names a credential: %s", s)
	}
	if !strings.Contains(s, "[REDACTED]") || !strings.Contains(s, "page=2") {
		t.Errorf("error %s: want the credentials shown as [REDACTED] and the rest kept", s)
	}

	// A transport error (the server gone) names the URL without secrets.
	srv.Close()
	err = a.Run(context.Background(), httpCall(nil, out("x", flow.TString)))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("transport error = %v", err)
	}
}
