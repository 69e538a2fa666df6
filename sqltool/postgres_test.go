package sqltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/internal/chinooktest"
)

// loadChinookPG creates a database holding Chinook and returns its DSN.
func loadChinookPG(t *testing.T) string { return chinooktest.PostgreSQL(t) }

// pgFingerprint sums up everything a write could change: the public
// schema's relations, functions and triggers, the roles, databases and
// extensions, and every table's contents (an md5 of its rows).
func pgFingerprint(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b strings.Builder
	for _, q := range []string{
		"SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace",
		"SELECT count(*)::text FROM pg_proc WHERE pronamespace = 'public'::regnamespace",
		"SELECT count(*)::text FROM pg_trigger",
		"SELECT string_agg(rolname || ':' || rolsuper::text, ',' ORDER BY rolname) FROM pg_roles",
		"SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database",
		"SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension",
		"SELECT count(*)::text FROM pg_largeobject_metadata",
		"SELECT string_agg(attname, ',' ORDER BY attrelid, attnum) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = 'public'::regnamespace AND attnum > 0",
	} {
		var s *string
		if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if s != nil {
			fmt.Fprintf(&b, "%s\n", *s)
		}
	}
	rows, err := conn.Query(ctx, "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY relname")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		var cnt int64
		var sum *string
		q := fmt.Sprintf("SELECT count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM %s t", pgx.Identifier{n}.Sanitize())
		if err := conn.QueryRow(ctx, q).Scan(&cnt, &sum); err != nil {
			t.Fatal(err)
		}
		if sum == nil {
			sum = new(string)
		}
		fmt.Fprintf(&b, "table %s %d %s\n", n, cnt, *sum)
	}
	return b.String()
}

