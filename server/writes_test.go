package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/server"
	"github.com/weftlang/weft/service"
	"github.com/weftlang/weft/store"
	"github.com/weftlang/weft/store/sqlite"
)

// countingStore is a SQLite store that counts its write transactions by
// method (every method that writes is one transaction).
type countingStore struct {
	*sqlite.Store
	mu    sync.Mutex
	n     map[string]int
	reads map[string]int // the reads, by method, logged
}

func (c *countingStore) read(name string) {
	c.mu.Lock()
	if c.reads == nil {
		c.reads = map[string]int{}
	}
	c.reads[name]++
	c.mu.Unlock()
}

// takeReads returns the reads since the last takeReads, by method, and
// their sum.
func (c *countingStore) takeReads() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.reads))
	sum := 0
	for k, v := range c.reads {
		keys = append(keys, k)
		sum += v
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d reads:", sum)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %d", k, c.reads[k])
	}
	c.reads = map[string]int{}
	return b.String(), sum
}

func (c *countingStore) Thread(ctx context.Context, id string) (*store.Thread, error) {
	c.read("Thread")
	return c.Store.Thread(ctx, id)
}
func (c *countingStore) Run(ctx context.Context, id string) (*store.Run, error) {
	c.read("Run")
	return c.Store.Run(ctx, id)
}
func (c *countingStore) Runs(ctx context.Context, threadID string) ([]*store.Run, error) {
	c.read("Runs")
	return c.Store.Runs(ctx, threadID)
}
func (c *countingStore) Records(ctx context.Context, threadID string, from int64) ([]*store.Record, error) {
	c.read("Records")
	return c.Store.Records(ctx, threadID, from)
}
func (c *countingStore) LastSnapshot(ctx context.Context, threadID string) (*store.Record, error) {
	c.read("LastSnapshot")
	return c.Store.LastSnapshot(ctx, threadID)
}
func (c *countingStore) Pending(ctx context.Context, threadID string) ([]*store.Pending, error) {
	c.read("Pending")
	return c.Store.Pending(ctx, threadID)
}
func (c *countingStore) Source(ctx context.Context, digest string) ([]byte, error) {
	c.read("Source")
	return c.Store.Source(ctx, digest)
}
func (c *countingStore) Head(ctx context.Context, threadID string) (int64, time.Time, error) {
	c.read("Head")
	return c.Store.Head(ctx, threadID)
}
func (c *countingStore) Job(ctx context.Context, id string) (*store.Job, error) {
	c.read("Job")
	return c.Store.Job(ctx, id)
}
func (c *countingStore) Jobs(ctx context.Context, q store.JobQuery) ([]*store.Job, error) {
	c.read("Jobs")
	return c.Store.Jobs(ctx, q)
}

func (c *countingStore) count(name string) {
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
}

// take returns the counts since the last take, and their sum.
func (c *countingStore) take() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, sum := c.n, 0
	for _, v := range m {
		sum += v
	}
	c.n = map[string]int{}
	return m, sum
}

func (c *countingStore) CreateThread(ctx context.Context, t *store.Thread) error {
	c.count("CreateThread")
	return c.Store.CreateThread(ctx, t)
}
func (c *countingStore) UpdateThread(ctx context.Context, t *store.Thread) error {
	c.count("UpdateThread")
	return c.Store.UpdateThread(ctx, t)
}
func (c *countingStore) DeleteThread(ctx context.Context, id string) error {
	c.count("DeleteThread")
	return c.Store.DeleteThread(ctx, id)
}
func (c *countingStore) PutRun(ctx context.Context, r *store.Run) error {
	c.count("PutRun")
	return c.Store.PutRun(ctx, r)
}
func (c *countingStore) Append(ctx context.Context, recs ...*store.Record) error {
	c.count("Append")
	return c.Store.Append(ctx, recs...)
}
func (c *countingStore) PutPending(ctx context.Context, p *store.Pending) error {
	c.count("PutPending")
	return c.Store.PutPending(ctx, p)
}
func (c *countingStore) DeletePending(ctx context.Context, threadID, id string) error {
	c.count("DeletePending")
	return c.Store.DeletePending(ctx, threadID, id)
}
func (c *countingStore) Prune(ctx context.Context, threadID string, opts store.PruneOptions) (int, error) {
	c.count("Prune")
	return c.Store.Prune(ctx, threadID, opts)
}
func (c *countingStore) PutSource(ctx context.Context, digest string, src []byte) error {
	c.count("PutSource")
	return c.Store.PutSource(ctx, digest, src)
}
func (c *countingStore) WriteBatch(ctx context.Context, b *store.Batch) error {
	c.count("WriteBatch")
	return c.Store.WriteBatch(ctx, b)
}
func (c *countingStore) EndRun(ctx context.Context, e *store.RunEnd) error {
	c.count("EndRun")
	return c.Store.EndRun(ctx, e)
}
func (c *countingStore) Claim(ctx context.Context, threadID, owner string, ttl time.Duration) (store.Lease, error) {
	c.count("Claim")
	return c.Store.Claim(ctx, threadID, owner, ttl)
}
func (c *countingStore) Heartbeat(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	c.count("Heartbeat")
	return c.Store.Heartbeat(ctx, l, ttl)
}
func (c *countingStore) Release(ctx context.Context, l store.Lease) error {
	c.count("Release")
	return c.Store.Release(ctx, l)
}
func (c *countingStore) CreateJob(ctx context.Context, j *store.Job) error {
	c.count("CreateJob")
	return c.Store.CreateJob(ctx, j)
}
func (c *countingStore) DeleteJob(ctx context.Context, id string) error {
	c.count("DeleteJob")
	return c.Store.DeleteJob(ctx, id)
}
func (c *countingStore) SetJob(ctx context.Context, id string, from []store.JobStatus, to store.JobStatus, run, errText string) (*store.Job, error) {
	c.count("SetJob")
	return c.Store.SetJob(ctx, id, from, to, run, errText)
}
func (c *countingStore) PutItem(ctx context.Context, it *store.Item) error {
	c.count("PutItem")
	return c.Store.PutItem(ctx, it)
}

