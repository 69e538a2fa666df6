package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/llm"
)

// MissError reports a request that the recording cannot answer.
type MissError struct {
	// Request is the request that was not found.
	Request *llm.Request
	// Served is, for a request that was recorded, how many times: every
	// recorded reply to it was already served. It is 0 for a request that
	// was never recorded.
	Served int
	// Closest is the recorded request most like Request (nil when the
	// recording is empty), and ClosestLine its line in the recording.
	Closest     *llm.Request
	ClosestLine int
	// Where describes the first difference between Closest and Request,
	// e.g. `messages[2].content differs at character 12: recorded "...",
	// requested "..."` or `temperature: recorded 0.2, requested 0.7`.
	Where string
	// Diff is a unified diff of the canonical JSON of Closest (-) and
	// Request (+), shortened.
	Diff string
}

// Error describes the request, the closest recorded one and where they
// differ.
func (e *MissError) Error() string {
	var b strings.Builder
	b.WriteString("replay: ")
	switch {
	case e.Request == nil:
		b.WriteString("no request")
		return b.String()
	case e.Served > 0:
		fmt.Fprintf(&b, "the request (%s) was recorded %d time(s) and every recorded reply was already served", summary(e.Request), e.Served)
		return b.String()
	}
	fmt.Fprintf(&b, "no recorded exchange matches the request (%s)", summary(e.Request))
	if e.Closest == nil {
		b.WriteString("; the recording is empty")
		return b.String()
	}
	fmt.Fprintf(&b, "\nclosest recorded request: line %d\nfirst difference: %s", e.ClosestLine, e.Where)
	if e.Diff != "" {
		b.WriteString("\n")
		b.WriteString(e.Diff)
	}
	return b.String()
}

// summary describes a request in a few words.
func summary(r *llm.Request) string {
	return fmt.Sprintf("model %q, %d message(s)", r.Model, len(r.Messages))
}

// miss builds the error for a request with no unserved recorded reply.
func (p *Player) miss(req *llm.Request, key []byte, served int) error {
	e := &MissError{Request: req, Served: served}
	if served > 0 || len(p.entries) == 0 {
		return e
	}
	want, err := canonicalJSON(key, "  ")
	if err != nil {
		e.Where = "(cannot encode the request: " + err.Error() + ")"
		return e
	}
	wantLines := strings.Split(string(want), "\n")
	wantMsgs := messages(key)
	// The closest request shares the most leading messages (a conversation
	// that went the same way longest), then the most lines of canonical
	// JSON.
	var best *entry
	var bestLines []string
	bestPrefix, bestScore := -1, -1.0
	for _, c := range p.entries {
		got, err := canonicalJSON([]byte(c.key), "  ")
		if err != nil {
			continue
		}
		prefix := commonPrefix(messages([]byte(c.key)), wantMsgs)
		if prefix < bestPrefix {
			continue
		}
		lines := strings.Split(string(got), "\n")
		if s := similarity(lines, wantLines); prefix > bestPrefix || s > bestScore {
			best, bestLines, bestPrefix, bestScore = c, lines, prefix, s
		}
	}
	if best == nil {
		return e
	}
	e.Closest, e.ClosestLine = best.req, best.line
	e.Where = firstDifference([]byte(best.key), key)
	e.Diff = unified(bestLines, wantLines, best.line)
	return e
}

// messages returns the messages of a canonical request, each as JSON.
func messages(key []byte) []string {
	var r struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(key, &r) != nil {
		return nil
	}
	out := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		out[i] = string(m)
	}
	return out
}

// commonPrefix counts the leading elements a and b share.
func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// ---- the first difference, by structure ----

// fieldRank ranks the fields of requests and messages, so that the first
// difference reported is the one a reader looks for first.
func fieldRank(k string) int {
	order := [...]string{"model", "messages", "role", "content", "tool_calls", "tool_call_id", "name", "id", "arguments",
		"tools", "schema", "schema_name", "temperature", "max_tokens", "stop", "seed", "effort"}
	if i := slices.Index(order[:], k); i >= 0 {
		return i
	}
	return len(order)
}

// firstDifference describes where two canonical JSON documents first
// differ: "messages[2].content: recorded "…LA", requested "…NY"".
func firstDifference(recorded, requested []byte) string {
	a, errA := decode(recorded)
	b, errB := decode(requested)
	if errA != nil || errB != nil {
		return "(the requests cannot be compared)"
	}
	path, d, ok := diffValues(a, b, "")
	if !ok {
		return "(no difference found)"
	}
	if path == "" {
		path = "the request"
	}
	if strings.HasPrefix(d, "differs ") {
		return path + " " + d
	}
	return path + ": " + d
}

