package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/llmtest"
	"github.com/weftlang/weft/llm/ollama"
)

// The LLM-bound shape: many concurrent runs of a workflow whose time goes
// to model calls, against the fake Ollama server of llm/llmtest over real
// loopback HTTP (the ollama client; the runs are unobserved, so the LLM
// action asks for whole replies, as it does unless a run is observed),
// through one shared llm.Reliable with a concurrency limit L.
//
//	llm1 -> llm2 -> [f0 .. f9] -> join -> llm3 -> llm4 -> llm5 -> end
//
// Five sequential LLM calls and one 10-way fan-out of LLM calls: 15 calls
// per run, 6 on its critical path. Each prompt holds the previous output
// (llm3's holds the ten branch outputs, gathered in a List by the append
// reducer), and the fake's reply is a hash of the prompt it received, so a
// run's final answer is right only if every prompt of that run was.
const llmBoundSource = `workflow LLMBound {
  variables {
    parts: List[String] = [] reduce append
    answer: String = ""
  }
  nodes {
    node llm1 {
      type: LLM
      prompt: "Step 1 of {{question}}"
      inputs {
        question: input_text
      }
      outputs {
        text: String
      }
    }
    node llm2 {
      type: LLM
      prompt: "Step 2 after {{prev}}"
      inputs {
        prev: llm1.text
      }
      outputs {
        text: String
      }
    }
%s    node join {
      type: FUNCTION
      action: "noop"
    }
    node llm3 {
      type: LLM
      prompt: "Merge {{parts}}"
      inputs {
        parts: parts
      }
      outputs {
        text: String
      }
    }
    node llm4 {
      type: LLM
      prompt: "Step 4 after {{prev}}"
      inputs {
        prev: llm3.text
      }
      outputs {
        text: String
      }
    }
    node llm5 {
      type: LLM
      prompt: "Step 5 after {{prev}}"
      inputs {
        prev: llm4.text
      }
      outputs {
        text: String
      }
      set: { answer = text }
    }
    node end {
      type: END
    }
  }
  edges {
    edge { from: llm1; to: llm2 }
    edge { from: llm2; to: [%s]; join: join }
%s    edge { from: join; to: llm3 }
    edge { from: llm3; to: llm4 }
    edge { from: llm4; to: llm5 }
    edge { from: llm5; to: end }
  }
  initial: llm1
  finals: [ end ]
}
`

// llmBoundFanout is the width of the fan-out.
const llmBoundFanout = 10

// llmBoundCalls lists the calls of one run, each as the number of calls
// that must finish before it starts and that can start only after it ends,
// along the run's dependencies.
var llmBoundCalls = func() [][2]int {
	calls := [][2]int{{0, 5}, {1, 4}}
	for range llmBoundFanout {
		calls = append(calls, [2]int{2, 3})
	}
	return append(calls, [2]int{3, 2}, [2]int{4, 1}, [2]int{5, 0})
}()

func llmBoundWF() string {
	var nodes, names, edges strings.Builder
	for i := range llmBoundFanout {
		fmt.Fprintf(&nodes, "    node f%d {\n      type: LLM\n      prompt: \"Branch %d of {{prev}}\"\n      inputs {\n        prev: llm2.text\n      }\n"+
			"      outputs {\n        text: String\n      }\n      set: { parts = text }\n    }\n", i, i)
		if i > 0 {
			names.WriteString(", ")
		}
		fmt.Fprintf(&names, "f%d", i)
		fmt.Fprintf(&edges, "    edge { from: f%d; to: join }\n", i)
	}
	return fmt.Sprintf(llmBoundSource, nodes.String(), names.String(), edges.String())
}

// llmBoundReplyTail follows the prompt's hash in every reply, so that a
// reply is as long as a short answer of a real model: 122 characters,
// about 30 tokens.
const llmBoundReplyTail = " is the outcome of this step, worked out from the text before it and" +
	" passed on whole to the step after it."

// llmBoundChunk is the number of characters per streamed event: about
// four tokens, as a server batching a few tokens per event sends them.
const llmBoundChunk = 16

// llmBoundReply is the fake model: the reply to a prompt is its FNV-1a
// hash, 16 hex digits, then llmBoundReplyTail; it is streamed as eight
// events of up to llmBoundChunk characters and the final one.
func llmBoundReply(prompt string) string {
	h := fnv.New64a()
	h.Write([]byte(prompt))
	const digits = "0123456789abcdef"
	var b [16 + len(llmBoundReplyTail)]byte
	for i, x := 15, h.Sum64(); i >= 0; i, x = i-1, x>>4 {
		b[i] = digits[x&15]
	}
	copy(b[16:], llmBoundReplyTail)
	return string(b[:])
}

