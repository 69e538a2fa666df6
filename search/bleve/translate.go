package blevesearch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/weftlang/weft/search"
)

// maxDepth bounds the nesting of compound queries.
const maxDepth = 64

// TranslateOptions tune Translate.
type TranslateOptions struct {
	// Now is the instant "now" stands for in date math; the zero value means
	// time.Now().
	Now time.Time
	// StrictFields makes a query on a field absent from the schema a
	// *search.QueryError instead of a clause that matches nothing (which is
	// what Elasticsearch does for unmapped fields).
	StrictFields bool
}

// Request is an Elasticsearch _search body translated to a Bleve search.
type Request struct {
	// Search is the Bleve request: query, from, size and sort.
	Search *bleve.SearchRequest
	// From and Size are the effective paging.
	From, Size int
	// TrackTotalHits is the count up to which the total is exact: -1 for
	// always exact (track_total_hits: true), 0 for not tracked
	// (track_total_hits: false).
	TrackTotalHits int64
	// Scored reports whether hits carry scores: the sort uses _score, or
	// track_scores is true.
	Scored bool

	source sourceFilter
}

// Translate parses body, the JSON body of an Elasticsearch _search request,
// and translates it for an index with the given schema. It supports the
// subset of the query DSL documented in search/DSL.md; everything else is a
// *search.UnsupportedError naming its JSON path. Malformed JSON is a
// *search.SyntaxError with the byte offset, and values of the wrong type or
// invalid options are a *search.QueryError naming their path. Translate never
// panics, whatever the input.
func Translate(body []byte, schema search.Schema, opts TranslateOptions) (*Request, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	t := &translator{schema: schema, now: now.UTC(), strict: opts.StrictFields, text: textAnalyzer()}
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	return t.request(v)
}

// decodeJSON decodes one JSON value with numbers kept as json.Number. An
// empty or all-blank body is an empty object, as in Elasticsearch.
func decodeJSON(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, search.NewSyntaxError(body, err)
	}
	end := dec.InputOffset()
	for end < int64(len(body)) && isSpace(body[end]) {
		end++
	}
	if end < int64(len(body)) {
		return nil, search.TrailingDataError(body, end)
	}
	return v, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type translator struct {
	schema search.Schema
	now    time.Time
	strict bool
	text   analysis.Analyzer
}

// clause is a translated query; none marks a query known to match nothing,
// in which case q is nil.
type clause struct {
	q    query.Query
	none bool
}

var noneClause = clause{none: true}

// ---- value helpers ----

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func at(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func qerr(path, format string, args ...any) error {
	return &search.QueryError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

func unsupported(path, detail string) error {
	return &search.UnsupportedError{Path: path, Detail: detail}
}

func wrongType(path string, want string, v any) error {
	return qerr(path, "expected %s, got %s", want, typeName(v))
}

func asObject(path string, v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(path, "an object", v)
	}
	return m, nil
}

func asString(path string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", wrongType(path, "a string", v)
	}
	return s, nil
}

// asNumber accepts a JSON number or a string holding one, as
// Elasticsearch does.
func asNumber(path string, v any) (float64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, wrongType(path, "a number", v)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, qerr(path, "%q is not a number", s)
	}
	return f, nil
}

func asInt(path string, v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, wrongType(path, "an integer", v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, qerr(path, "%q is not an integer", s)
	}
	return n, nil
}

func asBool(path string, v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch x {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, wrongType(path, "a boolean", v)
}

func asBoost(path string, v any) (float64, error) {
	b, err := asNumber(path, v)
	if err != nil {
		return 0, err
	}
	if b < 0 {
		return 0, qerr(path, "negative boost %v is not allowed", b)
	}
	return b, nil
}

// scalarString renders a term value the way Elasticsearch indexes it in a
// keyword field: strings as is, numbers by their JSON text, booleans as
// "true"/"false".
func scalarString(path string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", wrongType(path, "a string, number or boolean", v)
}

// singleKey returns the only member of obj, ignoring the keys in skip.
func singleKey(path string, obj map[string]any, what string, skip ...string) (string, any, error) {
	var key string
	n := 0
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if slices.Contains(skip, k) {
			continue
		}
		if n == 0 {
			key = k
		}
		n++
		if n > 1 {
			return "", nil, qerr(path, "expected a single %s, found [%s] and [%s]", what, key, k)
		}
	}
	if n == 0 {
		return "", nil, qerr(path, "expected a %s", what)
	}
	return key, obj[key], nil
}

func setBoost(q query.Query, b float64) {
	if bq, ok := q.(interface{ SetBoost(float64) }); ok {
		bq.SetBoost(b)
	}
}

// ---- request ----

