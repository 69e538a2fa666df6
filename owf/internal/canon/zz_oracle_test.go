package canon

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func runOracle(t *testing.T, lines []string) []string {
	bin := os.Getenv("CANON_ORACLE")
	if bin == "" {
		t.Skip("no oracle")
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var res []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		res = append(res, sc.Text())
	}
	if len(res) != len(lines) {
		t.Fatalf("oracle returned %d lines for %d", len(res), len(lines))
	}
	return res
}

func diffCanon(t *testing.T, inputs []string) {
	lines := make([]string, len(inputs))
	for i, s := range inputs {
		lines[i] = hex.EncodeToString([]byte(s))
	}
	res := runOracle(t, lines)
	bad := 0
	for i, s := range inputs {
		got, ok := Canonical(s)
		var want string
		wok := false
		if strings.HasPrefix(res[i], "OK ") {
			b, _ := hex.DecodeString(res[i][3:])
			want, wok = string(b), true
		}
		if res[i] == "BADUTF8" {
			wok = false
		}
		if ok != wok || got != want {
			bad++
			if bad < 30 {
				t.Errorf("%q: got %q,%v want %q,%v", s, got, ok, want, wok)
			}
		}
	}
	nok := 0
	for _, l := range res {
		if strings.HasPrefix(l, "OK") {
			nok++
		}
	}
	t.Logf("%d inputs (%d accepted), %d mismatches", len(inputs), nok, bad)
}

func randNum(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	n := 1 + r.IntN(25)
	if r.IntN(4) == 0 {
		n = 15 + r.IntN(10)
	}
	for i := 0; i < n; i++ {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	if r.IntN(2) == 0 {
		b.WriteByte('.')
		m := r.IntN(25)
		for i := 0; i < m; i++ {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteByte("eE"[r.IntN(2)])
		switch r.IntN(3) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		e := r.IntN(400)
		if r.IntN(10) == 0 {
			e = r.IntN(1 << 20)
		}
		if r.IntN(30) == 0 {
			b.WriteString("99999999999")
		}
		b.WriteString(strconv.Itoa(e))
	}
	return b.String()
}

func TestOracleNumbers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var in []string
	for i := 0; i < 300000; i++ {
		in = append(in, randNum(r))
	}
	// shortest-repr floats
	for i := 0; i < 100000; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		in = append(in, strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', 20, 64))
	}
	diffCanon(t, in)
}

func TestOracleFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var fs []float64
	for i := 0; i < 1000000; i++ {
		var f float64
		switch i % 4 {
		case 0:
			f = math.Float64frombits(r.Uint64())
		case 1:
			f = float64(r.Int64N(1<<62)) * math.Pow(10, float64(r.IntN(40)-20))
		case 2:
			f = float64(r.IntN(100000)) / math.Pow(10, float64(r.IntN(12)))
		case 3:
			f = math.Float64frombits(r.Uint64() & 0x800FFFFFFFFFFFFF) // subnormals
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		fs = append(fs, f)
	}
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = fmt.Sprintf("F%x", math.Float64bits(f))
	}
	res := runOracle(t, lines)
	bad := 0
	for i, f := range fs {
		if got := FormatFloat(f); got != res[i] {
			bad++
			if bad < 20 {
				t.Errorf("%x: got %s want %s", math.Float64bits(f), got, res[i])
			}
		}
	}
	t.Logf("%d floats, %d mismatches", len(fs), bad)
}

func randStr(r *rand.Rand) string {
	parts := []string{"a", "b", "A", "é", "\\n", "\\u0000", "\\u001f", "\\u0041", "\\ud83d\\ude00", "\\ud800", "\\udc00", "\\/", "\\\"", "\\\\", "\\x", "\x01", "\x7f", "\u2028", "/", "<", "😀", "\\uDBFF\\uDFFF", "\\u00e9", "\\t", "\\b", "\\f", "\\r", "\\u12", "\xff", " "}
	var b strings.Builder
	b.WriteByte('"')
	n := r.IntN(5)
	for i := 0; i < n; i++ {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	if r.IntN(50) != 0 {
		b.WriteByte('"')
	}
	return b.String()
}

func randValue(r *rand.Rand, depth int) string {
	ws := func() string {
		return []string{"", "", " ", "\n", "\t", "\r\n ", "\f", "\u00a0"}[r.IntN(8)]
	}
	k := r.IntN(10)
	if depth > 4 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		return []string{"null", "true", "false", "nul", "True", "nullx"}[r.IntN(6)]
	case 1, 2:
		return randNum(r)
	case 3, 4, 5:
		return randStr(r)
	case 6, 7:
		n := r.IntN(4)
		var b strings.Builder
		b.WriteString("[" + ws())
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(ws() + "," + ws())
			}
			b.WriteString(randValue(r, depth+1))
		}
		if r.IntN(40) == 0 {
			b.WriteString(",")
		}
		b.WriteString(ws() + "]")
		return b.String()
	default:
		n := r.IntN(5)
		var b strings.Builder
		b.WriteString("{" + ws())
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(ws() + "," + ws())
			}
			if r.IntN(40) == 0 {
				b.WriteString("1")
			} else {
				b.WriteString(randStr(r))
			}
			b.WriteString(ws() + ":" + ws())
			b.WriteString(randValue(r, depth+1))
		}
		b.WriteString(ws() + "}")
		return b.String()
	}
}

