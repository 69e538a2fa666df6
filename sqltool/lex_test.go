package sqltool

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		dialect string
		sql     string
		want    []string // statement texts
	}{
		{SQLite, "SELECT 1", []string{"SELECT 1"}},
		{SQLite, "  SELECT 1 ;  ", []string{"SELECT 1"}},
		{SQLite, "SELECT 1;;; ", []string{"SELECT 1"}},
		{SQLite, "SELECT 1; SELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{SQLite, "SELECT ';' AS a; -- trailing ; comment", []string{"SELECT ';' AS a"}},
		{SQLite, "SELECT 'it''s; ok'", []string{"SELECT 'it''s; ok'"}},
		{SQLite, `SELECT "a;""b" FROM t`, []string{`SELECT "a;""b" FROM t`}},
		{SQLite, "SELECT [a;b], `c;d` FROM t", []string{"SELECT [a;b], `c;d` FROM t"}},
		{SQLite, "/* x; */ SELECT 1 /* y; */", []string{"SELECT 1"}},
		{SQLite, "SELECT 1 -- ; DROP TABLE t\n", []string{"SELECT 1"}},
		{SQLite, "SELECT 1 /* /* */ ; DROP TABLE t", []string{"SELECT 1", "DROP TABLE t"}},
		{PostgreSQL, "SELECT 1 /* /* */ ; DROP TABLE t */", []string{"SELECT 1"}},
		{PostgreSQL, "SELECT $$a;b$$, $tag$ $$; $tag$", []string{"SELECT $$a;b$$, $tag$ $$; $tag$"}},
		{PostgreSQL, `SELECT E'\';' ; DROP TABLE t`, []string{`SELECT E'\';'`, "DROP TABLE t"}},
		{SQLite, `SELECT '\'; DROP TABLE t; --'`, []string{`SELECT '\'`, "DROP TABLE t"}},
		{PostgreSQL, "SELECT a$b, $1 FROM t; SELECT 2", []string{"SELECT a$b, $1 FROM t", "SELECT 2"}},
		{PostgreSQL, "SELECT '[x;y]'::text", []string{"SELECT '[x;y]'::text"}},
		{SQLite, "", nil},
		{SQLite, " -- only a comment", nil},
	}
	for _, tt := range tests {
		stmts, err := split(tt.dialect, tt.sql)
		if err != nil {
			t.Errorf("split(%s, %q): %v", tt.dialect, tt.sql, err)
			continue
		}
		var got []string
		for _, s := range stmts {
			got = append(got, s.text(tt.sql))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("split(%s, %q) = %q, want %q", tt.dialect, tt.sql, got, tt.want)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	for _, tt := range []struct{ dialect, sql string }{
		{SQLite, "SELECT 'abc"},
		{SQLite, `SELECT "abc`},
		{SQLite, "SELECT [abc"},
		{SQLite, "SELECT `abc"},
		{SQLite, "SELECT 1 /* open"},
		{PostgreSQL, "SELECT 1 /* /* */"},
		{PostgreSQL, "SELECT $x$ abc"},
		{PostgreSQL, `SELECT E'abc\'`},
	} {
		if _, err := split(tt.dialect, tt.sql); err == nil {
			t.Errorf("split(%s, %q): no error", tt.dialect, tt.sql)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := []struct{ dialect, sql, want string }{
		{SQLite, "SELECT 1;", "SELECT 1"},
		{SQLite, "select * from Album where Title = 'Delete; Drop'", ""},
		{SQLite, "WITH a AS (SELECT 1) SELECT * FROM a", ""},
		{SQLite, "VALUES (1), (2)", ""},
		{SQLite, "EXPLAIN QUERY PLAN SELECT 1", ""},
		{SQLite, "(SELECT 1) UNION (SELECT 2)", ""},
		{SQLite, "SELECT replace(Name, 'a', 'b') FROM Genre", ""},
		{SQLite, `SELECT "delete" FROM t`, ""},
		{SQLite, "SELECT t.update FROM t", ""},
		{PostgreSQL, "SELECT $$DROP TABLE x; DELETE$$", ""},
		{PostgreSQL, "SELECT count(*) OVER (ORDER BY x) FROM t", ""},
		{PostgreSQL, "EXPLAIN ANALYZE SELECT 1", ""},
		{PostgreSQL, `SELECT U&"d\0061t\+000061" FROM t`, ""},
		{PostgreSQL, `SELECT U&"d!0061ta" UESCAPE '!' FROM t`, ""},
		{PostgreSQL, `SELECT U&'\0041' AS a, u&'!0041' UESCAPE '!' AS b`, ""},
		{PostgreSQL, `SELECT "a""b"(1)`, ""},
		{PostgreSQL, "SELECT lower(name), string_agg(x, ',') FROM t GROUP BY 1", ""},
		{PostgreSQL, "SELECT lo_price, sleep_hours FROM t", ""}, // columns, not calls
	}
	for _, tt := range ok {
		got, r := check(tt.dialect, tt.sql)
		if r != nil {
			t.Errorf("check(%s, %q) refused: %v", tt.dialect, tt.sql, r)
			continue
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("check(%s, %q) = %q, want %q", tt.dialect, tt.sql, got, tt.want)
		}
	}
	refused := []struct{ dialect, sql, reason string }{
		{SQLite, "", "empty"},
		{SQLite, "SELECT 1; SELECT 2", "one statement"},
		{SQLite, "DROP TABLE Album", "must start with"},
		{SQLite, "PRAGMA user_version", "must start with"},
		{SQLite, "WITH x AS (SELECT 1) DELETE FROM Album", "DELETE"},
		{SQLite, "WITH x AS (SELECT 1) REPLACE INTO Genre VALUES (1, 'x')", "REPLACE"},
		{SQLite, "SELECT * INTO t2 FROM t", "INTO"},
		{SQLite, "SELECT load_extension('x')", "load_extension"},
		{SQLite, "EXPLAIN ATTACH 'x' AS y", "ATTACH"},
		{SQLite, "SELECT 'unterminated", "could not be parsed"},
		{PostgreSQL, "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "DELETE"},
		{PostgreSQL, "SELECT pg_catalog.pg_read_file('/etc/passwd')", "pg_read_file"},
		{PostgreSQL, `SELECT "pg_read_file"('/etc/passwd')`, "pg_read_file"},
		{PostgreSQL, "SELECT set_config('transaction_read_only', 'off', true)", "set_config"},
		{PostgreSQL, "SELECT * FROM t FOR UPDATE", "UPDATE"},
		{PostgreSQL, "EXPLAIN ANALYZE EXECUTE p", "EXECUTE"},
		{PostgreSQL, "COPY t TO '/tmp/x'", "must start with"},
		{SQLite, "SELECT 1\x00; DROP TABLE t", "NUL"},
		{SQLite, "SELECT `load_extension`('x')", "load_extension"},
		{SQLite, "SELECT [LOAD_EXTENSION]('x')", "load_extension"},
		// PostgreSQL identifiers are decoded before the check: quoted,
		// Unicode-escaped (U&"..." with or without UESCAPE), case-folded.
		{PostgreSQL, `SELECT U&"\0070g_advisory_lock"(1)`, "pg_advisory_lock"},
		{PostgreSQL, `SELECT u&"pg\005Fsleep"(10)`, "pg_sleep"},
		{PostgreSQL, `SELECT U&"!0070g_terminate_backend" UESCAPE '!' (pid) FROM pg_stat_activity`, "pg_terminate_backend"},
		{PostgreSQL, `SELECT U&"pg_cancel_backend" uescape '#'(pid) FROM pg_stat_activity`, "pg_cancel_backend"},
		{PostgreSQL, `SELECT U&"\+000070g_read_file"('/etc/passwd')`, "pg_read_file"},
		{PostgreSQL, `SELECT pg_catalog.U&"set\005Fconfig"('a.b', 'c', false)`, "set_config"},
		{PostgreSQL, `SELECT U&"pg_adv\0069sory_xact_lock"(1)`, "pg_advisory_xact_lock"},
		{PostgreSQL, `SELECT "PG_SLEEP"(1)`, "pg_sleep"},
		{PostgreSQL, "SELECT PG_ADVISORY_LOCK(1)", "pg_advisory_lock"},
		{PostgreSQL, `SELECT 1U&"\0070g_sleep"(1)`, "pg_sleep"},
		{PostgreSQL, `SELECT 0x1U&"\0070g_sleep"(1)`, "pg_sleep"},
		{PostgreSQL, `SELECT U&"\00zz"(1)`, "could not be parsed"},
		{PostgreSQL, `SELECT U&"\D800"(1)`, "could not be parsed"},
		{PostgreSQL, `SELECT U&"x" UESCAPE 'ab'`, "could not be parsed"},
		// Functions that run SQL given as text.
		{PostgreSQL, "SELECT query_to_xml('SELECT pg_advisory_lock(1)', true, false, '')", "query_to_xml"},
		{PostgreSQL, "SELECT query_to_xml_and_xmlschema('SELECT 1', true, false, '')", "query_to_xml_and_xmlschema"},
		{PostgreSQL, "SELECT query_to_xmlschema('SELECT 1', true, false, '')", "query_to_xmlschema"},
		{PostgreSQL, "SELECT table_to_xml('pg_authid', true, false, '')", "table_to_xml"},
		{PostgreSQL, "SELECT cursor_to_xml('c', 1, true, false, '')", "cursor_to_xml"},
		{PostgreSQL, "SELECT schema_to_xml('public', true, false, '')", "schema_to_xml"},
		{PostgreSQL, "SELECT database_to_xml(true, false, '')", "database_to_xml"},
		{PostgreSQL, "SELECT xpath('//x', query_to_xml('SELECT 1', true, false, ''))", "query_to_xml"},
		{PostgreSQL, "SELECT * FROM ts_stat('SELECT to_tsvector(pg_sleep(1)::text)')", "ts_stat"},
		{PostgreSQL, "SELECT ts_rewrite('a'::tsquery, 'SELECT t, s FROM aliases')", "ts_rewrite"},
		{PostgreSQL, "SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(a int)", "dblink"},
		{PostgreSQL, "SELECT dblink_exec('dbname=x', 'DROP TABLE t')", "dblink_exec"},
		{PostgreSQL, "SELECT * FROM crosstab('SELECT 1, 2, 3') AS t(a int, b int)", "crosstab"},
		{PostgreSQL, "SELECT * FROM crosstab3('SELECT 1, 2, 3')", "crosstab3"},
		// State-changing and admin functions.
		{PostgreSQL, "SELECT pg_try_advisory_lock_shared(1)", "pg_try_advisory_lock_shared"},
		{PostgreSQL, "SELECT pg_sleep_for('1 minute')", "pg_sleep_for"},
		{PostgreSQL, "SELECT pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"},
		{PostgreSQL, "SELECT pg_ls_dir('.')", "pg_ls_dir"},
		{PostgreSQL, "SELECT pg_stat_file('postgresql.conf')", "pg_stat_file"},
		{PostgreSQL, "SELECT loread(lo_open(1, 262144), 10)", "loread"},
		{PostgreSQL, "SELECT lowrite(0, 'x')", "lowrite"},
		{PostgreSQL, "SELECT lo_export(1, '/tmp/x')", "lo_export"},
		{PostgreSQL, "SELECT nextval('s')", "nextval"},
		{PostgreSQL, "SELECT setval('s', 1)", "setval"},
		{PostgreSQL, "SELECT pg_notify('c', 'x')", "pg_notify"},
		{PostgreSQL, "SELECT pg_reload_conf()", "pg_reload_conf"},
		{PostgreSQL, "SELECT pg_stat_reset()", "pg_stat_reset"},
		{PostgreSQL, "SELECT pg_logical_slot_get_changes('s', NULL, NULL)", "pg_logical_slot_get_changes"},
		{PostgreSQL, "SELECT txid_current()", "txid_current"},
		{PostgreSQL, "SELECT pg_current_xact_id()", "pg_current_xact_id"},
		{PostgreSQL, "SELECT brin_summarize_new_values('i')", "brin_summarize_new_values"},
	}
	for _, tt := range refused {
		_, r := check(tt.dialect, tt.sql)
		if r == nil {
			t.Errorf("check(%s, %q) accepted", tt.dialect, tt.sql)
			continue
		}
		if !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("check(%s, %q) reason %q, want it to mention %q", tt.dialect, tt.sql, r.Reason, tt.reason)
		}
		if r.SQL != tt.sql {
			t.Errorf("RefusedError.SQL = %q, want %q", r.SQL, tt.sql)
		}
	}
	var re *RefusedError
	if err := Check(SQLite, "DELETE FROM t"); !errors.As(err, &re) {
		t.Errorf("Check: %v, want a *RefusedError", err)
	}
	if err := Check("mysql", "SELECT 1"); err == nil {
		t.Error("Check accepted an unknown dialect")
	}
	if err := Check(PostgreSQL, "SELECT 1"); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestHasTopLevelOrderBy(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		want bool
	}{
		{"SELECT a FROM t ORDER BY a", true},
		{"SELECT a FROM t order  by a DESC LIMIT 1", true},
		{"SELECT a FROM t", false},
		{"SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)", false},
		{"SELECT rank() OVER (ORDER BY a) FROM t", false},
		{"SELECT 'ORDER BY' FROM t", false},
		{"SELECT a FROM t -- ORDER BY a", false},
	} {
		if got := HasTopLevelOrderBy(SQLite, tt.sql); got != tt.want {
			t.Errorf("HasTopLevelOrderBy(%q) = %v, want %v", tt.sql, got, tt.want)
		}
	}
}

// FuzzSplit checks that the lexer never panics on any input, in either
// dialect, and that a SELECT of one string literal holding arbitrary text
// (quotes escaped the SQL way) stays one statement, accepted by check
// unless it holds a NUL byte. The
// property holds for PostgreSQL too: its standard strings take no
// backslash escapes (standard_conforming_strings=on).
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", ";", "'", "''", `"`, "--", "/*", "*/", "$$", "$a$", "E'\\'", "a;b", "x'00'",
		"SELECT 1; DROP TABLE t", "it's; DROP TABLE t; --", "/* ; */", "$tag$;$tag$", "\x00\xff",
		// The attack's bypasses (issue 14) and the names they reach.
		`SELECT U&"\0070g_advisory_lock"(1)`, `SELECT U&"!0070g_sleep" UESCAPE '!' (1)`,
		`SELECT U&"\+000070g_read_file"('/etc/passwd')`, `U&"`, `U&'`, `U&"\D83D\DE00"`, `UESCAPE '!'`,
		"SELECT query_to_xml('SELECT pg_advisory_lock(1)', true, false, '')",
		"SELECT * FROM ts_stat('SELECT 1')", "SELECT 'a\\'', pg_sleep(1) --'",
		"pg_advisory_lock", "set_config", "pg_terminate_backend", "query_to_xml", "ts_rewrite", "lo_import",
		"dblink_exec", "PG_SLEEP", "load_extension", "randomblob(1e9)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range []string{SQLite, PostgreSQL} {
			stmts, err := split(d, s)
			if err == nil {
				for _, st := range stmts {
					if st.start < 0 || st.end > len(s) || st.start > st.end || len(st.toks) == 0 {
						t.Fatalf("split(%s, %q): bad statement span %d..%d", d, s, st.start, st.end)
					}
				}
			}
			_, _ = check(d, s)
			_ = HasTopLevelOrderBy(d, s)

			q := "SELECT '" + strings.ReplaceAll(s, "'", "''") + "' AS v"
			stmts, err = split(d, q)
			if err != nil || len(stmts) != 1 {
				t.Fatalf("split(%s, %q) = %d statements, %v; want 1", d, q, len(stmts), err)
			}
			got, r := check(d, q)
			if strings.IndexByte(s, 0) >= 0 {
				if r == nil {
					t.Fatalf("check(%s, %q) accepted a NUL byte", d, q)
				}
			} else if r != nil || got != q {
				t.Fatalf("check(%s, %q) = %q, %v; want the query back", d, q, got, r)
			}
		}

		// However s is spelled as a PostgreSQL identifier, every rune a
		// Unicode escape, quoted, or bare when it can be, a call to it is
		// refused exactly when s names a denied function.
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 || s == "" {
			return
		}
		name := strings.ToLower(truncateUTF8(s, maxIdentifierLen))
		denied := isDeniedFunction(PostgreSQL, name)
		var esc strings.Builder
		for _, r := range s {
			if r > 0xFFFF {
				fmt.Fprintf(&esc, "\\+%06X", r)
			} else {
				fmt.Fprintf(&esc, "\\%04X", r)
			}
		}
		spellings := []string{
			`SELECT U&"` + esc.String() + `"(1)`,
			`SELECT U&"` + strings.ReplaceAll(esc.String(), `\`, "!") + `" UESCAPE '!' (1)`,
			`SELECT pg_catalog."` + strings.ReplaceAll(s, `"`, `""`) + `"(1)`,
		}
		for _, q := range spellings {
			_, r := check(PostgreSQL, q)
			if denied && r == nil {
				t.Fatalf("check(%q) accepted a call to the denied %q", q, name)
			}
			if !denied && r != nil {
				t.Fatalf("check(%q) refused a call to %q, which is not denied: %v", q, name, r)
			}
		}
	})
}
