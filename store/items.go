package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Items is implemented by a store that keeps LangGraph's cross-thread
// key-value store ("long-term memory"): JSON objects under a key in a
// namespace, a path of labels such as ["users", "u1", "memories"]. Items
// belong to no thread (DeleteThread leaves them). The memory, SQLite and
// PostgreSQL stores implement it; callers type-assert a Store to it.
//
// Namespaces are kept as their labels joined by NamespaceSep, which is
// why a label may not contain it; a search selects a namespace prefix
// with an index, so its cost does not grow with unrelated namespaces.
type Items interface {
	// PutItem creates the item, or replaces the item with its
	// Namespace and Key. On create, zero Created and Updated are set to
	// the store's time; on replace, Created stays as stored and Updated
	// is it.Updated, or the store's time when zero. Both are written
	// back into it. A namespace, key or value CheckItem refuses wraps
	// ErrInvalid.
	PutItem(ctx context.Context, it *Item) error
	// Item returns the item with key in namespace ns, or ErrNotFound.
	Item(ctx context.Context, ns []string, key string) (*Item, error)
	// DeleteItem removes an item; a missing one is not an error (as in
	// LangGraph).
	DeleteItem(ctx context.Context, ns []string, key string) error
	// SearchItems lists the items q selects: those whose namespace
	// starts with q.Prefix and whose value passes q.Filter, most
	// recently updated first, then by key, then by namespace (see
	// CompareItems); after
	// q.Offset, at most q.Limit (DefaultItemLimit when 0).
	SearchItems(ctx context.Context, q ItemQuery) ([]*Item, error)
	// Namespaces lists the distinct namespaces of stored items that q
	// selects (see NamespaceQuery), each cut to q.MaxDepth labels when
	// set, in label order (slices.Compare), after q.Offset, at most
	// q.Limit (DefaultNamespaceLimit when 0).
	Namespaces(ctx context.Context, q NamespaceQuery) ([][]string, error)
}

// Item is one entry of the key-value store.
type Item struct {
	Namespace []string // at least one label; none empty or holding NamespaceSep
	Key       string   // not empty
	// Value is a JSON object, kept byte for byte as given.
	Value   json.RawMessage
	Created time.Time
	Updated time.Time
}

// NamespaceSep joins the labels of a namespace as the stores keep it
// (LangGraph's separator too): a label may not contain it.
const NamespaceSep = "."

// The limits used when a query's Limit is 0 (LangGraph's defaults).
const (
	DefaultItemLimit      = 10
	DefaultNamespaceLimit = 100
)

// ItemQuery selects items for SearchItems.
type ItemQuery struct {
	// Prefix selects the items whose namespace starts with these labels
	// (whole labels); empty: every item.
	Prefix []string
	// Filter selects the items whose value has, for each key of Filter,
	// a top-level field of that name matching it: equal as JSON values
	// (numbers by value, so 1 and 1.0 are equal; objects whatever the
	// order of their keys; arrays element by element), or, when the
	// filter value is an object of operators ({"$gt": 3, "$lte": 9}),
	// passing each: $eq, $ne, $gt, $gte, $lt, $lte. The order operators
	// compare two numbers or two strings (bytewise) and fail on anything
	// else. A missing field passes $ne only.
	Filter map[string]json.RawMessage
	// Limit is the most items listed: 0 is DefaultItemLimit; negative
	// is ErrInvalid.
	Limit int
	// Offset skips this many matching items first; negative is
	// ErrInvalid.
	Offset int
}

// NamespaceQuery selects namespaces for Namespaces. A label "*" in
// Prefix or Suffix matches any one label (as in LangGraph).
type NamespaceQuery struct {
	// Prefix selects the namespaces that start with these labels; empty:
	// any.
	Prefix []string
	// Suffix selects the namespaces that end with these labels; empty:
	// any.
	Suffix []string
	// MaxDepth, when more than 0, cuts each namespace to its first
	// MaxDepth labels (before removing duplicates); 0: no limit.
	// Negative is ErrInvalid.
	MaxDepth int
	// Limit is the most namespaces listed: 0 is DefaultNamespaceLimit;
	// negative is ErrInvalid.
	Limit int
	// Offset skips this many namespaces first; negative is ErrInvalid.
	Offset int
}

// CheckNamespace checks a namespace (field names the argument, for the
// error): labels none empty or containing NamespaceSep, and at least
// one unless empty allows none; anything else wraps ErrInvalid.
func CheckNamespace(field string, ns []string, empty bool) error {
	if len(ns) == 0 && !empty {
		return fmt.Errorf("%s: empty namespace: %w", field, ErrInvalid)
	}
	for i, l := range ns {
		switch {
		case l == "":
			return fmt.Errorf("%s: label %d is empty: %w", field, i, ErrInvalid)
		case strings.Contains(l, NamespaceSep):
			return fmt.Errorf("%s: label %d (%q) contains %q: %w", field, i, l, NamespaceSep, ErrInvalid)
		}
	}
	return nil
}

