package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/search"
	blevesearch "github.com/weftlang/weft/search/bleve"
)

func TestDeterminism(t *testing.T) {
	a := dataset.Generate(42, 500)
	b := dataset.Generate(42, 500)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave different shipments")
	}
	if c := dataset.Generate(43, 500); reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave the same shipments")
	}
	if prefix := dataset.Generate(42, 100); !reflect.DeepEqual(prefix, a[:100]) {
		t.Fatal("the first shipments depend on n")
	}
	if got := dataset.Generate(1, 0); len(got) != 0 {
		t.Fatalf("Generate(1, 0) = %d shipments", len(got))
	}
	// Pin a few values so that an accidental change of the generator shows.
	first := a[0]
	if first.ShipmentID != "SHP-0000001" || first.DepartureDate == "" || first.BillOfLading == "" {
		t.Fatalf("first shipment = %+v", first)
	}
}

func TestConstants(t *testing.T) {
	for _, s := range []string{dataset.AsOfDate, dataset.FirstDeparture, dataset.LastDeparture} {
		if _, err := time.Parse(dataset.DateLayout, s); err != nil {
			t.Errorf("constant date %q: %v", s, err)
		}
	}
}

func TestTablesConsistent(t *testing.T) {
	ports := map[string]dataset.Port{}
	locode := regexp.MustCompile(`^[A-Z]{2}[A-Z2-9]{3}$`)
	for _, p := range dataset.Ports() {
		if !locode.MatchString(p.Code) || p.Code[:2] != p.CountryCode || p.Country == "" || p.Name == "" {
			t.Errorf("bad port %+v", p)
		}
		if _, dup := ports[p.Code]; dup {
			t.Errorf("duplicate port %s", p.Code)
		}
		ports[p.Code] = p
	}
	for _, code := range []string{"USLAX", "USLGB", "CNSHA", "CNNGB", "SGSIN", "NLRTM", "DEHAM", "BEANR",
		"KRPUS", "JPTYO", "AEJEA", "GBFXT", "BRSSZ", "INNSA"} {
		if _, ok := ports[code]; !ok {
			t.Errorf("port %s missing", code)
		}
	}
	regions := map[string]bool{}
	for _, p := range ports {
		regions[p.Region] = true
	}
	for a := range regions {
		for b := range regions {
			if d, ok := dataset.TransitDays(a, b); !ok || d < 3 {
				t.Errorf("no transit time from %s to %s", a, b)
			}
		}
	}
	goods := map[string]dataset.Commodity{}
	for _, c := range dataset.Commodities() {
		if len(c.HSCode) != 6 || strings.Trim(c.HSCode, "0123456789") != "" {
			t.Errorf("bad HS code %+v", c)
		}
		if c.MinContainers < 1 || c.MaxContainers < c.MinContainers || c.MinKgPerContainer < 1000 ||
			c.MaxKgPerContainer < c.MinKgPerContainer || c.MaxKgPerContainer > 28000 {
			t.Errorf("bad ranges %+v", c)
		}
		goods[c.HSCode] = c
	}
	buyers := map[string][]string{} // category -> consignee countries
	for _, c := range dataset.Consignees() {
		for _, p := range c.Ports {
			if ports[p].CountryCode != c.CountryCode {
				t.Errorf("consignee %s: port %s not in %s", c.Name, p, c.CountryCode)
			}
		}
		for _, cat := range c.Categories {
			buyers[cat] = append(buyers[cat], c.CountryCode)
		}
	}
	for _, s := range dataset.Shippers() {
		for _, p := range s.Ports {
			if ports[p].CountryCode != s.CountryCode {
				t.Errorf("shipper %s: port %s not in %s", s.Name, p, s.CountryCode)
			}
		}
		for _, hs := range s.HSCodes {
			g, ok := goods[hs]
			if !ok {
				t.Errorf("shipper %s: unknown HS code %s", s.Name, hs)
				continue
			}
			foreign := slices.ContainsFunc(buyers[g.Category], func(cc string) bool { return cc != s.CountryCode })
			if !foreign {
				t.Errorf("shipper %s: no foreign consignee for %s", s.Name, g.Category)
			}
		}
	}
	carriers := map[string]bool{}
	for _, c := range dataset.Carriers() {
		carriers[c.Name] = true
	}
	for _, want := range []string{"Maersk", "MSC", "CMA CGM", "Hapag-Lloyd"} {
		if !carriers[want] {
			t.Errorf("carrier %s missing", want)
		}
	}
}

