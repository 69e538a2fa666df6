package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftlang/weft/store"
)

var _ store.Items = (*Store)(nil)

// Items live in weft_items (schema version 5), their namespace joined by
// store.NamespaceSep in the "C" collation. A search selects a namespace
// prefix on the primary key's index as a range (store.PrefixRange) and
// checks filters in Go as the rows come, in order, stopping at the limit.

// prefixWhere returns the condition selecting the namespaces under
// prefix, with its arguments numbered from $1; none for an empty prefix.
func prefixWhere(prefix []string) (string, []any) {
	if len(prefix) == 0 {
		return "", nil
	}
	p, lo, hi := store.PrefixRange(prefix)
	return ` WHERE (ns = $1::text OR ns >= $2::text AND ns < $3::text)`, []any{p, lo, hi}
}

// PutItem creates or replaces an item in one statement; see store.Items.
func (s *Store) PutItem(ctx context.Context, it *store.Item) error {
	if err := store.CheckItem(it); err != nil {
		return fmt.Errorf("store/postgres: put item: %w", err)
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
	var c, u time.Time
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `INSERT INTO weft_items (ns, key, value, created, updated) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, updated = $6
RETURNING created, updated`, store.JoinNamespace(it.Namespace), it.Key, []byte(it.Value), created, updated, replaced).Scan(&c, &u)
	})
	if err != nil {
		return &Error{Op: fmt.Sprintf("put item %v/%s", it.Namespace, it.Key), Err: err}
	}
	it.Created, it.Updated = c.UTC(), u.UTC()
	return nil
}

const itemCols = `ns, key, value, created, updated`

func scanItem(row pgx.Row) (*store.Item, error) {
	var (
		it    store.Item
		ns    string
		value []byte
	)
	if err := row.Scan(&ns, &it.Key, &value, &it.Created, &it.Updated); err != nil {
		return nil, err
	}
	it.Namespace, it.Value = store.SplitNamespace(ns), value
	it.Created, it.Updated = it.Created.UTC(), it.Updated.UTC()
	return &it, nil
}

// Item returns an item.
func (s *Store) Item(ctx context.Context, ns []string, key string) (*store.Item, error) {
	if err := store.CheckItemKey(ns, key); err != nil {
		return nil, fmt.Errorf("store/postgres: item: %w", err)
	}
	var it *store.Item
	err := s.retry(ctx, func() (err error) {
		it, err = scanItem(s.pool.QueryRow(ctx, `SELECT `+itemCols+` FROM weft_items WHERE ns = $1 AND key = $2`, store.JoinNamespace(ns), key))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store/postgres: item %v/%s: %w", ns, key, store.ErrNotFound)
	}
	if err != nil {
		return nil, &Error{Op: fmt.Sprintf("item %v/%s", ns, key), Err: err}
	}
	return it, nil
}

// DeleteItem removes an item, if there is one.
func (s *Store) DeleteItem(ctx context.Context, ns []string, key string) error {
	if err := store.CheckItemKey(ns, key); err != nil {
		return fmt.Errorf("store/postgres: delete item: %w", err)
	}
	err := s.retry(ctx, func() error {
		_, err := s.pool.Exec(ctx, `DELETE FROM weft_items WHERE ns = $1 AND key = $2`, store.JoinNamespace(ns), key)
		return err
	})
	if err != nil {
		return &Error{Op: fmt.Sprintf("delete item %v/%s", ns, key), Err: err}
	}
	return nil
}

// searchSQL returns the query that selects the items of q's prefix, in
// order, with its arguments, and how many matching rows the caller skips
// (the offset, when filters run in Go; else the query applies limit and
// offset).
func searchSQL(q store.ItemQuery) (query string, args []any, skip int) {
	where, args := prefixWhere(q.Prefix)
	query = `SELECT ` + itemCols + ` FROM weft_items` + where + ` ORDER BY updated DESC, key, ns`
	if len(q.Filter) > 0 {
		return query, args, q.Offset
	}
	n := len(args)
	return query + fmt.Sprintf(` LIMIT $%d::bigint OFFSET $%d::bigint`, n+1, n+2), append(args, int64(q.Max()), int64(q.Offset)), 0
}

// SearchItems lists the items q selects; see store.Items.
func (s *Store) SearchItems(ctx context.Context, q store.ItemQuery) ([]*store.Item, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("store/postgres: search items: %w", err)
	}
	m, err := q.Matcher()
	if err != nil {
		return nil, fmt.Errorf("store/postgres: search items: %w", err)
	}
	query, args, offset := searchSQL(q)
	var out []*store.Item
	err = s.retry(ctx, func() error {
		out = []*store.Item{}
		skip := offset
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for len(out) < q.Max() && rows.Next() {
			it, err := scanItem(rows)
			if err != nil {
				return err
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
		return rows.Err()
	})
	if err != nil {
		return nil, &Error{Op: "search items", Err: err}
	}
	return out, nil
}

// Namespaces lists the namespaces q selects; see store.Items.
func (s *Store) Namespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("store/postgres: namespaces: %w", err)
	}
	where, args := prefixWhere(q.Fixed())
	var joined []string
	err := s.retry(ctx, func() error {
		joined = nil
		rows, err := s.pool.Query(ctx, `SELECT DISTINCT ns FROM weft_items`+where, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ns string
			if err := rows.Scan(&ns); err != nil {
				return err
			}
			joined = append(joined, ns)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, &Error{Op: "namespaces", Err: err}
	}
	return q.List(joined), nil
}
