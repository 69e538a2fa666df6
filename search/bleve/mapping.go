package blevesearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/weftlang/weft/search"
)

// Internal fields of every document.
const (
	// sourceField stores the document's JSON source (stored, not indexed).
	sourceField = "_source"
	// fieldNamesField indexes the paths that have a value, for exists.
	fieldNamesField = "_field_names"
)

// textAnalyzer approximates Elasticsearch's standard analyzer: Unicode
// (UAX #29) word segmentation and lower-casing, no stop words.
func textAnalyzer() analysis.Analyzer {
	return &analysis.DefaultAnalyzer{
		Tokenizer:    unicode.NewUnicodeTokenizer(),
		TokenFilters: []analysis.TokenFilter{lowercase.NewLowerCaseFilter()},
	}
}

// keywordAnalyzer indexes a value as one exact term.
func keywordAnalyzer() analysis.Analyzer {
	return &analysis.DefaultAnalyzer{Tokenizer: single.NewSingleTokenTokenizer()}
}

// indexMapping is the Bleve mapping stored with every index. Documents are
// built field by field (see docBuilder), so the mapping only sets the
// scoring model; nothing is mapped dynamically.
func indexMapping() *mapping.IndexMappingImpl {
	im := mapping.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultMapping.Dynamic = false
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	return im
}

// docBuilder turns JSON sources into Bleve documents according to a schema.
type docBuilder struct {
	schema  search.Schema
	text    analysis.Analyzer
	keyword analysis.Analyzer
}

func newDocBuilder(schema search.Schema) *docBuilder {
	return &docBuilder{schema: schema, text: textAnalyzer(), keyword: keywordAnalyzer()}
}

// docError is a rejected document, with Elasticsearch's error type.
type docError struct {
	typ    string
	reason string
}

func (e *docError) Error() string { return e.typ + ": " + e.reason }

func parseErr(format string, args ...any) *docError {
	return &docError{typ: "document_parsing_exception", reason: fmt.Sprintf(format, args...)}
}

// build returns the Bleve document for one source.
func (b *docBuilder) build(id string, src []byte) (*document.Document, *docError) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, parseErr("failed to parse the source: %v", err)
	}
	if dec.More() {
		return nil, parseErr("unexpected data after the source object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, parseErr("the source must be a JSON object, got %s", typeName(v))
	}
	doc := document.NewDocument(id)
	seen := map[string]bool{}
	if err := b.walkObject(doc, "", obj, seen); err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(maps.Keys(seen)) {
		doc.AddField(document.NewTextFieldCustom(fieldNamesField, nil, []byte(p), index.IndexField, b.keyword))
	}
	doc.AddField(document.NewTextFieldCustom(sourceField, nil, bytes.Clone(src), index.StoreField, nil))
	doc.SetIndexed()
	return doc, nil
}

func (b *docBuilder) walkObject(doc *document.Document, prefix string, obj map[string]any, seen map[string]bool) *docError {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if strings.TrimSpace(k) == "" {
			return parseErr("field name cannot be an empty string")
		}
		if err := b.walkValue(doc, join(prefix, k), obj[k], seen); err != nil {
			return err
		}
	}
	return nil
}

func (b *docBuilder) walkValue(doc *document.Document, p string, v any, seen map[string]bool) *docError {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		if f, ok := b.schema.Fields[p]; ok {
			return parseErr("failed to parse field [%s] of type [%s]: found an object", p, f.Type)
		}
		return b.walkObject(doc, p, x, seen)
	case []any:
		for _, e := range x {
			if err := b.walkValue(doc, p, e, seen); err != nil {
				return err
			}
		}
		return nil
	}
	f, ok := b.schema.Fields[p]
	if !ok {
		if len(b.schema.Under(p)) > 0 {
			return parseErr("object mapping for [%s] tried to parse field [%s] as object, but found a concrete value", p, p)
		}
		return nil // unmapped: kept in _source only
	}
	if err := b.addValue(doc, p, f.Type, v); err != nil {
		return err
	}
	seen[p] = true
	for _, name := range slices.Sorted(maps.Keys(f.Fields)) {
		sp := p + "." + name
		if err := b.addValue(doc, sp, f.Fields[name].Type, v); err != nil {
			return err
		}
		seen[sp] = true
	}
	return nil
}

