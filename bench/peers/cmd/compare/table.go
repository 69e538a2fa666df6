package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/weftlang/weft/bench/peers/harness"
)

// target is one of the targets: peer at least Min times the CPU
// per node-step of weft on Shape.
type target struct {
	shape harness.Shape
	peer  string
	min   float64
}

var targets = []target{
	{harness.S1, "eino", 10}, {harness.S2, "eino", 10}, {harness.S3, "eino", 10},
	{harness.S1, "langgraphgo", 4}, {harness.S2, "langgraphgo", 4}, {harness.S3, "langgraphgo", 4},
	{harness.S4SQLite, jsEngine, 30},
}

// weftEngines are the engines the ratios divide by.
var weftEngines = []string{"weft-wf", "weft-go", "weft-wf-sync"}

// isWeft reports whether e is one of weft's engines (no ratio column).
func isWeft(e string) bool { return strings.HasPrefix(e, "weft-") }

// table renders the results of a comparison as Markdown.
type table struct {
	cfg     config
	engines []string
	results map[key][]result
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// med returns the median of f over the supported results of k, and false
// when there are none.
func (t *table) med(k key, f func(result) float64) (float64, bool) {
	var xs []float64
	for _, r := range t.results[k] {
		if !r.Unsupported {
			xs = append(xs, f(r))
		}
	}
	return median(xs), len(xs) > 0
}

// ratio returns the median over the rounds of peer's CPU time over
// weft's, measured in the same round.
func (t *table) ratio(s harness.Shape, peer, weft string) (float64, bool) {
	p, w := t.results[key{peer, s}], t.results[key{weft, s}]
	var xs []float64
	for i := range min(len(p), len(w)) {
		if !p[i].Unsupported && !w[i].Unsupported && w[i].CPUNsPerOp > 0 {
			xs = append(xs, p[i].CPUNsPerOp/w[i].CPUNsPerOp)
		}
	}
	return median(xs), len(xs) > 0
}

func (t *table) version(e string) string {
	for _, rs := range t.results {
		for _, r := range rs {
			if r.Engine == e && r.Version != "" {
				return r.Version
			}
		}
	}
	return "?"
}

func us(ns float64) string {
	switch {
	case ns >= 100e3:
		return fmt.Sprintf("%.0f", ns/1e3)
	case ns >= 10e3:
		return fmt.Sprintf("%.1f", ns/1e3)
	default:
		return fmt.Sprintf("%.2f", ns/1e3)
	}
}

func num(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// String renders the machine, the table of results and the targets.
func (t *table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s by `go run ./cmd/compare%s` (in bench/peers): %d round(s), %s per measurement (S4: %s on a fresh store).\n\n",
		time.Now().UTC().Format("2006-01-02"), t.flags(), t.cfg.rounds, t.cfg.benchtime, t.cfg.benchtimeFor(harness.S4SQLite))
	if t.cfg.short {
		b.WriteString("**-short: one round of a few invocations, to check that every engine runs every shape. These figures are not measurements.**\n\n")
	}
	fmt.Fprintf(&b, "Machine: %s, %d cores, %s/%s; %s", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if slices.Contains(t.engines, jsEngine) {
		fmt.Fprintf(&b, "; node %s", nodeVersion())
	}
	b.WriteString(".\n\nVersions: ")
	for i, e := range t.engines {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", e, t.version(e))
	}
	b.WriteString(".\n\n")
	b.WriteString("CPU time (user + system) per invocation and per node-step, medians over the rounds; allocations and bytes\n")
	b.WriteString("per invocation (Go engines); peak memory is the maximum resident set of the process that measured it.\n")
	b.WriteString("The ratio columns are the medians of the per-round ratios peer/weft. S4 runs weft-wf with Async durability\n")
	b.WriteString("(records batched in the background, LangGraph's default) and weft-wf-sync with Sync (a commit per step,\n")
	b.WriteString("weft's default); weft-go runs S4 through graph.Threads, also with Async.\n\n")
	b.WriteString("| shape | engine | µs/invocation | ns/node-step | allocs/inv | B/inv | peak RSS | ÷ weft-wf | ÷ weft-go | ÷ weft-wf-sync |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range t.cfg.shapes {
		for _, e := range t.engines {
			k := key{e, s}
			cpu, ok := t.med(k, func(r result) float64 { return r.CPUNsPerOp })
			if !ok {
				fmt.Fprintf(&b, "| %s | %s | not supported | | | | | | | |\n", s, e)
				continue
			}
			allocs, _ := t.med(k, func(r result) float64 { return r.AllocsPerOp })
			bytesOp, _ := t.med(k, func(r result) float64 { return r.BytesPerOp })
			rss, _ := t.med(k, func(r result) float64 { return float64(r.MaxRSS) })
			al, by := num(allocs), num(bytesOp)
			if e == jsEngine {
				al, by = "-", "-"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.0f MB |", s, e, us(cpu), num(cpu/float64(harness.Steps(s))), al, by, rss/(1<<20))
			for _, w := range weftEngines {
				if r, ok := t.ratio(s, e, w); ok && !isWeft(e) {
					fmt.Fprintf(&b, " %sx |", num(r))
				} else {
					b.WriteString(" - |")
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nTargets (the issue's, on the median ratio of CPU per node-step, same run):\n\n")
	b.WriteString("| target | weft-wf | weft-go | weft-wf-sync |\n|---|---:|---:|---:|\n")
	for _, tg := range targets {
		if !slices.Contains(t.engines, tg.peer) || !slices.Contains(t.cfg.shapes, tg.shape) {
			continue
		}
		fmt.Fprintf(&b, "| %s: %s ≥ %.0fx weft |", tg.shape, tg.peer, tg.min)
		for _, w := range weftEngines {
			r, ok := t.ratio(tg.shape, tg.peer, w)
			switch {
			case !ok:
				b.WriteString(" - |")
			case r >= tg.min:
				fmt.Fprintf(&b, " %sx met |", num(r))
			default:
				fmt.Fprintf(&b, " %sx **missed** |", num(r))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// flags reconstructs the command line's flags for the table's header.
func (t *table) flags() string {
	args := os.Args[1:]
	var keep []string
	for i := 0; i < len(args); i++ {
		if args[i] == "-write" || args[i] == "--write" {
			i++
			continue
		}
		if strings.HasPrefix(args[i], "-write=") || strings.HasPrefix(args[i], "--write=") {
			continue
		}
		keep = append(keep, args[i])
	}
	if len(keep) == 0 {
		return ""
	}
	return " " + strings.Join(keep, " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// The markers between which -write puts the table.
const (
	beginMarker = "<!-- compare:begin -->"
	endMarker   = "<!-- compare:end -->"
)

// writeInto replaces the text between the markers of the Markdown file
// path with text.
func writeInto(path, text string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(old, []byte(beginMarker))
	j := bytes.Index(old, []byte(endMarker))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %s ... %s markers to write the table between", path, beginMarker, endMarker)
	}
	var out bytes.Buffer
	out.Write(old[:i+len(beginMarker)])
	out.WriteString("\n")
	out.WriteString(text)
	out.Write(old[j:])
	return os.WriteFile(path, out.Bytes(), 0o644)
}
