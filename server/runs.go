package server

import (
	"context"
	"sync"
)

// runManager tracks the runs in progress in this process.
type runManager struct {
	mu      sync.Mutex
	running map[string]string // thread -> job id
}

// busy reports whether a run of thread is in progress here.
func (m *runManager) busy(thread string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.running[thread]
	return ok
}

// cancelThread cancels the thread's run in progress, if any.
func (m *runManager) cancelThread(ctx context.Context, thread string) {}
