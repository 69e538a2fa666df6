package sqltool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteEngine runs queries on a SQLite file opened read-only.
type sqliteEngine struct {
	db      *sql.DB
	maxRead int // SQLITE_LIMIT_LENGTH of every query
}

// sqliteDSN turns a path (taken literally) or a file: URI (which may carry
// parameters) into the driver's name for a
// read-only connection: mode=ro (every write fails with SQLITE_READONLY
// and a missing file is not created), query_only and defensive mode on
// every connection, a busy timeout for files other processes write. Driver
// parameters of the caller's that would write (pragmas, journal mode...)
// are dropped.
func sqliteDSN(dsn string) (string, error) {
	if dsn == "" {
		return "", errors.New("sqltool: empty SQLite path")
	}
	var base, rawQuery string
	if strings.HasPrefix(dsn, "file:") {
		base, rawQuery, _ = strings.Cut(dsn, "?")
		if strings.Contains(base, ":memory:") {
			return "", errors.New("sqltool: an in-memory SQLite database cannot be opened read-only")
		}
	} else {
		abs, err := filepath.Abs(dsn)
		if err != nil {
			return "", fmt.Errorf("sqltool: %w", err)
		}
		base = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", fmt.Errorf("sqltool: SQLite DSN %q: %w", dsn, err)
	}
	for k := range q {
		switch {
		case k == "_busy_timeout" || k == "_timeout" || k == "vfs" || k == "immutable" || k == "nolock":
		case strings.HasPrefix(k, "_") || k == "mode" || k == "cache" || k == "modeof":
			q.Del(k)
		}
	}
	q.Set("mode", "ro")
	q.Set("_query_only", "1")
	q.Set("_defensive", "1")
	if q.Get("_busy_timeout") == "" && q.Get("_timeout") == "" {
		q.Set("_busy_timeout", "5000")
	}
	return base + "?" + q.Encode(), nil
}

// openSQLite opens the SQLite database at dsn read-only and checks that it
// is a database and that query_only is on.
func openSQLite(ctx context.Context, dsn string, o Options) (*sqliteEngine, error) {
	name, err := sqliteDSN(dsn)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("sqltool: opening %s: %w", dsn, err)
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var n, queryOnly int64
	err = db.QueryRowContext(cctx, "SELECT count(*) FROM sqlite_master").Scan(&n)
	if err == nil {
		err = db.QueryRowContext(cctx, "PRAGMA query_only").Scan(&queryOnly)
	}
	if err == nil && queryOnly != 1 {
		err = errors.New("PRAGMA query_only is not on")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqltool: opening %s: %w", dsn, err)
	}
	return &sqliteEngine{db: db, maxRead: o.MaxReadBytes}, nil
}

func (s *sqliteEngine) close() error { return s.db.Close() }

func (s *sqliteEngine) query(ctx context.Context, stmt string, c caps, limit time.Duration) (*Result, error) {
	qctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	conn, err := s.db.Conn(qctx)
	if err != nil {
		return nil, stopped(ctx, qctx, stmt, limit, err)
	}
	defer conn.Close()
	// No ATTACH, not even the one VACUUM INTO runs internally: attached
	// files are opened read-write and created when missing, whatever the
	// main database's mode.
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return nil, stopped(ctx, qctx, stmt, limit, err)
	}
	// No string or blob longer than maxRead, computed or read: SQLite
	// refuses randomblob(1e9) at once rather than making it, and the
	// driver, which copies every value it hands over, never sees one.
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, s.maxRead); err != nil {
		return nil, stopped(ctx, qctx, stmt, limit, err)
	}
	fail := func(err error) (*Result, error) {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_TOOBIG {
			err = &tooBigError{what: "value", limit: s.maxRead, err: err}
		}
		return nil, stopped(ctx, qctx, stmt, limit, err)
	}
	rows, err := conn.QueryContext(qctx, stmt)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fail(err)
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return fail(err)
	}
	dateOnly := make([]bool, len(cols))
	for i, t := range types {
		dateOnly[i] = strings.EqualFold(t.DatabaseTypeName(), "DATE")
	}
	col := newCollector(cols, c)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	get := func(i, limit int) (any, bool) {
		switch x := vals[i].(type) {
		case string:
			return clip(x, limit)
		case []byte:
			return clip(x, limit)
		case time.Time:
			return formatTime(x, dateOnly[i]), false
		}
		return jsonValue(vals[i]), false
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fail(err)
		}
		if !col.add(len(cols), get) {
			return col.result(), nil
		}
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return col.result(), nil
}

// quoteSQLiteString returns s as a SQLite string literal.
func quoteSQLiteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// quoteIdent returns name as a double-quoted identifier.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func (s *sqliteEngine) tables(ctx context.Context, limit time.Duration) ([]Table, error) {
	list, err := s.query(ctx, "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name", catalogCaps, limit)
	if err != nil {
		return nil, err
	}
	var out []Table
	for _, r := range list.Rows {
		t := Table{Name: asString(r[0]), View: asString(r[1]) == "view", RowCount: -1}
		cols, err := s.query(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(`+quoteSQLiteString(t.Name)+`) ORDER BY cid`, catalogCaps, limit)
		if err != nil {
			return nil, err
		}
		pkAt := make([]string, len(cols.Rows)+1) // by position in the key, from 1
		for _, c := range cols.Rows {
			col := Column{Name: asString(c[0]), Type: asString(c[1]), NotNull: asInt(c[2]) != 0}
			t.Columns = append(t.Columns, col)
			if p := asInt(c[3]); p > 0 && p < int64(len(pkAt)) {
				pkAt[p] = col.Name
			}
		}
		for _, name := range pkAt {
			if name != "" {
				t.PrimaryKey = append(t.PrimaryKey, name)
			}
		}
		fks, err := s.query(ctx, `SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(`+quoteSQLiteString(t.Name)+`) ORDER BY id, seq`, catalogCaps, limit)
		if err != nil {
			return nil, err
		}
		for i, f := range fks.Rows {
			if i == 0 || asInt(f[0]) != asInt(fks.Rows[i-1][0]) {
				t.ForeignKeys = append(t.ForeignKeys, ForeignKey{RefTable: asString(f[1])})
			}
			fk := &t.ForeignKeys[len(t.ForeignKeys)-1]
			fk.Columns = append(fk.Columns, asString(f[2]))
			if f[3] != nil {
				fk.RefColumns = append(fk.RefColumns, asString(f[3]))
			}
		}
		if !t.View {
			cnt, err := s.query(ctx, "SELECT count(*) FROM "+quoteIdent(t.Name), catalogCaps, limit)
			if err != nil {
				return nil, err
			}
			if len(cnt.Rows) == 1 {
				t.RowCount = asInt(cnt.Rows[0][0])
			}
		}
		sample, err := s.query(ctx, "SELECT * FROM "+quoteIdent(t.Name)+fmt.Sprintf(" LIMIT %d", sampleRows), sampleCaps, limit)
		if err != nil {
			return nil, err
		}
		addSamples(&t, sample)
		out = append(out, t)
	}
	return out, nil
}
