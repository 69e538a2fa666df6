package shipments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/search"
)

// Paging defaults.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// SortDefault is the SearchIntent.SortBy that keeps the default order:
// latest departure first.
const SortDefault = "default"

// SortFields are the fields a SearchIntent may sort on.
func SortFields() []string {
	return []string{"departure_date", "arrival_date", "weight_kg", "transit_days", "teu"}
}

// Statuses are the shipment statuses a SearchIntent may filter on.
func Statuses() []string {
	return []string{dataset.StatusBooked, dataset.StatusInTransit, dataset.StatusDelayed, dataset.StatusArrived}
}

// tieBreak is the last sort key of every built query: shipment IDs are
// unique, so the order is total and pages never overlap or skip.
const tieBreak = "shipment_id"

// HasCriteria reports whether the intent restricts the search at all;
// sort and page size alone do not.
func (in SearchIntent) HasCriteria() bool {
	return len(in.Criteria()) > 0
}

// Criteria names the intent's criteria, in the order BuildQuery applies
// them.
func (in SearchIntent) Criteria() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("shipper", strings.TrimSpace(in.Shipper) != "")
	add("consignee", strings.TrimSpace(in.Consignee) != "")
	add("carrier", strings.TrimSpace(in.Carrier) != "")
	add("origin_port", strings.TrimSpace(in.OriginPort) != "")
	add("destination_port", strings.TrimSpace(in.DestinationPort) != "")
	add("origin_country", strings.TrimSpace(in.OriginCountry) != "")
	add("destination_country", strings.TrimSpace(in.DestinationCountry) != "")
	add("goods", strings.TrimSpace(in.Goods) != "")
	add("status", len(in.Status) > 0)
	add("departure_date", in.DepartureFrom != "" || in.DepartureTo != "")
	add("arrival_date", in.ArrivalFrom != "" || in.ArrivalTo != "")
	add("weight_kg", in.MinWeightKg > 0 || in.MaxWeightKg > 0)
	return out
}

// BuildQuery turns a search intent into the body of an Elasticsearch
// _search request over the shipments mapping (dataset.Schema), without
// from and size: the executor adds the page. It is deterministic: the same
// intent always gives the same body. The mapping (README.md, "The query
// builder"):
//
//   - shipper, consignee: a match with operator "and" on shipper_name /
//     consignee_name, under bool.must (every word of the name must occur);
//   - carrier: a should of a term on carrier_scac (the value upper-cased)
//     and a match with operator "and" on carrier, at least one, under
//     bool.filter;
//   - origin/destination port: a should of a term on *_port_code (the
//     UN/LOCODE, upper-cased) and a match "and" on *_port, under
//     bool.filter; the same for countries with *_country_code and
//     *_country;
//   - goods: a should of a match "and" on goods_description, a term on
//     goods_category (lower-cased, spaces as underscores) and a term on
//     hs_code, under bool.must;
//   - status: a terms on status (unknown statuses are dropped, with a
//     warning);
//   - dates: a range on departure_date / arrival_date with gte and lte
//     (inclusive days; a date that is not YYYY-MM-DD is dropped, with a
//     warning; reversed bounds are swapped);
//   - weight: a range on weight_kg with gte / lte;
//   - sort: the field asked for (SortFields) in the order asked for
//     (default desc), else departure_date desc; then shipment_id asc;
//   - track_total_hits: true, so totals are exact beyond 10,000.
//
// An intent with no criterion gives a match_all query. The warnings say
// what was dropped.
func BuildQuery(in SearchIntent) (body map[string]any, warnings []string) {
	var must, filter []any
	text := func(field, value string) map[string]any {
		return map[string]any{"match": map[string]any{field: map[string]any{"query": value, "operator": "and"}}}
	}
	term := func(field string, value any) map[string]any {
		return map[string]any{"term": map[string]any{field: value}}
	}
	either := func(clauses ...any) map[string]any {
		return map[string]any{"bool": map[string]any{"should": clauses, "minimum_should_match": 1}}
	}
	if v := strings.TrimSpace(in.Shipper); v != "" {
		must = append(must, text("shipper_name", v))
	}
	if v := strings.TrimSpace(in.Consignee); v != "" {
		must = append(must, text("consignee_name", v))
	}
	if v := strings.TrimSpace(in.Carrier); v != "" {
		filter = append(filter, either(term("carrier_scac", strings.ToUpper(v)), text("carrier", v)))
	}
	place := func(field, codeField, v string) {
		if v = strings.TrimSpace(v); v != "" {
			filter = append(filter, either(term(codeField, strings.ToUpper(v)), text(field, v)))
		}
	}
	place("origin_port", "origin_port_code", in.OriginPort)
	place("destination_port", "destination_port_code", in.DestinationPort)
	place("origin_country", "origin_country_code", in.OriginCountry)
	place("destination_country", "destination_country_code", in.DestinationCountry)
	if v := strings.TrimSpace(in.Goods); v != "" {
		category := strings.ReplaceAll(strings.ToLower(v), " ", "_")
		must = append(must, either(text("goods_description", v), term("goods_category", category), term("hs_code", v)))
	}
	if len(in.Status) > 0 {
		var ok []any
		for _, s := range in.Status {
			s = strings.ToLower(strings.TrimSpace(s))
			switch {
			case slices.Contains(Statuses(), s):
				if !slices.Contains(ok, any(s)) {
					ok = append(ok, s)
				}
			default:
				warnings = append(warnings, fmt.Sprintf("status %q is not one of %s: ignored", s, strings.Join(Statuses(), ", ")))
			}
		}
		if len(ok) > 0 {
			filter = append(filter, map[string]any{"terms": map[string]any{"status": ok}})
		}
	}
	dates := func(field, from, to string) {
		from, fromOK := day(field, "from", from, &warnings)
		to, toOK := day(field, "to", to, &warnings)
		if fromOK && toOK && from > to {
			warnings = append(warnings, fmt.Sprintf("%s: from %s is after to %s: swapped", field, from, to))
			from, to = to, from
		}
		r := map[string]any{}
		if fromOK {
			r["gte"] = from
		}
		if toOK {
			r["lte"] = to
		}
		if len(r) > 0 {
			filter = append(filter, map[string]any{"range": map[string]any{field: r}})
		}
	}
	dates("departure_date", in.DepartureFrom, in.DepartureTo)
	dates("arrival_date", in.ArrivalFrom, in.ArrivalTo)
	lo, hi := in.MinWeightKg, in.MaxWeightKg
	if lo > 0 && hi > 0 && lo > hi {
		warnings = append(warnings, fmt.Sprintf("weight_kg: min %d is above max %d: swapped", lo, hi))
		lo, hi = hi, lo
	}
	if lo > 0 || hi > 0 {
		r := map[string]any{}
		if lo > 0 {
			r["gte"] = lo
		}
		if hi > 0 {
			r["lte"] = hi
		}
		filter = append(filter, map[string]any{"range": map[string]any{"weight_kg": r}})
	}

	query := map[string]any{"match_all": map[string]any{}}
	if len(must) > 0 || len(filter) > 0 {
		b := map[string]any{}
		if len(must) > 0 {
			b["must"] = must
		}
		if len(filter) > 0 {
			b["filter"] = filter
		}
		query = map[string]any{"bool": b}
	}
	sortField, order := "departure_date", "desc"
	if in.SortBy != "" && in.SortBy != SortDefault {
		if slices.Contains(SortFields(), in.SortBy) {
			sortField = in.SortBy
			if in.SortOrder == "asc" {
				order = "asc"
			}
		} else {
			warnings = append(warnings, fmt.Sprintf("cannot sort by %q: sorted by departure_date", in.SortBy))
		}
	}
	return map[string]any{
		"query":            query,
		"sort":             []any{map[string]any{sortField: map[string]any{"order": order}}, map[string]any{tieBreak: map[string]any{"order": "asc"}}},
		"track_total_hits": true,
	}, warnings
}

