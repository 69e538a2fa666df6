package flow

import (
	"fmt"
	"slices"
	"strings"
)

// Diagnostic codes of the static checks, stable for tools and tests:
//
//	unknown-name     a node, variable, slot, field, function or reducer that is not declared
//	unknown-action   an action neither bound in the source nor registered
//	type-mismatch    an expression or assignment of the wrong type
//	enum-literal     a string compared with an Enum that does not list it
//	enum-routing     (warning) routing on an Enum that misses some of its values
//	unreachable      (warning) a node that no path from the initial node reaches
//	no-final         no final node is reachable from the initial node
//	unreachable-final (warning) a final that no path reaches
//	dead-end         a node that is not final and has no outgoing edge
//	unbounded-cycle  (warning) a cycle that no counter bounds
//	parallel-write   two parallel branches write one variable or slot without a reducer
//	join             a fan-out whose branches cannot reach their join
//	recursive        a WORKFLOW node that runs a workflow containing it
//	duplicate, missing, range, syntax: malformed declarations

// englishList joins items as prose: "a", "a and b", "a, b and c".
func englishList(items []string, conj string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}

// successors returns the node indices an edge-walk can reach from pn in one
// step. Finals end the run, so they have none.
func (p *Plan) successors(pn *PlanNode) []int {
	if pn.Final {
		return nil
	}
	var out []int
	for _, e := range pn.Edges {
		out = append(out, e.To...)
	}
	for _, e := range pn.OnError {
		out = append(out, e.To...)
	}
	return out
}

