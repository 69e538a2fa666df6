package viz

import (
	"math"
	"slices"
)

// assignX gives every node an x coordinate with the method of Brandes and
// Köpf: four vertical alignments (up or down, leftmost or rightmost
// medians), each compacted horizontally, aligned to the narrowest, and
// balanced by taking the average of the two median candidates per node.
// Segments of long edges are kept straight, and the dummies of reversed
// edges are never aligned with real nodes, so loops run beside the main
// flow instead of through it.
func (l *layouter) assignX() {
	n := len(l.nodes)
	conflicts := l.conflicts()
	var xss [4][]float64
	for i := range 4 {
		up, right := i < 2, i%2 == 1
		adj := make([][]int, len(l.layers))
		for r := range l.layers {
			src := l.layers[r]
			if !up {
				src = l.layers[len(l.layers)-1-r]
			}
			layer := slices.Clone(src)
			if right {
				slices.Reverse(layer)
			}
			adj[r] = layer
		}
		pos := make([]int, n)
		for _, layer := range adj {
			for j, v := range layer {
				pos[v] = j
			}
		}
		root := l.alignVertically(adj, pos, conflicts, up)
		xs := l.compact(adj, root, right)
		if right {
			for v := range xs {
				xs[v] = -xs[v]
			}
		}
		xss[i] = xs
	}

	// Align the four layouts to the narrowest one: the left-leaning ones
	// by their left ends, the right-leaning ones by their right ends.
	lo := func(xs []float64) float64 {
		m := math.Inf(1)
		for _, x := range xs {
			m = min(m, x)
		}
		return m
	}
	hi := func(xs []float64) float64 {
		m := math.Inf(-1)
		for _, x := range xs {
			m = max(m, x)
		}
		return m
	}
	narrowest, best := 0, math.Inf(1)
	for i, xs := range xss {
		left, right := math.Inf(1), math.Inf(-1)
		for v, x := range xs {
			left = min(left, x-l.nodes[v].lw)
			right = max(right, x+l.nodes[v].rw)
		}
		if right-left < best {
			narrowest, best = i, right-left
		}
	}
	for i, xs := range xss {
		delta := lo(xss[narrowest]) - lo(xs)
		if i%2 == 1 {
			delta = hi(xss[narrowest]) - hi(xs)
		}
		for v := range xs {
			xs[v] += delta
		}
	}
	var cand [4]float64
	for v := range l.nodes {
		for i := range xss {
			cand[i] = xss[i][v]
		}
		slices.Sort(cand[:])
		l.nodes[v].x = (cand[1] + cand[2]) / 2
	}

	// The balanced layout respects the separations in theory; enforce
	// them against rounding.
	for _, layer := range l.layers {
		for j := 1; j < len(layer); j++ {
			u, v := layer[j-1], layer[j]
			if lim := l.nodes[u].x + l.sep(u, v, false); l.nodes[v].x < lim {
				l.nodes[v].x = lim
			}
		}
	}
}

// conflictKey is an unordered pair of nodes.
func conflictKey(u, v int) [2]int {
	if u > v {
		u, v = v, u
	}
	return [2]int{u, v}
}

// conflicts marks the segments that must not be aligned: type 1 conflicts
// (a segment touching a real node that crosses a segment between two
// dummies), and every segment between a reversed edge's dummy and a real
// node.
func (l *layouter) conflicts() map[[2]int]bool {
	c := make(map[[2]int]bool)
	for r := 1; r < len(l.layers); r++ {
		prev, layer := l.layers[r-1], l.layers[r]
		k0, scan := 0, 0
		for i, v := range layer {
			inner := -1
			if l.nodes[v].isDummy() {
				for _, u := range l.nodes[v].up {
					if l.nodes[u].isDummy() {
						inner = u
						break
					}
				}
			}
			k1 := len(prev)
			if inner >= 0 {
				k1 = l.nodes[inner].order
			}
			if inner < 0 && i != len(layer)-1 {
				continue
			}
			for _, s := range layer[scan : i+1] {
				for _, u := range l.nodes[s].up {
					p := l.nodes[u].order
					if (p < k0 || k1 < p) && !(l.nodes[u].isDummy() && l.nodes[s].isDummy()) {
						c[conflictKey(u, s)] = true
					}
				}
			}
			scan, k0 = i+1, k1
		}
	}
	for i := range l.edges {
		e := &l.edges[i]
		if !e.rev {
			continue
		}
		for j := 1; j < len(e.chain); j++ {
			u, v := e.chain[j-1], e.chain[j]
			if l.nodes[u].isDummy() != l.nodes[v].isDummy() {
				c[conflictKey(u, v)] = true
			}
		}
	}
	return c
}

