package owf

// specEntries reports how many plan nodes a keeps a decoded spec for.
func specEntries(a *actions) int { return a.specs.Len() }