var (
	unsupportedTopLevel = []string{
		"aggs", "aggregations", "post_filter", "highlight", "suggest", "collapse", "search_after",
		"rescore", "script_fields", "docvalue_fields", "stored_fields", "fields", "min_score",
		"indices_boost", "knn", "pit", "runtime_mappings", "slice", "stats", "terminate_after",
		"ext", "retriever", "rank", "sub_searches",
	}
	falseOnlyTopLevel = []string{"explain", "profile", "version", "seq_no_primary_term"}
)

func (t *translator) request(v any) (*Request, error) {
	body, ok := v.(map[string]any)
	if !ok {
		return nil, qerr("", "the request body must be a JSON object, got %s", typeName(v))
	}
	r := &Request{Size: search.DefaultSize, TrackTotalHits: search.DefaultTrackTotalHits}
	trackScores := false
	for _, k := range slices.Sorted(maps.Keys(body)) {
		val := body[k]
		switch {
		case k == "query", k == "sort", k == "_source":
			// Handled below, in a fixed order.
		case k == "from" || k == "size":
			n, err := asInt(k, val)
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, qerr(k, "[%s] must be zero or positive, got %d", k, n)
			}
			if n > math.MaxInt32 {
				n = math.MaxInt32
			}
			if k == "from" {
				r.From = int(n)
			} else {
				r.Size = int(n)
			}
		case k == "track_total_hits":
			if b, ok := val.(bool); ok {
				if b {
					r.TrackTotalHits = -1
				} else {
					r.TrackTotalHits = 0
				}
				break
			}
			n, err := asInt(k, val)
			if err != nil {
				return nil, qerr(k, "expected a boolean or an integer, got %s", typeName(val))
			}
			switch {
			case n == -1:
				r.TrackTotalHits = 0
			case n < 0:
				return nil, qerr(k, "[track_total_hits] must be positive or equal to -1, got %d", n)
			default:
				r.TrackTotalHits = n
			}
		case k == "track_scores":
			b, err := asBool(k, val)
			if err != nil {
				return nil, err
			}
			trackScores = b
		case k == "timeout":
			if _, err := asString(k, val); err != nil {
				return nil, err
			}
		case slices.Contains(falseOnlyTopLevel, k):
			b, err := asBool(k, val)
			if err != nil {
				return nil, err
			}
			if b {
				return nil, unsupported(k, "only false is supported")
			}
		case slices.Contains(unsupportedTopLevel, k):
			return nil, unsupported(k, "")
		default:
			return nil, qerr(k, "unknown key [%s] in the request body", k)
		}
	}
	if r.From+r.Size > search.MaxResultWindow {
		return nil, qerr("size", "result window is too large, from + size must be less than or equal to [%d] but was [%d]",
			search.MaxResultWindow, r.From+r.Size)
	}

	q := clause{q: query.NewMatchAllQuery()}
	if qv, ok := body["query"]; ok {
		var err error
		if q, err = t.query("query", qv, 0); err != nil {
			return nil, err
		}
	}
	order := bsearch.SortOrder{&bsearch.SortScore{Desc: true}, &bsearch.SortDocID{}}
	scoreSort := true
	if sv, ok := body["sort"]; ok {
		var err error
		if order, scoreSort, err = t.sort("sort", sv); err != nil {
			return nil, err
		}
	}
	if sv, ok := body["_source"]; ok {
		var err error
		if r.source, err = parseSource("_source", sv); err != nil {
			return nil, err
		}
	}

	bq := q.q
	if q.none {
		bq = query.NewMatchNoneQuery()
	}
	req := bleve.NewSearchRequestOptions(bq, r.Size, r.From, false)
	req.SortByCustom(order)
	r.Scored = scoreSort || trackScores
	if !r.Scored {
		req.Score = "none"
	}
	r.Search = req
	return r, nil
}

// parseSource parses the _source option: a boolean, a pattern, an array of
// patterns, or an object with includes/excludes (or include/exclude).
func parseSource(path string, v any) (sourceFilter, error) {
	var f sourceFilter
	patterns := func(p string, v any) ([]string, error) {
		switch x := v.(type) {
		case string:
			return []string{x}, nil
		case []any:
			out := make([]string, 0, len(x))
			for i, e := range x {
				s, err := asString(at(p, i), e)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
			return out, nil
		}
		return nil, wrongType(p, "a string or an array of strings", v)
	}
	switch x := v.(type) {
	case bool:
		f.disabled = !x
		return f, nil
	case string, []any:
		inc, err := patterns(path, x)
		f.includes = inc
		return f, err
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := join(path, k)
			switch k {
			case "includes", "include":
				inc, err := patterns(p, x[k])
				if err != nil {
					return f, err
				}
				f.includes = append(f.includes, inc...)
			case "excludes", "exclude":
				exc, err := patterns(p, x[k])
				if err != nil {
					return f, err
				}
				f.excludes = append(f.excludes, exc...)
			default:
				return f, qerr(p, "unknown key [%s] in _source", k)
			}
		}
		return f, nil
	}
	return f, wrongType(path, "a boolean, a string, an array or an object", v)
}

