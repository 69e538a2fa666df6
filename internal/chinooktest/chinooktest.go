// Package chinooktest gives tests the Chinook sample database: the SQLite
// file of the data directory, or a fresh PostgreSQL database loaded from
// its script. Tests skip, saying why, when the data or the PostgreSQL
// server binaries are absent.
package chinooktest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/internal/pgtest"
)

// SQLite returns the path of the Chinook SQLite file.
func SQLite(t testing.TB) string {
	t.Helper()
	return datadir.Require(t, "chinook/Chinook_Sqlite.sqlite")
}

// PostgreSQL creates a database holding Chinook from the project's
// PostgreSQL script and returns its DSN (as the superuser). The script
// begins by dropping and creating a database "chinook" and connecting to
// it with psql's \c; everything up to that line is skipped, the rest is
// plain SQL run in one simple-protocol Exec. Its names are snake_case
// (album.artist_id), unlike the SQLite file's.
func PostgreSQL(t *testing.T) string {
	t.Helper()
	script := datadir.Require(t, "chinook/Chinook_PostgreSql.sql")
	pdb := pgtest.New(t)
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	sql := string(b)
	if i := strings.Index(sql, "\\c chinook"); i >= 0 {
		j := strings.IndexByte(sql[i:], '\n')
		if j < 0 {
			t.Fatal("script ends after \\c")
		}
		sql = sql[i+j+1:]
	}
	for _, line := range strings.Split(sql, "\n") {
		if strings.HasPrefix(line, "\\") {
			t.Fatalf("unexpected psql meta-command in the script: %q", line)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pdb.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	start := time.Now()
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("loading Chinook: %v", err)
	}
	t.Logf("loaded Chinook into %s in %v", pdb.Name, time.Since(start))
	return pdb.DSN
}

// ReaderSQL is the SQL that creates the role docs/tools.md recommends for
// the SQL tool, for database db and schema public: a login role that may
// only connect and read. %[1]s is the role, %[2]s the database, both
// quoted identifiers.
const ReaderSQL = `CREATE ROLE %[1]s LOGIN;
GRANT CONNECT ON DATABASE %[2]s TO %[1]s;
GRANT USAGE ON SCHEMA public TO %[1]s;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO %[1]s;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO %[1]s;`

// Reader creates, in the database dsn names (a superuser's URL), the
// read-only role of ReaderSQL, named after the database, and returns the
// URL that connects as it. The role is dropped when the test ends.
func Reader(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	role := "reader_" + db
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(ReaderSQL, pgx.Identifier{role}.Sanitize(), pgx.Identifier{db}.Sanitize())); err != nil {
		t.Fatalf("creating the reader role: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP OWNED BY "+pgx.Identifier{role}.Sanitize())
		_, _ = c.Exec(context.Background(), "DROP ROLE "+pgx.Identifier{role}.Sanitize())
	})
	u.User = url.User(role)
	return u.String()
}
