package blevesearch

import (
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/numeric"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/weftlang/weft/search"
)

// knownUnsupportedQueries are Elasticsearch query types outside the subset;
// they give a *search.UnsupportedError rather than "unknown query".
var knownUnsupportedQueries = []string{
	"fuzzy", "regexp", "query_string", "simple_query_string", "nested", "has_child", "has_parent",
	"parent_id", "geo_bounding_box", "geo_distance", "geo_grid", "geo_polygon", "geo_shape", "shape",
	"function_score", "script", "script_score", "dis_max", "boosting", "more_like_this",
	"match_bool_prefix", "match_phrase_prefix", "combined_fields", "intervals", "span_term",
	"span_near", "span_or", "span_not", "span_first", "span_multi", "span_containing",
	"span_within", "span_field_masking", "field_masking_span", "knn", "percolate", "pinned",
	"rank_feature", "distance_feature", "wrapper", "terms_set", "type", "semantic",
	"sparse_vector", "text_expansion", "weighted_tokens", "rule",
}

// query translates one query object at path.
func (t *translator) query(path string, v any, depth int) (clause, error) {
	if depth > maxDepth {
		return clause{}, qerr(path, "queries nested deeper than %d levels", maxDepth)
	}
	obj, err := asObject(path, v)
	if err != nil {
		return clause{}, err
	}
	kind, body, err := singleKey(path, obj, "query type")
	if err != nil {
		return clause{}, err
	}
	p := join(path, kind)
	switch kind {
	case "match_all":
		return t.matchAll(p, body)
	case "match_none":
		if _, err := t.params(p, body, "boost", "_name"); err != nil {
			return clause{}, err
		}
		return noneClause, nil
	case "match":
		return t.match(p, body, false)
	case "match_phrase":
		return t.match(p, body, true)
	case "multi_match":
		return t.multiMatch(p, body)
	case "term":
		return t.term(p, body)
	case "terms":
		return t.terms(p, body)
	case "range":
		return t.rangeQuery(p, body)
	case "exists":
		return t.exists(p, body)
	case "prefix":
		return t.prefix(p, body)
	case "wildcard":
		return t.wildcard(p, body)
	case "ids":
		return t.ids(p, body)
	case "bool":
		return t.boolQuery(p, body, depth)
	case "constant_score":
		return t.constantScore(p, body, depth)
	}
	if slices.Contains(knownUnsupportedQueries, kind) {
		return clause{}, unsupported(p, "")
	}
	return clause{}, qerr(p, "unknown query [%s]", kind)
}

// params checks that v is an object whose keys are all in allowed.
func (t *translator) params(path string, v any, allowed ...string) (map[string]any, error) {
	obj, err := asObject(path, v)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(allowed, k) {
			return nil, qerr(join(path, k), "unknown parameter [%s]", k)
		}
	}
	return obj, nil
}

// boostOf applies the "boost" member of obj, if any, to c.
func boostOf(path string, obj map[string]any, c clause) (clause, error) {
	bv, ok := obj["boost"]
	if !ok {
		return c, nil
	}
	b, err := asBoost(join(path, "boost"), bv)
	if err != nil {
		return clause{}, err
	}
	if !c.none {
		setBoost(c.q, b)
	}
	return c, nil
}

func (t *translator) matchAll(path string, v any) (clause, error) {
	obj, err := t.params(path, v, "boost", "_name")
	if err != nil {
		return clause{}, err
	}
	return boostOf(path, obj, clause{q: query.NewMatchAllQuery()})
}

// field resolves a field name of a query. ok is false for an unmapped field
// (a *search.QueryError in strict mode).
func (t *translator) field(path, name string) (search.FieldType, bool, error) {
	ft, ok := t.schema.Lookup(name)
	if ok {
		return ft, true, nil
	}
	if t.strict {
		return "", false, qerr(path, "unknown field [%s]; the schema has: %s", name, strings.Join(t.schema.Paths(), ", "))
	}
	return "", false, nil
}

// fieldParams splits the body of a single-field query such as
// {"status": "x"} or {"status": {"value": "x", "boost": 2}}: it returns the
// field, its path, and either the short-form value or the parameter object.
func fieldParams(path string, v any, extra ...string) (field, fpath string, short any, params map[string]any, err error) {
	obj, err := asObject(path, v)
	if err != nil {
		return "", "", nil, nil, err
	}
	field, fv, err := singleKey(path, obj, "field", extra...)
	if err != nil {
		return "", "", nil, nil, err
	}
	fpath = join(path, field)
	if m, ok := fv.(map[string]any); ok {
		return field, fpath, nil, m, nil
	}
	return field, fpath, fv, nil, nil
}

// ---- match, match_phrase, multi_match ----

