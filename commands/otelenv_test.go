package commands

import (
	"testing"

	"github.com/zkpipe/zkpipe/tracing"
)

// OpenTelemetry's variables turn tracing on and off as they did when package
// tracing read them: the command reads them now, into tracing.Config.
func TestOTELVariablesTurnTracingOnAndOff(t *testing.T) {
	vars := []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"}
	for _, c := range []struct {
		env      map[string]string
		endpoint string
		want     bool
	}{
		{nil, "", false},
		{nil, "localhost:4317", true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4317"}, "", true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:4318/v1/traces"}, "", true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4317", "OTEL_SDK_DISABLED": "TRUE"}, "", false},
		{map[string]string{"OTEL_SDK_DISABLED": "true"}, "localhost:4317", false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, "localhost:4317", false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, "localhost:4317", true},
	} {
		for _, v := range vars {
			t.Setenv(v, c.env[v])
		}
		if got := otelEnv(tracing.Config{Endpoint: c.endpoint}).Enabled(); got != c.want {
			t.Errorf("%v, endpoint %q: tracing on %v, want %v", c.env, c.endpoint, got, c.want)
		}
	}
}