// CheckItemKey checks the namespace and key of an item: see CheckItem.
func CheckItemKey(ns []string, key string) error {
	if err := CheckNamespace("namespace", ns, false); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("key: empty key in namespace %v: %w", ns, ErrInvalid)
	}
	return nil
}

// CheckItem checks an item for PutItem: a namespace (CheckNamespace), a
// key and a Value that is a JSON object; anything else wraps ErrInvalid,
// naming the field ("namespace", "key", "value").
func CheckItem(it *Item) error {
	if it == nil {
		return fmt.Errorf("item: nil: %w", ErrInvalid)
	}
	if err := CheckItemKey(it.Namespace, it.Key); err != nil {
		return err
	}
	if !isObject(it.Value) {
		return fmt.Errorf("value: item %v/%s: not a JSON object: %w", it.Namespace, it.Key, ErrInvalid)
	}
	return nil
}

// isObject reports whether b is one valid JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// JoinNamespace returns a namespace as the stores keep it: its labels
// joined by NamespaceSep.
func JoinNamespace(ns []string) string { return strings.Join(ns, NamespaceSep) }

// SplitNamespace is the inverse of JoinNamespace.
func SplitNamespace(s string) []string { return strings.Split(s, NamespaceSep) }

// PrefixRange returns the range of joined namespaces (JoinNamespace)
// that start with the labels of prefix (none a wildcard): exactly p, or
// from lo (inclusive) to hi (exclusive) in bytewise order. SQL stores
// select a prefix with it on an index: ns = p OR (ns >= lo AND ns < hi).
func PrefixRange(prefix []string) (p, lo, hi string) {
	p = JoinNamespace(prefix)
	return p, p + NamespaceSep, p + string(rune(NamespaceSep[0]+1))
}

// Max is the most items SearchItems lists for q: Limit, or
// DefaultItemLimit when 0.
func (q ItemQuery) Max() int { return cmp.Or(q.Limit, DefaultItemLimit) }

// Check checks the query: labels as CheckNamespace (an empty prefix is
// allowed), a limit and an offset not negative, filter values that are
// JSON and operators that are known; anything else wraps ErrInvalid.
func (q ItemQuery) Check() error {
	if err := CheckNamespace("prefix", q.Prefix, true); err != nil {
		return err
	}
	if q.Limit < 0 || q.Offset < 0 {
		return fmt.Errorf("limit %d, offset %d: negative: %w", q.Limit, q.Offset, ErrInvalid)
	}
	for k, v := range q.Filter {
		if _, err := parseFilter(v); err != nil {
			return fmt.Errorf("filter %q: %v: %w", k, err, ErrInvalid)
		}
	}
	return nil
}

// Check checks the query: labels as CheckNamespace, but "*" allowed
// and the prefix and suffix may be empty; MaxDepth, Limit and Offset not
// negative; anything else wraps ErrInvalid.
func (q NamespaceQuery) Check() error {
	if err := CheckNamespace("prefix", q.Prefix, true); err != nil {
		return err
	}
	if err := CheckNamespace("suffix", q.Suffix, true); err != nil {
		return err
	}
	if q.MaxDepth < 0 || q.Limit < 0 || q.Offset < 0 {
		return fmt.Errorf("max_depth %d, limit %d, offset %d: negative: %w", q.MaxDepth, q.Limit, q.Offset, ErrInvalid)
	}
	return nil
}

// Fixed returns the labels of q.Prefix before its first wildcard "*":
// the prefix a SQL store selects on its index before Match checks the
// rest.
func (q NamespaceQuery) Fixed() []string {
	if i := slices.Index(q.Prefix, "*"); i >= 0 {
		return q.Prefix[:i]
	}
	return q.Prefix
}

// Match reports whether namespace ns passes q.Prefix and q.Suffix.
func (q NamespaceQuery) Match(ns []string) bool {
	if len(ns) < len(q.Prefix) || len(ns) < len(q.Suffix) {
		return false
	}
	for i, l := range q.Prefix {
		if l != "*" && ns[i] != l {
			return false
		}
	}
	off := len(ns) - len(q.Suffix)
	for i, l := range q.Suffix {
		if l != "*" && ns[off+i] != l {
			return false
		}
	}
	return true
}

