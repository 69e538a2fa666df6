package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/weftlang/weft/store"
)

// itemJSON is an item of the key-value store as LangGraph shows it.
type itemJSON struct {
	Namespace []string        `json:"namespace"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

func itemOf(it *store.Item) itemJSON {
	return itemJSON{Namespace: it.Namespace, Key: it.Key, Value: it.Value, CreatedAt: it.Created, UpdatedAt: it.Updated}
}

// items is the store's key-value store, or a 501 when it keeps none.
func (s *Server) items() (store.Items, error) {
	if s.kv == nil {
		return nil, errorf(http.StatusNotImplemented, "the store (%T) keeps no items", s.opts.Store)
	}
	return s.kv, nil
}

// checkErr is a 422 naming the field of a store check's error ("key:
// empty key ..."), as prefix plus the field.
func checkErr(prefix string, err error) error {
	if err == nil {
		return nil
	}
	field, detail, ok := strings.Cut(err.Error(), ": ")
	if !ok {
		field, detail = "", err.Error()
	}
	return &Error{Status: http.StatusUnprocessableEntity, Path: prefix + field, Detail: strings.TrimSuffix(detail, ": "+store.ErrInvalid.Error()), Err: err}
}

// itemErr is a store's error: a refused argument is a 422.
func itemErr(err error) error {
	if errors.Is(err, store.ErrInvalid) {
		return &Error{Status: http.StatusUnprocessableEntity, Detail: err.Error(), Err: err}
	}
	return err
}

// putItem is PUT /store/items.
func (s *Server) putItem(w http.ResponseWriter, r *http.Request) error {
	kv, err := s.items()
	if err != nil {
		return err
	}
	var b struct {
		Namespace []string        `json:"namespace"`
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		Index     json.RawMessage `json:"index"`
		TTL       *float64        `json:"ttl"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	if len(b.Index) > 0 && string(b.Index) != "null" && string(b.Index) != "false" {
		return invalid("$.index", "semantic indexing of items is not supported by weft")
	}
	if b.TTL != nil {
		return invalid("$.ttl", "item TTLs are not supported by weft")
	}
	it := &store.Item{Namespace: b.Namespace, Key: b.Key, Value: b.Value}
	if err := store.CheckItem(it); err != nil {
		return checkErr("$.", err)
	}
	if err := kv.PutItem(r.Context(), it); err != nil {
		return itemErr(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getItem is GET /store/items?namespace=a.b&key=k: the item, or null.
func (s *Server) getItem(w http.ResponseWriter, r *http.Request) error {
	kv, err := s.items()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var ns []string
	if v := q.Get("namespace"); v != "" {
		ns = strings.Split(v, store.NamespaceSep)
	}
	it, err := kv.Item(r.Context(), ns, q.Get("key"))
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusOK, nil) // as LangGraph: null
		return nil
	}
	if err != nil {
		return itemErr(err)
	}
	writeJSON(w, http.StatusOK, itemOf(it))
	return nil
}

// deleteItem is DELETE /store/items with {namespace, key}.
func (s *Server) deleteItem(w http.ResponseWriter, r *http.Request) error {
	kv, err := s.items()
	if err != nil {
		return err
	}
	var b struct {
		Namespace []string `json:"namespace"`
		Key       string   `json:"key"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	if err := kv.DeleteItem(r.Context(), b.Namespace, b.Key); err != nil {
		return itemErr(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// searchItems is POST /store/items/search.
func (s *Server) searchItems(w http.ResponseWriter, r *http.Request) error {
	kv, err := s.items()
	if err != nil {
		return err
	}
	var b struct {
		Prefix []string                   `json:"namespace_prefix"`
		Filter map[string]json.RawMessage `json:"filter"`
		Limit  int                        `json:"limit"`
		Offset int                        `json:"offset"`
		Query  string                     `json:"query"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.Query != "" {
		return invalid("$.query", "semantic search of items is not supported by weft: filter by fields instead")
	}
	items, err := kv.SearchItems(r.Context(), store.ItemQuery{Prefix: b.Prefix, Filter: b.Filter, Limit: b.Limit, Offset: b.Offset})
	if err != nil {
		return itemErr(err)
	}
	out := make([]itemJSON, 0, len(items))
	for _, it := range items {
		out = append(out, itemOf(it))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
	return nil
}

// listNamespaces is POST /store/namespaces.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) error {
	kv, err := s.items()
	if err != nil {
		return err
	}
	var b struct {
		Prefix   []string `json:"prefix"`
		Suffix   []string `json:"suffix"`
		MaxDepth int      `json:"max_depth"`
		Limit    int      `json:"limit"`
		Offset   int      `json:"offset"`
	}
	if err := decode(r, &b); err != nil {
		return err
	}
	nss, err := kv.Namespaces(r.Context(), store.NamespaceQuery{Prefix: b.Prefix, Suffix: b.Suffix, MaxDepth: b.MaxDepth, Limit: b.Limit, Offset: b.Offset})
	if err != nil {
		return itemErr(err)
	}
	if nss == nil {
		nss = [][]string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": nss})
	return nil
}