func (t *translator) match(path string, v any, phrase bool) (clause, error) {
	field, fpath, short, params, err := fieldParams(path, v)
	if err != nil {
		return clause{}, err
	}
	o := matchOpts{}
	text := short
	if params != nil {
		var ok bool
		if text, ok = params["query"]; !ok {
			return clause{}, qerr(fpath, "[query] is required")
		}
		if err := o.parse(fpath, params, phrase); err != nil {
			return clause{}, err
		}
	}
	tpath := fpath
	if params != nil {
		tpath = join(fpath, "query")
	}
	qtext, err := scalarString(tpath, text)
	if err != nil {
		return clause{}, err
	}
	ft, ok, err := t.field(fpath, field)
	if err != nil || !ok {
		return noneClause, err
	}
	c, err := t.matchField(fpath, field, ft, qtext, o, phrase)
	if err != nil || params == nil {
		return c, err
	}
	return boostOf(fpath, params, c)
}

type matchOpts struct {
	and       bool
	msm       any // nil when absent
	fuzziness string
	prefixLen int
	zeroAll   bool
	lenient   bool
}

func (o *matchOpts) parse(path string, params map[string]any, phrase bool) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		kp := join(path, k)
		switch {
		case k == "query", k == "boost", k == "_name":
		case k == "zero_terms_query":
			s, err := asString(kp, v)
			if err != nil {
				return err
			}
			switch strings.ToLower(s) {
			case "none":
			case "all":
				o.zeroAll = true
			default:
				return qerr(kp, "unknown zero_terms_query [%s], expected none or all", s)
			}
		case k == "analyzer":
			s, err := asString(kp, v)
			if err != nil {
				return err
			}
			if s != "standard" {
				return unsupported(kp, `only the "standard" analyzer is supported`)
			}
		case k == "slop" && phrase:
			n, err := asInt(kp, v)
			if err != nil {
				return err
			}
			if n != 0 {
				return unsupported(kp, "only slop 0 is supported")
			}
		case phrase:
			return qerr(kp, "unknown parameter [%s] of match_phrase", k)
		case k == "operator":
			s, err := asString(kp, v)
			if err != nil {
				return err
			}
			switch strings.ToLower(s) {
			case "or":
			case "and":
				o.and = true
			default:
				return qerr(kp, "unknown operator [%s], expected or or and", s)
			}
		case k == "minimum_should_match":
			if _, err := parseMSM(kp, v, 1); err != nil {
				return err
			}
			o.msm = v
		case k == "fuzziness":
			s, err := scalarString(kp, v)
			if err != nil {
				return err
			}
			switch strings.ToUpper(s) {
			case "AUTO", "0", "1", "2":
				o.fuzziness = strings.ToUpper(s)
			default:
				return unsupported(kp, `only "AUTO", 0, 1 and 2 are supported`)
			}
		case k == "prefix_length":
			n, err := asInt(kp, v)
			if err != nil {
				return err
			}
			if n < 0 || n > 1000 {
				return qerr(kp, "prefix_length must be between 0 and 1000")
			}
			o.prefixLen = int(n)
		case k == "lenient":
			b, err := asBool(kp, v)
			if err != nil {
				return err
			}
			o.lenient = b
		case k == "max_expansions", k == "fuzzy_transpositions", k == "auto_generate_synonyms_phrase_query", k == "fuzzy_rewrite":
			// Accepted and ignored.
		default:
			return qerr(kp, "unknown parameter [%s] of match", k)
		}
	}
	return nil
}

// matchField builds a match or match_phrase on one resolved field.
func (t *translator) matchField(path, field string, ft search.FieldType, text string, o matchOpts, phrase bool) (clause, error) {
	if ft != search.Text {
		// Elasticsearch runs a term query for non-text fields.
		c, err := t.termValue(path, field, ft, text)
		if err != nil && o.lenient {
			return noneClause, nil
		}
		return c, err
	}
	tokens := t.text.Analyze([]byte(text))
	if len(tokens) == 0 {
		if o.zeroAll {
			return clause{q: query.NewMatchAllQuery()}, nil
		}
		return noneClause, nil
	}
	if phrase {
		if len(tokens) == 1 {
			tq := query.NewTermQuery(string(tokens[0].Term))
			tq.SetField(field)
			return clause{q: tq}, nil
		}
		first := tokens[0].Position
		last := first
		for _, tk := range tokens {
			first, last = min(first, tk.Position), max(last, tk.Position)
		}
		terms := make([][]string, last-first+1)
		for _, tk := range tokens {
			terms[tk.Position-first] = append(terms[tk.Position-first], string(tk.Term))
		}
		return clause{q: query.NewMultiPhraseQuery(terms, field)}, nil
	}
	qs := make([]query.Query, 0, len(tokens))
	for _, tk := range tokens {
		term := string(tk.Term)
		if fz := fuzziness(o.fuzziness, term); fz > 0 {
			fq := query.NewFuzzyQuery(term)
			fq.SetField(field)
			fq.SetFuzziness(fz)
			fq.SetPrefix(o.prefixLen)
			qs = append(qs, fq)
			continue
		}
		tq := query.NewTermQuery(term)
		tq.SetField(field)
		qs = append(qs, tq)
	}
	if o.and {
		if len(qs) == 1 {
			return clause{q: qs[0]}, nil
		}
		return clause{q: query.NewConjunctionQuery(qs)}, nil
	}
	need := 1
	if o.msm != nil {
		n, _ := parseMSM("", o.msm, len(qs))
		need = max(n, 1)
		if need > len(qs) {
			return noneClause, nil
		}
	}
	if len(qs) == 1 {
		return clause{q: qs[0]}, nil
	}
	d := query.NewDisjunctionQuery(qs)
	d.SetMin(float64(need))
	return clause{q: d}, nil
}

