package blevesearch

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The instants the embedded index can hold: Bleve stores dates as int64
// nanoseconds since the Unix epoch.
var (
	minIndexTime = time.Date(1677, 12, 1, 0, 0, 0, 0, time.UTC)
	maxIndexTime = time.Date(2262, 4, 11, 11, 59, 59, 0, time.UTC)
)

// dateFormat parses one date string. roundUp fills missing components with
// their largest value, as Elasticsearch does for the gt and lte bounds of a
// range.
type dateFormat func(s string, roundUp bool, loc *time.Location) (time.Time, bool)

// defaultDateFormats is Elasticsearch's default date format,
// "strict_date_optional_time||epoch_millis".
func defaultDateFormats() []dateFormat {
	return []dateFormat{parseISODate, parseEpochMillis}
}

// parseDateFormats parses the format parameter of a range query: formats
// separated by "||". ok is false for formats outside the supported set.
func parseDateFormats(spec string) (formats []dateFormat, ok bool) {
	for name := range strings.SplitSeq(spec, "||") {
		switch name {
		case "strict_date_optional_time", "date_optional_time", "strict_date_optional_time_nanos",
			"strict_date_time", "date_time", "strict_date_time_no_millis", "date_time_no_millis",
			"strict_date_hour_minute_second", "date_hour_minute_second":
			formats = append(formats, parseISODate)
		case "epoch_millis":
			formats = append(formats, parseEpochMillis)
		case "epoch_second":
			formats = append(formats, parseEpochSecond)
		case "strict_date", "date":
			formats = append(formats, javaPattern("yyyy-MM-dd"))
		case "basic_date":
			formats = append(formats, javaPattern("yyyyMMdd"))
		default:
			if !validJavaPattern(name) {
				return nil, false
			}
			formats = append(formats, javaPattern(name))
		}
	}
	return formats, len(formats) > 0
}

// fill returns the instant for the given components, where a negative
// component is missing and is filled as Elasticsearch does: month and day
// with 1; hour, minute, second and fraction with 0, or with their largest
// value when roundUp is set.
func fill(y, mo, d, h, mi, s, ns int, roundUp bool, loc *time.Location) (time.Time, bool) {
	if mo < 0 {
		mo = 1
	}
	if d < 0 {
		d = 1
	}
	hi := func(v, max int) int {
		if v >= 0 {
			return v
		}
		if roundUp {
			return max
		}
		return 0
	}
	h, mi, s, ns = hi(h, 23), hi(mi, 59), hi(s, 59), hi(ns, 999_999_999)
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, time.Month(mo)) || h > 23 || mi > 59 || s > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, ns, loc)
	return truncMillis(t), true
}

