// Package replay records a model's exchanges to a file and serves them back,
// so that a run can be repeated offline and deterministically.
//
// A Recorder wraps a model and writes one JSON line per exchange: the
// request, the full response (or the provider's error) and the sequence of
// streamed chunks. A Player reads such a file and answers each request with
// the recorded response of an identical request, replaying the chunks
// through onChunk. Requests are compared by their canonical JSON (model,
// messages, tools, schema, temperature and every other field, object keys
// sorted), so a schema written with its keys in another order still
// matches. Identical requests recorded several times are answered in
// recorded order. A request that is not in the file fails with a
// *MissError that shows the closest recorded request and where it differs.
//
// An llm.Request carries no credentials (API keys live in the providers),
// so none can reach a recording.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/weftlang/weft/llm"
)

// record is one line of a recording.
type record struct {
	Request  *llm.Request    `json:"request"`
	Response json.RawMessage `json:"response,omitempty"` // an *llm.Response
	Chunks   json.RawMessage `json:"chunks,omitempty"`   // a []llm.Chunk, when the reply was streamed
	Error    *recordedError  `json:"error,omitempty"`    // the call failed
}

// recordedError is a provider error as recorded.
type recordedError struct {
	Provider     string        `json:"provider,omitempty"`
	Kind         llm.ErrorKind `json:"kind,omitempty"`
	Status       int           `json:"status,omitempty"`
	Message      string        `json:"message"`
	Retryable    bool          `json:"retryable,omitempty"`
	RetryAfterMS int64         `json:"retry_after_ms,omitempty"`
}

// RecordError reports that an exchange could not be written to the
// recording. The model's reply is lost to the caller too: a recording with
// holes would not replay.
type RecordError struct {
	Err error
}

// Error describes the problem.
func (e *RecordError) Error() string { return "replay: recording failed: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *RecordError) Unwrap() error { return e.Err }

// Recorder is an llm.Model that passes every call to another model and
// writes the exchange to a writer. It is safe for concurrent use: each
// exchange is one line, written whole once the call has finished.
type Recorder struct {
	m  llm.Model
	mu sync.Mutex
	w  io.Writer
}

// NewRecorder returns a Recorder that records the exchanges of m to w as
// JSON lines.
func NewRecorder(m llm.Model, w io.Writer) *Recorder {
	return &Recorder{m: m, w: w}
}

// Chat calls the wrapped model and records the exchange. Calls cut short by
// the caller (a cancelled ctx, an error from onChunk) are not recorded:
// they say nothing about the model.
func (r *Recorder) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	var chunks []llm.Chunk
	var chunkErr error
	wrapped := onChunk
	if onChunk != nil {
		wrapped = func(c llm.Chunk) error {
			if c.ToolCall != nil {
				d := *c.ToolCall
				c.ToolCall = &d
			}
			chunks = append(chunks, c)
			if err := onChunk(c); err != nil {
				chunkErr = err
				return err
			}
			return nil
		}
	}
	resp, err := r.m.Chat(ctx, req, wrapped)
	if err != nil && (chunkErr != nil || ctx.Err() != nil) {
		return resp, err
	}
	rec := record{Request: req}
	if err != nil {
		rec.Error = toRecorded(err)
	} else {
		raw, merr := json.Marshal(resp)
		if merr != nil {
			return nil, &RecordError{Err: merr}
		}
		rec.Response = raw
		if chunks != nil {
			if rec.Chunks, merr = json.Marshal(chunks); merr != nil {
				return nil, &RecordError{Err: merr}
			}
		}
	}
	if werr := r.write(&rec); werr != nil {
		return nil, werr
	}
	return resp, err
}

// write appends one record to the recording, as one line.
func (r *Recorder) write(rec *record) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil { // Encode ends the line
		return &RecordError{Err: err}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(buf.Bytes()); err != nil {
		return &RecordError{Err: err}
	}
	return nil
}

// toRecorded keeps what a replay needs of a provider error.
func toRecorded(err error) *recordedError {
	var le *llm.Error
	if errors.As(err, &le) {
		msg := le.Message
		if msg == "" && le.Err != nil {
			msg = le.Err.Error()
		}
		return &recordedError{
			Provider:     le.Provider,
			Kind:         le.Kind,
			Status:       le.Status,
			Message:      msg,
			Retryable:    le.Retryable,
			RetryAfterMS: le.RetryAfter.Milliseconds(),
		}
	}
	return &recordedError{Message: err.Error()}
}

// toError rebuilds the provider error of a recording.
func (e *recordedError) toError() error {
	prov := e.Provider
	if prov == "" {
		prov = "replay"
	}
	return &llm.Error{
		Provider:   prov,
		Kind:       e.Kind,
		Status:     e.Status,
		Message:    e.Message,
		Retryable:  e.Retryable,
		RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond,
	}
}

