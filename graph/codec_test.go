package graph_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/graph"
)

type Base struct {
	Kind string `json:"kind"`
}

type Embedded struct {
	Base
	Extra int `json:"extra,omitempty"`
}

type Tree struct {
	Name string  `json:"name"`
	Kids []*Tree `json:"kids,omitempty"`
}

type Level int8

type Tag string

type rich struct {
	When     time.Time          `weft:"when"`
	Wait     time.Duration      `weft:"wait,sum"`
	Meta     map[string]int     `weft:"meta,merge"`
	Byte     []byte             `weft:"bytes"`
	Arr      [2]float64         `weft:"arr"`
	Any      any                `weft:"any"`
	Val      flow.Value         `weft:"val"`
	Ptr      *Doc               `weft:"ptr"`
	Emb      Embedded           `weft:"emb"`
	Tree     Tree               `weft:"tree"`
	Level    Level              `weft:"level"`
	Tags     []Tag              `weft:"tags,append"`
	U        uint16             `weft:"u"`
	IntKeys  map[int]string     `weft:"int_keys"`
	Nested   map[string][]Doc   `weft:"nested"`
	Hidden   string             `weft:"-"`
	F32      float32            `weft:"f32,max"`
	Matrix   [][]string         `weft:"matrix,append"`
	Optional map[string]float64 `weft:"optional"`
}

func richValue() rich {
	return rich{
		When:    time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
		Wait:    time.Second,
		Meta:    map[string]int{"a": 1},
		Byte:    []byte("hi"),
		Arr:     [2]float64{1.5, 2},
		Any:     map[string]any{"k": []any{int64(1), "x"}},
		Val:     flow.StringList("v"),
		Ptr:     &Doc{ID: "p", Score: 0.5},
		Emb:     Embedded{Base: Base{Kind: "k"}, Extra: 3},
		Tree:    Tree{Name: "root", Kids: []*Tree{{Name: "leaf"}}},
		Level:   -3,
		Tags:    []Tag{"t1"},
		U:       65535,
		IntKeys: map[int]string{1: "one"},
		Nested:  map[string][]Doc{"n": {{ID: "d"}}},
		F32:     1.25,
		Matrix:  [][]string{{"a", "b"}},
	}
}

func TestRichStateRoundTrip(t *testing.T) {
	type update struct {
		Wait   time.Duration
		Meta   map[string]int
		Tags   Tag
		F32    float32
		Matrix [][]string
		Level  *Level // optional: nil keeps the state's Level
		Ptr    *Doc   // the state field's own type: nil writes nil
	}
	g := graph.New[rich]("rich")
	graph.AddNode(g, "same", func(_ context.Context, s rich) (graph.Nothing, error) {
		if !reflect.DeepEqual(s, richValue()) {
			return graph.Nothing{}, errors.New("the node sees a different state")
		}
		return graph.Nothing{}, nil
	})
	graph.AddNode(g, "change", func(_ context.Context, s rich) (update, error) {
		return update{Wait: time.Minute, Meta: map[string]int{"b": 2}, Tags: "t2", F32: 0.5, Matrix: [][]string{{"c"}}}, nil
	})
	g.SetEntry("same")
	g.AddEdge("same", "change")
	g.AddConditionalEdges("change", func(s rich) string {
		// The routing function sees every reducer applied.
		if s.Wait != time.Minute+time.Second || len(s.Meta) != 2 || len(s.Tags) != 2 || s.F32 != 1.25 || len(s.Matrix) != 2 || s.Ptr != nil || s.Level != -3 {
			return fmt.Sprintf("wrong: %v %v %v %v %v %v", s.Wait, s.Meta, s.Tags, s.F32, s.Matrix, s.Ptr)
		}
		return graph.END
	}, graph.END)
	c := compile(t, g, graph.Options{})
	in := richValue()
	in.Hidden = "not state"
	out, err := c.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := richValue()
	want.Wait = time.Minute + time.Second
	want.Meta = map[string]int{"a": 1, "b": 2}
	want.Tags = []Tag{"t1", "t2"}
	want.Matrix = [][]string{{"a", "b"}, {"c"}}
	want.Ptr = nil
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got  %+v\nwant %+v", out, want)
	}
	types := map[string]string{}
	for _, v := range c.Workflow().Vars {
		types[v.Name] = v.Type.String()
	}
	for name, typ := range map[string]string{"when": "Any", "wait": "Duration", "meta": "Object", "bytes": "String", "arr": "List[Float]",
		"ptr": "Any", "emb": "Object", "tags": "List[String]", "u": "Int", "matrix": "List[List[String]]", "tree": "Object"} {
		if types[name] != typ {
			t.Errorf("%s: type %s, want %s", name, types[name], typ)
		}
	}
	if _, ok := types["hidden"]; ok {
		t.Error("a weft:\"-\" field is state")
	}
}

func TestZeroStateRoundTrip(t *testing.T) {
	g := graph.New[rich]("zero")
	graph.AddNode(g, "a", func(_ context.Context, s rich) (rich, error) { return rich{}, nil })
	g.SetEntry("a")
	g.AddEdge("a", graph.END)
	c := compile(t, g, graph.Options{})
	out, err := c.Invoke(context.Background(), rich{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, rich{}) {
		t.Errorf("got %+v", out)
	}
}

func TestConversionErrors(t *testing.T) {
	type st struct {
		Small int8 `weft:"small,sum"`
		Big   uint64
	}
	g := graph.New[st]("overflow")
	graph.AddNode(g, "a", func(_ context.Context, s st) (st, error) { return st{Small: 100}, nil })
	graph.AddNode(g, "b", func(_ context.Context, s st) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("a")
	g.AddEdge("a", "b")
	g.AddEdge("b", graph.END)
	c := compile(t, g, graph.Options{})
	// 100 + 100 overflows int8 when b reads it.
	_, err := c.Invoke(context.Background(), st{Small: 100})
	var fe *graph.FieldError
	var ne *engine.NodeError
	if !errors.As(err, &fe) || fe.Field != "Small" || fe.Node != "b" || !errors.As(err, &ne) || ne.Node != "b" {
		t.Fatalf("error %v", err)
	}
	// A uint64 beyond Int cannot enter the run.
	_, err = c.Invoke(context.Background(), st{Big: 1 << 63})
	if !errors.As(err, &fe) || fe.Field != "Big" || fe.Node != "" {
		t.Fatalf("error %v", err)
	}
}

func TestUnsupportedTypes(t *testing.T) {
	type st struct {
		Err error
		C   complex128
	}
	g := graph.New[st]("unsupported")
	graph.AddNode(g, "a", func(context.Context, st) (graph.Nothing, error) { return graph.Nothing{}, nil })
	g.SetEntry("a")
	g.AddEdge("a", graph.END)
	wantIn(t, compileErr(t, g), "field Err: interface type error", "field C: Go type complex128")

	g2 := graph.New[int]("notastruct")
	wantIn(t, compileErr(t, g2), "state type int is not a struct")
}

func TestAmbiguousElementUpdate(t *testing.T) {
	type st struct {
		Rows [][]string `weft:"rows,append"`
	}
	type up struct{ Rows []string }
	g := graph.New[st]("ambiguous")
	graph.AddNode(g, "a", func(context.Context, st) (up, error) { return up{}, nil })
	g.SetEntry("a")
	g.AddEdge("a", graph.END)
	wantIn(t, compileErr(t, g), "node a", "field Rows", "ambiguous")
}
