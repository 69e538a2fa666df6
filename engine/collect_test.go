package engine

import "testing"

// A drive keeps its records for the cache only while they fit what the
// cache would keep of one thread; past that it drops those it kept and
// keeps no more, so that a long run does not hold a copy of its log.
func TestDurableCollectsWhatTheCacheKeeps(t *testing.T) {
	d := &durable{th: &Threads{Cache: &StateCache{MaxBytes: 400}}} // keeps up to 100 bytes
	for i, n := range []int{40, 40} {
		if !d.collect(n) {
			t.Fatalf("record %d (%d bytes, %d in all): not collected", i, n, d.writtenBytes)
		}
		d.written = append(d.written, nil)
	}
	if d.collect(40) {
		t.Fatalf("120 bytes collected, beyond the 100 the cache keeps")
	}
	if d.written != nil || !d.unkept {
		t.Fatalf("after outgrowing the cache: written %d records, unkept %v; want none kept", len(d.written), d.unkept)
	}
	if d.collect(1) {
		t.Fatalf("a record collected after the drive stopped collecting")
	}
	if (&durable{th: &Threads{}}).collect(1) {
		t.Fatalf("a record collected without a cache")
	}
}
