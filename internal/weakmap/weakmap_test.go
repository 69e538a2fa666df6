package weakmap

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

type key struct{ name string }

// gone collects until m is empty, or gives up.
func gone[K, V any](m *Map[K, V]) int {
	for range 50 {
		runtime.GC()
		if m.Len() == 0 {
			return 0
		}
		time.Sleep(time.Millisecond)
	}
	return m.Len()
}

func TestMapKeepsWhileReachable(t *testing.T) {
	var m Map[key, string]
	a, b := &key{"a"}, &key{"b"}
	if v, ok := m.Load(a); ok {
		t.Fatalf("empty map has %q", v)
	}
	if v, loaded := m.LoadOrStore(a, "A"); loaded || v != "A" {
		t.Errorf("LoadOrStore(a) = %q, %v; want A, false", v, loaded)
	}
	if v, loaded := m.LoadOrStore(a, "other"); !loaded || v != "A" {
		t.Errorf("second LoadOrStore(a) = %q, %v; want A, true", v, loaded)
	}
	m.Store(b, "B")
	m.Store(b, "B2")
	runtime.GC()
	if v, ok := m.Load(a); !ok || v != "A" {
		t.Errorf("Load(a) = %q, %v; want A", v, ok)
	}
	if v, ok := m.Load(b); !ok || v != "B2" {
		t.Errorf("Load(b) = %q, %v; want B2", v, ok)
	}
	// An equal object is another key.
	if v, ok := m.Load(&key{"a"}); ok {
		t.Errorf("another object found %q", v)
	}
	if n := m.Len(); n != 2 {
		t.Errorf("Len = %d; want 2", n)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

func TestMapEntriesGoWithTheirKeys(t *testing.T) {
	var m Map[key, []byte]
	keep := &key{"kept"}
	m.Store(keep, []byte("kept"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 250 {
				k := &key{"k"}
				m.Store(k, make([]byte, 1<<10))
				if _, ok := m.Load(k); !ok {
					t.Error("a key's entry missing while it is reachable")
				}
				runtime.KeepAlive(k)
			}
		})
	}
	wg.Wait()
	for range 50 {
		runtime.GC()
		if m.Len() == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if n := m.Len(); n != 1 {
		t.Errorf("Len = %d after the keys but one were dropped; want 1", n)
	}
	if v, ok := m.Load(keep); !ok || string(v) != "kept" {
		t.Errorf("Load(kept) = %q, %v", v, ok)
	}
	runtime.KeepAlive(keep)
	keep = nil
	if n := gone(&m); n != 0 {
		t.Errorf("Len = %d after every key was dropped; want 0", n)
	}
}
