package anthropic

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/internal/wire"
	"github.com/weftlang/weft/llm/llmtest"
)

// fuzzCap is the reply limit of the fuzz targets: small, so that long
// inputs meet it.
const fuzzCap = 32 << 10

// checkErr fails t unless err is an *llm.Error whose text is valid UTF-8.
func checkErr(t *testing.T, body []byte, err error) {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("body %.200q: error %v (%T) is not an *llm.Error", body, err, err)
	}
	if !utf8.ValidString(err.Error()) {
		t.Fatalf("body %.200q: error text %q is not valid UTF-8", body, err)
	}
}

// FuzzReadStream feeds streamed bodies, hostile ones first, to
// readStream: it never panics; it fails with an *llm.Error of valid
// UTF-8, or returns the text its chunks delivered, as valid UTF-8.
func FuzzReadStream(f *testing.F) {
	for _, b := range llmtest.HostileBodies(llmtest.Anthropic, true) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var text strings.Builder
		onChunk := func(c llm.Chunk) error {
			if !utf8.ValidString(c.Text) {
				t.Fatalf("body %.200q: chunk text %q is not valid UTF-8", data, c.Text)
			}
			text.WriteString(c.Text)
			return nil
		}
		resp := &llm.Response{}
		body := wire.Cap(bytes.NewReader(data), fuzzCap)
		if err := readStream(context.Background(), body, resp, nil, onChunk); err != nil {
			checkErr(t, data, err)
			return
		}
		if resp.Message.Content != text.String() || !utf8.ValidString(resp.Message.Content) {
			t.Fatalf("body %.200q: content %q, chunks %q", data, resp.Message.Content, text.String())
		}
	})
}

// FuzzReadWhole is FuzzReadStream for whole replies.
func FuzzReadWhole(f *testing.F) {
	for _, b := range llmtest.HostileBodies(llmtest.Anthropic, false) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp := &llm.Response{}
		body := wire.Cap(bytes.NewReader(data), fuzzCap)
		err := readWhole(context.Background(), body, resp, nil)
		if len(data) > fuzzCap {
			if !errors.Is(err, llm.ErrReplyTooLarge) {
				t.Fatalf("a reply of %d bytes past the %d-byte limit gave %v", len(data), fuzzCap, err)
			}
			return
		}
		if err != nil {
			checkErr(t, data, err)
			return
		}
		if !utf8.ValidString(resp.Message.Content) {
			t.Fatalf("body %.200q: content %q is not valid UTF-8", data, resp.Message.Content)
		}
	})
}

// hostileLines returns the lines of the hostile streamed bodies, without
// an SSE field name, as seeds for the event fuzzers.
func hostileLines() [][]byte {
	var out [][]byte
	for _, b := range llmtest.HostileBodies(llmtest.Anthropic, true) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			out = append(out, bytes.TrimPrefix(l, []byte("data: ")))
		}
	}
	return out
}
