package sqltool

import (
	"fmt"
	"unicode/utf8"
)

// collector gathers the rows of a Result within caps, as the database
// hands them over: the rows past the caps are never read.
type collector struct {
	res  *Result
	c    caps
	used int // bytes counted so far
	// why is set when rows were left out: "rows" or "bytes".
	why string
}

// newCollector starts a Result with the given columns.
func newCollector(cols []string, c caps) *collector {
	col := &collector{res: &Result{Columns: cols, Rows: [][]any{}}, c: c}
	for _, name := range cols {
		col.used += len(name)
	}
	return col
}

// markerMax is the most bytes a clip marker takes.
const markerMax = len("… [clipped: 18446744073709551615 bytes in all]")

// add adds the next row, whose n values get(i, limit) returns, each text
// or blob value clipped to limit bytes (and reported as clipped). It
// reports false, adding nothing and marking the Result truncated, when
// the row is past MaxRows or MaxBytes: the caller stops reading. A first
// row alone past MaxBytes is added with its long values clipped to fit.
func (c *collector) add(n int, get func(i, limit int) (v any, clipped bool)) bool {
	if len(c.res.Rows) >= c.c.rows {
		c.why = "rows"
		return false
	}
	row, clipped, size := c.convert(n, c.c.value, get)
	if c.used+size > c.c.bytes {
		if len(c.res.Rows) > 0 {
			c.why = "bytes"
			return false
		}
		// Share what is left among the row's text values.
		fixed, texts := 0, 0
		for _, v := range row {
			if _, ok := v.(string); ok {
				texts++
			} else {
				fixed += valueSize(v)
			}
		}
		share := 0
		if texts > 0 {
			share = max((c.c.bytes-c.used-fixed)/texts-markerMax, 0)
		}
		row, clipped, size = c.convert(n, min(share, c.c.value), get)
	}
	c.res.Rows = append(c.res.Rows, row)
	c.res.Clipped += clipped
	c.used += size
	return true
}

// convert reads a row's values with get at the given limit, and returns
// them, how many were clipped and their size.
func (c *collector) convert(n, limit int, get func(i, limit int) (any, bool)) ([]any, int, int) {
	row := make([]any, n)
	clipped, size := 0, 0
	for i := range row {
		v, cut := get(i, limit)
		row[i] = v
		if cut {
			clipped++
		}
		size += valueSize(v)
	}
	return row, clipped, size
}

// result returns the Result, its Note written.
func (c *collector) result() *Result {
	r := c.res
	switch c.why {
	case "rows":
		r.Truncated = true
		r.Note = fmt.Sprintf("only the first %d rows are shown: the query returned more, and the limit is %d rows per result; aggregate, filter or add a LIMIT",
			len(r.Rows), c.c.rows)
	case "bytes":
		r.Truncated = true
		r.Note = fmt.Sprintf("only the first %d rows are shown: the query returned more, and the next would pass the limit of %d bytes per result; select fewer or shorter columns, aggregate or add a LIMIT",
			len(r.Rows), c.c.bytes)
	}
	if r.Clipped > 0 {
		note := fmt.Sprintf("%d long values are clipped (the limits are %d bytes per value and %d per result), each ending with \"… [clipped: N bytes in all]\"; select a part with substr() or the length() instead",
			r.Clipped, c.c.value, c.c.bytes)
		if r.Note != "" {
			note = r.Note + "; " + note
		}
		r.Note = note
	}
	return r
}

// valueSize is what a value counts against MaxBytes.
func valueSize(v any) int {
	if s, ok := v.(string); ok {
		return len(s)
	}
	return 8
}

// clip returns b as a string, or, when it is longer than limit bytes, its
// first limit bytes (not splitting a UTF-8 character) followed by a
// marker giving its full length, and true.
func clip[T string | []byte](b T, limit int) (string, bool) {
	if len(b) <= limit {
		return string(b), false
	}
	cut := limit
	for back := 0; cut > 0 && back < utf8.UTFMax && !utf8.RuneStart(b[cut]); back++ {
		cut--
	}
	return fmt.Sprintf("%s… [clipped: %d bytes in all]", b[:cut], len(b)), true
}
