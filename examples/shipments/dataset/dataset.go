// Package dataset generates a deterministic, realistic dataset of ocean
// container shipments for the shipments search assistant example, with the
// search schema to index it.
//
// Each shipment is sent by an exporter (shipper) of goods it plausibly makes
// or trades (an electronics maker ships smartphones, a coffee exporter green
// coffee) from a port of its country, to an importer (consignee) of that
// kind of goods in another country, on a real carrier (Maersk, MSC, CMA
// CGM, Hapag-Lloyd, ...). Ports carry their real UN/LOCODE; goods their HS
// code; transit times, container counts and weights are plausible for the
// lane and the goods. Company names are fictional.
//
// # Fields
//
// JSON field names are snake_case. Names people search in words are text
// fields with a keyword multi-field for exact matches, sorting and terms:
// "carrier" (text) and "carrier.keyword" (keyword).
//
//	shipment_id            keyword  "SHP-0000042", also the document ID
//	bill_of_lading         keyword  carrier SCAC + 9 digits, "MAEU483920175"
//	shipper_name           text + .keyword  the exporter
//	consignee_name         text + .keyword  the importer
//	carrier                text + .keyword  the shipping line: "Maersk", "MSC", "CMA CGM", "Hapag-Lloyd", ...
//	carrier_scac           keyword  "MAEU", "MSCU", "CMDU", "HLCU", ...
//	vessel_name            text + .keyword  "Madrid Maersk"
//	origin_port            text + .keyword  "Shanghai"
//	origin_port_code       keyword  UN/LOCODE "CNSHA"
//	origin_country         text + .keyword  "China"
//	origin_country_code    keyword  ISO 3166-1 alpha-2 "CN"
//	destination_port       text + .keyword  "Rotterdam"
//	destination_port_code  keyword  "NLRTM"
//	destination_country    text + .keyword  "Netherlands"
//	destination_country_code keyword "NL"
//	departure_date         date     "2025-03-14" (day precision)
//	arrival_date           date     actual arrival when status is arrived, else the estimate
//	transit_days           integer  arrival_date - departure_date
//	goods_description      text + .keyword  "Green coffee beans"
//	goods_category         keyword  "coffee", "consumer_electronics", "automotive", ...
//	hs_code                keyword  6-digit HS subheading "090111"
//	container_type         keyword  "20GP", "40HC" or "40RF" (reefer)
//	container_count        integer
//	teu                    integer  twenty-foot equivalent units
//	weight_kg              long     gross weight
//	status                 keyword  "booked", "in_transit", "delayed" or "arrived"
//
// "Maersk shipments" in a question means carrier Maersk: shippers are
// exporters, never carriers, so shipper_name never names a shipping line.
//
// Statuses are relative to the fixed date AsOfDate: booked shipments depart
// after it, arrived ones arrived on or before it, and the others are
// in_transit or (about one in five) delayed, with an arrival estimate pushed
// back by 3 to 12 days.
package dataset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/weftlang/weft/search"
)

// AsOfDate is the "today" of the dataset, against which statuses are set.
const AsOfDate = "2025-06-30"

// Departure dates are drawn between these two days, inclusive.
const (
	FirstDeparture = "2024-01-01"
	LastDeparture  = "2025-09-30"
)

// DateLayout is the layout of the date fields.
const DateLayout = time.DateOnly

// Statuses.
const (
	StatusBooked    = "booked"
	StatusInTransit = "in_transit"
	StatusDelayed   = "delayed"
	StatusArrived   = "arrived"
)

