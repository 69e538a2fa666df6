package shipments_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/examples/shipments"
	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
)

// The builder's exact output for an intent that uses every criterion.
func TestBuildQueryMapping(t *testing.T) {
	body, warnings := shipments.BuildQuery(shipments.SearchIntent{
		Shipper: "Brightwave", Consignee: "Pacific Gadget", Carrier: "Maersk",
		OriginPort: "Shenzhen", DestinationPort: "USLAX", OriginCountry: "CN", DestinationCountry: "United States",
		Goods: "smartphones", Status: []string{"in_transit", "delayed", "in_transit"},
		DepartureFrom: "2025-03-01", DepartureTo: "2025-03-31", ArrivalTo: "2025-06-30",
		MinWeightKg: 5000, MaxWeightKg: 40000, SortBy: "weight_kg", SortOrder: "asc", PageSize: 10,
	})
	if len(warnings) != 0 {
		t.Errorf("warnings %v", warnings)
	}
	const want = `{
  "query": {"bool": {
    "must": [
      {"match": {"shipper_name": {"operator": "and", "query": "Brightwave"}}},
      {"match": {"consignee_name": {"operator": "and", "query": "Pacific Gadget"}}},
      {"bool": {"minimum_should_match": 1, "should": [
        {"match": {"goods_description": {"operator": "and", "query": "smartphones"}}},
        {"term": {"goods_category": "smartphones"}},
        {"term": {"hs_code": "smartphones"}}]}}],
    "filter": [
      {"bool": {"minimum_should_match": 1, "should": [{"term": {"carrier_scac": "MAERSK"}}, {"match": {"carrier": {"operator": "and", "query": "Maersk"}}}]}},
      {"bool": {"minimum_should_match": 1, "should": [{"term": {"origin_port_code": "SHENZHEN"}}, {"match": {"origin_port": {"operator": "and", "query": "Shenzhen"}}}]}},
      {"bool": {"minimum_should_match": 1, "should": [{"term": {"destination_port_code": "USLAX"}}, {"match": {"destination_port": {"operator": "and", "query": "USLAX"}}}]}},
      {"bool": {"minimum_should_match": 1, "should": [{"term": {"origin_country_code": "CN"}}, {"match": {"origin_country": {"operator": "and", "query": "CN"}}}]}},
      {"bool": {"minimum_should_match": 1, "should": [{"term": {"destination_country_code": "UNITED STATES"}}, {"match": {"destination_country": {"operator": "and", "query": "United States"}}}]}},
      {"terms": {"status": ["in_transit", "delayed"]}},
      {"range": {"departure_date": {"gte": "2025-03-01", "lte": "2025-03-31"}}},
      {"range": {"arrival_date": {"lte": "2025-06-30"}}},
      {"range": {"weight_kg": {"gte": 5000, "lte": 40000}}}]}},
  "sort": [{"weight_kg": {"order": "asc"}}, {"shipment_id": {"order": "asc"}}],
  "track_total_hits": true}`
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "body", body, w)

	// No criterion: match_all, the default sort.
	body, _ = shipments.BuildQuery(shipments.SearchIntent{SortBy: "default", PageSize: 5})
	jsonEq(t, "empty intent", body, map[string]any{
		"query":            map[string]any{"match_all": map[string]any{}},
		"sort":             []any{map[string]any{"departure_date": map[string]any{"order": "desc"}}, map[string]any{"shipment_id": map[string]any{"order": "asc"}}},
		"track_total_hits": true,
	})
}