// alignVertically builds the blocks of one Brandes–Köpf pass: each node is
// aligned with a median neighbour on the previous layer of adj when that
// keeps alignments from crossing. It returns each node's block root.
func (l *layouter) alignVertically(adj [][]int, pos []int, conflicts map[[2]int]bool, up bool) []int {
	root := make([]int, len(l.nodes))
	align := make([]int, len(l.nodes))
	for v := range root {
		root[v], align[v] = v, v
	}
	var ws []int
	for _, layer := range adj {
		prevIdx := -1
		for _, v := range layer {
			if up {
				ws = append(ws[:0], l.nodes[v].up...)
			} else {
				ws = append(ws[:0], l.nodes[v].down...)
			}
			if len(ws) == 0 {
				continue
			}
			slices.SortStableFunc(ws, func(a, b int) int { return pos[a] - pos[b] })
			mid := float64(len(ws)-1) / 2
			for i := int(math.Floor(mid)); i <= int(math.Ceil(mid)); i++ {
				w := ws[i]
				if align[v] == v && prevIdx < pos[w] && !conflicts[conflictKey(v, w)] {
					align[w] = v
					root[v] = root[w]
					align[v] = root[v]
					prevIdx = pos[w]
				}
			}
		}
	}
	return root
}

// sep is the least distance between the x of u and that of v when they are
// neighbours on a layer: u left of v, or right of it when flipped.
func (l *layouter) sep(u, v int, flipped bool) float64 {
	a, b := &l.nodes[u], &l.nodes[v]
	if flipped {
		return a.lw + a.pad + b.pad + b.rw
	}
	return a.rw + a.pad + b.pad + b.lw
}

// compact places the blocks as far left as the separations allow, then
// pulls each block right towards its right neighbours where that is free,
// and returns every node's x.
func (l *layouter) compact(adj [][]int, root []int, flipped bool) []float64 {
	n := len(l.nodes)
	type bedge struct {
		to int
		w  float64
	}
	out := make([][]bedge, n)
	in := make([][]bedge, n)
	seen := make(map[[2]int]int)
	for _, layer := range adj {
		for j := 1; j < len(layer); j++ {
			u, v := layer[j-1], layer[j]
			ru, rv := root[u], root[v]
			w := l.sep(u, v, flipped)
			if k, ok := seen[[2]int{ru, rv}]; ok {
				out[ru][k].w = max(out[ru][k].w, w)
				continue
			}
			seen[[2]int{ru, rv}] = len(out[ru])
			out[ru] = append(out[ru], bedge{rv, w})
		}
	}
	indeg := make([]int, n)
	for u := range out {
		for _, e := range out[u] {
			in[e.to] = append(in[e.to], bedge{u, e.w})
			indeg[e.to]++
		}
	}
	topo := make([]int, 0, n)
	for v := range n {
		if root[v] == v && indeg[v] == 0 {
			topo = append(topo, v)
		}
	}
	for i := 0; i < len(topo); i++ {
		for _, e := range out[topo[i]] {
			if indeg[e.to]--; indeg[e.to] == 0 {
				topo = append(topo, e.to)
			}
		}
	}
	if len(topo) < n {
		// A cycle among blocks cannot happen with consistent alignments;
		// place any leftovers anyway rather than lose them.
		done := make([]bool, n)
		for _, v := range topo {
			done[v] = true
		}
		for v := range n {
			if root[v] == v && !done[v] {
				topo = append(topo, v)
			}
		}
	}
	xs := make([]float64, n)
	for _, b := range topo {
		for _, e := range in[b] {
			xs[b] = max(xs[b], xs[e.to]+e.w)
		}
	}
	for i := len(topo) - 1; i >= 0; i-- {
		b := topo[i]
		if len(out[b]) == 0 {
			continue
		}
		m := math.Inf(1)
		for _, e := range out[b] {
			m = min(m, xs[e.to]-e.w)
		}
		xs[b] = max(xs[b], m)
	}
	for v := range xs {
		xs[v] = xs[root[v]]
	}
	return xs
}

// assignY stacks the layers from the top, each as tall as its tallest
// member. The gap between two layers grows with the horizontal distance the
// edges between them travel, so that their curves stay gentle.
func (l *layouter) assignY() {
	l.rankH = make([]float64, len(l.layers))
	l.rankY = make([]float64, len(l.layers))
	for r, layer := range l.layers {
		for _, v := range layer {
			l.rankH[r] = max(l.rankH[r], l.nodes[v].h)
		}
	}
	y := 0.0
	for r := range l.layers {
		if r > 0 {
			spread := 0.0
			for _, v := range l.layers[r-1] {
				for _, w := range l.nodes[v].down {
					a, b := &l.nodes[v], &l.nodes[w]
					if (a.back && !b.isDummy()) || (b.back && !a.isDummy()) {
						continue // reversed edges mostly end on a node's side
					}
					spread = max(spread, math.Abs(a.x-b.x))
				}
			}
			gap := min(maxRankGap, max(rankGap, spread*gapSlope))
			y += l.rankH[r-1]/2 + gap + l.rankH[r]/2
		}
		l.rankY[r] = y
		for _, v := range l.layers[r] {
			l.nodes[v].y = y
		}
	}
}