// Shipment is one ocean container shipment.
type Shipment struct {
	ShipmentID             string `json:"shipment_id"`
	BillOfLading           string `json:"bill_of_lading"`
	ShipperName            string `json:"shipper_name"`
	ConsigneeName          string `json:"consignee_name"`
	Carrier                string `json:"carrier"`
	CarrierSCAC            string `json:"carrier_scac"`
	VesselName             string `json:"vessel_name"`
	OriginPort             string `json:"origin_port"`
	OriginPortCode         string `json:"origin_port_code"`
	OriginCountry          string `json:"origin_country"`
	OriginCountryCode      string `json:"origin_country_code"`
	DestinationPort        string `json:"destination_port"`
	DestinationPortCode    string `json:"destination_port_code"`
	DestinationCountry     string `json:"destination_country"`
	DestinationCountryCode string `json:"destination_country_code"`
	DepartureDate          string `json:"departure_date"`
	ArrivalDate            string `json:"arrival_date"`
	TransitDays            int    `json:"transit_days"`
	GoodsDescription       string `json:"goods_description"`
	GoodsCategory          string `json:"goods_category"`
	HSCode                 string `json:"hs_code"`
	ContainerType          string `json:"container_type"`
	ContainerCount         int    `json:"container_count"`
	TEU                    int    `json:"teu"`
	WeightKg               int64  `json:"weight_kg"`
	Status                 string `json:"status"`
}

// Schema returns the search schema of Shipment documents.
func Schema() search.Schema {
	kw := search.Field{Type: search.Keyword}
	named := search.Field{Type: search.Text, Fields: map[string]search.Field{"keyword": kw}}
	return search.Schema{Fields: map[string]search.Field{
		"shipment_id":              kw,
		"bill_of_lading":           kw,
		"shipper_name":             named,
		"consignee_name":           named,
		"carrier":                  named,
		"carrier_scac":             kw,
		"vessel_name":              named,
		"origin_port":              named,
		"origin_port_code":         kw,
		"origin_country":           named,
		"origin_country_code":      kw,
		"destination_port":         named,
		"destination_port_code":    kw,
		"destination_country":      named,
		"destination_country_code": kw,
		"departure_date":           {Type: search.Date},
		"arrival_date":             {Type: search.Date},
		"transit_days":             {Type: search.Integer},
		"goods_description":        named,
		"goods_category":           kw,
		"hs_code":                  kw,
		"container_type":           kw,
		"container_count":          {Type: search.Integer},
		"teu":                      {Type: search.Integer},
		"weight_kg":                {Type: search.Long},
		"status":                   kw,
	}}
}

// Docs converts shipments to search documents, with the shipment ID as
// document ID.
func Docs(shipments []Shipment) []search.Doc {
	docs := make([]search.Doc, len(shipments))
	for i, s := range shipments {
		src, err := json.Marshal(s)
		if err != nil {
			// A struct of strings and integers always marshals.
			src = []byte("{}")
		}
		docs[i] = search.Doc{ID: s.ShipmentID, Source: src}
	}
	return docs
}

// Generate returns n shipments drawn from a random source seeded with
// seed: the same seed and n always give the same shipments, and the first k
// shipments of Generate(seed, n) do not depend on n. n <= 0 gives none.
func Generate(seed int64, n int) []Shipment {
	if n <= 0 {
		return nil
	}
	g := newGenerator(seed)
	out := make([]Shipment, n)
	for i := range out {
		out[i] = g.shipment(i)
	}
	return out
}

type generator struct {
	rng         *rand.Rand
	ports       map[string]Port
	goods       map[string]Commodity
	byCategory  map[string][]int // consignee indexes by category
	carrierSum  int
	first, asOf time.Time
	days        int
	bols        map[string]bool
}

// day parses one of the date constants of this package.
func day(s string) time.Time {
	t, _ := time.Parse(DateLayout, s) // the constants are valid dates (tested)
	return t
}

