package viz

import (
	"slices"
	"sort"
)

// Crossing reduction limits.
const (
	maxSweeps     = 24 // down and up sweeps in all
	maxStale      = 4  // sweeps in a row without a better order before stopping
	maxTransposes = 6  // passes of adjacent swaps per layer and sweep
)

// reduceCrossings orders the nodes within their layers: an initial order
// from a depth-first search (start markers, then graph nodes, in input
// order), then alternate down and up barycentre sweeps, each followed by
// adjacent transpositions, keeping the order with the fewest crossings.
// Ties are broken by the current order, so the result is deterministic.
func (l *layouter) reduceCrossings() {
	visited := make([]bool, len(l.nodes))
	var stack []int
	visit := func(root int) {
		if visited[root] {
			return
		}
		stack = append(stack[:0], root)
		visited[root] = true
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			r := l.nodes[v].rank
			l.layers[r] = append(l.layers[r], v)
			down := l.nodes[v].down
			for i := len(down) - 1; i >= 0; i-- {
				if w := down[i]; !visited[w] {
					visited[w] = true
					stack = append(stack, w)
				}
			}
		}
	}
	for i := range l.g.Nodes {
		if m := l.marker[i]; m >= 0 {
			visit(m)
		}
	}
	for v := range l.nodes {
		visit(v)
	}
	l.setOrder()

	best := cloneLayers(l.layers)
	bestCross := l.crossings()
	stale := 0
	for sweep := 0; sweep < maxSweeps && bestCross > 0; sweep++ {
		if sweep%2 == 0 {
			for r := 1; r < len(l.layers); r++ {
				l.sortLayer(r, true)
			}
		} else {
			for r := len(l.layers) - 2; r >= 0; r-- {
				l.sortLayer(r, false)
			}
		}
		l.transpose()
		if c := l.crossings(); c < bestCross {
			bestCross = c
			best = cloneLayers(l.layers)
			stale = 0
		} else if stale++; stale >= maxStale {
			break
		}
	}
	l.layers = best
	l.setOrder()
}

func cloneLayers(layers [][]int) [][]int {
	out := make([][]int, len(layers))
	for i, layer := range layers {
		out[i] = slices.Clone(layer)
	}
	return out
}

// setOrder records each node's position in its layer.
func (l *layouter) setOrder() {
	for _, layer := range l.layers {
		for i, v := range layer {
			l.nodes[v].order = i
		}
	}
}

// sortLayer reorders layer r by the barycentre of each node's neighbours on
// the layer above (byUp) or below. Nodes without such neighbours keep their
// positions.
func (l *layouter) sortLayer(r int, byUp bool) {
	layer := l.layers[r]
	type entry struct {
		v, idx int
		bc     float64
	}
	var sortable, fixed []entry
	for idx, v := range layer {
		ns := l.nodes[v].down
		if byUp {
			ns = l.nodes[v].up
		}
		if len(ns) == 0 {
			fixed = append(fixed, entry{v: v, idx: idx})
			continue
		}
		sum := 0
		for _, w := range ns {
			sum += l.nodes[w].order
		}
		sortable = append(sortable, entry{v: v, idx: idx, bc: float64(sum) / float64(len(ns))})
	}
	sort.SliceStable(sortable, func(i, j int) bool {
		if sortable[i].bc != sortable[j].bc {
			return sortable[i].bc < sortable[j].bc
		}
		return sortable[i].idx < sortable[j].idx
	})
	out := layer[:0]
	fi := 0
	for _, e := range sortable {
		for fi < len(fixed) && fixed[fi].idx <= len(out) {
			out = append(out, fixed[fi].v)
			fi++
		}
		out = append(out, e.v)
	}
	for ; fi < len(fixed); fi++ {
		out = append(out, fixed[fi].v)
	}
	for i, v := range out {
		l.nodes[v].order = i
	}
}

// transpose swaps adjacent nodes while that removes crossings.
func (l *layouter) transpose() {
	for _, layer := range l.layers {
		for pass := 0; pass < maxTransposes; pass++ {
			improved := false
			for i := 0; i+1 < len(layer); i++ {
				u, v := layer[i], layer[i+1]
				if l.pairCrossings(v, u) < l.pairCrossings(u, v) {
					layer[i], layer[i+1] = v, u
					l.nodes[v].order, l.nodes[u].order = i, i+1
					improved = true
				}
			}
			if !improved {
				break
			}
		}
	}
}

// pairCrossings counts the crossings between the edges of u and those of v
// when u is just left of v.
func (l *layouter) pairCrossings(u, v int) int {
	c := 0
	for _, a := range l.nodes[u].up {
		for _, b := range l.nodes[v].up {
			if l.nodes[a].order > l.nodes[b].order {
				c++
			}
		}
	}
	for _, a := range l.nodes[u].down {
		for _, b := range l.nodes[v].down {
			if l.nodes[a].order > l.nodes[b].order {
				c++
			}
		}
	}
	return c
}

// crossings counts all edge crossings of the current order, layer pair by
// layer pair, by counting inversions with a Fenwick tree.
func (l *layouter) crossings() int {
	total := 0
	var south, tree []int
	for r := 0; r+1 < len(l.layers); r++ {
		south = south[:0]
		for _, u := range l.layers[r] {
			start := len(south)
			for _, w := range l.nodes[u].down {
				south = append(south, l.nodes[w].order)
			}
			slices.Sort(south[start:])
		}
		size := len(l.layers[r+1])
		tree = append(tree[:0], make([]int, size+1)...)
		for added, p := range south {
			le := 0 // entries so far at positions <= p
			for i := p + 1; i > 0; i -= i & -i {
				le += tree[i]
			}
			total += added - le
			for i := p + 1; i <= size; i += i & -i {
				tree[i]++
			}
		}
	}
	return total
}