func (p *Plan) reachable(from int, stop int) []bool {
	seen := make([]bool, len(p.Nodes))
	stack := []int{from}
	seen[from] = true
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == stop {
			continue
		}
		for _, s := range p.successors(p.Nodes[n]) {
			if !seen[s] {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return seen
}

func (c *planner) checkGraph() {
	p := c.p
	if len(p.Nodes) == 0 {
		return
	}
	seen := p.reachable(p.Initial, -1)
	anyFinal := false
	initial := p.Nodes[p.Initial].Name
	var finals []string
	for i, pn := range p.Nodes {
		if pn.Final {
			finals = append(finals, pn.Name)
		}
		if !seen[i] {
			if pn.Final {
				c.warnf(pn.Node.Pos, "unreachable-final", "final node %s is unreachable from the initial node %s", pn.Name, initial)
			} else {
				c.warnf(pn.Node.Pos, "unreachable", "node %s is unreachable from the initial node %s", pn.Name, initial)
			}
			continue
		}
		if pn.Final {
			anyFinal = true
			if len(pn.Edges)+len(pn.OnError) > 0 {
				c.warnf(pn.Edges0Pos(), "unreachable", "edges from final node %s are never taken: the run ends there", pn.Name)
			}
		} else if len(pn.Edges) == 0 {
			c.errorf(pn.Node.Pos, "dead-end", "node %s is not a final and has no outgoing edge: a run reaching it could not go on", pn.Name)
		}
	}
	switch {
	case len(finals) == 0:
		c.errorf(c.w.Pos, "no-final", "workflow %s has no final node: list the nodes that end a run in finals, or add an END node", c.w.Name)
	case !anyFinal:
		c.errorf(c.w.Pos, "no-final", "workflow %s: no final node is reachable from the initial node %s (finals: %s)", c.w.Name, initial, strings.Join(finals, ", "))
	}
	for _, pn := range p.Nodes {
		c.checkEnumRouting(pn)
	}
	c.checkCycles()
	c.checkFanouts()
}

// Edges0Pos returns the position of the node's first outgoing edge, or the
// node's own position.
func (pn *PlanNode) Edges0Pos() Pos {
	if len(pn.Edges) > 0 {
		return pn.Edges[0].Edge.Pos
	}
	if len(pn.OnError) > 0 {
		return pn.OnError[0].Edge.Pos
	}
	return pn.Node.Pos
}

// enumTests collects, from a condition, the enum cells it compares with
// string literals and the values it tests them for.
func enumTests(p *Plan, prog *Program, out map[int][]string) {
	cellOf := func(e Expr) (int, bool) {
		name := ""
		switch e := e.(type) {
		case *Ident:
			name = e.Name
		case *Selector:
			name = e.String()
		default:
			return 0, false
		}
		for _, r := range prog.Refs {
			if r.Name == name || strings.HasSuffix(r.Name, "."+name) {
				if p.Cells[r.Cell].Type.Kind == KindEnum {
					return r.Cell, true
				}
			}
		}
		return 0, false
	}
	WalkExpr(prog.Expr, func(e Expr) bool {
		b, ok := e.(*Binary)
		if !ok {
			return true
		}
		switch b.Op {
		case "==":
			for _, pair := range [][2]Expr{{b.X, b.Y}, {b.Y, b.X}} {
				if cell, ok := cellOf(pair[0]); ok {
					if lit, ok := pair[1].(*Lit); ok && lit.Value.Kind() == KindString {
						out[cell] = append(out[cell], lit.Value.Str())
					}
				}
			}
		case "in":
			if cell, ok := cellOf(b.X); ok {
				if l, ok := b.Y.(*ListExpr); ok {
					for _, el := range l.Elems {
						if lit, ok := el.(*Lit); ok && lit.Value.Kind() == KindString {
							out[cell] = append(out[cell], lit.Value.Str())
						}
					}
				}
			}
		case "!=":
			// x != "a" covers every value but one: treat as covering all.
			for _, side := range []Expr{b.X, b.Y} {
				if cell, ok := cellOf(side); ok {
					out[cell] = append(out[cell], p.Cells[cell].Type.Values...)
				}
			}
		}
		return true
	})
}

func (c *planner) checkEnumRouting(pn *PlanNode) {
	if pn.Final || len(pn.Edges) == 0 {
		return
	}
	covered := map[int][]string{}
	for _, e := range pn.Edges {
		if e.Cond == nil {
			return // a default edge catches everything
		}
		enumTests(c.p, e.Cond, covered)
	}
	cells := make([]int, 0, len(covered))
	for cell := range covered {
		cells = append(cells, cell)
	}
	slices.Sort(cells)
	for _, cell := range cells {
		t := c.p.Cells[cell].Type
		var missing []string
		for _, v := range t.Values {
			if !slices.Contains(covered[cell], v) {
				missing = append(missing, fmt.Sprintf("%q", v))
			}
		}
		if len(missing) > 0 {
			c.warnf(pn.Edges0Pos(), "enum-routing", "routing from %s does not handle %s = %s: a run with that value fails at %s because no edge matches (add an edge for it, or a default edge)",
				pn.Name, c.p.Cells[cell].Name, englishList(missing, "or"), pn.Name)
		}
	}
}

// checkCycles warns about cycles that nothing bounds: a cycle is bounded
// when a condition on one of its edges (or on an edge leaving it) orders or
// compares a variable that the cycle itself writes, like rephraseCount in
// `rephraseCount < 3` with `update: { rephraseCount = rephraseCount + 1 }`.
func (c *planner) checkCycles() {
	p := c.p
	// in marks the nodes of the component at hand: one array for all of
	// them, cleared after each, so the check stays linear in the graph.
	in := make([]bool, len(p.Nodes))
	for _, scc := range p.sccs() {
		c.checkCycle(scc, in)
	}
}

// checkCycle warns about the strongly connected component scc if nothing
// bounds it; in is all false, and is again on return.
func (c *planner) checkCycle(scc []int, in []bool) {
	p := c.p
	for _, n := range scc {
		in[n] = true
	}
	defer func() {
		for _, n := range scc {
			in[n] = false
		}
	}()
	if len(scc) == 1 {
		self := slices.Contains(p.successors(p.Nodes[scc[0]]), scc[0])
		if !self {
			return
		}
	}
	written := map[int]bool{}
	for _, n := range scc {
		pn := p.Nodes[n]
		for _, a := range pn.Set {
			written[a.Cell] = true
		}
		for _, es := range [][]*PlanEdge{pn.Edges, pn.OnError} {
			for _, e := range es {
				for _, a := range e.Updates {
					written[a.Cell] = true
				}
			}
		}
	}
	bounded := false
	for _, n := range scc {
		for _, e := range p.Nodes[n].Edges {
			if e.Cond == nil {
				continue
			}
			for _, r := range e.Cond.Refs {
				if written[r.Cell] {
					bounded = true
				}
			}
		}
	}
	if bounded {
		return
	}
	c.warnf(p.Nodes[scc[0]].Node.Pos, "unbounded-cycle", "cycle %s has no counter that bounds it: no condition in it tests a variable it updates; it runs until max_steps (%d)",
		p.cyclePath(scc, in), p.MaxSteps)
}

// cyclePath spells a shortest cycle through the first node of a strongly
// connected component, following edges in declaration order: "a -> b -> a".
// Nodes of the component off that cycle are named after it.
func (p *Plan) cyclePath(scc []int, in []bool) string {
	start := scc[0]
	prev := map[int]int{}
	queue := []int{start}
	end := -1
	for len(queue) > 0 && end < 0 {
		n := queue[0]
		queue = queue[1:]
		for _, s := range p.successors(p.Nodes[n]) {
			if !in[s] {
				continue
			}
			if s == start {
				end = n
				break
			}
			if _, ok := prev[s]; !ok {
				prev[s] = n
				queue = append(queue, s)
			}
		}
	}
	var path []int
	for n := end; n != start && n >= 0; n = prev[n] {
		path = append(path, n)
	}
	path = append(path, start)
	slices.Reverse(path)
	names := make([]string, 0, len(path)+1)
	for _, n := range path {
		names = append(names, p.Nodes[n].Name)
	}
	out := strings.Join(append(names, p.Nodes[start].Name), " -> ")
	onPath := make(map[int]bool, len(path))
	for _, n := range path {
		onPath[n] = true
	}
	var others []string
	for _, n := range scc {
		if !onPath[n] {
			others = append(others, p.Nodes[n].Name)
		}
	}
	if len(others) > 0 {
		out += " (also through " + englishList(others, "and") + ")"
	}
	return out
}

// sccs returns the strongly connected components with a cycle, each in
// node declaration order, components ordered by their first node.
func (p *Plan) sccs() [][]int {
	n := len(p.Nodes)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range p.successors(p.Nodes[v]) {
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			slices.Sort(comp)
			out = append(out, comp)
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// checkFanouts checks each parallel edge: every branch reaches the join,
// and no variable or slot is written by two branches unless it has a
// reducer other than replace.
func (c *planner) checkFanouts() {
	p := c.p
	for _, pn := range p.Nodes {
		for _, e := range append(slices.Clone(pn.Edges), pn.OnError...) {
			if len(e.To) < 2 || e.Join < 0 {
				continue
			}
			writers := map[int][]string{} // cell -> branch names
			for _, t := range e.To {
				region := p.reachable(t, e.Join)
				if !region[e.Join] {
					c.errorf(e.Edge.Pos, "join", "parallel branch %s (from %s) never reaches its join %s", p.Nodes[t].Name, pn.Name, p.Nodes[e.Join].Name)
					continue
				}
				cells := map[int]bool{}
				for i, inRegion := range region {
					if !inRegion || i == e.Join {
						continue
					}
					bn := p.Nodes[i]
					for _, a := range bn.Set {
						cells[a.Cell] = true
					}
					for _, be := range append(slices.Clone(bn.Edges), bn.OnError...) {
						for _, a := range be.Updates {
							cells[a.Cell] = true
						}
						for _, a := range be.Overrides {
							cells[a.Cell] = true
						}
					}
				}
				for cell := range cells {
					writers[cell] = append(writers[cell], p.Nodes[t].Name)
				}
			}
			cells := make([]int, 0, len(writers))
			for cell := range writers {
				cells = append(cells, cell)
			}
			slices.Sort(cells)
			for _, cell := range cells {
				if ws := writers[cell]; len(ws) > 1 && p.Cells[cell].Red.IsReplace() {
					cl := p.Cells[cell]
					verb := "all write"
					if len(ws) == 2 {
						verb = "both write"
					}
					hint := "declare a reducer for it"
					switch cl.Type.Kind {
					case KindList, KindAny:
						hint = fmt.Sprintf("declare a reducer (e.g. `%s: %s reduce append`)", cl.Name, cl.Type)
					case KindInt, KindFloat, KindDuration:
						hint = fmt.Sprintf("declare a reducer (e.g. `%s: %s reduce sum`)", cl.Name, cl.Type)
					case KindObject:
						hint = fmt.Sprintf("declare a reducer (e.g. `%s: %s reduce merge`)", cl.Name, cl.Type)
					}
					c.errorf(e.Edge.Pos, "parallel-write", "parallel branches %s %s %s %s, which has no reducer: the last writer would silently win; %s, or write it from one branch only",
						englishList(ws, "and"), verb, kindWord(cl.Kind), cl.Name, hint)
				}
			}
		}
	}
}