// TestConversationWrites counts the store's write transactions of
// BenchmarkConversation's conversation (create a thread, run to the
// question, read the state, resume) on SQLite, and checks what the
// conversation left: a regression guard on the writes a conversation
// costs.
func TestConversationWrites(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: sq, n: map[string]int{}}
	defer st.Close()
	svc, err := service.New(service.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	wf, err := svc.Open(ctx, service.Source{Name: "testdata/approval.wf"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Service: svc, Store: st, Assistants: []server.Assistant{{Workflow: wf}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	hs := &http.Server{Handler: srv.Handler()}
	ln, err := listen()
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	call := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return string(out)
	}
	// The first conversation also stores the workflow's source.
	for i := range 3 {
		st.take()
		st.takeReads()
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if err := json.Unmarshal([]byte(call("POST", "/threads", `{}`)), &th); err != nil {
			t.Fatal(err)
		}
		if r := call("POST", "/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"Approval","input":{"input_text":"doc"}}`); !strings.Contains(r, "__interrupt__") {
			t.Fatalf("first run: %s", r)
		}
		if s := call("GET", "/threads/"+th.ThreadID+"/state", ""); !strings.Contains(s, `"next":["review"]`) {
			t.Fatalf("state: %s", s)
		}
		if r := call("POST", "/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"Approval","command":{"resume":"yes"}}`); !strings.Contains(r, `"published":"doc"`) {
			t.Fatalf("resume: %s", r)
		}
		counts, sum := st.take()
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, " %s %d", k, counts[k])
		}
		reads, nreads := st.takeReads()
		t.Logf("conversation %d: %d writes:%s; %s", i, sum, b.String(), reads)
		if i == 0 {
			continue
		}
		if sum > maxConversationWrites {
			t.Errorf("conversation %d: %d writes, want at most %d:%s", i, sum, maxConversationWrites, b.String())
		}
		if nreads > maxConversationReads {
			t.Errorf("conversation %d: %s; want at most %d", i, reads, maxConversationReads)
		}
		// What the conversation left: the run completed, no question
		// pending, the thread free for the next run (its lease released).
		pend, err := st.Pending(ctx, th.ThreadID)
		if err != nil || len(pend) != 0 {
			t.Errorf("pending after the conversation: %v, %v", pend, err)
		}
		runs, err := st.Runs(ctx, th.ThreadID)
		if err != nil || len(runs) != 1 || runs[0].Status != store.Completed {
			t.Errorf("runs after the conversation: %v, %v", runs, err)
		}
		l, err := st.Store.Claim(ctx, th.ThreadID, "test", time.Minute)
		if err != nil {
			t.Errorf("claiming the thread after the conversation: %v", err)
		} else if err := st.Store.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
		// The thread's labels and the spec its run's Start keeps,
		// written together when the run was queued.
		thr, err := st.Thread(ctx, th.ThreadID)
		if err != nil || thr.Workflow != wf.Name || thr.Source != wf.Digest || !strings.Contains(string(thr.Spec), wf.Digest) || thr.Meta["graph_id"] != `"Approval"` {
			t.Errorf("thread after the conversation: %+v, %v", thr, err)
		}
		jobs, err := st.Jobs(ctx, store.JobQuery{ThreadID: th.ThreadID})
		if err != nil || len(jobs) != 2 || jobs[0].Status != store.JobSuccess || jobs[1].Status != store.JobSuccess {
			t.Errorf("jobs after the conversation: %v, %v", jobs, err)
		}
	}
}

// maxConversationWrites is the most write transactions a conversation may
// cost (22 before the run's end was written in one transaction, 18
// before the thread's spec was written with its labels, 17 before the
// server's runs took async durability, whose records go with the run's
// end, and the job's end was written there too; 10 before a job the
// in-process pool starts at once was created already claimed). A run's
// records may take an append of their own when the machine is slow (the
// writer lingers a millisecond), which the margin of 2 allows.
const maxConversationWrites = 10

// maxConversationReads is the most reads (of the methods countingStore
// counts) a conversation may cost: 15, with a margin of 2 for a resume
// the pool cannot start at once (its thread not yet given back by the
// run before), whose run reads the questions again (21 before the
// run's records were kept in the state cache, the questions a resume
// read were handed to its run, its state to the Service, the run's row
// known from the run's first drive, and a new thread's first run read
// no questions).
const maxConversationReads = 17