func TestBuildQueryWarnings(t *testing.T) {
	body, warnings := shipments.BuildQuery(shipments.SearchIntent{
		Status: []string{"lost", "Delayed"}, DepartureFrom: "March 2025", ArrivalFrom: "2025-05-31", ArrivalTo: "2025-05-01",
		MinWeightKg: 9000, MaxWeightKg: 1000, SortBy: "price",
	})
	want := []string{
		`status "lost" is not one of booked, in_transit, delayed, arrived: ignored`,
		`departure_date from "March 2025" is not a YYYY-MM-DD date: ignored`,
		"arrival_date: from 2025-05-31 is after to 2025-05-01: swapped",
		"weight_kg: min 9000 is above max 1000: swapped",
		`cannot sort by "price": sorted by departure_date`,
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	jsonEq(t, "filters", body["query"], map[string]any{"bool": map[string]any{"filter": []any{
		map[string]any{"terms": map[string]any{"status": []any{"delayed"}}},
		map[string]any{"range": map[string]any{"arrival_date": map[string]any{"gte": "2025-05-01", "lte": "2025-05-31"}}},
		map[string]any{"range": map[string]any{"weight_kg": map[string]any{"gte": 1000, "lte": 9000}}},
	}}})
	if (shipments.SearchIntent{SortBy: "weight_kg", PageSize: 50}).HasCriteria() {
		t.Error("sort and page size count as criteria")
	}
}

// Built queries find exactly the shipments the intent describes, counted
// independently from the generated data, on the embedded backend.
func TestBuildQueryOnTheDataset(t *testing.T) {
	l := index(t)
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	}
	hasWords := func(text string, ws ...string) bool {
		have := words(text)
		for _, w := range ws {
			if !slices.Contains(have, w) {
				return false
			}
		}
		return true
	}
	cases := []struct {
		name   string
		intent shipments.SearchIntent
		pred   func(dataset.Shipment) bool
	}{
		{"carrier by name, port by name", shipments.SearchIntent{Carrier: "maersk", DestinationPort: "Los Angeles"}, maerskToLA},
		{"carrier by SCAC, port by UN/LOCODE", shipments.SearchIntent{Carrier: "MAEU", DestinationPort: "uslax"}, maerskToLA},
		{"two-word carrier", shipments.SearchIntent{Carrier: "Hapag-Lloyd"}, func(s dataset.Shipment) bool { return s.Carrier == "Hapag-Lloyd" }},
		{"shipper words", shipments.SearchIntent{Shipper: "Brightwave Electronics"}, func(s dataset.Shipment) bool { return strings.Contains(s.ShipperName, "Brightwave Electronics") }},
		{"consignee and origin country", shipments.SearchIntent{Consignee: "Nordsee Kaffee", OriginCountry: "Brazil"}, func(s dataset.Shipment) bool {
			return strings.HasPrefix(s.ConsigneeName, "Nordsee Kaffee") && s.OriginCountry == "Brazil"
		}},
		{"destination country code", shipments.SearchIntent{DestinationCountry: "nl", Status: []string{"in_transit", "delayed"}}, func(s dataset.Shipment) bool {
			return s.DestinationCountryCode == "NL" && (s.Status == "in_transit" || s.Status == "delayed")
		}},
		{"goods words", shipments.SearchIntent{Goods: "frozen shrimp"}, func(s dataset.Shipment) bool { return hasWords(s.GoodsDescription, "frozen", "shrimp") }},
		{"goods category", shipments.SearchIntent{Goods: "consumer electronics"}, func(s dataset.Shipment) bool { return s.GoodsCategory == "consumer_electronics" }},
		{"HS code", shipments.SearchIntent{Goods: "090111"}, func(s dataset.Shipment) bool { return s.HSCode == "090111" }},
		{"departures in March 2025", shipments.SearchIntent{DepartureFrom: "2025-03-01", DepartureTo: "2025-03-31"}, func(s dataset.Shipment) bool {
			return s.DepartureDate >= "2025-03-01" && s.DepartureDate <= "2025-03-31"
		}},
		{"arrived yesterday", shipments.SearchIntent{ArrivalFrom: "2025-06-29", ArrivalTo: "2025-06-29"}, func(s dataset.Shipment) bool { return s.ArrivalDate == "2025-06-29" }},
		{"heavy from Shanghai", shipments.SearchIntent{OriginPort: "CNSHA", MinWeightKg: 100000}, func(s dataset.Shipment) bool {
			return s.OriginPortCode == "CNSHA" && s.WeightKg >= 100000
		}},
		{"light", shipments.SearchIntent{MaxWeightKg: 5000}, func(s dataset.Shipment) bool { return s.WeightKg <= 5000 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := expected(l.ships, tc.pred)
			if len(want) == 0 {
				t.Fatal("no shipment matches: pick another intent")
			}
			body, warnings := shipments.BuildQuery(tc.intent)
			if len(warnings) != 0 {
				t.Errorf("warnings %v", warnings)
			}
			raw, _ := json.Marshal(shipments.WithPage(body, 0, 100))
			res, err := l.b.Search(context.Background(), "shipments", raw)
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != int64(len(want)) {
				t.Errorf("total %d, want %d", res.Total, len(want))
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.ID)
			}
			if !slices.Equal(got, want[:min(100, len(want))]) {
				t.Errorf("hits %v\nwant %v", got, want[:min(100, len(want))])
			}
		})
	}
	// Every built query is in the embedded backend's DSL subset.
	body, _ := shipments.BuildQuery(shipments.SearchIntent{Shipper: "a", Consignee: "b", Carrier: "c", OriginPort: "d", DestinationPort: "e",
		OriginCountry: "f", DestinationCountry: "g", Goods: "h", Status: []string{"booked"}, DepartureFrom: "2025-01-01",
		ArrivalTo: "2025-01-02", MinWeightKg: 1, MaxWeightKg: 2, SortBy: "teu"})
	raw, _ := json.Marshal(shipments.WithPage(body, 0, 20))
	if _, err := blevesearch.Translate(raw, dataset.Schema(), blevesearch.TranslateOptions{StrictFields: true}); err != nil {
		t.Errorf("Translate: %v", err)
	}
}

