package modelcall

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/structured"
)

// replies is a model answering with its replies in order.
type replies []string

func (r *replies) Chat(ctx context.Context, _ *llm.Request, _ func(llm.Chunk) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(*r) == 0 {
		return nil, errors.New("no more replies")
	}
	text := (*r)[0]
	*r = (*r)[1:]
	return &llm.Response{Message: llm.Message{Role: llm.Assistant, Content: text}}, nil
}

func TestStripThinking(t *testing.T) {
	for in, want := range map[string]string{
		"answer":                              "answer",
		"<think>hmm</think>answer":            "answer",
		"a<think>x</think>b<think>y</think>c": "abc",
		"text<think>never closed":             "text",
	} {
		if got := StripThinking(in); got != want {
			t.Errorf("StripThinking(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChat(t *testing.T) {
	m := &replies{"<think>plan</think>  The answer. ", "<think>only thinking</think>"}
	c := &Caller{Model: m}
	got, err := c.Chat(context.Background(), c.Request("sys", "user"))
	if err != nil || got != "The answer." {
		t.Fatalf("Chat = %q, %v", got, err)
	}
	if _, err := c.Chat(context.Background(), c.Request("sys", "user")); !errors.Is(err, ErrNoText) {
		t.Errorf("empty reply: err = %v, want ErrNoText", err)
	}
}

func TestAskReportsFallbackAsError(t *testing.T) {
	fields := []*flow.Field{{Name: "n", Type: flow.TInt}}
	m := &replies{`{"n": 3}`, "not json", "still not json", "nor this"}
	c := &Caller{Model: m, MaxRepairs: 2}
	vals, err := c.Ask(context.Background(), c.Request("sys", "give n"), fields)
	if err != nil || vals["n"].Int() != 3 {
		t.Fatalf("Ask = %v, %v", vals, err)
	}
	_, err = c.Ask(context.Background(), c.Request("sys", "give n"), fields)
	var ie *structured.InvalidError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "the reply did not match the schema after 3 attempt(s)") {
		t.Errorf("fallback: err = %v", err)
	}
}

func TestContextBoundsACall(t *testing.T) {
	c := &Caller{Timeout: time.Millisecond}
	ctx, cancel := c.Context(context.Background())
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("no deadline with a Timeout")
	}
	ctx2, cancel2 := (&Caller{}).Context(context.Background())
	defer cancel2()
	if _, ok := ctx2.Deadline(); ok {
		t.Error("a deadline without a Timeout")
	}
}
