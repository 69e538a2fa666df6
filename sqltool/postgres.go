package sqltool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgGrace is how much longer than statement_timeout a PostgreSQL query's
// context lasts, so that the server's own timeout usually fires first and
// the connection survives.
const pgGrace = time.Second

// pgEngine runs queries on PostgreSQL, each in a read-only transaction that
// is rolled back.
type pgEngine struct {
	pool     *pgxpool.Pool
	warnings []string // what the role may do beyond reading, when allowed
	maxRead  int      // the longest protocol message (a row) read
}

// openPostgres connects to dsn. Sessions default to read-only
// transactions and to statement_timeout = the time limit.
func openPostgres(ctx context.Context, dsn string, o Options) (*pgEngine, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqltool: parsing the PostgreSQL URL: %w", err)
	}
	rp := cfg.ConnConfig.RuntimeParams
	rp["default_transaction_read_only"] = "on"
	// The lexer reads '...' strings without backslash escapes: so must the
	// server, or 'a\'', f() --' would hide a call from the lexer.
	rp["standard_conforming_strings"] = "on"
	rp["statement_timeout"] = strconv.FormatInt(timeoutMillis(o.Timeout), 10)
	// Text results in a known shape: ISO dates, floats that round-trip.
	for k, v := range map[string]string{"application_name": "weft-sqltool", "DateStyle": "ISO, YMD", "extra_float_digits": "3"} {
		if rp[k] == "" {
			rp[k] = v
		}
	}
	// A cancelled context sends the server a cancel request, so that an
	// abandoned query stops running there too, and closes the connection
	// only if the server does not answer within a second.
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
	// No named prepared statements: the DISCARD ALL after each call drops
	// them on the server, and pgx's cache of them would go stale.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	// No row longer than MaxReadBytes is read: pgx would hold all of it,
	// and a copy.
	cfg.ConnConfig.MaxProtocolMessageBodyLen = o.MaxReadBytes
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sqltool: connecting to PostgreSQL: %w", err)
	}
	if err := pool.Ping(cctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("sqltool: connecting to PostgreSQL: %w", err)
	}
	e := &pgEngine{pool: pool, maxRead: o.MaxReadBytes}
	role, reasons, err := e.unsafeRole(cctx, o.Timeout)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("sqltool: checking the PostgreSQL role's privileges: %w", err)
	}
	if len(reasons) > 0 {
		if !o.AllowUnsafeRole {
			pool.Close()
			return nil, &RoleError{Role: role, Reasons: reasons}
		}
		for _, r := range reasons {
			e.warnings = append(e.warnings, fmt.Sprintf("PostgreSQL role %q %s", role, r))
		}
	}
	return e, nil
}

// maxRoleReasons bounds the reasons unsafeRole gives.
const maxRoleReasons = 10

// unsafeRole returns the role the pool connects as and what it may do
// beyond reading the tables it can reach: being a superuser, CREATEROLE
// or REPLICATION; owning or holding INSERT, UPDATE, DELETE, TRUNCATE or
// TRIGGER on a table or view, or UPDATE or USAGE on a sequence, in a
// schema it may use; CREATE on such a schema or on the database; the
// privileges of a predefined role that writes all data, reaches server
// files or programs, or signals other sessions.
func (p *pgEngine) unsafeRole(ctx context.Context, limit time.Duration) (string, []string, error) {
	var role string
	var reasons []string
	err := p.readOnly(ctx, limit, func(tx pgx.Tx) error {
		var super, createRole, replication, createDB bool
		err := tx.QueryRow(ctx, `
			SELECT current_user::text, r.rolsuper, r.rolcreaterole, r.rolreplication,
			  has_database_privilege(current_database(), 'CREATE')
			FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`).Scan(&role, &super, &createRole, &replication, &createDB)
		if err != nil {
			return err
		}
		if super {
			reasons = append(reasons, "is a superuser")
			return nil
		}
		if createRole {
			reasons = append(reasons, "may create roles (CREATEROLE)")
		}
		if replication {
			reasons = append(reasons, "may replicate (REPLICATION)")
		}
		if createDB {
			reasons = append(reasons, "may CREATE schemas in the database")
		}
		rows, err := tx.Query(ctx, `
			WITH rel AS (
			  SELECT c.oid, c.relkind, c.relowner,
			    CASE c.relkind WHEN 'S' THEN 'sequence ' WHEN 'v' THEN 'view ' WHEN 'm' THEN 'materialized view ' ELSE 'table ' END
			      || quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
			  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
			    AND n.nspname NOT IN ('pg_catalog', 'information_schema')
			    AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
			    AND has_schema_privilege(n.oid, 'USAGE')
			)
			SELECT r FROM (
			  SELECT 0 AS k, 'has the privileges of ' || rolname AS r FROM pg_catalog.pg_roles
			  WHERE rolname IN ('pg_write_all_data', 'pg_read_server_files', 'pg_write_server_files',
			                    'pg_execute_server_program', 'pg_signal_backend')
			    AND pg_has_role(current_user, oid, 'USAGE')
			  UNION ALL
			  SELECT 1, 'may CREATE in schema ' || quote_ident(nspname) FROM pg_catalog.pg_namespace
			  WHERE nspname NOT IN ('pg_catalog', 'information_schema')
			    AND nspname NOT LIKE 'pg\_toast%' AND nspname NOT LIKE 'pg\_temp%'
			    AND has_schema_privilege(oid, 'CREATE')
			  UNION ALL
			  SELECT 2, 'owns ' || name FROM rel WHERE pg_has_role(relowner, 'USAGE')
			  UNION ALL
			  SELECT 3, 'may ' || string_agg(pr, ', ') || ' on ' || name
			  FROM rel, unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER']) pr
			  WHERE relkind <> 'S' AND NOT pg_has_role(relowner, 'USAGE') AND has_table_privilege(oid, pr)
			  GROUP BY name
			  UNION ALL
			  SELECT 4, 'may ' || string_agg(pr, ', ') || ' columns of ' || name
			  FROM rel, unnest(ARRAY['INSERT', 'UPDATE']) pr
			  WHERE relkind <> 'S' AND NOT pg_has_role(relowner, 'USAGE')
			    AND NOT has_table_privilege(oid, pr) AND has_any_column_privilege(oid, pr)
			  GROUP BY name
			  UNION ALL
			  SELECT 5, 'may ' || string_agg(pr, ', ') || ' ' || name
			  FROM rel, unnest(ARRAY['UPDATE', 'USAGE']) pr
			  WHERE relkind = 'S' AND NOT pg_has_role(relowner, 'USAGE') AND has_sequence_privilege(oid, pr)
			  GROUP BY name
			) x ORDER BY k, r LIMIT $1`, maxRoleReasons+1)
		if err != nil {
			return err
		}
		more, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(more) > maxRoleReasons {
			more = append(more[:maxRoleReasons], "may do more of the same (only the first ten are listed)")
		}
		reasons = append(reasons, more...)
		return nil
	})
	return role, reasons, err
}