// ---- sort ----

// sort parses the sort option. scored reports whether _score is among the
// sort keys.
func (t *translator) sort(path string, v any) (bsearch.SortOrder, bool, error) {
	var items []any
	var paths []string
	switch x := v.(type) {
	case []any:
		items = x
		for i := range x {
			paths = append(paths, at(path, i))
		}
	case string, map[string]any:
		items = []any{x}
		paths = []string{path}
	default:
		return nil, false, wrongType(path, "a string, an object or an array", v)
	}
	var order bsearch.SortOrder
	scored, hasID := false, false
	if len(items) == 0 {
		scored = true
		order = append(order, &bsearch.SortScore{Desc: true})
	}
	for i, it := range items {
		p := paths[i]
		var field string
		var params any
		switch x := it.(type) {
		case string:
			field = x
		case map[string]any:
			k, val, err := singleKey(p, x, "sort field")
			if err != nil {
				return nil, false, err
			}
			field, params, p = k, val, join(p, k)
		default:
			return nil, false, wrongType(p, "a string or an object", it)
		}
		desc := field == "_score"
		var missingFirst bool
		mode := ""
		unmappedType := ""
		switch x := params.(type) {
		case nil:
		case string:
			d, err := sortOrder(p, x)
			if err != nil {
				return nil, false, err
			}
			desc = d
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				kp := join(p, k)
				switch k {
				case "order":
					s, err := asString(kp, x[k])
					if err != nil {
						return nil, false, err
					}
					if desc, err = sortOrder(kp, s); err != nil {
						return nil, false, err
					}
				case "missing":
					s, err := asString(kp, x[k])
					if err != nil {
						return nil, false, unsupported(kp, `only "_first" and "_last" are supported`)
					}
					switch s {
					case "_first":
						missingFirst = true
					case "_last":
					default:
						return nil, false, unsupported(kp, `only "_first" and "_last" are supported`)
					}
				case "mode":
					s, err := asString(kp, x[k])
					if err != nil {
						return nil, false, err
					}
					switch s {
					case "min", "max":
						mode = s
					case "avg", "sum", "median":
						return nil, false, unsupported(kp, `only "min" and "max" are supported`)
					default:
						return nil, false, qerr(kp, "unknown sort mode [%s]", s)
					}
				case "unmapped_type":
					s, err := asString(kp, x[k])
					if err != nil {
						return nil, false, err
					}
					unmappedType = s
				default:
					return nil, false, unsupported(kp, "")
				}
			}
		default:
			return nil, false, wrongType(p, "a string or an object", params)
		}
		switch field {
		case "_score":
			scored = true
			order = append(order, &bsearch.SortScore{Desc: desc})
			continue
		case "_doc":
			hasID = true
			order = append(order, &bsearch.SortDocID{Desc: desc})
			continue
		case "_id":
			return nil, false, unsupported(p, "sorting on _id is disabled in Elasticsearch; sort on a keyword field")
		}
		ft, ok := t.schema.Lookup(field)
		if !ok {
			if unmappedType != "" {
				continue // every document is missing the field: no effect on the order
			}
			return nil, false, qerr(p, "no mapping found for [%s] in order to sort on", field)
		}
		sf := &bsearch.SortField{Field: field, Desc: desc}
		switch {
		case ft == search.Text:
			hint := ""
			if kt, ok := t.schema.Lookup(field + ".keyword"); ok && kt == search.Keyword {
				hint = fmt.Sprintf("; sort on [%s.keyword] instead", field)
			}
			return nil, false, qerr(p, "text fields such as [%s] are not sortable%s", field, hint)
		case ft.Numeric():
			sf.Type = bsearch.SortFieldAsNumber
		case ft == search.Date:
			sf.Type = bsearch.SortFieldAsDate
		default:
			sf.Type = bsearch.SortFieldAsString
		}
		if mode == "" {
			mode = "min"
			if desc {
				mode = "max"
			}
		}
		if mode == "min" {
			sf.Mode = bsearch.SortFieldMin
		} else {
			sf.Mode = bsearch.SortFieldMax
		}
		if missingFirst {
			sf.Missing = bsearch.SortFieldMissingFirst
		}
		order = append(order, sf)
	}
	if !hasID {
		// A deterministic tie-break, so that pages do not overlap.
		order = append(order, &bsearch.SortDocID{})
	}
	return order, scored, nil
}

func sortOrder(path, s string) (desc bool, err error) {
	switch strings.ToLower(s) {
	case "asc":
		return false, nil
	case "desc":
		return true, nil
	}
	return false, qerr(path, "unknown sort order [%s], expected asc or desc", s)
}
