package sqltool

import (
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/weftlang/weft/internal/pgtest"
)

// TestMain shares one PostgreSQL cluster among the tests, except when
// fuzzing: the fuzz workers need none (a test that does gets a cluster of
// its own from pgtest.New).
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	os.Exit(pgtest.Main(m))
}

// hostile is a statement Query must not let change the database.
type hostile struct {
	name string
	sql  string // table names in lower case: SQLite's are case-insensitive
	// dbAllows is set when the database-side layers alone (no lexer) run
	// the statement without error, harmlessly; the lexer refuses it.
	dbAllows bool
	// dbUnsafe is set when, for a superuser, only the lexer stops the
	// statement: the database would run it (PostgreSQL's read-only
	// transactions allow COPY TO a file, and a superuser may signal other
	// backends). A read-only role stops it too. It is not run without the
	// lexer.
	dbUnsafe bool
}

// hostileCommon holds the statements tried on both databases.
var hostileCommon = []hostile{
	{name: "drop table", sql: "DROP TABLE album"},
	{name: "delete", sql: "DELETE FROM album"},
	{name: "delete mixed case", sql: "dElEtE FrOm album WHERE 1 = 1"},
	{name: "update", sql: "UPDATE album SET title = 'pwned'"},
	{name: "insert", sql: "INSERT INTO genre VALUES (999, 'pwned')"},
	{name: "create table", sql: "CREATE TABLE pwned (x int)"},
	{name: "create index", sql: "CREATE INDEX pwned_idx ON album (title)"},
	{name: "select then drop", sql: "SELECT 1; DROP TABLE album"},
	{name: "select then drop, no space", sql: "SELECT 1;DROP TABLE album;"},
	{name: "empty statement then drop", sql: "SELECT 1;; DROP TABLE album"},
	{name: "semicolon in string then drop", sql: "SELECT ';' AS a; DROP TABLE album"},
	{name: "quote-escaped string then delete", sql: "SELECT 'it''s; fine' AS x; DELETE FROM album --"},
	{name: "backslash is no escape", sql: `SELECT * FROM album WHERE title = '\'; DELETE FROM album; --'`},
	{name: "semicolon in comment then drop", sql: "SELECT 1 /* ; */ ; DROP TABLE album"},
	{name: "line comment then delete", sql: "SELECT 1 -- comment\n; DELETE FROM album"},
	{name: "comment before drop", sql: "/* SELECT */ DROP TABLE album"},
	{name: "semicolon in quoted identifier then drop", sql: `SELECT 1 AS "a;b"; DROP TABLE album`},
	{name: "union then drop", sql: "SELECT album_id FROM album UNION SELECT 1; DROP TABLE album"},
	{name: "with delete", sql: "WITH x AS (SELECT 1) DELETE FROM album"},
	{name: "with insert", sql: "WITH x AS (SELECT 1) INSERT INTO genre SELECT 999, 'pwned'"},
	{name: "with update", sql: "WITH x AS (SELECT 1) UPDATE album SET title = 'pwned'"},
	{name: "transaction", sql: "BEGIN; DELETE FROM album; COMMIT"},
	{name: "explain delete", sql: "EXPLAIN DELETE FROM album", dbAllows: true},
	{name: "select into", sql: "SELECT * INTO pwned FROM album"},
}

