package server

import "sync"

// threadLocks is a mutex per thread id, made on first use and dropped
// when nobody holds or waits for it.
type threadLocks struct {
	mu    sync.Mutex
	locks map[string]*threadLock
}

type threadLock struct {
	mu    sync.Mutex
	users int // holders and waiters
}

// lock locks thread's mutex and returns its unlock.
func (t *threadLocks) lock(thread string) (unlock func()) {
	t.mu.Lock()
	if t.locks == nil {
		t.locks = map[string]*threadLock{}
	}
	l := t.locks[thread]
	if l == nil {
		l = &threadLock{}
		t.locks[thread] = l
	}
	l.users++
	t.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		t.mu.Lock()
		l.users--
		if l.users == 0 {
			delete(t.locks, thread)
		}
		t.mu.Unlock()
	}
}
