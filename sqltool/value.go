package sqltool

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// jsonValue converts a value read from a database to one of the types
// Result.Rows holds: int64, float64, string, bool or nil.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, int64, string, bool:
		return x
	case float64:
		return finite(x)
	case float32:
		return finite(float64(x))
	case []byte:
		return string(x)
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
		return float64(x)
	case time.Time:
		return formatTime(x, false)
	case fmt.Stringer:
		return x.String()
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// finite returns f, or its text when it is infinite or NaN, which JSON
// cannot hold.
func finite(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// formatTime writes t the way SQLite stores times as text:
// "2006-01-02 15:04:05", with fractional seconds when there are some and
// the offset when t is not in UTC; dateOnly writes a midnight as
// "2006-01-02".
func formatTime(t time.Time, dateOnly bool) string {
	if dateOnly && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format(time.DateOnly)
	}
	layout := "2006-01-02 15:04:05.999999999"
	if t.Location() != time.UTC {
		layout += "-07:00"
	}
	return t.Format(layout)
}

// asString returns v as text, for catalog values.
func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// asInt returns v as an integer, for catalog values; 0 when it is not one.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case bool:
		if x {
			return 1
		}
	case string:
		n, _ := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n
	}
	return 0
}