// hostileSQLite holds the statements tried on SQLite only.
var hostileSQLite = []hostile{
	{name: "attach", sql: "ATTACH DATABASE '%DIR%/evil.db' AS evil"},
	{name: "select then attach", sql: "SELECT 1; ATTACH DATABASE '%DIR%/evil2.db' AS evil"},
	{name: "detach", sql: "DETACH DATABASE main"},
	{name: "pragma journal_mode wal", sql: "PRAGMA journal_mode = WAL"},
	{name: "pragma journal_mode off", sql: "PRAGMA journal_mode = OFF", dbAllows: true},
	{name: "pragma writable_schema", sql: "PRAGMA writable_schema = ON", dbAllows: true},
	{name: "pragma user_version", sql: "PRAGMA user_version = 1"},
	{name: "pragma query_only off", sql: "PRAGMA query_only = OFF", dbAllows: true},
	{name: "select then pragma", sql: "SELECT 1; PRAGMA user_version = 1"},
	{name: "create trigger", sql: "CREATE TRIGGER pwned AFTER INSERT ON album BEGIN DELETE FROM album; END"},
	{name: "create temp table", sql: "CREATE TEMP TABLE pwned (x)"},
	{name: "replace", sql: "REPLACE INTO genre VALUES (1, 'pwned')"},
	{name: "insert or replace", sql: "INSERT OR REPLACE INTO genre VALUES (1, 'pwned')"},
	{name: "with replace", sql: "WITH x AS (SELECT 1) REPLACE INTO genre VALUES (1, 'pwned')"},
	{name: "vacuum", sql: "VACUUM"},
	{name: "vacuum into", sql: "VACUUM INTO '%DIR%/copy.db'"},
	{name: "reindex", sql: "REINDEX"},
	{name: "analyze", sql: "ANALYZE"},
	{name: "savepoint", sql: "SAVEPOINT s", dbAllows: true},
	{name: "load_extension", sql: "SELECT load_extension('%DIR%/evil.so')"},
	// Spellings of a denied function, and values too big to return
	// (issue 14).
	{name: "quoted load_extension", sql: `SELECT "load_extension"('%DIR%/evil.so')`},
	{name: "bracketed load_extension", sql: "SELECT [LOAD_EXTENSION]('%DIR%/evil.so')"},
	{name: "backquoted load_extension", sql: "SELECT `Load_Extension`('%DIR%/evil.so')"},
	{name: "randomblob 1e8", sql: "SELECT randomblob(1e8)"},
	{name: "zeroblob 1e9", sql: "SELECT zeroblob(1e9)"},
	{name: "huge group_concat", sql: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 20) SELECT group_concat(zeroblob(1e6), '') FROM r"},
}

