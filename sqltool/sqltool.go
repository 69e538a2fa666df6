// Package sqltool is the SQL tool of a text-to-SQL analytics agent: a
// language model writes SQL, Query runs it read-only against SQLite or
// PostgreSQL and returns the rows, or the database's own error text so the
// model can repair the query; Schema describes the database for the
// model's prompt.
//
// Queries are read-only by construction, with several independent layers:
//
//   - A small SQL lexer of the package's own (string literals, quoted
//     identifiers, comments, PostgreSQL dollar quotes) refuses anything but
//     exactly one statement starting with SELECT, WITH, VALUES or EXPLAIN,
//     any write keyword anywhere in it (INSERT, UPDATE, DELETE, REPLACE,
//     INTO, CREATE, DROP, ALTER, ATTACH, DETACH, PRAGMA, VACUUM, ...), and
//     calls to denied functions: those that run SQL given as text
//     (query_to_xml, ts_stat, dblink...), reach outside the database, or
//     change state beyond the query (advisory locks, set_config...).
//     Identifiers are decoded first (quotes, PostgreSQL U&"..." escapes,
//     case folding). See Check.
//   - SQLite databases are opened with mode=ro, so every write fails with
//     SQLITE_READONLY, and with PRAGMA query_only=ON and defensive mode on
//     every connection.
//   - On PostgreSQL every query runs on a connection of its own in a
//     BEGIN READ ONLY transaction with SET LOCAL statement_timeout, is
//     always rolled back, and is followed by DISCARD ALL, so that nothing
//     it did to the session (advisory locks, settings) outlives it;
//     sessions default to read-only transactions too; queries go through
//     the extended protocol, which refuses several statements in one
//     string.
//   - The PostgreSQL role is the real security boundary: Open refuses a
//     role that may do more than read (a superuser, a role that may write
//     to a table or create objects) with a *RoleError, unless
//     Options.AllowUnsafeRole is set. docs/tools.md says which role to
//     create.
//
// Results are bounded: at most Options.MaxRows rows and MaxBytes of
// values, each text or blob value clipped to MaxValueBytes, and nothing
// longer than MaxReadBytes is read from the database at all; Result.Note
// tells the model what was cut.
//
// Refusals are *RefusedError and database errors *QueryError; both are
// found with errors.As, and their messages are meant to be shown to the
// model so it can write a better query.
package sqltool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The dialects Open supports, as returned by DB.Dialect and accepted by
// Check.
const (
	SQLite     = "sqlite"
	PostgreSQL = "postgres"
)

// Defaults for Options.
const (
	DefaultMaxRows       = 1000
	DefaultMaxBytes      = 1 << 20  // 1 MiB of values per result
	DefaultMaxValueBytes = 64 << 10 // 64 KiB per text or blob value
	DefaultMaxReadBytes  = 16 << 20 // 16 MiB per value (SQLite) or row (PostgreSQL) read at all
	DefaultTimeout       = 30 * time.Second
)

// Options tune a DB. The zero value, like a nil *Options, gives the
// defaults.
type Options struct {
	// MaxRows is the most rows Query returns; further rows are not read
	// and the Result is marked Truncated. Zero or less means
	// DefaultMaxRows.
	MaxRows int
	// MaxBytes bounds the size of a Result: the bytes of its text and blob
	// values and column names, 8 for any other value. Rows past it are not
	// read and the Result is marked Truncated; a first row alone past it
	// has its long values clipped to fit. Zero or less means
	// DefaultMaxBytes.
	MaxBytes int
	// MaxValueBytes bounds each text or blob value of a Result: a longer
	// one is clipped to it, ends with "… [clipped: N bytes in all]", and
	// is counted in Result.Clipped. Zero or less means
	// DefaultMaxValueBytes.
	MaxValueBytes int
	// MaxReadBytes bounds what the database may hand over at all: on
	// SQLite any string or blob the query computes or reads
	// (SQLITE_LIMIT_LENGTH), on PostgreSQL any row of the result (the
	// protocol message). A query past it fails quickly with a *QueryError
	// matching ErrTooBig, before the value is copied, let alone encoded.
	// Zero or less means DefaultMaxReadBytes.
	MaxReadBytes int
	// Timeout bounds each query (and each of the queries Schema and
	// Tables run). Zero or less means DefaultTimeout.
	Timeout time.Duration
	// AllowUnsafeRole lets Open connect to PostgreSQL as a role that may
	// do more than read (a superuser, or a role that may write to a table
	// or create objects); without it Open refuses such a role with a
	// *RoleError. The reasons are then reported by DB.Warnings. Use it
	// only for throwaway databases.
	AllowUnsafeRole bool
}