func TestParseUserQuery(t *testing.T) {
	obj := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ok := []struct {
		name, text, want string
		from, size       int
	}{
		{"body", `{"query": {"match_all": {}}}`, `{"query": {"match_all": {}}}`, 0, 0},
		{"paging apart", `{"query": {"term": {"status": "delayed"}}, "from": 40, "size": 5, "sort": ["departure_date"]}`,
			`{"query": {"term": {"status": "delayed"}}, "sort": ["departure_date"]}`, 40, 5},
		{"fenced", "```json\n{\"size\": 3}\n```", `{}`, 0, 3},
		{"request line", "GET shipments/_search\n{\"query\": {\"ids\": {\"values\": [\"SHP-0000001\"]}}}", `{"query": {"ids": {"values": ["SHP-0000001"]}}}`, 0, 0},
		{"bare clause", `{"range": {"weight_kg": {"gte": 100000.5}}}`, `{"query": {"range": {"weight_kg": {"gte": 100000.5}}}}`, 0, 0},
		{"empty object", `{}`, `{}`, 0, 0},
	}
	for _, tc := range ok {
		body, from, size, err := shipments.ParseUserQuery(tc.text)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		jsonEq(t, tc.name, body, obj(tc.want))
		if from != tc.from || size != tc.size {
			t.Errorf("%s: from %d size %d", tc.name, from, size)
		}
	}
	bad := []struct {
		name, text string
		offset     int64 // -1: not a syntax error
		line, col  int
		msg        string
	}{
		{"truncated", `{"query": {"match_all": {}}`, 27, 1, 28, "unexpected end of JSON input"},
		{"bad token", `{"query": {"match_all": {}},, "size": 1}`, 28, 1, 29, "invalid character ','"},
		{"offset counts the fence", "```\n{\"query\": [}\n```", 15, 2, 12, "invalid character '}'"},
		{"offset counts the request line", "POST shipments/_search\n{\"size\": 1 \"from\": 2}", 34, 2, 12, "invalid character '\"' after object key:value pair"},
		{"trailing data", `{"size": 1} {"size": 2}`, 12, 1, 13, "unexpected data after the top-level JSON value"},
		{"single quotes", `{'query': {}}`, 1, 1, 2, "invalid character '\\''"},
		{"not an object", `["query"]`, -1, 0, 0, "the query must be a JSON object, not an array"},
		{"two clauses", `{"term": {"a": 1}, "match": {"b": 2}}`, -1, 0, 0, `the query has no "query" member and is not a single query clause (members: match, term)`},
		{"negative from", `{"from": -1}`, -1, 0, 0, `"from" must be a non-negative integer, not -1`},
		{"fractional size", `{"size": 2.5}`, -1, 0, 0, `"size" must be a non-negative integer, not 2.5`},
		{"empty", "  ", -1, 0, 0, "the query is empty"},
	}
	for _, tc := range bad {
		_, _, _, err := shipments.ParseUserQuery(tc.text)
		var qe *shipments.QueryTextError
		if !errors.As(err, &qe) {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if tc.offset < 0 {
			if qe.Syntax != nil || err.Error() != tc.msg {
				t.Errorf("%s: %q, want %q", tc.name, err, tc.msg)
			}
			continue
		}
		var se *search.SyntaxError
		if !errors.As(err, &se) || se.Offset != tc.offset || se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%s: %v (offset %d, line %d, column %d)", tc.name, err, qe.Syntax.Offset, qe.Syntax.Line, qe.Syntax.Column)
		}
		if int(tc.offset) < len(tc.text) && strings.Contains(tc.name, "counts") {
			if c := tc.text[tc.offset]; c != '}' && c != '"' {
				t.Errorf("%s: byte %d is %q", tc.name, tc.offset, c)
			}
		}
	}
}

