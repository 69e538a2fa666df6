//go:build !unix

package lang_test

import "errors"

func mkfifo(string) error { return errors.New("no named pipes here") }
