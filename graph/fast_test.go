package graph_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weftlang/weft/graph"
)

// The fast path (simple field shapes, no reflection per step) and the
// reflective path must agree. fastState has only fast shapes; slowState
// adds a field that forces the reflective path.

type fastState struct {
	B    bool          `weft:"b"`
	I    int           `weft:"i,sum"`
	I64  int64         `weft:"i64,max"`
	I32  int32         `weft:"i32,min"`
	F    float64       `weft:"f,sum"`
	S    string        `weft:"s"`
	L    []string      `weft:"l,append"`
	D    time.Duration `weft:"d,sum"`
	Tags []Tag         `weft:"tags"`
	Lvl  Tag           `weft:"lvl"`
}

type slowState struct {
	B    bool          `weft:"b"`
	I    int           `weft:"i,sum"`
	I64  int64         `weft:"i64,max"`
	I32  int32         `weft:"i32,min"`
	F    float64       `weft:"f,sum"`
	S    string        `weft:"s"`
	L    []string      `weft:"l,append"`
	D    time.Duration `weft:"d,sum"`
	Tags []Tag         `weft:"tags"`
	Lvl  Tag           `weft:"lvl"`
	X    any           `weft:"x"`
}

type fastUpdate struct {
	B    *bool
	I    int
	I64  int64
	I32  *int32
	F    float64
	S    *string
	L    string
	D    time.Duration
	Tags []Tag
	Lvl  *Tag
}

func runKinds[T any](t *testing.T, seen *[]string) T {
	t.Helper()
	yes, word, small, tag := true, "w", int32(-4), Tag("x")
	g := graph.New[T]("kinds")
	step := 0
	graph.AddNode(g, "n", func(_ context.Context, s T) (fastUpdate, error) {
		step++
		if step%2 == 1 {
			return fastUpdate{B: &yes, I: 2, I64: 9, I32: &small, F: 0.5, S: &word, L: "odd", D: time.Second, Tags: []Tag{"a"}, Lvl: &tag}, nil
		}
		return fastUpdate{I: 3, I64: 1, F: 0.25, L: "even", D: time.Millisecond}, nil
	})
	g.SetEntry("n")
	g.AddConditionalEdges("n", func(s T) string {
		*seen = append(*seen, fmt.Sprintf("%+v", s))
		if len(*seen) < 4 {
			return "n"
		}
		return graph.END
	}, "n", graph.END)
	c := compile(t, g, graph.Options{})
	var in T
	reflect.ValueOf(&in).Elem().FieldByName("I32").SetInt(10)
	reflect.ValueOf(&in).Elem().FieldByName("S").SetString("start")
	out, err := c.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFastAndReflectivePathsAgree(t *testing.T) {
	var fastSeen, slowSeen []string
	f := runKinds[fastState](t, &fastSeen)
	s := runKinds[slowState](t, &slowSeen)
	want := fastState{B: true, I: 10, I64: 9, I32: -4, F: 1.5, S: "w", L: []string{"odd", "even", "odd", "even"}, D: 2*time.Second + 2*time.Millisecond, Tags: nil, Lvl: "x"}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("fast path: %+v\nwant       %+v", f, want)
	}
	got := fastState{B: s.B, I: s.I, I64: s.I64, I32: s.I32, F: s.F, S: s.S, L: s.L, D: s.D, Tags: s.Tags, Lvl: s.Lvl}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reflective path: %+v\nwant            %+v", got, want)
	}
	for i := range fastSeen {
		// The routing functions saw the same states (the slow one has
		// one more field, printed last).
		if want := fastSeen[i][:len(fastSeen[i])-1]; slowSeen[i][:len(want)] != want {
			t.Errorf("routing saw\n%s\n%s", fastSeen[i], slowSeen[i])
		}
	}
}
