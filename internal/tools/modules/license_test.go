package modules

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// apacheLicenseSHA256 is the SHA-256 of the Apache License 2.0 as the
// Apache Software Foundation publishes it (www.apache.org/licenses/LICENSE-2.0.txt).
const apacheLicenseSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// unpublished are the modules that exist for the repository's own work
// (its examples, end-to-end tests and checks): no one imports them, so
// they carry no licence files of their own.
var unpublished = map[string]bool{
	rootPath + "/examples":       true,
	rootPath + "/internal/e2e":   true,
	rootPath + "/internal/tools": true,
}

// TestLicenseFiles keeps the licence files honest: every published module
// carries LICENSE, the Apache License 2.0 word for word (a module's zip
// holds only its own directory), as is the Droid font's licence; every
// file a NOTICE names exists beside it; and the README says what the
// licence is.
func TestLicenseFiles(t *testing.T) {
	t.Parallel()
	root := modules(t)[0].Dir
	licences := []string{filepath.Join(root, "mockserver/internal/pdf/fonts/LICENSE")}
	for _, m := range modules(t) {
		if !unpublished[m.Path] {
			licences = append(licences, filepath.Join(m.Dir, "LICENSE"))
		}
	}
	for _, f := range licences {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != apacheLicenseSHA256 {
			t.Errorf("%s is not the Apache License 2.0 verbatim", f)
		}
	}
	named := regexp.MustCompile(`\b(?:(?:mockserver/)?internal/pdf/fonts/[\w.-]+|LICENSE)\b`)
	for _, notice := range []string{filepath.Join(root, "NOTICE"), filepath.Join(root, "mockserver/NOTICE")} {
		text, err := os.ReadFile(notice)
		if err != nil {
			t.Fatal(err)
		}
		files := named.FindAllString(string(text), -1)
		if len(files) < 4 {
			t.Errorf("%s names %v; want LICENSE and the fonts' files", notice, files)
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(filepath.Dir(notice), f)); err != nil {
				t.Errorf("%s names %s: %v", notice, f, err)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "Apache License, Version 2.0") || !strings.Contains(string(readme), "NOTICE") {
		t.Error("README.md does not state the licence and point to NOTICE")
	}
}
