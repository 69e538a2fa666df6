package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/llm/providers"
	"github.com/weftlang/weft/llm/replay"
	"github.com/weftlang/weft/llm/tool"
)

// defaultPolicy is how weft run calls providers: two retries of retryable
// failures, honouring Retry-After, a per-call bound, and at most 8 calls in
// flight per model (a wide fan-out of LLM nodes queues instead of tripping
// the provider's rate limit).
var defaultPolicy = llm.Policy{Timeout: 5 * time.Minute, MaxAttempts: 3, Jitter: 0.2, Concurrency: 8}

// newBinder makes the binder of `weft run`: LLM bindings open their model
// by spec (the binding's own, else --llm, else $WEFT_LLM); "replay:FILE"
// serves recorded exchanges; --record writes every exchange to a file. The
// returned function closes the recording. LLM bindings may use the tools
// (http_request and the built-in ones, see toolset).
func newBinder(e env, o *runOptions, tools *tool.Registry) (*action.Binder, func(), error) {
	if o.contextTokens < 0 {
		return nil, nil, usageErrorf("--context-tokens %d: want a positive number of tokens (0: the server's default)", o.contextTokens)
	}
	getenv := getenvOf(e)
	spec := o.llm
	if spec == "" {
		spec = getenv(providers.EnvVar)
	}
	var rec *os.File
	var mu sync.Mutex // one recording file for every model
	closeRec := func() {}
	if o.record != "" {
		f, err := os.Create(o.record)
		if err != nil {
			return nil, nil, usageErrorf("--record: %v", err)
		}
		rec = f
		closeRec = func() {
			mu.Lock()
			defer mu.Unlock()
			if err := rec.Close(); err != nil {
				fmt.Fprintf(e.stderr, "weft: closing %s: %v\n", o.record, err)
			}
		}
	}
	open := func(spec string) (llm.Model, error) {
		m, err := providers.Open(spec, getenv) // "replay:FILE" included
		if err != nil {
			return nil, err
		}
		if !isReplay(spec) {
			policy := defaultPolicy
			if o.llmTimeout > 0 {
				policy.Timeout = o.llmTimeout
			}
			m = llm.Reliable(m, policy)
		}
		if rec != nil {
			m = replay.NewRecorder(m, lockedWriter{&mu, rec})
		}
		return m, nil
	}
	return &action.Binder{Open: open, Default: spec, Tools: tools, ContextTokens: o.contextTokens}, closeRec, nil
}

// lockedWriter serialises writes of several recorders to one file.
type lockedWriter struct {
	mu *sync.Mutex
	f  *os.File
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(p)
}

// isReplay reports whether spec serves a recording ("replay:FILE"), which
// needs no retries.
func isReplay(spec string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return strings.EqualFold(strings.TrimSpace(name), "replay")
}
