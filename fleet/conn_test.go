package fleet_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/zkpipe/zkpipe/fleet"
)

// TestConnectErrorsHideSecrets: a URL's password or token never reaches an
// error or the command's output, whatever the URL's form and whatever
// fails (no server, a bad port, a list of servers).
func TestConnectErrorsHideSecrets(t *testing.T) {
	bin := binary(t)
	closed := freePort(t) // nobody listens there now
	for _, u := range []string{
		"nats://zkp:hunter2pw@" + closed,
		"nats://hunter2pw@" + closed,
		"tls://zkp:hunter2pw@" + closed,
		"zkp:hunter2pw@" + closed,
		"nats://zkp:hunter2pw@127.0.0.1:99999",
		"nats://zkp:hunter2pw@[::1",
		"nats://a:b@" + closed + ",nats://zkp:hunter2pw@" + closed,
		"nats://zkp:hunter2%70w@" + closed, // percent-encoded: hunter2pw
	} {
		_, err := fleet.Connect(u, fleet.Auth{}, "test")
		if err == nil {
			t.Fatalf("%s: connected", u)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Connect(%s): the error shows the secret: %v", u, err)
		}
		out, _ := exec.Command(bin, "submit", "--nats", u, "-").CombinedOutput()
		if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "xxxxx") {
			t.Errorf("zkpipe submit --nats %s: %s", u, out)
		}
	}
	if got := fleet.RedactURL("nats://u:p@h:1,nats://tok@h:2,nats://h:3"); got != "nats://u:xxxxx@h:1,nats://xxxxx@h:2,nats://h:3" {
		t.Errorf("RedactURL: %s", got)
	}
}