// fuzziness returns the edit distance for term: AUTO is 0 for one or two
// characters, 1 for three to five, 2 above.
func fuzziness(spec, term string) int {
	switch spec {
	case "1":
		return 1
	case "2":
		return 2
	case "AUTO":
		switch n := utf8.RuneCountInString(term); {
		case n <= 2:
			return 0
		case n <= 5:
			return 1
		default:
			return 2
		}
	}
	return 0
}

// parseMSM evaluates minimum_should_match for n optional clauses: an
// integer, a negative integer (n minus it), a percentage or a negative
// percentage. Combinations ("3<90%") are unsupported.
func parseMSM(path string, v any, n int) (int, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, wrongType(path, "an integer or a percentage", v)
	}
	if strings.ContainsAny(s, "< ") {
		return 0, unsupported(path, "combinations of minimum_should_match are not supported")
	}
	var r int
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, qerr(path, "invalid minimum_should_match [%s]", s)
		}
		c := int(float64(n) * math.Abs(f) / 100)
		if f < 0 {
			r = n - c
		} else {
			r = c
		}
	} else {
		k, err := strconv.Atoi(s)
		if err != nil {
			return 0, qerr(path, "invalid minimum_should_match [%s]", s)
		}
		if k < 0 {
			r = n + k
		} else {
			r = k
		}
	}
	return max(r, 0), nil
}

func (t *translator) multiMatch(path string, v any) (clause, error) {
	obj, err := asObject(path, v)
	if err != nil {
		return clause{}, err
	}
	qv, ok := obj["query"]
	if !ok {
		return clause{}, qerr(path, "[query] is required")
	}
	text, err := scalarString(join(path, "query"), qv)
	if err != nil {
		return clause{}, err
	}
	phrase := false
	if tv, ok := obj["type"]; ok {
		s, err := asString(join(path, "type"), tv)
		if err != nil {
			return clause{}, err
		}
		switch s {
		case "best_fields", "most_fields":
		case "phrase":
			phrase = true
		case "cross_fields", "phrase_prefix", "bool_prefix":
			return clause{}, unsupported(join(path, "type"), "supported types: best_fields, most_fields, phrase")
		default:
			return clause{}, qerr(join(path, "type"), "unknown multi_match type [%s]", s)
		}
	}
	rest := map[string]any{}
	for k, v := range obj {
		switch k {
		case "fields", "type", "tie_breaker", "boost":
		default:
			rest[k] = v
		}
	}
	if tb, ok := obj["tie_breaker"]; ok {
		if _, err := asNumber(join(path, "tie_breaker"), tb); err != nil {
			return clause{}, err
		}
	}
	var o matchOpts
	if phrase {
		// match_phrase options only, plus slop via the shared parser.
		delete(rest, "operator")
	}
	if err := o.parse(path, rest, phrase); err != nil {
		return clause{}, err
	}
	// Fields: patterns with optional ^boost; absent means every text and
	// keyword field.
	type fb struct {
		field string
		boost float64
	}
	var fields []fb
	seen := map[string]bool{}
	add := func(f string, b float64) {
		if !seen[f] {
			seen[f] = true
			fields = append(fields, fb{f, b})
		}
	}
	var patterns []any
	if fv, ok := obj["fields"]; ok {
		switch x := fv.(type) {
		case []any:
			patterns = x
		case string:
			patterns = []any{x}
		default:
			return clause{}, wrongType(join(path, "fields"), "an array of strings", fv)
		}
	} else {
		patterns = []any{"*"}
	}
	for i, pv := range patterns {
		pp := at(join(path, "fields"), i)
		s, err := asString(pp, pv)
		if err != nil {
			return clause{}, err
		}
		b := 1.0
		if name, bs, ok := strings.Cut(s, "^"); ok {
			f, err := strconv.ParseFloat(bs, 64)
			if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return clause{}, qerr(pp, "invalid field boost in [%s]", s)
			}
			s, b = name, f
		}
		if strings.Contains(s, "*") {
			for _, fp := range t.schema.Paths() {
				ft, _ := t.schema.Lookup(fp)
				if glob(s, fp) && (ft == search.Text || ft == search.Keyword) {
					add(fp, b)
				}
			}
			continue
		}
		if _, ok, err := t.field(pp, s); err != nil {
			return clause{}, err
		} else if ok {
			add(s, b)
		}
	}
	var qs []query.Query
	for _, f := range fields {
		ft, _ := t.schema.Lookup(f.field)
		o2 := o
		o2.lenient = true // as Elasticsearch does for fields expanded from patterns
		c, err := t.matchField(join(path, "fields"), f.field, ft, text, o2, phrase)
		if err != nil {
			return clause{}, err
		}
		if c.none {
			continue
		}
		if f.boost != 1 {
			setBoost(c.q, f.boost)
		}
		qs = append(qs, c.q)
	}
	var c clause
	switch len(qs) {
	case 0:
		c = noneClause
	case 1:
		c = clause{q: qs[0]}
	default:
		c = clause{q: query.NewDisjunctionQuery(qs)}
	}
	return boostOf(path, obj, c)
}

