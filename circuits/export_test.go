package circuits

// Floor is b.floor, for tests.
func Floor(b Builtin, n int) (constraints, wires int) { return b.floor(n) }
