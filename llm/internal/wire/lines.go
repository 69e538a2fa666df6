package wire

import (
	"bufio"
	"bytes"
	"io"
)

// LineReader reads a body line by line, counting lines and bytes for
// error messages.
type LineReader struct {
	r     *bufio.Reader
	buf   []byte // a line longer than r's buffer
	Off   int64  // bytes consumed so far
	Start int64  // byte offset of the current line
	Line  int    // number of the current line, from 1
}

// NewLineReader returns a reader of the lines of r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 16<<10)}
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