// ---- term-level queries ----

// termValue builds an exact-value query of v on a resolved field, with
// Elasticsearch's per-type semantics.
func (t *translator) termValue(path, field string, ft search.FieldType, v any) (clause, error) {
	switch {
	case ft == search.Keyword || ft == search.Text:
		s, err := scalarString(path, v)
		if err != nil {
			return clause{}, err
		}
		tq := query.NewTermQuery(s)
		tq.SetField(field)
		return clause{q: tq}, nil
	case ft.Numeric():
		f, err := asNumber(path, v)
		if err != nil {
			return clause{}, err
		}
		if ft.Integral() && f != math.Trunc(f) {
			return noneClause, nil // "Value has a decimal part"
		}
		f = storedNumber(ft, f)
		incl := true
		nq := query.NewNumericRangeInclusiveQuery(&f, &f, &incl, &incl)
		nq.SetField(field)
		return clause{q: nq}, nil
	case ft == search.Date:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = string(x)
		default:
			return clause{}, wrongType(path, "a date string or epoch milliseconds", v)
		}
		lo, err := dateMath(s, false, t.now, time.UTC, defaultDateFormats())
		if err != nil {
			return clause{}, qerr(path, "%v", err)
		}
		hi, err := dateMath(s, true, t.now, time.UTC, defaultDateFormats())
		if err != nil {
			return clause{}, qerr(path, "%v", err)
		}
		return dateRange(field, &lo, &hi, true, true), nil
	case ft == search.Boolean:
		var b bool
		switch x := v.(type) {
		case bool:
			b = x
		case string:
			switch x {
			case "true":
				b = true
			case "false", "":
			default:
				return clause{}, qerr(path, "can't parse boolean value [%s], expected [true] or [false]", x)
			}
		default:
			return clause{}, wrongType(path, "a boolean", v)
		}
		bq := query.NewBoolFieldQuery(b)
		bq.SetField(field)
		return clause{q: bq}, nil
	}
	return clause{}, qerr(path, "unsupported field type %q", ft)
}

// storedNumber converts a number to the value an index of type ft holds.
func storedNumber(ft search.FieldType, f float64) float64 {
	switch ft {
	case search.Long, search.Integer:
		return math.Trunc(f)
	case search.Float:
		return float64(float32(f))
	}
	return f
}

// dateRange builds a range on a date field; nil bounds are open. Bounds
// beyond what the index can hold are clamped.
func dateRange(field string, lo, hi *time.Time, loIncl, hiIncl bool) clause {
	var minF, maxF *float64
	if lo != nil {
		if lo.After(maxIndexTime) {
			return noneClause
		}
		if !lo.Before(minIndexTime) {
			f := numeric.Int64ToFloat64(lo.UnixNano())
			minF = &f
		}
	}
	if hi != nil {
		if hi.Before(minIndexTime) {
			return noneClause
		}
		if !hi.After(maxIndexTime) {
			f := numeric.Int64ToFloat64(hi.UnixNano())
			maxF = &f
		}
	}
	if lo != nil && hi != nil && (hi.Before(*lo) || (hi.Equal(*lo) && !(loIncl && hiIncl))) {
		return noneClause
	}
	if minF == nil && maxF == nil {
		return existsClause(field)
	}
	nq := query.NewNumericRangeInclusiveQuery(minF, maxF, &loIncl, &hiIncl)
	nq.SetField(field)
	return clause{q: nq}
}

