package gnarksrc

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/blob"
	"github.com/zkpipe/zkpipe/stages"
)

// TestJobVerifyChecksEvenUnderSkipVerify: the library's Prove sets
// Job.Verify, and a source opened with SkipVerify must still refuse a proof
// its verifying key rejects, writing nothing; a stream's job under
// SkipVerify is written unchecked, as the flag asks. A witness value is
// taken as a file's witness is.
func TestJobVerifyChecksEvenUnderSkipVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	if _, err := Setup("mulchain", 64, dir); err != nil {
		t.Fatal(err)
	}
	c, err := LoadDirWith(dir, Options{SkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	s := c.Source.(*Source)
	w, err := s.Witness(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, verify := range []bool{true, false} {
		j := &stages.Job{Circuit: c, WitnessInput: blob.Value("its witness value", w), Verify: verify}
		j.ID = "j"
		if err := s.Parse(context.Background(), j); err != nil {
			t.Fatalf("Parse of a witness value: %v", err)
		}
		out := new(blob.Memory)
		var bogus stages.Points // the points at infinity: no proof of anything
		em, err := s.Emit(context.Background(), j, &bogus, out)
		_, wrote := out.File("j.proof")
		switch {
		case verify && (err == nil || !strings.Contains(err.Error(), "fails circuit")):
			t.Errorf("Verify set: Emit of a bogus proof: %v, want it refused", err)
		case verify && wrote:
			t.Error("Verify set: a bogus proof was written")
		case !verify && (err != nil || !wrote || em.Value == nil):
			t.Errorf("SkipVerify, Verify unset: Emit: %v, wrote %v, value %v", err, wrote, em.Value)
		}
	}
	j := &stages.Job{Circuit: c, WitnessInput: blob.Value("its witness value", "not a witness")}
	if err := s.Parse(context.Background(), j); err == nil || !strings.Contains(err.Error(), "gnark witness.Witness") {
		t.Errorf("Parse of a string witness value: %v", err)
	}
}
