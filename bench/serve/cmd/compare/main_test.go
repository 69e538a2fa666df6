package main

import (
	"reflect"
	"testing"
)

func TestParseLoads(t *testing.T) {
	got, err := parseLoads("1:100, 10:1000,s10:50")
	if err != nil {
		t.Fatal(err)
	}
	want := []load{{C: 1, N: 100}, {C: 10, N: 1000}, {C: 10, N: 50, Stream: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseLoads = %+v, want %+v", got, want)
	}
	if got[2].String() != "10 stream" || got[0].String() != "1" {
		t.Fatalf("names %q %q", got[2], got[0])
	}
	for _, bad := range []string{"", "10", "0:5", "5:0", "x:1", "s:1", "1:2:3"} {
		if _, err := parseLoads(bad); err == nil {
			t.Errorf("parseLoads(%q): no error", bad)
		}
	}
}

func TestCell(t *testing.T) {
	if got := cell([]float64{3, 1, 2}, "%.1f"); got != "2.0 (1.0–3.0)" {
		t.Fatalf("cell = %q", got)
	}
	if got := cell([]float64{4, 1}, "%.0f"); got != "2 (1–4)" { // median of two: their mean, 2.5 printed as 2
		t.Fatalf("cell = %q", got)
	}
	if got := cell(nil, "%.1f"); got != "–" {
		t.Fatalf("cell = %q", got)
	}
}
