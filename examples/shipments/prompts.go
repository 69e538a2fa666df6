package shipments

import (
	"fmt"
	"strings"
	"time"

	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/flow"
)

// ReiterateFields is the schema of F01's structured output, the seed's
// ReiterateResult. user_query_text is "str | None": weft's types have no
// nullable String, so it is Any, and F01 reads a string, or null, or (a
// model that pasted the query as JSON) an object or array as its JSON
// text.
func ReiterateFields() []*flow.Field {
	return []*flow.Field{
		{Name: "main_goal", Type: flow.TString},
		{Name: "reasoning", Type: flow.TString},
		{Name: "user_query_text", Type: flow.TAny},
		{Name: "references_prior_results", Type: flow.TBool},
		{Name: "force_execute", Type: flow.TBool},
	}
}

// reiterateSystem is F01's system prompt.
const reiterateSystem = `You are the first step of an assistant that searches a database of ocean container shipments (an Elasticsearch index). You read the conversation so far and the user's new message, and restate what the user wants as one clear, actionable goal for the steps that follow.

Reply with one JSON object with these fields:
- "main_goal": the user's intent restated as a clear, actionable, self-contained goal. Resolve references to the conversation ("the same for MSC", "those") and expand abbreviations ("LA" is Los Angeles). When the message holds several requests, number them: "(1) ... (2) ...".
- "reasoning": one or two sentences on how you read the message.
- "user_query_text": when the user pasted an Elasticsearch query, or points to a query written in the message, that query text copied exactly as written, character for character, even if it is not valid JSON (do not fix it); otherwise null.
- "references_prior_results": true when the user wants more of the previous results or refers to them ("show me more", "next page", "the rest of them"); otherwise false.
- "force_execute": true when the user wants the search run without being asked questions ("just run it", "don't ask me anything"); otherwise false.`

// reiterateUser is F01's user message: the last HistoryTurns turns and
// the message.
func reiterateUser(question, history string) string {
	if history == "" {
		history = "(no earlier turns)"
	}
	return "Conversation so far:\n" + history + "\n\nUser message: " + question
}

// IntentFields is the schema of build_query's structured output: the
// fields of SearchIntent, "" / 0 / [] for a criterion not given.
func IntentFields() []*flow.Field {
	str := func(name string) *flow.Field { return &flow.Field{Name: name, Type: flow.TString} }
	return []*flow.Field{
		str("reasoning"),
		str("shipper"),
		str("consignee"),
		str("carrier"),
		str("origin_port"),
		str("destination_port"),
		str("origin_country"),
		str("destination_country"),
		str("goods"),
		{Name: "status", Type: flow.ListOf(flow.EnumOf(Statuses()...))},
		str("departure_from"),
		str("departure_to"),
		str("arrival_from"),
		str("arrival_to"),
		{Name: "min_weight_kg", Type: flow.TInt},
		{Name: "max_weight_kg", Type: flow.TInt},
		{Name: "sort_by", Type: flow.EnumOf(append([]string{SortDefault}, SortFields()...)...)},
		{Name: "sort_order", Type: flow.EnumOf("desc", "asc")},
		{Name: "page_size", Type: flow.TInt},
		str("clarification"),
	}
}

// intentFromValues reads build_query's structured output.
func intentFromValues(v map[string]flow.Value) SearchIntent {
	str := func(name string) string { return strings.TrimSpace(v[name].Str()) }
	in := SearchIntent{
		Shipper:            str("shipper"),
		Consignee:          str("consignee"),
		Carrier:            str("carrier"),
		OriginPort:         str("origin_port"),
		DestinationPort:    str("destination_port"),
		OriginCountry:      str("origin_country"),
		DestinationCountry: str("destination_country"),
		Goods:              str("goods"),
		DepartureFrom:      str("departure_from"),
		DepartureTo:        str("departure_to"),
		ArrivalFrom:        str("arrival_from"),
		ArrivalTo:          str("arrival_to"),
		MinWeightKg:        max(v["min_weight_kg"].Int(), 0),
		MaxWeightKg:        max(v["max_weight_kg"].Int(), 0),
		SortBy:             str("sort_by"),
		SortOrder:          str("sort_order"),
		PageSize:           int(max(v["page_size"].Int(), 0)),
		Clarification:      str("clarification"),
	}
	if ss, ok := v["status"].Strings(); ok {
		in.Status = ss
	}
	return in
}