// llmBoundAnswer is the answer a run with input q must end with: the
// workflow's prompts, rendered by hand.
func llmBoundAnswer(q string) string {
	r := llmBoundReply("Step 1 of " + q)
	r = llmBoundReply("Step 2 after " + r)
	parts := make([]string, llmBoundFanout)
	for i := range parts {
		parts[i] = llmBoundReply(fmt.Sprintf("Branch %d of %s", i, r))
	}
	js, _ := json.Marshal(parts)
	r = llmBoundReply("Merge " + string(js))
	r = llmBoundReply("Step 4 after " + r)
	return llmBoundReply("Step 5 after " + r)
}

// llmBoundIdeal is the least wall time any schedule needs for runs runs
// with at most limit calls in flight, each call taking latency.
//
// Take the calls of every run that have at least a calls before them and
// at least b after them on their run's path (llmBoundCalls): none can
// start before a*latency, and all must end by T - b*latency. With limit
// calls in flight (limit slots, each doing at most one call per latency),
// c such calls per run need ceil(runs*c/limit) latencies of that window,
// so T >= (a + b + ceil(runs*c/limit)) * latency. The ideal is the largest
// such bound. a = b = 0 gives the total work, ceil(15*runs/limit); a call's
// own a+b+1 = 6 gives the critical path; and the fan-out (a = 2, b = 3)
// gives 5 + ceil(10*runs/limit), which is the binding one once the limit
// is below 10 calls per run: with 1,000 runs the ideal is 750 ms for
// L=1000 (both), 450 ms for L=2500 and 350 ms for L=5000, where the simple
// max(6, ceil(15000/L)) * 50 ms would say 750, 300 and 300 ms. The
// fan-out bound is reachable: at L=5000, half of every run's branches at
// 100 ms, the other half at 150 ms, then llm3, llm4 and llm5 end at
// 350 ms. Reaching 300 ms takes 10,000 calls in flight at once, 20,000
// loopback file descriptors in one process, over this machine's limit.
func llmBoundIdeal(runs, limit int, latency time.Duration) time.Duration {
	waves := 0
	for a := 0; a <= 5; a++ {
		for b := 0; a+b <= 5; b++ {
			c := 0
			for _, k := range llmBoundCalls {
				if k[0] >= a && k[1] >= b {
					c++
				}
			}
			if c > 0 {
				waves = max(waves, a+b+(runs*c+limit-1)/limit)
			}
		}
	}
	return time.Duration(waves) * latency
}

// llmBoundTransport is the HTTP transport of the shared client: at most
// limit connections to the server, and room for all of them in the idle
// pool. The default transport keeps at most 100 idle connections in all
// (MaxIdleConns), whatever MaxIdleConnsPerHost says: with a limit above
// 100, every call that ends while 100 connections are idle closes its
// connection, and the next calls dial new ones.
func llmBoundTransport(limit int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost = limit
	tr.MaxIdleConnsPerHost = limit
	tr.MaxIdleConns = limit
	return tr
}

// llmBoundFixture is a model with a concurrency limit and a runner, ready
// to start runs: the ollama client against a fake server, or the model in
// process (llmBoundModel).
type llmBoundFixture struct {
	srv    *llmtest.Server // nil for the model in process
	tr     *http.Transport
	direct *llmBoundModel
	plan   *flow.Plan
	runner *engine.Runner
	model  llm.Model // what the LLM actions call
	params []map[string]flow.Value
	want   []string
	answer int // index of the variable answer in Result.Vars
}

