package sqltool

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/chinooktest"
)

// bounded runs q on db and checks that it ends within a few seconds, that
// the Go heap it allocates stays under maxAlloc bytes, and that the
// result, if any, marshals to JSON of at most maxJSON bytes. It returns the
// result and error.
func bounded(t *testing.T, db *DB, q string, maxAlloc, maxJSON uint64) (*Result, error) {
	t.Helper()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	res, err := db.Query(context.Background(), q)
	elapsed := time.Since(start)
	var size int
	if err == nil {
		b, jerr := json.Marshal(res)
		if jerr != nil {
			t.Fatalf("%s: the result does not marshal: %v", q, jerr)
		}
		size = len(b)
	}
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("%s: %v; %d bytes of JSON, %d MB allocated, %v", q, err, size, alloc>>20, elapsed)
	if elapsed > 10*time.Second {
		t.Errorf("%s took %v", q, elapsed)
	}
	if alloc > maxAlloc {
		t.Errorf("%s allocated %d MB, want at most %d MB", q, alloc>>20, maxAlloc>>20)
	}
	if uint64(size) > maxJSON {
		t.Errorf("%s: %d bytes of JSON, want at most %d", q, size, maxJSON)
	}
	return res, err
}

// checkTooBig checks that err is a *QueryError matching ErrTooBig that
// names the limit.
func checkTooBig(t *testing.T, q string, err error, limit int) {
	t.Helper()
	var qe *QueryError
	if !errors.As(err, &qe) || !errors.Is(err, ErrTooBig) {
		t.Errorf("%s: %T %v, want a *QueryError matching ErrTooBig", q, err, err)
		return
	}
	if !strings.Contains(err.Error(), "limit of") || !strings.Contains(err.Error(), itoa(limit)) {
		t.Errorf("%s: %q does not name the limit of %d bytes", q, err, limit)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// testLimits runs the result-cap checks shared by both databases. big(n)
// is SQL for one value of n bytes, tried at each of the sizes huge, all
// past DefaultMaxReadBytes; rows(n) SQL for n rows of (int, text).
func testLimits(t *testing.T, open func(*Options) *DB, big func(n string) string, huge []string, rows func(n int) string) {
	const mb = 1 << 20
	db := open(nil)

	// A value past MaxReadBytes is refused quickly, never encoded.
	for _, n := range huge {
		q := big(n)
		_, err := bounded(t, db, q, 64*mb, 0)
		checkTooBig(t, q, err, DefaultMaxReadBytes)
	}
	// The DB still works afterwards.
	if res, err := db.Query(context.Background(), "SELECT 1 AS one"); err != nil || res.Rows[0][0] != int64(1) {
		t.Fatalf("after a too-big value: %v, %v", res, err)
	}

	// A value under it but past MaxValueBytes is clipped, and said to be.
	q := big("1000000")
	res, err := bounded(t, db, q, 64*mb, 8*DefaultMaxValueBytes) // JSON escapes bytes that are not UTF-8
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	v, _ := res.Rows[0][0].(string)
	if len(v) < DefaultMaxValueBytes || len(v) > DefaultMaxValueBytes+100 || !strings.HasSuffix(v, "[clipped: 1000000 bytes in all]") {
		t.Errorf("%s: value of %d bytes ending %q, want it clipped to %d with a marker", q, len(v), v[max(0, len(v)-40):], DefaultMaxValueBytes)
	}
	if res.Clipped != 1 || res.Truncated || !strings.Contains(res.Note, "clipped") || !strings.Contains(res.Note, "65536") {
		t.Errorf("%s: Clipped %d, Truncated %v, Note %q", q, res.Clipped, res.Truncated, res.Note)
	}

	// 100,000 rows: MaxRows of them, streamed.
	q = rows(100000)
	res, err = bounded(t, db, q, 64*mb, 2*mb)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.Rows) != DefaultMaxRows || !res.Truncated || res.Rows[999][0] != int64(1000) ||
		!strings.Contains(res.Note, "first 1000 rows") {
		t.Errorf("100k rows: %d rows, truncated %v, last %v, note %q", len(res.Rows), res.Truncated, res.Rows[len(res.Rows)-1], res.Note)
	}

	// With a high MaxRows, MaxBytes stops it.
	wide := open(&Options{MaxRows: 1000000, MaxBytes: 100000})
	res, err = bounded(t, wide, q, 64*mb, 200000)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.Rows) == 0 || len(res.Rows) >= 100000 || !res.Truncated || !strings.Contains(res.Note, "100000 bytes") {
		t.Errorf("MaxBytes: %d rows, truncated %v, note %q", len(res.Rows), res.Truncated, res.Note)
	}
	if got := resultBytes(res); got > 100000 {
		t.Errorf("MaxBytes: %d bytes of values, want at most 100000", got)
	}
	// Whole results say nothing.
	res, err = wide.Query(context.Background(), rows(3))
	if err != nil || len(res.Rows) != 3 || res.Truncated || res.Clipped != 0 || res.Note != "" {
		t.Errorf("3 rows: %+v, %v", res, err)
	}
	// One row wider than MaxBytes: its values are clipped to fit.
	q = "SELECT 1 AS a, (" + big("50000") + ") AS b, (" + big("50000") + ") AS c, (" + big("50000") + ") AS d"
	res, err = bounded(t, wide, q, 64*mb, 8*100000)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.Rows) != 1 || res.Clipped != 3 || res.Truncated || resultBytes(res) > 100000 || res.Rows[0][0] != int64(1) {
		t.Errorf("wide row: %d rows, %d clipped, truncated %v, %d bytes", len(res.Rows), res.Clipped, res.Truncated, resultBytes(res))
	}
}

// resultBytes sums the sizes the caps count.
func resultBytes(r *Result) int {
	n := 0
	for _, c := range r.Columns {
		n += len(c)
	}
	for _, row := range r.Rows {
		for _, v := range row {
			n += valueSize(v)
		}
	}
	return n
}

func TestSQLiteLimits(t *testing.T) {
	testLimits(t,
		func(o *Options) *DB { db, _ := openChinook(t, o); return db },
		func(n string) string { return "SELECT randomblob(" + n + ") AS v" },
		[]string{"1e8", "1e9"},
		func(n int) string {
			return "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT " + itoa(n) + ") SELECT n, 'row ' || n AS s FROM r"
		})
	db, _ := openChinook(t, nil)
	_, err := bounded(t, db, "SELECT zeroblob(1e9)", 64<<20, 0)
	checkTooBig(t, "zeroblob(1e9)", err, DefaultMaxReadBytes)
}

func TestPostgresLimits(t *testing.T) {
	dsn := chinooktest.Reader(t, loadChinookPG(t))
	testLimits(t,
		func(o *Options) *DB {
			db, err := Open(context.Background(), dsn, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		func(n string) string { return "SELECT repeat('x', " + n + ") AS v" },
		[]string{"100000000"},
		func(n int) string { return "SELECT n, 'row ' || n AS s FROM generate_series(1, " + itoa(n) + ") n" })
}