func (t *translator) term(path string, v any) (clause, error) {
	field, fpath, short, params, err := fieldParams(path, v)
	if err != nil {
		return clause{}, err
	}
	val := short
	if params != nil {
		vv, ok := params["value"]
		if !ok {
			return clause{}, qerr(fpath, "[value] is required")
		}
		val = vv
		if err := caseSensitiveOnly(fpath, params, "value", "boost", "_name"); err != nil {
			return clause{}, err
		}
	}
	vpath := fpath
	if params != nil {
		vpath = join(fpath, "value")
	}
	if _, err := scalarString(vpath, val); err != nil {
		return clause{}, err
	}
	ft, ok, err := t.field(fpath, field)
	if err != nil || !ok {
		return noneClause, err
	}
	c, err := t.termValue(vpath, field, ft, val)
	if err != nil || params == nil {
		return c, err
	}
	return boostOf(fpath, params, c)
}

// caseSensitiveOnly checks the parameters of term, prefix and wildcard:
// only the allowed keys, and case_insensitive false if present.
func caseSensitiveOnly(path string, params map[string]any, allowed ...string) error {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		kp := join(path, k)
		switch {
		case slices.Contains(allowed, k):
		case k == "case_insensitive":
			b, err := asBool(kp, params[k])
			if err != nil {
				return err
			}
			if b {
				return unsupported(kp, "only case-sensitive matching is supported")
			}
		case k == "rewrite":
			if _, err := asString(kp, params[k]); err != nil {
				return err
			}
		default:
			return qerr(kp, "unknown parameter [%s]", k)
		}
	}
	return nil
}

func (t *translator) terms(path string, v any) (clause, error) {
	obj, err := asObject(path, v)
	if err != nil {
		return clause{}, err
	}
	field, fv, err := singleKey(path, obj, "field", "boost", "_name")
	if err != nil {
		return clause{}, err
	}
	fpath := join(path, field)
	arr, ok := fv.([]any)
	if !ok {
		if _, isObj := fv.(map[string]any); isObj {
			return clause{}, unsupported(fpath, "terms lookup is not supported; list the values")
		}
		return clause{}, wrongType(fpath, "an array of values", fv)
	}
	for i, e := range arr {
		if _, err := scalarString(at(fpath, i), e); err != nil {
			return clause{}, err
		}
	}
	if bv, ok := obj["boost"]; ok {
		if _, err := asBoost(join(path, "boost"), bv); err != nil {
			return clause{}, err
		}
	}
	ft, ok, err := t.field(fpath, field)
	if err != nil || !ok {
		return noneClause, err
	}
	var qs []query.Query
	for i, e := range arr {
		c, err := t.termValue(at(fpath, i), field, ft, e)
		if err != nil {
			return clause{}, err
		}
		if !c.none {
			qs = append(qs, c.q)
		}
	}
	var c clause
	switch len(qs) {
	case 0:
		return noneClause, nil
	case 1:
		c = clause{q: qs[0]}
	default:
		c = clause{q: query.NewDisjunctionQuery(qs)}
	}
	return boostOf(path, obj, c)
}