// hostilePostgres holds the statements tried on PostgreSQL only.
var hostilePostgres = []hostile{
	{name: "truncate", sql: "TRUNCATE album CASCADE"},
	{name: "create function", sql: "CREATE FUNCTION pwned() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$"},
	{name: "create trigger", sql: "CREATE TRIGGER pwned AFTER INSERT ON album EXECUTE FUNCTION pwned()"},
	{name: "create role", sql: "CREATE ROLE pwned SUPERUSER LOGIN"},
	{name: "alter table", sql: "ALTER TABLE album ADD COLUMN pwned int"},
	{name: "grant", sql: "GRANT ALL ON album TO PUBLIC"},
	{name: "copy to file", sql: "COPY album TO '/tmp/weft-sqltool-pwned.csv'", dbUnsafe: true},
	{name: "copy from program", sql: "COPY album FROM PROGRAM 'true'"},
	{name: "data-modifying cte", sql: "WITH d AS (DELETE FROM album RETURNING *) SELECT count(*) FROM d"},
	{name: "data-modifying cte, insert", sql: "WITH i AS (INSERT INTO genre VALUES (999, 'pwned') RETURNING *) SELECT * FROM i"},
	{name: "explain analyze delete", sql: "EXPLAIN ANALYZE DELETE FROM album"},
	{name: "select for update", sql: "SELECT * FROM album FOR UPDATE"},
	{name: "set transaction read write", sql: "SET TRANSACTION READ WRITE", dbAllows: true},
	{name: "commit then delete", sql: "COMMIT; DELETE FROM album"},
	{name: "set_config read write", sql: "SELECT set_config('default_transaction_read_only', 'off', false)", dbAllows: true},
	{name: "dollar quote then drop", sql: "SELECT $$;$$; DROP TABLE album"},
	{name: "tagged dollar quote then drop", sql: "SELECT $x$ $$; $x$; DROP TABLE album"},
	{name: "escape string then drop", sql: `SELECT E'\'; ' AS x; DROP TABLE album`},
	{name: "nested comment then drop", sql: "SELECT 1 /* /* */ ; */ ; DROP TABLE album"},
	{name: "do block", sql: "DO $$ BEGIN DELETE FROM album; END $$"},
	{name: "call", sql: "CALL pwned()"},
	{name: "lock", sql: "LOCK TABLE album", dbAllows: true},
	{name: "prepare", sql: "PREPARE p AS DELETE FROM album", dbAllows: true},
	{name: "advisory lock", sql: "SELECT pg_advisory_lock(1)", dbUnsafe: true},
	{name: "read server file", sql: "SELECT pg_read_file('/etc/hostname')", dbAllows: true},
	{name: "large object import", sql: "SELECT lo_import('/etc/hostname')", dbAllows: true},
	{name: "terminate backends", sql: "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()", dbUnsafe: true},
	{name: "create extension", sql: "CREATE EXTENSION IF NOT EXISTS dblink"},
	{name: "drop database", sql: "DROP DATABASE postgres"},
	{name: "refresh", sql: "REFRESH MATERIALIZED VIEW pwned"},
	{name: "vacuum", sql: "VACUUM album"},
	// The attack's bypasses (issue 14): decoded identifiers, SQL in strings,
	// state-changing and admin functions.
	{name: "unicode-escaped advisory lock", sql: `SELECT U&"\0070g_advisory_lock"(1)`, dbAllows: true},
	{name: "uescape advisory lock", sql: `SELECT U&"!0070g_advisory_lock" UESCAPE '!' (1)`, dbAllows: true},
	{name: "quoted advisory lock", sql: `SELECT pg_catalog."pg_advisory_lock_shared"(1)`, dbAllows: true},
	{name: "upper-case advisory lock", sql: `SELECT PG_TRY_ADVISORY_LOCK(1)`, dbAllows: true},
	{name: "unicode-escaped terminate", sql: `SELECT U&"\0070g_terminate_backend"(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()`, dbUnsafe: true},
	{name: "uescape cancel", sql: `SELECT U&"#0070g_cancel_backend" UESCAPE '#' (pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()`, dbUnsafe: true},
	{name: "unicode-escaped set_config", sql: `SELECT U&"set\005Fconfig"('default_transaction_read_only', 'off', false)`, dbAllows: true},
	{name: "unicode-escaped read file", sql: `SELECT U&"\+000070g_read_file"('/etc/hostname')`, dbAllows: true},
	{name: "query_to_xml delete", sql: "SELECT query_to_xml('DELETE FROM album RETURNING *', true, false, '')"},
	{name: "query_to_xml_and_xmlschema insert", sql: "SELECT query_to_xml_and_xmlschema('INSERT INTO genre VALUES (999, ''pwned'') RETURNING *', true, false, '')"},
	{name: "query_to_xml advisory lock", sql: "SELECT query_to_xml('SELECT pg_advisory_lock(7)', true, false, '')", dbAllows: true},
	{name: "xpath over query_to_xml", sql: "SELECT xpath('//text()', query_to_xml('SELECT pg_advisory_lock(8)', true, false, ''))", dbAllows: true},
	{name: "ts_stat delete", sql: "SELECT * FROM ts_stat('WITH d AS (DELETE FROM album RETURNING *) SELECT to_tsvector(title) FROM d')"},
	{name: "ts_rewrite delete", sql: "SELECT ts_rewrite('a'::tsquery, 'WITH d AS (DELETE FROM album RETURNING *) SELECT ''a''::tsquery, ''b''::tsquery FROM d')"},
	{name: "table_to_xml", sql: "SELECT table_to_xml('album', true, false, '')", dbAllows: true},
	{name: "cursor_to_xml", sql: "SELECT cursor_to_xml('c', 1, true, false, '')"},
	{name: "dblink", sql: "SELECT * FROM dblink('dbname=postgres', 'DROP TABLE album') AS t(x text)"},
	{name: "sleep", sql: "SELECT pg_sleep(0.01)", dbAllows: true},
	{name: "reload conf", sql: "SELECT pg_reload_conf()", dbUnsafe: true},
	{name: "read binary file", sql: "SELECT pg_read_binary_file('/etc/hostname')", dbAllows: true},
	{name: "list directory", sql: "SELECT pg_ls_dir('.')", dbAllows: true},
	{name: "stat file", sql: "SELECT pg_stat_file('PG_VERSION')", dbAllows: true},
	{name: "large object create", sql: "SELECT lo_creat(-1)", dbAllows: true},
	{name: "large object read", sql: "SELECT loread(lo_open(1, 262144), 10)"},
	{name: "nextval", sql: "SELECT nextval('pwned_seq')"},
	{name: "huge value", sql: "SELECT repeat('x', 50000000)"},
}

// refusedOrQueryError reports how err refuses a statement: "refused" for a
// *RefusedError, "db" for a *QueryError, or "" for neither.
func refusedOrQueryError(err error) string {
	var re *RefusedError
	var qe *QueryError
	switch {
	case errors.As(err, &re):
		return "refused"
	case errors.As(err, &qe):
		return "db"
	}
	return ""
}
