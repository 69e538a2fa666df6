package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/replay"
)

// echoModel answers every request deterministically from its last message,
// streaming the answer in three chunks; "fail" gives a provider error and
// "tool" a tool call. It counts its calls and is safe for concurrent use.
type echoModel struct {
	mu    sync.Mutex
	calls int
}

func (m *echoModel) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	last := req.Messages[len(req.Messages)-1].Content
	switch last {
	case "fail":
		return nil, &llm.Error{Provider: "openai", Status: 503, Message: "overloaded", Retryable: true, RetryAfter: 2 * time.Second}
	case "tool":
		tc := llm.ToolCall{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"q":"maersk"}`)}
		if onChunk != nil {
			for _, d := range []llm.ToolCallDelta{{Index: 0, ID: "call_1", Name: "search"}, {Index: 0, Arguments: `{"q":`}, {Index: 0, Arguments: `"maersk"}`}} {
				if err := onChunk(llm.Chunk{ToolCall: &d}); err != nil {
					return nil, err
				}
			}
		}
		return &llm.Response{Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{tc}}, FinishReason: "tool_calls", Model: req.Model}, nil
	}
	text := fmt.Sprintf("reply %d to %s", n, last)
	if onChunk != nil {
		for _, part := range []string{text[:3], text[3:7], text[7:]} {
			if err := onChunk(llm.Chunk{Text: part}); err != nil {
				return nil, err
			}
		}
	}
	return &llm.Response{
		Message:      llm.Message{Role: llm.Assistant, Content: text},
		Usage:        llm.Usage{InputTokens: 7, OutputTokens: n},
		FinishReason: "stop",
		Model:        req.Model,
	}, nil
}

func temp(f float64) *float64 { return &f }

func req(msgs ...string) *llm.Request {
	r := &llm.Request{Model: "llama3.1", Temperature: temp(0.2), Messages: []llm.Message{{Role: llm.System, Content: "You answer questions about shipments."}}}
	for _, m := range msgs {
		r.Messages = append(r.Messages, llm.Message{Role: llm.User, Content: m})
	}
	return r
}

// outcome is what a caller sees of one call.
type outcome struct {
	Resp   *llm.Response
	Chunks []llm.Chunk
	Err    string
}

func call(t *testing.T, m llm.Model, r *llm.Request, stream bool) outcome {
	t.Helper()
	var o outcome
	var onChunk func(llm.Chunk) error
	if stream {
		onChunk = func(c llm.Chunk) error { o.Chunks = append(o.Chunks, c); return nil }
	}
	resp, err := m.Chat(context.Background(), r, onChunk)
	o.Resp = resp
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

func TestRecordThenReplay(t *testing.T) {
	schemaReq := req("classify: show me more")
	schemaReq.Schema = json.RawMessage(`{"type":"object","required":["intent"],"properties":{"intent":{"enum":["qa","more"]}}}`)
	schemaReq.SchemaName = "output"
	script := []struct {
		r      *llm.Request
		stream bool
	}{
		{req("Show me Maersk shipments to LA"), true},
		{req("Show me Maersk shipments to LA"), true}, // identical: answered in recorded order
		{req("tool"), true},
		{req("fail"), false},
		{req("no streaming"), false},
		{schemaReq, true},
	}
	var file bytes.Buffer
	rec := replay.NewRecorder(&echoModel{}, &file)
	var want []outcome
	for _, s := range script {
		want = append(want, call(t, rec, s.r, s.stream))
	}
	if want[0].Resp.Message.Content == want[1].Resp.Message.Content {
		t.Fatal("the fake should answer identical requests differently")
	}
	if n := strings.Count(file.String(), "\n"); n != len(script) {
		t.Fatalf("%d lines recorded, want %d:\n%s", n, len(script), file.String())
	}
	if strings.Contains(file.String(), "key") {
		t.Errorf("the recording mentions a key:\n%s", file.String())
	}

	p, err := replay.Open(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != len(script) || p.Remaining() != len(script) {
		t.Fatalf("Len %d Remaining %d", p.Len(), p.Remaining())
	}
	for i, s := range script {
		got := call(t, p, s.r, s.stream)
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("exchange %d:\nreplayed %+v\nrecorded %+v", i, got, want[i])
		}
	}
	if p.Remaining() != 0 {
		t.Errorf("%d exchanges not served", p.Remaining())
	}

	// The recorded provider error comes back as an *llm.Error.
	p, _ = replay.Open(bytes.NewReader(file.Bytes()))
	_, err = p.Chat(context.Background(), req("fail"), nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 503 || !le.Retryable || le.RetryAfter != 2*time.Second || le.Provider != "openai" {
		t.Errorf("recorded error: %#v", err)
	}

	// A reply recorded without streaming is sent as one chunk when asked.
	got := call(t, p, req("no streaming"), true)
	if len(got.Chunks) != 1 || got.Chunks[0].Text != got.Resp.Message.Content {
		t.Errorf("synthesised chunks: %+v", got.Chunks)
	}

	// The schema matches whatever the order of its keys.
	reordered := *schemaReq
	reordered.Schema = json.RawMessage(`{"properties":{"intent":{"enum":["qa","more"]}},  "required":["intent"],"type":"object"}`)
	if _, err := p.Chat(context.Background(), &reordered, nil); err != nil {
		t.Errorf("reordered schema: %v", err)
	}
}

func TestMissShowsClosest(t *testing.T) {
	var file bytes.Buffer
	rec := replay.NewRecorder(&echoModel{}, &file)
	call(t, rec, req("What is a shipment?"), false)
	call(t, rec, req("Show me Maersk shipments to LA", "and the next page"), false)
	call(t, rec, &llm.Request{Model: "other", Messages: []llm.Message{{Role: llm.User, Content: "unrelated"}}}, false)
	p, err := replay.Open(&file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Chat(context.Background(), req("Show me Maersk shipments to NY", "and the next page"), nil)
	var me *replay.MissError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MissError", err)
	}
	if me.ClosestLine != 2 || me.Closest == nil || me.Closest.Messages[1].Content != "Show me Maersk shipments to LA" {
		t.Errorf("closest: line %d %+v", me.ClosestLine, me.Closest)
	}
	wantWhere := `messages[1].content differs at character 29: recorded "…Maersk shipments to LA", requested "…Maersk shipments to NY"`
	if me.Where != wantWhere {
		t.Errorf("where:\n%s\nwant\n%s", me.Where, wantWhere)
	}
	msg := err.Error()
	for _, want := range []string{
		`replay: no recorded exchange matches the request (model "llama3.1", 3 message(s))`,
		"closest recorded request: line 2\nfirst difference: messages[1].content differs at character 29",
		"--- recorded (line 2)\n+++ requested\n@@ ",
		`-      "content": "Show me Maersk shipments to LA",`,
		`+      "content": "Show me Maersk shipments to NY",`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("the error reads:\n%s", msg)

	// Other kinds of difference.
	for _, tc := range []struct {
		r    *llm.Request
		want string
	}{
		{func() *llm.Request { r := req("What is a shipment?"); r.Temperature = temp(0.7); return r }(), "temperature: recorded 0.2, requested 0.7"},
		{func() *llm.Request { r := req("What is a shipment?"); r.Model = "llama3.2"; return r }(), `model differs at character 8`},
		{req("What is a shipment?", "more"), "messages: recorded 2 element(s), requested 3"},
		{func() *llm.Request { r := req("What is a shipment?"); r.MaxTokens = 100; return r }(), "max_tokens: not in the recorded request; requested 100"},
	} {
		_, err := p.Chat(context.Background(), tc.r, nil)
		if !errors.As(err, &me) || !strings.Contains(me.Where, tc.want) {
			t.Errorf("got %v\nwant where containing %q", err, tc.want)
		}
	}
}

func TestMissExhaustedAndEmpty(t *testing.T) {
	var file bytes.Buffer
	rec := replay.NewRecorder(&echoModel{}, &file)
	call(t, rec, req("once"), false)
	p, _ := replay.Open(&file)
	if o := call(t, p, req("once"), false); o.Err != "" {
		t.Fatal(o.Err)
	}
	_, err := p.Chat(context.Background(), req("once"), nil)
	var me *replay.MissError
	if !errors.As(err, &me) || me.Served != 1 || !strings.Contains(err.Error(), "recorded 1 time(s) and every recorded reply was already served") {
		t.Errorf("exhausted: %v", err)
	}
	empty, err := replay.Open(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = empty.Chat(context.Background(), req("x"), nil)
	if !errors.As(err, &me) || me.Closest != nil || !strings.Contains(err.Error(), "the recording is empty") {
		t.Errorf("empty: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
	}{
		{"{\"request\":{\"model\":\"m\",\"messages\":[]},\"response\":{}}\n\nnot json\n", 3},
		{"{\"response\":{}}\n", 1},
		{"{\"request\":{\"model\":\"m\",\"messages\":[]}}\n", 1},
	} {
		_, err := replay.Open(strings.NewReader(tc.text))
		var fe *replay.FormatError
		if !errors.As(err, &fe) || fe.Line != tc.line {
			t.Errorf("%q: got %v, want a *FormatError at line %d", tc.text, err, tc.line)
		}
	}
	if _, err := replay.OpenFile(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := replay.NewRecorder(&echoModel{}, f)
	want := call(t, rec, req("hello"), true)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := replay.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, p, req("hello"), true); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v want %+v", got, want)
	}
}

func TestCallerStopsAreNotRecorded(t *testing.T) {
	var file bytes.Buffer
	rec := replay.NewRecorder(&echoModel{}, &file)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rec.Chat(ctx, req("x"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	stop := errors.New("stop")
	if _, err := rec.Chat(context.Background(), req("y"), func(llm.Chunk) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("onChunk error: %v", err)
	}
	if file.Len() != 0 {
		t.Errorf("recorded:\n%s", file.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRecordError(t *testing.T) {
	rec := replay.NewRecorder(&echoModel{}, failingWriter{})
	_, err := rec.Chat(context.Background(), req("x"), nil)
	var re *replay.RecordError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v", err)
	}
}

// lockedBuffer is a bytes.Buffer safe for the concurrent test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func TestConcurrent(t *testing.T) {
	const workers, each = 8, 10
	var file lockedBuffer
	rec := replay.NewRecorder(&echoModel{}, &file)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := rec.Chat(context.Background(), req(fmt.Sprintf("w%d q%d", w, i)), func(llm.Chunk) error { return nil }); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	p, err := replay.Open(bytes.NewReader(file.b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != workers*each {
		t.Fatalf("%d exchanges recorded", p.Len())
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var text strings.Builder
				resp, err := p.Chat(context.Background(), req(fmt.Sprintf("w%d q%d", w, i)), func(c llm.Chunk) error { text.WriteString(c.Text); return nil })
				if err != nil {
					t.Error(err)
					continue
				}
				if !strings.HasSuffix(resp.Message.Content, fmt.Sprintf(" to w%d q%d", w, i)) || text.String() != resp.Message.Content {
					t.Errorf("w%d q%d: %q / %q", w, i, resp.Message.Content, text.String())
				}
			}
		}()
	}
	wg.Wait()
	if p.Remaining() != 0 {
		t.Errorf("%d not served", p.Remaining())
	}
}

// TestReplayIsAModel checks that both sides satisfy llm.Model.
func TestReplayIsAModel(t *testing.T) {
	var _ llm.Model = replay.NewRecorder(&echoModel{}, &bytes.Buffer{})
	var m llm.Model
	m, err := replay.Open(strings.NewReader(""))
	if err != nil || m == nil {
		t.Fatal(err)
	}
}

// failModel fails every call with its error.
type failModel struct{ err error }

func (m failModel) Chat(context.Context, *llm.Request, func(llm.Chunk) error) (*llm.Response, error) {
	return nil, m.err
}

// A recorded error keeps its kind: a replayed run fails as the live one.
func TestRecordedErrorKeepsKind(t *testing.T) {
	var file bytes.Buffer
	rec := replay.NewRecorder(failModel{&llm.Error{Provider: "ollama", Kind: llm.KindReplyTooLarge, Message: "reply longer than the limit of 8388608 bytes"}}, &file)
	if _, err := rec.Chat(context.Background(), req("big"), nil); !errors.Is(err, llm.ErrReplyTooLarge) {
		t.Fatalf("live error %v", err)
	}
	p, err := replay.Open(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Chat(context.Background(), req("big"), nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindReplyTooLarge || !errors.Is(err, llm.ErrReplyTooLarge) || le.Provider != "ollama" {
		t.Errorf("replayed error %#v", err)
	}
}
