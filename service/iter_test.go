package service

import "iter"

// iterPull2 is iter.Pull2 with the pair turned into (value, error, ok).
func iterPull2[E any](seq iter.Seq2[E, error]) (func() (E, error, bool), func()) {
	next, stop := iter.Pull2(seq)
	return func() (E, error, bool) {
		e, err, ok := next()
		return e, err, ok
	}, stop
}
