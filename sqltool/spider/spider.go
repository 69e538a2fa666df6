// Package spider measures the execution accuracy of a text-to-SQL
// predictor on Spider questions, the way Spider's execution-accuracy
// metric does: a predicted query is correct when it returns the same
// result as the gold query on the same database (see Match).
//
// The questions are those of Spider 1.0 about the Chinook database
// (db_id chinook_1), as a JSON array of {id, db_id, question, gold_sql,
// gold_rows}; Load reads them and Evaluate scores a predictor against a
// database opened with sqltool. The gold SQL uses the Chinook SQLite
// file's CamelCase names (Album.ArtistId), so evaluate on that file.
package spider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftlang/weft/sqltool"
)

// Question is one Spider question with its gold SQL.
type Question struct {
	ID       int    `json:"id"`       // the question's number in the file
	DBID     string `json:"db_id"`    // Spider's database name, chinook_1
	Question string `json:"question"` // the question in English
	GoldSQL  string `json:"gold_sql"` // Spider's reference SQL
	// GoldRows is the number of rows the gold SQL returned when the file
	// was made.
	GoldRows int `json:"gold_rows"`
}

// Load reads the questions at path: a JSON array of questions, or a
// directory of files N.sql as Spider's Chinook split is published (a
// "-- question: ..." line, optionally "-- db_id: ...", then the gold SQL),
// ordered by N.
func Load(path string) ([]Question, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("spider: %w", err)
	}
	if info.IsDir() {
		return loadDir(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spider: %w", err)
	}
	var qs []Question
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("spider: reading %s: %w", path, err)
	}
	for i, q := range qs {
		if strings.TrimSpace(q.GoldSQL) == "" {
			return nil, fmt.Errorf("spider: %s: question %d (id %d) has no gold_sql", path, i, q.ID)
		}
	}
	return qs, nil
}

// loadDir reads the N.sql files of dir.
func loadDir(dir string) ([]Question, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spider: %w", err)
	}
	var qs []Question
	for _, e := range entries {
		num, ok := strings.CutSuffix(e.Name(), ".sql")
		if !ok || e.IsDir() {
			continue
		}
		id, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		file := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("spider: %w", err)
		}
		q := Question{ID: id}
		var sql []string
		for _, line := range strings.Split(string(b), "\n") {
			switch t := strings.TrimSpace(line); {
			case strings.HasPrefix(t, "-- question:"):
				q.Question = strings.TrimSpace(strings.TrimPrefix(t, "-- question:"))
			case strings.HasPrefix(t, "-- db_id:"):
				q.DBID = strings.TrimSpace(strings.TrimPrefix(t, "-- db_id:"))
			case t != "":
				sql = append(sql, t)
			}
		}
		q.GoldSQL = strings.Join(sql, " ")
		if q.Question == "" || q.GoldSQL == "" {
			return nil, fmt.Errorf("spider: %s: want a \"-- question:\" line and the gold SQL", file)
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("spider: %s holds no N.sql question files", dir)
	}
	slices.SortFunc(qs, func(a, b Question) int { return a.ID - b.ID })
	return qs, nil
}

// Outcome is how a question was scored.
type Outcome string

// The outcomes of a question.
const (
	// Correct: the predicted SQL returned the gold result.
	Correct Outcome = "correct"
	// Wrong: the predicted SQL ran but returned another result.
	Wrong Outcome = "wrong"
	// Error: the predicted SQL was refused or failed in the database.
	Error Outcome = "error"
	// PredictFailed: the predictor returned an error.
	PredictFailed Outcome = "predict_failed"
	// GoldFailed: the gold SQL failed or was truncated, so the question
	// could not be scored; it counts against accuracy.
	GoldFailed Outcome = "gold_failed"
)

