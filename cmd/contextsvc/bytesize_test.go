package main

import "testing"

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want byteSize
		ok   bool
	}{
		{"0", 0, true}, {"1048576", 1 << 20, true}, {"256MiB", 256 << 20, true}, {"1GiB", 1 << 30, true},
		{"64KiB", 64 << 10, true}, {"2M", 2 << 20, true}, {"10 KiB", 10 << 10, true}, {"100B", 100, true},
		{"", 0, false}, {"MiB", 0, false}, {"-1", 0, false}, {"+5", 0, false}, {"1.5MiB", 0, false},
		{"1TiB", 0, false}, {"9999999999999GiB", 0, false}, {"0x10", 0, false},
	} {
		got, err := parseByteSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d (ok %t)", tt.in, got, err, tt.want, tt.ok)
		}
		if err == nil {
			if back, err := parseByteSize(got.String()); err != nil || back != got {
				t.Errorf("%q: String %q reads back as %d, %v", tt.in, got.String(), back, err)
			}
		}
	}
}

func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"256MiB", "1", "1GiB", "0B", "9223372036854775807", "8589934592G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseByteSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("%q: %d", s, n)
		}
		if back, err := parseByteSize(n.String()); err != nil || back != n {
			t.Fatalf("%q: %d prints as %q, which reads as %d, %v", s, n, n.String(), back, err)
		}
	})
}
