package circomsrc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkpipe/zkpipe/stages"
)

// Done reports the outputs a finished job id left in dir (ID.proof.json and
// ID.public.json, as Emit writes them), after checking the proof against the
// zkey's verifying key. It returns an error wrapping fs.ErrNotExist when the
// job left no proof, and another error when its files exist but do not make
// a valid proof.
func (s *Source) Done(dir, id string) (stages.Emitted, error) {
	em := stages.Emitted{Proof: filepath.Join(dir, id+".proof.json"), Public: filepath.Join(dir, id+".public.json")}
	// Bounded before they are read: a proof.json is under 1 KiB, and a
	// public input at most 80 bytes of decimal and punctuation.
	for path, limit := range map[string]int64{em.Proof: 4 << 10, em.Public: 80*int64(len(s.vk.IC)) + 16} {
		st, err := os.Stat(path)
		if err != nil {
			return stages.Emitted{}, err
		}
		if st.Size() > limit {
			return stages.Emitted{}, fmt.Errorf("%s: %d bytes, more than it can be", path, st.Size())
		}
	}
	proof, err := ReadProof(em.Proof)
	if err != nil {
		return stages.Emitted{}, err
	}
	public, err := ReadPublic(em.Public)
	if err != nil {
		return stages.Emitted{}, err
	}
	if err := s.vk.Verify(proof, public); err != nil {
		return stages.Emitted{}, fmt.Errorf("%s: %w", em.Proof, err)
	}
	em.PublicInputs = make([]string, 0, len(public))
	for i := range public {
		em.PublicInputs = append(em.PublicInputs, public[i].String())
	}
	return em, nil
}