// withDefaults returns o with zero fields set to their defaults.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxRows <= 0 {
		r.MaxRows = DefaultMaxRows
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = DefaultMaxBytes
	}
	if r.MaxValueBytes <= 0 {
		r.MaxValueBytes = DefaultMaxValueBytes
	}
	if r.MaxReadBytes <= 0 {
		r.MaxReadBytes = DefaultMaxReadBytes
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	return r
}

// Result is the outcome of a query.
type Result struct {
	// Columns are the names of the result's columns, in order.
	Columns []string `json:"columns"`
	// Rows hold the values, one slice per row, each JSON-friendly: int64,
	// float64, string, bool or nil. Blobs are returned as strings, dates
	// and times as text ("2009-01-01 00:00:00"), and other PostgreSQL
	// types (numeric aside) in PostgreSQL's text form.
	Rows [][]any `json:"rows"`
	// Truncated is set when rows were left out: the query had more than
	// MaxRows rows, or the next row would have passed MaxBytes.
	Truncated bool `json:"truncated,omitempty"`
	// Clipped counts the text and blob values cut short (see
	// Options.MaxValueBytes); each ends with "… [clipped: N bytes in all]".
	Clipped int `json:"clipped,omitempty"`
	// Note says, in a sentence for the model, what was left out or cut and
	// why; it is empty when the Result is whole.
	Note string `json:"note,omitempty"`
}

// RefusedError reports SQL that Query refused to run because it is not a
// single read-only query.
type RefusedError struct {
	SQL    string // the SQL as given
	Reason string // why it was refused, phrased for the model that wrote it
}

// Error returns the reason, prefixed with "query refused: ".
func (e *RefusedError) Error() string { return "query refused: " + e.Reason }

// QueryError reports a query the database failed to run.
type QueryError struct {
	SQL string // the statement sent to the database
	Err error  // the database's error
}

// Error returns the database's own error text, which is what a model
// needs to repair the query.
func (e *QueryError) Error() string {
	if e.Err == nil {
		return "query failed"
	}
	return e.Err.Error()
}

// Unwrap returns the database's error.
func (e *QueryError) Unwrap() error { return e.Err }

// ErrTooBig is matched (errors.Is) by the *QueryError of a query that
// produced a value (SQLite) or row (PostgreSQL) longer than
// Options.MaxReadBytes.
var ErrTooBig = errors.New("sqltool: a value of the result is too big")

// tooBigError reports a value or row past MaxReadBytes.
type tooBigError struct {
	what  string // "value" or "row"
	limit int
	err   error // the database's or driver's report
}

func (e *tooBigError) Error() string {
	return fmt.Sprintf("query stopped: a %s of the result is larger than the limit of %d bytes (%v); select a part of it with substr() or its length() instead",
		e.what, e.limit, e.err)
}

func (e *tooBigError) Unwrap() []error { return []error{ErrTooBig, e.err} }

// ErrUnsafeRole is matched (errors.Is) by the *RoleError Open returns for
// a PostgreSQL role that may do more than read.
var ErrUnsafeRole = errors.New("sqltool: the database role may do more than read")

