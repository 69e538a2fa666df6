package searchtest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weftlang/weft/search"
)

// ShipmentsIndex is the name of the index LoadShipments creates.
const ShipmentsIndex = "shipments"

// ShipmentsSchema returns the schema of the shipments index: carrier is a
// keyword, weight_kg a long.
func ShipmentsSchema() search.Schema {
	return search.Schema{Fields: map[string]search.Field{"carrier": {Type: search.Keyword}, "weight_kg": {Type: search.Long}}}
}

// ShipmentsDocs returns the three documents of the shipments index:
// "a" (Maersk, 1200 kg), "b" (MSC, 9000 kg) and "c" (Maersk, 5000 kg). A
// filter on carrier Maersk sorted by weight_kg descending finds 2, c first.
func ShipmentsDocs() []search.Doc {
	return []search.Doc{
		{ID: "a", Source: json.RawMessage(`{"carrier":"Maersk","weight_kg":1200}`)},
		{ID: "b", Source: json.RawMessage(`{"carrier":"MSC","weight_kg":9000}`)},
		{ID: "c", Source: json.RawMessage(`{"carrier":"Maersk","weight_kg":5000}`)},
	}
}

// LoadShipments creates the shipments index in b (which must be a
// search.IndexManager) and indexes ShipmentsDocs into it, the small
// fixture of the es_search tool's tests. It fails tb on any error.
func LoadShipments(tb testing.TB, b search.Backend) {
	tb.Helper()
	im, ok := b.(search.IndexManager)
	if !ok {
		tb.Fatalf("%T does not implement search.IndexManager", b)
	}
	ctx := context.Background()
	if err := im.CreateIndex(ctx, ShipmentsIndex, ShipmentsSchema()); err != nil {
		tb.Fatalf("CreateIndex %s: %v", ShipmentsIndex, err)
	}
	if err := b.Index(ctx, ShipmentsIndex, ShipmentsDocs()); err != nil {
		tb.Fatalf("Index %s: %v", ShipmentsIndex, err)
	}
}
