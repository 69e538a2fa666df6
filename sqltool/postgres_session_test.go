package sqltool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/internal/chinooktest"
)

// TestPostgresRoleCheck: Open refuses a superuser, and a role that may
// write, unless told to allow it; the role the docs recommend opens.
func TestPostgresRoleCheck(t *testing.T) {
	dsn := loadChinookPG(t)
	ctx := context.Background()

	_, err := Open(ctx, dsn, nil)
	var re *RoleError
	if !errors.Is(err, ErrUnsafeRole) || !errors.As(err, &re) {
		t.Fatalf("Open as a superuser: %T %v, want a *RoleError matching ErrUnsafeRole", err, err)
	}
	if !strings.Contains(err.Error(), "superuser") || len(re.Reasons) == 0 || re.Role == "" {
		t.Errorf("RoleError %+v: want it to name the role and say superuser", re)
	}

	db, err := Open(ctx, dsn, &Options{AllowUnsafeRole: true})
	if err != nil {
		t.Fatalf("Open as a superuser with AllowUnsafeRole: %v", err)
	}
	if w := strings.Join(db.Warnings(), "\n"); !strings.Contains(w, "superuser") {
		t.Errorf("Warnings() = %q, want the superuser named", w)
	}
	db.Close()

	reader := chinooktest.Reader(t, dsn)
	rdb, err := Open(ctx, reader, nil)
	if err != nil {
		t.Fatalf("Open as the recommended reader role: %v", err)
	}
	if w := rdb.Warnings(); len(w) != 0 {
		t.Errorf("reader Warnings() = %q, want none", w)
	}
	rdb.Close()

	// A role that may write to one table, or create in a schema, is refused.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	readerRole := strings.SplitN(strings.TrimPrefix(reader, "postgres://"), "@", 2)[0]
	for _, tt := range []struct{ grant, revoke, want string }{
		{"GRANT INSERT ON genre TO %s", "REVOKE INSERT ON genre FROM %s", "public.genre"},
		{"GRANT UPDATE (name) ON artist TO %s", "REVOKE UPDATE (name) ON artist FROM %s", "public.artist"},
		{"GRANT CREATE ON SCHEMA public TO %s", "REVOKE CREATE ON SCHEMA public FROM %s", "schema public"},
		{"GRANT pg_read_server_files TO %s", "REVOKE pg_read_server_files FROM %s", "pg_read_server_files"},
	} {
		id := pgx.Identifier{readerRole}.Sanitize()
		if _, err := conn.Exec(ctx, strings.ReplaceAll(tt.grant, "%s", id)); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, reader, nil)
		if !errors.Is(err, ErrUnsafeRole) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("after %q: Open = %v, want ErrUnsafeRole naming %s", tt.grant, err, tt.want)
		}
		if _, err := conn.Exec(ctx, strings.ReplaceAll(tt.revoke, "%s", id)); err != nil {
			t.Fatal(err)
		}
	}
	if rdb, err := Open(ctx, reader, nil); err != nil {
		t.Errorf("after the revokes: %v", err)
	} else {
		rdb.Close()
	}
}

// TestPostgresSessionState: as the recommended plain role, nothing a call
// does to its session outlives the call (advisory locks, settings), and
// the spellings of the attack's bypasses are refused.
func TestPostgresSessionState(t *testing.T) {
	dsn := loadChinookPG(t)
	ctx := context.Background()
	reader := chinooktest.Reader(t, dsn)
	db, err := Open(ctx, reader, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	advisoryLocks := func() int64 {
		t.Helper()
		var n int64
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The lexer refuses every spelling of the lock.
	for _, q := range []string{
		"SELECT pg_advisory_lock(4242)",
		`SELECT U&"\0070g_advisory_lock"(4242)`,
		`SELECT U&"!0070g_advisory_lock" UESCAPE '!' (4242)`,
		`SELECT pg_catalog."pg_advisory_lock"(4242)`,
		"SELECT query_to_xml('SELECT pg_advisory_lock(4242)', true, false, '')",
	} {
		var re *RefusedError
		if _, err := db.Query(ctx, q); !errors.As(err, &re) {
			t.Errorf("%q: %v, want refused", q, err)
		}
	}
	// Past the lexer, the database runs it, but the lock dies with the call.
	for _, q := range []string{
		"SELECT pg_advisory_lock(4242)",
		"SELECT pg_advisory_lock_shared(4242)",
		"SELECT pg_try_advisory_lock(4242)",
		"SELECT query_to_xml('SELECT pg_advisory_lock(4242)', true, false, '')",
	} {
		if _, err := db.queryUnchecked(ctx, q); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if n := advisoryLocks(); n != 0 {
			t.Errorf("%q: %d advisory locks held after the call, want 0", q, n)
		}
	}

	// Settings do not outlive the call either.
	var pids []int64
	for i := 0; i < 4; i++ {
		res, err := db.queryUnchecked(ctx, "SELECT pg_backend_pid(), set_config('search_path', 'pwned', false)")
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, res.Rows[0][0].(int64))
		res, err = db.Query(ctx, "SELECT pg_backend_pid(), current_setting('search_path'), current_setting('default_transaction_read_only')")
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows[0][1]; got == "pwned" || res.Rows[0][2] != "on" {
			t.Errorf("after set_config, session %v has search_path %v, default_transaction_read_only %v", res.Rows[0][0], got, res.Rows[0][2])
		}
	}

	// Another session of the same role cannot be signalled.
	victim, err := pgx.Connect(ctx, reader)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close(ctx)
	for _, q := range []string{
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
		`SELECT U&"pg_terminate_backend"(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
		`SELECT U&"\0070g_terminate_backend"(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
		`SELECT U&"#0070g_cancel_backend" UESCAPE '#' (pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()`,
		`SELECT "PG_TERMINATE_BACKEND"(pid) FROM pg_stat_activity`,
		`SELECT PG_TERMINATE_BACKEND(pid) FROM pg_stat_activity`,
	} {
		var re *RefusedError
		if _, err := db.Query(ctx, q); !errors.As(err, &re) {
			t.Errorf("%q: %v, want refused", q, err)
		}
	}
	if err := victim.Ping(ctx); err != nil {
		t.Errorf("the other session of the role was terminated: %v", err)
	}

	// A reader cannot read server files even past the lexer.
	if _, err := db.queryUnchecked(ctx, "SELECT pg_read_file('/etc/hostname')"); err == nil {
		t.Error("the reader role read a server file")
	}
}

// TestPostgresStandardStrings: the server reads '...' strings as the lexer
// does, without backslash escapes, even when the DSN asks otherwise; else
// 'a\”, f() --' would hide a call to f from the lexer.
func TestPostgresStandardStrings(t *testing.T) {
	dsn := chinooktest.Reader(t, loadChinookPG(t))
	ctx := context.Background()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := Open(ctx, dsn+sep+"standard_conforming_strings=off", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT 'a\'', pg_advisory_lock(9) --' AS s`
	res, err := db.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Columns) != 1 || res.Rows[0][0] != `a\', pg_advisory_lock(9) --` {
		t.Errorf("%q returned %v %v, want one string column", q, res.Columns, res.Rows)
	}
}