// RoleError reports that Open refused to use a PostgreSQL role because it
// may do more than read: it is a superuser, holds a write privilege on a
// table, view or sequence it can reach, may create objects, or has the
// privileges of a role that reaches files, programs or other sessions.
// Options.AllowUnsafeRole turns the refusal into DB.Warnings.
type RoleError struct {
	Role    string   // the role the DSN connects as
	Reasons []string // what it may do, e.g. "is a superuser", "may INSERT into table public.genre"
}

// Error names the role and what it may do.
func (e *RoleError) Error() string {
	return fmt.Sprintf("sqltool: refusing to query as PostgreSQL role %q, which may do more than read: it %s; connect as a role with only CONNECT, USAGE and SELECT privileges",
		e.Role, strings.Join(e.Reasons, "; it "))
}

// Is reports whether target is ErrUnsafeRole.
func (e *RoleError) Is(target error) bool { return target == ErrUnsafeRole }

// limitError reports a query stopped because it ran longer than the time
// limit; it matches context.DeadlineExceeded with errors.Is.
type limitError struct {
	limit time.Duration
	err   error // the database's report of the cancellation, if any
}

func (e *limitError) Error() string {
	msg := fmt.Sprintf("query stopped: it ran longer than the time limit of %s; simplify it or add filters", e.limit)
	if e.err != nil && !errors.Is(e.err, context.DeadlineExceeded) {
		msg += " (" + e.err.Error() + ")"
	}
	return msg
}

func (e *limitError) Unwrap() []error {
	if e.err == nil {
		return []error{context.DeadlineExceeded}
	}
	return []error{context.DeadlineExceeded, e.err}
}

// Table describes a table or view.
type Table struct {
	Schema      string       // the PostgreSQL schema; "" for SQLite
	Name        string       // the table's name
	View        bool         // a view rather than a table
	Columns     []Column     // in declaration order
	PrimaryKey  []string     // the primary key's columns, in key order
	ForeignKeys []ForeignKey // in a stable order
	RowCount    int64        // the number of rows; -1 for views (not counted)
}

// Column describes a column of a Table.
type Column struct {
	Name    string   // the column's name
	Type    string   // the declared type, e.g. "NVARCHAR(160)" or "character varying(160)"
	NotNull bool     // declared NOT NULL
	Samples []string // a few distinct non-null values from the first rows, shortened
}

// ForeignKey describes a foreign key of a Table.
type ForeignKey struct {
	Columns    []string // the referencing columns
	RefSchema  string   // the referenced table's schema ("" for SQLite)
	RefTable   string   // the referenced table
	RefColumns []string // the referenced columns; may be empty in SQLite (the primary key)
}

// caps bound a result: rows, bytes of values, bytes per value.
type caps struct{ rows, bytes, value int }

// catalogCaps are the caps of the queries Tables runs on the catalog.
var catalogCaps = caps{rows: 1 << 20, bytes: 1 << 30, value: 1 << 20}

// engine is what a DB needs from each database.
type engine interface {
	query(ctx context.Context, stmt string, c caps, limit time.Duration) (*Result, error)
	tables(ctx context.Context, limit time.Duration) ([]Table, error)
	close() error
}

// DB is a database opened for read-only queries. It is safe for concurrent
// use.
type DB struct {
	dialect  string
	opts     Options
	eng      engine
	warnings []string
}

// Open opens the database named by dsn: a postgres:// or postgresql:// URL
// (any URL pgx accepts), or else a SQLite database file, as a path (taken
// literally) or a file: URI (which may carry SQLite URI parameters), opened
// read-only; a missing file is an error, never created. A nil opts gives
// the defaults.
func Open(ctx context.Context, dsn string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	db := &DB{opts: o}
	var err error
	if lower := strings.ToLower(dsn); strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		db.dialect = PostgreSQL
		var pg *pgEngine
		pg, err = openPostgres(ctx, dsn, o)
		if err == nil {
			db.eng = pg
			db.warnings = pg.warnings
		}
	} else {
		db.dialect = SQLite
		db.eng, err = openSQLite(ctx, dsn, o)
	}
	if err != nil {
		return nil, err
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	if db == nil || db.eng == nil {
		return nil
	}
	return db.eng.close()
}