// intentSystem is build_query's system prompt; today anchors relative
// dates.
func intentSystem(today time.Time) string {
	var carriers []string
	for _, c := range dataset.Carriers() {
		carriers = append(carriers, c.Name)
	}
	d := today.Format(time.DateOnly)
	return `You turn a request for shipments into search criteria for an index of ocean container shipments. Today is ` + d + `.
Each shipment has a shipper (the exporter), a consignee (the importer), a carrier (the shipping line), origin and destination ports (name and UN/LOCODE) and countries, goods, a status, departure and arrival dates and a gross weight.

Reply with one JSON object with these fields; use "" (or 0, or []) for every criterion the request does not give:
- "reasoning": one sentence on what the request asks for.
- "shipper": words of the exporter's name. A shipping line is never a shipper.
- "consignee": words of the importer's name.
- "carrier": the shipping line: one of ` + strings.Join(carriers, ", ") + `. "Maersk shipments" means carrier Maersk.
- "origin_port", "destination_port": the port's name ("Los Angeles", "Rotterdam") or UN/LOCODE ("USLAX", "NLRTM"); expand abbreviations ("LA" is Los Angeles).
- "origin_country", "destination_country": a country name or ISO code, when the request names a country rather than a port.
- "goods": words describing the goods ("coffee", "frozen shrimp", "solar panels").
- "status": the statuses asked for, among booked, in_transit, delayed, arrived.
- "departure_from", "departure_to", "arrival_from", "arrival_to": inclusive dates as YYYY-MM-DD; resolve relative dates against today (yesterday was ` + today.AddDate(0, 0, -1).Format(time.DateOnly) + `).
- "min_weight_kg", "max_weight_kg": gross weight bounds in kilograms (a tonne is 1000 kg).
- "sort_by": "default" (latest departure first), or "departure_date", "arrival_date", "weight_kg", "transit_days", "teu"; "sort_order": "desc" or "asc".
- "page_size": how many shipments per page the user asked for, or 0.
- "clarification": when the request gives no criterion at all, one short question asking what to search for; otherwise "".`
}

// intentUser is build_query's user message.
func intentUser(goal, history string) string {
	if history == "" {
		return "Request: " + goal
	}
	return "Conversation so far:\n" + history + "\n\nRequest: " + goal
}

// summarizeSystem is summarize's system prompt.
const summarizeSystem = `You write the reply of an assistant that searches ocean container shipments. You get the user's request, the number of matching shipments and one page of them. Write a short plain-text summary, two to four sentences, no markdown and no tables: what was searched for and what stands out on this page (carriers, routes, goods, statuses, dates, weights). The shipments are listed to the user separately, so do not list them all. Use only the counts and facts given. When the request also asks something that is not a search (such as what a term means), answer that briefly first.`

// summarizeUser is summarize's user message.
func summarizeUser(goal string, p *Page) string {
	var b strings.Builder
	b.WriteString("Request: " + goal + "\n")
	switch {
	case p.Total == 0:
		b.WriteString("Matching shipments: none.\n")
	default:
		fmt.Fprintf(&b, "Matching shipments: %s; this page shows %d to %d.\n", totalText(p), p.From+1, p.From+len(p.Hits))
	}
	if len(p.Hits) > 0 {
		b.WriteString("\nShipments on this page:\n")
		b.WriteString(FormatHits(p))
	}
	return b.String()
}

// FormatHits lists a page's shipments, one numbered line each (numbered
// from the page's offset), for the summary prompt and the program's
// output.
func FormatHits(p *Page) string {
	var b strings.Builder
	for i, h := range p.Hits {
		fmt.Fprintf(&b, "%d. %s\n", p.From+i+1, HitLine(h))
	}
	return b.String()
}

// HitLine is one shipment on one line.
func HitLine(h dataset.Shipment) string {
	return fmt.Sprintf("%s | %s -> %s | %s | %s (%s) -> %s (%s) | departs %s, arrives %s | %s | %d x %s, %d kg | %s",
		h.ShipmentID, h.ShipperName, h.ConsigneeName, h.Carrier,
		h.OriginPort, h.OriginPortCode, h.DestinationPort, h.DestinationPortCode,
		h.DepartureDate, h.ArrivalDate, h.GoodsDescription, h.ContainerCount, h.ContainerType, h.WeightKg, h.Status)
}

// totalText is the page's total in words.
func totalText(p *Page) string {
	switch {
	case p.Total < 0:
		return "an unknown number of"
	case p.TotalRelation == "gte":
		return fmt.Sprintf("at least %d", p.Total)
	}
	return fmt.Sprint(p.Total)
}