func (t *translator) rangeQuery(path string, v any) (clause, error) {
	field, fpath, _, params, err := fieldParams(path, v)
	if err != nil {
		return clause{}, err
	}
	if params == nil {
		return clause{}, wrongType(fpath, "an object of bounds (gt, gte, lt, lte)", v.(map[string]any)[field])
	}
	var lo, hi any
	var loKey, hiKey string
	formats := defaultDateFormats()
	loc := time.UTC
	for _, k := range slices.Sorted(maps.Keys(params)) {
		kp := join(fpath, k)
		val := params[k]
		switch k {
		case "gt", "gte":
			if loKey != "" {
				return clause{}, qerr(kp, "both [%s] and [%s] are set", loKey, k)
			}
			if val != nil {
				lo, loKey = val, k
			}
		case "lt", "lte":
			if hiKey != "" {
				return clause{}, qerr(kp, "both [%s] and [%s] are set", hiKey, k)
			}
			if val != nil {
				hi, hiKey = val, k
			}
		case "format":
			s, err := asString(kp, val)
			if err != nil {
				return clause{}, err
			}
			f, ok := parseDateFormats(s)
			if !ok {
				return clause{}, unsupported(kp, "supported formats: strict_date_optional_time, epoch_millis, epoch_second, strict_date and patterns of yyyy MM dd HH mm ss SSS")
			}
			formats = f
		case "time_zone":
			s, err := asString(kp, val)
			if err != nil {
				return clause{}, err
			}
			if loc, err = parseTimeZone(s); err != nil {
				return clause{}, qerr(kp, "%v", err)
			}
		case "relation":
			s, err := asString(kp, val)
			if err != nil {
				return clause{}, err
			}
			if !strings.EqualFold(s, "intersects") {
				return clause{}, unsupported(kp, "relation applies to range fields, which are not supported")
			}
		case "boost", "_name":
		case "from", "to", "include_lower", "include_upper":
			return clause{}, unsupported(kp, "use gt, gte, lt and lte")
		default:
			return clause{}, qerr(kp, "unknown parameter [%s] of range", k)
		}
	}
	for _, b := range []struct {
		key string
		val any
	}{{loKey, lo}, {hiKey, hi}} {
		if b.key == "" {
			continue
		}
		if _, err := scalarString(join(fpath, b.key), b.val); err != nil {
			return clause{}, err
		}
	}
	ft, ok, err := t.field(fpath, field)
	if err != nil || !ok {
		return noneClause, err
	}
	var c clause
	switch {
	case ft == search.Date:
		bound := func(key string, val any, roundUp bool) (*time.Time, error) {
			if key == "" {
				return nil, nil
			}
			s, _ := scalarString("", val)
			fs := formats
			if _, isNum := val.(json.Number); isNum {
				// Numbers are epoch milliseconds whatever the format.
				fs = append([]dateFormat{parseEpochMillis}, formats...)
			}
			tm, err := dateMath(s, roundUp, t.now, loc, fs)
			if err != nil {
				return nil, qerr(join(fpath, key), "%v", err)
			}
			return &tm, nil
		}
		lt, err := bound(loKey, lo, loKey == "gt")
		if err != nil {
			return clause{}, err
		}
		ht, err := bound(hiKey, hi, hiKey == "lte")
		if err != nil {
			return clause{}, err
		}
		c = dateRange(field, lt, ht, loKey != "gt", hiKey != "lt")
	case ft.Numeric():
		var minF, maxF *float64
		for _, b := range []struct {
			key string
			val any
			dst **float64
		}{{loKey, lo, &minF}, {hiKey, hi, &maxF}} {
			if b.key == "" {
				continue
			}
			f, err := asNumber(join(fpath, b.key), b.val)
			if err != nil {
				return clause{}, err
			}
			if ft == search.Float {
				f = float64(float32(f))
			}
			*b.dst = &f
		}
		if minF == nil && maxF == nil {
			c = existsClause(field)
			break
		}
		loIncl, hiIncl := loKey != "gt", hiKey != "lt"
		if minF != nil && maxF != nil && (*maxF < *minF || (*maxF == *minF && !(loIncl && hiIncl))) {
			return noneClause, nil
		}
		nq := query.NewNumericRangeInclusiveQuery(minF, maxF, &loIncl, &hiIncl)
		nq.SetField(field)
		c = clause{q: nq}
	case ft == search.Keyword || ft == search.Text:
		var minS, maxS string
		if loKey != "" {
			minS, _ = scalarString("", lo)
		}
		if hiKey != "" {
			maxS, _ = scalarString("", hi)
		}
		loIncl, hiIncl := loKey != "gt", hiKey != "lt"
		switch {
		case loKey == "" && hiKey == "":
			c = existsClause(field)
		case hiKey != "" && maxS == "":
			// Nothing sorts below the empty string.
			if hiIncl && (loKey == "" || (minS == "" && loIncl)) {
				tq := query.NewTermQuery("")
				tq.SetField(field)
				c = clause{q: tq}
			} else {
				return noneClause, nil
			}
		case loKey != "" && hiKey != "" && (maxS < minS || (maxS == minS && !(loIncl && hiIncl))):
			return noneClause, nil
		default:
			tq := query.NewTermRangeInclusiveQuery(minS, maxS, &loIncl, &hiIncl)
			tq.SetField(field)
			c = clause{q: tq}
		}
	default:
		return clause{}, unsupported(fpath, "range queries on boolean fields are not supported")
	}
	return boostOf(fpath, params, c)
}

// existsClause matches documents with a value in field (a searchable path).
func existsClause(field string) clause {
	tq := query.NewTermQuery(field)
	tq.SetField(fieldNamesField)
	return clause{q: tq}
}

func (t *translator) exists(path string, v any) (clause, error) {
	obj, err := t.params(path, v, "field", "boost", "_name")
	if err != nil {
		return clause{}, err
	}
	fv, ok := obj["field"]
	if !ok {
		return clause{}, qerr(path, "[field] is required")
	}
	field, err := asString(join(path, "field"), fv)
	if err != nil {
		return clause{}, err
	}
	var fields []string
	switch {
	case strings.Contains(field, "*"):
		for _, p := range t.schema.Paths() {
			if glob(field, p) {
				fields = append(fields, p)
			}
		}
	default:
		if _, ok := t.schema.Lookup(field); ok {
			fields = []string{field}
		} else if under := t.schema.Under(field); len(under) > 0 {
			fields = under
		} else if _, _, err := t.field(join(path, "field"), field); err != nil {
			return clause{}, err
		}
	}
	var c clause
	switch len(fields) {
	case 0:
		return noneClause, nil
	case 1:
		c = existsClause(fields[0])
	default:
		qs := make([]query.Query, len(fields))
		for i, f := range fields {
			qs[i] = existsClause(f).q
		}
		c = clause{q: query.NewDisjunctionQuery(qs)}
	}
	return boostOf(path, obj, c)
}