// The planner's decisions, round by round.
func TestPlan(t *testing.T) {
	const maxRounds = shipments.DefaultMaxRounds
	ctx := func(slots shipments.Slots) map[int]shipments.Slots { return map[int]shipments.Slots{0: slots} }
	round1 := []struct {
		name string
		s    shipments.State
		want shipments.Task
	}{
		{"empty question", shipments.State{Question: " "}, shipments.Task{Worker: "clarify", SubGoal: 1, Reason: "empty_question"}},
		{"new search", shipments.State{Question: "q", CompletedOutputs: ctx(shipments.Slots{})}, shipments.Task{Worker: "build_query", SubGoal: 1}},
		{"no F01 context (F01 failed)", shipments.State{Question: "q"}, shipments.Task{Worker: "build_query", SubGoal: 1}},
		{"pasted", shipments.State{Question: "q", CompletedOutputs: ctx(shipments.Slots{"user_es_query": "{}", "prior_es_query": maerskTerm})}, shipments.Task{Worker: "parse_user_query", SubGoal: 1}},
		{"show me more", shipments.State{Question: "q", ReferencesPriorResults: true, CompletedOutputs: ctx(shipments.Slots{"prior_es_query": maerskTerm})}, shipments.Task{Worker: "execute_query", SubGoal: 1}},
		{"more of nothing", shipments.State{Question: "q", ReferencesPriorResults: true, CompletedOutputs: ctx(shipments.Slots{})}, shipments.Task{Worker: "clarify", SubGoal: 1, Reason: "nothing_to_continue"}},
		{"force, no query", shipments.State{Question: "q", ReferencesPriorResults: true, CompletedOutputs: ctx(shipments.Slots{"force_execute": true})}, shipments.Task{Worker: "build_query", SubGoal: 1, ForceExecute: true}},
		{"force, prior query", shipments.State{Question: "q", CompletedOutputs: ctx(shipments.Slots{"force_execute": true, "prior_es_query": maerskTerm})}, shipments.Task{Worker: "execute_query", SubGoal: 1}},
	}
	for _, tc := range round1 {
		if got := shipments.Plan(tc.s, maxRounds); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	later := func(worker string, out shipments.Slots) shipments.State {
		return shipments.State{Question: "q", Round: 3, Task: shipments.Task{Worker: worker, SubGoal: 3},
			// F01's flags are not read after round 1.
			CompletedOutputs: map[int]shipments.Slots{0: {"user_es_query": "{}", "force_execute": true}, 3: out}}
	}
	cases := []struct {
		name string
		s    shipments.State
		want shipments.Task
	}{
		{"parsed", later("parse_user_query", shipments.Slots{"query": maerskTerm}), shipments.Task{Worker: "execute_query", SubGoal: 4, Input: 3}},
		{"parse failed", later("parse_user_query", shipments.Slots{"error": "x"}), shipments.Task{Worker: "record_turn", SubGoal: 4, Reason: "query_invalid"}},
		{"built", later("build_query", shipments.Slots{"query": maerskTerm}), shipments.Task{Worker: "execute_query", SubGoal: 4, Input: 3}},
		{"no criteria", later("build_query", shipments.Slots{"clarify": "?"}), shipments.Task{Worker: "clarify", SubGoal: 4, Input: 3, Reason: "no_criteria"}},
		{"extraction failed", later("build_query", shipments.Slots{"error": "x"}), shipments.Task{Worker: "clarify", SubGoal: 4, Input: 3, Reason: "extraction_failed"}},
		{"executed", later("execute_query", shipments.Slots{"total": 3}), shipments.Task{Worker: "summarize", SubGoal: 4, Input: 3}},
		{"search failed", later("execute_query", shipments.Slots{"error": "x"}), shipments.Task{Worker: "record_turn", SubGoal: 4, Reason: "search_failed"}},
		{"summarized", later("summarize", shipments.Slots{"response": "r"}), shipments.Task{Worker: "record_turn", SubGoal: 4, Reason: "done"}},
		{"clarified", later("clarify", shipments.Slots{"response": "r"}), shipments.Task{Worker: "record_turn", SubGoal: 4, Reason: "done"}},
	}
	for _, tc := range cases {
		if got := shipments.Plan(tc.s, maxRounds); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := shipments.Plan(later("build_query", shipments.Slots{"query": maerskTerm}), 3); got.Worker != "record_turn" || got.Reason != "max_rounds" {
		t.Errorf("max rounds: %+v", got)
	}
}
