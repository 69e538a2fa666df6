package main

import (
	"encoding/json"
	"reflect"
	"strings"
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

// TestPrivateMemory checks that load.mjs's RssAnon peak reaches the table
// as its own column, next to peak RSS, and as a ratio of its own.
func TestPrivateMemory(t *testing.T) {
	var weft, lg sample
	for _, x := range []struct {
		s    *sample
		line string
	}{
		{&weft, `{"c":1,"n":5,"ok":5,"conv_per_s":10,"server_rss_peak_kib":40000,"server_rss_anon_peak_kib":10240}`},
		{&lg, `{"c":1,"n":5,"ok":5,"conv_per_s":5,"server_rss_peak_kib":180000,"server_rss_anon_peak_kib":122880}`},
	} {
		if err := json.Unmarshal([]byte(x.line), x.s); err != nil {
			t.Fatal(err)
		}
	}
	weft.Server, weft.Load, weft.HWMKiB = "weft", "1", 41*1024
	lg.Server, lg.Load, lg.HWMKiB = "langgraphjs", "1", 205*1024
	cfg := &config{rounds: 1, loads: []load{{C: 1, N: 5}}, servers: []string{"weft", "langgraphjs"}}
	var b strings.Builder
	printTable(&b, cfg, []sample{weft, lg})
	out := b.String()
	for _, want := range []string{
		"| peak RSS MiB | peak private MiB | errors |",
		"| 1 | weft | 5 | 10.0 | – | – | – | – | 0.00 | 41 | 10.0 | 0 of 5 |",
		"| 1 | langgraphjs | 5 | 5.0 | – | – | – | – | 0.00 | 205 | 120.0 | 0 of 5 |",
		"| server CPU/conv | peak RSS | peak private |",
		"| 1 | 2.0x | – | – | – | – | 5.0x | 12.0x |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// No RssAnon reading is no figure, not 0 MiB.
	weft.AnonPeakKiB = 0
	b.Reset()
	printTable(&b, cfg, []sample{weft, lg})
	if want := "| 41 | – | 0 of 5 |"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}