func (b *docBuilder) addValue(doc *document.Document, name string, ft search.FieldType, v any) *docError {
	typeErr := func(detail string) *docError {
		return &docError{typ: "document_parsing_exception",
			reason: fmt.Sprintf("failed to parse field [%s] of type [%s]: %s", name, ft, detail)}
	}
	switch {
	case ft == search.Keyword || ft == search.Text:
		s, err := scalarString("", v)
		if err != nil {
			return typeErr("expected a string, number or boolean")
		}
		if ft == search.Keyword {
			doc.AddField(document.NewTextFieldCustom(name, nil, []byte(s), index.IndexField|index.DocValues, b.keyword))
		} else {
			doc.AddField(document.NewTextFieldCustom(name, nil, []byte(s), index.IndexField|index.IncludeTermVectors, b.text))
		}
	case ft.Numeric():
		f, err := asNumber("", v)
		if err != nil {
			return typeErr(fmt.Sprintf("%v is not a number", jsonText(v)))
		}
		f = storedNumber(ft, f)
		switch ft {
		case search.Integer:
			if f < math.MinInt32 || f > math.MaxInt32 {
				return typeErr(fmt.Sprintf("value %v is out of range for an integer", jsonText(v)))
			}
		case search.Long:
			if f < math.MinInt64 || f >= math.MaxInt64 {
				return typeErr(fmt.Sprintf("value %v is out of range for a long", jsonText(v)))
			}
		case search.Float:
			if math.IsInf(f, 0) {
				return typeErr(fmt.Sprintf("value %v is out of range for a float", jsonText(v)))
			}
		}
		doc.AddField(document.NewNumericFieldWithIndexingOptions(name, nil, f, index.IndexField|index.DocValues))
	case ft == search.Date:
		var t time.Time
		var ok bool
		switch x := v.(type) {
		case string:
			t, ok = parseDocDate(x)
		case json.Number:
			t, ok = parseDocDate(string(x))
		}
		if !ok {
			return typeErr(fmt.Sprintf("failed to parse date %s with format [strict_date_optional_time||epoch_millis]", jsonText(v)))
		}
		if t.Before(minIndexTime) || t.After(maxIndexTime) {
			return typeErr(fmt.Sprintf("date %s is outside the range the embedded index supports (%d to %d)",
				jsonText(v), minIndexTime.Year(), maxIndexTime.Year()))
		}
		f, err := document.NewDateTimeFieldWithIndexingOptions(name, nil, t, time.RFC3339Nano, index.IndexField|index.DocValues)
		if err != nil {
			return typeErr(err.Error())
		}
		doc.AddField(f)
	case ft == search.Boolean:
		var bv bool
		switch x := v.(type) {
		case bool:
			bv = x
		case string:
			switch x {
			case "true":
				bv = true
			case "false", "":
			default:
				return typeErr(fmt.Sprintf("can't parse boolean value [%s], expected [true] or [false]", x))
			}
		default:
			return typeErr(fmt.Sprintf("can't parse boolean value %s", jsonText(v)))
		}
		doc.AddField(document.NewBooleanFieldWithIndexingOptions(name, nil, bv, index.IndexField|index.DocValues))
	default:
		return typeErr("unknown field type")
	}
	return nil
}

func jsonText(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case string:
		return strconv.Quote(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// guard wraps a required query (the must or should side of a Bleve
// BooleanQuery) so that, when it cannot match anything, the boolean query
// still treats it as present. Bleve drops a side whose searcher is a
// MatchNoneSearcher (as a term range over no terms is), which would turn
// "must: X, should: Y" into "should: Y" alone.
func guard(q query.Query) query.Query { return guardQuery{q} }

type guardQuery struct{ query.Query }

// Searcher implements query.Query.
func (g guardQuery) Searcher(ctx context.Context, i index.IndexReader, m mapping.IndexMapping, options bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, err := g.Query.Searcher(ctx, i, m, options)
	if err != nil {
		return nil, err
	}
	if mn, ok := s.(*searcher.MatchNoneSearcher); ok {
		return emptySearcher{mn}, nil
	}
	return s, nil
}

// emptySearcher matches nothing, like the MatchNoneSearcher it embeds, but
// has another type.
type emptySearcher struct{ *searcher.MatchNoneSearcher }
