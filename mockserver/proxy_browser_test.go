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
	counts := d.wait(`document.querySelector('.contract-counts').textContent`)
	for _, want := range []string{"Per operation", "listContexts", "all", "Mismatches", "SDK breaks"} {
		if !strings.Contains(counts, want) {
			t.Errorf("the counts lack %q:\n%s", want, counts)
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
