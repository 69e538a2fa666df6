package viz

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzLayout builds a graph from arbitrary bytes and checks that nothing
// panics and that the drawing keeps its promises.
func FuzzLayout(f *testing.F) {
	f.Add([]byte{3, 0, 1, 1, 2, 2, 0, 0, 0})
	f.Add([]byte("\x05\x01\x02\x03\x04\x00\x00\x01\x02\x03\x04\x04\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b
		}
		n := 1 + next()%16
		g := &Graph{}
		for i := range n {
			b := next()
			g.Nodes = append(g.Nodes, Node{
				ID: fmt.Sprint("n", i), Label: string(bytes.Repeat([]byte("w "), b%30)),
				Kind: NodeKind(b % int(numNodeKinds)), Initial: b&8 != 0, Final: b&16 != 0,
			})
		}
		for len(data) >= 3 {
			from, to, b := next()%n, next()%n, next()
			g.Edges = append(g.Edges, Edge{
				From: fmt.Sprint("n", from), To: fmt.Sprint("n", to),
				Kind: EdgeKind(b % int(numEdgeKinds)), Label: string(bytes.Repeat([]byte("c"), b%50)),
			})
		}
		d, err := Layout(g)
		if err != nil {
			t.Fatal(err)
		}
		checkDrawing(t, g, d)
		var buf bytes.Buffer
		if err := SVG(&buf, g); err != nil {
			t.Fatal(err)
		}
		checkXML(t, buf.Bytes())
	})
}
