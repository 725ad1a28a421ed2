package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoPDFToText is returned by [PDFText] when pdftotext (Debian's
// poppler-utils) is not installed.
var ErrNoPDFToText = errors.New("pdftotext is not installed (apt-get install poppler-utils)")

// PDFText returns the words pdftotext reads from a PDF, one space apart:
// what a reader of the document sees.
func PDFText(ctx context.Context, pdf []byte) (string, error) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		return "", ErrNoPDFToText
	}
	cmd := exec.CommandContext(ctx, bin, "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("pdftotext: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.Join(strings.Fields(out.String()), " "), nil
}
