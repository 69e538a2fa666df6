package structured_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/structured"
)

// reply is one scripted answer of fakeModel: a text, or an error.
type reply struct {
	text   string
	err    error
	finish string // the Response's FinishReason
}

// fakeModel answers from a script, one reply per call, and keeps every
// request it was sent.
type fakeModel struct {
	mu      sync.Mutex
	script  []reply
	reqs    []*llm.Request
	streams bool // send the text as two chunks through onChunk
}

func (f *fakeModel) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	f.mu.Lock()
	cp := *req
	cp.Messages = append([]llm.Message(nil), req.Messages...)
	f.reqs = append(f.reqs, &cp)
	if len(f.script) == 0 {
		f.mu.Unlock()
		return nil, errors.New("fake: script exhausted")
	}
	r := f.script[0]
	f.script = f.script[1:]
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	if onChunk != nil {
		half := len(r.text) / 2
		for _, part := range []string{r.text[:half], r.text[half:]} {
			if err := onChunk(llm.Chunk{Text: part}); err != nil {
				return nil, err
			}
		}
	}
	return &llm.Response{
		Message:      llm.Message{Role: llm.Assistant, Content: r.text},
		Usage:        llm.Usage{InputTokens: 10, OutputTokens: 5},
		FinishReason: r.finish,
	}, nil
}

func script(texts ...string) *fakeModel {
	f := &fakeModel{}
	for _, t := range texts {
		f.script = append(f.script, reply{text: t})
	}
	return f
}

func field(name string, t flow.Type) *flow.Field { return &flow.Field{Name: name, Type: t} }

var intentType = flow.EnumOf("qa", "summarization", "not_clear")

func classify() []*flow.Field { return []*flow.Field{field("intent", intentType)} }

func request() *llm.Request {
	return &llm.Request{Model: "m", Messages: []llm.Message{
		{Role: llm.System, Content: "Classify the intent."},
		{Role: llm.User, Content: "What was revenue in 2019?"},
	}}
}

