// Package adapt reshapes a running pipeline from what its stages measure:
// every window (a few seconds, and at least a few finished jobs) it gives
// the bottleneck stage one more worker when the cores allow, taking idle
// workers from other stages to make room, and undoes a growth that did not
// raise the rate of finished jobs.
//
// The rule is Decide, a pure function of one window's measurements; the
// Controller only samples, calls Decide and applies its changes. Neither
// touches a stage the user shaped, and neither admits memory: the memory
// governor still gates every job, so more workers can make jobs wait for
// admission but never let admitted memory pass the budget.
package adapt
