package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// maxCached is how many statements a stmtCache keeps prepared: the
// queries whose SQL depends on their options (a listing's filters), of
// which a program uses a handful of shapes. Past it, a new shape runs
// unprepared (parsed on each call), as every query did before.
const maxCached = 64

// A LIMIT or OFFSET of a prepared query is written "? + 0": SQLite reads
// a bare parameter there as a constant, and then plans the statement
// again each time the parameter is bound (sqlite3ExprIsInteger marks it
// in the statement's expmask), which would undo the preparing.

// stmtCache keeps statements of one database prepared, by their SQL, so
// that a query of a shape seen before is not parsed again. It is for the
// reader pool only: preparing on the writer's one connection would wait
// for a transaction holding it.
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	closed bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}}
}

// get returns q prepared, or nil when the cache is full or closed or q
// does not prepare (the caller then runs q unprepared, which reports
// the error).
func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	c.mu.Lock()
	st, ok := c.m[q]
	full := c.closed || len(c.m) >= maxCached
	c.mu.Unlock()
	if ok {
		return st
	}
	if full {
		return nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[q]; ok {
		st.Close()
		return old
	}
	if c.closed || len(c.m) >= maxCached {
		st.Close()
		return nil
	}
	c.m[q] = st
	return st
}

// query runs q, prepared if it can be.
func (c *stmtCache) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := c.get(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, q, args...)
}

// len is how many statements the cache holds.
func (c *stmtCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// close closes the statements; the cache prepares no more.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		st.Close()
		delete(c.m, q)
	}
	c.closed = true
}
