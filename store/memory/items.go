package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/weftlang/weft/store"
)

var _ store.Items = (*Store)(nil)

// itemKey is where an item is kept: its joined namespace and its key.
type itemKey struct{ ns, key string }

func copyItem(it *store.Item) *store.Item {
	c := *it
	c.Namespace = slices.Clone(it.Namespace)
	c.Value = bytes.Clone(it.Value)
	return &c
}

// PutItem creates or replaces an item; see store.Items.
func (s *Store) PutItem(ctx context.Context, it *store.Item) error {
	if err := store.CheckItem(it); err != nil {
		return fmt.Errorf("memory store: put item: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	k := itemKey{store.JoinNamespace(it.Namespace), it.Key}
	n := s.clock()
	if old, ok := s.items[k]; ok {
		it.Created = old.Created
		if it.Updated.IsZero() {
			it.Updated = n
		}
	} else {
		if it.Created.IsZero() {
			it.Created = n
		}
		if it.Updated.IsZero() {
			it.Updated = it.Created
		}
	}
	s.items[k] = copyItem(it)
	return nil
}

// Item returns a copy of an item.
func (s *Store) Item(ctx context.Context, ns []string, key string) (*store.Item, error) {
	if err := store.CheckItemKey(ns, key); err != nil {
		return nil, fmt.Errorf("memory store: item: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	it, ok := s.items[itemKey{store.JoinNamespace(ns), key}]
	if !ok {
		return nil, fmt.Errorf("memory store: item %v/%s: %w", ns, key, store.ErrNotFound)
	}
	return copyItem(it), nil
}

// DeleteItem removes an item, if there is one.
func (s *Store) DeleteItem(ctx context.Context, ns []string, key string) error {
	if err := store.CheckItemKey(ns, key); err != nil {
		return fmt.Errorf("memory store: delete item: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	delete(s.items, itemKey{store.JoinNamespace(ns), key})
	return nil
}

// SearchItems lists the items q selects; see store.Items. It looks at
// every item: the memory store keeps no index.
func (s *Store) SearchItems(ctx context.Context, q store.ItemQuery) ([]*store.Item, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("memory store: search items: %w", err)
	}
	m, err := q.Matcher()
	if err != nil {
		return nil, fmt.Errorf("memory store: search items: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var all []*store.Item
	for _, it := range s.items {
		if store.HasPrefix(it.Namespace, q.Prefix) && m.Match(it.Value) {
			all = append(all, it)
		}
	}
	slices.SortFunc(all, store.CompareItems)
	all = all[min(q.Offset, len(all)):]
	all = all[:min(q.Max(), len(all))]
	out := make([]*store.Item, len(all))
	for i, it := range all {
		out[i] = copyItem(it)
	}
	return out, nil
}

// Namespaces lists the namespaces q selects; see store.Items.
func (s *Store) Namespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("memory store: namespaces: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var joined []string
	for k := range s.items {
		joined = append(joined, k.ns)
	}
	return q.List(joined), nil
}
