package service

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weftlang/weft/engine"
)

// Cursor is an event's position in its thread's stream: the number of
// its run in the thread and its Seq in that run, which goes on across the
// run's resumes. Cursors order a thread's events; the zero Cursor is
// before the first. Its text form, "RUN.SEQ", is what a server sends as an
// SSE event id and takes back as Last-Event-ID.
type Cursor struct {
	Run int
	Seq int64
}

// seqBits is how many bits of a packed cursor hold Seq.
const seqBits = 40

// CursorOf returns an event's cursor.
func CursorOf(e engine.Event) Cursor { return Cursor{Run: e.Run, Seq: e.Seq} }

// String returns "RUN.SEQ".
func (c Cursor) String() string { return fmt.Sprintf("%d.%d", c.Run, c.Seq) }

// ParseCursor reads the text form of a Cursor.
func ParseCursor(s string) (Cursor, error) {
	r, q, ok := strings.Cut(s, ".")
	run, err1 := strconv.Atoi(r)
	seq, err2 := strconv.ParseInt(q, 10, 64)
	if !ok || err1 != nil || err2 != nil || run < 0 || seq < 0 || seq >= 1<<seqBits || run >= 1<<(63-seqBits) {
		return Cursor{}, fmt.Errorf("service: cursor %q: want RUN.SEQ, two numbers", s)
	}
	return Cursor{Run: run, Seq: seq}, nil
}

// pack orders cursors as int64s.
func (c Cursor) pack() int64 { return int64(c.Run)<<seqBits | c.Seq }

// unpack is the inverse of pack.
func unpack(p int64) Cursor { return Cursor{Run: int(p >> seqBits), Seq: p & (1<<seqBits - 1)} }

// follows reports whether the event at next comes right after the one at
// prev: the next of the same run, or the first of the next run (the
// zero cursor is followed by run 1's first event).
func follows(prev, next int64) bool {
	p, n := unpack(prev), unpack(next)
	return n.Run == p.Run && n.Seq == p.Seq+1 || n.Run == p.Run+1 && n.Seq == 1
}
