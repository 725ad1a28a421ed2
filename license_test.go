package contextsvc_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// apacheLicenseSHA256 is the SHA-256 of the Apache License 2.0 as the
// Apache Software Foundation publishes it (www.apache.org/licenses/LICENSE-2.0.txt).
const apacheLicenseSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestLicenseFiles keeps the licence files honest: LICENSE and the Droid
// font's licence are the Apache License 2.0 word for word, every file NOTICE
// names exists, and the README says what the licence is.
func TestLicenseFiles(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"LICENSE", "mockserver/internal/pdf/fonts/LICENSE"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != apacheLicenseSHA256 {
			t.Errorf("%s is not the Apache License 2.0 verbatim", f)
		}
	}
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	files := regexp.MustCompile(`\b(?:mockserver/internal/pdf/fonts/[\w.-]+|LICENSE)\b`).FindAllString(string(notice), -1)
	if len(files) < 4 {
		t.Errorf("NOTICE names %v; want LICENSE and the fonts' files", files)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("NOTICE names %s: %v", f, err)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "Apache License, Version 2.0") || !strings.Contains(string(readme), "NOTICE") {
		t.Error("README.md does not state the licence and point to NOTICE")
	}
}
