package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The decision is tested in a child test binary, so that a Fatal or a Skip
// is observed from outside rather than ending this test.
func TestMissingDecides(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		LookPath(t, Redis, "no-such-command-benchrig")
		return
	}
	cases := []struct {
		env     []string
		wantErr bool   // the child failed
		want    string // in its output
	}{
		{[]string{"CI=", "BENCHRIG_TEST_STRICT=", "BENCHRIG_TEST_SKIP="}, false, "SKIP: TestMissingDecides"},
		{[]string{"CI=true", "BENCHRIG_TEST_SKIP="}, true, "install it with make deps"},
		{[]string{"CI=", "BENCHRIG_TEST_STRICT=1", "BENCHRIG_TEST_SKIP="}, true, "SKIP=redis make test"},
		{[]string{"CI=", "BENCHRIG_TEST_STRICT=1", "BENCHRIG_TEST_SKIP=browser,redis"}, false, "skipped by name (SKIP=redis)"},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingDecides$", "-test.v")
		cmd.Env = append(os.Environ(), append([]string{"TESTENV_CHILD=1"}, c.env...)...)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.wantErr || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: err %v, want failed=%v and %q in:\n%s", c.env, err, c.wantErr, c.want, out)
		}
	}
}

func TestSkippedByName(t *testing.T) {
	t.Setenv("BENCHRIG_TEST_SKIP", " seeds , browser")
	if !Skipped(Seeds) || !Skipped(Browser) || Skipped(Redis) {
		t.Errorf("BENCHRIG_TEST_SKIP=%q: seeds %v browser %v redis %v", os.Getenv("BENCHRIG_TEST_SKIP"), Skipped(Seeds), Skipped(Browser), Skipped(Redis))
	}
	if got := strings.Join(Kinds(), ","); got != "browser,netns,nginx,node,postgres,redis,seeds,tools" {
		t.Errorf("kinds %s", got)
	}
}

func TestPatienceBounds(t *testing.T) {
	if d := WakeDelay(); d < 0 || d > time.Minute {
		t.Errorf("wake delay %s", d)
	}
	if p := Patience(time.Second, 30*time.Second); p < time.Second || p > 30*time.Second {
		t.Errorf("patience %s outside [1s, 30s]", p)
	}
	if p := Patience(time.Hour, time.Minute); p != time.Minute {
		t.Errorf("patience %s, want the upper bound 1m", p)
	}
}
