package commands

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/stream"
)

// zkpipe timeline RESULTS -o FILE: flags after the argument count, and the
// picture has a row per result line.
func TestTimelineCommand(t *testing.T) {
	dir := t.TempDir()
	var results bytes.Buffer
	w := stream.NewWriter(&results)
	for _, id := range []string{"a", "b", "c"} {
		w.Write(stream.Result{ID: id, Stages: []stream.StageTime{
			{Stage: "parse", QueuedAtMS: 0, StartedAtMS: 1, EndedAtMS: 5},
			{Stage: "synthesize", QueuedAtMS: 5, StartedAtMS: 7, EndedAtMS: 20},
		}})
	}
	in := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(in, results.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.svg")
	app := App()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	if err := app.Run([]string{"zkpipe", "timeline", in, "-o", out, "--width", "640"}); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	rows := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok {
			for _, a := range el.Attr {
				if el.Name.Local == "svg" && a.Name.Local == "width" && a.Value != "640" {
					t.Errorf("width %s, want 640 (--width after the argument)", a.Value)
				}
				if a.Name.Local == "class" && a.Value == "job" {
					rows++
				}
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows, want 3", rows)
	}
	if err := app.Run([]string{"zkpipe", "timeline", in, "extra", "-o", out}); err == nil || !strings.Contains(err.Error(), "one results file") {
		t.Errorf("two arguments: err %v", err)
	}
}