// List turns the namespaces of the stored items that the store selected
// by q.Fixed() (joined, in any order, repeated or not) into what
// Namespaces returns: matched, cut to MaxDepth, distinct, sorted, paged.
func (q NamespaceQuery) List(joined []string) [][]string {
	seen := map[string]bool{}
	var out [][]string
	for _, j := range joined {
		ns := SplitNamespace(j)
		if !q.Match(ns) {
			continue
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		if k := JoinNamespace(ns); !seen[k] {
			seen[k] = true
			out = append(out, ns)
		}
	}
	slices.SortFunc(out, slices.Compare)
	out = out[min(q.Offset, len(out)):]
	if limit := cmp.Or(q.Limit, DefaultNamespaceLimit); len(out) > limit {
		out = out[:limit]
	}
	return out
}

// HasPrefix reports whether namespace ns starts with prefix.
func HasPrefix(ns, prefix []string) bool {
	return len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix)
}

// CompareItems orders items as SearchItems lists them: Updated
// descending, then Key, then joined namespace (JoinNamespace), keys and
// namespaces bytewise, as SQL stores order them.
func CompareItems(a, b *Item) int {
	if c := b.Updated.Compare(a.Updated); c != 0 {
		return c
	}
	if c := strings.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return strings.Compare(JoinNamespace(a.Namespace), JoinNamespace(b.Namespace))
}

// A Matcher checks item values against an ItemQuery's Filter.
type Matcher struct {
	fields []fieldFilter
}

type fieldFilter struct {
	name string
	ops  []filterOp
}

type filterOp struct {
	op  string // "$eq", "$ne", "$gt", "$gte", "$lt", "$lte"
	val any    // decoded with UseNumber
}

// Matcher returns the Matcher of q.Filter (after Check).
func (q ItemQuery) Matcher() (*Matcher, error) {
	m := &Matcher{}
	for k, v := range q.Filter {
		ops, err := parseFilter(v)
		if err != nil {
			return nil, fmt.Errorf("filter %q: %v: %w", k, err, ErrInvalid)
		}
		m.fields = append(m.fields, fieldFilter{k, ops})
	}
	return m, nil
}

// Match reports whether value, a JSON object, passes the filter. A
// value that is not an object passes only an empty filter.
func (m *Matcher) Match(value []byte) bool {
	if len(m.fields) == 0 {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(value, &obj) != nil || obj == nil {
		return false
	}
	for _, f := range m.fields {
		raw, ok := obj[f.name]
		var v any
		if ok {
			var err error
			if v, err = decode(raw); err != nil {
				return false
			}
		}
		for _, o := range f.ops {
			if !o.pass(v, ok) {
				return false
			}
		}
	}
	return true
}

// parseFilter reads one filter value: an object whose keys all start
// with "$" is a set of operators, anything else is $eq.
func parseFilter(raw json.RawMessage) ([]filterOp, error) {
	v, err := decode(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok || len(obj) == 0 {
		return []filterOp{{"$eq", v}}, nil
	}
	var ops []filterOp
	nops := 0
	for k := range obj {
		if strings.HasPrefix(k, "$") {
			nops++
		}
	}
	if nops == 0 {
		return []filterOp{{"$eq", v}}, nil
	}
	if nops != len(obj) {
		return nil, fmt.Errorf("operators mixed with fields")
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		switch k {
		case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte":
			ops = append(ops, filterOp{k, obj[k]})
		default:
			return nil, fmt.Errorf("unknown operator %q", k)
		}
	}
	return ops, nil
}

// decode decodes one JSON value with numbers as json.Number.
func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// pass applies the operator to the field's value v (present says
// whether the field is there).
func (o filterOp) pass(v any, present bool) bool {
	if !present {
		return o.op == "$ne"
	}
	switch o.op {
	case "$eq":
		return jsonEqual(v, o.val)
	case "$ne":
		return !jsonEqual(v, o.val)
	}
	c, ok := jsonOrder(v, o.val)
	if !ok {
		return false
	}
	switch o.op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	default: // "$lte"
		return c <= 0
	}
}

// number parses a JSON number exactly enough to compare (256 bits of
// mantissa).
func number(n json.Number) (*big.Float, bool) {
	f, _, err := big.ParseFloat(string(n), 10, 256, big.ToNearestEven)
	return f, err == nil
}

// jsonEqual compares two decoded JSON values: numbers by value, objects
// by their members whatever their order, arrays element by element.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, okx := number(x)
		fy, oky := number(y)
		if !okx || !oky {
			return x == y
		}
		return fx.Cmp(fy) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return a == b
	}
}

// jsonOrder compares two numbers or two strings; ok is false for
// anything else.
func jsonOrder(a, b any) (int, bool) {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return 0, false
		}
		fx, okx := number(x)
		fy, oky := number(y)
		if !okx || !oky {
			return 0, false
		}
		return fx.Cmp(fy), true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}
