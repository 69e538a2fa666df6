package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// newVersionCmd builds `weft version`.
func newVersionCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print weft's version",
		Args:  exactFiles(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(e.stdout, versionString())
			return nil
		},
	}
}

// versionString reports the module version and VCS revision recorded in
// the binary, and the Go toolchain and platform.
func versionString() string {
	v, rev, dirty := "devel", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	s := "weft " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " " + rev
		if dirty {
			s += "+dirty"
		}
	}
	return fmt.Sprintf("%s (%s %s/%s)", s, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
