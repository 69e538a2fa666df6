package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// column is one figure of the table, read from a sample; nil: none.
type column struct {
	head string
	get  func(s sample) *float64
	fmt  string
}

func ptr(f float64) *float64 { return &f }

// kib is n KiB in MiB; nil for 0, a figure the kernel did not give (no
// RssAnon line before Linux 4.5) rather than a measurement.
func kib(n int64) *float64 {
	if n == 0 {
		return nil
	}
	return ptr(float64(n) / 1024)
}

var columns = []column{
	{"conv/s", func(s sample) *float64 { return ptr(s.ConvPerS) }, "%.1f"},
	{"conv p50 ms", func(s sample) *float64 { return s.ConvP50 }, "%.1f"},
	{"conv p99 ms", func(s sample) *float64 { return s.ConvP99 }, "%.1f"},
	{"first event p50 ms", func(s sample) *float64 { return s.TTFEP50 }, "%.1f"},
	{"first event p99 ms", func(s sample) *float64 { return s.TTFEP99 }, "%.1f"},
	{"server CPU ms/conv", func(s sample) *float64 { return ptr(s.CPUMsPerConv) }, "%.2f"},
	{"peak RSS MiB", func(s sample) *float64 { return ptr(float64(s.HWMKiB) / 1024) }, "%.0f"},
	{"peak private MiB", func(s sample) *float64 { return kib(s.AnonPeakKiB) }, "%.1f"},
}

// cell is the median of the rounds' values, with their range.
func cell(vs []float64, f string) string {
	if len(vs) == 0 {
		return "–"
	}
	slices.Sort(vs)
	m := median(vs)
	if len(vs) == 1 {
		return fmt.Sprintf(f, m)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", m, vs[0], vs[len(vs)-1])
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// printTable prints the side-by-side table, then the ratios of the
// medians (reference / weft, so above 1 means weft is better).
func printTable(w io.Writer, cfg *config, samples []sample) {
	fmt.Fprintf(w, "\n%d round(s); warm-up %d conversations per measurement; cells: median (min–max) of the rounds\n\n", cfg.rounds, cfg.warmup)
	head := []string{"clients", "server", "N"}
	for _, c := range columns {
		head = append(head, c.head)
	}
	head = append(head, "errors")
	fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(w, strings.Repeat("|---", len(head))+"|")
	med := map[[2]string][]float64{}
	for _, l := range cfg.loads {
		for _, srv := range cfg.servers {
			row := []string{l.String(), srv, fmt.Sprint(l.N)}
			var errs, total int
			var failed []string
			var got []sample
			for _, s := range samples {
				if s.Server != srv || s.Load != l.String() {
					continue
				}
				if s.Failed != "" {
					failed = append(failed, fmt.Sprintf("round %d: %s", s.Round, s.Failed))
					continue
				}
				got = append(got, s)
				errs += s.Errors
				total += s.N + cfg.warmup
			}
			var ms []float64
			for _, c := range columns {
				var vs []float64
				for _, s := range got {
					if v := c.get(s); v != nil {
						vs = append(vs, *v)
					}
				}
				row = append(row, cell(vs, c.fmt))
				if len(vs) > 0 {
					ms = append(ms, median(vs))
				} else {
					ms = append(ms, 0)
				}
			}
			med[[2]string{l.String(), srv}] = ms
			e := fmt.Sprintf("%d of %d", errs, total)
			if len(failed) > 0 {
				e += "; FAILED " + strings.Join(failed, "; ")
			}
			row = append(row, e)
			fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
		}
	}
	if !slices.Contains(cfg.servers, "weft") || !slices.Contains(cfg.servers, "langgraphjs") {
		return
	}
	fmt.Fprintln(w, "\nlanggraphjs / weft (of the medians; conv/s is weft / langgraphjs): above 1, weft is better")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| clients | conv/s | conv p50 | conv p99 | first event p50 | server CPU/conv | peak RSS | peak private |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, l := range cfg.loads {
		wf, lg := med[[2]string{l.String(), "weft"}], med[[2]string{l.String(), "langgraphjs"}]
		if wf == nil || lg == nil {
			continue
		}
		ratio := func(a, b float64) string {
			if a == 0 || b == 0 {
				return "–"
			}
			return fmt.Sprintf("%.1fx", a/b)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", l, ratio(wf[0], lg[0]), ratio(lg[1], wf[1]), ratio(lg[2], wf[2]),
			ratio(lg[3], wf[3]), ratio(lg[5], wf[5]), ratio(lg[6], wf[6]), ratio(lg[7], wf[7]))
	}
}
