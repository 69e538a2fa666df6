package spider

import (
	"cmp"
	"math"
	"slices"

	"github.com/weftlang/weft/sqltool"
)

// maxPermutations bounds the column orders Match tries.
const maxPermutations = 10000

// Match reports whether pred has the same result as gold, the way Spider's
// execution accuracy (the test-suite evaluation) compares them:
//
//   - Two empty results match, whatever their columns.
//   - Otherwise both must have the same numbers of rows and columns.
//   - Column names are ignored and columns may come in any order: pred
//     matches if some permutation of its columns matches gold.
//   - Rows are compared as multisets (duplicates count), unless ordered is
//     set, when they are compared in order. Spider sets it when the gold
//     SQL has an ORDER BY; Evaluate sets it when the gold SQL has a
//     top-level one (sqltool.HasTopLevelOrderBy).
//   - Values compare as in Python: numbers by value, int and float alike
//     (3 equals 3.0, and a bool counts as 0 or 1), within 1e-6 absolute or
//     1e-9 relative; strings exactly; NULL only equals NULL; a string never
//     equals a number.
//
// Truncated results are compared as they are; Evaluate scores a truncated
// prediction wrong before calling Match.
func Match(gold, pred *sqltool.Result, ordered bool) bool {
	if gold == nil || pred == nil {
		return false
	}
	if len(gold.Rows) == 0 && len(pred.Rows) == 0 {
		return true
	}
	if len(gold.Rows) != len(pred.Rows) {
		return false
	}
	n := width(gold)
	if n < 0 || n != width(pred) {
		return false
	}
	// Columns of pred that could stand for each column of gold: the same
	// values, as multisets.
	gcols, pcols := columns(gold, n), columns(pred, n)
	cand := make([][]int, n)
	for i := range n {
		for j := range n {
			if rowsEqual(gcols[i], pcols[j]) {
				cand[i] = append(cand[i], j)
			}
		}
		if len(cand[i]) == 0 {
			return false
		}
	}
	want := gold.Rows
	if !ordered {
		want = sortedRows(gold.Rows)
	}
	perm := make([]int, n)
	used := make([]bool, n)
	tries := 0
	var search func(i int) bool
	search = func(i int) bool {
		if i == n {
			tries++
			return permutedEqual(want, pred.Rows, perm, ordered)
		}
		for _, j := range cand[i] {
			if used[j] || tries >= maxPermutations {
				continue
			}
			used[j], perm[i] = true, j
			if search(i + 1) {
				return true
			}
			used[j] = false
		}
		return false
	}
	return search(0)
}

// width returns the number of columns of r, or -1 when its rows disagree
// with its columns.
func width(r *sqltool.Result) int {
	n := len(r.Columns)
	for _, row := range r.Rows {
		if len(row) != n {
			return -1
		}
	}
	return n
}

// columns returns r's columns, each as a sorted list of one-value rows.
func columns(r *sqltool.Result, n int) [][][]any {
	cols := make([][][]any, n)
	for i := range n {
		col := make([][]any, len(r.Rows))
		for k, row := range r.Rows {
			col[k] = []any{row[i]}
		}
		cols[i] = sortedRows(col)
	}
	return cols
}

// permutedEqual reports whether rows, with column perm[i] of each row put
// in place i (and sorted unless ordered), equal want.
func permutedEqual(want, rows [][]any, perm []int, ordered bool) bool {
	got := make([][]any, len(rows))
	for k, row := range rows {
		p := make([]any, len(perm))
		for i, j := range perm {
			p[i] = row[j]
		}
		got[k] = p
	}
	if !ordered {
		got = sortedRows(got)
	}
	return rowsEqual(want, got)
}

// sortedRows returns a sorted copy of rows.
func sortedRows(rows [][]any) [][]any {
	s := slices.Clone(rows)
	slices.SortStableFunc(s, compareRows)
	return s
}

func rowsEqual(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if len(a[k]) != len(b[k]) {
			return false
		}
		for i := range a[k] {
			if !valuesEqual(a[k][i], b[k][i]) {
				return false
			}
		}
	}
	return true
}

func compareRows(a, b []any) int {
	for i := range min(len(a), len(b)) {
		if c := compareValues(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// kind orders values of different kinds: NULL, numbers, strings, others.
func kind(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case int64, float64, bool, int:
		return 1
	case string:
		return 2
	}
	return 3
}

// number returns v as a float64 and, when it is an integer, as an int64.
func number(v any) (f float64, i int64, isInt bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), x, true
	case int:
		return float64(x), int64(x), true
	case bool:
		if x {
			return 1, 1, true
		}
		return 0, 0, true
	case float64:
		return x, 0, false
	}
	return 0, 0, false
}

func compareValues(a, b any) int {
	ka, kb := kind(a), kind(b)
	if ka != kb {
		return cmp.Compare(ka, kb)
	}
	switch ka {
	case 1:
		fa, ia, inta := number(a)
		fb, ib, intb := number(b)
		if inta && intb {
			return cmp.Compare(ia, ib)
		}
		return cmp.Compare(fa, fb)
	case 2:
		return cmp.Compare(a.(string), b.(string))
	}
	return 0
}

func valuesEqual(a, b any) bool {
	ka, kb := kind(a), kind(b)
	if ka != kb {
		return false
	}
	switch ka {
	case 0:
		return true
	case 1:
		fa, ia, inta := number(a)
		fb, ib, intb := number(b)
		if inta && intb {
			return ia == ib
		}
		d := math.Abs(fa - fb)
		return d <= 1e-6 || d <= 1e-9*math.Max(math.Abs(fa), math.Abs(fb))
	case 2:
		return a.(string) == b.(string)
	}
	return false
}
