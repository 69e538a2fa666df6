package ollama

import (
	"bufio"
	"bytes"
	"io"
)

// lineReader reads a body line by line, counting lines and bytes for
// error messages.
type lineReader struct {
	r     *bufio.Reader
	buf   []byte // a line longer than r's buffer
	off   int64  // bytes consumed so far
	start int64  // byte offset of the current line
	line  int    // number of the current line, from 1
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the next line without its line ending; it is valid until
// the next call. A last line without a newline is returned before io.EOF.
func (l *lineReader) next() ([]byte, error) {
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
			l.off += int64(len(b))
			return nil, err
		}
		l.start = l.off
		l.off += int64(len(b))
		l.line++
		return bytes.TrimRight(b, "\r\n"), nil
	}
}
