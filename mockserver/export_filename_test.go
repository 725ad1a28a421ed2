package mockserver_test

import (
	"context"
	"io"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestExportFilenameWithMockServer: the client takes the UTF-8 file name
// the mock server sends in filename*, so an export saved under
// Export.Filename keeps the context name's letters.
func TestExportFilenameWithMockServer(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	client, err := contextsvc.NewClient(ts.APIKey, contextsvc.WithBaseURL(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		format contextsvc.ExportFormat
		want   string
	}{
		{"Ünïcödé Straße", contextsvc.ExportPDF, "Ünïcödé Straße-v1.pdf"},
		{"Καλημέρα / Привет: 日本語", contextsvc.ExportMarkdown, "Καλημέρα - Привет- 日本語-v1.md"},
		{"../../etc/passwd", contextsvc.ExportText, "etc-passwd-v1.txt"},
	} {
		c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: tc.name, Content: "text"})
		if err != nil {
			t.Fatal(err)
		}
		exp, err := client.Contexts.Export(ctx, c.ID, &contextsvc.ExportOptions{Format: tc.format})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, exp.Body)
		_ = exp.Body.Close()
		if exp.Filename != tc.want {
			t.Errorf("export of %q: Filename %q, want %q", tc.name, exp.Filename, tc.want)
		}
	}
}