func TestValidFirstTime(t *testing.T) {
	m := script(`{"intent":"qa"}`)
	req := request()
	res, err := structured.Ask(context.Background(), m, req, classify(), structured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.FellBack || res.Attempts != 1 || len(res.Violations) != 0 || res.Err != nil {
		t.Fatalf("result %+v", res)
	}
	if got := res.Values["intent"]; got.Str() != "qa" {
		t.Errorf("intent = %v", got)
	}
	if res.Usage != (llm.Usage{InputTokens: 10, OutputTokens: 5}) {
		t.Errorf("usage = %+v", res.Usage)
	}
	if res.Extraction != structured.Whole {
		t.Errorf("extraction = %q", res.Extraction)
	}
	// The request sent carries the schema; the caller's request is untouched.
	sent := m.reqs[0]
	if !strings.Contains(string(sent.Schema), `"enum":["qa","summarization","not_clear"]`) {
		t.Errorf("schema sent: %s", sent.Schema)
	}
	if sent.SchemaName != structured.DefaultSchemaName {
		t.Errorf("schema name %q", sent.SchemaName)
	}
	if req.Schema != nil || len(req.Messages) != 2 {
		t.Errorf("Ask changed the caller's request: %+v", req)
	}
}

func TestInvalidThenRepaired(t *testing.T) {
	fields := []*flow.Field{
		field("intent", intentType),
		field("confidence", flow.TFloat),
		field("tags", flow.ListOf(flow.TString)),
		field("reasoning", flow.TString),
	}
	bad := `{"intent":"weather","confidence":"high","tags":["a",2],"extra":true}`
	good := `{"intent":"qa","confidence":0.9,"tags":["a","b"],"reasoning":"asks for a number"}`
	m := script(bad, good)
	res, err := structured.Ask(context.Background(), m, request(), fields, structured.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.FellBack || res.Attempts != 2 {
		t.Fatalf("attempts %d, fellback %v, violations %v", res.Attempts, res.FellBack, res.Violations)
	}
	if res.Usage != (llm.Usage{InputTokens: 20, OutputTokens: 10}) {
		t.Errorf("usage not summed: %+v", res.Usage)
	}
	if res.Values["confidence"].Float() != 0.9 || res.Values["tags"].Len() != 2 {
		t.Errorf("values %v", res.Values)
	}
	if len(m.reqs) != 2 {
		t.Fatalf("%d requests", len(m.reqs))
	}
	msgs := m.reqs[1].Messages
	if len(msgs) != 4 {
		t.Fatalf("repair request has %d messages, want 4: %+v", len(msgs), msgs)
	}
	if msgs[2].Role != llm.Assistant || msgs[2].Content != bad {
		t.Errorf("the bad reply is not in the conversation: %+v", msgs[2])
	}
	if msgs[3].Role != llm.User {
		t.Errorf("repair message role %q", msgs[3].Role)
	}
	want := `Your reply did not match the schema:
- /confidence: got string, want number
- /extra: property is not allowed (not in the schema)
- /intent: value must be one of "qa", "summarization", "not_clear"
- /reasoning: required property is missing
- /tags/1: got number, want string
Reply again with only the JSON.`
	if msgs[3].Content != want {
		t.Errorf("repair prompt:\n%s\nwant:\n%s", msgs[3].Content, want)
	}
}

func TestInvalidEveryTimeFallsBack(t *testing.T) {
	fields := []*flow.Field{
		field("intent", intentType),
		field("n", flow.TInt),
		field("ok", flow.TBool),
		field("s", flow.TString),
		field("l", flow.ListOf(flow.TInt)),
		field("note", flow.TString),
	}
	m := script(`{"intent":"x"}`, `{"intent":"y"}`, `{"intent":"z"}`)
	res, err := structured.Ask(context.Background(), m, request(), fields, structured.Options{
		Fallback: map[string]flow.Value{"intent": flow.StringValue("not_clear"), "note": flow.StringValue("model output unusable")},
	})
	if err != nil {
		t.Fatalf("fallback must not be an error: %v", err)
	}
	if !res.FellBack || res.Attempts != 3 {
		t.Fatalf("fellback %v attempts %d", res.FellBack, res.Attempts)
	}
	if len(res.Violations) == 0 || res.Violations[0].Path != "/intent" || !strings.Contains(res.Violations[0].Message, "must be one of") {
		t.Errorf("violations of the last reply: %v", res.Violations)
	}
	if res.Raw != `{"intent":"z"}` {
		t.Errorf("raw %q", res.Raw)
	}
	want := map[string]string{"intent": `"not_clear"`, "n": "0", "ok": "false", "s": `""`, "l": "[]", "note": `"model output unusable"`}
	for k, w := range want {
		if got := res.Values[k].String(); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}

	// Without a Fallback (the default) the same script is an *InvalidError.
	m = script(`{"intent":"x"}`, `{"intent":"y"}`, `{"intent":"z"}`)
	res, err = structured.Ask(context.Background(), m, request(), fields, structured.Options{})
	var ie *structured.InvalidError
	if !errors.As(err, &ie) || ie.Attempts != 3 || ie.Raw != `{"intent":"z"}` || !strings.Contains(err.Error(), "/intent: value must be one of") || res != nil {
		t.Errorf("default: got %v, %+v", err, res)
	}
}

// Falling back is asked for: an Enum output has no typed zero (its first
// value is an answer like any other), so a Fallback that leaves one out
// is a *ConfigError, and an empty (non-nil) Fallback falls back to the
// typed zeros of outputs that have one.
func TestFallbackNeedsEnumValues(t *testing.T) {
	_, err := structured.NewAsker(classify(), structured.Options{Fallback: map[string]flow.Value{}})
	var ce *structured.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "intent") || !strings.Contains(err.Error(), "Enum") {
		t.Errorf("a fallback without the Enum's value: got %v", err)
	}
	fields := []*flow.Field{field("n", flow.TInt), field("s", flow.TString)}
	res, err := structured.Ask(context.Background(), script(`{}`), request(), fields, structured.Options{MaxRepairs: -1, Fallback: map[string]flow.Value{}})
	if err != nil || !res.FellBack || res.Values["n"].Int() != 0 || res.Values["s"].Str() != "" || res.Values["s"].Kind() != flow.KindString {
		t.Errorf("empty fallback: %v %+v", err, res)
	}
}

// A reply cut at the token limit is not an answer: the model is re-asked,
// told it was cut and to answer shorter; cut every time, Ask fails with an
// *InvalidError that says so.
func TestCutReplyRepairedOrFails(t *testing.T) {
	m := &fakeModel{script: []reply{{text: `{"intent":"summa`, finish: llm.FinishLength}, {text: `{"intent":"qa"}`, finish: llm.FinishStop}}}
	res, err := structured.Ask(context.Background(), m, request(), classify(), structured.Options{})
	if err != nil || res.Values["intent"].Str() != "qa" || res.Attempts != 2 {
		t.Fatalf("cut then whole: %v %+v", err, res)
	}
	msgs := m.reqs[1].Messages
	if p := msgs[len(msgs)-1].Content; !strings.Contains(p, "cut at the token limit") || !strings.Contains(p, "shorter") {
		t.Errorf("the repair of a cut reply says: %q", p)
	}

	cut := reply{text: `{"intent":"su`, finish: llm.FinishLength}
	m = &fakeModel{script: []reply{cut, cut, cut}}
	_, err = structured.Ask(context.Background(), m, request(), classify(), structured.Options{})
	var ie *structured.InvalidError
	if !errors.As(err, &ie) || !ie.Truncated || !strings.Contains(err.Error(), "cut at the token limit") {
		t.Errorf("cut every time: %v", err)
	}
	// Even with a fallback, a cut reply is re-asked before falling back.
	m = &fakeModel{script: []reply{cut, {text: `{"intent":"qa"}`}}}
	res, err = structured.Ask(context.Background(), m, request(), classify(), structured.Options{Fallback: map[string]flow.Value{"intent": flow.StringValue("not_clear")}})
	if err != nil || res.FellBack || res.Values["intent"].Str() != "qa" {
		t.Errorf("cut with a fallback: %v %+v", err, res)
	}
}

func TestMaxRepairs(t *testing.T) {
	m := script(`{}`, `{}`, `{}`, `{}`, `{}`)
	res, _ := structured.Ask(context.Background(), m, request(), classify(), structured.Options{MaxRepairs: 4, Fallback: map[string]flow.Value{"intent": flow.StringValue("qa")}})
	if res.Attempts != 5 {
		t.Errorf("MaxRepairs 4: %d attempts", res.Attempts)
	}
	m = script(`{}`, `{"intent":"qa"}`)
	_, err := structured.Ask(context.Background(), m, request(), classify(), structured.Options{MaxRepairs: -1})
	var ie *structured.InvalidError
	if !errors.As(err, &ie) || ie.Attempts != 1 {
		t.Errorf("MaxRepairs -1: %v", err)
	}
}

func TestEnumClassify(t *testing.T) {
	for _, tc := range []struct{ reply, want string }{
		{`{"intent":"summarization"}`, "summarization"},
		{`{"intent": "not_clear"}`, "not_clear"},
	} {
		res, err := structured.Ask(context.Background(), script(tc.reply), request(), classify(), structured.Options{})
		if err != nil || res.FellBack {
			t.Fatalf("%s: %v %+v", tc.reply, err, res)
		}
		if got := res.Values["intent"].Str(); got != tc.want {
			t.Errorf("%s: got %q", tc.reply, got)
		}
	}
	// An intent outside the Enum, twice, then the fallback option.
	res, err := structured.Ask(context.Background(), script(`{"intent":"chitchat"}`, `{"intent":"chitchat"}`, `{"intent":"chitchat"}`),
		request(), classify(), structured.Options{Fallback: map[string]flow.Value{"intent": flow.StringValue("not_clear")}})
	if err != nil || !res.FellBack || res.Values["intent"].Str() != "not_clear" {
		t.Errorf("fallback enum: %v %+v", err, res)
	}
}

// reiterate is seed 003's ReiterateResult.
func reiterate() []*flow.Field {
	return []*flow.Field{
		field("main_goal", flow.TString),
		field("reasoning", flow.TString),
		field("user_query_text", flow.TAny),
		field("references_prior_results", flow.TBool),
		field("force_execute", flow.TBool),
	}
}

func TestReiterateResult(t *testing.T) {
	reply := "Here is the structured result:\n\n" +
		`{"main_goal": "Execute the provided Elasticsearch query", ` +
		`"reasoning": "The user pasted a query and asked to run it.", ` +
		`"user_query_text": "{\"query\": {\"match_all\": {}}}", ` +
		`"references_prior_results": false, "force_execute": true}` +
		"\n\nLet me know if you need anything else."
	res, err := structured.Ask(context.Background(), script(reply), request(), reiterate(), structured.Options{})
	if err != nil || res.FellBack {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Extraction != structured.Prose {
		t.Errorf("extraction %q, want prose", res.Extraction)
	}
	if !strings.Contains(res.Extraction.Describe(), "surrounding text") {
		t.Errorf("describe: %q", res.Extraction.Describe())
	}
	if got := res.Values["user_query_text"].Str(); got != `{"query": {"match_all": {}}}` {
		t.Errorf("user_query_text %q", got)
	}
	if !res.Values["force_execute"].Bool() || res.Values["references_prior_results"].Bool() {
		t.Errorf("bools %v", res.Values)
	}
	if res.Values["main_goal"].Str() != "Execute the provided Elasticsearch query" {
		t.Errorf("main_goal %v", res.Values["main_goal"])
	}

	// user_query_text is nullable (str | None).
	res, err = structured.Ask(context.Background(), script(`{"main_goal":"Show next page","reasoning":"r",
		"user_query_text":null,"references_prior_results":true,"force_execute":false}`), request(), reiterate(), structured.Options{})
	if err != nil || res.FellBack || !res.Values["user_query_text"].IsNull() || !res.Values["references_prior_results"].Bool() {
		t.Errorf("null user_query_text: %v %+v", err, res)
	}
}

func TestMalformedJSON(t *testing.T) {
	v, err := structured.Compile(json.RawMessage(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ reply, want string }{
		{`{"intent": "qa",}`, "malformed JSON at offset 16 (line 1, column 17): invalid character '}'"},
		{"{\n  \"a\": 1\n  \"b\": 2\n}", "malformed JSON at offset 13 (line 3, column 3): invalid character '\"' after object key:value pair"},
		{`{"intent": "qa"`, "malformed JSON at offset 15 (line 1, column 16)"},
		{"Sure! ```json\n{\"a\": tru}\n```", "malformed JSON at offset 23 (line 2, column 10): invalid character '}' in literal true"},
		{"I cannot answer that.", "the reply contains no JSON object"},
	} {
		r := v.Validate(tc.reply)
		if r.Valid() || len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, tc.want) {
			t.Errorf("%q: got %v, want %q", tc.reply, r.Violations, tc.want)
		}
	}
	// Through Ask: malformed, then repaired; the repair prompt quotes the error.
	m := script(`{"intent": "qa",}`, `{"intent": "qa"}`)
	res, err := structured.Ask(context.Background(), m, request(), classify(), structured.Options{})
	if err != nil || res.FellBack || res.Attempts != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if p := m.reqs[1].Messages[3].Content; !strings.Contains(p, "(root): malformed JSON at offset 16") {
		t.Errorf("repair prompt: %s", p)
	}
}

func TestFencedJSON(t *testing.T) {
	reply := "```json\n{\"intent\": \"summarization\"}\n```"
	res, err := structured.Ask(context.Background(), script(reply), request(), classify(), structured.Options{})
	if err != nil || res.FellBack {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Extraction != structured.Fenced || res.Values["intent"].Str() != "summarization" {
		t.Errorf("extraction %q values %v", res.Extraction, res.Values)
	}
	if string(res.JSON) != `{"intent": "summarization"}` {
		t.Errorf("JSON %s", res.JSON)
	}
	// Prose before the fence, and a fence without an info string.
	res, _ = structured.Ask(context.Background(), script("The answer:\n```\n{\"intent\":\"qa\"}\n```\nDone."), request(), classify(), structured.Options{})
	if res.FellBack || res.Extraction != structured.Fenced {
		t.Errorf("plain fence: %+v", res)
	}
}

func TestExtract(t *testing.T) {
	for _, tc := range []struct {
		reply, text string
		ext         structured.Extraction
	}{
		{` {"a":1} `, `{"a":1}`, structured.Whole},
		{`[1,2]`, `[1,2]`, structured.Whole},
		{`Result: {"a":"}{"} ok`, `{"a":"}{"}`, structured.Prose},
		{`use {braces} like {"a":{"b":[1]}}`, `{"a":{"b":[1]}}`, structured.Prose},
		{"```JSON\n{\"a\":1}\n```", `{"a":1}`, structured.Fenced},
	} {
		text, _, ext, ok := structured.Extract(tc.reply)
		if !ok || text != tc.text || ext != tc.ext {
			t.Errorf("%q: got %q %q %v, want %q %q", tc.reply, text, ext, ok, tc.text, tc.ext)
		}
	}
}

// A provider error fails Ask (a *CallError carrying the provider's
// message) unless a Fallback was asked for.
func TestProviderErrorIsAnError(t *testing.T) {
	perr := &llm.Error{Provider: "openai", Status: 503, Message: "overloaded", Retryable: true}
	m := &fakeModel{script: []reply{{err: perr}}}
	res, err := structured.Ask(context.Background(), m, request(), classify(), structured.Options{})
	var ce *structured.CallError
	var le *llm.Error
	if !errors.As(err, &ce) || !errors.As(err, &le) || ce.Attempt != 1 || le.Status != 503 || res != nil ||
		!strings.Contains(err.Error(), "openai: HTTP 503: overloaded") {
		t.Fatalf("a provider error must be an error: %v %+v", err, res)
	}

	// Asked for: the fallback, with the error kept.
	fb := structured.Options{Fallback: map[string]flow.Value{"intent": flow.StringValue("not_clear")}}
	m = &fakeModel{script: []reply{{err: perr}}}
	res, err = structured.Ask(context.Background(), m, request(), classify(), fb)
	if err != nil || !res.FellBack || !errors.As(res.Err, &le) || le.Status != 503 || res.Values["intent"].Str() != "not_clear" {
		t.Errorf("with a fallback: %v %+v", err, res)
	}

	// Invalid, then the repair call fails: both are kept.
	m = &fakeModel{script: []reply{{text: `{"intent":"x"}`}, {err: perr}}}
	res, err = structured.Ask(context.Background(), m, request(), classify(), fb)
	if err != nil || !res.FellBack || res.Err == nil || len(res.Violations) == 0 || res.Attempts != 2 {
		t.Errorf("invalid then error: %v %+v", err, res)
	}
}

func TestCancelledContextIsAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := structured.Ask(ctx, script(`{"intent":"qa"}`), request(), classify(), structured.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestStreamingAndChunkError(t *testing.T) {
	var got strings.Builder
	res, err := structured.Ask(context.Background(), script(`{"intent":"qa"}`), request(), classify(), structured.Options{
		OnChunk: func(c llm.Chunk) error { got.WriteString(c.Text); return nil },
	})
	if err != nil || res.FellBack || got.String() != `{"intent":"qa"}` {
		t.Errorf("streamed %q: %v %+v", got.String(), err, res)
	}
	stop := errors.New("enough")
	_, err = structured.Ask(context.Background(), script(`{"intent":"qa"}`), request(), classify(), structured.Options{
		OnChunk: func(llm.Chunk) error { return stop },
	})
	if !errors.Is(err, stop) {
		t.Errorf("onChunk error: got %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, call := range map[string]func() error{
		"no model": func() error {
			_, err := structured.Ask(context.Background(), nil, request(), classify(), structured.Options{})
			return err
		},
		"no request": func() error {
			_, err := structured.Ask(context.Background(), script(), nil, classify(), structured.Options{})
			return err
		},
		"empty enum": func() error {
			_, err := structured.Ask(context.Background(), script(), request(), []*flow.Field{field("e", flow.EnumOf())}, structured.Options{})
			return err
		},
		"unknown fallback": func() error {
			_, err := structured.Ask(context.Background(), script(), request(), classify(),
				structured.Options{Fallback: map[string]flow.Value{"nope": flow.Null}})
			return err
		},
		"fallback outside the enum": func() error {
			_, err := structured.Ask(context.Background(), script(), request(), classify(),
				structured.Options{Fallback: map[string]flow.Value{"intent": flow.StringValue("x")}})
			return err
		},
	} {
		var ce *structured.ConfigError
		if err := call(); !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want a *ConfigError", name, err)
		}
	}
	if _, err := structured.Compile(json.RawMessage(`{"type": 12}`)); err == nil {
		t.Error("Compile accepted a bad schema")
	} else {
		var se *structured.SchemaError
		if !errors.As(err, &se) {
			t.Errorf("Compile: %T %v", err, err)
		}
	}
}

func TestDecodeOverflowIsAViolation(t *testing.T) {
	// Valid against {"type":"integer"} but too big for an Int: re-asked.
	m := script(`{"n": 1e30}`, `{"n": 7}`)
	res, err := structured.Ask(context.Background(), m, request(), []*flow.Field{field("n", flow.TInt)}, structured.Options{})
	if err != nil || res.FellBack || res.Values["n"].Int() != 7 {
		t.Fatalf("%v %+v", err, res)
	}
	if p := m.reqs[1].Messages[3].Content; !strings.Contains(p, "- /n: want Int") {
		t.Errorf("repair prompt: %s", p)
	}
}

func TestToolCallReply(t *testing.T) {
	m := &toolCallModel{args: `{"intent":"qa"}`}
	res, err := structured.Ask(context.Background(), m, request(), classify(), structured.Options{})
	if err != nil || res.FellBack || res.Values["intent"].Str() != "qa" {
		t.Errorf("%v %+v", err, res)
	}
}

// toolCallModel answers with one tool call and no text, as a provider may
// carry structured output.
type toolCallModel struct{ args string }

func (m *toolCallModel) Chat(context.Context, *llm.Request, func(llm.Chunk) error) (*llm.Response, error) {
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{
		{ID: "1", Name: "output", Arguments: json.RawMessage(m.args)},
	}}}, nil
}

func TestConcurrentAsk(t *testing.T) {
	v, err := structured.Compile(json.RawMessage(`{"type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := v.Validate(`{"b":1}`)
			if i%2 == 0 {
				r = v.Validate(`{"a":1}`)
				if !r.Valid() {
					t.Errorf("valid reply rejected: %v", r.Violations)
				}
				return
			}
			if r.Valid() || r.Violations[0].Path != "/a" {
				t.Errorf("violations %v", r.Violations)
			}
		}()
	}
	wg.Wait()
}

// An Asker made once answers many calls, concurrently, as Ask does: the
// schema it sends is Ask's, each call streams to its own onChunk, and a
// reply that never fits falls back to the Asker's fallback values.
func TestAskerReused(t *testing.T) {
	a, err := structured.NewAsker(classify(), structured.Options{MaxRepairs: -1, Fallback: map[string]flow.Value{"intent": flow.StringValue("not_clear")}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	m := &fakeModel{}
	for i := range n {
		text := `{"intent": "qa"}`
		if i%2 == 1 {
			text = `{"intent": "nonsense"}`
		}
		m.script = append(m.script, reply{text: text})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chunks := 0
			res, err := a.Ask(context.Background(), m, request(), func(llm.Chunk) error { chunks++; return nil })
			if err != nil {
				t.Error(err)
				return
			}
			if chunks != 2 {
				t.Errorf("onChunk got %d chunks, want 2", chunks)
			}
			mu.Lock()
			got[res.Values["intent"].Str()]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if got["qa"] != n/2 || got["not_clear"] != n/2 {
		t.Errorf("answers = %v, want %d qa and %d fallbacks", got, n/2, n/2)
	}
	m.streams = false
	res, err := structured.Ask(context.Background(), script(`{"intent": "qa"}`), request(), classify(), structured.Options{})
	if err != nil || string(m.reqs[0].Schema) != string(a.Schema()) || res.Values["intent"].Str() != "qa" {
		t.Errorf("Ask and the Asker disagree: %v, schema %s vs %s", err, m.reqs[0].Schema, a.Schema())
	}
	if _, err := structured.NewAsker([]*flow.Field{field("x", flow.TInt)}, structured.Options{Fallback: map[string]flow.Value{"x": flow.StringValue("no")}}); err == nil {
		t.Error("a fallback of the wrong type was accepted")
	}
}

// A repair quotes a huge bad reply clipped: its first and last
// RepairQuoteBytes bytes and a line saying how many were cut, not the
// whole reply again on every attempt.
func TestRepairClipsHugeReply(t *testing.T) {
	huge := `{"intent":"` + strings.Repeat("é", 500_000) + `"}` // 1 MB, not an allowed intent
	m := script(huge, huge, `{"intent":"qa"}`)
	res, err := structured.Ask(context.Background(), m, request(), classify(), structured.Options{})
	if err != nil || res.FellBack || res.Attempts != 3 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	for i, r := range m.reqs[1:] {
		var size int
		for _, msg := range r.Messages {
			size += len(msg.Content)
		}
		if size > 16<<10 {
			t.Errorf("repair %d sends %d bytes of messages", i+1, size)
		}
		quoted := r.Messages[len(r.Messages)-2]
		if quoted.Role != llm.Assistant {
			t.Fatalf("repair %d: message %+v is not the bad reply", i+1, quoted)
		}
		// The marker says how many bytes it stands for: the quote and the
		// cut add up to the reply, cut at rune boundaries.
		mk := regexp.MustCompile(`\n\[\.\.\. (\d+) bytes cut \.\.\.\]\n`).FindStringSubmatch(quoted.Content)
		if mk == nil {
			t.Fatalf("repair %d quotes %.80q... without a cut marker", i+1, quoted.Content)
		}
		n, _ := strconv.Atoi(mk[1])
		kept := len(quoted.Content) - len(mk[0])
		if kept+n != len(huge) || kept > 2*structured.RepairQuoteBytes || kept < 2*structured.RepairQuoteBytes-4 ||
			!strings.HasPrefix(quoted.Content, `{"intent":"éé`) || !strings.HasSuffix(quoted.Content, `éé"}`) ||
			!utf8.ValidString(quoted.Content) {
			t.Errorf("repair %d quotes %d bytes and cuts %d of %d: %.80q...%q", i+1, kept, n, len(huge), quoted.Content,
				quoted.Content[max(0, len(quoted.Content)-40):])
		}
		if p := r.Messages[len(r.Messages)-1].Content; len(p) > 4<<10 {
			t.Errorf("repair prompt of %d bytes", len(p))
		}
	}
	if s := structured.ClipQuote("short"); s != "short" {
		t.Errorf("ClipQuote of a short text: %q", s)
	}
}
