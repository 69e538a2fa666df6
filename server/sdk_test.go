package server_test

// Tests with the real, unmodified LangGraph JS client
// (@langchain/langgraph-sdk, pinned in test/langgraph-sdk/package.json and
// installed there by `npm ci`): each test serves weft's test workflows
// and runs a node script of testdata/sdk against it. The scripts assert
// and exit non-zero naming what failed; their output is shown then.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/internal/napper"
	"github.com/weftlang/weft/internal/sdktest"
	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/memory"
)

// sdkDir is the folder of the pinned client.
const sdkDir = "../test/langgraph-sdk"

// sdkNode returns the node binary, or skips the test when node or the
// installed client is missing.
func sdkNode(t *testing.T) string { return sdktest.Node(t, sdkDir) }

// sdkServer serves Approval, Sleepy (with a napper the scripts drive
// through /__test/ endpoints), Talky and seed 000's IntentQA (its model
// and retrieval actions stubbed) over a memory store.
type sdkServer struct {
	t   *testing.T
	url string
	nap *napper.Napper
	srv *server.Server
}

// newSDKServer starts a server; wrap, if not nil, wraps its handler, and
// edit, if not nil, edits its options.
func newSDKServer(t *testing.T, wrap func(http.Handler) http.Handler, edit func(*server.Options)) *sdkServer {
	t.Helper()
	ctx := context.Background()
	n := napper.New()
	reg := n.Registry()
	reg.Replace("talk", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		if c.Inputs[0].Str() == "fail" {
			return errors.New("talk: asked to fail")
		}
		for _, tok := range []string{"Hi", " ", "you"} {
			c.Emit("token", flow.StringValue(tok))
		}
		c.Outputs[0] = flow.StringValue("Hi you")
		return nil
	}))
	stubIntentQA(reg)
	st := memory.New()
	svc, err := service.New(service.Options{Store: st, Actions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	var as []server.Assistant
	for _, f := range []string{"testdata/approval.wf", "testdata/sleepy.wf", "testdata/talky.wf", "../examples/intentqa/intentqa.wf"} {
		wf, err := svc.Open(ctx, service.Source{Name: f})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, server.Assistant{Workflow: wf})
	}
	opts := server.Options{Service: svc, Store: st, Assistants: as}
	if edit != nil {
		edit(&opts)
	}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &sdkServer{t: t, nap: n, srv: srv}
	var h http.Handler = srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /__test/started", s.started)
	mux.HandleFunc("POST /__test/release", s.release)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	s.url = ts.URL
	return s
}

// started answers the text of the next nap to start (a JSON string), or
// 504 after 10 s.
func (s *sdkServer) started(w http.ResponseWriter, r *http.Request) {
	select {
	case text := <-s.nap.Started:
		b, _ := json.Marshal(text)
		_, _ = w.Write(b)
	case <-time.After(10 * time.Second):
		http.Error(w, "no nap started in 10 s", http.StatusGatewayTimeout)
	}
}

// release lets one waiting nap end, or answers 504 when none takes it
// in 10 s.
func (s *sdkServer) release(w http.ResponseWriter, r *http.Request) {
	select {
	case s.nap.Gate <- struct{}{}:
		w.WriteHeader(http.StatusNoContent)
	case <-time.After(10 * time.Second):
		http.Error(w, "no nap waited to be released in 10 s", http.StatusGatewayTimeout)
	}
}

// stubIntentQA registers Go stubs of IntentQA's model and retrieval
// actions: a question (ending in "?") is qa, "Summarize ..." a summary,
// anything else unclear (the route to ask_user, the built-in human
// action); retrieval finds one chunk naming the query, which is always
// relevant; the answer names its source.
func stubIntentQA(reg *engine.Registry) {
	reg.Replace("identify_user_intent", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		text := c.Input("input_text").Str()
		intent := "not_clear"
		switch {
		case strings.HasSuffix(text, "?"):
			intent = "qa"
		case strings.HasPrefix(text, "Summarize"):
			intent = "summarization"
		}
		return c.SetOutput("intent", flow.StringValue(intent))
	}))
	reg.Replace("retrieve_financial_documents", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("chunks", flow.StringList("a chunk about: "+c.Input("query").Str()))
	}))
	reg.Replace("evaluate_relevance", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("relevance", flow.StringValue("OK"))
	}))
	reg.Replace("rephrase_query", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("new_query", flow.StringValue("rephrased: "+c.Input("query").Str()))
	}))
	reg.Replace("summarize", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		return c.SetOutput("summary", flow.StringValue("a summary of: "+c.Input("query").Str()))
	}))
	reg.Replace("generate_answer", engine.ActionFunc(func(ctx context.Context, c *engine.Call) error {
		src := c.Input("source")
		text := src.Str()
		if ss, ok := src.Strings(); ok {
			text = strings.Join(ss, "; ")
		}
		return c.SetOutput("answer", flow.StringValue("answered from "+text))
	}))
}

// run runs testdata/sdk/script against the server, with env added, and
// fails the test with the script's output when it fails.
func (s *sdkServer) run(node, script string, env ...string) {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "sdk", script))
	cmd.Env = append(os.Environ(), "WEFT_URL="+s.url)
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Fatalf("node %s: %v (after %v)\n%s", script, err, time.Since(start).Round(time.Millisecond), out.String())
	}
	t.Logf("node %s: ok in %v\n%s", script, time.Since(start).Round(time.Millisecond), out.String())
}

