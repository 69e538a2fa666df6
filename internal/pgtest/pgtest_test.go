package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func query(t *testing.T, dsn string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT 1+1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNew(t *testing.T) {
	a, b := pgtest.New(t), pgtest.New(t)
	if a.Name == b.Name {
		t.Fatalf("two tests share database %s", a.Name)
	}
	if n := query(t, a.DSN); n != 2 {
		t.Fatalf("got %d", n)
	}
}

func TestRestart(t *testing.T) {
	c := pgtest.Start(t)
	db, err := c.CreateDB(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	query(t, db.DSN)
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if n := query(t, db.DSN); n != 2 {
		t.Fatalf("got %d", n)
	}
}
