package wire

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// sseReaders holds released SSEReaders, buffers included, for reuse,
// like lineReaders.
var sseReaders = sync.Pool{New: func() any {
	return &SSEReader{r: bufio.NewReaderSize(nil, readBufSize)}
}}

// SSEReader reads server-sent events, counting lines and bytes for error
// messages. It keeps one buffer for an event's data, reused across
// events (and, through a pool, across readers).
type SSEReader struct {
	r         *bufio.Reader
	long      []byte // a line longer than r's buffer
	data      []byte // the current event's data
	name      []byte // the current event's name
	Off       int64  // bytes consumed so far
	Line      int    // lines consumed so far
	lineStart int64  // byte offset of the line last read
	Start     int64  // byte offset of the current event's data
	First     int    // number of the current event's first data line
}

// NewSSEReader returns a reader of the events in r. Call Release when
// done with it.
func NewSSEReader(r io.Reader) *SSEReader {
	s := sseReaders.Get().(*SSEReader)
	s.r.Reset(r)
	return s
}

// Release returns s to a pool for reuse by a later NewSSEReader. Neither
// s nor an event it returned may be used afterwards. It does not close
// the underlying reader.
func (s *SSEReader) Release() {
	s.r.Reset(nil)
	*s = SSEReader{r: s.r, long: keep(s.long), data: keep(s.data), name: keep(s.name)}
	sseReaders.Put(s)
}

// keep returns b emptied, or nil if it is too large to keep in a pool.
func keep(b []byte) []byte {
	if cap(b) > keepBufSize {
		return nil
	}
	return b[:0]
}

// readLine returns the next line without its line ending, valid until
// the next call.
func (s *SSEReader) readLine() ([]byte, error) {
	s.long = s.long[:0]
	s.lineStart = s.Off
	for {
		b, err := s.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			s.long = append(s.long, b...)
			continue
		}
		if len(s.long) > 0 {
			s.long = append(s.long, b...)
			b = s.long
		}
		s.Off += int64(len(b))
		if err != nil {
			// A line without its newline is an event cut short.
			return nil, err
		}
		s.Line++
		return bytes.TrimRight(b, "\r\n"), nil
	}
}

// Next returns the next event's name and data (its data lines joined by
// newlines), both valid until the next call. Comments and events without
// data are skipped. At the end of the body it returns io.EOF, or the read
// error, such as io.ErrUnexpectedEOF for a body cut short.
func (s *SSEReader) Next() (name, data []byte, err error) {
	s.data, s.name = s.data[:0], s.name[:0]
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, nil, err
		}
		if len(line) == 0 {
			if hasData {
				return s.name, s.data, nil
			}
			s.name = s.name[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			} else {
				s.Start, s.First = s.lineStart+int64(len(line)-len(value)), s.Line
				hasData = true
			}
			s.data = append(s.data, value...)
		case "event":
			s.name = append(s.name[:0], value...)
		}
	}
}
