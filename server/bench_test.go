package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store/sqlite"
)

// BenchmarkConversation is the bench/serve workload's conversation, one
// client, over HTTP on loopback, durable on SQLite: create a thread, run
// to the review question, read the state, resume with "yes". Its
// cpu-profile shows where a conversation's server time goes; cpu-ns/op is
// the CPU time of the process (server and client) per conversation.
func BenchmarkConversation(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Options{Service: svc, Store: st, Assistants: []server.Assistant{{Workflow: wf}}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(ctx)
	hs := &http.Server{Handler: srv.Handler()}
	ln, err := listen()
	if err != nil {
		b.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	call := benchCaller(b, base)
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		th := call("POST", "/threads", `{}`)
		id := th[len(`{"thread_id":"`):strings.Index(th, `","created_at"`)]
		if r := call("POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`); !strings.Contains(r, "__interrupt__") {
			b.Fatalf("first run: %s", r)
		}
		if s := call("GET", "/threads/"+id+"/state", ""); !strings.Contains(s, `"next":["review"]`) {
			b.Fatalf("state: %s", s)
		}
		if r := call("POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`); !strings.Contains(r, `"published":"doc"`) {
			b.Fatalf("resume: %s", r)
		}
	}
	// The process's CPU time: the server's and the client's (in this
	// process too) per conversation.
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// listen listens on a free loopback port.
func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// benchCaller returns a function that sends a JSON request to the server
// at base and returns its body, failing b unless the answer is 200.
func benchCaller(b testing.TB, base string) func(method, path, body string) string {
	client := &http.Client{}
	return func(method, path, body string) string {
		b.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return string(out)
	}
}