func TestInvariants(t *testing.T) {
	ships := dataset.Generate(7, 5000)
	ports := map[string]dataset.Port{}
	for _, p := range dataset.Ports() {
		ports[p.Code] = p
	}
	goods := map[string]dataset.Commodity{}
	for _, c := range dataset.Commodities() {
		goods[c.HSCode] = c
	}
	shipperGoods := map[string][]string{}
	for _, s := range dataset.Shippers() {
		shipperGoods[s.Name] = s.HSCodes
	}
	scac := map[string]string{}
	for _, c := range dataset.Carriers() {
		scac[c.Name] = c.SCAC
	}
	asOf, _ := time.Parse(dataset.DateLayout, dataset.AsOfDate)
	ids, bols := map[string]bool{}, map[string]bool{}
	statuses := map[string]int{}
	for _, s := range ships {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s: %s", s.ShipmentID, fmt.Sprintf(format, args...))
		}
		if ids[s.ShipmentID] || bols[s.BillOfLading] {
			fail("duplicate id or bill of lading")
		}
		ids[s.ShipmentID], bols[s.BillOfLading] = true, true
		dep, err1 := time.Parse(dataset.DateLayout, s.DepartureDate)
		arr, err2 := time.Parse(dataset.DateLayout, s.ArrivalDate)
		if err1 != nil || err2 != nil {
			fail("bad dates %s %s", s.DepartureDate, s.ArrivalDate)
			continue
		}
		if !arr.After(dep) || int(arr.Sub(dep).Hours()/24) != s.TransitDays || s.TransitDays < 2 || s.TransitDays > 60 {
			fail("arrival %s not plausibly after departure %s (%d days)", s.ArrivalDate, s.DepartureDate, s.TransitDays)
		}
		if s.DepartureDate < dataset.FirstDeparture || s.DepartureDate > dataset.LastDeparture {
			fail("departure %s out of range", s.DepartureDate)
		}
		op, ok1 := ports[s.OriginPortCode]
		dp, ok2 := ports[s.DestinationPortCode]
		if !ok1 || !ok2 || op.Name != s.OriginPort || dp.Name != s.DestinationPort ||
			op.Country != s.OriginCountry || dp.Country != s.DestinationCountry ||
			s.OriginCountryCode != s.OriginPortCode[:2] || s.DestinationCountryCode != s.DestinationPortCode[:2] {
			fail("inconsistent ports %s/%s", s.OriginPortCode, s.DestinationPortCode)
		}
		if s.OriginCountryCode == s.DestinationCountryCode {
			fail("domestic shipment %s -> %s", s.OriginPortCode, s.DestinationPortCode)
		}
		base, _ := dataset.TransitDays(op.Region, dp.Region)
		delayed := s.Status == dataset.StatusDelayed
		if s.TransitDays < base-2 || (!delayed && s.TransitDays > base+4) || (delayed && s.TransitDays > base+4+12) {
			fail("transit %d days not plausible for %s -> %s (typical %d)", s.TransitDays, op.Region, dp.Region, base)
		}
		g, ok := goods[s.HSCode]
		if !ok || g.Description != s.GoodsDescription || g.Category != s.GoodsCategory || g.ContainerType != s.ContainerType {
			fail("HS code %s does not match the goods %q", s.HSCode, s.GoodsDescription)
			continue
		}
		if !slices.Contains(shipperGoods[s.ShipperName], s.HSCode) {
			fail("shipper %s does not ship %s", s.ShipperName, s.GoodsDescription)
		}
		if s.ContainerCount < g.MinContainers || s.ContainerCount > g.MaxContainers {
			fail("container count %d out of range for %s", s.ContainerCount, s.GoodsDescription)
		}
		if s.TEU != s.ContainerCount*dataset.TEUPerContainer(s.ContainerType) {
			fail("teu %d for %d x %s", s.TEU, s.ContainerCount, s.ContainerType)
		}
		lo, hi := int64(g.MinKgPerContainer*s.ContainerCount), int64(g.MaxKgPerContainer*s.ContainerCount)
		if s.WeightKg < lo || s.WeightKg > hi {
			fail("weight %d kg out of [%d, %d] for %d containers of %s", s.WeightKg, lo, hi, s.ContainerCount, s.GoodsDescription)
		}
		if scac[s.Carrier] != s.CarrierSCAC || !strings.HasPrefix(s.BillOfLading, s.CarrierSCAC) || len(s.BillOfLading) != 13 {
			fail("bill of lading %s / carrier %s %s", s.BillOfLading, s.Carrier, s.CarrierSCAC)
		}
		if strings.Contains(s.ShipperName, s.Carrier) {
			fail("shipper %s named like the carrier", s.ShipperName)
		}
		switch s.Status {
		case dataset.StatusBooked:
			if !dep.After(asOf) {
				fail("booked but departed %s", s.DepartureDate)
			}
		case dataset.StatusArrived:
			if arr.After(asOf) {
				fail("arrived in the future %s", s.ArrivalDate)
			}
		case dataset.StatusInTransit, dataset.StatusDelayed:
			if dep.After(asOf) || !arr.After(asOf) {
				fail("%s but %s -> %s", s.Status, s.DepartureDate, s.ArrivalDate)
			}
		default:
			fail("unknown status %q", s.Status)
		}
		statuses[s.Status]++
	}
	for _, st := range []string{dataset.StatusBooked, dataset.StatusInTransit, dataset.StatusDelayed, dataset.StatusArrived} {
		if statuses[st] == 0 {
			t.Errorf("no %s shipment in 5000", st)
		}
	}
}