// advisoryLockCount returns the number of advisory locks held in the
// cluster, as seen from a connection of its own.
func advisoryLockCount(t *testing.T, dsn string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPostgres(t *testing.T) {
	dsn := loadChinookPG(t)
	ctx := context.Background()
	before := pgFingerprint(t, dsn)
	if !strings.Contains(before, "table album 347 ") {
		t.Fatalf("unexpected fingerprint:\n%s", before)
	}
	db, err := Open(ctx, dsn, &Options{AllowUnsafeRole: true}) // the test superuser
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Dialect() != PostgreSQL {
		t.Errorf("Dialect() = %q", db.Dialect())
	}
	hostiles := append(append([]hostile{}, hostileCommon...), hostilePostgres...)

	t.Run("hostile", func(t *testing.T) {
		for _, h := range hostiles {
			res, err := db.Query(ctx, h.sql)
			how := refusedOrQueryError(err)
			switch {
			case err == nil:
				t.Errorf("%s: %q ran, returned %v", h.name, h.sql, res)
			case how == "":
				t.Errorf("%s: %q: error %T %v is neither *RefusedError nor *QueryError", h.name, h.sql, err, err)
			default:
				t.Logf("%-40s %-8s %v", h.name, how, err)
			}
		}
		if after := pgFingerprint(t, dsn); after != before {
			t.Fatalf("the database changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	// Past the lexer, straight to the database: the read-only transaction
	// and the extended protocol stop every write on their own.
	t.Run("hostile without lexer", func(t *testing.T) {
		for _, h := range hostiles {
			if h.dbUnsafe {
				t.Logf("%-40s skipped: for a superuser only the lexer or a read-only role stops it", h.name)
				continue
			}
			_, err := db.queryUnchecked(ctx, h.sql)
			var qe *QueryError
			switch {
			case err == nil && !h.dbAllows:
				t.Errorf("%s: %q ran without the lexer", h.name, h.sql)
			case err != nil && !errors.As(err, &qe):
				t.Errorf("%s: %q: %T %v, want a *QueryError", h.name, h.sql, err, err)
			case err != nil:
				t.Logf("%-40s db       %v", h.name, err)
			default:
				t.Logf("%-40s allowed (harmless: rolled back)", h.name)
			}
			// Nothing leaks into the pooled sessions: writes still fail,
			// and no advisory lock is held.
			if _, err := db.queryUnchecked(ctx, "DELETE FROM genre WHERE genre_id = 25"); err == nil {
				t.Fatalf("%s: DELETE ran afterwards", h.name)
			}
			if n := advisoryLockCount(t, dsn); n != 0 {
				t.Errorf("%s: %d advisory locks held after the call", h.name, n)
			}
		}
		if after := pgFingerprint(t, dsn); after != before {
			t.Fatalf("the database changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("legit", func(t *testing.T) {
		tests := []struct {
			sql  string
			cols []string
			rows [][]any
		}{
			{"SELECT ';' AS semi, 'a;b' AS x;", []string{"semi", "x"}, [][]any{{";", "a;b"}}},
			{"SELECT name FROM genre WHERE name = 'Rock' ; -- trailing ; comment", []string{"name"}, [][]any{{"Rock"}}},
			{"/* leading; /* nested; */ comment */ SELECT count(*) AS n FROM album", []string{"n"}, [][]any{{int64(347)}}},
			{"SELECT $$a;b$$ AS d, $q$ $$; $q$ AS e, E'it\\'s; ok' AS f", []string{"d", "e", "f"}, [][]any{{"a;b", " $$; ", "it's; ok"}}},
			{"(SELECT 1 AS n) UNION ALL (SELECT 2) ORDER BY n", []string{"n"}, [][]any{{int64(1)}, {int64(2)}}},
			{"WITH a AS (SELECT 1 AS n) SELECT n FROM a", []string{"n"}, [][]any{{int64(1)}}},
			{"VALUES (1, 'x')", []string{"column1", "column2"}, [][]any{{int64(1), "x"}}},
			{"SELECT replace(name, 'R', 'r') AS r FROM genre WHERE genre_id = 1", []string{"r"}, [][]any{{"rock"}}},
			{"EXPLAIN SELECT * FROM album", []string{"QUERY PLAN"}, nil},
			{"SELECT 1::int2 AS a, 2::int4 AS b, 3::int8 AS c, 1.5::float8 AS d, 2.50::numeric AS e, 10::numeric AS f, true AS g, 'x'::text AS h, NULL AS i, " +
				"DATE '2021-01-02' AS j, TIMESTAMP '2021-01-01 10:00:00' AS k, '{1,2}'::int[] AS l, '{\"a\": 1}'::jsonb AS m, 'NaN'::float8 AS n, '\\x6869'::bytea AS o",
				nil, [][]any{{int64(1), int64(2), int64(3), 1.5, 2.5, int64(10), true, "x", nil, "2021-01-02", "2021-01-01 10:00:00", "{1,2}", `{"a": 1}`, "NaN", `\x6869`}}},
			{"SELECT invoice_date, total FROM invoice WHERE invoice_id = 1", []string{"invoice_date", "total"}, [][]any{{"2021-01-01 00:00:00", 1.98}}},
			{"SELECT name FROM genre WHERE false", []string{"name"}, [][]any{}},
		}
		for _, tt := range tests {
			res, err := db.Query(ctx, tt.sql)
			if err != nil {
				t.Errorf("%q: %v", tt.sql, err)
				continue
			}
			if tt.cols != nil && !reflect.DeepEqual(res.Columns, tt.cols) {
				t.Errorf("%q: columns %q, want %q", tt.sql, res.Columns, tt.cols)
			}
			if tt.rows != nil && !reflect.DeepEqual(res.Rows, tt.rows) {
				t.Errorf("%q: rows %#v, want %#v", tt.sql, res.Rows, tt.rows)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Errorf("%q: result does not marshal to JSON: %v", tt.sql, err)
			}
		}
	})

	t.Run("query error", func(t *testing.T) {
		_, err := db.Query(ctx, "SELECT * FROM albm")
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), `relation "albm" does not exist`) {
			t.Errorf("error %T %v, want a *QueryError with PostgreSQL's message", err, err)
		}
	})

	t.Run("max rows", func(t *testing.T) {
		small, err := Open(ctx, dsn, &Options{MaxRows: 10, AllowUnsafeRole: true})
		if err != nil {
			t.Fatal(err)
		}
		defer small.Close()
		for i := 0; i < 3; i++ { // the pool recovers from abandoned results
			res, err := small.Query(ctx, "SELECT track_id FROM track ORDER BY track_id")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 10 || !res.Truncated || res.Rows[9][0] != int64(10) {
				t.Errorf("got %d rows, truncated %v; want 10, true", len(res.Rows), res.Truncated)
			}
		}
		res, err := small.Query(ctx, "SELECT count(*) FROM track")
		if err != nil || res.Rows[0][0] != int64(3503) {
			t.Errorf("after truncated results: %v, %v", res, err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		quick, err := Open(ctx, dsn, &Options{Timeout: 500 * time.Millisecond, AllowUnsafeRole: true})
		if err != nil {
			t.Fatal(err)
		}
		defer quick.Close()
		start := time.Now()
		_, err = quick.Query(ctx, slowSQL)
		elapsed := time.Since(start)
		var qe *QueryError
		if !errors.As(err, &qe) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %T %v, want a *QueryError matching context.DeadlineExceeded", err, err)
		}
		if !strings.Contains(err.Error(), "time limit of 500ms") || !strings.Contains(err.Error(), "statement timeout") {
			t.Errorf("message %q does not name the time limit", err)
		}
		if elapsed > 4*time.Second {
			t.Errorf("took %v", elapsed)
		}
		t.Logf("stopped after %v: %v", elapsed, err)

		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err = db.Query(cctx, slowSQL)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 4*time.Second {
			t.Errorf("with a caller deadline: %v after %v", err, time.Since(start))
		}
		if _, err := quick.Query(ctx, "SELECT 1"); err != nil {
			t.Errorf("after a timeout: %v", err)
		}
	})

	t.Run("schema", func(t *testing.T) {
		ts, err := db.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) != 11 || ts[0].Name != "album" || ts[0].Schema != "public" || ts[0].RowCount != 347 {
			t.Fatalf("tables: %+v", ts)
		}
		if !reflect.DeepEqual(ts[0].ForeignKeys, []ForeignKey{{Columns: []string{"artist_id"}, RefSchema: "public", RefTable: "artist", RefColumns: []string{"artist_id"}}}) {
			t.Errorf("album foreign keys: %+v", ts[0].ForeignKeys)
		}
		s, err := db.Schema(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, frag := range []string{
			"-- PostgreSQL database",
			"CREATE TABLE album ( -- 347 rows",
			"  title character varying(160) NOT NULL, -- e.g. 'For Those About To Rock We Salute You'",
			"  FOREIGN KEY (artist_id) REFERENCES artist(artist_id)\n);",
			"  PRIMARY KEY (playlist_id, track_id),",
			"  total numeric(10,2) NOT NULL, -- e.g. ",
		} {
			if !strings.Contains(s, frag) {
				t.Errorf("schema lacks %q", frag)
			}
		}
		t.Logf("schema, %d bytes:\n%s", len(s), s)
	})

	// The setup the package documentation recommends: a role that may
	// only read.
	t.Run("read-only role", func(t *testing.T) {
		reader := chinooktest.Reader(t, dsn)
		rdb, err := Open(ctx, reader, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rdb.Close()
		res, err := rdb.Query(ctx, "SELECT count(*) FROM invoice_line")
		if err != nil || res.Rows[0][0] != int64(2240) {
			t.Errorf("as the reader role: %v, %v", res, err)
		}
		if _, err := rdb.queryUnchecked(ctx, "SELECT pg_read_file('/etc/hostname')"); err == nil {
			t.Error("a read-only role read a server file")
		}
		if ts, err := rdb.Tables(ctx); err != nil || len(ts) != 11 {
			t.Errorf("Tables as the reader role: %d tables, %v", len(ts), err)
		}
	})

	if after := pgFingerprint(t, dsn); after != before {
		t.Fatalf("the database changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