func (p *pgEngine) close() error {
	p.pool.Close()
	return nil
}

// timeoutMillis returns d in whole milliseconds, at least 1 (0 would turn
// statement_timeout off).
func timeoutMillis(d time.Duration) int64 {
	return max(d.Milliseconds(), 1)
}

// readOnly runs fn on a connection of its own, in a BEGIN READ ONLY
// transaction with SET LOCAL statement_timeout, and rolls it back whatever
// happens. Then DISCARD ALL resets the session, so that nothing fn did to
// it outlives the call: session-level advisory locks are released,
// settings reset, prepared statements, cursors, temporary tables and
// LISTENs dropped. A connection that cannot be rolled back and reset is
// closed rather than returned to the pool, which ends its session.
func (p *pgEngine) readOnly(ctx context.Context, limit time.Duration, fn func(pgx.Tx) error) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	clean := false
	defer func() {
		if clean {
			conn.Release()
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Hijack().Close(cctx) // the session ends, and its state with it
	}()
	// BEGIN and SET LOCAL go in one simple-protocol message: one round
	// trip, not two.
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{
		BeginQuery: "BEGIN READ ONLY; SET LOCAL statement_timeout = " + strconv.FormatInt(timeoutMillis(limit), 10),
	})
	if err != nil {
		return err
	}
	err = fn(tx)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if tx.Rollback(rctx) == nil {
		_, derr := conn.Exec(rctx, "DISCARD ALL")
		clean = derr == nil
	}
	return err
}

// isStatementTimeout reports whether err is PostgreSQL's statement_timeout
// cancellation.
func isStatementTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout")
}