// QuestionResult is the scoring of one question.
type QuestionResult struct {
	// Question is the question scored.
	Question Question `json:"question"`
	// SQL is the predicted SQL ("" when the predictor failed).
	SQL     string  `json:"sql,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Message explains an outcome other than Correct: the error text for
	// Error, PredictFailed and GoldFailed, how the results differ for
	// Wrong.
	Message string `json:"message,omitempty"`
	// Ordered is set when row order counted (the gold SQL has a top-level
	// ORDER BY).
	Ordered bool `json:"ordered,omitempty"`
	// GoldRows and PredRows are the numbers of rows returned (PredRows is
	// -1 when the prediction did not run).
	GoldRows int `json:"gold_rows"`
	PredRows int `json:"pred_rows"`
	// Duration is the time spent on the question, prediction included.
	Duration time.Duration `json:"duration_ns"`
}

// Report is the scoring of a set of questions.
type Report struct {
	Results []QuestionResult `json:"results"`
	// Totals by outcome; Total is the number of questions scored.
	Total         int `json:"total"`
	Correct       int `json:"correct"`
	Wrong         int `json:"wrong"`
	Errors        int `json:"errors"`
	PredictFailed int `json:"predict_failed"`
	GoldFailed    int `json:"gold_failed"`
}

// Accuracy returns the execution accuracy: Correct / Total (0 for no
// questions).
func (r *Report) Accuracy() float64 {
	if r == nil || r.Total == 0 {
		return 0
	}
	return float64(r.Correct) / float64(r.Total)
}

func (r *Report) add(qr QuestionResult) {
	r.Results = append(r.Results, qr)
	r.Total++
	switch qr.Outcome {
	case Correct:
		r.Correct++
	case Wrong:
		r.Wrong++
	case Error:
		r.Errors++
	case PredictFailed:
		r.PredictFailed++
	case GoldFailed:
		r.GoldFailed++
	}
}

// Evaluate scores predict on qs against db: for each question it runs the
// gold SQL, asks predict for SQL, runs that, and compares the results with
// Match (ordered when the gold SQL has a top-level ORDER BY). Failures of
// a question are outcomes in the report, not errors; the error is ctx's
// when it ends before all questions are scored, with the report so far.
func Evaluate(ctx context.Context, db *sqltool.DB, qs []Question, predict func(context.Context, Question) (string, error)) (*Report, error) {
	if db == nil || predict == nil {
		return nil, errors.New("spider: Evaluate needs a database and a predictor")
	}
	r := &Report{}
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		qr, err := evaluateOne(ctx, db, q, predict)
		if err != nil {
			return r, err
		}
		r.add(qr)
	}
	return r, nil
}

// evaluateOne scores one question; the error is ctx's when it ended.
func evaluateOne(ctx context.Context, db *sqltool.DB, q Question, predict func(context.Context, Question) (string, error)) (QuestionResult, error) {
	start := time.Now()
	qr := QuestionResult{Question: q, PredRows: -1, Ordered: sqltool.HasTopLevelOrderBy(db.Dialect(), q.GoldSQL)}
	done := func(o Outcome, msg string) (QuestionResult, error) {
		qr.Outcome, qr.Message, qr.Duration = o, msg, time.Since(start)
		return qr, nil
	}
	gold, err := db.Query(ctx, q.GoldSQL)
	if ctx.Err() != nil {
		return qr, ctx.Err()
	}
	if err != nil {
		return done(GoldFailed, err.Error())
	}
	qr.GoldRows = len(gold.Rows)
	if gold.Truncated {
		return done(GoldFailed, fmt.Sprintf("the gold result has more than %d rows (raise sqltool.Options.MaxRows)", len(gold.Rows)))
	}
	sql, err := predict(ctx, q)
	if ctx.Err() != nil {
		return qr, ctx.Err()
	}
	qr.SQL = sql
	if err != nil {
		return done(PredictFailed, err.Error())
	}
	pred, err := db.Query(ctx, sql)
	if ctx.Err() != nil {
		return qr, ctx.Err()
	}
	if err != nil {
		return done(Error, err.Error())
	}
	qr.PredRows = len(pred.Rows)
	switch {
	case pred.Truncated:
		return done(Wrong, fmt.Sprintf("more than %d rows, gold has %d", len(pred.Rows), len(gold.Rows)))
	case Match(gold, pred, qr.Ordered):
		return done(Correct, "")
	}
	return done(Wrong, difference(gold, pred, qr.Ordered))
}

// difference says briefly how pred differs from gold.
func difference(gold, pred *sqltool.Result, ordered bool) string {
	switch {
	case len(pred.Rows) != len(gold.Rows):
		return fmt.Sprintf("%d rows, gold has %d", len(pred.Rows), len(gold.Rows))
	case len(pred.Columns) != len(gold.Columns):
		return fmt.Sprintf("%d columns, gold has %d", len(pred.Columns), len(gold.Columns))
	case ordered && Match(gold, pred, false):
		return "same rows in another order, and the gold query orders them"
	}
	return "different values"
}

// WriteText writes a summary of the report, then each question not scored
// correct with its gold and predicted SQL and what went wrong.
func (r *Report) WriteText(w io.Writer) error {
	if r == nil {
		return errors.New("spider: WriteText on a nil report")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "execution accuracy: %d/%d correct (%.1f%%)\n", r.Correct, r.Total, 100*r.Accuracy())
	fmt.Fprintf(&b, "  correct %d, wrong %d, error %d, predict failed %d, gold failed %d\n",
		r.Correct, r.Wrong, r.Errors, r.PredictFailed, r.GoldFailed)
	for _, qr := range r.Results {
		if qr.Outcome == Correct {
			continue
		}
		fmt.Fprintf(&b, "\n[%d] %s: %s\n", qr.Question.ID, qr.Outcome, qr.Question.Question)
		fmt.Fprintf(&b, "  gold: %s\n", oneLine(qr.Question.GoldSQL))
		if qr.SQL != "" {
			fmt.Fprintf(&b, "  pred: %s\n", oneLine(qr.SQL))
		}
		if qr.Message != "" {
			fmt.Fprintf(&b, "  %s\n", oneLine(qr.Message))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
