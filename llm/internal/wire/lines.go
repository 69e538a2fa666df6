package wire

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// readBufSize is the buffer size of LineReaders and SSEReaders: that of
// the net/http transport's reader under a response body, so that one
// fill takes what one read of the body gives. Longer lines are gathered
// in a separate buffer.
const readBufSize = 4 << 10

// keepBufSize bounds the buffers a released reader keeps for the next
// user: one that grew beyond it for a long line or event is dropped.
const keepBufSize = 64 << 10

// lineReaders holds released LineReaders, buffers included, for reuse:
// streamed calls then read their bodies without allocating a buffer each.
// It and sseReaders are the package's only mutable state.
var lineReaders = sync.Pool{New: func() any {
	return &LineReader{r: bufio.NewReaderSize(nil, readBufSize)}
}}

// LineReader reads a body line by line, counting lines and bytes for
// error messages.
type LineReader struct {
	r     *bufio.Reader
	buf   []byte // a line longer than r's buffer
	Off   int64  // bytes consumed so far
	Start int64  // byte offset of the current line
	Line  int    // number of the current line, from 1
}

// NewLineReader returns a reader of the lines of r. Call Release when
// done with it.
func NewLineReader(r io.Reader) *LineReader {
	l := lineReaders.Get().(*LineReader)
	l.r.Reset(r)
	return l
}

// Release returns l to a pool for reuse by a later NewLineReader. Neither
// l nor a line it returned may be used afterwards. It does not close the
// underlying reader.
func (l *LineReader) Release() {
	l.r.Reset(nil)
	*l = LineReader{r: l.r, buf: keep(l.buf)}
	lineReaders.Put(l)
}

// Next returns the next line without its line ending; it is valid until
// the next call. A last line without a newline is returned before io.EOF.
func (l *LineReader) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		b, err := l.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			l.buf = append(l.buf, b...)
			continue
		}
		if len(l.buf) > 0 {
			l.buf = append(l.buf, b...)
			b = l.buf
		}
		if len(b) == 0 && err != nil {
			return nil, err
		}
		if err != nil && err != io.EOF {
			l.Off += int64(len(b))
			return nil, err
		}
		l.Start = l.Off
		l.Off += int64(len(b))
		l.Line++
		return bytes.TrimRight(b, "\r\n"), nil
	}
}
