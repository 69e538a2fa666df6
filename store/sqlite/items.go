package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weftlang/weft/store"
)

var _ store.Items = (*Store)(nil)

// Items live in the table items (schema version 7), their namespace
// joined by store.NamespaceSep. A search selects a namespace prefix on the
// index items_key as a range (store.PrefixRange) and checks filters in Go
// as the rows come, in order, stopping at the limit. A search's SQL
// depends on its query: each shape is prepared once (stmtCache).

// prefixWhere returns the condition selecting the namespaces under
// prefix, and its arguments; none for an empty prefix.
func prefixWhere(prefix []string) (string, []any) {
	if len(prefix) == 0 {
		return "", nil
	}
	p, lo, hi := store.PrefixRange(prefix)
	return ` WHERE (ns = ? OR ns >= ? AND ns < ?)`, []any{p, lo, hi}
}

// PutItem creates or replaces an item in one statement; see store.Items.
func (s *Store) PutItem(ctx context.Context, it *store.Item) error {
	if err := store.CheckItem(it); err != nil {
		return fmt.Errorf("sqlite store: put item: %w", err)
	}
	n := now()
	created, updated, replaced := it.Created, it.Updated, it.Updated
	if created.IsZero() {
		created = n
	}
	if updated.IsZero() {
		updated = created
	}
	if replaced.IsZero() {
		replaced = n
	}
	var c, u int64
	err := s.write(ctx, func() error {
		return s.w.putItem.QueryRowContext(context.WithoutCancel(ctx),
			store.JoinNamespace(it.Namespace), it.Key, []byte(it.Value), unix(created), unix(updated), unix(replaced)).Scan(&c, &u)
	})
	if err != nil {
		return fmt.Errorf("sqlite store: put item %v/%s: %w", it.Namespace, it.Key, err)
	}
	it.Created, it.Updated = fromUnix(c), fromUnix(u)
	return nil
}

const itemCols = `ns, key, value, created, updated`

func scanItem(sc scanner) (*store.Item, error) {
	var (
		it    store.Item
		ns    string
		c, u  int64
		value []byte
	)
	if err := sc.Scan(&ns, &it.Key, &value, &c, &u); err != nil {
		return nil, err
	}
	it.Namespace, it.Value = store.SplitNamespace(ns), value
	it.Created, it.Updated = fromUnix(c), fromUnix(u)
	return &it, nil
}

// Item returns an item.
func (s *Store) Item(ctx context.Context, ns []string, key string) (*store.Item, error) {
	if err := store.CheckItemKey(ns, key); err != nil {
		return nil, fmt.Errorf("sqlite store: item: %w", err)
	}
	it, err := scanItem(s.r.item.QueryRowContext(ctx, store.JoinNamespace(ns), key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite store: item %v/%s: %w", ns, key, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store: item %v/%s: %w", ns, key, err)
	}
	return it, nil
}

// DeleteItem removes an item, if there is one.
func (s *Store) DeleteItem(ctx context.Context, ns []string, key string) error {
	if err := store.CheckItemKey(ns, key); err != nil {
		return fmt.Errorf("sqlite store: delete item: %w", err)
	}
	err := s.write(ctx, func() error {
		_, err := s.w.deleteItem.ExecContext(context.WithoutCancel(ctx), store.JoinNamespace(ns), key)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store: delete item %v/%s: %w", ns, key, err)
	}
	return nil
}

// searchSQL returns the query that selects the items of q's prefix, in
// order, with its arguments, and how many matching rows the caller skips
// (the offset, when filters run in Go; else the query applies limit and
// offset).
func searchSQL(q store.ItemQuery) (query string, args []any, skip int) {
	where, args := prefixWhere(q.Prefix)
	query = `SELECT ` + itemCols + ` FROM items` + where + ` ORDER BY updated DESC, key, ns`
	if len(q.Filter) > 0 {
		return query, args, q.Offset
	}
	return query + ` LIMIT ? + 0 OFFSET ? + 0`, append(args, q.Max(), q.Offset), 0
}

// SearchItems lists the items q selects; see store.Items.
func (s *Store) SearchItems(ctx context.Context, q store.ItemQuery) ([]*store.Item, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("sqlite store: search items: %w", err)
	}
	m, err := q.Matcher()
	if err != nil {
		return nil, fmt.Errorf("sqlite store: search items: %w", err)
	}
	query, args, skip := searchSQL(q)
	rows, err := s.cache.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: search items: %w", err)
	}
	defer rows.Close()
	out := []*store.Item{}
	for len(out) < q.Max() && rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store: search items: %w", err)
		}
		if !m.Match(it.Value) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: search items: %w", err)
	}
	return out, nil
}

// Namespaces lists the namespaces q selects; see store.Items.
func (s *Store) Namespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("sqlite store: namespaces: %w", err)
	}
	where, args := prefixWhere(q.Fixed())
	rows, err := s.cache.query(ctx, `SELECT DISTINCT ns FROM items`+where, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: namespaces: %w", err)
	}
	defer rows.Close()
	var joined []string
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("sqlite store: namespaces: %w", err)
		}
		joined = append(joined, ns)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store: namespaces: %w", err)
	}
	return q.List(joined), nil
}
