package engine

// BoundEntries reports how many bound actions r keeps, for tests.
func BoundEntries(r *Runner) int {
	r.bound.mu.Lock()
	defer r.bound.mu.Unlock()
	return len(r.bound.m)
}
