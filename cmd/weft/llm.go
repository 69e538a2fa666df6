package main

import (
	"os"
	"sync"
	"time"

	"github.com/weftlang/weft/llm"
)

// defaultPolicy is how weft run calls providers: two retries of retryable
// failures, honouring Retry-After, a per-call bound, and at most 8 calls in
// flight per model (a wide fan-out of LLM nodes queues instead of tripping
// the provider's rate limit).
var defaultPolicy = llm.Policy{Timeout: 5 * time.Minute, MaxAttempts: 3, Jitter: 0.2, Concurrency: 8}

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