func TestDocsAndSchema(t *testing.T) {
	if err := dataset.Schema().Validate(); err != nil {
		t.Fatal(err)
	}
	ships := dataset.Generate(3, 10)
	docs := dataset.Docs(ships)
	for i, d := range docs {
		if d.ID != ships[i].ShipmentID {
			t.Errorf("doc %d id %s", i, d.ID)
		}
		var m map[string]any
		if err := json.Unmarshal(d.Source, &m); err != nil {
			t.Fatal(err)
		}
		for k := range m {
			if _, ok := dataset.Schema().Lookup(k); !ok {
				t.Errorf("field %s is not in the schema", k)
			}
		}
		if len(m) != len(dataset.Schema().Fields) {
			t.Errorf("doc has %d fields, schema %d", len(m), len(dataset.Schema().Fields))
		}
	}
}

// loaded is the 5,000-shipment embedded index shared by the search tests
// and the benchmark.
type loaded struct {
	ships []dataset.Shipment
	b     *blevesearch.Backend
	err   error
}

var load = sync.OnceValue(func() *loaded {
	l := &loaded{ships: dataset.Generate(2025, 5000)}
	l.b, l.err = blevesearch.New(blevesearch.Options{})
	if l.err != nil {
		return l
	}
	ctx := context.Background()
	if l.err = l.b.CreateIndex(ctx, "shipments", dataset.Schema()); l.err != nil {
		return l
	}
	l.err = l.b.Index(ctx, "shipments", dataset.Docs(l.ships))
	return l
})

func loadedIndex(tb testing.TB) *loaded {
	tb.Helper()
	l := load()
	if l.err != nil {
		tb.Fatal(l.err)
	}
	return l
}

func count(ships []dataset.Shipment, pred func(dataset.Shipment) bool) int64 {
	var n int64
	for _, s := range ships {
		if pred(s) {
			n++
		}
	}
	return n
}

