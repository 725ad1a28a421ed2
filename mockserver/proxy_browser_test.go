package mockserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestDashboardContract: the Contract view lists the proxy's findings,
// shows one with the rule of the document each mismatch breaks and the
// SDK's verdict, and beside the list the counts per operation; no secret
// the caller sent is on the page. A mock that is no proxy says how to
// make it one.
func TestDashboardContract(t *testing.T) {
	t.Parallel()
	skipShortBrowser(t)
	ts, _ := startProxyServer(t, echoUpstream(t), false)
	proxyDo(t, http.MethodPost, ts.URL+"/webhooks", secretsRequest)
	// A finding is kept when its check ends, which may be a moment after
	// the caller has the answer: the registration's, first.
	waitIdle(t, ts.Server)
	proxyDo(t, http.MethodGet, ts.URL+"/contexts", "")
	waitIdle(t, ts.Server)

	d := openDashboard(t, ts, "#/contract")
	d.wait(`document.querySelectorAll('table.list.contract tbody tr').length === 2`)
	d.wait(`document.querySelector('.contract-counts').innerText.includes('registerWebhook')`)
	// The headings may break at their soft hyphens.
	counts := strings.ReplaceAll(d.wait(`document.querySelector('.contract-counts').textContent`), "\u00ad", "")
	for _, want := range []string{"Per operation", "listContexts", "all", "Mismatches", "SDK breaks"} {
		if !strings.Contains(counts, want) {
			t.Errorf("the counts lack %q:\n%s", want, counts)
		}
	}
	// In the browser's 1280-px window, the findings (to the SDK's verdict)
	// and the counts beside them fit without scrolling sideways, once the
	// page knows the server's clock (until then, each time shows its date).
	d.wait(`document.querySelector('#clock-now').textContent.endsWith(' UTC')`)
	for _, pane := range []string{".list-pane", ".detail"} {
		if overflow := evalAs[float64](d, `(p => p.scrollWidth - p.clientWidth)(document.querySelector('`+pane+`'))`); overflow > 0 {
			t.Errorf("%s is %v px too narrow for its table at %v px", pane, overflow, evalAs[float64](d, `window.innerWidth`))
		}
	}
	// The newest first: the GET's 401, then the registration.
	d.click(`table.list.contract tbody tr:nth-child(2)`)
	d.wait(`document.querySelector('.detail h2').textContent === 'Finding'`)
	detail := d.wait(`document.querySelector('.detail').textContent`)
	for _, want := range []string{"registerWebhook", "The request", "The answer", "#/components/schemas/Webhook/additionalProperties",
		"#/components/schemas/EventType/enum", "tolerates", "Webhooks.Register returns webhook"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the finding lacks %q:\n%s", want, detail)
		}
	}
	// Filtered by operation.
	d.route("#/contract?operation=listContexts")
	d.wait(`document.querySelectorAll('table.list.contract tbody tr').length === 1`)

	page := evalAs[string](d, `document.documentElement.outerHTML + document.body.innerText`)
	for _, secret := range []string{secretKey, secretPassword, secretURLToken, secretWebhook} {
		if strings.Contains(page, secret) {
			t.Errorf("the page shows the secret %q", secret)
		}
	}

	plain := NewTestServer(t)
	d = openDashboard(t, plain, "#/contract")
	d.wait(`document.querySelector('.contract-counts').innerText.includes('-upstream URL')`)
}
