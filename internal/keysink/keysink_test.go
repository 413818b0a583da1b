package keysink

import (
	"errors"
	"testing"
)

func TestAgree(t *testing.T) {
	named := errors.New("/k/pk: point 3 not on the curve")
	for _, c := range []struct {
		whole, deferred error
		ok              bool
	}{
		{nil, nil, true},
		{named, named, true},
		{named, nil, false},
		{nil, named, false},
		{named, errors.New("not on the curve"), false}, // a refusal without the file
	} {
		if err := Agree(c.whole, c.deferred, "/k/pk"); (err == nil) != c.ok {
			t.Errorf("Agree(%v, %v) = %v, want agreement %v", c.whole, c.deferred, err, c.ok)
		}
	}
}
