package service

import "os"

func osWriteFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