// stringTermQuery parses the common shape of prefix and wildcard: the value
// under valueKeys, a keyword or text field.
func (t *translator) stringTermQuery(path string, v any, kind string, valueKeys ...string) (field, fpath, value string, params map[string]any, ok bool, err error) {
	field, fpath, short, params, err := fieldParams(path, v)
	if err != nil {
		return "", "", "", nil, false, err
	}
	val := short
	vpath := fpath
	if params != nil {
		found := false
		for _, k := range valueKeys {
			if vv, has := params[k]; has {
				val, vpath, found = vv, join(fpath, k), true
			}
		}
		if !found {
			return "", "", "", nil, false, qerr(fpath, "[%s] is required", valueKeys[0])
		}
		allowed := append([]string{"boost", "_name"}, valueKeys...)
		if err := caseSensitiveOnly(fpath, params, allowed...); err != nil {
			return "", "", "", nil, false, err
		}
	}
	value, err = asString(vpath, val)
	if err != nil {
		return "", "", "", nil, false, err
	}
	ft, ok, err := t.field(fpath, field)
	if err != nil || !ok {
		return "", "", "", nil, false, err
	}
	if ft != search.Keyword && ft != search.Text {
		return "", "", "", nil, false, qerr(fpath, "can only use %s queries on keyword and text fields, not on [%s] which is of type [%s]", kind, field, ft)
	}
	return field, fpath, value, params, true, nil
}

func (t *translator) prefix(path string, v any) (clause, error) {
	field, fpath, value, params, ok, err := t.stringTermQuery(path, v, "prefix", "value")
	if err != nil || !ok {
		return noneClause, err
	}
	var c clause
	if value == "" {
		c = existsClause(field)
	} else {
		pq := query.NewPrefixQuery(value)
		pq.SetField(field)
		c = clause{q: pq}
	}
	if params == nil {
		return c, nil
	}
	return boostOf(fpath, params, c)
}

func (t *translator) wildcard(path string, v any) (clause, error) {
	field, fpath, value, params, ok, err := t.stringTermQuery(path, v, "wildcard", "value", "wildcard")
	if err != nil || !ok {
		return noneClause, err
	}
	re, literal, all := wildcardRegexp(value)
	var c clause
	switch {
	case all:
		c = existsClause(field)
	case literal:
		tq := query.NewTermQuery(unescapeWildcard(value))
		tq.SetField(field)
		c = clause{q: tq}
	default:
		rq := query.NewRegexpQuery(re)
		rq.SetField(field)
		c = clause{q: rq}
	}
	if params == nil {
		return c, nil
	}
	return boostOf(fpath, params, c)
}

// wildcardRegexp converts an Elasticsearch wildcard pattern ('*' any run,
// '?' one character, '\' escapes) to an anchored Go regexp. literal reports a
// pattern without wildcards; all reports one made only of '*'.
func wildcardRegexp(p string) (re string, literal, all bool) {
	var b strings.Builder
	literal, all = true, p != ""
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			_, size := utf8.DecodeRuneInString(p[i+1:])
			b.WriteString(regexp.QuoteMeta(p[i+1 : i+1+size]))
			i += 1 + size
			all = false
		case c == '*':
			b.WriteString(".*")
			literal = false
			i++
		case c == '?':
			b.WriteString(".")
			literal, all = false, false
			i++
		default:
			_, size := utf8.DecodeRuneInString(p[i:])
			b.WriteString(regexp.QuoteMeta(p[i : i+size]))
			i += size
			all = false
		}
	}
	return b.String(), literal, all
}