// newLLMBoundFixture prepares runs runs with at most limit calls in flight
// through one llm.Reliable, each taking latency: over HTTP to the fake
// Ollama server, or, with direct, to llmBoundModel in process.
func newLLMBoundFixture(tb testing.TB, runs, limit int, latency time.Duration, direct bool) *llmBoundFixture {
	tb.Helper()
	f := &llmBoundFixture{answer: -1}
	var base llm.Model
	if direct {
		f.direct = &llmBoundModel{latency: latency}
		base = f.direct
	} else {
		f.srv = llmtest.NewOllamaServer()
		tb.Cleanup(f.srv.Close)
		f.srv.RepeatFunc(func(req llm.Request) llmtest.Reply {
			return llmtest.Reply{Text: llmBoundReply(lastPrompt(&req)), ChunkSize: llmBoundChunk, Latency: latency}
		})
		f.tr = llmBoundTransport(limit)
		tb.Cleanup(f.tr.CloseIdleConnections)
		base = ollama.New(ollama.Config{BaseURL: f.srv.BaseURL(), Model: "bench", HTTPClient: &http.Client{Transport: f.tr}})
	}
	f.model = llm.Reliable(base, llm.Policy{Concurrency: limit, MaxAttempts: 1})
	binder := &action.Binder{Default: "ollama:bench", Open: func(string) (llm.Model, error) { return f.model, nil }}

	reg := engine.NewRegistry()
	if err := reg.Register("noop", engine.ActionFunc(func(context.Context, *engine.Call) error { return nil })); err != nil {
		tb.Fatal(err)
	}
	m, ds := lang.LoadSource("llmbound.wf", []byte(llmBoundWF()), nil)
	if ds.HasErrors() {
		tb.Fatalf("llmbound.wf:\n%v", ds)
	}
	plan, ds := flow.Compile(m.Main(), &flow.CompileOptions{HasAction: reg.Has})
	if ds.HasErrors() {
		tb.Fatalf("llmbound.wf:\n%v", ds)
	}
	f.plan, f.runner = plan, &engine.Runner{Registry: reg, Bind: binder.Bind}
	for i, v := range plan.Vars {
		if v.Name == "answer" {
			f.answer = i
		}
	}
	if f.answer < 0 {
		tb.Fatal("llmbound.wf declares no variable answer")
	}
	for i := range runs {
		q := "run " + strconv.Itoa(i)
		f.params = append(f.params, map[string]flow.Value{"input_text": flow.StringValue(q)})
		f.want = append(f.want, llmBoundAnswer(q))
	}
	return f
}

// maxInFlight is the most calls the model handled at once.
func (f *llmBoundFixture) maxInFlight() int {
	if f.direct != nil {
		return int(f.direct.maxInFlight.Load())
	}
	return f.srv.MaxInFlight()
}

func lastPrompt(req *llm.Request) string {
	if n := len(req.Messages); n > 0 {
		return req.Messages[n-1].Content
	}
	return ""
}

// llmBoundModel is the fake server's model in process, without HTTP: the
// same replies after the same latency, streamed in chunks of
// llmBoundChunk characters as the fake streams them. It counts the calls
// in flight.
type llmBoundModel struct {
	latency               time.Duration
	inFlight, maxInFlight atomic.Int64
}

func (m *llmBoundModel) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.maxInFlight.Load()
		if n <= old || m.maxInFlight.CompareAndSwap(old, n) {
			break
		}
	}
	t := time.NewTimer(m.latency)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	}
	text := llmBoundReply(lastPrompt(req))
	if onChunk != nil {
		for i := 0; i < len(text); i += llmBoundChunk {
			if err := onChunk(llm.Chunk{Text: text[i:min(i+llmBoundChunk, len(text))]}); err != nil {
				return nil, err
			}
		}
	}
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: text}}, nil
}

