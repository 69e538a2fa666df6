package shipments

import (
	"context"
	"fmt"

	"github.com/weftlang/weft/examples/shipments/dataset"
	"github.com/weftlang/weft/search"
)

// LoadDataset creates index on b with the dataset's schema, when b can
// create indexes, and indexes ships (by shipment ID, so loading the same
// shipments again replaces them).
func LoadDataset(ctx context.Context, b search.Backend, index string, ships []dataset.Shipment) error {
	if im, ok := b.(search.IndexManager); ok {
		if err := im.CreateIndex(ctx, index, dataset.Schema()); err != nil {
			return fmt.Errorf("creating index %s: %w", index, err)
		}
	}
	if err := b.Index(ctx, index, dataset.Docs(ships)); err != nil {
		return fmt.Errorf("indexing %d shipments into %s: %w", len(ships), index, err)
	}
	return nil
}