func (p *pgEngine) query(ctx context.Context, stmt string, c caps, limit time.Duration) (*Result, error) {
	qctx, cancel := context.WithTimeout(ctx, limit+pgGrace)
	defer cancel()
	var res *Result
	err := p.readOnly(qctx, limit, func(tx pgx.Tx) error {
		// rctx lets a truncated result be abandoned rather than drained:
		// cancelling it sends the server a cancel request.
		rctx, rcancel := context.WithCancel(qctx)
		defer rcancel()
		// The extended protocol (DescribeExec) refuses several statements
		// in one string; text results are PostgreSQL's own rendering.
		rows, err := tx.Query(rctx, stmt, pgx.QueryExecModeDescribeExec, pgx.QueryResultFormats{pgx.TextFormatCode})
		if err != nil {
			return err
		}
		defer rows.Close()
		fields := rows.FieldDescriptions()
		cols := make([]string, len(fields))
		for i, f := range fields {
			cols[i] = f.Name
		}
		col := newCollector(cols, c)
		var raw [][]byte
		get := func(i, limit int) (any, bool) {
			if v, ok := pgScalar(fields[i].DataTypeOID, raw[i]); ok {
				return v, false
			}
			return clip(raw[i], limit)
		}
		for rows.Next() {
			raw = rows.RawValues()
			if !col.add(len(fields), get) {
				rcancel()
				res = col.result()
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		res = col.result()
		return nil
	})
	if err != nil {
		var big *pgproto3.ExceededMaxBodyLenErr
		if errors.As(err, &big) && ctx.Err() == nil {
			return nil, &QueryError{SQL: stmt, Err: &tooBigError{what: "row", limit: p.maxRead, err: err}}
		}
		if isStatementTimeout(err) && ctx.Err() == nil {
			return nil, &QueryError{SQL: stmt, Err: &limitError{limit: limit, err: err}}
		}
		return nil, stopped(ctx, qctx, stmt, limit, err)
	}
	return res, nil
}

// pgScalar converts a value in PostgreSQL's text format to a Result value
// when it is NULL, a number or a boolean (see pgValue); false for text
// and every other type, which the caller clips.
func pgScalar(oid uint32, raw []byte) (any, bool) {
	if raw == nil {
		return nil, true
	}
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID,
		pgtype.Float4OID, pgtype.Float8OID, pgtype.NumericOID, pgtype.BoolOID:
		if len(raw) < 1024 { // a numeric may have 16383 digits after the point
			return pgValue(oid, raw), true
		}
	}
	return nil, false
}

// pgValue converts a value in PostgreSQL's text format to a Result value:
// integers to int64, floats to float64, numeric to int64 when integral and
// small enough or else float64, booleans to bool, anything else to its
// text.
func pgValue(oid uint32, raw []byte) any {
	if raw == nil {
		return nil
	}
	s := string(raw)
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case pgtype.Float4OID, pgtype.Float8OID:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return finite(f)
		}
	case pgtype.NumericOID:
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return finite(f)
		}
	case pgtype.BoolOID:
		return s == "t"
	}
	return s
}

func (p *pgEngine) tables(ctx context.Context, limit time.Duration) ([]Table, error) {
	qctx, cancel := context.WithTimeout(ctx, limit+pgGrace)
	defer cancel()
	var out []Table
	err := p.readOnly(qctx, limit, func(tx pgx.Tx) error {
		var err error
		out, err = pgCatalog(qctx, tx)
		return err
	})
	if err != nil {
		return nil, stopped(ctx, qctx, "(catalog queries)", limit, err)
	}
	for i := range out {
		t := &out[i]
		name := pgx.Identifier{t.Schema, t.Name}.Sanitize()
		if !t.View {
			cnt, err := p.query(ctx, "SELECT count(*) FROM "+name, catalogCaps, limit)
			if err != nil {
				return nil, err
			}
			if len(cnt.Rows) == 1 {
				t.RowCount = asInt(cnt.Rows[0][0])
			}
		}
		sample, err := p.query(ctx, fmt.Sprintf("SELECT * FROM %s LIMIT %d", name, sampleRows), sampleCaps, limit)
		if err != nil {
			return nil, err
		}
		addSamples(t, sample)
	}
	return out, nil
}

// pgCatalog reads the tables and views the role may read outside the
// system schemas, with their columns, primary and foreign keys.
func pgCatalog(ctx context.Context, tx pgx.Tx) ([]Table, error) {
	rows, err := tx.Query(ctx, `
		SELECT c.oid, n.nspname, c.relname, c.relkind IN ('v', 'm')
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		  AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp%'
		  AND has_table_privilege(c.oid, 'SELECT')
		ORDER BY n.nspname, c.relname`)
	if err != nil {
		return nil, err
	}
	var out []Table
	var oids []uint32
	byOID := map[uint32]int{}
	for rows.Next() {
		var oid uint32
		t := Table{RowCount: -1}
		if err := rows.Scan(&oid, &t.Schema, &t.Name, &t.View); err != nil {
			return nil, err
		}
		byOID[oid] = len(out)
		oids = append(oids, oid)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}

	rows, err = tx.Query(ctx, `
		SELECT a.attrelid, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull
		FROM pg_catalog.pg_attribute a
		WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attrelid, a.attnum`, oids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var oid uint32
		var c Column
		if err := rows.Scan(&oid, &c.Name, &c.Type, &c.NotNull); err != nil {
			return nil, err
		}
		if i, ok := byOID[oid]; ok {
			out[i].Columns = append(out[i].Columns, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}

	rows, err = tx.Query(ctx, `
		SELECT con.conrelid, con.contype::text,
		  ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
		        JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord),
		  COALESCE(fn.nspname::text, ''), COALESCE(fc.relname::text, ''),
		  ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
		        JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord)
		FROM pg_catalog.pg_constraint con
		LEFT JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
		LEFT JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
		WHERE con.conrelid = ANY($1) AND con.contype IN ('p', 'f')
		ORDER BY con.conrelid, con.contype DESC, con.conname`, oids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var oid uint32
		var kind string
		var cols, refCols []string
		var fk ForeignKey
		if err := rows.Scan(&oid, &kind, &cols, &fk.RefSchema, &fk.RefTable, &refCols); err != nil {
			return nil, err
		}
		i, ok := byOID[oid]
		if !ok {
			continue
		}
		if kind == "p" {
			out[i].PrimaryKey = cols
			continue
		}
		fk.Columns, fk.RefColumns = cols, refCols
		out[i].ForeignKeys = append(out[i].ForeignKeys, fk)
	}
	return out, rows.Err()
}