func truncMillis(t time.Time) time.Time {
	return t.Add(-time.Duration(t.Nanosecond() % int(time.Millisecond)))
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// digits reads exactly n ASCII digits of s at i.
func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseISODate parses strict_date_optional_time:
// yyyy[-MM[-dd[Thh[:mm[:ss[.fraction]]]]]][zone], where zone is Z, ±hh,
// ±hhmm or ±hh:mm and the default zone is loc.
func parseISODate(s string, roundUp bool, loc *time.Location) (time.Time, bool) {
	y, ok := digits(s, 0, 4)
	if !ok {
		return time.Time{}, false
	}
	i := 4
	mo, d, h, mi, sec, ns := -1, -1, -1, -1, -1, -1
	if i < len(s) && s[i] == '-' {
		if mo, ok = digits(s, i+1, 2); !ok {
			return time.Time{}, false
		}
		i += 3
		if i < len(s) && s[i] == '-' {
			if d, ok = digits(s, i+1, 2); !ok {
				return time.Time{}, false
			}
			i += 3
			if i < len(s) && s[i] == 'T' {
				if h, ok = digits(s, i+1, 2); !ok {
					return time.Time{}, false
				}
				i += 3
				if i < len(s) && s[i] == ':' {
					if mi, ok = digits(s, i+1, 2); !ok {
						return time.Time{}, false
					}
					i += 3
					if i < len(s) && s[i] == ':' {
						if sec, ok = digits(s, i+1, 2); !ok {
							return time.Time{}, false
						}
						i += 3
						if i < len(s) && (s[i] == '.' || s[i] == ',') {
							j := i + 1
							for j < len(s) && j-i-1 < 9 && s[j] >= '0' && s[j] <= '9' {
								j++
							}
							if j == i+1 {
								return time.Time{}, false
							}
							frac := s[i+1 : j]
							v, _ := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
							ns = v
							i = j
						}
					}
				}
			}
		}
	}
	if i < len(s) {
		if h < 0 {
			// A zone needs a time.
			return time.Time{}, false
		}
		z, ok := parseZone(s[i:])
		if !ok {
			return time.Time{}, false
		}
		loc = z
	}
	return fill(y, mo, d, h, mi, sec, ns, roundUp, loc)
}

// parseZone parses Z, ±hh, ±hhmm or ±hh:mm.
func parseZone(z string) (*time.Location, bool) {
	if z == "Z" {
		return time.UTC, true
	}
	if len(z) < 3 || (z[0] != '+' && z[0] != '-') {
		return nil, false
	}
	hh, ok := digits(z, 1, 2)
	if !ok {
		return nil, false
	}
	mm := 0
	switch rest := z[3:]; {
	case rest == "":
	case len(rest) == 2:
		if mm, ok = digits(rest, 0, 2); !ok {
			return nil, false
		}
	case len(rest) == 3 && rest[0] == ':':
		if mm, ok = digits(rest, 1, 2); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	if hh > 18 || mm > 59 {
		return nil, false
	}
	off := hh*3600 + mm*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone(z, off), true
}

func parseEpochMillis(s string, _ bool, _ *time.Location) (time.Time, bool) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

func parseEpochSecond(s string, _ bool, _ *time.Location) (time.Time, bool) {
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec > 1<<40 || sec < -(1<<40) {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

// validJavaPattern reports whether p is a date pattern built from the
// supported letters yyyy, MM, dd, HH, mm, ss, SSS and literal punctuation
// (quoted 'T' included).
func validJavaPattern(p string) bool {
	els, ok := compileJava(p)
	return ok && len(els) > 0
}

type javaElem struct {
	letter  byte // 0 for a literal
	n       int
	literal string
}

func compileJava(p string) ([]javaElem, bool) {
	var els []javaElem
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(p[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			els = append(els, javaElem{literal: p[i+1 : i+1+j]})
			i += j + 2
		case strings.IndexByte("yMdHmsS", c) >= 0:
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			n := j - i
			switch c {
			case 'y':
				if n != 4 {
					return nil, false
				}
			case 'S':
				if n > 9 {
					return nil, false
				}
			default:
				if n > 2 {
					return nil, false
				}
			}
			els = append(els, javaElem{letter: c, n: n})
			i = j
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			return nil, false
		default:
			els = append(els, javaElem{literal: string(c)})
			i++
		}
	}
	return els, true
}

// javaPattern returns a parser for a validated Java-style pattern.
func javaPattern(p string) dateFormat {
	els, _ := compileJava(p)
	return func(s string, roundUp bool, loc *time.Location) (time.Time, bool) {
		y, mo, d, h, mi, sec, ns := -1, -1, -1, -1, -1, -1, -1
		i := 0
		for _, e := range els {
			if e.letter == 0 {
				if !strings.HasPrefix(s[i:], e.literal) {
					return time.Time{}, false
				}
				i += len(e.literal)
				continue
			}
			n := e.n
			if n == 1 && e.letter != 'S' {
				// One letter: one or two digits.
				n = 1
				if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
					n = 2
				}
			}
			v, ok := digits(s, i, n)
			if !ok {
				return time.Time{}, false
			}
			i += n
			switch e.letter {
			case 'y':
				y = v
			case 'M':
				mo = v
			case 'd':
				d = v
			case 'H':
				h = v
			case 'm':
				mi = v
			case 's':
				sec = v
			case 'S':
				for k := n; k < 9; k++ {
					v *= 10
				}
				ns = v
			}
		}
		if i != len(s) || y < 0 {
			return time.Time{}, false
		}
		return fill(y, mo, d, h, mi, sec, ns, roundUp, loc)
	}
}

// dateMath evaluates an Elasticsearch date-math expression: "now" or
// "<date>||", followed by any number of +N<unit>, -N<unit> and /<unit>, where
// unit is y, M, w, d, h, H, m or s; or a plain date. roundUp selects the
// rounding of gt and lte bounds.
func dateMath(s string, roundUp bool, now time.Time, loc *time.Location, formats []dateFormat) (time.Time, error) {
	var t time.Time
	var math string
	switch {
	case strings.HasPrefix(s, "now"):
		t, math = now.In(loc), s[3:]
	default:
		anchor, rest, hasMath := strings.Cut(s, "||")
		var ok bool
		for _, f := range formats {
			if t, ok = f(anchor, roundUp && !hasMath, loc); ok {
				break
			}
		}
		if !ok {
			return time.Time{}, fmt.Errorf("failed to parse date field [%s]", anchor)
		}
		math = rest
	}
	for i := 0; i < len(math); {
		op := math[i]
		i++
		if op != '+' && op != '-' && op != '/' {
			return time.Time{}, fmt.Errorf("operator not supported for date math [%s]", s)
		}
		n := 1
		if op != '/' {
			j := i
			for j < len(math) && math[j] >= '0' && math[j] <= '9' {
				j++
			}
			if j > i {
				v, err := strconv.Atoi(math[i:j])
				if err != nil || v > 1_000_000 {
					return time.Time{}, fmt.Errorf("invalid number in date math [%s]", s)
				}
				n = v
			}
			i = j
		}
		if i >= len(math) {
			return time.Time{}, fmt.Errorf("truncated date math [%s]", s)
		}
		unit := math[i]
		i++
		if op == '-' {
			n = -n
		}
		var ok bool
		if op == '/' {
			t, ok = roundTo(t, unit, roundUp)
		} else {
			t, ok = addUnits(t, unit, n)
		}
		if !ok {
			return time.Time{}, fmt.Errorf("unit [%c] not supported for date math [%s]", unit, s)
		}
	}
	return truncMillis(t), nil
}

func addMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	total := int(m) - 1 + n
	y += total / 12
	mm := total % 12
	if mm < 0 {
		mm += 12
		y--
	}
	month := time.Month(mm + 1)
	d = min(d, daysIn(y, month))
	h, mi, s := t.Clock()
	return time.Date(y, month, d, h, mi, s, t.Nanosecond(), t.Location())
}

func addUnits(t time.Time, unit byte, n int) (time.Time, bool) {
	switch unit {
	case 'y':
		return addMonths(t, 12*n), true
	case 'M':
		return addMonths(t, n), true
	case 'w':
		return t.AddDate(0, 0, 7*n), true
	case 'd':
		return t.AddDate(0, 0, n), true
	case 'h', 'H':
		return t.Add(time.Duration(n) * time.Hour), true
	case 'm':
		return t.Add(time.Duration(n) * time.Minute), true
	case 's':
		return t.Add(time.Duration(n) * time.Second), true
	}
	return t, false
}

// roundTo rounds t down to the start of its unit, or, with up, to the last
// millisecond of it.
func roundTo(t time.Time, unit byte, up bool) (time.Time, bool) {
	y, m, d := t.Date()
	loc := t.Location()
	var start, next time.Time
	switch unit {
	case 'y':
		start = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
		next = start.AddDate(1, 0, 0)
	case 'M':
		start = time.Date(y, m, 1, 0, 0, 0, 0, loc)
		next = start.AddDate(0, 1, 0)
	case 'w':
		wd := (int(t.Weekday()) + 6) % 7 // Monday is 0
		start = time.Date(y, m, d-wd, 0, 0, 0, 0, loc)
		next = start.AddDate(0, 0, 7)
	case 'd':
		start = time.Date(y, m, d, 0, 0, 0, 0, loc)
		next = start.AddDate(0, 0, 1)
	case 'h', 'H':
		start = time.Date(y, m, d, t.Hour(), 0, 0, 0, loc)
		next = start.Add(time.Hour)
	case 'm':
		start = time.Date(y, m, d, t.Hour(), t.Minute(), 0, 0, loc)
		next = start.Add(time.Minute)
	case 's':
		start = time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, loc)
		next = start.Add(time.Second)
	default:
		return t, false
	}
	if up {
		return next.Add(-time.Millisecond), true
	}
	return start, true
}

// parseDocDate parses a date value of a document: a strict_date_optional_time
// string, or epoch milliseconds as a number or a string of digits.
func parseDocDate(s string) (time.Time, bool) {
	if t, ok := parseISODate(s, false, time.UTC); ok {
		return t, true
	}
	if t, ok := parseEpochMillis(s, false, time.UTC); ok {
		return t, true
	}
	// Epoch milliseconds with a fraction, as Elasticsearch accepts.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > -1e17 && f < 1e17 {
		return time.UnixMilli(int64(f)).UTC(), true
	}
	return time.Time{}, false
}

// parseTimeZone parses the time_zone parameter: an offset (+01:00, -0800,
// Z) or an IANA zone name (UTC, Europe/Paris) known to this system.
func parseTimeZone(s string) (*time.Location, error) {
	if loc, ok := parseZone(s); ok {
		return loc, nil
	}
	if s == "UTC" || s == "GMT" || s == "Z" {
		return time.UTC, nil
	}
	if s == "" || strings.ContainsAny(s, " \\") {
		return nil, fmt.Errorf("unknown time zone %q", s)
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", s)
	}
	return loc, nil
}
