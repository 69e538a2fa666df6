package blevesearch

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDateMath(t *testing.T) {
	now := time.Date(2025, 3, 15, 10, 30, 45, 123_000_000, time.UTC)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	cases := []struct {
		in      string
		roundUp bool
		loc     *time.Location
		want    string
	}{
		{"2025-03-15", false, time.UTC, "2025-03-15T00:00:00.000Z"},
		{"2025-03-15", true, time.UTC, "2025-03-15T23:59:59.999Z"},
		{"2025-03", false, time.UTC, "2025-03-01T00:00:00.000Z"},
		{"2025-03", true, time.UTC, "2025-03-01T23:59:59.999Z"}, // as Elasticsearch documents
		{"2025", true, time.UTC, "2025-01-01T23:59:59.999Z"},
		{"2025-03-15T10", true, time.UTC, "2025-03-15T10:59:59.999Z"},
		{"2025-03-15T10:30", false, time.UTC, "2025-03-15T10:30:00.000Z"},
		{"2025-03-15T10:30:15.5", false, time.UTC, "2025-03-15T10:30:15.500Z"},
		{"2025-03-15T10:30:15.123456789Z", false, time.UTC, "2025-03-15T10:30:15.123Z"},
		{"2025-03-15T10:30:15+02:00", false, time.UTC, "2025-03-15T08:30:15.000Z"},
		{"2025-03-15T10:30:15-0530", false, time.UTC, "2025-03-15T16:00:15.000Z"},
		{"2025-03-15", false, time.FixedZone("", 2*3600), "2025-03-14T22:00:00.000Z"},
		{"1741996800000", false, time.UTC, "2025-03-15T00:00:00.000Z"},
		{"now", false, time.UTC, "2025-03-15T10:30:45.123Z"},
		{"now/d", false, time.UTC, "2025-03-15T00:00:00.000Z"},
		{"now/d", true, time.UTC, "2025-03-15T23:59:59.999Z"},
		{"now-1M/M", false, time.UTC, "2025-02-01T00:00:00.000Z"},
		{"now+1y", false, time.UTC, "2026-03-15T10:30:45.123Z"},
		{"now-2w/w", false, time.UTC, "2025-02-24T00:00:00.000Z"}, // a Monday
		{"now-1h/H", true, time.UTC, "2025-03-15T09:59:59.999Z"},
		{"now+d", false, time.UTC, "2025-03-16T10:30:45.123Z"},
		{"now/d", false, paris, "2025-03-14T23:00:00.000Z"},
		{"2025-01-31||+1M", false, time.UTC, "2025-02-28T00:00:00.000Z"},
		{"2024-02-29||+1y", false, time.UTC, "2025-02-28T00:00:00.000Z"},
		{"2025-03-15||/M", true, time.UTC, "2025-03-31T23:59:59.999Z"},
		{"2025-03-15||-1d/d", true, time.UTC, "2025-03-14T23:59:59.999Z"},
	}
	for _, c := range cases {
		got, err := dateMath(c.in, c.roundUp, now, c.loc, defaultDateFormats())
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if s := got.UTC().Format("2006-01-02T15:04:05.000Z"); s != c.want {
			t.Errorf("dateMath(%q, roundUp=%v, %v) = %s, want %s", c.in, c.roundUp, c.loc, s, c.want)
		}
	}
	for _, bad := range []string{"", "2025-13-01", "2025-02-30", "2025-03-15T25", "25-03-15", "2025-03-15 10:00",
		"2025-03-15T10:00Z+1", "now-", "now*2d", "now+1q", "2025-03-15Z", "yesterday", "2025-03-15||+"} {
		if got, err := dateMath(bad, false, now, time.UTC, defaultDateFormats()); err == nil {
			t.Errorf("dateMath(%q) = %v, want an error", bad, got)
		}
	}
}

