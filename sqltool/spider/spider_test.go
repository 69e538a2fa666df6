package spider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftlang/weft/internal/datadir"
	"github.com/weftlang/weft/sqltool"
)

func res(cols []string, rows ...[]any) *sqltool.Result {
	if rows == nil {
		rows = [][]any{}
	}
	return &sqltool.Result{Columns: cols, Rows: rows}
}

func TestMatch(t *testing.T) {
	ab := []string{"a", "b"}
	tests := []struct {
		name       string
		gold, pred *sqltool.Result
		ordered    bool
		want       bool
	}{
		{"same", res(ab, []any{int64(1), "x"}), res(ab, []any{int64(1), "x"}), false, true},
		{"names ignored", res(ab, []any{int64(1), "x"}), res([]string{"p", "q"}, []any{int64(1), "x"}), false, true},
		{"both empty", res(ab), res([]string{"z"}), false, true},
		{"one empty", res(ab), res(ab, []any{int64(1), "x"}), false, false},
		{"row count", res(ab, []any{int64(1), "x"}), res(ab, []any{int64(1), "x"}, []any{int64(1), "x"}), false, false},
		{"column count", res(ab, []any{int64(1), "x"}), res([]string{"a"}, []any{int64(1)}), false, false},
		{"int equals float", res([]string{"n"}, []any{int64(3)}), res([]string{"n"}, []any{3.0}), false, true},
		{"float tolerance", res([]string{"n"}, []any{1.0 / 3}), res([]string{"n"}, []any{0.3333333334}), false, true},
		{"relative tolerance", res([]string{"n"}, []any{123456789.123}), res([]string{"n"}, []any{123456789.12300001}), false, true},
		{"float differs", res([]string{"n"}, []any{1.5}), res([]string{"n"}, []any{1.51}), false, false},
		{"ints differ", res([]string{"n"}, []any{int64(1 << 60)}), res([]string{"n"}, []any{int64(1<<60 + 1)}), false, false},
		{"bool as number", res([]string{"n"}, []any{int64(1)}), res([]string{"n"}, []any{true}), false, true},
		{"string is not a number", res([]string{"n"}, []any{"1"}), res([]string{"n"}, []any{int64(1)}), false, false},
		{"null equals null", res([]string{"n"}, []any{nil}), res([]string{"n"}, []any{nil}), false, true},
		{"null is not empty", res([]string{"n"}, []any{nil}), res([]string{"n"}, []any{""}), false, false},
		{"case matters", res([]string{"n"}, []any{"Rock"}), res([]string{"n"}, []any{"rock"}), false, false},
		{"unordered", res([]string{"n"}, []any{"a"}, []any{"b"}), res([]string{"n"}, []any{"b"}, []any{"a"}), false, true},
		{"ordered", res([]string{"n"}, []any{"a"}, []any{"b"}), res([]string{"n"}, []any{"b"}, []any{"a"}), true, false},
		{"ordered, same order", res([]string{"n"}, []any{"a"}, []any{"b"}), res([]string{"n"}, []any{"a"}, []any{"b"}), true, true},
		{"multiset", res([]string{"n"}, []any{int64(1)}, []any{int64(1)}, []any{int64(2)}),
			res([]string{"n"}, []any{int64(1)}, []any{int64(2)}, []any{int64(2)}), false, false},
		{"columns swapped", res(ab, []any{int64(1), "x"}, []any{int64(2), "y"}),
			res([]string{"b", "a"}, []any{"y", int64(2)}, []any{"x", int64(1)}), false, true},
		{"columns swapped, ordered", res(ab, []any{int64(1), "x"}, []any{int64(2), "y"}),
			res([]string{"b", "a"}, []any{"x", int64(1)}, []any{"y", int64(2)}), true, true},
		// The same columns as multisets, but paired differently in rows.
		{"columns mispaired", res(ab, []any{int64(1), int64(1)}, []any{int64(2), int64(2)}),
			res(ab, []any{int64(1), int64(2)}, []any{int64(2), int64(1)}), false, false},
		// Two columns with the same values: only one pairing matches.
		{"ambiguous columns", res([]string{"a", "b", "c"}, []any{int64(1), int64(2), "x"}, []any{int64(2), int64(1), "y"}),
			res([]string{"c", "b", "a"}, []any{"x", int64(2), int64(1)}, []any{"y", int64(1), int64(2)}), false, true},
		{"nil result", nil, res(ab), false, false},
		{"ragged rows", res(ab, []any{int64(1)}), res(ab, []any{int64(1)}), false, false},
	}
	for _, tt := range tests {
		if got := Match(tt.gold, tt.pred, tt.ordered); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// questions loads the Spider questions as weft data fetch spider makes
// them (spider-chinook/queries, the published N.sql files), else from the
// JSON list the project's machines keep. fromJSON says which: only the
// JSON records each question's database and gold row count.
func questions(t *testing.T) (qs []Question, fromJSON bool) {
	t.Helper()
	path, err := datadir.Find("spider-chinook/queries")
	if err != nil {
		path, fromJSON = datadir.Require(t, "spider-chinook/chinook_spider_gold.json"), true
	}
	qs, err = Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return qs, fromJSON
}

func TestLoad(t *testing.T) {
	qs, fromJSON := questions(t)
	if len(qs) != 84 {
		t.Fatalf("%d questions, want 84", len(qs))
	}
	seen := map[int]bool{}
	for _, q := range qs {
		if seen[q.ID] || q.Question == "" || q.GoldRows < 0 || (fromJSON && q.DBID != "chinook_1") {
			t.Errorf("question %+v", q)
		}
		seen[q.ID] = true
	}
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("loaded a missing file")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"not": "an array"}`), 0o644)
	if _, err := Load(bad); err == nil {
		t.Error("loaded an object")
	}
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`[{"id": 1, "question": "q", "gold_sql": " "}]`), 0o644)
	if _, err := Load(empty); err == nil {
		t.Error("loaded a question without SQL")
	}
}

// setup opens the Chinook SQLite file read-only (in place: nothing can
// write to it) and loads the questions.
func setup(t *testing.T) (*sqltool.DB, []Question) {
	t.Helper()
	dbpath := datadir.Require(t, "chinook/Chinook_Sqlite.sqlite")
	qs, _ := questions(t)
	db, err := sqltool.Open(context.Background(), dbpath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, qs
}

// TestEvaluateGold scores the gold SQL as the prediction: every gold query
// must run on our copy of Chinook, return the number of rows the question
// file records (the JSON list records them; the N.sql files do not), and
// score correct.
func TestEvaluateGold(t *testing.T) {
	db, qs := setup(t)
	start := time.Now()
	r, err := Evaluate(context.Background(), db, qs, func(_ context.Context, q Question) (string, error) {
		return q.GoldSQL, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d questions in %v", r.Total, time.Since(start))
	if r.Total != 84 || r.Correct != 84 || r.Accuracy() != 1 {
		var b strings.Builder
		r.WriteText(&b)
		t.Fatalf("gold SQL scored %d/%d:\n%s", r.Correct, r.Total, b.String())
	}
	ordered := 0
	for _, qr := range r.Results {
		if (qr.Question.GoldRows != 0 && qr.GoldRows != qr.Question.GoldRows) || qr.PredRows != qr.GoldRows {
			t.Errorf("[%d] gold returned %d rows, the file says %d", qr.Question.ID, qr.GoldRows, qr.Question.GoldRows)
		}
		if qr.Ordered {
			ordered++
		}
	}
	if ordered != 10 {
		t.Errorf("%d questions ordered, want 10 (ids 18, 19, 28-31, 66-69)", ordered)
	}
}

// TestEvaluateScripted scores scripted predictions, one per outcome.
func TestEvaluateScripted(t *testing.T) {
	db, all := setup(t)
	byID := map[int]Question{}
	for _, q := range all {
		byID[q.ID] = q
	}
	script := []struct {
		id   int
		pred string // "!" prefix: the predictor fails with this message
		want Outcome
		msg  string // in the message
	}{
		{0, "SELECT count(*) FROM Album", Correct, ""},
		{1, "SELECT count(*) * 1.0 FROM Album;", Correct, ""},                                       // float vs int
		{2, "SELECT Name FROM Genre ORDER BY Name DESC", Correct, ""},                               // gold unordered
		{6, "SELECT LastName, FirstName FROM Employee WHERE City = 'Calgary'", Correct, ""},         // columns swapped
		{3, "SELECT Name FROM MediaType", Wrong, "5 rows, gold has 25"},                             // deliberately wrong
		{4, "SELECT * FROM Customer WHERE State = 'CA'", Wrong, "3 rows, gold has 1"},               // wrong filter
		{66, "SELECT Title FROM Album ORDER BY Title DESC", Wrong, "another order"},                 // gold ordered
		{7, "SELECT FirstName, FirstName FROM Employee WHERE City = 'Calgary'", Wrong, "different"}, // wrong values
		{5, "SELECT * FRM Customer", Error, "syntax error"},                                         // broken SQL
		{8, "SELECT Nme FROM Genre", Error, "no such column: Nme"},                                  // broken SQL
		{9, "DROP TABLE Album", Error, "query refused"},                                             // hostile SQL
		{10, "!model unavailable", PredictFailed, "model unavailable"},                              // predictor error
	}
	var qs []Question
	preds := map[int]string{}
	for _, s := range script {
		qs = append(qs, byID[s.id])
		preds[s.id] = s.pred
	}
	// A question whose gold SQL is broken cannot be scored.
	qs = append(qs, Question{ID: 999, Question: "broken gold", GoldSQL: "SELECT * FROM Nowhere"})
	preds[999] = "SELECT 1"

	r, err := Evaluate(context.Background(), db, qs, func(_ context.Context, q Question) (string, error) {
		p := preds[q.ID]
		if msg, ok := strings.CutPrefix(p, "!"); ok {
			return "", errors.New(msg)
		}
		return p, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != len(script)+1 {
		t.Fatalf("%d results", len(r.Results))
	}
	for i, s := range script {
		qr := r.Results[i]
		if qr.Question.ID != s.id || qr.Outcome != s.want || !strings.Contains(qr.Message, s.msg) {
			t.Errorf("[%d] %q: %s %q, want %s %q", s.id, s.pred, qr.Outcome, qr.Message, s.want, s.msg)
		}
	}
	if last := r.Results[len(script)]; last.Outcome != GoldFailed || !strings.Contains(last.Message, "no such table") {
		t.Errorf("broken gold: %s %q", last.Outcome, last.Message)
	}
	if r.Total != 13 || r.Correct != 4 || r.Wrong != 4 || r.Errors != 3 || r.PredictFailed != 1 || r.GoldFailed != 1 {
		t.Errorf("totals %+v", *r)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, frag := range []string{
		"execution accuracy: 4/13 correct (30.8%)",
		"correct 4, wrong 4, error 3, predict failed 1, gold failed 1",
		"[3] wrong: What are the names of different music genres?",
		"  pred: SELECT Name FROM MediaType",
		"[10] predict_failed:",
		"[999] gold_failed: broken gold",
	} {
		if !strings.Contains(text, frag) {
			t.Errorf("report lacks %q:\n%s", frag, text)
		}
	}
	if strings.Contains(text, "[0] ") {
		t.Errorf("report details a correct question:\n%s", text)
	}
	t.Logf("report:\n%s", text)
}

func TestEvaluateCancel(t *testing.T) {
	db, qs := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	r, err := Evaluate(ctx, db, qs, func(_ context.Context, q Question) (string, error) {
		n++
		if n == 3 {
			cancel()
			return "", context.Canceled
		}
		return q.GoldSQL, nil
	})
	if !errors.Is(err, context.Canceled) || r == nil || r.Total != 2 {
		t.Errorf("Evaluate after cancel: %v, report %+v", err, r)
	}
	if _, err := Evaluate(context.Background(), nil, qs, nil); err == nil {
		t.Error("Evaluate without a database succeeded")
	}
}

// A directory of N.sql files, as Spider's Chinook split is published,
// loads as the same questions as the JSON list.
func TestLoadDir(t *testing.T) {
	path := datadir.Require(t, "spider-chinook/chinook_spider_gold.json")
	want, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, q := range want[:12] {
		text := fmt.Sprintf("-- db_id: %s\n-- question: %s\n%s\n", q.DBID, q.Question, q.GoldSQL)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.sql", q.ID)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a question"), 0o644)
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 12 {
		t.Fatalf("%d questions, want 12", len(got))
	}
	for i, q := range got {
		w := want[i]
		if q.ID != w.ID || q.Question != w.Question || q.GoldSQL != w.GoldSQL || q.DBID != w.DBID {
			t.Errorf("question %d = %+v, want %+v", i, q, w)
		}
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "0.sql"), []byte("SELECT 1\n"), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "-- question:") {
		t.Errorf("a file without a question: err = %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("an empty directory loaded")
	}
}
