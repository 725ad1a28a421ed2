package planflag

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in        string
		perMinute int
		burst     int
		err       string
	}{
		{"free", 60, 10, ""},
		{"pro", 300, 50, ""},
		{"business", 1000, 0, ""},
		{"enterprise=1200/10", 1200, 10, ""},
		{"enterprise=1200", 0, 0, "takes two positive numbers"},
		{"enterprise=0/10", 0, 0, "takes two positive numbers"},
		{"enterprise=-5/10", 0, 0, "takes two positive numbers"},
		{"enterprise=x/y", 0, 0, "takes two positive numbers"},
		{"gold", 0, 0, "must be free, pro, business or enterprise=PERMINUTE/BURST"},
		{"", 0, 0, "must be free"},
		{"Pro", 0, 0, "must be free"},
	} {
		p, err := Parse(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error saying %q", tc.in, p, err, tc.err)
			}
		case err != nil || p.PerMinute() != tc.perMinute || (tc.burst != 0 && p.Burst() != tc.burst):
			t.Errorf("Parse(%q) = %d/min burst %d, %v; want %d/min burst %d", tc.in, p.PerMinute(), p.Burst(), err, tc.perMinute, tc.burst)
		}
	}
}
