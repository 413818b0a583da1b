package metrics

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildInfo is zkpipe_build_info: 1, labelled with what built this binary,
// so a dashboard can tell which processes run which build.
func buildInfo() prometheus.Collector {
	version, revision := BuildVersion()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "zkpipe_build_info",
		Help:        "Always 1; its labels say which build of zkpipe this process runs: version (the module's), revision (the VCS commit, -dirty when modified), goversion.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// BuildVersion is the main module's version and VCS revision as the Go
// toolchain recorded them ("unknown" for what it did not record: a test
// binary has no revision, a build outside a module no version).
func BuildVersion() (version, revision string) {
	version, revision = "unknown", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, revision
	}
	if v := bi.Main.Version; v != "" {
		version = v
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && revision != "unknown" {
		revision += "-dirty"
	}
	return version, revision
}
