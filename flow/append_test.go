package flow

import (
	"fmt"
	"sync"
	"testing"
)

func strs(v Value) []string {
	var out []string
	for _, e := range v.List() {
		out = append(out, e.Str())
	}
	return out
}

func TestAppendListKeepsEveryListImmutable(t *testing.T) {
	var chain []Value
	v := Null
	for i := range 20 {
		var ok bool
		v, ok = AppendList(v, StringValue(fmt.Sprint(i)))
		if !ok {
			t.Fatal("append to a List refused")
		}
		chain = append(chain, v)
	}
	// An older List appended to (a fork) must not overwrite what the
	// newer Lists of its chain hold.
	fork, _ := AppendList(chain[4], StringValue("fork"))
	again, _ := AppendList(chain[19], StringValue("20"), StringValue("21"))
	for i, c := range chain {
		got := strs(c)
		if len(got) != i+1 || got[i] != fmt.Sprint(i) || got[0] != "0" {
			t.Fatalf("list %d changed: %v", i, got)
		}
	}
	if got := strs(fork); len(got) != 6 || got[5] != "fork" || got[4] != "4" {
		t.Errorf("fork = %v", got)
	}
	if got := strs(again); len(got) != 22 || got[21] != "21" {
		t.Errorf("again = %v", got)
	}
	if !chain[7].Same(chain[7]) || chain[7].Same(chain[8]) || chain[4].Same(fork) {
		t.Error("Same is wrong on appended lists")
	}
	if chain[3].Kind() != KindList || chain[3].Len() != 4 || !chain[3].Equal(StringList("0", "1", "2", "3")) {
		t.Errorf("appended list %v is not the List [0 1 2 3]", chain[3])
	}
	// Appending to a List made by ListValue, or nothing, works too.
	base := StringList("a", "b")
	x, _ := AppendList(base, StringValue("c"))
	if got := strs(x); len(got) != 3 || got[2] != "c" || base.Len() != 2 {
		t.Errorf("append to ListValue: %v (base %v)", got, strs(base))
	}
	if same, _ := AppendList(base); !same.Same(base) {
		t.Error("appending nothing made a new list")
	}
	if _, ok := AppendList(IntValue(1), IntValue(2)); ok {
		t.Error("append to an Int accepted")
	}
}

// TestAppendListConcurrent appends to the same List from many goroutines
// (as parallel runs sharing a parameter would): each result must hold the
// base and its own element, whoever won the in-place slot. Run with -race.
func TestAppendListConcurrent(t *testing.T) {
	base, _ := AppendList(Null, StringValue("base"))
	const n = 16
	out := make([]Value, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out[i], _ = AppendList(base, IntValue(int64(i)))
		})
	}
	wg.Wait()
	for i, v := range out {
		l := v.List()
		if len(l) != 2 || l[0].Str() != "base" || l[1].Int() != int64(i) {
			t.Errorf("goroutine %d got %v", i, v)
		}
	}
}

func BenchmarkAppendReducer(b *testing.B) {
	red := builtinReducers[ReduceAppend].fn
	x := StringValue("x")
	b.ReportAllocs()
	for b.Loop() {
		v := Null
		for range 100 {
			v, _ = red(v, x)
		}
		if v.Len() != 100 {
			b.Fatal(v.Len())
		}
	}
}

func TestStringsOfAGrowingList(t *testing.T) {
	v := Null
	var views [][]string
	for i := range 12 {
		v, _ = AppendList(v, StringValue(fmt.Sprint(i)))
		ss, ok := v.Strings()
		if !ok || len(ss) != i+1 || cap(ss) != len(ss) || ss[i] != fmt.Sprint(i) {
			t.Fatalf("step %d: Strings() = %v, %v", i, ss, ok)
		}
		views = append(views, ss)
	}
	// Earlier views are unchanged by later reads, and appending to one
	// copies instead of writing into the shared strings.
	for i, ss := range views {
		if len(ss) != i+1 || ss[0] != "0" || ss[i] != fmt.Sprint(i) {
			t.Errorf("view %d changed: %v", i, ss)
		}
	}
	_ = append(views[3], "x")
	if again, _ := v.Strings(); again[4] != "4" {
		t.Errorf("append to a view changed the list's strings: %v", again)
	}
	if _, ok := StringList("a", "b").Strings(); !ok {
		t.Error("Strings of a ListValue list refused")
	}
	mixed, _ := AppendList(StringList("a"), IntValue(1))
	if _, ok := mixed.Strings(); ok {
		t.Error("Strings of a list holding an Int accepted")
	}
	if _, ok := IntValue(3).Strings(); ok {
		t.Error("Strings of an Int accepted")
	}
}