func unescapeWildcard(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func (t *translator) ids(path string, v any) (clause, error) {
	obj, err := t.params(path, v, "values", "boost", "_name")
	if err != nil {
		return clause{}, err
	}
	vv, ok := obj["values"]
	if !ok {
		return noneClause, nil
	}
	arr, ok := vv.([]any)
	if !ok {
		return clause{}, wrongType(join(path, "values"), "an array of ids", vv)
	}
	ids := make([]string, 0, len(arr))
	for i, e := range arr {
		s, err := scalarString(at(join(path, "values"), i), e)
		if err != nil {
			return clause{}, err
		}
		ids = append(ids, s)
	}
	if len(ids) == 0 {
		return noneClause, nil
	}
	return boostOf(path, obj, clause{q: query.NewDocIDQuery(ids)})
}

// ---- compound queries ----

// clauses parses a bool occurrence: one query object or an array of them.
func (t *translator) clauses(path string, v any, depth int) ([]clause, error) {
	switch x := v.(type) {
	case map[string]any:
		c, err := t.query(path, x, depth+1)
		if err != nil {
			return nil, err
		}
		return []clause{c}, nil
	case []any:
		out := make([]clause, 0, len(x))
		for i, e := range x {
			c, err := t.query(at(path, i), e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	return nil, wrongType(path, "a query object or an array of query objects", v)
}

func (t *translator) boolQuery(path string, v any, depth int) (clause, error) {
	obj, err := t.params(path, v, "must", "filter", "should", "must_not", "minimum_should_match", "boost", "_name", "adjust_pure_negative")
	if err != nil {
		return clause{}, err
	}
	occ := map[string][]clause{}
	for _, k := range []string{"must", "filter", "should", "must_not"} {
		if cv, ok := obj[k]; ok {
			cs, err := t.clauses(join(path, k), cv, depth)
			if err != nil {
				return clause{}, err
			}
			occ[k] = cs
		}
	}
	if av, ok := obj["adjust_pure_negative"]; ok {
		if _, err := asBool(join(path, "adjust_pure_negative"), av); err != nil {
			return clause{}, err
		}
	}
	must, filter, should, mustNot := occ["must"], occ["filter"], occ["should"], occ["must_not"]
	// minimum_should_match: explicit, else 1 when there is no must or
	// filter clause, else 0 (should clauses only add to the score).
	msm := 0
	if len(should) > 0 && len(must) == 0 && len(filter) == 0 {
		msm = 1
	}
	if mv, ok := obj["minimum_should_match"]; ok {
		n, err := parseMSM(join(path, "minimum_should_match"), mv, len(should))
		if err != nil {
			return clause{}, err
		}
		msm = n
	}
	if msm > len(should) {
		return noneClause, nil
	}
	var mustQs, filterQs, shouldQs, notQs []query.Query
	for _, c := range must {
		if c.none {
			return noneClause, nil
		}
		mustQs = append(mustQs, c.q)
	}
	for _, c := range filter {
		if c.none {
			return noneClause, nil
		}
		filterQs = append(filterQs, c.q)
	}
	for _, c := range should {
		if !c.none {
			shouldQs = append(shouldQs, c.q)
		}
	}
	for _, c := range mustNot {
		if !c.none {
			notQs = append(notQs, c.q)
		}
	}
	if msm > len(shouldQs) {
		return noneClause, nil
	}
	if msm == 0 {
		// Optional should clauses only score: they need a must side to
		// attach to, which match_all provides when there is none.
		if len(shouldQs) > 0 && len(mustQs) == 0 {
			mustQs = append(mustQs, query.NewMatchAllQuery())
		}
	}
	bq := &query.BooleanQuery{}
	switch len(mustQs) {
	case 0:
	case 1:
		bq.Must = guard(mustQs[0])
	default:
		bq.Must = guard(query.NewConjunctionQuery(mustQs))
	}
	if len(shouldQs) > 0 {
		d := query.NewDisjunctionQuery(shouldQs)
		d.SetMin(float64(msm))
		bq.Should = guard(d)
	}
	if len(notQs) > 0 {
		bq.MustNot = query.NewDisjunctionQuery(notQs)
	}
	switch len(filterQs) {
	case 0:
	case 1:
		bq.Filter = filterQs[0]
	default:
		bq.Filter = query.NewConjunctionQuery(filterQs)
	}
	if bq.Must == nil && bq.Should == nil && bq.Filter == nil {
		// Empty bool, or must_not only: start from every document.
		bq.Must = query.NewMatchAllQuery()
	}
	c := clause{q: bq}
	if bv, ok := obj["boost"]; ok {
		if _, err := asBoost(join(path, "boost"), bv); err != nil {
			return clause{}, err
		}
	}
	return c, nil
}

func (t *translator) constantScore(path string, v any, depth int) (clause, error) {
	obj, err := t.params(path, v, "filter", "boost", "_name")
	if err != nil {
		return clause{}, err
	}
	fv, ok := obj["filter"]
	if !ok {
		return clause{}, qerr(path, "[filter] is required")
	}
	f, err := t.query(join(path, "filter"), fv, depth+1)
	if err != nil {
		return clause{}, err
	}
	if f.none {
		return noneClause, nil
	}
	all := query.NewMatchAllQuery()
	c, err := boostOf(path, obj, clause{q: all})
	if err != nil {
		return clause{}, err
	}
	return clause{q: &query.BooleanQuery{Must: c.q, Filter: f.q}}, nil
}