// day checks a YYYY-MM-DD date of a range bound.
func day(field, bound, v string, warnings *[]string) (string, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", false
	}
	if _, err := time.Parse(time.DateOnly, v); err != nil {
		*warnings = append(*warnings, fmt.Sprintf("%s %s %q is not a YYYY-MM-DD date: ignored", field, bound, v))
		return "", false
	}
	return v, true
}

// PageSizeOf returns the page size to use: n when it is in 1..MaxPageSize,
// MaxPageSize when above, def otherwise.
func PageSizeOf(n, def int) int {
	switch {
	case n <= 0:
		return def
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}

// QueryTextError reports a pasted query that cannot be run: not JSON
// (Syntax is set, with the byte offset in the text as given), or JSON
// that is not a search request body.
type QueryTextError struct {
	// Syntax is the JSON syntax error, its Offset, Line and Column counted
	// in the text as given (fences and a request line included).
	Syntax *search.SyntaxError
	// Msg describes a problem other than syntax.
	Msg string
}

// Error describes the problem.
func (e *QueryTextError) Error() string {
	if e.Syntax != nil {
		return fmt.Sprintf("not valid JSON: %s at byte offset %d (line %d, column %d)", e.Syntax.Msg, e.Syntax.Offset, e.Syntax.Line, e.Syntax.Column)
	}
	return e.Msg
}

// Unwrap returns the syntax error, if any.
func (e *QueryTextError) Unwrap() error {
	if e.Syntax == nil {
		return nil
	}
	return e.Syntax
}

// topLevelKeys are the members of a _search request body.
func topLevelKeys() []string {
	return []string{
		"query", "from", "size", "sort", "_source", "track_total_hits", "track_scores", "timeout",
		"aggs", "aggregations", "post_filter", "highlight", "suggest", "collapse", "search_after",
		"min_score", "explain", "version", "fields", "stored_fields", "docvalue_fields", "script_fields",
		"runtime_mappings", "knn", "rescore", "pit", "indices_boost", "terminate_after", "profile",
	}
}

// ParseUserQuery parses a query the user pasted into a request body. It
// accepts the JSON body of a _search request, optionally inside a
// markdown code fence and after a request line ("GET shipments/_search");
// a bare query clause ({"match_all": {}}) is wrapped as {"query": ...}.
// Numbers are kept as int or float64. A text that is not valid JSON, or
// not a JSON object, is a *QueryTextError giving the byte offset in text.
// The query's from and size are returned apart from the body (from 0 and
// size 0 when absent).
func ParseUserQuery(text string) (body map[string]any, from, size int, err error) {
	raw, start := stripQueryText(text)
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			return nil, 0, 0, &QueryTextError{Msg: "the query is empty"}
		}
		se := search.NewSyntaxError(raw, err)
		return nil, 0, 0, &QueryTextError{Syntax: relocate(text, se, start)}
	}
	if end := dec.InputOffset(); len(bytes.TrimSpace(raw[end:])) > 0 {
		off := end + int64(len(raw[end:])-len(bytes.TrimLeft(raw[end:], " \t\r\n")))
		return nil, 0, 0, &QueryTextError{Syntax: relocate(text, search.TrailingDataError(raw, off), start)}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, 0, 0, &QueryTextError{Msg: fmt.Sprintf("the query must be a JSON object, not %s", jsonKind(v))}
	}
	m = normalizeMap(m)
	isBody := len(m) == 0
	keys := topLevelKeys()
	for k := range m {
		if slices.Contains(keys, k) {
			isBody = true
		}
	}
	if !isBody {
		if len(m) != 1 {
			return nil, 0, 0, &QueryTextError{Msg: fmt.Sprintf("the query has no \"query\" member and is not a single query clause (members: %s)", strings.Join(sortedKeys(m), ", "))}
		}
		m = map[string]any{"query": m}
	}
	if f, ok := m["from"]; ok {
		n, ok := asInt(f)
		if !ok || n < 0 {
			return nil, 0, 0, &QueryTextError{Msg: fmt.Sprintf("\"from\" must be a non-negative integer, not %v", f)}
		}
		from = n
		delete(m, "from")
	}
	if s, ok := m["size"]; ok {
		n, ok := asInt(s)
		if !ok || n < 0 {
			return nil, 0, 0, &QueryTextError{Msg: fmt.Sprintf("\"size\" must be a non-negative integer, not %v", s)}
		}
		size = n
		delete(m, "size")
	}
	return m, from, size, nil
}

