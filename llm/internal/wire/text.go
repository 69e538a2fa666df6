package wire

import "unsafe"

// Text gathers the text of a streamed reply, and hands back each piece
// appended as a string that shares its memory, as strings.Builder shares
// its own with the string it returns: a byte once appended is never
// written again (when a Text needs room, it moves on to a larger array and
// leaves the old one to the strings that point into it), so the strings
// stay valid and unchanged. A streamed call then costs no allocation per
// event for its text, only the few of the growing buffer.
type Text struct {
	b []byte
}

// minText is the first capacity of a Text: a short reply fits.
const minText = 256

// grow makes room for n more bytes, in a new array if need be.
func (t *Text) grow(n int) {
	if cap(t.b)-len(t.b) >= n {
		return
	}
	b := make([]byte, len(t.b), max(2*cap(t.b), len(t.b)+n, minText))
	copy(b, t.b)
	t.b = b
}

// view returns t.b[start:] as a string sharing its memory.
func (t *Text) view(start int) string {
	if len(t.b) == start {
		return ""
	}
	return unsafe.String(&t.b[start], len(t.b)-start)
}

// AppendQuoted appends the body of a JSON string, as Scanner.RawString
// returned it (raw, with escapes if esc), decoded as encoding/json
// decodes it, and returns that piece. raw must be valid UTF-8.
func (t *Text) AppendQuoted(raw []byte, esc bool) string {
	t.grow(len(raw)) // decoding never lengthens
	start := len(t.b)
	if esc {
		t.b, _ = appendUnescaped(t.b, raw) // a checked body: always ok
	} else {
		t.b = append(t.b, raw...)
	}
	return t.view(start)
}

// AppendString appends s.
func (t *Text) AppendString(s string) {
	t.grow(len(s))
	t.b = append(t.b, s...)
}

// Len returns the number of bytes appended.
func (t *Text) Len() int { return len(t.b) }

// String returns all the text appended so far.
func (t *Text) String() string { return t.view(0) }