// batch starts every run at once and waits for them all; it returns the
// first failure: a run that did not complete, or with the wrong answer.
func (f *llmBoundFixture) batch(ctx context.Context) error {
	errs := make([]error, len(f.params))
	var wg sync.WaitGroup
	for i := range f.params {
		wg.Go(func() {
			res, err := f.runner.Run(ctx, f.plan, f.params[i], nil)
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("run %d: %w", i, err)
			case res.Status != engine.Completed:
				errs[i] = fmt.Errorf("run %d: status %s", i, res.Status)
			case len(res.Vars) <= f.answer || res.Vars[f.answer].Name != "answer":
				errs[i] = fmt.Errorf("run %d: variables %v", i, res.Vars)
			case res.Vars[f.answer].Value.Str() != f.want[i]:
				errs[i] = fmt.Errorf("run %d: answer %q, want %q", i, res.Vars[f.answer].Value.Str(), f.want[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// heapSampler records the peak of the heap in use (objects, live or not
// yet swept, plus the free room of the spans holding them: HeapInuse) and
// of goroutine stacks, sampled every millisecond.
type heapSampler struct {
	samples          []metrics.Sample
	peakHeap, peakSt uint64
	stop, done       chan struct{}
}

func heapNow(s []metrics.Sample) (heap, stacks uint64) {
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64(), s[2].Value.Uint64()
}

func heapSamples() []metrics.Sample {
	return []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{samples: heapSamples(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			heap, st := heapNow(h.samples)
			h.peakHeap, h.peakSt = max(h.peakHeap, heap), max(h.peakSt, st)
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) finish() (heap, stacks uint64) {
	close(h.stop)
	<-h.done
	heap, st := heapNow(h.samples)
	return max(h.peakHeap, heap), max(h.peakSt, st)
}

// BenchmarkLLMBound runs 1,000 runs of the LLM-bound shape at once per
// iteration, against the fake Ollama server answering each call after
// 50 ms, with at most L calls (and L connections) in flight. It reports
//
//	ms/batch           wall time from starting the 1,000 runs to the last one's end
//	ideal-ms           the least time any schedule needs under the limit (llmBoundIdeal)
//	x-ideal            their ratio
//	cpu-ms/batch       CPU time of the process (client, engine and fake server) per batch
//	B/run-peak         peak heap in use during a batch minus the heap before it, per run
//	stack-B/run-peak   the same for goroutine stacks
//	conns              TCP connections the fake accepted, warm-up included
//	conns-open-max     the most connections open at once
//	max-inflight       the most calls the fake handled at once
//
// Each reply is a short answer of 122 characters (about 30 tokens)
// streamed as NDJSON in eight events of up to 16 characters (about four
// tokens each, as servers that batch tokens send them) and the final event
// with usage, all written at once when the 50 ms are up: the latency
// stands for the model's whole time, time to first token and generation
// alike. The client parses as many events per call as it would from a real
// server; only its socket reads are fewer (one or two per call, where
// tokens trickling in would take one per event).
//
// A warm-up batch opens the connections before the clock starts, as in a
// long-running process. The fake server runs in the same process: its
// CPU time and memory (connections, buffers, handler goroutines) are in
// the figures. BenchmarkLLMBoundDirect is the same without HTTP.
func BenchmarkLLMBound(b *testing.B) {
	for _, limit := range []int{1000, 2500, 5000} {
		b.Run("L="+strconv.Itoa(limit), func(b *testing.B) { benchLLMBound(b, 1000, limit, false, false) })
	}
}

// BenchmarkLLMBoundTraced is BenchmarkLLMBound at L=1000 without and with
// OpenTelemetry tracing (a span per run, per attempt and per model call,
// through a batch span processor to an exporter that drops them): with
// 1,000 runs at once, which keep two cores busy (the CPU the spans take
// shows in the wall time), and with 50, as a service whose time is the
// model's.
func BenchmarkLLMBoundTraced(b *testing.B) {
	for _, runs := range []int{50, 1000} {
		r := "runs=" + strconv.Itoa(runs)
		b.Run(r+"/off", func(b *testing.B) { benchLLMBound(b, runs, 1000, false, false) })
		b.Run(r+"/on", func(b *testing.B) { benchLLMBound(b, runs, 1000, false, true) })
	}
}

// BenchmarkLLMBoundDirect is BenchmarkLLMBound with the model in process
// (llmBoundModel: the same replies after the same 50 ms, no HTTP), so
// that its figures are the engine's, the LLM action's and llm.Reliable's
// alone. Without connections, the limit can reach the 10,000 calls the
// fan-outs of 1,000 runs make at once.
func BenchmarkLLMBoundDirect(b *testing.B) {
	for _, limit := range []int{1000, 2500, 5000, 10000} {
		b.Run("L="+strconv.Itoa(limit), func(b *testing.B) { benchLLMBound(b, 1000, limit, true, false) })
	}
}

func benchLLMBound(b *testing.B, runs, limit int, direct, traced bool) {
	const latency = 50 * time.Millisecond
	f := newLLMBoundFixture(b, runs, limit, latency, direct)
	if traced {
		tr := benchTracer(b)
		f.model, f.runner.Tracer = tr.WrapModel("ollama:bench", f.model), tr
	}
	if f.srv != nil {
		f.srv.KeepRequests(false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := f.batch(ctx); err != nil { // warm-up: open the connections
		b.Fatal(err)
	}
	ideal := llmBoundIdeal(runs, limit, latency)
	samples := heapSamples()
	var wall, cpu time.Duration
	var peakHeap, peakStack float64
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		baseHeap, baseStack := heapNow(samples)
		sampler := startHeapSampler()
		b.StartTimer()
		c0, t0 := cpuTime(), time.Now()
		err := f.batch(ctx)
		wall += time.Since(t0)
		cpu += cpuTime() - c0
		b.StopTimer()
		heap, stack := sampler.finish()
		if err != nil {
			b.Fatal(err)
		}
		peakHeap = max(peakHeap, float64(heap)-float64(baseHeap))
		peakStack = max(peakStack, float64(stack)-float64(baseStack))
		n++
		b.StartTimer()
	}
	ms := float64(wall.Microseconds()) / 1000 / float64(n)
	b.ReportMetric(ms, "ms/batch")
	b.ReportMetric(float64(ideal.Milliseconds()), "ideal-ms")
	b.ReportMetric(ms/float64(ideal.Milliseconds()), "x-ideal")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/batch")
	b.ReportMetric(peakHeap/float64(runs), "B/run-peak")
	b.ReportMetric(peakStack/float64(runs), "stack-B/run-peak")
	b.ReportMetric(float64(f.maxInFlight()), "max-inflight")
	if m := f.maxInFlight(); m > limit {
		b.Errorf("%d calls in flight at once, more than the limit of %d", m, limit)
	}
	if f.srv == nil {
		return
	}
	conns, open := f.srv.Connections(), f.srv.MaxConnections()
	b.ReportMetric(float64(conns), "conns")
	b.ReportMetric(float64(open), "conns-open-max")
	if open > limit {
		b.Errorf("%d connections open at once, more than the limit of %d", open, limit)
	}
	if conns > limit {
		// net/http's Transport drops a connection when the request's
		// writer goroutine has not reported the write done within 50 ms
		// of the response being read (persistConn.wroteRequest): on an
		// overloaded machine, scheduling delays get that long.
		b.Logf("%d connections accepted in all, %d over the limit of %d, never more than %d open at once: replaced, not added", conns, conns-limit, limit, open)
	}
}

// TestLLMBoundShort runs the LLM-bound shape small (50 concurrent runs,
// 5 ms per call, at most 20 calls in flight) and checks behaviour, not
// time: every run completes with the answer its prompts lead to, every
// call was made and asked for whole (no run is observed, so no reply is
// streamed: a reply cut mid-way can be asked for again), and neither
// connections nor calls in flight exceed the limit.
func TestLLMBoundShort(t *testing.T) {
	const runs, limit = 50, 20
	f := newLLMBoundFixture(t, runs, limit, 5*time.Millisecond, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.batch(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if want := runs * len(llmBoundCalls); len(reqs) != want {
		t.Errorf("%d calls, want %d", len(reqs), want)
	}
	for _, r := range reqs {
		if r.Stream {
			t.Errorf("a call of an unobserved run was streamed: %s", r.Body)
			break
		}
	}
	if c := f.srv.Connections(); c > limit {
		t.Errorf("%d connections, more than the limit of %d", c, limit)
	}
	if m := f.srv.MaxInFlight(); m > limit || m < 2 {
		t.Errorf("%d calls in flight at once, want 2 to %d", m, limit)
	}
	t.Logf("connections %d, max in flight %d", f.srv.Connections(), f.srv.MaxInFlight())
}

// TestLLMBoundKeepsConnections runs two batches with a limit above the
// 100 idle connections in all that http.DefaultTransport keeps
// (MaxIdleConns): with that default, the connections beyond 100 would be
// closed when idle and dialled again by the next batch.
func TestLLMBoundKeepsConnections(t *testing.T) {
	const runs, limit = 50, 150
	f := newLLMBoundFixture(t, runs, limit, 5*time.Millisecond, false)
	f.srv.KeepRequests(false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for range 2 {
		if err := f.batch(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c := f.srv.Connections(); c > limit {
		t.Errorf("%d connections, more than the limit of %d", c, limit)
	}
	if m := f.srv.MaxInFlight(); m > limit {
		t.Errorf("%d calls in flight at once, more than the limit of %d", m, limit)
	}
	t.Logf("connections %d, max in flight %d", f.srv.Connections(), f.srv.MaxInFlight())
}

// TestLLMBoundIdeal pins the ideal of the benchmark's sizes.
func TestLLMBoundIdeal(t *testing.T) {
	for _, c := range []struct {
		limit int
		want  time.Duration
	}{{1000, 750}, {2000, 500}, {2500, 450}, {5000, 350}, {10000, 300}, {100000, 300}} {
		if got := llmBoundIdeal(1000, c.limit, 50*time.Millisecond); got != c.want*time.Millisecond {
			t.Errorf("L=%d: ideal %v, want %v ms", c.limit, got, c.want)
		}
	}
}