// FormatError reports a line of a recording that cannot be read.
type FormatError struct {
	Line int
	Err  error
}

// Error names the line.
func (e *FormatError) Error() string {
	return fmt.Sprintf("replay: line %d: %v", e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *FormatError) Unwrap() error { return e.Err }

// entry is one recorded exchange.
type entry struct {
	line   int
	req    *llm.Request
	key    string // canonical JSON of req
	rec    record
	served bool
}

// Player is an llm.Model that answers from a recording. It is safe for
// concurrent use.
type Player struct {
	mu      sync.Mutex
	entries []*entry            // in file order
	byKey   map[string][]*entry // identical requests, in file order
}

// Open reads a recording written by a Recorder.
func Open(r io.Reader) (*Player, error) {
	p := &Player{byKey: map[string][]*entry{}}
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		text, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &FormatError{Line: line, Err: err}
		}
		if t := bytes.TrimSpace(text); len(t) > 0 {
			e := &entry{line: line}
			dec := json.NewDecoder(bytes.NewReader(t))
			if derr := dec.Decode(&e.rec); derr != nil {
				return nil, &FormatError{Line: line, Err: derr}
			}
			if e.rec.Request == nil {
				return nil, &FormatError{Line: line, Err: errors.New("no request")}
			}
			if e.rec.Response == nil && e.rec.Error == nil {
				return nil, &FormatError{Line: line, Err: errors.New("neither a response nor an error")}
			}
			key, kerr := canonical(e.rec.Request)
			if kerr != nil {
				return nil, &FormatError{Line: line, Err: kerr}
			}
			e.req, e.key = e.rec.Request, string(key)
			p.entries = append(p.entries, e)
			p.byKey[e.key] = append(p.byKey[e.key], e)
		}
		if errors.Is(err, io.EOF) {
			return p, nil
		}
	}
}

// OpenFile reads a recording from a file.
func OpenFile(path string) (*Player, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Open(f)
}

// Len returns the number of recorded exchanges.
func (p *Player) Len() int { return len(p.entries) }

// Remaining returns the number of recorded exchanges not served yet.
func (p *Player) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.entries {
		if !e.served {
			n++
		}
	}
	return n
}

// Chat answers req with the first unserved exchange recorded for an
// identical request: its chunks go through onChunk (a reply recorded
// without streaming is sent as one chunk), then its response or its error
// is returned. A request that was never recorded, or whose recorded
// replies were all served, is a *MissError.
func (p *Player) Chat(ctx context.Context, req *llm.Request, onChunk func(llm.Chunk) error) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		return nil, &MissError{}
	}
	key, err := canonical(req)
	if err != nil {
		return nil, &MissError{Request: req, Where: "the request cannot be encoded: " + err.Error()}
	}
	p.mu.Lock()
	var e *entry
	same := p.byKey[string(key)]
	for _, c := range same {
		if !c.served {
			e = c
			c.served = true
			break
		}
	}
	p.mu.Unlock()
	if e == nil {
		return nil, p.miss(req, key, len(same))
	}
	if e.rec.Error != nil {
		return nil, e.rec.Error.toError()
	}
	var resp llm.Response
	if err := json.Unmarshal(e.rec.Response, &resp); err != nil {
		return nil, &FormatError{Line: e.line, Err: err}
	}
	if onChunk != nil {
		chunks, err := e.chunks(&resp)
		if err != nil {
			return nil, err
		}
		for _, c := range chunks {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := onChunk(c); err != nil {
				return nil, err
			}
		}
	}
	return &resp, nil
}

// chunks returns the recorded chunks, or the response as chunks when the
// reply was recorded without streaming.
func (e *entry) chunks(resp *llm.Response) ([]llm.Chunk, error) {
	if e.rec.Chunks != nil {
		var cs []llm.Chunk
		if err := json.Unmarshal(e.rec.Chunks, &cs); err != nil {
			return nil, &FormatError{Line: e.line, Err: err}
		}
		return cs, nil
	}
	var cs []llm.Chunk
	if resp.Message.Content != "" {
		cs = append(cs, llm.Chunk{Text: resp.Message.Content})
	}
	for i, tc := range resp.Message.ToolCalls {
		cs = append(cs, llm.Chunk{ToolCall: &llm.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)}})
	}
	return cs, nil
}

// canonical returns the canonical JSON of a request: every field, object
// keys sorted at every depth (schemas and tool arguments included), numbers
// as written.
func canonical(req *llm.Request) ([]byte, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return canonicalJSON(raw, "")
}

// canonicalJSON re-encodes JSON with sorted keys, compact when indent is
// "" and indented otherwise.
func canonicalJSON(raw []byte, indent string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
