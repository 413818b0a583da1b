package gnarksrc

import "github.com/consensys/gnark/std"

// registerStdHints registers the solver hints of gnark's standard library
// (hashes, emulated arithmetic, range checks, signatures, lookups) in
// gnark's global hint registry; std.RegisterHints does it once however
// often it is called. A circuit compiled from gnark/std calls those hints
// by ID when solved, and ccs.Solve fails with "missing hint" without them.
// NewWith calls this rather than an init, so that it does not depend on the
// order packages are initialised in.
func registerStdHints() { std.RegisterHints() }
