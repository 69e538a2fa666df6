package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TATQA is a TAT-QA split (e.g. tatqa_dataset_dev.json: 278 contexts,
// 1,668 questions) made into retrieval documents and questions.
type TATQA struct {
	// Contexts are the split's contexts, in file order.
	Contexts []Context
	// Documents has one Document per context, in the same order: see
	// LoadTATQA.
	Documents []Document
	// Questions are all the contexts' questions, in file order.
	Questions []Question
}

// Context is one TAT-QA context: a table from a financial report and the
// paragraphs around it.
type Context struct {
	// ID is the table's uid, which identifies the context.
	ID string
	// Table is the table's cells, row by row.
	Table [][]string
	// Paragraphs are the paragraphs' texts, in their order.
	Paragraphs []string
	// Year is the latest year in the table's header rows ("2019"), or ""
	// when the header has none.
	Year string
}

// Question is one TAT-QA question with its gold context.
type Question struct {
	// ID is the question's uid.
	ID string
	// Text is the question.
	Text string
	// Context is the ID of the context that answers it.
	Context string
	// Answer is the gold answer: its spans, or the one number or string.
	Answer []string
	// AnswerType is "span", "multi-span", "arithmetic" or "count".
	AnswerType string
	// AnswerFrom is "table", "text" or "table-text".
	AnswerFrom string
	// Scale is the answer's scale ("", "thousand", "million", "percent",
	// ...).
	Scale string
	// Derivation is the arithmetic behind an arithmetic answer.
	Derivation string
}

// tatqaParagraph is a paragraph as the TAT-QA file has it.
type tatqaParagraph struct {
	UID   string `json:"uid"`
	Order int    `json:"order"`
	Text  string `json:"text"`
}

// LoadTATQA reads a TAT-QA JSON file. Each context becomes one Document:
//
//   - ID is the context's ID;
//   - Text is the table, one row a line with cells separated by " | ",
//     then the paragraphs, separated by blank lines: what a reader needs;
//   - Title pairs every table cell that holds a number with its row label
//     and column header, one pair a line ("Total sales 2019"), so that a
//     question naming a row and a year matches them close together, with
//     the Title's weight;
//   - Meta has "context" (the ID, which Recall maps hits back with),
//     "source" ("tatqa") and, when the table's header names years,
//     "year": the latest of them, the report's fiscal year.
func LoadTATQA(path string) (*TATQA, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("retrieval: tatqa: %w", err)
	}
	var raw []struct {
		Table struct {
			UID   string     `json:"uid"`
			Table [][]string `json:"table"`
		} `json:"table"`
		Paragraphs []tatqaParagraph `json:"paragraphs"`
		Questions  []struct {
			UID        string          `json:"uid"`
			Question   string          `json:"question"`
			Answer     json.RawMessage `json:"answer"`
			AnswerType string          `json:"answer_type"`
			AnswerFrom string          `json:"answer_from"`
			Scale      string          `json:"scale"`
			Derivation string          `json:"derivation"`
		} `json:"questions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("retrieval: tatqa %s: %w", path, err)
	}
	t := &TATQA{}
	for i, r := range raw {
		if r.Table.UID == "" {
			return nil, fmt.Errorf("retrieval: tatqa %s: context %d has no table uid: %w", path, i, ErrInvalid)
		}
		ps := slices.Clone(r.Paragraphs)
		slices.SortStableFunc(ps, func(a, b tatqaParagraph) int { return a.Order - b.Order })
		c := Context{ID: r.Table.UID, Table: r.Table.Table, Year: headerYear(r.Table.Table)}
		for _, p := range ps {
			c.Paragraphs = append(c.Paragraphs, p.Text)
		}
		t.Contexts = append(t.Contexts, c)
		t.Documents = append(t.Documents, c.Document())
		for _, q := range r.Questions {
			ans, err := answerStrings(q.Answer)
			if err != nil {
				return nil, fmt.Errorf("retrieval: tatqa %s: question %s: answer: %w", path, q.UID, err)
			}
			t.Questions = append(t.Questions, Question{
				ID: q.UID, Text: q.Question, Context: c.ID, Answer: ans,
				AnswerType: q.AnswerType, AnswerFrom: q.AnswerFrom, Scale: q.Scale, Derivation: q.Derivation,
			})
		}
	}
	return t, nil
}

// Document returns c as a retrieval Document, as LoadTATQA describes.
func (c Context) Document() Document {
	var b strings.Builder
	for _, row := range c.Table {
		if !slices.ContainsFunc(row, func(s string) bool { return strings.TrimSpace(s) != "" }) {
			continue
		}
		cells := make([]string, len(row))
		for j, cell := range row {
			cells[j] = strings.TrimSpace(cell)
		}
		b.WriteString(strings.TrimSpace(strings.Join(cells, " | ")))
		b.WriteByte('\n')
	}
	for _, p := range c.Paragraphs {
		b.WriteByte('\n')
		b.WriteString(p)
		b.WriteByte('\n')
	}
	meta := map[string]string{"context": c.ID, "source": "tatqa"}
	if c.Year != "" {
		meta["year"] = c.Year
	}
	return Document{ID: c.ID, Title: tableKeys(c.Table), Text: strings.TrimSpace(b.String()), Meta: meta}
}

// answerStrings decodes a TAT-QA answer: a list of spans, a string or a
// number.
func answerStrings(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' {
		items = []json.RawMessage{raw}
	} else if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		if err := json.Unmarshal(it, &s); err == nil {
			out = append(out, s)
			continue
		}
		var n json.Number
		if err := json.Unmarshal(it, &n); err != nil {
			return nil, err
		}
		out = append(out, n.String())
	}
	return out, nil
}

// years returns the plausible fiscal years (1950 to 2099) in s: runs of
// four digits that are whole words.
func years(s string) []int {
	var out []int
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 4 && !wordByteBefore(s, i) && !wordByteAt(s, j) {
			if y, _ := strconv.Atoi(s[i:j]); 1950 <= y && y <= 2099 {
				out = append(out, y)
			}
		}
		i = j
	}
	return out
}

// wordByteBefore and wordByteAt report whether the rune before s[i], or at
// s[i], is a letter, a digit or '_'.
func wordByteBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return i > 0 && isWordRune(r)
}

func wordByteAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && isWordRune(r)
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// isDataRow reports whether row is a row of figures: a label in its first
// cell and, in another, a cell with a digit that is not just a year.
func isDataRow(row []string) bool {
	if len(row) == 0 || strings.TrimSpace(row[0]) == "" {
		return false
	}
	for _, cell := range row[1:] {
		if isFigure(cell) {
			return true
		}
	}
	return false
}

// isFigure reports whether a cell holds a number other than a year.
func isFigure(cell string) bool {
	digits := 0
	for i := range len(cell) {
		if isDigit(cell[i]) {
			digits++
		}
	}
	return digits > 4*len(years(cell))
}

// headerYear returns the latest year in the header rows of a table (those
// before its first row of figures), or "".
func headerYear(table [][]string) string {
	best := 0
	for _, row := range table {
		if isDataRow(row) {
			break
		}
		for _, cell := range row {
			for _, y := range years(cell) {
				best = max(best, y)
			}
		}
	}
	if best == 0 {
		return ""
	}
	return strconv.Itoa(best)
}

// tableKeys pairs each figure of a table with its row label and the
// headers above its column, one pair a line. A row that is not a row of
// figures adds its cells to the headers of their columns.
func tableKeys(table [][]string) string {
	var headers []string
	var b strings.Builder
	for _, row := range table {
		if !isDataRow(row) {
			for j, cell := range row {
				cell = strings.TrimSpace(cell)
				if j == 0 || cell == "" {
					continue
				}
				for len(headers) <= j {
					headers = append(headers, "")
				}
				headers[j] = strings.TrimSpace(headers[j] + " " + cell)
			}
			continue
		}
		label := strings.TrimSpace(row[0])
		for j, cell := range row[1:] {
			if !isFigure(cell) {
				continue
			}
			b.WriteString(label)
			if j+1 < len(headers) && headers[j+1] != "" {
				b.WriteByte(' ')
				b.WriteString(headers[j+1])
			}
			b.WriteByte('\n')
		}
	}
	return strings.TrimSpace(b.String())
}

// Recall measures retrieval on questions with gold contexts: for each k
// of ks, the fraction of qs whose gold Context is among the first k
// distinct contexts that ix finds for the question's text (a hit's
// context is its "context" metadata, else its ID). It searches with the
// Index's default Mode.
func Recall(ctx context.Context, ix *Index, qs []Question, ks []int) (map[int]float64, error) {
	maxK := 0
	for _, k := range ks {
		if k <= 0 {
			return nil, fmt.Errorf("retrieval: recall: k = %d: %w", k, ErrInvalid)
		}
		maxK = max(maxK, k)
	}
	found := make(map[int]int, len(ks))
	for _, q := range qs {
		ctxs, err := topContexts(ctx, ix, q.Text, maxK)
		if err != nil {
			return nil, fmt.Errorf("retrieval: recall: question %s: %w", q.ID, err)
		}
		if i := slices.Index(ctxs, q.Context); i >= 0 {
			for _, k := range ks {
				if i < k {
					found[k]++
				}
			}
		}
	}
	out := make(map[int]float64, len(ks))
	for _, k := range ks {
		if len(qs) > 0 {
			out[k] = float64(found[k]) / float64(len(qs))
		} else {
			out[k] = 0
		}
	}
	return out, nil
}

// topContexts returns the first n distinct contexts found for text,
// searching deeper while hits repeat contexts.
func topContexts(ctx context.Context, ix *Index, text string, n int) ([]string, error) {
	for k := n; ; k *= 4 {
		hits, err := ix.Search(ctx, Query{Text: text, K: k})
		if err != nil {
			return nil, err
		}
		var ctxs []string
		for _, h := range hits {
			c := h.Meta["context"]
			if c == "" {
				c = h.ID
			}
			if !slices.Contains(ctxs, c) {
				ctxs = append(ctxs, c)
			}
		}
		if len(ctxs) >= n || len(hits) < k {
			return ctxs[:min(n, len(ctxs))], nil
		}
	}
}