func newGenerator(seed int64) *generator {
	g := &generator{
		rng:        rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		ports:      map[string]Port{},
		goods:      map[string]Commodity{},
		byCategory: map[string][]int{},
		first:      day(FirstDeparture),
		asOf:       day(AsOfDate),
		bols:       map[string]bool{},
	}
	g.days = int(day(LastDeparture).Sub(g.first).Hours()/24) + 1
	for _, p := range Ports() {
		g.ports[p.Code] = p
	}
	for _, c := range commodities {
		g.goods[c.HSCode] = c
	}
	for i, c := range consignees {
		for _, cat := range c.Categories {
			g.byCategory[cat] = append(g.byCategory[cat], i)
		}
	}
	for _, c := range carriers {
		g.carrierSum += c.weight
	}
	return g
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func (g *generator) shipment(i int) Shipment {
	rng := g.rng
	shipper := pick(rng, shippers)
	goods := g.goods[pick(rng, shipper.HSCodes)]
	origin := g.ports[pick(rng, shipper.Ports)]

	// A consignee of these goods in another country.
	var candidates []int
	for _, ci := range g.byCategory[goods.Category] {
		if consignees[ci].CountryCode != shipper.CountryCode {
			candidates = append(candidates, ci)
		}
	}
	if len(candidates) == 0 {
		// Not reached with the fixed tables (tested); any foreign importer.
		for ci, c := range consignees {
			if c.CountryCode != shipper.CountryCode {
				candidates = append(candidates, ci)
			}
		}
	}
	consignee := consignees[pick(rng, candidates)]
	dest := g.ports[pick(rng, consignee.Ports)]

	w := rng.IntN(g.carrierSum)
	carrier := carriers[0]
	for _, c := range carriers {
		if w < c.weight {
			carrier = c
			break
		}
		w -= c.weight
	}
	vessel := pick(rng, carrier.Vessels)

	dep := g.first.AddDate(0, 0, rng.IntN(g.days))
	base, _ := TransitDays(origin.Region, dest.Region)
	transit := max(base+rng.IntN(7)-2, 2)
	arr := dep.AddDate(0, 0, transit)
	status := StatusArrived
	switch {
	case dep.After(g.asOf):
		status = StatusBooked
	case arr.After(g.asOf):
		status = StatusInTransit
		if rng.IntN(5) == 0 {
			status = StatusDelayed
			delay := 3 + rng.IntN(10)
			arr = arr.AddDate(0, 0, delay)
			transit += delay
		}
	}

	// Container counts skew small: most shipments are a few boxes.
	span := goods.MaxContainers - goods.MinContainers + 1
	r := rng.Float64()
	count := goods.MinContainers + int(float64(span)*r*r)
	var weight int64
	for range count {
		weight += int64(goods.MinKgPerContainer + rng.IntN(goods.MaxKgPerContainer-goods.MinKgPerContainer+1))
	}

	var bol string
	for {
		bol = fmt.Sprintf("%s%09d", carrier.SCAC, rng.IntN(1_000_000_000))
		if !g.bols[bol] {
			g.bols[bol] = true
			break
		}
	}

	return Shipment{
		ShipmentID:             fmt.Sprintf("SHP-%07d", i+1),
		BillOfLading:           bol,
		ShipperName:            shipper.Name,
		ConsigneeName:          consignee.Name,
		Carrier:                carrier.Name,
		CarrierSCAC:            carrier.SCAC,
		VesselName:             vessel,
		OriginPort:             origin.Name,
		OriginPortCode:         origin.Code,
		OriginCountry:          origin.Country,
		OriginCountryCode:      origin.CountryCode,
		DestinationPort:        dest.Name,
		DestinationPortCode:    dest.Code,
		DestinationCountry:     dest.Country,
		DestinationCountryCode: dest.CountryCode,
		DepartureDate:          dep.Format(DateLayout),
		ArrivalDate:            arr.Format(DateLayout),
		TransitDays:            transit,
		GoodsDescription:       goods.Description,
		GoodsCategory:          goods.Category,
		HSCode:                 goods.HSCode,
		ContainerType:          goods.ContainerType,
		ContainerCount:         count,
		TEU:                    count * TEUPerContainer(goods.ContainerType),
		WeightKg:               weight,
		Status:                 status,
	}
}