func TestDateFormats(t *testing.T) {
	cases := []struct {
		format, in, want string
		roundUp          bool
	}{
		{"dd/MM/yyyy", "05/03/2025", "2025-03-05T00:00:00.000Z", false},
		{"dd/MM/yyyy", "05/03/2025", "2025-03-05T23:59:59.999Z", true},
		{"yyyy-MM-dd HH:mm:ss", "2025-03-05 07:08:09", "2025-03-05T07:08:09.000Z", false},
		{"yyyy-MM-dd'T'HH:mm", "2025-03-05T07:08", "2025-03-05T07:08:00.000Z", false},
		{"d/M/yyyy", "5/3/2025", "2025-03-05T00:00:00.000Z", false},
		{"yyyyMMdd", "20250305", "2025-03-05T00:00:00.000Z", false},
		{"basic_date", "20250305", "2025-03-05T00:00:00.000Z", false},
		{"strict_date", "2025-03-05", "2025-03-05T00:00:00.000Z", false},
		{"epoch_second", "1741132800", "2025-03-05T00:00:00.000Z", false},
		{"epoch_millis||dd/MM/yyyy", "05/03/2025", "2025-03-05T00:00:00.000Z", false},
	}
	for _, c := range cases {
		f, ok := parseDateFormats(c.format)
		if !ok {
			t.Errorf("format %q not supported", c.format)
			continue
		}
		got, err := dateMath(c.in, c.roundUp, time.Now(), time.UTC, f)
		if err != nil {
			t.Errorf("%s %s: %v", c.format, c.in, err)
			continue
		}
		if s := got.UTC().Format("2006-01-02T15:04:05.000Z"); s != c.want {
			t.Errorf("%s %s = %s, want %s", c.format, c.in, s, c.want)
		}
	}
	for _, bad := range []string{"MMM dd", "yy-MM-dd", "EEE", "'unterminated", "HHH"} {
		if _, ok := parseDateFormats(bad); ok {
			t.Errorf("format %q accepted", bad)
		}
	}
}

func TestWildcardRegexp(t *testing.T) {
	cases := []struct {
		in, re       string
		literal, all bool
	}{
		{"abc", "abc", true, false},
		{"a*c", "a.*c", false, false},
		{"a?c", "a.c", false, false},
		{"*", ".*", false, true},
		{"**", ".*.*", false, true},
		{`a\*c`, `a\*c`, true, false},
		{"a.c+", `a\.c\+`, true, false},
		{"é*", "é.*", false, false},
		{`\`, `\\`, true, false},
	}
	for _, c := range cases {
		re, lit, all := wildcardRegexp(c.in)
		if re != c.re || lit != c.literal || all != c.all {
			t.Errorf("wildcardRegexp(%q) = %q %v %v, want %q %v %v", c.in, re, lit, all, c.re, c.literal, c.all)
		}
	}
	if got := unescapeWildcard(`a\*b\\c`); got != `a*b\c` {
		t.Errorf("unescape = %q", got)
	}
}

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"*", "anything.at.all", true}, {"origin.*", "origin.port", true}, {"origin.*", "origin", false},
		{"*_date", "departure_date", true}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false},
		{"name", "name", true}, {"name", "names", false}, {"", "", true},
	} {
		if got := glob(c.p, c.s); got != c.ok {
			t.Errorf("glob(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func TestMinimumShouldMatch(t *testing.T) {
	for _, c := range []struct {
		v    any
		n    int
		want int
	}{
		{json.Number("2"), 5, 2}, {json.Number("-2"), 5, 3}, {"75%", 4, 3}, {"-25%", 4, 3},
		{"60%", 3, 1}, {"-60%", 3, 2}, {"100%", 3, 3}, {json.Number("-9"), 3, 0}, {"0", 3, 0},
	} {
		got, err := parseMSM("msm", c.v, c.n)
		if err != nil || got != c.want {
			t.Errorf("parseMSM(%v, %d) = %d, %v; want %d", c.v, c.n, got, err, c.want)
		}
	}
}

func TestSourceFilter(t *testing.T) {
	src := []byte(`{"a": 1, "b": {"c": 2, "d": [{"e": 3, "f": 4}]}, "g_date": "x"}`)
	for _, c := range []struct {
		f    sourceFilter
		want string
	}{
		{sourceFilter{includes: []string{"a"}}, `{"a":1}`},
		{sourceFilter{includes: []string{"b.d.e"}}, `{"b":{"d":[{"e":3}]}}`},
		{sourceFilter{includes: []string{"*_date", "b.c"}}, `{"b":{"c":2},"g_date":"x"}`},
		{sourceFilter{excludes: []string{"b"}}, `{"a":1,"g_date":"x"}`},
		{sourceFilter{includes: []string{"b"}, excludes: []string{"b.d"}}, `{"b":{"c":2}}`},
		{sourceFilter{includes: []string{"zzz"}}, `{}`},
	} {
		if got := string(c.f.apply(src)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
	if got := (sourceFilter{}).apply(src); string(got) != string(src) {
		t.Errorf("identity changed the source: %s", got)
	}
	if got := (sourceFilter{disabled: true}).apply(src); got != nil {
		t.Errorf("disabled: %s", got)
	}
}
