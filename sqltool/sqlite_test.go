package sqltool

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/datadir"
)

// chinookCopy copies the Chinook SQLite file into a new temporary
// directory and returns its path.
func chinookCopy(t *testing.T) string {
	t.Helper()
	src := datadir.Require(t, "chinook/Chinook_Sqlite.sqlite")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "chinook.sqlite")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sqliteFingerprint sums up everything a write could change: the file's
// bytes, the files in its directory, and every table's row count (read
// through a connection of the test's own).
func sqliteFingerprint(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	fmt.Fprintf(&b, "sha256 %s\n", hex.EncodeToString(sum[:]))
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fmt.Fprintf(&b, "file %s\n", e.Name())
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		var c int64
		if err := db.QueryRow("SELECT count(*) FROM " + quoteIdent(n)).Scan(&c); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "table %s %d\n", n, c)
	}
	return b.String()
}

func openChinook(t *testing.T, opts *Options) (*DB, string) {
	t.Helper()
	p := chinookCopy(t)
	db, err := Open(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, p
}

func TestSQLiteHostile(t *testing.T) {
	db, path := openChinook(t, nil)
	before := sqliteFingerprint(t, path)
	if !strings.Contains(before, "table Album 347") {
		t.Fatalf("unexpected fingerprint:\n%s", before)
	}
	ctx := context.Background()
	for _, h := range append(append([]hostile{}, hostileCommon...), hostileSQLite...) {
		q := strings.ReplaceAll(h.sql, "%DIR%", filepath.Dir(path))
		res, err := db.Query(ctx, q)
		how := refusedOrQueryError(err)
		switch {
		case err == nil:
			t.Errorf("%s: %q ran, returned %v", h.name, q, res)
		case how == "":
			t.Errorf("%s: %q: error %T %v is neither *RefusedError nor *QueryError", h.name, q, err, err)
		default:
			t.Logf("%-40s %-8s %v", h.name, how, err)
		}
		if after := sqliteFingerprint(t, path); after != before {
			t.Fatalf("%s: %q changed the database:\nbefore:\n%s\nafter:\n%s", h.name, q, before, after)
		}
	}
	// The tool still works afterwards.
	res, err := db.Query(ctx, "SELECT count(*) FROM Album")
	if err != nil || res.Rows[0][0] != int64(347) {
		t.Fatalf("count after hostile queries: %v, %v", res, err)
	}
}

// TestSQLiteHostileWithoutLexer runs the hostile statements past the
// lexer, straight to the database, to show that the database-side layers
// (mode=ro, query_only, no ATTACH) stop every write on their own.
func TestSQLiteHostileWithoutLexer(t *testing.T) {
	ctx := context.Background()
	for _, h := range append(append([]hostile{}, hostileCommon...), hostileSQLite...) {
		t.Run(h.name, func(t *testing.T) {
			db, path := openChinook(t, nil)
			before := sqliteFingerprint(t, path)
			q := strings.ReplaceAll(h.sql, "%DIR%", filepath.Dir(path))
			_, err := db.queryUnchecked(ctx, q)
			var qe *QueryError
			switch {
			case err == nil && !h.dbAllows:
				t.Errorf("%q ran without the lexer", q)
			case err != nil && !errors.As(err, &qe):
				t.Errorf("%q: %T %v, want a *QueryError", q, err, err)
			case err != nil && h.dbAllows:
				t.Logf("%q: %v (expected the database to allow it harmlessly)", q, err)
			}
			if after := sqliteFingerprint(t, path); after != before {
				t.Fatalf("%q changed the database:\nbefore:\n%s\nafter:\n%s", q, before, after)
			}
			// Writes still fail on that connection afterwards.
			if _, err := db.queryUnchecked(ctx, "DELETE FROM Album"); err == nil {
				t.Error("DELETE ran after the statement")
			}
		})
	}
}

func TestSQLiteLegit(t *testing.T) {
	db, path := openChinook(t, nil)
	before := sqliteFingerprint(t, path)
	ctx := context.Background()
	tests := []struct {
		sql  string
		cols []string
		rows [][]any // nil: only check that it runs
	}{
		{"SELECT ';' AS semi, 'a;b' AS x;", []string{"semi", "x"}, [][]any{{";", "a;b"}}},
		{"SELECT Name FROM Genre WHERE Name = 'Rock' ; -- trailing ; comment", []string{"Name"}, [][]any{{"Rock"}}},
		{"/* leading; comment */ SELECT count(*) AS n FROM Album", []string{"n"}, [][]any{{int64(347)}}},
		{"SELECT 'it''s; fine' AS s", []string{"s"}, [][]any{{"it's; fine"}}},
		{`SELECT "Name" FROM "Genre" WHERE [GenreId] = 1`, []string{"Name"}, [][]any{{"Rock"}}},
		{"WITH a AS (SELECT 1 AS n) SELECT n FROM a", []string{"n"}, [][]any{{int64(1)}}},
		{"VALUES (1, 'x')", []string{"column1", "column2"}, [][]any{{int64(1), "x"}}},
		{"SELECT 1 AS n UNION ALL SELECT 2", nil, [][]any{{int64(1)}, {int64(2)}}},
		{"SELECT replace(Name, 'R', 'r') AS r FROM Genre WHERE GenreId = 1", []string{"r"}, [][]any{{"rock"}}},
		{"EXPLAIN QUERY PLAN SELECT * FROM Album WHERE AlbumId = 1", nil, nil},
		{"SELECT * FROM pragma_table_info('Album')", nil, nil},
		{"SELECT 1 AS i, 1.5 AS f, 'x' AS s, NULL AS n, x'6869' AS b, InvoiceDate AS d, Total AS t FROM Invoice WHERE InvoiceId = 1",
			[]string{"i", "f", "s", "n", "b", "d", "t"}, [][]any{{int64(1), 1.5, "x", nil, "hi", "2021-01-01 00:00:00", 1.98}}},
		{"SELECT 1e999 AS inf", []string{"inf"}, [][]any{{"Infinity"}}},
		{"SELECT Name FROM Genre WHERE 0", []string{"Name"}, [][]any{}},
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
	if after := sqliteFingerprint(t, path); after != before {
		t.Fatal("legit queries changed the database")
	}
}

func TestSQLiteQueryError(t *testing.T) {
	db, _ := openChinook(t, nil)
	_, err := db.Query(context.Background(), "SELECT * FROM Albm")
	var qe *QueryError
	if !errors.As(err, &qe) {
		t.Fatalf("error %T %v, want *QueryError", err, err)
	}
	if !strings.Contains(err.Error(), "no such table: Albm") || qe.SQL != "SELECT * FROM Albm" {
		t.Errorf("QueryError %q (SQL %q): want SQLite's own message", err, qe.SQL)
	}
	if qe.Unwrap() == nil {
		t.Error("QueryError.Unwrap is nil")
	}
}

func TestSQLiteMaxRows(t *testing.T) {
	db, _ := openChinook(t, &Options{MaxRows: 10})
	ctx := context.Background()
	res, err := db.Query(ctx, "SELECT TrackId FROM Track ORDER BY TrackId")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 || !res.Truncated || res.Rows[9][0] != int64(10) {
		t.Errorf("got %d rows, truncated %v; want 10, true", len(res.Rows), res.Truncated)
	}
	res, err = db.Query(ctx, "SELECT GenreId FROM Genre LIMIT 10")
	if err != nil || len(res.Rows) != 10 || res.Truncated {
		t.Errorf("exactly MaxRows rows: %v rows, truncated %v, %v", len(res.Rows), res.Truncated, err)
	}
	if o := db.Options(); o.MaxRows != 10 || o.Timeout != DefaultTimeout {
		t.Errorf("Options() = %+v", o)
	}
}

// slowSQL never finishes: a recursive CTE without a bound.
const slowSQL = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"

func TestSQLiteTimeout(t *testing.T) {
	db, _ := openChinook(t, &Options{Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := db.Query(context.Background(), slowSQL)
	elapsed := time.Since(start)
	var qe *QueryError
	if !errors.As(err, &qe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %T %v, want a *QueryError matching context.DeadlineExceeded", err, err)
	}
	if !strings.Contains(err.Error(), "time limit of 300ms") {
		t.Errorf("message %q does not name the time limit", err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("took %v", elapsed)
	}
	t.Logf("stopped after %v: %v", elapsed, err)

	// The caller's deadline, shorter than Timeout, is honoured too.
	db2, _ := openChinook(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = db2.Query(ctx, slowSQL)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("with a caller deadline: %v after %v", err, time.Since(start))
	}
	// And the DB still works.
	if _, err := db.Query(context.Background(), "SELECT 1"); err != nil {
		t.Errorf("after a timeout: %v", err)
	}
}

func TestSQLiteOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.sqlite")
	if db, err := Open(ctx, missing, nil); err == nil {
		db.Close()
		t.Error("opened a missing file")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created %s: %v", missing, err)
	}
	junk := filepath.Join(dir, "junk.sqlite")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(ctx, junk, nil); err == nil {
		db.Close()
		t.Error("opened a file that is not a database")
	}
	if _, err := Open(ctx, "", nil); err == nil {
		t.Error("opened an empty path")
	}
	if _, err := Open(ctx, "file::memory:", nil); err == nil {
		t.Error("opened an in-memory database")
	}

	p := chinookCopy(t)
	// A file: URI asking for read-write, with a pragma, still opens read-only.
	db, err := Open(ctx, "file:"+p+"?mode=rwc&_pragma=query_only(0)", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Dialect() != SQLite {
		t.Errorf("Dialect() = %q", db.Dialect())
	}
	if _, err := db.queryUnchecked(ctx, "DELETE FROM Album"); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("DELETE through a mode=rwc URI: %v", err)
	}
	// query_only is on for every connection of the pool.
	e := db.eng.(*sqliteEngine)
	var conns []*sql.Conn
	for i := 0; i < 4; i++ {
		c, err := e.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var on int
		if err := c.QueryRowContext(ctx, "PRAGMA query_only").Scan(&on); err != nil || on != 1 {
			t.Errorf("connection %d: query_only = %d, %v", i, on, err)
		}
	}
	for _, c := range conns {
		c.Close()
	}

	// A path with characters that mean something in a URI.
	odd := filepath.Join(t.TempDir(), "a b?c#d%.sqlite")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(odd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(ctx, odd, nil)
	if err != nil {
		t.Fatalf("path with URI characters: %v", err)
	}
	db2.Close()

	var nilDB *DB
	if _, err := nilDB.Query(ctx, "SELECT 1"); err == nil {
		t.Error("Query on a nil DB succeeded")
	}
	if err := nilDB.Close(); err != nil {
		t.Error(err)
	}
}

func TestSQLiteSchema(t *testing.T) {
	db, _ := openChinook(t, nil)
	ctx := context.Background()
	ts, err := db.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range ts {
		names = append(names, tb.Name)
	}
	want := []string{"Album", "Artist", "Customer", "Employee", "Genre", "Invoice", "InvoiceLine", "MediaType", "Playlist", "PlaylistTrack", "Track"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %q, want %q", names, want)
	}
	album := ts[0]
	if album.RowCount != 347 || !reflect.DeepEqual(album.PrimaryKey, []string{"AlbumId"}) || len(album.Columns) != 3 {
		t.Errorf("Album: %+v", album)
	}
	if c := album.Columns[1]; c.Name != "Title" || c.Type != "NVARCHAR(160)" || !c.NotNull || len(c.Samples) == 0 {
		t.Errorf("Album.Title: %+v", c)
	}
	if !reflect.DeepEqual(album.ForeignKeys, []ForeignKey{{Columns: []string{"ArtistId"}, RefTable: "Artist", RefColumns: []string{"ArtistId"}}}) {
		t.Errorf("Album foreign keys: %+v", album.ForeignKeys)
	}
	pt := ts[9]
	if !reflect.DeepEqual(pt.PrimaryKey, []string{"PlaylistId", "TrackId"}) || len(pt.ForeignKeys) != 2 {
		t.Errorf("PlaylistTrack: %+v", pt)
	}
	s, err := db.Schema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{
		"CREATE TABLE Album ( -- 347 rows",
		"  Title NVARCHAR(160) NOT NULL, -- e.g. 'For Those About To Rock We Salute You'",
		"  FOREIGN KEY (ArtistId) REFERENCES Artist(ArtistId)\n);",
		"  PRIMARY KEY (PlaylistId, TrackId),",
		"Name NVARCHAR(120), -- e.g. 'Rock', 'Jazz', 'Metal'",
	} {
		if !strings.Contains(s, frag) {
			t.Errorf("schema lacks %q", frag)
		}
	}
	if len(s) > 12000 {
		t.Errorf("schema is %d bytes, want it compact", len(s))
	}
	t.Logf("schema, %d bytes:\n%s", len(s), s)
}

func TestFormatSchemaQuoting(t *testing.T) {
	ts := []Table{{Schema: "sales", Name: "Order Lines", RowCount: -1, View: true,
		Columns: []Column{{Name: "order", Type: "integer"}, {Name: "AlbumId", Type: "int"}, {Name: "plain_name"}}}}
	pg := FormatSchema(PostgreSQL, ts)
	for _, frag := range []string{`CREATE VIEW sales."Order Lines" (`, `  "order" integer,`, `  "AlbumId" int,`, "  plain_name\n"} {
		if !strings.Contains(pg, frag) {
			t.Errorf("PostgreSQL schema lacks %q:\n%s", frag, pg)
		}
	}
	if lite := FormatSchema(SQLite, ts); !strings.Contains(lite, "  AlbumId int,") {
		t.Errorf("SQLite schema quotes a mixed-case name:\n%s", lite)
	}
}

func TestJSONValue(t *testing.T) {
	tm := time.Date(2021, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		in   any
		want any
	}{
		{nil, nil}, {int64(3), int64(3)}, {int32(3), int64(3)}, {uint8(3), int64(3)}, {3, int64(3)},
		{float32(1.5), 1.5}, {[]byte("hi"), "hi"}, {true, true},
		{tm, "2021-01-02 03:04:05"},
		{time.Date(2021, 1, 2, 3, 4, 5, 500, time.FixedZone("", 3600)), "2021-01-02 03:04:05.0000005+01:00"},
		{[]int{1, 2}, "[1,2]"},
	} {
		if got := jsonValue(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("jsonValue(%#v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	if got := formatTime(time.Date(2021, 1, 2, 0, 0, 0, 0, time.UTC), true); got != "2021-01-02" {
		t.Errorf("date: %q", got)
	}
}