// words splits text into lower-case words, as the standard analyzer does
// for these descriptions.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func TestSearchShipments(t *testing.T) {
	l := loadedIndex(t)
	ships := l.ships
	shipper := ships[0].ShipperName
	cases := []struct {
		name string
		body string
		want int64
	}{
		{"term on shipper", fmt.Sprintf(`{"query": {"term": {"shipper_name.keyword": %q}}}`, shipper),
			count(ships, func(s dataset.Shipment) bool { return s.ShipperName == shipper })},
		{"carrier Maersk to Los Angeles", `{"query": {"bool": {"filter": [
				{"term": {"carrier.keyword": "Maersk"}}, {"term": {"destination_port_code": "USLAX"}}]}}}`,
			count(ships, func(s dataset.Shipment) bool { return s.Carrier == "Maersk" && s.DestinationPortCode == "USLAX" })},
		{"match carrier in words", `{"query": {"match": {"carrier": "hapag lloyd"}}}`,
			count(ships, func(s dataset.Shipment) bool { return s.Carrier == "Hapag-Lloyd" })},
		{"departures in Q1 2025", `{"query": {"range": {"departure_date": {"gte": "2025-01-01", "lte": "2025-03-31"}}}}`,
			count(ships, func(s dataset.Shipment) bool {
				return s.DepartureDate >= "2025-01-01" && s.DepartureDate <= "2025-03-31"
			})},
		{"arrivals in March 2025 by date math", `{"query": {"range": {"arrival_date": {"gte": "2025-03-15||/M", "lt": "2025-03-15||+1M/M"}}}}`,
			count(ships, func(s dataset.Shipment) bool { return strings.HasPrefix(s.ArrivalDate, "2025-03") })},
		{"coffee in transit", `{"query": {"bool": {"must": [{"match": {"goods_description": "coffee"}}],
				"filter": [{"term": {"status": "in_transit"}}]}}}`,
			count(ships, func(s dataset.Shipment) bool {
				return slices.Contains(words(s.GoodsDescription), "coffee") && s.Status == dataset.StatusInTransit
			})},
		{"delayed reefers", `{"query": {"bool": {"filter": [
				{"term": {"status": "delayed"}}, {"term": {"container_type": "40RF"}}]}}}`,
			count(ships, func(s dataset.Shipment) bool { return s.Status == dataset.StatusDelayed && s.ContainerType == "40RF" })},
		{"heavy shipments from China not to the US", `{"query": {"bool": {
				"filter": [{"term": {"origin_country_code": "CN"}}, {"range": {"weight_kg": {"gt": 50000}}}],
				"must_not": [{"term": {"destination_country.keyword": "United States"}}]}}}`,
			count(ships, func(s dataset.Shipment) bool {
				return s.OriginCountryCode == "CN" && s.WeightKg > 50000 && s.DestinationCountry != "United States"
			})},
		{"frozen or fresh food to Rotterdam or Hamburg", `{"query": {"bool": {
				"must": {"match": {"goods_description": {"query": "frozen fresh", "operator": "or"}}},
				"filter": {"terms": {"destination_port_code": ["NLRTM", "DEHAM"]}}}}}`,
			count(ships, func(s dataset.Shipment) bool {
				w := words(s.GoodsDescription)
				return (slices.Contains(w, "frozen") || slices.Contains(w, "fresh")) &&
					(s.DestinationPortCode == "NLRTM" || s.DestinationPortCode == "DEHAM")
			})},
		{"at least 10 TEU of electronics", `{"query": {"bool": {"filter": [
				{"term": {"goods_category": "consumer_electronics"}}, {"range": {"teu": {"gte": 10}}}]}}}`,
			count(ships, func(s dataset.Shipment) bool { return s.GoodsCategory == "consumer_electronics" && s.TEU >= 10 })},
		{"HS chapter 09 by prefix", `{"query": {"prefix": {"hs_code": "09"}}}`,
			count(ships, func(s dataset.Shipment) bool { return strings.HasPrefix(s.HSCode, "09") })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == 0 {
				t.Fatalf("the dataset has no match for %s: pick another query", c.name)
			}
			res, err := l.b.Search(context.Background(), "shipments", []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != c.want || res.TotalRelation != "eq" {
				t.Errorf("total = %d (%s), want %d", res.Total, res.TotalRelation, c.want)
			}
		})
	}

	t.Run("latest departures first", func(t *testing.T) {
		res, err := l.b.Search(context.Background(), "shipments",
			[]byte(`{"sort": [{"departure_date": "desc"}, {"shipment_id": "asc"}], "size": 3, "_source": ["departure_date", "shipment_id"]}`))
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Clone(ships)
		slices.SortFunc(sorted, func(a, b dataset.Shipment) int {
			if c := strings.Compare(b.DepartureDate, a.DepartureDate); c != 0 {
				return c
			}
			return strings.Compare(a.ShipmentID, b.ShipmentID)
		})
		for i, h := range res.Hits {
			if h.ID != sorted[i].ShipmentID {
				t.Errorf("hit %d = %s, want %s", i, h.ID, sorted[i].ShipmentID)
			}
		}
	})
}

// BenchmarkBoolQuery runs a typical assistant query (full text, filters,
// an optional should and a sort) over the 5,000 shipments.
func BenchmarkBoolQuery(b *testing.B) {
	l := loadedIndex(b)
	body := []byte(`{"query": {"bool": {
		"must": [{"match": {"goods_description": "coffee beans"}}],
		"filter": [{"range": {"departure_date": {"gte": "2024-06-01", "lt": "2025-06-01"}}},
		           {"terms": {"status": ["in_transit", "arrived", "delayed"]}}],
		"should": [{"term": {"carrier.keyword": "Maersk"}}],
		"must_not": [{"term": {"destination_country_code": "US"}}]}},
		"size": 20}`)
	ctx := context.Background()
	var res *search.Response
	for b.Loop() {
		var err error
		if res, err = l.b.Search(ctx, "shipments", body); err != nil {
			b.Fatal(err)
		}
	}
	if res.Total == 0 {
		b.Fatal("no hits")
	}
}

// BenchmarkIndex5000 measures loading 5,000 shipments into a new in-memory
// index.
func BenchmarkIndex5000(b *testing.B) {
	docs := dataset.Docs(dataset.Generate(1, 5000))
	ctx := context.Background()
	for b.Loop() {
		be, err := blevesearch.New(blevesearch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := be.CreateIndex(ctx, "shipments", dataset.Schema()); err != nil {
			b.Fatal(err)
		}
		if err := be.Index(ctx, "shipments", docs); err != nil {
			b.Fatal(err)
		}
		_ = be.Close()
	}
}