// Dialect returns SQLite or PostgreSQL.
func (db *DB) Dialect() string {
	if db == nil {
		return ""
	}
	return db.dialect
}

// Warnings returns what Open found unsafe and was told to allow
// (Options.AllowUnsafeRole): each a sentence such as "PostgreSQL role
// \"postgres\" is a superuser". It is empty for a role that may only read,
// and for SQLite, which is always opened read-only.
func (db *DB) Warnings() []string {
	if db == nil {
		return nil
	}
	return append([]string(nil), db.warnings...)
}

// Options returns the options in effect, defaults filled in.
func (db *DB) Options() Options {
	if db == nil {
		return Options{}
	}
	return db.opts
}

// Query runs one read-only statement and returns at most MaxRows rows and
// MaxBytes of values, each text or blob value clipped to MaxValueBytes;
// Result.Truncated, Clipped and Note say what was cut. SQL
// that is not a single read-only query is refused with a *RefusedError
// without reaching the database; a failure in the database is a
// *QueryError carrying the database's own message. A query running longer
// than Timeout, or past ctx's deadline, is stopped and reported as a
// *QueryError that matches context.DeadlineExceeded.
func (db *DB) Query(ctx context.Context, sql string) (*Result, error) {
	if db == nil || db.eng == nil {
		return nil, errors.New("sqltool: Query on a nil DB")
	}
	stmt, refused := check(db.dialect, sql)
	if refused != nil {
		return nil, refused
	}
	return db.eng.query(ctx, stmt, db.caps(), db.opts.Timeout)
}

// caps returns the caps of the options in effect.
func (db *DB) caps() caps {
	return caps{rows: db.opts.MaxRows, bytes: db.opts.MaxBytes, value: db.opts.MaxValueBytes}
}

// queryUnchecked runs sql without the lexer's check, for tests of the
// database-side layers.
func (db *DB) queryUnchecked(ctx context.Context, sql string) (*Result, error) {
	return db.eng.query(ctx, sql, db.caps(), db.opts.Timeout)
}

// Tables describes the database's tables and views (for PostgreSQL, those
// outside the system schemas that the role may read), in name order, with
// their columns, keys, row counts and a few sample values. Row counts are
// exact (count(*)), which on very large tables takes time; each query is
// bounded by Timeout.
func (db *DB) Tables(ctx context.Context) ([]Table, error) {
	if db == nil || db.eng == nil {
		return nil, errors.New("sqltool: Tables on a nil DB")
	}
	return db.eng.tables(ctx, db.opts.Timeout)
}

// Schema returns a compact description of the database for a model's
// prompt: one CREATE TABLE-like block per table with the column types,
// NOT NULL, primary and foreign keys, the row count and a few sample
// values per column as comments.
func (db *DB) Schema(ctx context.Context) (string, error) {
	ts, err := db.Tables(ctx)
	if err != nil {
		return "", err
	}
	return FormatSchema(db.dialect, ts), nil
}

// stopped turns err, from a query run under qctx (derived from ctx with
// the time limit), into the error Query returns.
func stopped(ctx, qctx context.Context, stmt string, limit time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &QueryError{SQL: stmt, Err: fmt.Errorf("query stopped at the caller's deadline: %w", ctx.Err())}
		}
		return &QueryError{SQL: stmt, Err: fmt.Errorf("query cancelled: %w", ctx.Err())}
	case qctx.Err() != nil:
		return &QueryError{SQL: stmt, Err: &limitError{limit: limit, err: err}}
	}
	return &QueryError{SQL: stmt, Err: err}
}
