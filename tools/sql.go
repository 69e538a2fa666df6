package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weftlang/weft/internal/redact"
	"github.com/weftlang/weft/sqltool"
)

// SQLArgs are the arguments of the sql_query tool.
type SQLArgs struct {
	SQL string `json:"sql" desc:"one read-only SELECT statement"`
}

// SQLResult is what the sql_query tool returns: the rows as text (for a
// prompt and a token budget), and as values.
type SQLResult struct {
	Text      string   `json:"text"`
	RowCount  int      `json:"row_count"`
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated"`
	Clipped   int      `json:"clipped,omitempty"` // long values cut short
	Note      string   `json:"note,omitempty"`    // what was cut and why, for the model
}

// SchemaResult is what the sql_schema tool returns.
type SchemaResult struct {
	Schema  string `json:"schema"`
	Dialect string `json:"dialect"`
}

func (s *Set) sqlQuery(ctx context.Context, a SQLArgs) (SQLResult, error) {
	db, err := s.database(ctx, SQLQuery)
	if err != nil {
		return SQLResult{}, err
	}
	res, err := db.Query(ctx, a.SQL)
	if err != nil {
		return SQLResult{}, err
	}
	return SQLResult{Text: FormatRows(res), RowCount: len(res.Rows), Columns: res.Columns, Rows: res.Rows, Truncated: res.Truncated, Clipped: res.Clipped, Note: res.Note}, nil
}

func (s *Set) sqlSchema(ctx context.Context, _ struct{}) (SchemaResult, error) {
	db, err := s.database(ctx, SQLSchema)
	if err != nil {
		return SchemaResult{}, err
	}
	sc, err := db.Schema(ctx)
	if err != nil {
		return SchemaResult{}, err
	}
	return SchemaResult{Schema: sc, Dialect: db.Dialect()}, nil
}

// database opens Config.DB once, for the tool name.
func (s *Set) database(ctx context.Context, name string) (*sqltool.DB, error) {
	s.sqMu.Lock()
	defer s.sqMu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.sq != nil {
		return s.sq, nil
	}
	if s.cfg.DB == "" {
		return nil, notConfigured(name)
	}
	db, err := sqltool.Open(ctx, s.cfg.DB, s.cfg.DBOptions)
	if err != nil {
		return nil, &ResourceError{Tool: name, Resource: Database, Name: redact.DSN(s.cfg.DB), Err: err}
	}
	if s.cfg.Warn != nil {
		for _, w := range db.Warnings() {
			s.cfg.Warn(w)
		}
	}
	s.sq = db
	return db, nil
}

// FormatRows writes a result as text: a header line of column names, then
// one line per row, values separated by " | ", JSON for non-strings, and
// the result's note, if any, on a last line.
func FormatRows(r *sqltool.Result) string {
	var b strings.Builder
	b.WriteString(strings.Join(r.Columns, " | "))
	for _, row := range r.Rows {
		b.WriteByte('\n')
		for i, v := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			switch x := v.(type) {
			case nil:
				b.WriteString("NULL")
			case string:
				b.WriteString(x)
			default:
				j, _ := json.Marshal(x)
				b.Write(j)
			}
		}
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "\n... (%s)", r.Note)
	}
	return b.String()
}