// decode reads one JSON value, numbers as json.Number.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// diffValues finds the first difference between a (recorded) and b
// (requested) below path.
func diffValues(a, b any, path string) (string, string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, dup := x[k]; !dup {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(p, q string) int {
			if rp, rq := fieldRank(p), fieldRank(q); rp != rq {
				return rp - rq
			}
			return strings.Compare(p, q)
		})
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			xv, inX := x[k]
			yv, inY := y[k]
			switch {
			case !inX:
				return sub, "not in the recorded request; requested " + show(yv), true
			case !inY:
				return sub, "recorded " + show(xv) + "; not in the request", true
			}
			if p, d, found := diffValues(xv, yv, sub); found {
				return p, d, true
			}
		}
		return "", "", false
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			if p, d, found := diffValues(x[i], y[i], path+"["+strconv.Itoa(i)+"]"); found {
				return p, d, true
			}
		}
		if len(x) != len(y) {
			return path, fmt.Sprintf("recorded %d element(s), requested %d", len(x), len(y)), true
		}
		return "", "", false
	case string:
		y, ok := b.(string)
		if !ok {
			break
		}
		if x == y {
			return "", "", false
		}
		return path, stringDiff(x, y), true
	default:
		if fmt.Sprint(a) == fmt.Sprint(b) && sameKind(a, b) {
			return "", "", false
		}
	}
	return path, "recorded " + show(a) + ", requested " + show(b), true
}

// sameKind reports whether two decoded JSON scalars have the same Go type.
func sameKind(a, b any) bool { return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) }

// stringDiff shows two strings around their first differing character.
func stringDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && !utf8.RuneStart(a[i]) { // back to a character boundary
		i--
	}
	const before, after = 20, 40
	cut := func(s string) string {
		start := max(0, i-before)
		for start > 0 && start < len(s) && !utf8.RuneStart(s[start]) {
			start--
		}
		out := s[start:]
		prefix := ""
		if start > 0 {
			prefix = "…"
		}
		suffix := ""
		if len(out) > before+after {
			end := before + after
			for end < len(out) && !utf8.RuneStart(out[end]) {
				end++
			}
			out, suffix = out[:end], "…"
		}
		q := strconv.Quote(out)
		return `"` + prefix + q[1:len(q)-1] + suffix + `"`
	}
	return fmt.Sprintf("differs at character %d: recorded %s, requested %s", utf8.RuneCountInString(a[:i])+1, cut(a), cut(b))
}

// show writes a JSON value briefly.
func show(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(raw)
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:77]) + "…"
	}
	return s
}

// ---- similarity and a unified diff of lines ----

// maxDiffCells bounds the dynamic-programming table of a line diff.
const maxDiffCells = 4 << 20

// similarity is the share of lines two documents have in common (by
// longest common subsequence), between 0 and 1.
func similarity(a, b []string) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	pre, suf := commonEnds(a, b)
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	common := pre + suf
	if len(ma)*len(mb) <= maxDiffCells {
		common += lcsLen(ma, mb)
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// commonEnds counts the lines a and b share at their start and at their
// end (not overlapping).
func commonEnds(a, b []string) (pre, suf int) {
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}

// lcsLen returns the length of the longest common subsequence of a and b.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// op is one line of a diff: ' ' (both), '-' (recorded only), '+'
// (requested only).
type op struct {
	kind byte
	text string
}

// lineOps returns the edit script from a to b.
func lineOps(a, b []string) []op {
	pre, suf := commonEnds(a, b)
	var ops []op
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		for _, l := range ma {
			ops = append(ops, op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, op{'+', l})
		}
	} else {
		// dp[i][j] = LCS of ma[i:] and mb[j:].
		w := len(mb) + 1
		dp := make([]int32, (len(ma)+1)*w)
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					dp[i*w+j] = dp[(i+1)*w+j+1] + 1
				} else {
					dp[i*w+j] = max(dp[(i+1)*w+j], dp[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i]})
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || dp[(i+1)*w+j] >= dp[i*w+j+1]):
				ops = append(ops, op{'-', ma[i]})
				i++
			default:
				ops = append(ops, op{'+', mb[j]})
				j++
			}
		}
	}
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

// unified writes a short unified diff of the recorded (a) and requested (b)
// canonical JSON: changed lines with two lines of context, at most
// maxDiffLines lines.
func unified(a, b []string, line int) string {
	const context, maxDiffLines, maxLine = 2, 40, 160
	ops := lineOps(a, b)
	keep := make([]bool, len(ops))
	for i, o := range ops {
		if o.kind != ' ' {
			for k := max(0, i-context); k <= min(len(ops)-1, i+context); k++ {
				keep[k] = true
			}
		}
	}
	var out []string
	out = append(out, fmt.Sprintf("--- recorded (line %d)", line), "+++ requested")
	la, lb := 1, 1 // line numbers in a and b
	written := 0
	for i := 0; i < len(ops); {
		if !keep[i] {
			if ops[i].kind != '+' {
				la++
			}
			if ops[i].kind != '-' {
				lb++
			}
			i++
			continue
		}
		j := i
		for j < len(ops) && keep[j] {
			j++
		}
		na, nb := 0, 0
		for _, o := range ops[i:j] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		out = append(out, fmt.Sprintf("@@ -%d,%d +%d,%d @@", la, na, lb, nb))
		for _, o := range ops[i:j] {
			if written == maxDiffLines {
				out = append(out, "… (diff shortened)")
				return strings.Join(out, "\n")
			}
			text := o.text
			if utf8.RuneCountInString(text) > maxLine {
				text = string([]rune(text)[:maxLine-1]) + "…"
			}
			out = append(out, string(o.kind)+text)
			written++
		}
		la, lb = la+na, lb+nb
		i = j
	}
	return strings.Join(out, "\n")
}