// stripQueryText removes a markdown fence and a request line around the
// JSON, returning it and its byte offset in text.
func stripQueryText(text string) ([]byte, int) {
	start, end := 0, len(text)
	if i := strings.Index(text, "```"); i >= 0 {
		body := i + 3
		if nl := strings.IndexByte(text[body:], '\n'); nl >= 0 {
			body += nl + 1 // after "```json\n"
		}
		if j := strings.Index(text[body:], "```"); j >= 0 {
			start, end = body, body+j
		} else {
			start = body
		}
	}
	// A request line such as "GET shipments/_search" before the body.
	rest := text[start:end]
	trimmed := strings.TrimLeft(rest, " \t\r\n")
	for _, verb := range []string{"GET ", "POST "} {
		if strings.HasPrefix(strings.ToUpper(trimmed), verb) {
			if nl := strings.IndexByte(trimmed, '\n'); nl >= 0 {
				start += len(rest) - len(trimmed) + nl + 1
			} else if b := strings.IndexByte(trimmed, '{'); b >= 0 {
				start += len(rest) - len(trimmed) + b
			}
			break
		}
	}
	return []byte(text[start:end]), start
}

// relocate makes a syntax error found in text[start:] count in text.
func relocate(text string, se *search.SyntaxError, start int) *search.SyntaxError {
	off := se.Offset + int64(start)
	line, col := 1, 1
	for _, c := range []byte(text[:min(int(off), len(text))]) {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &search.SyntaxError{Offset: off, Line: line, Column: col, Msg: se.Msg, Err: se.Err}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "a value"
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// WithPage returns a copy of the query body with from and size set.
func WithPage(query map[string]any, from, size int) map[string]any {
	out, _ := cloneJSON(query).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	out["from"] = from
	out["size"] = size
	return out
}

// SearchErrorText describes a search error for the user: what the backend
// rejected and where in the query.
func SearchErrorText(err error) string {
	var (
		se *search.SyntaxError
		qe *search.QueryError
		ue *search.UnsupportedError
		ne *search.IndexNotFoundError
	)
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("the query is not valid JSON: %s at byte offset %d", se.Msg, se.Offset)
	case errors.As(err, &ue):
		s := fmt.Sprintf("%s is not supported by the search backend", ue.Path)
		if ue.Detail != "" {
			s += " (" + ue.Detail + ")"
		}
		return s
	case errors.As(err, &qe):
		if qe.Path == "" {
			return "the search backend rejected the query: " + qe.Msg
		}
		return fmt.Sprintf("the search backend rejected the query at %s: %s", qe.Path, qe.Msg)
	case errors.As(err, &ne):
		return fmt.Sprintf("the index %q does not exist", ne.Index)
	}
	return "the search failed: " + err.Error()
}
