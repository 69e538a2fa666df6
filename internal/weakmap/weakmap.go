// Package weakmap provides a map whose keys are weak: the entry of a key
// goes when the key's object becomes unreachable. It keeps what a
// long-lived value (a Threads, a registered action) derives from a plan
// or a plan node, so that a process compiling plans as it goes does not
// keep every plan's derived data forever.
package weakmap

import (
	"runtime"
	"sync"
	"weak"
)

// Map maps objects of type K, by pointer, to values of type V. The zero
// Map is empty and ready to use; a Map must not be copied after first use.
// It is safe for concurrent use.
//
// A value must not refer to its key's object, directly or not: the Map
// holds its values strongly, so such an entry would keep its key alive
// and never go.
type Map[K, V any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[K]]V
}

// Load returns the value kept for k, if any.
func (c *Map[K, V]) Load(k *K) (V, bool) {
	wk := weak.Make(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[wk]
	return v, ok
}

// LoadOrStore returns the value kept for k if there is one (loaded is
// true); otherwise it keeps v for k until k's object is unreachable and
// returns v.
func (c *Map[K, V]) LoadOrStore(k *K, v V) (actual V, loaded bool) {
	wk := weak.Make(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[wk]; ok {
		return old, true
	}
	c.store(k, wk, v)
	return v, false
}

// Store keeps v for k, replacing any value kept for it, until k's object
// is unreachable.
func (c *Map[K, V]) Store(k *K, v V) {
	wk := weak.Make(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[wk]; ok {
		c.m[wk] = v
		return
	}
	c.store(k, wk, v)
}

// store adds a new entry and its cleanup; c.mu is held.
func (c *Map[K, V]) store(k *K, wk weak.Pointer[K], v V) {
	if c.m == nil {
		c.m = map[weak.Pointer[K]]V{}
	}
	c.m[wk] = v
	runtime.AddCleanup(k, c.remove, wk)
}

func (c *Map[K, V]) remove(wk weak.Pointer[K]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, wk)
}

// Len returns the number of entries kept: those of keys still reachable,
// and of keys whose cleanup has not run yet.
func (c *Map[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