func TestOracleStructures(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var in []string
	for i := 0; i < 200000; i++ {
		v := randValue(r, 0)
		if r.IntN(5) == 0 {
			v = " " + v + "\n"
		}
		if r.IntN(20) == 0 {
			v += randValue(r, 0)
		}
		in = append(in, v)
	}
	for d := 120; d < 135; d++ {
		in = append(in, strings.Repeat("[", d)+strings.Repeat("]", d))
		in = append(in, strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d))
		in = append(in, strings.Repeat(`[{"a":`, d/2)+"1"+strings.Repeat("}]", d/2))
	}
	diffCanon(t, in)
}

func TestOracleGolden(t *testing.T) {
	if os.Getenv("CANON_WRITE_GOLDEN") == "" {
		t.Skip()
	}
	curated := []string{
		`{"b": 1,  "a": [1, 2.50]}`, "  42\n", `"yes"`, "yes", "007", "1.", "1e1", "1.50", "7.0",
		"18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
		"-18446744073709551615", "-18446744073709551616", "1e400", "-1e400", "1e308", "1.7976931348623157e308",
		"1.7976931348623158e308", "1.8e308", "-0", "-0.0", "0", "0.0", "-0e5", "0e999999999999", "1e999999999999",
		"1e-999999999999", "-1e-999999999999", "0.1", "1e-7", "123456789012345680000.0", "1.2345678901234568e20",
		"18446744073709551616.0", "18446744073709551615.", "18446744073709551616.", "184467440737095516160.5e-1",
		"1e16", "1e15", "123456789012345678", "0.00001", "0.000001", "0.0001234", "1e-5", "5e-324", "2.2250738585072011e-308",
		"4.9406564584124654e-324", "1e-400", "9007199254740993", "9007199254740993.0", "0.30000000000000004",
		"1E2", "1e+2", "1e-2", "-1.5e-7", "+1", ".5", "1.e5", "1e", "1e+", "-", "--1", "01", "-01", "00", "0x10",
		"NaN", "Infinity", "-Infinity", "1.0e", "[1,]", "[,1]", "[1 2]", `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`,
		"[]", "{}", " [ ] ", " { } ", "[[[]]]", `{"a":{}}`, "null", "true", "false", "nul", "nulls", "True", "tru e",
		"", " ", "\t\n\r ", "\f1", "1\f", "\u00a01", "1 2", "{}{}", `{"a":1}{"b":2}`, `"a" "b"`, "[1]x",
		`{"a":1,"a":2}`, `{"b":1,"a":2,"b":3}`, `{"a":{"y":1,"x":2},"A":[{"d":1,"c":2}]}`, `{"\u0061":1,"a":2}`,
		`{"é":1,"z":2,"Z":3,"":4,"aa":5,"a":6}`, `{"\n":1,"#":2}`, `{"\u0000":1,"\u001f":2," ":3}`,
		`"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800\\"`, `"\ud800\n"`, `"\ud800"x`, `"\uD83D\uDE00"`, `"\uDBFF\uDFFF"`,
		`"\ud83d\ude00\ud83d"`, `"\u00e9"`, `"\u12"`, `"\u12g4"`, `"\x"`, `"\'"`, "\"a\x01b\"", "\"a\tb\"", "\"a\nb\"",
		"\"\x7f\"", `"a\u0000\u001f\u007f\/\u2028<>&"`, `"\b\f\n\r\t\"\\\/"`, `"\u0022\u005c\u002f"`, `"unterminated`,
		`"😀é中"`, "\"\u2028\u2029\"", `["a",{"b":null},[true,false],-1,2.5e3]`,
		`{"k":[1,2.50,-0,1e2,"x"],"a":{"c":1,"b":[{"z":1,"y":2}]}}`,
		`{"b": 1,  "a": [1, 2.50]}` + "\n",
		`{"z":0, "y":1}`,
	}
	for d := 125; d <= 130; d++ {
		curated = append(curated, strings.Repeat("[", d)+strings.Repeat("]", d))
		curated = append(curated, strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d))
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 1500; i++ {
		curated = append(curated, randNum(r))
	}
	for i := 0; i < 300; i++ {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		curated = append(curated, strconv.FormatFloat(f, 'g', -1, 64))
	}
	for i := 0; i < 1500; i++ {
		curated = append(curated, randValue(r, 0))
	}
	lines := make([]string, len(curated))
	for i, s := range curated {
		lines[i] = hex.EncodeToString([]byte(s))
	}
	res := runOracle(t, lines)
	var b strings.Builder
	b.WriteString("# serde_json from_str::<Value> + to_string, recorded from a serde_json build\n")
	b.WriteString("# (Debian's 1.0.87 with the 1.0.89 parse_decimal fix, i.e. 1.0.128's number parser; ryu 1.0.2).\n")
	b.WriteString("# Each line: Go-quoted input, a space, then the Go-quoted output or the word reject.\n")
	for i, s := range curated {
		if res[i] == "BADUTF8" {
			continue
		}
		b.WriteString(strconv.Quote(s))
		b.WriteByte(' ')
		if strings.HasPrefix(res[i], "OK ") {
			o, _ := hex.DecodeString(res[i][3:])
			b.WriteString(strconv.Quote(string(o)))
		} else {
			b.WriteString("reject")
		}
		b.WriteByte('\n')
	}
	os.MkdirAll("testdata", 0o755)
	if err := os.WriteFile("testdata/serde_golden.txt", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
