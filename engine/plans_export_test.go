package engine

// PlanEntries reports how many plans th keeps derived data for, for tests.
func PlanEntries(th *Threads) int { return th.plans.Len() }