func TestSDKAssistants(t *testing.T) {
	node := sdkNode(t)
	s := newSDKServer(t, nil, nil)
	s.run(node, "assistants.mjs", "APPROVAL_ID="+server.AssistantID("Approval"))
}

func TestSDKThreads(t *testing.T) {
	node := sdkNode(t)
	newSDKServer(t, nil, nil).run(node, "threads.mjs")
}

func TestSDKConversation(t *testing.T) {
	node := sdkNode(t)
	newSDKServer(t, nil, nil).run(node, "conversation.mjs")
}

func TestSDKRuns(t *testing.T) {
	node := sdkNode(t)
	newSDKServer(t, nil, func(o *server.Options) {
		// Nest: subworkflows, for stream_subgraphs.
		wf, err := o.Service.Open(context.Background(), service.Source{Name: "testdata/nest.wf"})
		if err != nil {
			t.Fatal(err)
		}
		o.Assistants = append(o.Assistants, server.Assistant{Workflow: wf})
	}).run(node, "runs.mjs")
}

// Seed 000's IntentQA: the ask_user route answered over HTTP.
func TestSDKIntentQA(t *testing.T) {
	node := sdkNode(t)
	newSDKServer(t, nil, nil).run(node, "intentqa.mjs")
}

func TestSDKMultitask(t *testing.T) {
	node := sdkNode(t)
	newSDKServer(t, nil, nil).run(node, "multitask.mjs")
}

// dropper cuts the first two run streams a client opens before their
// second event: the first as a network failure does, in the middle of
// the event (the connection is closed with the chunked body unfinished),
// the second as a proxy that ends a response early does (the body ends
// cleanly, the run still running). It records the rejoins.
type dropper struct {
	mu      sync.Mutex
	cuts    int
	rejoins []string // "path Last-Event-ID"
	rejoin  chan struct{}
}

var runStreamPath = regexp.MustCompile(`^/threads/[^/]+/runs/stream$`)

func (d *dropper) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/stream") {
			d.mu.Lock()
			d.rejoins = append(d.rejoins, r.URL.Path+" "+r.Header.Get("Last-Event-ID"))
			d.mu.Unlock()
			select {
			case d.rejoin <- struct{}{}:
			default: // more rejoins than expected: the test fails on them
			}
		}
		if r.Method == "POST" && runStreamPath.MatchString(r.URL.Path) {
			d.mu.Lock()
			d.cuts++
			n := d.cuts
			d.mu.Unlock()
			if n <= 2 {
				w = &cuttingWriter{ResponseWriter: w, clean: n == 2}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// cuttingWriter passes the first write through; at the second it closes
// the connection after half of it, or, when clean, ends the reply
// without it.
type cuttingWriter struct {
	http.ResponseWriter
	clean  bool
	writes int
	dead   bool
}

var errCut = errors.New("test: connection cut")

func (c *cuttingWriter) Write(p []byte) (int, error) {
	if c.dead {
		return 0, errCut
	}
	c.writes++
	if c.writes < 2 {
		return c.ResponseWriter.Write(p)
	}
	c.dead = true
	if c.clean {
		return 0, errCut // the handler ends: net/http ends the body
	}
	rc := http.NewResponseController(c.ResponseWriter)
	if _, err := c.ResponseWriter.Write(p[:len(p)/2]); err != nil {
		return 0, err
	}
	_ = rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		return 0, err
	}
	_ = conn.(*net.TCPConn).SetLinger(0)
	_ = conn.Close()
	return 0, errCut
}

func (c *cuttingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Streams cut mid-run: the client rejoins the run's stream at the
// Location header with Last-Event-ID and its consumer sees every event
// once, in order.
func TestSDKStreamReconnect(t *testing.T) {
	node := sdkNode(t)
	d := &dropper{rejoin: make(chan struct{}, 4)}
	s := newSDKServer(t, d.wrap, nil)
	// Each nap ends only once the client has rejoined, so the run is in
	// progress while its stream is down.
	go func() {
		for range 2 {
			select {
			case <-d.rejoin:
			case <-time.After(30 * time.Second):
				return
			}
			select {
			case s.nap.Gate <- struct{}{}:
			case <-time.After(30 * time.Second):
				return
			}
		}
	}()
	s.run(node, "reconnect.mjs")
	d.mu.Lock()
	defer d.mu.Unlock()
	re := regexp.MustCompile(`^/threads/[^/]+/runs/[^/]+/stream [0-9a-z]{8}-0$`)
	if d.cuts != 2 || len(d.rejoins) != 2 || !re.MatchString(d.rejoins[0]) || !re.MatchString(d.rejoins[1]) {
		t.Fatalf("%d streams cut; rejoins %q, want one GET of each run's stream with Last-Event-ID 0", d.cuts, d.rejoins)
	}
}

// An API key, clients that go away mid-run (with and without asking to
// cancel the run), and requests of the wrong shape.
func TestSDKSafety(t *testing.T) {
	node := sdkNode(t)
	const key = "k3y-only-for-this-test"
	s := newSDKServer(t, nil, func(o *server.Options) { o.APIKey = key })
	s.run(node, "safety.mjs", "WEFT_API_KEY="+key)
}

// The thread stream (client.threads.joinStream) over two runs.
func TestSDKThreadStream(t *testing.T) {
	node := sdkNode(t)
	newSDKServer(t, nil, nil).run(node, "threadstream.mjs")
}
